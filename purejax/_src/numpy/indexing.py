"""Basic indexing (``x[idx]``) and the geometry ``.at[idx]`` updates share.

Supported: integers (Python, NumPy, or traced scalars), slices with any
step, None, Ellipsis, tuples of those, and concrete boolean masks.  Integer
array ("advanced") indices are not supported yet and say so.

Reading clamps out-of-bounds integers (JAX's gather semantics): a static
in-bounds integer becomes a static slice; anything else goes through
``lax.dynamic_slice``, which clamps.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src.array import Array
from purejax._src.numpy import util


# ---------------------------------------------------------------------------
# Parsing an index against a shape

NEW, EMPTY = "new", "empty"
_NEW_SIZES = {NEW: 1, EMPTY: 0}


class Selection:
  """What a basic index selects from an operand, axis by axis.

  ``axes[d]`` describes operand axis d: ``("int", i)`` (a static Python int),
  ``("dyn", i)`` (an integer scalar array or tracer), or
  ``("slice", start, count, step, stop)``: the positions start, start+step, ...
  ``out_axes`` lists the result's axes in order: an operand axis number
  (a slice), NEW (a new axis of size 1) or EMPTY (``x[False]``: size 0).
  """
  __slots__ = ("shape", "axes", "out_axes")

  def __init__(self, shape, axes, out_axes):
    self.shape = shape
    self.axes = axes
    self.out_axes = out_axes

  @property
  def out_shape(self):
    return tuple(_NEW_SIZES[d] if d in _NEW_SIZES else self.axes[d][2]
                 for d in self.out_axes)

  def has_new_axes(self):
    return any(d in _NEW_SIZES for d in self.out_axes)

  def int_axes(self):
    return tuple(d for d, a in enumerate(self.axes) if a[0] != "slice")

  def is_static(self):
    """All integers static and in bounds: a plain static slice does it."""
    return all(a[0] == "slice" or (a[0] == "int" and 0 <= a[1] < self.shape[d])
               for d, a in enumerate(self.axes))


def _is_int_scalar_array(x):
  return (isinstance(x, (core.ArrayBase, np.ndarray)) and np.ndim(x) == 0
          and dtypes.issubdtype(x.dtype, np.integer))


def _is_bool_array(x):
  return (isinstance(x, (core.ArrayBase, np.ndarray)) and np.ndim(x) > 0
          and x.dtype == np.bool_)


def _check_entry(entry):
  """TypeErrors/IndexErrors for index entries purejax cannot use."""
  if entry is None or entry is Ellipsis or isinstance(entry, slice):
    for part in ((entry.start, entry.stop, entry.step) if isinstance(entry, slice) else ()):
      if part is not None and not isinstance(part, (int, np.integer)) \
          and not _is_int_scalar_array(part):
        raise TypeError(f"slice indices must be integers or None, got {part!r}")
    return
  if isinstance(entry, (bool, np.bool_)):
    return
  if isinstance(entry, (int, np.integer)):
    return
  if isinstance(entry, str):
    raise TypeError(f"JAX does not support string indexing; got idx={entry!r}")
  if isinstance(entry, (list, tuple)):
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                    "allowed; use `arr[array(seq)]` instead of `arr[seq]`. See "
                    "https://github.com/jax-ml/jax/issues/4564 for more information.")
  if isinstance(entry, (core.ArrayBase, np.ndarray, np.generic)):
    dt = entry.dtype
    if dt == np.bool_ or dtypes.issubdtype(dt, np.integer):
      if np.ndim(entry) > 0 and dt != np.bool_:
        raise IndexError(
            "Indexing with integer arrays (advanced indexing) is not supported by "
            f"purejax yet; got an index of shape {np.shape(entry)}. Use basic indices "
            "(integers, slices, None, ...) or a concrete boolean mask.")
      return
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
  if isinstance(entry, float):
    raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                    "float64")
  raise TypeError(f"Indexer must be an integer, slice, None, Ellipsis or boolean mask, "
                  f"got {entry!r}")


def _scalar_bool(e):
  """A concrete 0-d boolean array index acts like a Python bool (a new axis)."""
  if isinstance(e, (Array, np.ndarray)) and e.dtype == np.bool_ and np.ndim(e) == 0:
    return bool(e)
  return e


def _slice_positions(s, size):
  """(start, count, step, stop) of the positions a slice selects."""
  start, stop, step = (operator.index(v) if v is not None else None
                       for v in (s.start, s.stop, s.step))
  if step == 0:
    raise ValueError("slice step cannot be zero")
  start, stop, step = slice(start, stop, step).indices(size)
  return start, len(range(start, stop, step)), step, stop


def as_tuple(idx):
  return idx if isinstance(idx, tuple) else (idx,)


def parse(idx, shape):
  """The Selection a basic index (with no boolean masks) makes of ``shape``."""
  entries = [_scalar_bool(e) for e in as_tuple(idx)]
  for e in entries:
    _check_entry(e)
  if sum(e is Ellipsis for e in entries) > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  consumed = sum(1 for e in entries if e is not None and e is not Ellipsis
                 and not isinstance(e, (bool, np.bool_)))
  if consumed > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but "
                     f"{consumed} were indexed")
  if Ellipsis in entries:
    at = entries.index(Ellipsis)
    entries[at:at + 1] = [slice(None)] * (len(shape) - consumed)
  else:
    entries += [slice(None)] * (len(shape) - consumed)

  axes, out_axes = [], []
  for e in entries:
    if e is None or isinstance(e, (bool, np.bool_)):
      out_axes.append(EMPTY if e is False or e is np.False_ else NEW)
      continue
    d = len(axes)
    size = shape[d]
    if isinstance(e, slice):
      axes.append(("slice", *_slice_positions(e, size)))
      out_axes.append(d)
    elif isinstance(e, core.ArrayBase):
      if size == 0:
        raise IndexError(f"index is out of bounds for axis {d} with size 0")
      axes.append(("dyn", e))
    else:
      i = operator.index(e)
      if size == 0:
        raise IndexError(f"index is out of bounds for axis {d} with size 0")
      axes.append(("int", i + size if -size <= i < 0 else i))
  return Selection(tuple(shape), axes, out_axes)


# ---------------------------------------------------------------------------
# Reading: x[idx]

def _finish(x, sel, negative_steps):
  """rev, squeeze integer axes, insert new axes: the common tail of a read."""
  if negative_steps:
    x = lax.rev(x, tuple(negative_steps))
  ints = sel.int_axes()
  if ints:
    x = lax.squeeze(x, ints)
  if sel.has_new_axes():
    dims = tuple(i for i, d in enumerate(sel.out_axes) if d not in _NEW_SIZES)
    x = lax.broadcast_in_dim(x, sel.out_shape, dims)
  return x


def covering(axis):
  """(first position, extent, |step|) of a slice's positions in increasing order."""
  _, start, count, step, _ = axis
  if count == 0:
    return 0, 0, 1
  first = start if step > 0 else start + (count - 1) * step
  return first, (count - 1) * abs(step) + 1, abs(step)


