"""Arrays made from nothing but a shape: iota, full and friends."""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.lax import utils
from purejax._src.lax.families import check_dtype, numeric_dtypes, standard_primitive
from purejax._src.lax.structural import broadcast


def _iota_abstract_eval(*, dtype, shape, dimension, sharding):
  check_dtype("iota", dtype, numeric_dtypes)
  utils.check_shape_elements("iota", shape)
  if not 0 <= dimension < len(shape):
    raise ValueError("iota dimension must be between 0 and len(shape), got "
                     f"dimension={dimension} for shape={shape}")
  return core.ShapedArray(shape, dtype, False)


def _iota_impl(*, dtype, shape, dimension, sharding):
  line = np.arange(shape[dimension]).astype(dtype)
  expanded = [1] * len(shape)
  expanded[dimension] = shape[dimension]
  return np.broadcast_to(line.reshape(expanded), shape)


iota_p = standard_primitive("iota", _iota_abstract_eval, _iota_impl)
ad.defjvp_zero(iota_p)   # no operands: never differentiated, but says so
# Nor ever batched (nothing to carry a batch axis); the rule just says so.
iota_p.batch = lambda axis_size, vals, dims, **params: (iota_p.bind(**params), None)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
  """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
  if dtype is None:
    raise ValueError("dtype must be specified.")
  dtype = dtypes.canonicalize_user_dtype(dtype, "broadcasted_iota")
  shape = utils.canonicalize_shape(shape)
  from purejax._src.out_sharding import canonical
  return utils.bind(iota_p, dtype=dtype, shape=shape, dimension=int(dimension),
                    sharding=canonical(out_sharding, shape))


def iota(dtype, size):
  """``[0, 1, ..., size - 1]`` with the given dtype."""
  size, = utils.canonicalize_shape((size,))
  return broadcasted_iota(dtype, (size,), 0)


def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of ``shape`` filled with the scalar ``fill_value``."""
  from purejax._src.lax.convert import convert_element_type
  shape = utils.canonicalize_shape(shape)
  if np.shape(fill_value):
    raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  weak = dtype is None and dtypes.is_weakly_typed(fill_value)
  dtype = dtypes.canonicalize_user_dtype(dtype, "full")
  if dtype is None:
    dtype = utils.aval(fill_value).dtype
  fill = convert_element_type(fill_value, dtype, weak_type=weak)
  return broadcast(fill, shape, out_sharding=sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like ``x`` (shape, dtype, weak type) filled with ``fill_value``."""
  x_aval = utils.aval(x)
  weak = dtype is None and x_aval.weak_type
  dtype = dtypes.canonicalize_user_dtype(dtype, "dtype")
  dtype = x_aval.dtype if dtype is None else dtype
  shape = x_aval.shape if shape is None else utils.canonicalize_shape(shape)
  from purejax._src.lax.convert import convert_element_type
  if np.shape(fill_value):
    raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  fill = convert_element_type(fill_value, dtype, weak_type=weak)
  return broadcast(fill, shape, out_sharding=sharding)


def zeros_like_array(x):
  """Zeros with the shape and dtype of ``x`` (used by transformations)."""
  return full_like(x, 0)
