"""Products: dot, matmul, inner, outer, vdot, tensordot, vecdot, matvec,
vecmat, kron, cross, trace (einsum lives in einsum.py).

As in JAX, operands keep their own dtypes: ``dot_general`` computes in the
promoted dtype given as ``preferred_element_type``.
"""
import functools

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import creation
from purejax._src.numpy import functional
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, check_no_out


def _result_dtype(a, b, preferred_element_type):
  """(dtype dot_general computes in, whether the result is weakly typed)."""
  if preferred_element_type is None:
    return dtypes.result_type(a, b, return_weak_type_flag=True)
  return dtypes.canonicalize_user_dtype(preferred_element_type, "dot"), False


def _dot_general(a, b, contracting, batch, precision, dtype, weak, out_sharding=None):
  out = lax.dot_general(a, b, (contracting, batch), precision=precision,
                        preferred_element_type=dtype, out_sharding=out_sharding)
  return lax.convert_element_type(out, dtype, weak)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """Dot product: contracts the last axis of a with b's second-to-last
  (its only axis if b is 1-D); a scalar operand multiplies."""
  check_arraylike("dot", a, b)
  a, b = util.asarray(a), util.asarray(b)
  dtype, weak = _result_dtype(a, b, preferred_element_type)
  a_nd, b_nd = util.ndim(a), util.ndim(b)
  if a_nd == 0 or b_nd == 0:
    contracting = ((), ())
  elif b_nd == 1:
    contracting = ((a_nd - 1,), (0,))
  else:
    contracting = ((a_nd - 1,), (b_nd - 2,))
  return _dot_general(a, b, contracting, ((), ()), precision, dtype, weak, out_sharding)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """Matrix product with NumPy's rules: 1-D operands are vectors, leading
  axes broadcast as batch axes."""
  check_arraylike("matmul", a, b)
  a, b = util.asarray(a), util.asarray(b)
  for i, x in enumerate((a, b)):
    if util.ndim(x) < 1:
      raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                       f"ndim {util.ndim(x)}")
  dtype, weak = _result_dtype(a, b, preferred_element_type)
  a_shape, b_shape = util.shape(a), util.shape(b)
  a_mat, b_mat = len(a_shape) > 1, len(b_shape) > 1
  a_batch = a_shape[:-2] if a_mat else ()
  b_batch = b_shape[:-2] if b_mat else ()
  n = max(len(a_batch), len(b_batch))
  a_pad, b_pad = n - len(a_batch), n - len(b_batch)

  # Classify each broadcast batch position: a true batch axis of both
  # operands, or a free axis of one of them (the other lacks it, or has
  # size 1 there and is squeezed).
  a_squeeze, b_squeeze = [], []
  a_kept, b_kept = [], []          # (output position, kind) in operand order
  for i in range(n):
    da = a_batch[i - a_pad] if i >= a_pad else None
    db = b_batch[i - b_pad] if i >= b_pad else None
    if da is None:
      b_kept.append((i, "free"))
    elif db is None:
      a_kept.append((i, "free"))
    elif da == 1 and db != 1:
      a_squeeze.append(i - a_pad)
      b_kept.append((i, "free"))
    elif db == 1 and da != 1:
      b_squeeze.append(i - b_pad)
      a_kept.append((i, "free"))
    elif da == db:
      a_kept.append((i, "batch"))
      b_kept.append((i, "batch"))
    else:
      raise ValueError(f"Incompatible shapes for matmul arguments: {a_shape} and {b_shape}")
  if a_squeeze:
    a = lax.squeeze(a, tuple(a_squeeze))
  if b_squeeze:
    b = lax.squeeze(b, tuple(b_squeeze))
  a_batch_dims = tuple(j for j, (_, kind) in enumerate(a_kept) if kind == "batch")
  b_batch_dims = tuple(j for j, (_, kind) in enumerate(b_kept) if kind == "batch")
  a_nd, b_nd = util.ndim(a), util.ndim(b)
  contracting = ((a_nd - 1,), (b_nd - 2 if b_mat else b_nd - 1,))
  # dot_general's output order: batch axes, a's free axes, b's free axes.
  order = [i for i, kind in a_kept if kind == "batch"]
  order += [i for i, kind in a_kept if kind == "free"] + ([n] if a_mat else [])
  order += [i for i, kind in b_kept if kind == "free"] + ([n + a_mat] if b_mat else [])
  perm = tuple(int(p) for p in np.argsort(order))
  if out_sharding is not None:   # asked of the result: dot_general's, before the transpose
    from purejax._src.out_sharding import permuted
    out_sharding = permuted(out_sharding, perm)
  out = lax.dot_general(a, b, (contracting, (a_batch_dims, b_batch_dims)),
                        precision=precision, preferred_element_type=dtype,
                        out_sharding=out_sharding)
  if perm != tuple(range(len(perm))):
    out = lax.transpose(out, perm)
  return lax.convert_element_type(out, dtype, weak)