def _static_bounds(axis):
  """(start, limit, |step|) of a static lax.slice taking a slice's positions
  (in increasing order; a negative step is undone by rev afterwards)."""
  _, start, count, step, stop = axis
  if count == 0:
    start = max(start, 0)
    return start, start, 1
  if step > 0:
    return start, stop, step
  first = start + (count - 1) * step
  return first, start + 1, -step


def read(x, sel):
  """``x`` indexed by a parsed basic Selection (clamping out-of-bounds ints)."""
  negative = [d for d, a in enumerate(sel.axes) if a[0] == "slice" and a[3] < 0 and a[2] > 0]
  if sel.is_static():
    starts, limits, strides = [], [], []
    for d, a in enumerate(sel.axes):
      if a[0] == "int":
        starts.append(a[1]); limits.append(a[1] + 1); strides.append(1)
      else:
        lo, hi, step = _static_bounds(a)
        starts.append(lo); limits.append(hi); strides.append(step)
    if tuple(starts) != (0,) * len(starts) or tuple(limits) != sel.shape \
        or any(s != 1 for s in strides):
      x = lax.slice(x, tuple(starts), tuple(limits),
                    None if all(s == 1 for s in strides) else tuple(strides))
    return _finish(x, sel, negative)
  starts, sizes, strides = [], [], []
  for a in sel.axes:
    if a[0] == "int":
      starts.append(a[1]); sizes.append(1); strides.append(1)
    elif a[0] == "dyn":
      starts.append(index_to_int32(a[1])); sizes.append(1); strides.append(1)
    else:
      first, extent, step = covering(a)
      starts.append(first); sizes.append(extent); strides.append(step)
  starts = [normalize_index(i, n) for i, n in zip(starts, sel.shape)]
  x = lax.dynamic_slice(x, starts, tuple(sizes), allow_negative_indices=False)
  if any(s != 1 for s in strides):
    x = lax.slice(x, (0,) * len(sizes), tuple(sizes), tuple(strides))
  return _finish(x, sel, negative)


