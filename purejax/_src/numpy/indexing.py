"""NumPy indexing (``x[idx]``), lowered to lax as JAX lowers it.

An index is parsed into entries (integers, slices, None, Ellipsis, integer
arrays, boolean masks), then the cheapest lowering that can express it is
used: a static ``lax.slice`` (static in-bounds integers and slices), else a
``lax.dynamic_slice`` (scalar integers, possibly traced, and unit-step
slices), else a ``lax.gather``.  The gather geometry (``to_gather``) is
shared with ``x.at[idx]`` updates, which scatter with it.

Out-of-bounds integers are clamped by default (``jnp.arange(10)[11]`` is 9);
negative ones count from the end once.  Boolean masks must be concrete:
they become integer arrays (the result's shape depends on their values).
"""
import operator
from typing import NamedTuple

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src.lax.gather import GatherDimensionNumbers, GatherScatterMode, gather
from purejax._src.numpy import util

NONE, ELLIPSIS, SLICE, INTEGER, BOOLEAN, ARRAY = (
    "none", "ellipsis", "slice", "integer", "boolean", "array")


class Entry(NamedTuple):
  """One entry of an index and the operand axes it consumes."""
  index: object
  kind: str
  axes: tuple


# ---------------------------------------------------------------------------
# Parsing

def _dtype_of(x):
  # NumPy arrays keep their own dtype here (JAX names float64 in its errors).
  return x.dtype if isinstance(x, np.ndarray) else core.get_aval(x).dtype


def _ndim(x):
  if isinstance(x, (core.ArrayBase, np.ndarray, np.generic)):
    return len(core.get_aval(x).shape)
  return np.ndim(x)


def _is_int_scalar(x):
  return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _sequence_kind(seq):
  if not seq:
    return ARRAY
  try:
    dtype = _dtype_of(_sequence_to_array(seq))
  except TypeError:
    dtype = np.asarray(seq).dtype
  if dtype == np.bool_:
    return BOOLEAN
  if dtypes.issubdtype(dtype, np.integer):
    return ARRAY
  raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")


def _kind(idx):
  if idx is None:
    return NONE
  if idx is Ellipsis:
    return ELLIPSIS
  if isinstance(idx, slice):
    return SLICE
  if _is_int_scalar(idx):
    return INTEGER
  if isinstance(idx, (bool, np.bool_)):
    return BOOLEAN
  if isinstance(idx, (core.ArrayBase, np.ndarray)):
    dtype = _dtype_of(idx)
    if dtype == np.bool_:
      return BOOLEAN
    if dtypes.issubdtype(dtype, np.integer):
      return ARRAY
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dtype}")
  if isinstance(idx, str):
    raise TypeError(f"JAX does not support string indexing; got idx={idx!r}")
  if isinstance(idx, (list, tuple)):
    return _sequence_kind(idx)
  if isinstance(idx, (float, complex, np.generic)):
    raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                    f"{np.dtype(type(idx))}")
  raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                   f"integer or boolean arrays are valid indices. Got {idx}")


def _unpacks(x):
  return ((isinstance(x, (np.ndarray, core.ArrayBase)) and _ndim(x) != 0)
          or isinstance(x, (list, tuple, slice)) or x is Ellipsis or x is None)


def as_tuple(idx):
  """The index as a tuple; a list (NumPy's old multi-index) is refused."""
  if isinstance(idx, tuple):
    return idx
  if isinstance(idx, list):
    hint = "tuple" if any(_unpacks(i) for i in idx) else "array"
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                    f"allowed; use `arr[{hint}(seq)]` instead of `arr[seq]`. See "
                    "https://github.com/jax-ml/jax/issues/4564 for more information.")
  return (idx,)


def parse(idx, shape):
  """The entries of ``idx`` for an operand of ``shape``."""
  idx = as_tuple(idx)
  kinds = [_kind(i) for i in idx]
  consumed = [0 if k in (NONE, ELLIPSIS) else _ndim(i) if k == BOOLEAN else 1
              for i, k in zip(idx, kinds)]
  ellipses = [n for n, k in enumerate(kinds) if k == ELLIPSIS]
  if len(ellipses) > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  total = sum(consumed)
  if total > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} "
                     "were indexed")
  if ellipses:
    consumed[ellipses[0]] = len(shape) - total
  entries, axis = [], 0
  for i, k, n in zip(idx, kinds, consumed):
    entries.append(Entry(i, k, tuple(range(axis, axis + n))))
    axis += n
  return entries