def inner(a, b, *, precision=None, preferred_element_type=None):
  """Contracts the last axes of a and b."""
  check_arraylike("inner", a, b)
  if util.ndim(a) == 0 or util.ndim(b) == 0:
    return ufuncs.multiply(a, b)
  a, b = util.asarray(a), util.asarray(b)
  dtype, weak = _result_dtype(a, b, preferred_element_type)
  contracting = ((util.ndim(a) - 1,), (util.ndim(b) - 1,))
  return _dot_general(a, b, contracting, ((), ()), precision, dtype, weak)


def outer(a, b, out=None):
  """All products a[i] * b[j] of the flattened inputs."""
  check_arraylike("outer", a, b)
  check_no_out("outer", out)
  a, b = shape_ops.ravel(a), shape_ops.ravel(b)
  return ufuncs.multiply(a[:, None], b[None, :])


def vdot(a, b, *, precision=None, preferred_element_type=None):
  """Dot product of the flattened inputs, conjugating the first."""
  check_arraylike("vdot", a, b)
  a = util.asarray(a)
  if dtypes.issubdtype(util.aval_of(a).dtype, np.complexfloating):
    a = ufuncs.conj(a)
  return dot(shape_ops.ravel(a), shape_ops.ravel(b), precision=precision,
             preferred_element_type=preferred_element_type)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
  """Contracts a's last ``axes`` axes with b's first (or the given pairs)."""
  check_arraylike("tensordot", a, b)
  a, b = util.asarray(a), util.asarray(b)
  a_nd, b_nd = util.ndim(a), util.ndim(b)
  if isinstance(axes, (int, np.integer)):
    k = int(axes)
    if k > min(a_nd, b_nd) or k < 0:
      raise TypeError(f"Number of tensordot axes (axes {k}) exceeds input ranks "
                      f"({a_nd} and {b_nd})")
    contracting = (tuple(range(a_nd - k, a_nd)), tuple(range(k)))
  else:
    a_axes, b_axes = axes
    a_axes = (a_axes,) if isinstance(a_axes, (int, np.integer)) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, (int, np.integer)) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
      raise TypeError("tensordot requires axes lists to have equal length, got "
                      f"{a_axes} and {b_axes}.")
    contracting = (util.canonicalize_axes(a_axes, a_nd), util.canonicalize_axes(b_axes, b_nd))
  dtype, weak = _result_dtype(a, b, preferred_element_type)
  return _dot_general(a, b, contracting, ((), ()), precision, dtype, weak)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """Dot products of vectors along ``axis`` (conjugating ``x1``), broadcast
  over the other axes."""
  check_arraylike("jnp.vecdot", x1, x2)
  x1, x2 = util.asarray(x1), util.asarray(x2)
  if util.shape(x1)[axis] != util.shape(x2)[axis]:
    raise ValueError(f"axes must match; got shapes {util.shape(x1)} and {util.shape(x2)} "
                     f"with {axis=}")
  x1, x2 = shape_ops.moveaxis(x1, axis, -1), shape_ops.moveaxis(x2, axis, -1)
  one = functools.partial(vdot, precision=precision,
                          preferred_element_type=preferred_element_type)
  return functional.vectorize(one, signature="(n),(n)->()")(x1, x2)


@jit
def matvec(x1, x2, /):
  """Matrix-vector products, broadcast over leading axes."""
  check_arraylike("matvec", x1, x2)
  return functional.vectorize(matmul, signature="(n,m),(m)->(n)")(x1, x2)


