"""Array manipulation: tile, repeat, roll, rot90, resize, append, insert,
delete, trim_zeros, and pad with all of NumPy's modes.

Integer indices that are known when tracing are turned into slices,
broadcasts and concatenations (``take_static``), so nothing here needs a
gather.  Traced shifts use dynamic slices; traced repeats and insert/delete
indices use one-hot selections built from comparisons (quadratic in the
axis length, like a dense gather).
"""
import functools
import math
import operator

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import creation
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def _is_traced(x):
  return isinstance(x, core.Tracer) and x.to_concrete_value() is None


def _index_tuple(x):
  """An int or a sequence of ints as a tuple of ints (TypeError otherwise)."""
  if isinstance(x, core.Tracer):
    raise TypeError("traced value")
  if np.ndim(x) == 0:
    return (operator.index(util.concrete_or_error(x, "")),)
  return tuple(operator.index(i) for i in np.asarray(util.concrete_or_error(x, "")))


# ---------------------------------------------------------------------------
# Static gathers

def _runs(indices):
  """(start, stop, count) pieces covering ``indices``: a range read once
  (count 1) or a single index read ``count`` times."""
  pieces = []
  for i in indices:
    i = int(i)
    if pieces:
      start, stop, count = pieces[-1]
      if count == 1 and i == stop and stop - start >= 1:
        pieces[-1] = (start, stop + 1, 1)
        continue
      if stop - start == 1 and i == start:
        pieces[-1] = (start, stop, count + 1)
        continue
    pieces.append((i, i + 1, 1))
  return pieces


def take_static(x, indices, axis):
  """``x`` indexed along ``axis`` by concrete non-negative in-bounds indices,
  from slices, broadcasts and one concatenation."""
  shape = util.shape(x)
  parts = []
  for start, stop, count in _runs(np.asarray(indices).ravel()):
    part = lax.slice_in_dim(x, start, stop, axis=axis)
    if count > 1:
      out_shape = shape[:axis] + (count,) + shape[axis + 1:]
      part = lax.broadcast_in_dim(part, out_shape, tuple(range(len(shape))))
    parts.append(part)
  if not parts:
    return lax.slice_in_dim(x, 0, 0, axis=axis)
  return parts[0] if len(parts) == 1 else lax.concatenate(parts, axis)


def _take_onehot(x, index, axis):
  """``x`` indexed along ``axis`` by a traced 1-D integer array, as a
  masked sum over a one-hot comparison (used only where no static indices
  exist; costs len(index) * x.size)."""
  x = shape_ops.moveaxis(x, axis, 0)
  shape = util.shape(x)
  n, k = shape[0], util.shape(index)[0]
  full = (k, n) + shape[1:]
  hot = lax.eq(lax.broadcast_in_dim(index, full, (0,)),
               lax.broadcasted_iota(util.aval_of(index).dtype, full, 1))
  picked = lax.select(hot, lax.broadcast_in_dim(x, full, tuple(range(1, len(full)))),
                      creation.zeros_like(hot, dtype=util.aval_of(x).dtype))
  aval = util.aval_of(x)
  out = lax.reduce_or(picked, (1,)) if aval.dtype == np.bool_ else lax.reduce_sum(picked, (1,))
  out = lax.convert_element_type(out, aval.dtype, aval.weak_type)   # keep the weak type
  return shape_ops.moveaxis(out, 0, axis)


def _count_where(cond, axis):
  return lax.reduce_sum(lax.convert_element_type(cond, np.int32, False), (axis,))


def _outer_compare(op, x, y):
  """op(x[i], y[j]) as an (len(x), len(y)) array."""
  shape = util.shape(x) + util.shape(y)
  return op(lax.broadcast_in_dim(x, shape, (0,)), lax.broadcast_in_dim(y, shape, (1,)))


# ---------------------------------------------------------------------------
# tile, repeat

def tile(A, reps):
  """``A`` repeated ``reps`` times along each axis."""
  check_arraylike("tile", A)
  A = util.asarray(A)
  try:
    reps = tuple(reps)
  except TypeError:
    reps = (reps,)
  reps = tuple(operator.index(util.concrete_or_error(r, "reps argument of jnp.tile()"))
               for r in reps)
  reps = (1,) * (util.ndim(A) - len(reps)) + reps
  A = util.expand_to_rank(A, len(reps))
  return _tile(A, reps)