def expand_ellipsis(entries, ndim):
  """Ellipsis and the implicit trailing axes as explicit full slices."""
  out, used = [], 0
  for e in entries:
    used += len(e.axes)
    if e.kind == ELLIPSIS:
      out += [Entry(slice(None), SLICE, (a,)) for a in e.axes]
    else:
      out.append(e)
  return out + [Entry(slice(None), SLICE, (a,)) for a in range(used, ndim)]


def _static_int(x):
  """A concrete integer (slice parts may be concrete arrays), else None."""
  if isinstance(x, core.Tracer):
    x = x.to_concrete_value()
    if x is None:
      return None
  return operator.index(x)


def static_slice(s, position):
  """``s`` with plain int parts; a traced part is an IndexError, as in JAX."""
  parts = [None if v is None else _static_int(v) for v in (s.start, s.stop, s.step)]
  if any(p is None and v is not None for p, v in zip(parts, (s.start, s.stop, s.step))):
    raise IndexError(f"Slice entries must be static integers. Got {s} at position "
                     f"{position}")
  if parts[2] == 0:
    raise ValueError("slice step cannot be zero")
  return slice(*parts)


# ---------------------------------------------------------------------------
# Reading: static slice, dynamic slice or gather

def _mode(mode):
  return GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
      GatherScatterMode.from_any(mode)


def _newaxis_position(n_starts, squeezed, newaxes):
  # expand_dims inserts in order, after slicing and squeezing.
  return n_starts - len(squeezed) + len(newaxes)


def _try_static(x, entries, mode, normalize):
  """``x[idx]`` with lax.slice, or None when that can't express it."""
  if mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    return None
  if any(e.kind not in (INTEGER, ELLIPSIS, SLICE, NONE) for e in entries):
    return None
  shape = util.shape(x)
  starts, limits, strides, rev, squeeze, newaxes = [], [], [], [], [], []
  for pos, e in enumerate(expand_ellipsis(entries, len(shape))):
    if e.kind == NONE:
      newaxes.append(_newaxis_position(len(starts), squeeze, newaxes))
      continue
    axis, = e.axes
    size = shape[axis]
    if e.kind == INTEGER:
      i = int(e.index)
      if normalize and i < 0:
        i += size
      if size == 0 or (mode == GatherScatterMode.PROMISE_IN_BOUNDS and not 0 <= i < size):
        return None
      i = min(max(i, 0), size - 1)
      starts.append(i); limits.append(i + 1); strides.append(1)
      squeeze.append(axis)
      continue
    try:
      s = static_slice(e.index, pos)
    except IndexError:
      return None
    start, stop, step = s.indices(size)
    if step < 0:
      first = min(size, stop + 1 + (start - stop - 1) % -step)
      starts.append(first); limits.append(max(first, start + 1)); strides.append(-step)
      rev.append(axis)
    else:
      starts.append(start); limits.append(max(start, stop)); strides.append(step)
  strides = None if all(s == 1 for s in strides) else strides
  trivial = strides is None and all((a, b) == (0, n) for a, b, n in
                                    zip(starts, limits, shape))
  out = x if trivial else lax.slice(x, starts, limits, strides)
  return _finish(out, rev, squeeze, newaxes)


def _finish(out, rev, squeeze, newaxes):
  if rev:
    out = lax.rev(out, tuple(rev))
  if squeeze:
    out = lax.squeeze(out, tuple(squeeze))
  if newaxes:
    out = lax.expand_dims(out, tuple(newaxes))
  return out


def _allows_dynamic_slice(e):
  if e.kind in (INTEGER, ELLIPSIS, NONE):
    return True
  if e.kind == SLICE:
    return e.index.step is None or _static_int(e.index.step) in (1, -1)
  return e.kind == ARRAY and not isinstance(e.index, (list, tuple)) and _ndim(e.index) == 0


