"""``x.at[idx]``: functional indexed updates and reads with a mode.

Updates follow JAX's scatter semantics: out-of-bounds positions are dropped
(``mode='clip'`` clamps them instead).  They are built from lax ops only: the
update is padded (interior padding = step - 1) into the operand's shape next
to a padded boolean mask, then merged with ``select``; a traced integer
index places the padded block with ``dynamic_update_slice``.
"""
import warnings

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.config import config
from purejax._src.numpy import indexing
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util

_GATHER_MODES = ("clip", "fill", "drop", "promise_in_bounds")


def _mode_name(mode, kind):
  if mode is None:
    return None
  name = getattr(mode, "name", mode)   # accepts an enum with a .name too
  name = str(name).lower()
  aliases = {"fill_or_drop": "fill", "promise_in_bounds": "promise_in_bounds"}
  name = aliases.get(name, name)
  if name not in _GATHER_MODES:
    raise ValueError(f'Unknown {kind} mode "{mode}"')
  return name


class _IndexUpdateHelper:
  """The ``.at`` property: ``x.at[idx]`` gives an ``_IndexUpdateRef``."""
  __slots__ = ("array",)

  def __init__(self, array):
    self.array = array

  def __getitem__(self, index):
    return _IndexUpdateRef(self.array, index)

  def __repr__(self):
    return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
  """``x.at[idx]``: call ``.set(y)``, ``.add(y)``, ``.get()``... on it."""
  __slots__ = ("array", "index")

  def __init__(self, array, index):
    self.array = array
    self.index = index

  def __repr__(self):
    return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

  def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
          fill_value=None, out_sharding=None):
    """``x[idx]``; with ``mode='fill'`` out-of-bounds reads give ``fill_value``."""
    return get(self.array, self.index, _mode_name(mode, "gather"), fill_value)

  def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    """x with x[idx] replaced by values."""
    return update(self.array, self.index, values, "set", _mode_name(mode, "scatter"))

  def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
    """x with func applied (elementwise) to x[idx]."""
    return update(self.array, self.index, None, func, _mode_name(mode, "scatter"))

  def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "add", _mode_name(mode, "scatter"))

  def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "subtract", _mode_name(mode, "scatter"))

  def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "multiply", _mode_name(mode, "scatter"))

  mul = multiply

  def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "divide", _mode_name(mode, "scatter"))

  def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "power", _mode_name(mode, "scatter"))

  def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "min", _mode_name(mode, "scatter"))

  def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
    return update(self.array, self.index, values, "max", _mode_name(mode, "scatter"))


# ---------------------------------------------------------------------------
# Reads with a mode

def _default_fill(dtype):
  if dtypes.issubdtype(dtype, np.inexact):
    return np.nan
  if dtypes.issubdtype(dtype, np.signedinteger):
    return int(dtypes.iinfo(dtype).min)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return int(dtypes.iinfo(dtype).max)
  return True


def _normalized(i, size):
  """A traced index with negative values counted from the end (int32)."""
  return indexing.normalize_index(indexing.index_to_int32(i), size)


def _in_bounds(sel):
  """A traced bool scalar: every traced integer of ``sel`` is in bounds."""
  ok = None
  for d, a in enumerate(sel.axes):
    if a[0] != "dyn":
      continue
    i = _normalized(a[1], sel.shape[d])
    dt = util.aval_of(i).dtype
    inside = lax.bitwise_and(lax.ge(i, lax.convert_element_type(0, dt, False)),
                             lax.lt(i, lax.convert_element_type(sel.shape[d], dt, False)))
    ok = inside if ok is None else lax.bitwise_and(ok, inside)
  return ok


def _static_out_of_bounds(sel):
  return any(a[0] == "int" and not 0 <= a[1] < sel.shape[d] for d, a in enumerate(sel.axes))


def get(x, idx, mode, fill_value):
  x = util.asarray(x)
  if mode not in ("fill", "drop"):
    return indexing.getitem(x, idx)
  if indexing.has_mask(idx):
    return indexing.getitem(x, idx)   # a mask selects in-bounds positions only
  sel = indexing.parse(idx, util.shape(x))
  aval = util.aval_of(x)
  fill = _default_fill(aval.dtype) if fill_value is None else fill_value
  fill = lax.convert_element_type(fill, aval.dtype, aval.weak_type)
  if _static_out_of_bounds(sel):
    out_shape = sel.out_shape
    return lax.broadcast_in_dim(fill, out_shape, ()) if out_shape else fill
  value = indexing.read(x, sel)
  ok = _in_bounds(sel)
  if ok is None:
    return value
  shape = util.shape(value)
  fills = lax.broadcast_in_dim(fill, shape, ()) if shape else fill
  return lax.select(ok, value, fills)


# ---------------------------------------------------------------------------
# Updates

def _check_cast(y, dtype):
  if not dtypes.safe_to_cast(y, dtype):
    warnings.warn(
        "scatter inputs have incompatible types: cannot safely cast value from "
        f"dtype={dtypes.result_type(y)} to dtype={dtype} with "
        f"jax_numpy_dtype_promotion={config.jax_numpy_dtype_promotion}. In future JAX "
        "releases this will result in an error.", FutureWarning, stacklevel=4)


