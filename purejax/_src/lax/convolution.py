"""Convolutions: conv_general_dilated_p (XLA's Conv), its dimension numbers
and shape helpers, and the lax functions built on it (conv,
conv_with_general_padding, conv_transpose).

Inside the primitive every convolution is computed in the canonical layout
lhs (N, C, spatial...), rhs (O, I, spatial...), out (N, O, spatial...);
``dimension_numbers`` say where those axes sit in the actual operands.
The transpose and batching rules are written in convolution_rules.py.
"""
import operator
from typing import NamedTuple

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.lax import utils
from purejax._src.lax.convert import _convert_impl
from purejax._src.lax import dot as dot_lib
from purejax._src.lax.dot import _compute_dtype, canonicalize_precision
from purejax._src.lax.families import check_same_dtypes, standard_primitive
from purejax._src.lax.structural import _pad_impl


class ConvDimensionNumbers(NamedTuple):
  """Where the batch, feature and spatial axes of a convolution sit.

  ``lhs_spec`` is (batch axis, feature axis, spatial axes...), ``rhs_spec``
  (output feature axis, input feature axis, spatial axes...), ``out_spec``
  like ``lhs_spec``.
  """
  lhs_spec: tuple
  rhs_spec: tuple
  out_spec: tuple


ConvGeneralDilatedDimensionNumbers = tuple | ConvDimensionNumbers | None


# -- dimension numbers ------------------------------------------------------------

def conv_general_permutations(dimension_numbers):
  """The (lhs, rhs, out) axis permutations that strings such as
  ``("NHWC", "HWIO", "NHWC")`` describe.  Spatial axes are ordered as they
  appear in the rhs string."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  pairs = (("N", "C"), ("O", "I"), ("N", "C"))
  for i, (a, b) in enumerate(pairs):
    spec = dimension_numbers[i]
    if not spec.count(a) == spec.count(b) == 1:
      raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                      f"'{a}' and '{b}' exactly once, got {spec}.")
    if len(spec) != len(set(spec)):
      raise TypeError(f"convolution dimension_numbers[{i}] cannot have duplicate "
                      f"characters, got {spec}.")
  spatial_chars = [set(spec) - set(pair) for spec, pair in zip(dimension_numbers, pairs)]
  if not spatial_chars[0] == spatial_chars[1] == spatial_chars[2]:
    raise TypeError("convolution dimension_numbers elements must each have the same set "
                    f"of spatial characters, got {dimension_numbers}.")

  def perm(spec, pair):
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

  return tuple(perm(spec, pair) for spec, pair in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
  """``dimension_numbers`` (None, three strings, or ConvDimensionNumbers) as
  a ConvDimensionNumbers of axis indices."""
  if isinstance(dimension_numbers, ConvDimensionNumbers):
    return dimension_numbers
  if len(lhs_shape) != len(rhs_shape):
    raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                    f"{len(lhs_shape)} and {len(rhs_shape)}.")
  if dimension_numbers is None:
    iota = tuple(range(len(lhs_shape)))
    return ConvDimensionNumbers(iota, iota, iota)
  if not isinstance(dimension_numbers, (list, tuple)):
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")
  if len(dimension_numbers) != 3:
    raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                    f"{len(dimension_numbers)}.")
  if not all(isinstance(s, str) for s in dimension_numbers):
    raise TypeError("convolution dimension_numbers elements must be strings, got "
                    f"{tuple(map(type, dimension_numbers))}.")
  for i, spec in enumerate(dimension_numbers):
    if len(spec) != len(lhs_shape):
      raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                      f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                      f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
  return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


# -- shapes -------------------------------------------------------------------------

def _dilate_dim(d, dilation):
  return max(0, 1 + dilation * (d - 1))


def _dilate_shape(shape, dilation):
  if not all(d > 0 for d in dilation):
    raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")
  dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
  return tuple(_dilate_dim(d, r) for d, r in zip(shape, dilation))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
  """(low, high) pads per spatial axis for "SAME", "SAME_LOWER" or "VALID".

  SAME pads so that the output has ceil(in / stride) elements, with the odd
  element of padding at the end (at the start for SAME_LOWER)."""
  if not isinstance(padding, str):
    raise TypeError(f"Unknown padding type: {padding}.")
  kind = padding.upper()
  if kind not in ("SAME", "SAME_LOWER", "VALID"):
    raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                       f"'SAME_LOWER', got {padding}.")
  if kind == "VALID":
    return [(0, 0)] * len(in_shape)
  pads = []
  for n, k, s in zip(in_shape, window_shape, window_strides):
    n, k, s = int(n), int(k), int(s)
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    small, big = total // 2, total - total // 2
    pads.append((small, big) if kind == "SAME" else (big, small))
  return pads


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
  """The output shape of a convolution of operands in the canonical layout."""
  if isinstance(pads, str):
    pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
  if len(pads) != len(lhs_shape) - 2:
    raise TypeError("Wrong number of explicit pads for convolution: expected "
                    f"{len(lhs_shape) - 2}, got {len(pads)}.")
  padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads)]
  if any(p < 0 for p in padded):
    raise ValueError("Negative padding is larger than the size of the corresponding "
                     f"dimension: got padding={pads} for lhs_shape[2:]="
                     f"{tuple(int(n) for n in lhs_shape[2:])}")
  if any(int(s) <= 0 for s in strides):
    raise ValueError(f"conv_general_dilated window_strides must be positive, got "
                     f"{tuple(strides)}.")
  space = tuple(max((p - int(k)) // int(s) + 1, 0)
                for p, k, s in zip(padded, rhs_shape[2:], strides))
  batch = int(lhs_shape[0])
  if batch_group_count > 1:
    batch //= batch_group_count
  return (batch, int(rhs_shape[0])) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
  """The output shape of a convolution given string dimension numbers."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                         window_strides, padding)
  return tuple(out[i] for i in np.argsort(out_perm))