@functools.partial(jit, static_argnames=("reps",))
def _tile(A, reps):
  shape = util.shape(A)
  if all(r == 1 for r in reps):
    return A
  # (r0, d0, r1, d1, ...) then merge each pair.
  wide = tuple(x for pair in zip(reps, shape) for x in pair)
  out = lax.broadcast_in_dim(A, wide, tuple(range(1, 2 * len(shape), 2)))
  return lax.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


_REPEAT_STATIC = ("When jit-compiling jnp.repeat, the total number of repeats must be "
                  "static. To fix this, either specify a static value for `repeats`, or "
                  "pass a static value to `total_repeat_length`.")


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
  """Each element of ``a`` repeated ``repeats`` times along ``axis``.
  Traced ``repeats`` need a static ``total_repeat_length``; as in JAX the
  output is then cut, or padded with the last element, to that length."""
  if isinstance(repeats, (int, np.integer)):
    check_arraylike("repeat", a)
  else:
    check_arraylike("repeat", a, repeats)
  a = util.asarray(a)
  if axis is None:
    a = shape_ops.ravel(a)
    axis = 0
  axis = operator.index(util.concrete_or_error(axis, "'axis' argument of jnp.repeat()"))
  if total_repeat_length is None:
    repeats = util.concrete_or_error(repeats, _REPEAT_STATIC)
    if np.ndim(repeats) == 0 and util.ndim(a) != 0:
      return _repeat_scalar(a, operator.index(repeats), axis)
    counts = np.ravel(repeats)
    if util.ndim(a) != 0:
      counts = np.broadcast_to(counts, (util.shape(a)[axis],))
    total = int(np.sum(counts))
  else:
    total = operator.index(total_repeat_length)
    counts = None if _is_traced(repeats) else np.ravel(util.concrete_or_error(repeats, ""))
    if counts is not None and util.ndim(a) != 0:
      counts = np.broadcast_to(counts, (util.shape(a)[axis],))
  if util.ndim(a) == 0:
    if np.shape(repeats if counts is None else counts) in ((1,), ()):
      return creation.full((total,), a)
    raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                     "scalar values of the parameter `repeats`.")
  axis = util.canonicalize_axis(axis, util.ndim(a))
  shape = util.shape(a)
  if total == 0:
    return lax.slice_in_dim(a, 0, 0, axis=axis)
  if shape[axis] == 0:
    return a
  if counts is not None:
    counts = counts.astype(np.int64)
    if np.any(counts < 0):
      raise ValueError("repeats may not contain negative values.")
    return take_static(a, _repeat_indices(counts, total), axis)
  return _repeat_traced(a, repeats, axis, total)


def _repeat_scalar(a, count, axis):
  axis = util.canonicalize_axis(axis, util.ndim(a))
  shape = util.shape(a)
  wide = shape[:axis + 1] + (count,) + shape[axis + 1:]
  out = lax.broadcast_in_dim(a, wide, tuple(d for d in range(len(wide)) if d != axis + 1))
  return lax.reshape(out, shape[:axis] + (shape[axis] * count,) + shape[axis + 1:])


def _repeat_indices(counts, total):
  """The source index of each output element, JAX's way: cut to ``total``,
  or continued with the last index."""
  idx = np.repeat(np.arange(len(counts)), counts)[:total]
  return np.concatenate([idx, np.full(total - len(idx), len(counts) - 1, idx.dtype)])


def _repeat_traced(a, repeats, axis, total):
  n = util.shape(a)[axis]
  counts = util.broadcast_to(shape_ops.ravel(repeats), (n,))
  counts = lax.convert_element_type(counts, np.dtype(np.int32), False)
  # Output j reads element #{k >= 1 : counts[0] + ... + counts[k-1] <= j}.
  lower = lax.convert_element_type(creation.tri(n - 1, n, 0, dtype=bool), np.int32, False)
  starts = lax.dot_general(lower, counts, (((1,), (0,)), ((), ())))
  j = lax.broadcasted_iota(np.dtype(np.int32), (total, n - 1), 0)
  le = lax.le(lax.broadcast_in_dim(starts, (total, n - 1), (1,)), j)
  index = lax.reduce_sum(lax.convert_element_type(le, np.int32, False), (1,))
  return _take_onehot(a, index, axis)


