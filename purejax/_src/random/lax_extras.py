"""Primitives the samplers need that purejax.lax does not have yet: a stable
``sort_key_val`` of an integer payload (for permutations and top-k) and
``take``.  ``bitcast_convert_type`` moved to purejax.lax (re-exported here)."""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax.convert import bitcast_convert_type  # noqa: F401  (re-exported)

# ---------------------------------------------------------------------------
# sort_key_val: sorts ``keys`` along ``dimension`` (stably) and applies the
# same permutation to ``values`` (forward-mode differentiable in ``values``;
# reverse mode goes through ``take`` instead).

sort_key_val_p = core.Primitive("sort_key_val", multiple_results=True)


@sort_key_val_p.def_impl
def _sort_impl(keys, values, *, dimension):
  keys = np.asarray(keys)
  order = np.argsort(keys, axis=dimension, kind="stable")
  return [np.take_along_axis(keys, order, dimension),
          np.take_along_axis(np.asarray(values), order, dimension)]


@sort_key_val_p.def_abstract_eval
def _sort_abstract_eval(keys, values, *, dimension):
  if keys.shape != values.shape:
    raise TypeError(f"sort_key_val needs equal shapes, got {keys.shape} and {values.shape}")
  return [core.ShapedArray(keys.shape, keys.dtype), core.ShapedArray(values.shape, values.dtype)]


@sort_key_val_p.def_batch
def _sort_batch(axis_size, vals, dims, *, dimension):
  keys, values = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
  return sort_key_val_p.bind(keys, values, dimension=dimension + 1), [0, 0]


@sort_key_val_p.def_jvp
def _sort_jvp(primals, tangents, *, dimension):
  keys, _ = primals
  outs = sort_key_val_p.bind(*primals, dimension=dimension)
  g = tangents[1]
  if type(g) is not ad.Zero:
    g = sort_key_val_p.bind(keys, g, dimension=dimension)[1]
  else:
    g = ad.Zero.from_primal_value(outs[1])
  return outs, [ad.Zero.from_primal_value(outs[0]), g]


sort_key_val_p.c_code = None


def sort_key_val(keys, values, dimension=-1):
  ndim = core.get_aval(keys).ndim
  return sort_key_val_p.bind(keys, values, dimension=dimension % max(ndim, 1))


def argsort_stable(keys, dimension=-1):
  """Indices that sort ``keys`` stably along ``dimension`` (int32)."""
  from purejax import lax
  aval = core.get_aval(keys)
  dim = dimension % max(aval.ndim, 1)
  iota = lax.broadcasted_iota(np.int32, aval.shape, dim)
  return sort_key_val(keys, iota, dim)[1]


# ---------------------------------------------------------------------------
# take: ``x`` indexed by an integer array along ``axis`` (indices clamped),
# and its transpose, a scatter-add.  purejax.numpy has no gather yet.

take_p = core.Primitive("take")
take_add_p = core.Primitive("take_add")   # zeros(shape) with x scattered-added


def _take_shape(x_shape, i_shape, axis):
  return x_shape[:axis] + i_shape + x_shape[axis + 1:]


@take_p.def_impl
def _take_impl(x, idx, *, axis):
  x = np.asarray(x)
  return np.take(x, np.clip(np.asarray(idx), 0, x.shape[axis] - 1), axis=axis)


@take_p.def_abstract_eval
def _take_abstract_eval(x, idx, *, axis):
  return core.ShapedArray(_take_shape(x.shape, idx.shape, axis), x.dtype, x.weak_type)


@take_add_p.def_impl
def _take_add_impl(ct, idx, *, axis, size):
  ct = np.asarray(ct)
  idx = np.clip(np.asarray(idx), 0, size - 1)
  shape = ct.shape[:axis] + (size,) + ct.shape[axis + idx.ndim:]
  out = np.zeros(shape, ct.dtype)
  moved_ct = np.moveaxis(ct.reshape(ct.shape[:axis] + (idx.size,) + ct.shape[axis + idx.ndim:]),
                         axis, 0)
  np.add.at(np.moveaxis(out, axis, 0), idx.reshape(-1), moved_ct)
  return out


@take_add_p.def_abstract_eval
def _take_add_abstract_eval(ct, idx, *, axis, size):
  shape = ct.shape[:axis] + (size,) + ct.shape[axis + len(idx.shape):]
  return core.ShapedArray(shape, ct.dtype, ct.weak_type)


def _take_jvp(primals, tangents, *, axis):
  x, idx = primals
  g, _ = tangents
  out = take_p.bind(x, idx, axis=axis)
  if type(g) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, take_p.bind(g, idx, axis=axis)


def _take_transpose(ct, x, idx, *, axis):
  size = x.aval.shape[axis]
  if type(ct) is ad.Zero:
    return [ad.Zero(x.aval), None]
  return [take_add_p.bind(ct, idx, axis=axis, size=size), None]


def _take_add_jvp(primals, tangents, *, axis, size):
  ct, idx = primals
  g, _ = tangents
  out = take_add_p.bind(ct, idx, axis=axis, size=size)
  if type(g) is ad.Zero:
    return out, ad.Zero.from_primal_value(out)
  return out, take_add_p.bind(g, idx, axis=axis, size=size)


def _take_add_transpose(ct, x, idx, *, axis, size):
  return [take_p.bind(ct, idx, axis=axis), None]


def _take_batch(axis_size, vals, dims, *, axis):
  x, idx = vals
  dx, di = dims
  if di is batching.not_mapped:
    x = batching.moveaxis(x, dx, 0)
    return take_p.bind(x, idx, axis=axis + 1), 0
  return _take_batched_indices(axis_size, x, dx, idx, di, axis), 0


def _take_batched_indices(axis_size, x, dx, idx, di, axis):
  """Per-example indices: fold the batch into the taken axis, so that
  example b reads rows b * n + clamp(i) of the merged axis."""
  from purejax import lax
  x = batching.bdim_at_front(x, dx, axis_size)
  idx = batching.moveaxis(idx, di, 0)
  x = batching.moveaxis(x, axis + 1, 1)          # (B, n, rest...)
  n, rest = x.shape[1], x.shape[2:]
  merged = lax.reshape(x, (axis_size * n,) + rest)
  idx = lax.clamp(np.array(0, idx.dtype), idx, np.array(n - 1, idx.dtype))
  offsets = lax.broadcasted_iota(idx.dtype, idx.shape, 0) * np.array(n, idx.dtype)
  out = take_p.bind(merged, idx + offsets, axis=0)  # (B, idx dims..., rest...)
  # The taken axis sat at ``axis`` in each example: move rest[:axis] back.
  nidx = idx.ndim - 1
  perm = ((0,) + tuple(range(1 + nidx, 1 + nidx + axis)) + tuple(range(1, 1 + nidx))
          + tuple(range(1 + nidx + axis, out.ndim)))
  return lax.transpose(out, perm)


take_p.jvp, take_p.transpose, take_p.batch = _take_jvp, _take_transpose, _take_batch
take_add_p.jvp, take_add_p.transpose = _take_add_jvp, _take_add_transpose
take_p.c_code = take_add_p.c_code = None


def take(x, idx, axis=0):
  ndim = core.get_aval(x).ndim
  return take_p.bind(x, idx, axis=axis % ndim)