def _conv_transpose_padding(k, s, padding):
  """(low, high) padding of one spatial axis of conv_transpose."""
  if padding == "SAME":
    total = k + s - 2
    lo = k - 1 if s > k - 1 else -(-total // 2)
  elif padding == "VALID":
    total = k + s - 2 + max(k - s, 0)
    lo = k - 1
  elif isinstance(padding, tuple):
    lo, hi = (k - p - 1 for p in padding)
    total = lo + hi
  else:
    raise ValueError(f"Invalid padding mode: {padding}")
  return lo, total - lo


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
  """The output shape of ``conv_transpose`` given string dimension numbers."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t = [int(d) for d in np.take(lhs_shape, lhs_perm)]
  rhs_t = [int(d) for d in np.take(rhs_shape, rhs_perm)]
  if isinstance(padding, str):
    padding = [_conv_transpose_padding(k, int(s), padding)
               for k, s in zip(rhs_t[2:], window_strides)]
  space = [(i - 1) * int(s) - k + 2 + int(np.sum(p))
           for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)]
  out = [lhs_t[0], rhs_t[0]] + space
  return tuple(out[i] for i in np.argsort(out_perm))


# -- the primitive ------------------------------------------------------------------

def _check_groups(lhs_shape, rhs_shape, feature_group_count, batch_group_count):
  """XLA's constraints on feature and batch grouping (canonical layouts)."""
  name = "conv_general_dilated"
  if not feature_group_count > 0:
    raise ValueError(f"{name} feature_group_count must be a positive integer, got "
                     f"{feature_group_count}.")
  features = lhs_shape[1]
  quot, rem = divmod(features, feature_group_count)
  if rem:
    raise ValueError(f"{name} feature_group_count must divide lhs feature dimension "
                     f"size, but {feature_group_count} does not divide {features}.")
  if quot != rhs_shape[1]:
    raise ValueError(f"{name} lhs feature dimension size divided by feature_group_count "
                     "must equal the rhs input feature dimension size, but "
                     f"{features} // {feature_group_count} != {rhs_shape[1]}.")
  if rhs_shape[0] % feature_group_count:
    raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                     f"feature_group_count, but {rhs_shape[0]} is not a multiple of "
                     f"{feature_group_count}.")
  if not batch_group_count > 0:
    raise ValueError(f"{name} batch_group_count must be a positive integer, got "
                     f"{batch_group_count}.")
  if batch_group_count > 1 and lhs_shape[0] % batch_group_count:
    raise ValueError(f"{name} batch_group_count must divide lhs batch dimension size, "
                     f"but {batch_group_count} does not divide {lhs_shape[0]}.")
  if rhs_shape[0] % batch_group_count:
    raise ValueError(f"{name} rhs output feature dimension size must be a multiple of "
                     f"batch_group_count, but {rhs_shape[0]} is not a multiple of "
                     f"{batch_group_count}.")
  if batch_group_count > 1 and feature_group_count > 1:
    raise ValueError("At most one of batch_group_count and feature_group_count may be "
                     f"> 1, got batch_group_count={batch_group_count} and "
                     f"feature_group_count={feature_group_count}")


