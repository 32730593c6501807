"""Helpers shared by the lax.linalg primitives: shape/dtype checks in JAX's
words, the batching rule (every op takes leading batch axes), and small
traceable matrix helpers used by the derivative rules.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax.families import check_dtype, inexact_dtypes


def lax():
  from purejax import lax as lax_module
  return lax_module


def jnp():
  from purejax import numpy as jnp_module
  return jnp_module


def lapack_of(*arrays, host=None):
  """The LAPACK routines for the arrays' device (``lax.lapack``'s
  interface): SciPy's LAPACK on the host (``host``, else ``lax.lapack``),
  or cuSOLVER's for a GPU's arrays (``backends.cuda.solver``; these
  primitives are ``impl_on_gpu_arrays``)."""
  from purejax._src import array_namespace
  if array_namespace.of(*arrays) is np:
    from purejax._src.lax import lapack
    return host or lapack
  from purejax._src.backends.cuda import solver
  return solver


# -- shape and dtype rules --------------------------------------------------------

def split_batch(name, avals, ranks):
  """(batch shape, [core shape per operand]): each operand has ``rank`` core
  axes at the end and all share the same number of leading batch axes."""
  batches, cores = [], []
  for i, (aval, rank) in enumerate(zip(avals, ranks)):
    if aval.ndim < rank:
      raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                      f"shape={aval.shape}")
    batches.append(aval.shape[:aval.ndim - rank])
    cores.append(aval.shape[aval.ndim - rank:])
  if any(len(b) != len(batches[0]) for b in batches):
    raise TypeError(f"All inputs to {name} must have the same number of batch "
                    f"dimensions, but got {[len(b) for b in batches]} batch dimensions "
                    "for the inputs.")
  return tuple(batches[0]), cores


def check_inexact(name, *avals):
  """Float or complex operands of one dtype, as JAX's linalg dtype rule."""
  several = len(avals) > 1
  for i, a in enumerate(avals):
    check_dtype(name, a.dtype, inexact_dtypes, position=i if several else None)
  if any(a.dtype != avals[0].dtype for a in avals[1:]):
    got = ", ".join(core.dtype_name(a.dtype) for a in avals)
    raise TypeError(f"{name} requires arguments to have the same dtypes, got {got}.")


def check_square(name, shape, what=None):
  if shape[0] != shape[1]:
    what = what or f"The input to {name} must be a square matrix."
    raise ValueError(f"{what} Got shape {tuple(shape)}.")


def real_dtype(dtype):
  return np.array(0, dtype).real.dtype


def complex_dtype(dtype):
  return dtypes.to_complex_dtype(dtype)


def is_complex(dtype):
  return dtypes.issubdtype(dtype, np.complexfloating)


# -- implementations --------------------------------------------------------------------

def compute_dtype(dtype):
  """The dtype a NumPy implementation computes ``dtype`` in (16-bit floats
  in float32)."""
  dtype = np.dtype(dtype)
  small = dtype.itemsize < 4 and dtypes.issubdtype(dtype, np.floating)
  return np.dtype(np.float32) if small else dtype


# -- batching: operands take leading batch axes ------------------------------------------

def front_batch_rule(prim):
  """Puts every operand's batch axis first (broadcasting unbatched ones)."""

  def rule(axis_size, vals, dims, **params):
    vals = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    out = prim.bind(*vals, **params)
    if prim.multiple_results:
      return out, [0] * len(out)
    return out, 0

  return rule


def all_unbatched(dims):
  return all(d is not_mapped for d in dims)


# -- traceable matrix helpers (the derivative rules use them) ----------------------------

def T(x):
  return jnp().swapaxes(x, -1, -2)


def H(x):
  return jnp().conj(T(x))


def mm(a, b):
  return jnp().matmul(a, b, precision="highest")


def _lower_mask(x, k):
  """True on and below diagonal k of x's last two axes (iota, as JAX builds it)."""
  l = lax()
  *batch, n, m = core.get_aval(x).shape
  rows = l.add(l.broadcasted_iota(np.int32, (n, m), 0), np.int32(k))
  cols = l.broadcasted_iota(np.int32, (n, m), 1)
  mask = l.ge(rows, cols)
  return l.broadcast(mask, tuple(batch)) if batch else mask


def tril(x, k=0):
  """Zeros above diagonal k."""
  return lax().select(_lower_mask(x, k), x, lax().full_like(x, 0))


def triu(x, k=0):
  """Zeros below diagonal k."""
  return lax().select(_lower_mask(x, k - 1), lax().full_like(x, 0), x)


def eye(n, dtype):
  return np.eye(n, dtype=dtype)


def symmetrize(x):
  """(x + x^H) / 2, as JAX does before factorizing."""
  return (x + H(x)) / 2


def extract_diagonal(x):
  return jnp().diagonal(x, axis1=-2, axis2=-1)


def construct_diagonal(s):
  """A (batched) diagonal matrix from its diagonal."""
  n = core.get_aval(s).shape[-1]
  return jnp().expand_dims(s, -1) * eye(n, core.get_aval(s).dtype)


def cast(x, dtype):
  return lax().convert_element_type(x, dtype)


def check_matrix(name, x, square=False):
  """Rank >= 2 (and square) inexact operand: the eager wrappers' check."""
  check_dtype(name, x.dtype, inexact_dtypes)
  if x.ndim < 2:
    raise TypeError(f"Input 0 to {name} must have rank at least 2, but got "
                    f"shape={x.shape}")
  if square:
    check_square(name, x.shape[-2:])
