"""jnp.pad with all of NumPy's modes (constant, edge, linear_ramp, maximum,
mean, median, minimum, reflect, symmetric, wrap, empty, and a callable),
built from lax.pad, slices, reversals and concatenations."""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import creation
from purejax._src.numpy import manipulation
from purejax._src.numpy import quantiles
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike

def _pairs(values, nd, name):
  """A pad-style argument as ((before, after),) * nd of concrete values."""
  def concrete(x):
    return util.concrete_or_error(x, f"{name} argument of jnp.pad")
  try:
    arr = np.asarray(_tree_map(concrete, values))
  except ValueError as e:
    if "inhomogeneous" in str(e):
      raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
    raise
  if arr.dtype == object:
    raise TypeError(f"`{name}` entries must be the same shape: {values}")
  if arr.shape == (nd, 2):
    return tuple((row[0], row[1]) for row in arr)
  if arr.shape == (1, 2):
    return ((arr[0, 0], arr[0, 1]),) * nd
  if arr.shape == (2,):
    return ((arr[0], arr[1]),) * nd
  if arr.shape in ((1,), ()):
    v = arr.ravel()[0]
    return ((v, v),) * nd
  raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. "
                   f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _tree_map(f, x):
  if isinstance(x, (list, tuple)):
    return type(x)(_tree_map(f, item) for item in x)
  return f(x)


def _check_no_padding(widths, mode):
  if widths[0] > 0 or widths[1] > 0:
    raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _one_axis_pad(a, axis, lo, hi):
  pad = [(0, 0, 0)] * util.ndim(a)
  pad[axis] = (lo, hi, 0)
  return pad


def _lax_pad_axis(x, value, axis, lo, hi):
  return lax.pad(x, value, _one_axis_pad(x, axis, lo, hi))


def _pad_constant(x, widths, constant_values):
  nd = util.ndim(x)
  aval = util.aval_of(x)
  values = lax.convert_element_type(constant_values, aval.dtype, aval.weak_type)
  vnd = util.ndim(values)
  if vnd == 0:
    return lax.pad(x, values, [(lo, hi, 0) for lo, hi in widths])
  if vnd == 1:
    if util.shape(values)[-1] == 1:
      return lax.pad(x, lax.reshape(values, ()), [(lo, hi, 0) for lo, hi in widths])
    if util.shape(values)[-1] != 2:
      raise ValueError("jnp.pad: constant_values has unsupported shape "
                       f"{util.shape(values)}. If the shape is 1D or 2D, the last dimension "
                       "must be of size 1 or 2.")
  values = util.broadcast_to(values, (nd, 2))
  for i, (lo, hi) in enumerate(widths):
    if lo:
      x = _lax_pad_axis(x, lax.reshape(lax.slice(values, (i, 0), (i + 1, 1)), ()), i, lo, 0)
    if hi:
      x = _lax_pad_axis(x, lax.reshape(lax.slice(values, (i, 1), (i + 1, 2)), ()), i, 0, hi)
  return x


def _pad_wrap(x, widths):
  for i, (lo, hi) in enumerate(widths):
    size = util.shape(x)[i]
    if size == 0:
      _check_no_padding((lo, hi), "wrap")
      continue
    lo_reps, lo_rest = divmod(lo, size)
    hi_reps, hi_rest = divmod(hi, size)
    parts = [lax.slice_in_dim(x, size - lo_rest, size, axis=i)] if lo_rest else []
    parts += [x] * (lo_reps + hi_reps + 1)
    if hi_rest:
      parts.append(lax.slice_in_dim(x, 0, hi_rest, axis=i))
    x = lax.concatenate(parts, i)
  return x


def _reflected(x, i, size, padding, before, mode, odd):
  """``padding`` reflected values on one side of axis ``i`` (of original
  length ``size``), built in rounds of at most one reflection each: the
  padding may exceed the axis."""
  offset = 1 if mode == "reflect" and size > 1 else 0
  edge = lax.slice_in_dim(x, 0, 1, axis=i) if before else lax.slice_in_dim(x, -1, None, axis=i)
  while padding > 0:
    n = min(padding, size - offset)
    padding -= n
    if before:
      start, stop = offset, offset + n
    else:
      start, stop = -(n + offset), (None if mode == "symmetric" or size == 1 else -1)
    part = lax.rev(lax.slice_in_dim(x, start, stop, axis=i), (i,))
    if odd:
      part = ufuncs.subtract(ufuncs.multiply(2, edge), part)
      if size > 1:
        edge = (lax.slice_in_dim(part, 0, 1, axis=i) if before
                else lax.slice_in_dim(part, -1, None, axis=i))
    x = lax.concatenate([part, x] if before else [x, part], i)
  return x


def _pad_reflect(x, widths, mode, reflect_type):
  if reflect_type not in ("even", "odd"):
    raise ValueError(f"unsupported reflect_type {reflect_type!r}: must be 'even' or 'odd'")
  for i, (lo, hi) in enumerate(widths):
    size = util.shape(x)[i]
    if size == 0:
      _check_no_padding((lo, hi), mode)
      continue
    x = _reflected(x, i, size, lo, True, mode, reflect_type == "odd")
    x = _reflected(x, i, size, hi, False, mode, reflect_type == "odd")
  return x