def _conv_shape(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count):
  if lhs.ndim != rhs.ndim:
    raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                     f"dimensions, but got {lhs.shape} and {rhs.shape}.")
  lhs_perm, rhs_perm, out_perm = dimension_numbers
  lhs_shape = tuple(lhs.shape[i] for i in lhs_perm)
  rhs_shape = tuple(rhs.shape[i] for i in rhs_perm)
  _check_groups(lhs_shape, rhs_shape, feature_group_count, batch_group_count)
  if len(rhs_perm) - 2 != len(window_strides):
    raise ValueError("conv_general_dilated window and window_strides must have the same "
                     f"number of dimensions, but got {len(rhs_perm) - 2} and "
                     f"{len(window_strides)}")
  out = conv_shape_tuple(_dilate_shape(lhs_shape, lhs_dilation),
                         _dilate_shape(rhs_shape, rhs_dilation),
                         window_strides, padding, batch_group_count)
  return tuple(out[i] for i in np.argsort(out_perm))


def _check_preferred(input_dtype, preferred):
  """XLA's rule for the accumulation type a convolution may be asked for."""
  sub = dtypes.issubdtype
  if not (sub(input_dtype, np.integer) and sub(preferred, np.floating)):
    kinds = (np.integer, np.floating, np.complexfloating)
    if any(sub(input_dtype, k) and not sub(preferred, k) for k in kinds):
      raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                      "compatible combinations of (input_type, preferred_element_type) "
                      "are (integral, integral), (integral, floating), (floating, "
                      "floating), (complex, complex.")
    if sub(input_dtype, np.signedinteger) and not sub(preferred, np.signedinteger):
      raise TypeError("`preferred_element_type` must have the same signedness as the "
                      "original type.")
  if np.dtype(preferred).itemsize < np.dtype(input_dtype).itemsize:
    raise TypeError("`preferred_element_type` must not be narrower than the original "
                    "type.")


def _conv_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation,
                        rhs_dilation, dimension_numbers, feature_group_count,
                        batch_group_count, precision, preferred_element_type,
                        out_sharding):
  shape = _conv_shape(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                      dimension_numbers, feature_group_count, batch_group_count)
  check_same_dtypes("conv_general_dilated", [lhs, rhs])
  dtype = lhs.dtype
  if preferred_element_type is not None:
    _check_preferred(dtype, preferred_element_type)
    dtype = preferred_element_type
  return core.ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# Bound on the elements of one im2col block (float64: 128 MiB).
_BLOCK_ELEMENTS = 1 << 24