def _try_dynamic(x, entries, mode, normalize):
  """``x[idx]`` with lax.dynamic_slice (scalar, maybe traced, integers and
  unit-step slices), or None."""
  if mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    return None
  if not all(_allows_dynamic_slice(e) for e in entries):
    return None
  shape = util.shape(x)
  starts, sizes, rev, squeeze, newaxes = [], [], [], [], []
  trivial = True
  for pos, e in enumerate(expand_ellipsis(entries, len(shape))):
    if e.kind == NONE:
      newaxes.append(_newaxis_position(len(starts), squeeze, newaxes))
      continue
    axis, = e.axes
    if e.kind in (INTEGER, ARRAY):
      if shape[axis] == 0:
        return None
      trivial = False
      starts.append(util.asarray(e.index)); sizes.append(1); squeeze.append(axis)
      continue
    try:
      s = static_slice(e.index, pos)
    except IndexError:
      return None
    trivial = trivial and s == slice(None)
    start, stop, step = s.indices(shape[axis])
    if step < 0:
      starts.append(stop + 1); sizes.append(max(0, start - stop)); rev.append(axis)
    else:
      starts.append(start); sizes.append(max(0, stop - start))
  if len(starts) > 1:
    dt = index_dtype(shape)
    starts = [lax.convert_element_type(i, dt) for i in starts]
  if trivial:
    out = x
  else:
    # Unsigned starts are never negative: JAX skips their normalization.
    allow = [normalize and not (isinstance(i, core.ArrayBase)
                                and dtypes.issubdtype(_dtype_of(i), np.unsignedinteger))
             for i in starts]
    out = lax.dynamic_slice(x, starts, sizes, allow_negative_indices=allow)
  return _finish(out, rev, squeeze, newaxes)


def index_dtype(shape):
  """int32 unless an axis is too long for it (as JAX chooses)."""
  if any(d >= np.iinfo(np.int32).max for d in shape):
    return dtypes.canonicalize_dtype(np.int64)
  return np.dtype(np.int32)


def expand_bool_indices(entries, shape):
  """Boolean masks replaced by the integer arrays of their True positions
  (scalar booleans stay); a traced mask raises NonConcreteBooleanIndexError."""
  out = []
  for pos, e in enumerate(entries):
    if e.kind != BOOLEAN:
      out.append(e)
      continue
    value = e.index
    if isinstance(value, core.Tracer):
      concrete = value.to_concrete_value()
      if concrete is None:
        raise errors.NonConcreteBooleanIndexError(value)
      value = concrete
    value = np.asarray(core.concrete_numpy_value(value) if isinstance(value, core.ArrayBase)
                       else value)
    if value.ndim == 0:
      out.append(Entry(bool(value), BOOLEAN, ()))
      continue
    expected = [shape[a] for a in e.axes]
    if not all(s in (0, t) for s, t in zip(value.shape, expected)):
      raise IndexError("boolean index did not match shape of indexed array in index "
                       f"{pos}: got {value.shape}, expected {expected}")
    dt = dtypes.canonicalize_dtype(np.int64)
    out += [Entry(i.astype(dt), ARRAY, (a,)) for i, a in zip(np.nonzero(value), e.axes)]
  return out


def getitem(x, idx):
  """``x[idx]`` with NumPy's semantics (out-of-bounds integers clamp)."""
  if type(getattr(x, "aval", None)).__name__ == "AbstractRef":   # a staged ref: a read
    from purejax._src import refs
    return refs.get(x, idx)
  return rewriting_take(x, idx)


def rewriting_take(x, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None, normalize_indices=True):
  """``x[idx]`` by the cheapest of static slice, dynamic slice and gather."""
  x = util.asarray(x)
  entries = parse(idx, util.shape(x))
  parsed = _mode(mode)
  for attempt in (_try_static, _try_dynamic):
    out = attempt(x, entries, parsed, normalize_indices)
    if out is not None:
      return out
  entries = expand_bool_indices(entries, util.shape(x))
  return _gather(x, entries, indices_are_sorted, unique_indices, mode, fill_value,
                 normalize_indices)