# ---------------------------------------------------------------------------
# roll, rot90, resize, append

def roll(a, shift, axis=None):
  """``a`` shifted cyclically by ``shift`` along ``axis`` (the flattened
  array when None); ``shift`` may be traced."""
  check_arraylike("roll", a)
  a = util.asarray(a)
  if axis is None:
    return lax.reshape(roll(shape_ops.ravel(a), shift, 0), util.shape(a))
  axes = tuple(util.canonicalize_axis(ax, util.ndim(a)) for ax in _index_tuple(axis))
  try:
    shifts = _index_tuple(shift)
  except TypeError:
    return _roll_dynamic(a, util.asarray(shift), axes)
  return _roll_static(a, shifts, axes)


@functools.partial(jit, static_argnums=(1, 2))
def _roll_static(a, shifts, axes):
  for ax, s in zip(*np.broadcast_arrays(axes, shifts)):
    size = util.shape(a)[ax]
    if size == 0:
      continue
    i = int(-s) % size
    a = lax.concatenate([lax.slice_in_dim(a, i, size, axis=int(ax)),
                         lax.slice_in_dim(a, 0, i, axis=int(ax))], int(ax))
  return a


def _roll_dynamic(a, shift, axes):
  b_shape = util.broadcast_shapes(util.shape(shift), np.shape(axes))
  if len(b_shape) != 1:
    raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
  shifts = util.broadcast_to(shift, b_shape)
  for k, ax in enumerate(np.broadcast_to(axes, b_shape)):
    ax = int(ax)
    size = util.shape(a)[ax]
    s = lax.convert_element_type(lax.index_in_dim(shifts, k, 0, False), np.int32, False)
    s = ufuncs.remainder(s, np.int32(max(size, 1)))
    doubled = lax.concatenate([a, a], ax)
    a = lax.dynamic_slice_in_dim(doubled, lax.sub(np.int32(size), s), size, axis=ax)
  return a


