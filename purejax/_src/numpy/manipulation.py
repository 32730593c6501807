"""Array manipulation: tile, repeat, roll, rot90, resize, append, insert,
delete and trim_zeros (jnp.pad lives in padding.py).

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
  """``A`` repeated ``reps`` times along each axis (one ``tile`` equation)."""
  check_arraylike("tile", A)
  A = util.asarray(A)
  try:
    reps = tuple(reps)
  except TypeError:
    reps = (reps,)
  reps = tuple(operator.index(util.concrete_or_error(r, "reps argument of jnp.tile()"))
               for r in reps)
  reps = (1,) * (util.ndim(A) - len(reps)) + reps
  if len(reps) > util.ndim(A):
    A = lax.expand_dims(A, tuple(range(len(reps) - util.ndim(A))))
  return lax.tile(A, reps)


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
      return repeat_scalar(a, operator.index(repeats), axis)
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


def repeat_scalar(a, count, axis):
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