def _gather(x, entries, indices_are_sorted, unique_indices, mode, fill_value, normalize):
  g = to_gather(util.shape(x), entries, normalize)
  if fill_value is not None:
    fill_value = util.concrete_or_error(fill_value, "fill_value argument to indexed get()")
    if np.ndim(fill_value) != 0:
      raise ValueError("fill_value argument to indexed get() must be a scalar")
    if isinstance(fill_value, (np.ndarray, np.generic)):
      fill_value = fill_value.item()
  y = x
  if g.scalar_bool_dims:
    y = lax.expand_dims(y, g.scalar_bool_dims)
  if 0 in g.slice_shape:
    return lax.full_like(y, 0, shape=g.slice_shape)
  if 0 not in util.shape(g.indices):
    y = gather(y, g.indices, g.dnums, g.slice_sizes,
               unique_indices=unique_indices or g.unique_indices,
               indices_are_sorted=indices_are_sorted or g.indices_are_sorted,
               mode=mode, fill_value=fill_value)
  if g.reversed_y_dims:
    y = lax.rev(y, tuple(g.reversed_y_dims))
  return lax.expand_dims(y, tuple(g.newaxis_dims))


# ---------------------------------------------------------------------------
# The gather geometry of an index (shared with .at[] updates)

class GatherIndexer(NamedTuple):
  slice_shape: tuple        # the shape x[idx] has
  slice_sizes: tuple        # gather's slice_sizes
  indices: object           # gather's start indices
  dnums: GatherDimensionNumbers
  unique_indices: bool      # no advanced indices: no repeats, sorted
  indices_are_sorted: bool
  reversed_y_dims: tuple    # result axes of negative-step slices
  newaxis_dims: tuple       # result axes made by None
  scalar_bool_dims: tuple   # operand axes inserted for scalar booleans
  slice_spec: tuple = ()    # x[idx]'s spec entries, from the operand's ``spec``


def _normalized(e, size):
  """An integer entry with negative values counted from the end."""
  if e.kind == INTEGER:
    return e.index if isinstance(e.index, np.unsignedinteger) or e.index >= 0 \
        else e.index + size
  i = e.index
  aval = core.get_aval(i)
  if dtypes.issubdtype(aval.dtype, np.unsignedinteger):
    return i
  if size > np.iinfo(aval.dtype).max:   # JAX makes the size a constant of the index type
    raise OverflowError(f"Python integer {size} out of bounds for {np.dtype(aval.dtype).name}")
  negative = i < 0 if isinstance(i, np.ndarray) else lax.lt(i, np.array(0, aval.dtype))
  # The size constant takes the index's weak type (so the sum keeps it).
  size = lax.convert_element_type(size, aval.dtype, aval.weak_type)
  return lax.select(negative, lax.add(i, size), i)


def _sequence_to_array(seq):
  from purejax._src.numpy import creation
  return creation.asarray(seq)


def _scalar_bools_as_axes(entries, shape):
  """Scalar booleans as index arrays (arange(0 or 1)) into new size-1 axes."""
  out, new_shape, dims, axis = [], list(shape), [], 0
  for e in entries:
    if e.kind == BOOLEAN:
      dims.append(axis)
      new_shape.insert(axis, 1)
      out.append(Entry(np.arange(int(e.index), dtype=np.int32), ARRAY, (axis,)))
      axis += 1
    else:
      out.append(Entry(e.index, e.kind, tuple(range(axis, axis + len(e.axes)))))
      axis += len(e.axes)
  return out, tuple(new_shape), tuple(dims)