def rot90(m, k=1, axes=(0, 1)):
  """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
  check_arraylike("rot90", m)
  nd = util.ndim(m)
  if nd < 2:
    raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                     f"first argument of shape {util.shape(m)}, which has ndim {nd}")
  ax1, ax2 = axes
  ax1, ax2 = util.canonicalize_axis(ax1, nd), util.canonicalize_axis(ax2, nd)
  if ax1 == ax2:
    raise ValueError("Axes must be different")
  k = operator.index(util.concrete_or_error(k, "'k' argument of jnp.rot90()")) % 4
  m = util.asarray(m)
  if k == 0:
    return m
  if k == 2:
    return lax.rev(m, (ax1, ax2))
  perm = list(range(nd))
  perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
  if k == 1:
    return lax.transpose(lax.rev(m, (ax2,)), tuple(perm))
  return lax.rev(lax.transpose(m, tuple(perm)), (ax2,))


def resize(a, new_shape):
  """``a`` flattened, repeated as needed, and cut to ``new_shape``."""
  check_arraylike("resize", a)
  new_shape = util.canonicalize_shape(new_shape)
  if any(d < 0 for d in new_shape):
    raise ValueError("all elements of `new_shape` must be non-negative")
  flat = shape_ops.ravel(a)
  size = util.shape(flat)[0]
  new_size = math.prod(new_shape)
  if size == 0 or new_size == 0:
    return creation.zeros_like(flat, shape=new_shape)
  flat = tile(flat, -(-new_size // size))
  return lax.reshape(lax.slice_in_dim(flat, 0, new_size), new_shape)


def append(arr, values, axis=None):
  """``values`` joined to the end of ``arr`` (both flattened if ``axis`` is
  None)."""
  if axis is None:
    return shape_ops.concatenate([shape_ops.ravel(arr), shape_ops.ravel(values)], 0)
  return shape_ops.concatenate([arr, values], axis=axis)


# ---------------------------------------------------------------------------
# insert, delete

def _axis_or_flat(a, axis, name):
  a = util.asarray(a)
  if axis is None:
    return shape_ops.ravel(a), 0
  axis = operator.index(util.concrete_or_error(axis, f"axis argument of jnp.{name}()"))
  return a, util.canonicalize_axis(axis, util.ndim(a))


def insert(arr, obj, values, axis=None):
  """``values`` inserted before the indices ``obj`` along ``axis``.  Traced
  indices work (as in JAX), at a cost of (n + len(obj))**2 comparisons."""
  check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
  a, axis = _axis_or_flat(arr, axis, "insert")
  n = util.shape(a)[axis]
  if isinstance(obj, slice):
    obj = np.arange(*obj.indices(n))
  if util.ndim(obj) > 1:
    raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                     f"scalar; got {obj}")
  obj_dtype = util.aval_of(obj).dtype
  if not dtypes.issubdtype(obj_dtype, np.integer):
    if np.size(obj) == 0 and not isinstance(obj, core.ArrayBase):
      obj = np.zeros(np.shape(obj), np.int32)
    else:
      raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
  values = creation.array(values, ndmin=util.ndim(a), dtype=util.aval_of(a).dtype, copy=False)
  if np.size(obj) == 1:
    if util.ndim(obj) == 0:
      values = shape_ops.moveaxis(values, 0, axis)
    obj = (util.broadcast_to(shape_ops.ravel(obj), util.shape(values)[axis:axis + 1])
           if _is_traced(obj) else
           np.full(util.shape(values)[axis], np.ravel(util.concrete_or_error(obj, ""))[0]))
  count = util.broadcast_shapes(util.shape(obj), (util.shape(values)[axis],))[0]
  if _is_traced(obj):
    return _insert_traced(a, util.broadcast_to(obj, (count,)), values, axis)
  indices = np.asarray(util.concrete_or_error(obj, ""))
  indices = np.clip(np.where(indices < 0, indices + n, indices), 0, n)
  indices = np.broadcast_to(indices, (count,))
  target = util.shape(a)[:axis] + (count,) + util.shape(a)[axis + 1:]
  values = util.broadcast_to(values, target)
  # Output position of each value and of each original element.
  order = np.argsort(indices, kind="stable")
  value_pos = np.empty(count, np.int64)
  value_pos[order] = indices[order] + np.arange(count)
  source = np.empty(n + count, np.int64)
  source[value_pos] = n + np.arange(count)
  source[np.setdiff1d(np.arange(n + count), value_pos)] = np.arange(n)
  return take_static(lax.concatenate([a, values], axis), source, axis)


def _insert_traced(a, indices, values, axis):
  """insert with traced indices: output positions come from comparison
  counts (a stable rank of the indices), and both sources are read with
  one-hot selections."""
  n, count = util.shape(a)[axis], util.shape(indices)[0]
  target = util.shape(a)[:axis] + (count,) + util.shape(a)[axis + 1:]
  values = util.broadcast_to(values, target)
  i32 = np.dtype(np.int32)
  idx = lax.convert_element_type(indices, i32, False)
  idx = lax.clamp(np.int32(0), lax.select(lax.lt(idx, np.int32(0)),
                                          lax.add(idx, np.int32(n)), idx), np.int32(n))
  k = lax.iota(i32, count)
  earlier = ufuncs.logical_or(_outer_compare(lax.gt, idx, idx), ufuncs.logical_and(
      _outer_compare(lax.eq, idx, idx), _outer_compare(lax.gt, k, k)))
  value_pos = lax.add(idx, _count_where(earlier, 1))
  p = lax.iota(i32, n + count)
  hit = _outer_compare(lax.eq, p, value_pos)
  is_value = lax.reduce_or(hit, (1,))
  which_value = lax.reduce_sum(lax.select(hit, lax.broadcast_in_dim(k, util.shape(hit), (1,)),
                                          lax.full_like(hit, 0, i32)), (1,))
  source = lax.sub(p, _count_where(_outer_compare(lax.gt, p, value_pos), 1))
  source = lax.clamp(np.int32(0), source, np.int32(max(n - 1, 0)))
  from_a = _take_onehot(a, source, axis)
  from_values = _take_onehot(values, which_value, axis)
  mask = lax.broadcast_in_dim(is_value, util.shape(from_a), (axis,))
  return lax.select(mask, from_values, from_a)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
  """``arr`` without the entries ``obj`` (an int, a slice, an integer array
  or a boolean mask) along ``axis``.  As in JAX, traced indices need
  ``assume_unique_indices=True``."""
  check_arraylike("delete", arr)
  a, axis = _axis_or_flat(arr, axis, "delete")
  n = util.shape(a)[axis]
  if isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_)):
    i = util.canonicalize_axis(obj, n)
    return lax.concatenate([lax.slice_in_dim(a, 0, i, axis=axis),
                            lax.slice_in_dim(a, i + 1, n, axis=axis)], axis)
  if isinstance(obj, slice):
    obj = np.arange(n)[obj]
  check_arraylike("delete", a, obj)
  if hasattr(obj, "__jax_array__"):
    obj = obj.__jax_array__()
  if _is_traced(obj) and assume_unique_indices \
      and dtypes.issubdtype(util.aval_of(obj).dtype, np.integer):
    return _delete_traced(a, shape_ops.ravel(obj), axis)
  obj = np.asarray(util.concrete_or_error(obj, "'obj' array argument of jnp.delete()"))
  if np.issubdtype(obj.dtype, np.integer):
    keep = np.ones(n, dtype=bool)
    keep[obj] = False
  elif obj.dtype == bool:
    if obj.shape != (n,):
      raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                       "one-dimensional with length matching specified axis.")
    keep = ~obj
  else:
    raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj.dtype}; must be integer "
                     "or bool.")
  return take_static(a, np.flatnonzero(keep), axis)


def _delete_traced(a, indices, axis):
  """delete with traced unique indices: output q reads element
  q + #{deleted d : d - #{deleted below d} <= q}."""
  n, m = util.shape(a)[axis], util.shape(indices)[0]
  i32 = np.dtype(np.int32)
  d = lax.convert_element_type(indices, i32, False)
  d = lax.clamp(np.int32(0), lax.select(lax.lt(d, np.int32(0)), lax.add(d, np.int32(n)), d),
                np.int32(n))
  kept_before = lax.sub(d, _count_where(_outer_compare(lax.gt, d, d), 1))
  q = lax.iota(i32, max(n - m, 0))
  source = lax.add(q, _count_where(_outer_compare(lax.ge, q, kept_before), 1))
  return _take_onehot(a, lax.clamp(np.int32(0), source, np.int32(max(n - 1, 0))), axis)


