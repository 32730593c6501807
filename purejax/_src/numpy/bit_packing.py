"""jnp.packbits / jnp.unpackbits: booleans to and from the bits of uint8."""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import creation
from purejax._src.numpy import shape_ops
from purejax._src.numpy import util


def _bit_weights(bitorder, ndim):
  """Shift of each of the 8 positions in a byte, broadcastable to ndim."""
  if bitorder not in ("little", "big"):
    raise ValueError("'order' must be either 'little' or 'big'")
  shifts = np.arange(8, dtype=np.uint8)
  if bitorder == "big":
    shifts = shifts[::-1]
  return shifts.reshape((1,) * (ndim - 1) + (8,))


def packbits(a, axis=None, bitorder="big"):
  """Packs the truth of each element into the bits of uint8 (the last byte
  padded with zeros), along ``axis`` (the flattened array by default)."""
  util.check_arraylike("packbits", a)
  a = creation.asarray(a)
  if not (dtypes.issubdtype(a.dtype, np.integer) or a.dtype == np.bool_):
    raise TypeError("Expected an input array of integer or boolean data type")
  if axis is None:
    a, axis = shape_ops.ravel(a), 0
  bits = lax.convert_element_type(lax.ne(a, lax.full_like(a, 0)), np.uint8)
  bits = shape_ops.moveaxis(bits, axis, -1)
  extra = -bits.shape[-1] % 8
  if extra:
    bits = lax.pad(bits, np.uint8(0), [(0, 0, 0)] * (bits.ndim - 1) + [(0, extra, 0)])
  bytes_ = shape_ops.reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
  shifted = lax.shift_left(bytes_, _bit_weights(bitorder, bytes_.ndim))
  packed = lax.reduce_or(shifted, (bytes_.ndim - 1,))
  return shape_ops.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
  """The bits of uint8 elements as 0/1 uint8 values along ``axis``;
  ``count`` keeps that many (negative: drops that many from the end)."""
  util.check_arraylike("unpackbits", a)
  a = creation.asarray(a)
  if a.dtype != np.uint8:
    raise TypeError("Expected an input array of unsigned byte data type")
  if axis is None:
    a, axis = shape_ops.ravel(a), 0
  a = shape_ops.moveaxis(a, axis, -1)
  expanded = lax.expand_dims(a, (a.ndim,))
  bits = lax.bitwise_and(lax.shift_right_logical(expanded, _bit_weights(bitorder, a.ndim + 1)),
                         np.uint8(1))
  bits = shape_ops.reshape(bits, a.shape[:-1] + (a.shape[-1] * 8,))
  if count is not None:
    bits = bits[..., :count]
  return shape_ops.moveaxis(bits, -1, axis)