def to_gather(shape, entries, normalize=True, spec=None):
  """The gather computing x[idx] for ``entries`` without masks (see
  expand_bool_indices); follows JAX's construction step for step.
  ``spec``: the operand's spec entries (explicit sharding), followed into
  ``slice_spec``: sliced axes keep theirs, new and indexed axes take the
  index arrays'."""
  spec = tuple(spec) if spec is not None else (None,) * len(shape)
  slice_spec = []
  entries = [Entry(static_slice(e.index, n), SLICE, e.axes) if e.kind == SLICE else e
             for n, e in enumerate(entries)]
  entries = [Entry(_sequence_to_array(e.index), ARRAY, e.axes)
             if isinstance(e.index, (list, tuple)) else e for e in entries]
  advanced_at = [n for n, e in enumerate(entries) if e.kind in (ARRAY, INTEGER)]
  contiguous = all(b - a == 1 for a, b in zip(advanced_at, advanced_at[1:]))
  entries = expand_ellipsis(entries, len(shape))
  entries, shape, scalar_bool_dims = _scalar_bools_as_axes(entries, shape)
  if normalize:
    entries = [Entry(_normalized(e, shape[e.axes[0]]), e.kind, e.axes)
               if e.kind in (INTEGER, ARRAY) else e for e in entries]
  advanced = []   # (index array, entry position, operand axis)
  if any(e.kind == ARRAY and _ndim(e.index) > 0 for e in entries):
    advanced = [(util.asarray(e.index), n, e.axes[0]) for n, e in enumerate(entries)
                if e.kind in (ARRAY, INTEGER)]
  advanced_positions = [n for _, n, _ in advanced]
  dt = index_dtype(shape)
  offset_dims, collapsed, index_map = [], [], []
  pieces, indices_shape = [], []     # (array, first axis in indices_shape)
  slice_shape, newaxis_dims, reversed_dims, slice_sizes = [], [], [], []
  y_axis = collapsed_y_axis = 0
  for n, e in enumerate(entries):
    if advanced and n == (advanced_positions[0] if contiguous else 0):
      arrays = util.broadcast_arrays(*[a for a, _, _ in advanced])
      bshape = util.shape(arrays[0])
      pieces += [(lax.convert_element_type(a, dt), len(indices_shape)) for a in arrays]
      indices_shape += bshape
      index_map += [axis for _, _, axis in advanced]
      collapsed += [axis for _, _, axis in advanced]
      slice_shape += bshape
      slice_spec += _broadcast_spec(arrays)
      y_axis += len(bshape)
      collapsed_y_axis += len(bshape)
    if n in advanced_positions:
      slice_sizes.append(1)
      continue
    if e.kind in (INTEGER, ARRAY):
      axis, = e.axes
      if shape[axis] == 0:
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")
      pieces.append((lax.convert_element_type(e.index, dt), len(indices_shape)))
      collapsed.append(axis)
      slice_sizes.append(1)
      index_map.append(axis)
    elif e.kind == NONE:
      slice_shape.append(1)
      slice_spec.append(None)
      newaxis_dims.append(y_axis)
      y_axis += 1
    else:
      axis, = e.axes
      start, stop, step = e.index.indices(shape[axis])
      size = len(range(start, stop, step))
      slice_shape.append(size)
      slice_spec.append(spec[axis] if axis < len(spec) else None)
      if step == 1:
        if size != shape[axis]:
          pieces.append((lax.convert_element_type(start, dt), len(indices_shape)))
          index_map.append(axis)
        slice_sizes.append(size)
        offset_dims.append(collapsed_y_axis)
      else:
        from purejax._src.numpy import ufuncs
        line = ufuncs.add(np.array(start, dt),
                          ufuncs.multiply(np.array(step, dt), lax.iota(dt, size)))
        if step < 0:
          reversed_dims.append(collapsed_y_axis)
          line = lax.rev(line, (0,))
        slice_sizes.append(1)
        pieces.append((line, len(indices_shape)))
        index_map.append(axis)
        indices_shape.append(size)
        collapsed.append(axis)
      collapsed_y_axis += 1
      y_axis += 1
  dnums = GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                 collapsed_slice_dims=tuple(sorted(collapsed)),
                                 start_index_map=tuple(index_map))
  return GatherIndexer(tuple(slice_shape), tuple(slice_sizes), _stack_indices(pieces,
                       indices_shape, dt), dnums, not advanced, not advanced,
                       tuple(reversed_dims), tuple(newaxis_dims), scalar_bool_dims,
                       tuple(slice_spec))


def _broadcast_spec(arrays):
  """Per axis of the broadcast index arrays, the split one of them has."""
  from purejax._src.sharding_types import spec_of
  specs = [spec_of(util.aval_of(a)) for a in arrays]
  return [next((e for e in entries if e is not None), None) for entries in zip(*specs)]


def _stack_indices(pieces, indices_shape, dt):
  """The index arrays broadcast to ``indices_shape`` and stacked on a new last axis."""
  if not pieces:
    return np.zeros((0,), dt)
  if len(pieces) == 1:
    g, _ = pieces[0]
    return lax.expand_dims(g, (_ndim(g),))
  full = tuple(indices_shape) + (1,)
  return lax.concatenate(
      [lax.broadcast_in_dim(g, full, tuple(range(at, at + _ndim(g)))) for g, at in pieces],
      len(indices_shape))