def normalize_index(i, size):
  """A negative index counted from the end (``i + size``), with lax ops."""
  dt = util.aval_of(i).dtype if isinstance(i, core.ArrayBase) else np.dtype(np.int32)
  i = lax.convert_element_type(i, dt, False)
  zero = lax.convert_element_type(0, dt, False)
  return lax.select(lax.lt(i, zero), lax.add(i, lax.convert_element_type(size, dt, False)), i)


def index_to_int32(i):
  """A traced (or array) index as the int32 lax's dynamic ops take (JAX uses
  int32 whenever the axis fits, also in x64 mode)."""
  return lax.convert_element_type(i, np.dtype(np.int32), False)


def getitem(x, idx):
  """``x[idx]`` for basic indices and concrete boolean masks."""
  if has_mask(idx):
    x, idx = apply_mask(x, idx)
  return read(x, parse(idx, util.shape(x)))


# ---------------------------------------------------------------------------
# Boolean masks: concrete ones only (the result's shape depends on them)

def has_mask(idx):
  return any(_is_bool_array(e) or (isinstance(e, core.Tracer) and e.dtype == np.bool_)
             for e in as_tuple(idx))


def concrete_mask(mask):
  """The NumPy value of a boolean mask; a traced mask cannot be used."""
  if isinstance(mask, core.Tracer):
    value = mask.to_concrete_value()
    if value is None:
      raise errors.NonConcreteBooleanIndexError(mask)
    return np.asarray(value)
  if isinstance(mask, Array):
    return mask._value
  return np.asarray(mask)


def mask_split(x, idx):
  """(axis, mask value, rest) for an index holding one boolean mask.

  The mask covers axes axis..axis+mask.ndim of x.  ``rest`` is the rest of
  the index for x with those axes merged into one: a tuple of slices, one
  per merged axis, with a full slice at ``axis``.
  """
  entries = list(as_tuple(idx))
  masks = [i for i, e in enumerate(entries)
           if _is_bool_array(e) or (isinstance(e, core.Tracer) and e.dtype == np.bool_)]
  values = [concrete_mask(entries[i]) for i in masks]
  if len(masks) > 1 or any(not isinstance(e, slice) and e is not Ellipsis
                           for i, e in enumerate(entries) if i != masks[0]):
    raise IndexError("purejax supports a boolean mask combined only with slices and "
                     "Ellipsis (not with integers, None or other masks) for now.")
  at, mask = masks[0], values[0]
  shape = util.shape(x)
  consumed = sum(mask.ndim if i == at else 1
                 for i, e in enumerate(entries) if e is not Ellipsis)
  if consumed > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but "
                     f"{consumed} were indexed")
  rest, axis = [], None
  for i, e in enumerate(entries):
    if e is Ellipsis:
      rest += [slice(None)] * (len(shape) - consumed)
    elif i == at:
      axis = len(rest)
      rest.append(slice(None))
    else:
      rest.append(e)
  covered = shape[axis:axis + mask.ndim]
  if tuple(covered) != mask.shape:
    raise IndexError(f"boolean index did not match shape of indexed array in index "
                     f"{at}: got {mask.shape}, expected {list(covered)}")
  rest += [slice(None)] * (len(shape) - mask.ndim + 1 - len(rest))
  return axis, mask, tuple(rest)


def runs(positions):
  """Consecutive runs [a, b) of sorted integer positions."""
  out = []
  for p in positions:
    if out and out[-1][1] == p:
      out[-1][1] = p + 1
    else:
      out.append([p, p + 1])
  return [tuple(r) for r in out]


def merge_axes(x, axis, count):
  """x with axes axis..axis+count merged into one."""
  shape = util.shape(x)
  merged = int(np.prod(shape[axis:axis + count], dtype=np.int64))
  new_shape = shape[:axis] + (merged,) + shape[axis + count:]
  return x if new_shape == shape else lax.reshape(x, new_shape)


def apply_mask(x, idx):
  """Applies an index's boolean mask; returns (x, the rest of the index)."""
  axis, mask, rest = mask_split(x, idx)
  x = merge_axes(x, axis, mask.ndim)
  positions = np.flatnonzero(mask)
  shape = util.shape(x)
  pieces = []
  for a, b in runs(positions):
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = a, b
    pieces.append(lax.slice(x, tuple(start), tuple(limit)))
  if not pieces:
    limit = list(shape)
    limit[axis] = 0
    return lax.slice(x, (0,) * len(shape), tuple(limit)), rest
  return (pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)), rest
