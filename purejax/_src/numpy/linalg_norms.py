"""jnp.linalg: norms, condition numbers, the array-API products and the
tensor solves (the decompositions are in linalg.py)."""
import functools
import itertools
import math
import operator

import numpy as np

from purejax import lax
from purejax._src.api import jit
from purejax._src.numpy.linalg import inv, solve, svd, svdvals
from purejax._src.numpy.util import (
    canonicalize_axis, check_arraylike, promote_dtypes_inexact)
from purejax import numpy as jnp


def _frobenius(x, axis, keepdims):
  return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))


@functools.partial(jit, static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims=False):
  """Vector norm (one axis) or matrix norm (two axes) of any NumPy ``ord``;
  with ``axis=None`` and ``ord=None`` the 2-norm of the flattened array."""
  check_arraylike("jnp.linalg.norm", x)
  x, = promote_dtypes_inexact(x)
  ndim = x.ndim
  if axis is None:
    if ord is None:
      return _frobenius(x, None, keepdims)
    axis = tuple(range(ndim))
  elif isinstance(axis, tuple):
    axis = tuple(canonicalize_axis(a, ndim) for a in axis)
  else:
    axis = (canonicalize_axis(axis, ndim),)
  if len(axis) == 1:
    return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
  if len(axis) != 2:
    raise ValueError(f"Improper number of axes for norm: {axis=}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")
  return _matrix_norm(x, ord, axis, keepdims)


def _matrix_norm(x, ord, axis, keepdims):
  row_axis, col_axis = axis
  if ord is None or ord in ("f", "fro"):
    return _frobenius(x, axis, keepdims)
  if ord in (1, -1):
    # max (min) over columns of the column sums of |x|
    if not keepdims and col_axis > row_axis:
      col_axis -= 1
    sums = jnp.sum(jnp.abs(x), axis=row_axis, keepdims=keepdims)
    if ord == 1:
      return jnp.max(sums, axis=col_axis, keepdims=keepdims, initial=0)
    return jnp.min(sums, axis=col_axis, keepdims=keepdims)
  if ord in (np.inf, -np.inf):
    if not keepdims and row_axis > col_axis:
      row_axis -= 1
    sums = jnp.sum(jnp.abs(x), axis=col_axis, keepdims=keepdims)
    if ord == np.inf:
      return jnp.max(sums, axis=row_axis, keepdims=keepdims, initial=0)
    return jnp.min(sums, axis=row_axis, keepdims=keepdims)
  if ord in ("nuc", 2, -2):
    s = svd(jnp.moveaxis(x, axis, (-2, -1)), compute_uv=False)
    if ord == 2:
      y = jnp.max(s, axis=-1, initial=0)
    elif ord == -2:
      y = jnp.min(s, axis=-1)
    else:
      y = jnp.sum(s, axis=-1)
    return jnp.expand_dims(y, axis) if keepdims else y
  raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
  """The ``ord``-norm of x along ``axis`` (default: all axes, flattened)."""
  check_arraylike("jnp.linalg.vector_norm", x)
  x = jnp.asarray(x)
  if ord is None or ord == 2:
    return _frobenius(x, axis, keepdims)
  if ord == np.inf:
    return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims, initial=0)
  if ord == -np.inf:
    return jnp.min(jnp.abs(x), axis=axis, keepdims=keepdims)
  if ord == 0:
    return jnp.sum(x != 0, dtype=jnp.finfo(x.dtype).dtype, axis=axis, keepdims=keepdims)
  if ord == 1:
    return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
  if isinstance(ord, str):
    msg = f"Invalid order '{ord}' for vector norm."
    if ord == "inf":
      msg += "Use 'jax.numpy.inf' instead."
    if ord == "-inf":
      msg += "Use '-jax.numpy.inf' instead."
    raise ValueError(msg)
  abs_x = jnp.abs(x)
  p = np.array(ord, abs_x.dtype)
  return jnp.power(jnp.sum(abs_x ** p, axis=axis, keepdims=keepdims),
                   np.array(1. / p, abs_x.dtype))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
  """The ``ord`` matrix norm over the last two axes."""
  check_arraylike("jnp.linalg.matrix_norm", x)
  return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@functools.partial(jit, static_argnames=("p",))
def cond(x, p=None):
  """Condition number in the ``p`` norm (2 and -2 from the singular values);
  inf for singular matrices."""
  check_arraylike("cond", x)
  arr = jnp.asarray(x)
  if arr.ndim < 2:
    raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got {arr.shape=}")
  if arr.shape[-1] == 0 or arr.shape[-2] == 0:
    raise ValueError(f"jnp.linalg.cond: input array must not be empty; got {arr.shape=}")
  if p is None or p == 2:
    s = svdvals(arr)
    return s[..., 0] / s[..., -1]
  if p == -2:
    s = svdvals(arr)
    r = s[..., -1] / s[..., 0]
  else:
    if arr.shape[-2] != arr.shape[-1]:
      raise ValueError(f"jnp.linalg.cond: for {p=}, array must be square; got "
                       f"{arr.shape=}")
    r = norm(arr, ord=p, axis=(-2, -1)) * norm(inv(arr), ord=p, axis=(-2, -1))
  # NaN from a singular matrix (not from NaN input) means infinitely ill-conditioned.
  return jnp.where(jnp.isnan(r) & ~jnp.isnan(arr).any(axis=(-2, -1)), np.inf, r)