def trim_zeros(filt, trim="fb", axis=None):
  """``filt`` without its leading ('f') and/or trailing ('b') zeros along
  ``axis`` (all axes if None).  Needs a concrete array: the result's shape
  depends on the values."""
  check_arraylike("trim_zeros", filt)
  filt = util.asarray(filt)
  util.concrete_or_error(filt, "Error arose in the `filt` argument of trim_zeros()")
  value = np.asarray(util.concrete_or_error(filt, ""))
  nd = value.ndim
  axes = set(util.canonicalize_axes(axis, nd))
  trim = trim.lower()
  if not axes or ("f" not in trim and "b" not in trim):
    return filt
  out = filt
  for ax in sorted(axes):
    mask = value.any(axis=tuple(i for i in range(nd) if i != ax))
    if not mask.any():
      start, stop = 0, 0
    else:
      start = int(mask.argmax()) if "f" in trim else 0
      stop = value.shape[ax] - int(mask[::-1].argmax()) if "b" in trim else value.shape[ax]
    out = lax.slice_in_dim(out, start, stop, axis=ax)
  return out


# ---------------------------------------------------------------------------
# pad

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
    x = lax.concatenate([_repeat_scalar(lax.slice_in_dim(x, 0, 1, axis=i), lo, i), x,
                         _repeat_scalar(lax.slice_in_dim(x, size - 1, size, axis=i), hi, i)],
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
  import purejax.numpy as jnp
  if not hasattr(jnp, "median"):
    raise NotImplementedError("jnp.pad(mode='median') needs jnp.median, which purejax "
                              "does not have yet.")
  return jnp.median(a, axis=axis, keepdims=keepdims)


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
    x = lax.concatenate([_repeat_scalar(stat_lo, lo, i), x, _repeat_scalar(stat_hi, hi, i)], i)
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