def _few_channel_conv_1d(x, w, g, batch_groups):
  """A 1-D, unstrided, undilated convolution of a few channels (jnp.convolve's
  case): one np.correlate per channel pair is much faster than im2col for
  long signals.  x is (N, C, size), w (O, I, k)."""
  n, c, size = x.shape
  o, i, k = w.shape
  nb, og = n // batch_groups, o // g
  # Group-major views: batch or feature groups, whichever is > 1.
  xs = x.reshape(batch_groups, nb, c // i, i, size)
  xs = xs.transpose(0, 2, 1, 3, 4).reshape(g, nb, i, size)
  ws = np.conj(w).reshape(g, og, i, k)   # np.correlate conjugates its kernel
  out = np.zeros((nb, g, og, size - k + 1), x.dtype)
  with np.errstate(all="ignore"):
    for gi, b, oi, ii in np.ndindex(g, nb, og, i):
      out[b, gi, oi] += np.correlate(xs[gi, b, ii], ws[gi, oi, ii], "valid")
  return out.reshape(nb, o, size - k + 1)


def _blocks(nb, first, per_image, per_row):
  """(batch slice, first output axis slice) pairs whose im2col blocks hold at
  most about _BLOCK_ELEMENTS elements."""
  if per_image <= _BLOCK_ELEMENTS:
    step = max(1, _BLOCK_ELEMENTS // max(per_image, 1))
    return [(slice(n, n + step), slice(None)) for n in range(0, nb, step)]
  step = max(1, _BLOCK_ELEMENTS // max(per_row, 1))
  return [(slice(n, n + 1), slice(p, p + step))
          for n in range(nb) for p in range(0, first, step)]


def _im2col_conv(lhs, rhs, dnums, padding, lhs_dilation, strides, rhs_dilation, groups,
                 batch_groups, compute):
  """The convolution as matrix products (im2col): every output position's
  window becomes a row gathered from a strided view of the padded input, and
  one product per group (BLAS for floats) contracts the rows with the kernel.

  The kernel is contracted in its own memory order of (input feature,
  window...) axes, so a big "kernel" (the cotangent, for the gradient w.r.t.
  a kernel) is used in place; the input is padded into the same order, so
  gathering the rows reads memory mostly in sequence.  Returns the output in
  the channels-last layout (N, spatial..., O).
  """
  lhs_spec, rhs_spec, _ = dnums
  nsp = lhs.ndim - 2

  def axes(spec, ks):   # -1 stands for the feature axis, k >= 0 for spatial axis k
    return [spec[1] if k < 0 else spec[2 + k] for k in ks]

  # The contraction's axis order: rhs's I and spatial axes as they lie in rhs.
  order = sorted([-1] + list(range(nsp)), key=lambda k: axes(rhs_spec, [k])[0])
  xp = array_namespace.of(lhs, rhs)   # NumPy, or CuPy for a GPU's arrays
  x = np.transpose(lhs, [lhs_spec[0]] + axes(lhs_spec, order)).astype(compute, copy=False)
  config = [(0, 0, 0)] + [(0, 0, 0) if k < 0 else
                          (padding[k][0], padding[k][1], lhs_dilation[k] - 1) for k in order]
  x = _pad_impl(x, compute.type(0), padding_config=config)
  # rhs as (contraction axes..., O): a view when O is its last axis.
  w = np.transpose(rhs, axes(rhs_spec, order) + [rhs_spec[0]]).astype(compute, copy=False)
  n, o = x.shape[0], w.shape[-1]
  i = w.shape[order.index(-1)]
  window = [w.shape[order.index(k)] for k in range(nsp)]
  spatial = [x.shape[1 + order.index(k)] for k in range(nsp)]
  span = [_dilate_dim(k, r) for k, r in zip(window, rhs_dilation)]
  out_space = tuple(max((p - k) // s + 1, 0) for p, k, s in zip(spatial, span, strides))
  g = max(groups, batch_groups)
  nb, og = n // batch_groups, o // g
  if 0 in (nb, o) + out_space:
    return xp.zeros((nb,) + out_space + (o,), compute)
  if xp is np and nsp == 1 and strides == (1,) and rhs_dilation == (1,) and n * o * i <= 16:
    canon = np.moveaxis(x, 1 + order.index(-1), 1)
    out = _few_channel_conv_1d(canon, np.moveaxis(w, (-1, order.index(-1)), (0, 1)), g,
                               batch_groups)
    return np.moveaxis(out, 1, -1)
  # x as (batch group, nb, [contraction order with C split (feature group, i)]).
  pos = 2 + order.index(-1)   # where the feature group axis lands
  x = x.reshape((batch_groups, nb) + x.shape[1:pos - 1] + (groups, i) + x.shape[pos:])
  sp_axes = [2 + order.index(k) + (order.index(k) > order.index(-1)) for k in range(nsp)]
  views = array_namespace.sliding_window_view(x, span, sp_axes) if nsp else x
  sl = [slice(None)] * views.ndim
  for k in range(nsp):
    sl[sp_axes[k]] = slice(None, None, strides[k])
    sl[x.ndim + k] = slice(None, None, rhs_dilation[k])
  views = views[tuple(sl)]
  # -> (batch group, feature group, nb, positions..., contraction axes...)
  fg_axis = pos
  contraction = [pos + 1 if k < 0 else x.ndim + k for k in order]
  views = views.transpose([0, fg_axis, 1] + sp_axes + contraction)
  depth = i * utils.prod(window)
  kernel = w.reshape(depth, g, og).transpose(1, 0, 2)
  per_row = g * depth * utils.prod(out_space[1:])
  first = out_space[0] if nsp else 1
  blocks = _blocks(nb, first, per_row * first, per_row)

  def product(block):
    cols = block.reshape(g, -1, depth)
    if g == 1:   # a plain 2-D product goes straight to BLAS
      return np.matmul(cols[0], kernel[0])[None]
    return np.matmul(cols, kernel)

  with np.errstate(all="ignore"):
    if len(blocks) == 1:
      out = product(views).reshape((g, nb) + out_space + (og,))
    else:
      out = xp.empty((g, nb) + out_space + (og,), compute)
      for bs, ps in blocks:
        target = out[:, bs, ps] if nsp else out[:, bs]
        block = views[:, :, bs, ps] if nsp else views[:, :, bs]
        target[...] = product(block).reshape(target.shape)
  # (g, nb, space..., og) -> (nb, space..., g * og)
  out = np.moveaxis(out, 0, -2)
  return out.reshape((nb,) + out_space + (o,))


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type, out_sharding):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  if any(rhs.shape[d] == 0 for d in rhs_spec[2:]):
    raise ValueError("conv_general_dilated: every spatial dimension of the kernel must "
                     f"have a positive size, got kernel shape {rhs.shape}.")
  out_dtype = preferred_element_type or lhs.dtype
  compute = _compute_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
  out = _im2col_conv(lhs, rhs, dimension_numbers, padding, lhs_dilation, window_strides,
                     rhs_dilation, feature_group_count, batch_group_count, compute)
  # channels-last (N, spatial..., O) -> the out_spec layout
  placed = [out_spec[0]] + list(out_spec[2:]) + [out_spec[1]]
  out = np.transpose(out, tuple(int(a) for a in np.argsort(placed)))
  return _convert_impl(out, new_dtype=np.dtype(out_dtype), weak_type=False)


def _on_gpu_arrays(eqn):
  """Real operands: the GPU backend runs the im2col products on the device
  arrays (cuBLAS; ``impl_on_gpu_arrays``, see dot_general_p)."""
  return all(np.dtype(v.aval.dtype).kind in "fiu" for v in eqn.invars)


conv_general_dilated_p = standard_primitive(
    "conv_general_dilated", _conv_abstract_eval, _conv_impl, impl_on_gpu_arrays=_on_gpu_arrays)
conv_general_dilated_p.c_code = None   # a native step (backends/cpu/conv.py), not an expression
# Float convolutions BLAS cannot take as they are (16-bit floats, operands of
# another type than the result) compile as a product of the result's type.
conv_general_dilated_p.c_expansion = (
    lambda lhs, rhs, **params: dot_lib.widened_product(conv_general_dilated_p, lhs, rhs, params))
conv_general_dilated_p.c_expansion_applies = (
    lambda eqn: dot_lib.float_result(eqn) and dot_lib.product_needs_expansion(eqn))

# Bilinear: each operand's tangent is convolved with the other operand, and
# each transpose is another convolution (convolution_rules.py, as is vmap's
# rule, which folds the mapped axis into the batch or feature axes).
ad.defjvp(conv_general_dilated_p,
          lambda g, lhs, rhs, **params: conv_general_dilated_p.bind(g, rhs, **params),
          lambda g, lhs, rhs, **params: conv_general_dilated_p.bind(lhs, g, **params))
from purejax._src.lax import convolution_rules as _rules  # noqa: E402  (needs the primitive)
conv_general_dilated_p.transpose = _rules.transpose_rule
conv_general_dilated_p.batch = _rules.batch_rule


# -- public functions -----------------------------------------------------------------

def _int_pairs(padding):
  try:
    return tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
  except (ValueError, TypeError) as err:
    raise ValueError("padding argument to conv_general_dilated should be a string or a "
                     f"sequence of (low, high) pairs, got {padding}") from err


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
  """General n-dimensional convolution (XLA's Conv), with lhs (transposed
  convolution) and rhs (atrous) dilation, feature and batch grouping.

  ``padding`` is "SAME", "SAME_LOWER", "VALID" or (low, high) pairs;
  ``dimension_numbers`` None (NCHW/OIHW/NCHW), ConvDimensionNumbers, or
  three strings such as ("NHWC", "HWIO", "NHWC").  Precision is accepted
  and recorded but purejax always computes exactly.
  """
  dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
  nsp = len(lhs.shape) - 2
  if lhs_dilation is None:
    lhs_dilation = (1,) * nsp
  elif isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
    raise ValueError("String padding is not implemented for transposed convolution using "
                     "this op. Please either exactly specify the required padding or use "
                     "conv_transpose.")
  if rhs_dilation is None:
    rhs_dilation = (1,) * nsp
  window_strides = utils.int_tuple(window_strides)
  lhs_dilation, rhs_dilation = utils.int_tuple(lhs_dilation), utils.int_tuple(rhs_dilation)
  if isinstance(padding, str):
    window = [_dilate_dim(rhs.shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
    lhs_space = [lhs.shape[d] for d in dnums.lhs_spec[2:]]
    padding = padtype_to_pads(lhs_space, window, window_strides, padding)
  padding = _int_pairs(padding)
  preferred = dtypes.canonicalize_user_dtype(preferred_element_type, "conv_general_dilated")
  dnums = ConvDimensionNumbers(*(utils.int_tuple(s) for s in dnums))
  return utils.bind(
      conv_general_dilated_p, lhs, rhs, window_strides=window_strides, padding=padding,
      lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dnums,
      feature_group_count=operator.index(feature_group_count),
      batch_group_count=operator.index(batch_group_count),
      precision=canonicalize_precision(precision), preferred_element_type=preferred,
      out_sharding=out_sharding)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
  """``conv_general_dilated`` in the NCHW/OIHW layout, without dilation."""
  return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                              preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation,
                              rhs_dilation, precision=None, preferred_element_type=None):
  """``conv_general_dilated`` in the NCHW/OIHW layout."""
  return conv_general_dilated(lhs, rhs, window_strides, padding,
                              lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                              precision=precision,
                              preferred_element_type=preferred_element_type)


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
  """A fractionally strided convolution (the "transpose" of a strided one),
  computed directly with lhs dilation.  The default layout is TensorFlow's
  (NHWC, HWIO); ``transpose_kernel`` flips the kernel's spatial axes and
  swaps its feature axes, as Keras' Conv2DTranspose does."""
  from purejax._src.lax.structural import rev, transpose
  ndim = len(lhs.shape)
  if len(rhs.shape) != ndim or ndim < 2:
    raise ValueError("conv_transpose requires lhs and rhs of the same rank, at least 2, "
                     f"got shapes {lhs.shape} and {rhs.shape}.")
  if dimension_numbers is None:
    if ndim not in _TRANSPOSE_LAYOUTS:
      raise ValueError("No 4+ dimensional dimension_number defaults.")
    dimension_numbers = _TRANSPOSE_LAYOUTS[ndim]
  dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
  window = [rhs.shape[d] for d in dnums.rhs_spec[2:]]
  if rhs_dilation is None:
    rhs_dilation = (1,) * (ndim - 2)
  if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
    per_axis = [padding] * len(strides) if isinstance(padding, str) else padding
    pads = tuple(_conv_transpose_padding(_dilate_dim(k, r), int(s),
                                         p if isinstance(p, str) else tuple(p))
                 for k, r, s, p in zip(window, rhs_dilation, strides, per_axis))
  else:
    pads = padding
  if transpose_kernel:
    rhs = rev(rhs, dnums.rhs_spec[2:])
    perm = list(range(ndim))
    o, i = dnums.rhs_spec[:2]
    perm[o], perm[i] = i, o
    rhs = transpose(rhs, perm)
  return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation,
                              dnums, precision=precision,
                              preferred_element_type=preferred_element_type)