# -- array-API products and views -------------------------------------------------------

def cross(x1, x2, /, *, axis=-1):
  """Cross product of (arrays of) 3-vectors along ``axis``."""
  check_arraylike("jnp.linalg.outer", x1, x2)
  x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
  if x1.shape[axis] != 3 or x2.shape[axis] != 3:
    raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                     f"they have {x1.shape[axis]=} and {x2.shape[axis]=}")
  return jnp.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
  """Outer product of two 1-D arrays."""
  check_arraylike("jnp.linalg.outer", x1, x2)
  x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
  if x1.ndim != 1 or x2.ndim != 1:
    raise ValueError("Input arrays must be one-dimensional, but they are "
                     f"{x1.ndim=} {x2.ndim=}")
  return x1[:, None] * x2[None, :]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """conj(x1) . x2 along ``axis`` (broadcasting the others)."""
  check_arraylike("jnp.linalg.vecdot", x1, x2)
  return jnp.vecdot(x1, x2, axis=axis, precision=precision,
                    preferred_element_type=preferred_element_type)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
  """Matrix product, as jnp.matmul."""
  check_arraylike("jnp.linalg.matmul", x1, x2)
  return jnp.matmul(x1, x2, precision=precision,
                    preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
  """Tensor contraction, as jnp.tensordot (``out_sharding`` is ignored)."""
  check_arraylike("jnp.linalg.tensordot", x1, x2)
  return jnp.tensordot(x1, x2, axes=axes, precision=precision,
                       preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
  """Swaps the last two axes."""
  check_arraylike("jnp.linalg.matrix_transpose", x)
  x = jnp.asarray(x)
  ndim = x.ndim
  if ndim < 2:
    raise ValueError(f"matrix_transpose requires at least 2 dimensions; got {ndim=}")
  return lax.transpose(x, (*range(ndim - 2), ndim - 1, ndim - 2))


def diagonal(x, /, *, offset=0):
  """Diagonals of the last two axes."""
  check_arraylike("jnp.linalg.diagonal", x)
  return jnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
  """Traces of the last two axes."""
  check_arraylike("jnp.linalg.trace", x)
  return jnp.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays, *, precision=None):
  """The product of a chain of matrices (the first and last may be vectors),
  in the cheapest order (einsum's optimizer)."""
  arrs = list(arrays)
  check_arraylike("jnp.linalg.multi_dot", *arrs)
  arrs = [jnp.asarray(a) for a in arrs]
  if len(arrs) < 2:
    raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
  if not (arrs[0].ndim in (1, 2) and arrs[-1].ndim in (1, 2)
          and all(a.ndim == 2 for a in arrs[1:-1])):
    raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                     "first and last array which may be 1 or 2 dimensional. Got array "
                     f"shapes {[a.shape for a in arrs]}")
  if any(a.shape[-1] != b.shape[0] for a, b in zip(arrs[:-1], arrs[1:])):
    raise ValueError("multi_dot: last dimension of each array must match first dimension "
                     f"of following array. Got array shapes {[a.shape for a in arrs]}")
  axes = [(i, i + 1) for i in range(len(arrs))]
  if arrs[0].ndim == 1:
    axes[0] = axes[0][1:]
  if arrs[-1].ndim == 1:
    axes[-1] = axes[-1][:1]
  return jnp.einsum(*itertools.chain(*zip(arrs, axes)), optimize="auto",
                    precision=precision)


# -- tensor inverses and solves ----------------------------------------------------------

def tensorinv(a, ind=2):
  """The inverse of a as a linear map from its last axes to its first ``ind``."""
  check_arraylike("tensorinv", a)
  arr = jnp.asarray(a)
  ind = operator.index(ind)
  if ind <= 0:
    raise ValueError(f"ind must be a positive integer; got {ind=}")
  contracting, batch = arr.shape[:ind], arr.shape[ind:]
  flat = (math.prod(contracting), math.prod(batch))
  if flat[0] != flat[1]:
    raise ValueError("tensorinv is only possible when the product of the first `ind` "
                     "dimensions equals that of the remaining dimensions. got "
                     f"{arr.shape=} with {ind=}.")
  return inv(arr.reshape(flat)).reshape(*batch, *contracting)


def tensorsolve(a, b, axes=None):
  """x with tensordot(a, x, x.ndim) = b; ``axes`` of a move to the end first."""
  check_arraylike("tensorsolve", a, b)
  a_arr, b_arr = jnp.asarray(a), jnp.asarray(b)
  if axes is not None:
    a_arr = jnp.moveaxis(a_arr, axes, len(axes) * (a_arr.ndim - 1,))
  out_shape = a_arr.shape[b_arr.ndim:]
  if a_arr.shape[:b_arr.ndim] != b_arr.shape:
    raise ValueError("After moving axes to end, leading shape of a must match shape of b."
                     f" got a.shape={a_arr.shape}, b.shape={b_arr.shape}")
  if b_arr.size != math.prod(out_shape):
    raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                     f"prod(a.shape[b.ndim:]); got a.shape={a_arr.shape}, "
                     f"b.ndim={b_arr.ndim}.")
  a_arr = a_arr.reshape(b_arr.size, math.prod(out_shape))
  return solve(a_arr, b_arr.ravel()).reshape(out_shape)
