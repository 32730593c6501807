"""Products: dot, matmul, inner, outer, vdot, tensordot.

As in JAX, operands keep their own dtypes: ``dot_general`` computes in the
promoted dtype given as ``preferred_element_type``.
"""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, check_no_out


def _result_dtype(a, b, preferred_element_type):
  """(dtype dot_general computes in, whether the result is weakly typed)."""
  if preferred_element_type is None:
    return dtypes.result_type(a, b, return_weak_type_flag=True)
  return dtypes.canonicalize_user_dtype(preferred_element_type, "dot"), False


def _dot_general(a, b, contracting, batch, precision, dtype, weak):
  out = lax.dot_general(a, b, (contracting, batch), precision=precision,
                        preferred_element_type=dtype)
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
  return _dot_general(a, b, contracting, ((), ()), precision, dtype, weak)


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
  out = lax.dot_general(a, b, (contracting, (a_batch_dims, b_batch_dims)),
                        precision=precision, preferred_element_type=dtype)
  # dot_general's output order: batch axes, a's free axes, b's free axes.
  order = [i for i, kind in a_kept if kind == "batch"]
  order += [i for i, kind in a_kept if kind == "free"] + ([n] if a_mat else [])
  order += [i for i, kind in b_kept if kind == "free"] + ([n + a_mat] if b_mat else [])
  perm = tuple(int(p) for p in np.argsort(order))
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