def _pad_edge(x, widths):
  for i, (lo, hi) in enumerate(widths):
    size = util.shape(x)[i]
    if size == 0:
      _check_no_padding((lo, hi), "edge")
      continue
    x = lax.concatenate([manipulation.repeat_scalar(lax.slice_in_dim(x, 0, 1, axis=i), lo, i), x,
                         manipulation.repeat_scalar(lax.slice_in_dim(x, size - 1, size, axis=i), hi, i)],
                        i)
  return x


def _pad_linear_ramp(x, widths, end_values):
  aval = util.aval_of(x)
  for i, (lo, hi) in enumerate(widths):
    first = lax.squeeze(lax.slice_in_dim(x, 0, 1, axis=i), (i,))
    last = lax.squeeze(lax.slice_in_dim(x, -1, None, axis=i), (i,))
    before = creation.linspace(end_values[i][0], first, lo, endpoint=False,
                               dtype=aval.dtype, axis=i)
    after = creation.linspace(end_values[i][1], last, hi, endpoint=False,
                              dtype=aval.dtype, axis=i)
    before = lax.convert_element_type(before, aval.dtype, aval.weak_type)
    after = lax.rev(lax.convert_element_type(after, aval.dtype, aval.weak_type), (i,))
    x = lax.concatenate([before, x, after], i)
  return x


def _median(a, axis, keepdims):
  return quantiles.median(a, axis=axis, keepdims=keepdims)


_STAT_FUNCS = {
    "maximum": lambda a, axis, keepdims: reductions.max(a, axis=axis, keepdims=keepdims),
    "minimum": lambda a, axis, keepdims: reductions.min(a, axis=axis, keepdims=keepdims),
    "mean": lambda a, axis, keepdims: reductions.mean(a, axis=axis, keepdims=keepdims),
    "median": _median,
}


def _pad_stats(x, widths, stat_length, stat_func):
  aval = util.aval_of(x)
  for i, (lo, hi) in enumerate(widths):
    if stat_length is None:
      stat_lo = stat_hi = stat_func(x, i, True)
    else:
      length_lo, length_hi = stat_length[i]
      if length_lo == 0 or length_hi == 0:
        raise ValueError("stat_length of 0 yields no value for padding")
      size = util.shape(x)[i]
      length_lo, length_hi = min(length_lo, size), min(length_hi, size)
      stat_lo = stat_func(lax.slice_in_dim(x, 0, length_lo, axis=i), i, True)
      stat_hi = stat_func(lax.slice_in_dim(x, size - length_hi, size, axis=i), i, True)
    if dtypes.issubdtype(aval.dtype, np.integer):
      stat_lo, stat_hi = ufuncs.round(stat_lo), ufuncs.round(stat_hi)
    stat_lo = lax.convert_element_type(stat_lo, aval.dtype, aval.weak_type)
    stat_hi = lax.convert_element_type(stat_hi, aval.dtype, aval.weak_type)
    x = lax.concatenate([manipulation.repeat_scalar(stat_lo, lo, i), x, manipulation.repeat_scalar(stat_hi, hi, i)], i)
  return x


def _pad_empty(x, widths):
  # Arrays are immutable: 'empty' padding is zeros, as jnp.empty is.
  zero = lax.convert_element_type(0, util.aval_of(x).dtype, False)
  return lax.pad(x, zero, [(lo, hi, 0) for lo, hi in widths])


def _pad_func(x, widths, func, **kwargs):
  from purejax._src.numpy.functional import apply_along_axis
  x = _pad_constant(x, widths, util.asarray(0))
  for axis in range(util.ndim(x)):
    x = apply_along_axis(func, axis, x, widths[axis], axis, kwargs)
  return x


_PAD_KWARGS = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def pad(array, pad_width, mode="constant", **kwargs):
  """``array`` padded by ``pad_width`` with NumPy's modes (or a callable).
  Widths, ``stat_length`` and ``end_values`` must be static;
  ``constant_values`` may be traced."""
  check_arraylike("pad", array)
  x = util.asarray(array)
  nd = util.ndim(x)
  widths = _pairs(pad_width, nd, "pad_width")
  if widths and not all(isinstance(w, (int, np.integer)) and not isinstance(w, np.bool_)
                        for pair in widths for w in pair):
    raise TypeError("`pad_width` must be of integral type.")
  widths = tuple((int(lo), int(hi)) for lo, hi in widths)
  if callable(mode):
    return _pad_func(x, widths, mode, **kwargs)
  if mode not in _PAD_KWARGS:
    raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
  unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
  if unsupported:
    raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
  if nd == 0:
    return x
  if any(w < 0 for pair in widths for w in pair):
    raise ValueError("index can't contain negative values")
  if mode == "constant":
    return _pad_constant(x, widths, creation.asarray(kwargs.get("constant_values", 0)))
  if mode == "wrap":
    return _pad_wrap(x, widths)
  if mode in ("symmetric", "reflect"):
    return _pad_reflect(x, widths, mode, kwargs.get("reflect_type", "even"))
  if mode == "edge":
    return _pad_edge(x, widths)
  if mode == "linear_ramp":
    return _pad_linear_ramp(x, widths, _pairs(kwargs.get("end_values", 0), nd, "end_values"))
  if mode == "empty":
    return _pad_empty(x, widths)
  stat_length = kwargs.get("stat_length")
  if stat_length is not None:
    stat_length = tuple((int(lo), int(hi)) for lo, hi in _pairs(stat_length, nd, "stat_length"))
  return _pad_stats(x, widths, stat_length, _STAT_FUNCS[mode])