@jit
def vecmat(x1, x2, /):
  """Vector-matrix products (conjugating the vector), broadcast over leading
  axes."""
  check_arraylike("matvec", x1, x2)
  return functional.vectorize(matmul, signature="(n),(n,m)->(m)")(ufuncs.conj(x1), x2)


@jit
def kron(a, b):
  """The Kronecker product: blocks a[i, j] * b."""
  check_arraylike("kron", a, b)
  a, b = util.promote_dtypes(a, b)
  nd = max(util.ndim(a), util.ndim(b))
  a, b = util.expand_to_rank(a, nd), util.expand_to_rank(b, nd)
  a_shape, b_shape = util.shape(a), util.shape(b)
  # a on the even axes, b on the odd ones of (a0, b0, a1, b1, ...).
  wide = tuple(d for pair in zip(a_shape, b_shape) for d in pair)
  a_wide = lax.broadcast_in_dim(a, tuple(d if i % 2 == 0 else 1 for i, d in enumerate(wide)),
                                tuple(range(0, 2 * nd, 2)))
  b_wide = lax.broadcast_in_dim(b, tuple(d if i % 2 else 1 for i, d in enumerate(wide)),
                                tuple(range(1, 2 * nd, 2)))
  out = lax.mul(a_wide, b_wide)
  return lax.reshape(out, tuple(x * y for x, y in zip(a_shape, b_shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
  """Cross products of 3-vectors (or 2-vectors, whose product is the
  z-component) along the given axes."""
  check_arraylike("cross", a, b)
  if axis is not None:
    axisa = axisb = axisc = axis
  return _cross(a, b, axisa, axisb, axisc)


@functools.partial(jit, static_argnames=("axisa", "axisb", "axisc"))
def _cross(a, b, axisa, axisb, axisc):
  a = shape_ops.moveaxis(a, axisa, -1)
  b = shape_ops.moveaxis(b, axisb, -1)
  if util.shape(a)[-1] not in (2, 3) or util.shape(b)[-1] not in (2, 3):
    raise ValueError("Dimension must be either 2 or 3 for cross product")
  comp = lambda x, i: lax.index_in_dim(x, i, util.ndim(x) - 1, keepdims=False)
  mul, sub = ufuncs.multiply, ufuncs.subtract
  a0, a1, b0, b1 = comp(a, 0), comp(a, 1), comp(b, 0), comp(b, 1)
  if util.shape(a)[-1] == 2 and util.shape(b)[-1] == 2:
    return sub(mul(a0, b1), mul(a1, b0))
  a2 = comp(a, 2) if util.shape(a)[-1] == 3 else creation.zeros_like(a0)
  b2 = comp(b, 2) if util.shape(b)[-1] == 3 else creation.zeros_like(b0)
  parts = util.broadcast_arrays(sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                                sub(mul(a0, b1), mul(a1, b0)))
  c = shape_ops.stack(parts)
  return shape_ops.moveaxis(c, 0, axisc)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
  """The sum along a diagonal (``offset`` may be traced)."""
  check_arraylike("trace", a)
  check_no_out("trace", out)
  nd = util.ndim(a)
  if util.canonicalize_axis(axis1, nd) == util.canonicalize_axis(axis2, nd):
    raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
  if dtype is not None:
    dtype = dtypes.canonicalize_user_dtype(dtype, "trace")
  return _trace(a, offset, axis1, axis2, dtype)


@functools.partial(jit, static_argnames=("axis1", "axis2", "dtype"))
def _trace(a, offset, axis1, axis2, dtype):
  a = shape_ops.moveaxis(a, (axis1, axis2), (-2, -1))
  n, m = util.shape(a)[-2:]
  rows = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 0)
  cols = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 1)
  on = lax.eq(lax.sub(cols, rows), lax.convert_element_type(offset, np.int32, False))
  on = lax.broadcast_in_dim(on, util.shape(a), (util.ndim(a) - 2, util.ndim(a) - 1))
  a = lax.select(on, a, creation.zeros_like(a))
  return reductions.sum(a, axis=(-2, -1), dtype=dtype)