def update(x, idx, y, op, mode):
  """x with ``op`` applied at x[idx] ("set", "add", ... or a function)."""
  util.check_arraylike("at", x)
  x = util.asarray(x)
  if y is not None:
    util.check_arraylike(f"scatter_{op}" if isinstance(op, str) else "scatter", y)
  if indexing.has_mask(idx):
    return _masked_update(x, idx, y, op, mode)
  sel = indexing.parse(idx, util.shape(x))
  aval = util.aval_of(x)
  if y is not None:
    _check_cast(y, aval.dtype)
    y = lax.convert_element_type(y, aval.dtype, aval.weak_type)
    y = util.broadcast_to(y, sel.out_shape)
  if mode == "clip":
    sel = _clamped(sel)
  elif _static_out_of_bounds(sel):
    return _combine(x, None, None, op)    # dropped: nothing is updated
  if 0 in sel.out_shape:
    return _combine(x, None, None, op)
  padded, mask = _placed(x, sel, y, drop=mode != "clip")
  return _combine(x, padded, mask, op)


def _clamped(sel):
  axes = [("int", min(max(a[1], 0), sel.shape[d] - 1)) if a[0] == "int" else a
          for d, a in enumerate(sel.axes)]
  return indexing.Selection(sel.shape, axes, sel.out_axes)


def _window(sel, y):
  """The update reshaped to one axis per operand axis, in increasing order."""
  window_shape = tuple(1 if a[0] != "slice" else a[2] for a in sel.axes)
  if util.shape(y) != window_shape:
    y = lax.reshape(y, window_shape)
  flipped = tuple(d for d, a in enumerate(sel.axes) if a[0] == "slice" and a[3] < 0)
  return lax.rev(y, flipped) if flipped else y


def _placed(x, sel, y, drop):
  """(y padded into x's shape, the mask of updated positions).

  A traced index out of bounds is dropped (the mask is all false) when
  ``drop``, else clamped by dynamic_update_slice.
  """
  shape = sel.shape
  dyn = [d for d, a in enumerate(sel.axes) if a[0] == "dyn"]
  config_ = []
  for d, a in enumerate(sel.axes):
    if a[0] == "dyn":
      config_.append((0, 0, 0))
    elif a[0] == "int":
      config_.append((a[1], shape[d] - a[1] - 1, 0))
    else:
      first, extent, step = indexing.covering(a)
      config_.append((first, shape[d] - first - extent, step - 1))
  aval = util.aval_of(x)
  zero = lax.convert_element_type(0, aval.dtype, aval.weak_type)
  window_shape = tuple(1 if a[0] != "slice" else a[2] for a in sel.axes)
  true = lax.convert_element_type(True, np.bool_, False)
  mask = lax.pad(lax.broadcast_in_dim(true, window_shape, ()),
                 lax.convert_element_type(False, np.bool_, False), config_)
  padded = None
  if y is not None:
    padded = lax.pad(_window(sel, y), zero, config_)
  if not dyn:
    return padded, mask
  zero_index = lax.convert_element_type(0, np.int32, False)
  starts = [_normalized(sel.axes[d][1], shape[d]) if d in dyn else zero_index
            for d in range(len(shape))]
  # starts are already non-negative: an index still negative is out of bounds.
  mask = lax.dynamic_update_slice(
      lax.broadcast_in_dim(lax.convert_element_type(False, np.bool_, False), shape, ()),
      mask, starts, allow_negative_indices=False)
  if y is not None:
    padded = lax.dynamic_update_slice(
        lax.broadcast_in_dim(zero, shape, ()), padded, starts, allow_negative_indices=False)
  if drop:
    mask = lax.bitwise_and(mask, _in_bounds(sel))
  return padded, mask


def _combine(x, padded, mask, op):
  if mask is None:      # nothing selected
    if op == "divide":
      return ufuncs.true_divide(x, 1)
    return x
  if op == "set":
    return lax.select(mask, padded, x)
  if callable(op):
    return lax.select(mask, op(x), x)
  if op in ("divide", "power"):
    one = lax.convert_element_type(1, util.aval_of(x).dtype, False)
    factor = lax.select(mask, padded, lax.broadcast_in_dim(one, util.shape(x), ()))
    return ufuncs.true_divide(x, factor) if op == "divide" else ufuncs.power(x, factor)
  lax_fn = {"add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "min": lax.min,
            "max": lax.max}[op]
  return lax.select(mask, lax_fn(x, padded), x)


def _masked_update(x, idx, y, op, mode):
  """An update through a concrete boolean mask: one static slice per run."""
  axis, mask, rest = indexing.mask_split(x, idx)
  shape = util.shape(x)
  merged = indexing.merge_axes(x, axis, mask.ndim)
  positions = np.flatnonzero(mask)
  view_shape = indexing.parse(rest, util.shape(merged)).out_shape
  view_shape = view_shape[:axis] + (len(positions),) + view_shape[axis + 1:]
  if y is not None:
    y = util.broadcast_to(lax.convert_element_type(
        y, util.aval_of(x).dtype, util.aval_of(x).weak_type), view_shape)
  done = 0
  for a, b in indexing.runs(positions):
    run_idx = rest[:axis] + (slice(a, b),) + rest[axis + 1:]
    piece = None
    if y is not None:
      start = [0] * len(view_shape)
      limit = list(view_shape)
      start[axis], limit[axis] = done, done + (b - a)
      piece = lax.slice(y, tuple(start), tuple(limit))
    merged = update(merged, run_idx, piece, op, mode)
    done += b - a
  return merged if util.shape(merged) == shape else lax.reshape(merged, shape)
