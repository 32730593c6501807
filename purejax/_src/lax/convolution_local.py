"""Patch extraction and unshared ("locally connected") convolution, both
built on conv_general_dilated: lax.conv_general_dilated_patches and
lax.conv_general_dilated_local."""
import numpy as np

from purejax._src.lax import utils
from purejax._src.lax.convolution import conv_dimension_numbers, conv_general_dilated
from purejax._src.lax.dot import Precision, canonicalize_precision, dot_general


def _move_axes(x, src, dst):
  """``x`` with axes ``src`` moved to positions ``dst``, the others keeping
  their order."""
  from purejax._src.lax.structural import transpose
  ndim = len(np.shape(x))
  src = [s % ndim for s in src]
  dst = [d % ndim for d in dst]
  rest = iter(a for a in range(ndim) if a not in src)
  moved = dict(zip(dst, src))
  return transpose(x, tuple(moved[i] if i in moved else next(rest) for i in range(ndim)))


def _identity(dtype, size):
  from purejax._src.lax.api_elementwise import eq
  from purejax._src.lax.convert import convert_element_type
  from purejax._src.lax.creation import broadcasted_iota
  rows = broadcasted_iota(np.int32, (size, size), 0)
  cols = broadcasted_iota(np.int32, (size, size), 1)
  return convert_element_type(eq(rows, cols), dtype)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
  """The patches a convolution with window ``filter_shape`` would see, as
  the output's feature axis: per output position, the input features and
  window positions (in rhs_spec's spatial order) flattened together."""
  from purejax._src.lax.structural import _as_array, broadcast_in_dim, reshape
  lhs = _as_array(lhs)
  filter_shape = utils.int_tuple(filter_shape)
  shape = np.shape(lhs)
  dnums = conv_dimension_numbers(shape, (1, 1) + filter_shape, dimension_numbers)
  window = utils.prod(filter_shape)
  channels = shape[dnums.lhs_spec[1]]
  # One output feature per (channel, window position), each picking one tap.
  rhs = broadcast_in_dim(_identity(lhs.dtype, window), (channels, window, window), (1, 2))
  rhs = reshape(rhs, (channels * window, 1) + filter_shape)
  rhs = _move_axes(rhs, (0, 1), dnums.rhs_spec[:2])
  return conv_general_dilated(
      lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dnums,
      feature_group_count=channels,
      precision=None if precision is None else (precision, Precision.DEFAULT),
      preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
  """A convolution whose kernel differs at every output position: ``rhs``'s
  spatial axes index output positions, and its input feature axis holds
  (input feature, window position) flattened as in the patches."""
  from purejax._src.lax.structural import _as_array
  lhs = _as_array(lhs)
  canonical = canonicalize_precision(precision)
  if canonical is not None and not (isinstance(canonical, tuple) and len(canonical) == 2):
    raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
  patches = conv_general_dilated_patches(
      lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
      dimension_numbers, precision=None if canonical is None else canonical[0])
  lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
      np.shape(lhs), (1, 1) + tuple(filter_shape), dimension_numbers)
  # Contract the patch features with rhs's inputs, one output position at a
  # time (the spatial axes are dot batch axes, paired in the output's order).
  order = sorted(range(len(out_spec) - 2), key=lambda k: out_spec[2 + k])
  out_batch = [out_spec[2 + k] for k in order]
  rhs_batch = [rhs_spec[2 + k] for k in order]
  dims = (([out_spec[1]], [rhs_spec[1]]), (out_batch, rhs_batch))
  out = dot_general(patches, rhs, dims, precision=precision)
  return _move_axes(out, (-2, -1), (out_spec[0], out_spec[1]))
