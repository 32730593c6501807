"""Gather: windows of an operand at many start indices (XLA's Gather).

``start_indices`` has shape ``batch + (k,)``: each of its ``batch`` rows is
a start vector whose component i indexes operand axis
``start_index_map[i]``.  Each start gives a window of ``slice_sizes``; the
result has the batch axes and the window's kept axes (at ``offset_dims``).
``collapsed_slice_dims`` are size-1 window axes dropped from the result, and
``operand_batching_dims`` pair operand axes with index axes
(``start_indices_batching_dims``): row r takes its window from the operand
slice at r's position along the paired index axis.

Out-of-bounds starts are clamped so the window stays inside (modes CLIP and
PROMISE_IN_BOUNDS, as XLA does), or give windows of ``fill_value``
(FILL_OR_DROP).  The window helpers here are shared with scatter.py.
"""
import enum
from typing import NamedTuple

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import utils
from purejax._src.lax.families import standard_primitive


class GatherDimensionNumbers(NamedTuple):
  """How the axes of a gather's operand, indices and result correspond.

  As in JAX, the index vector is always the last axis of ``start_indices``.
  """
  offset_dims: tuple
  collapsed_slice_dims: tuple
  start_index_map: tuple
  operand_batching_dims: tuple = ()
  start_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
  """What gathers and scatters do with out-of-bounds indices.

  CLIP clamps the start so the window is in bounds; FILL_OR_DROP gives
  ``fill_value`` windows (gather) or drops the update (scatter);
  PROMISE_IN_BOUNDS clamps gathers and drops scatters (XLA's behaviour).
  ONE_HOT exists for JAX compatibility; gather and scatter reject it.
  """
  CLIP = enum.auto()
  FILL_OR_DROP = enum.auto()
  PROMISE_IN_BOUNDS = enum.auto()
  ONE_HOT = enum.auto()

  @staticmethod
  def from_any(s):
    """A mode from a mode, None (FILL_OR_DROP) or one of 'clip', 'fill',
    'drop', 'promise_in_bounds', 'one_hot'."""
    if isinstance(s, GatherScatterMode):
      return s
    if s is None or s in ("fill", "drop"):
      return GatherScatterMode.FILL_OR_DROP
    table = {"clip": GatherScatterMode.CLIP, "one_hot": GatherScatterMode.ONE_HOT,
             "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
    if isinstance(s, str) and s in table:
      return table[s]
    raise ValueError(f'Unknown gather mode "{s}"')


def _int_tuple(xs):
  return tuple(int(x) for x in xs)


def canonical_gather_dnums(dnums):
  """Dimension numbers with plain int tuples (hashable params)."""
  return GatherDimensionNumbers(*[_int_tuple(f) for f in dnums])


# -- dimension-number checks (JAX's messages), shared with scatter -------------

def check_sorted(dims, op, name):
  if any(b < a for a, b in zip(dims, dims[1:])):
    raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def check_in_range(dims, rank, op, name):
  for d in dims:
    if not 0 <= d < rank:
      raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                      f"got: {d}.")


def check_sorted_in_range(dims, rank, op, name):
  if not dims:
    return
  bad = dims[0] if dims[0] < 0 else dims[-1] if dims[-1] >= rank else None
  if bad:
    raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                    f"got: {bad}.")


def check_unique(dims, op, name):
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def check_disjoint(dims1, dims2, op, name1, name2):
  if set(dims1) & set(dims2):
    raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; got: {dims1} "
                    f"and {dims2}.")


def index_vector_dim(op, indices):
  """The last axis of the indices holds the index vectors (gather and
  scatter share this rule and message)."""
  if indices.ndim < 1:
    raise TypeError(f"{op.capitalize()} index leaf dimension must be within "
                    f"[0, rank(indices) + 1). rank(indices) is {indices.ndim} and {op} "
                    f"index leaf dimension is {indices.ndim - 1}.")
  return indices.ndim - 1


def check_batching_dims(op, index_name, operand, indices, obatch, ibatch, vector_dim):
  """The operand's and the indices' batching dimensions pair up (gather and
  scatter share these rules and messages)."""
  check_unique(ibatch, op, index_name)
  check_in_range(ibatch, indices.ndim, op, index_name)
  title = op.capitalize()
  if vector_dim in ibatch:
    raise TypeError(f"{title} op cannot have the index vector dimension as a batching "
                    f"dimension; got {ibatch}.")
  if len(obatch) != len(ibatch):
    # (JAX's gather message lacks the space before the second tuple.)
    sep = "and" if op == "gather" else "and "
    raise TypeError(f"{title} op requires equal numbers of operand_batching_dims and "
                    f"{index_name}, got {obatch} {sep}{ibatch}.")
  oshape = tuple(operand.shape[d] for d in obatch)
  ishape = tuple(indices.shape[d] for d in ibatch)
  if oshape != ishape:
    raise TypeError(f"{title} op requires operand batching dimensions and indices batching "
                    f"dimensions to have the same shape, got {oshape} and {ishape}.")


def check_index_dtype(indices):
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError("indices must have an integer type")


def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          unique_indices, indices_are_sorted, mode, fill_value):
  # As in JAX, the shape rule runs before the dtype rule.
  dn = dimension_numbers
  offset_dims, collapsed = dn.offset_dims, dn.collapsed_slice_dims
  obatch, ibatch, index_map = (dn.operand_batching_dims, dn.start_indices_batching_dims,
                               dn.start_index_map)
  rank = operand.ndim
  vector_dim = index_vector_dim("gather", indices)
  check_sorted(offset_dims, "gather", "offset_dims")
  check_unique(offset_dims, "gather", "offset_dims")
  out_rank = len(offset_dims) + indices.ndim - 1
  for i, d in enumerate(offset_dims):
    if not 0 <= d < out_rank:
      raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                      f"should have been in [0, {out_rank})")
  if len(index_map) != indices.shape[vector_dim]:
    raise TypeError(f"Gather op has {len(index_map)} elements in start_index_map and the "
                    f"bound of dimension index_vector_dim={vector_dim} of indices is "
                    f"{indices.shape[vector_dim]}. These two numbers must be equal.")
  for i, d in enumerate(index_map):
    if not 0 <= d < rank:
      raise TypeError(f"Invalid start_index_map; domain is [0, {rank}), got: {i}->{d}.")
  check_unique(index_map, "gather", "start_index_map")
  check_sorted(collapsed, "gather", "collapsed_slice_dims")
  check_sorted_in_range(collapsed, rank, "gather", "collapsed_slice_dims")
  check_unique(collapsed, "gather", "collapsed_slice_dims")
  check_unique(obatch, "gather", "operand_batching_dims")
  check_sorted(obatch, "gather", "operand_batching_dims")
  check_sorted_in_range(obatch, rank, "gather", "operand_batching_dims")
  check_disjoint(collapsed, obatch, "gather", "collapsed_slice_dims", "operand_batching_dims")
  check_disjoint(index_map, obatch, "gather", "start_index_map", "operand_batching_dims")
  check_batching_dims("gather", "start_indices_batching_dims", operand, indices, obatch,
                      ibatch, vector_dim)
  if len(slice_sizes) != rank:
    raise TypeError("Gather op must have one slice size for every input dimension; got: "
                    f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={rank}")
  if len(slice_sizes) != len(offset_dims) + len(collapsed) + len(obatch):
    raise TypeError("All components of the offset index in a gather op must either be a "
                    f"offset dimension or explicitly collapsed/batching; got "
                    f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes={offset_dims}, "
                    f"collapsed_slice_dims={collapsed}, operand_batching_dims={obatch}.")
  if 0 not in indices.shape:
    for i, (s, n) in enumerate(zip(slice_sizes, operand.shape)):
      if not 0 <= s <= n:
        raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                        f"within [0, {n} + 1), got {s}.")
  for i, d in enumerate(collapsed):
    if slice_sizes[d] != 1:
      raise TypeError("Gather op can only collapse slice dims with bound 1, but bound is "
                      f"{slice_sizes[d]} for index {d} at position {i}.")
  for i, d in enumerate(obatch):
    if slice_sizes[d] > 1:
      raise TypeError("Gather op can only have operand batching dims with bound 0/1, but "
                      f"bound is {slice_sizes[d]} for index {d} at position {i}.")
  if mode == GatherScatterMode.ONE_HOT:
    raise ValueError("gather does not support mode GatherScatterMode.ONE_HOT")
  kept = iter(s for d, s in enumerate(slice_sizes) if d not in collapsed and d not in obatch)
  batch = iter(indices.shape[:-1])
  shape = tuple(next(kept) if d in offset_dims else next(batch) for d in range(out_rank))
  check_index_dtype(indices)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


# -- windows in NumPy (shared with scatter's implementation) ---------------------

def full_starts(indices, rank, index_map, operand_batching_dims, indices_batching_dims):
  """Each index row's start in every operand axis: an (n, rank) int64 array
  (batching axes start at the row's position along the paired index axis)."""
  xp = array_namespace.of(indices)
  batch_shape = indices.shape[:-1]
  n = int(np.prod(batch_shape, dtype=np.int64))
  starts = xp.zeros((n, rank), np.int64)
  if index_map:
    rows = indices.reshape(n, len(index_map))
    if rows.dtype == np.uint64:   # past int64: out of bounds all the same (not negative)
      rows = xp.minimum(rows, np.uint64(np.iinfo(np.int64).max))
    starts[:, list(index_map)] = rows.astype(np.int64)
  for od, idim in zip(operand_batching_dims, indices_batching_dims):
    line = xp.arange(batch_shape[idim]).reshape(
        [-1 if a == idim else 1 for a in range(len(batch_shape))])
    starts[:, od] = xp.broadcast_to(line, batch_shape).reshape(n)
  return starts


def window_positions(shape, starts, window):
  """Flat positions (into ``shape``, C order) of each row's window: an
  int64 array of shape (n,) + window.  (Made on the starts' device: no
  array is copied there.)"""
  xp = array_namespace.of(starts)
  strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
  positions = xp.zeros((starts.shape[0],) + (1,) * len(window), np.int64)
  for d, (stride, w) in enumerate(zip(strides, window)):
    axis = [1] * (len(window) + 1)
    axis[d + 1] = w
    offsets = xp.arange(w, dtype=np.int64).reshape(axis) * stride
    positions = positions + (starts[:, d].reshape((-1,) + (1,) * len(window)) * stride
                             + offsets)
  return positions


def in_bounds(starts, shape, window, index_map):
  """Rows whose windows lie inside the operand (in the indexed axes)."""
  ok = array_namespace.of(starts).ones(starts.shape[0], bool)
  for d in index_map:
    ok &= (starts[:, d] >= 0) & (starts[:, d] <= shape[d] - window[d])
  return ok


def clamp_starts(starts, shape, window):
  """Each start clamped into [0, size - window] (per axis: Python bounds,
  nothing copied to the starts' device)."""
  if not starts.size:
    return starts
  xp = array_namespace.of(starts)
  return xp.stack([np.clip(starts[:, d], 0, max(n - w, 0))
                   for d, (n, w) in enumerate(zip(shape, window))], axis=1)


def result_order(out_rank, offset_dims):
  """Permutation taking (batch axes..., window axes...) to the result's order."""
  n_batch = out_rank - len(offset_dims)
  batch, offset = iter(range(n_batch)), iter(range(n_batch, out_rank))
  return tuple(next(offset) if d in offset_dims else next(batch) for d in range(out_rank))


def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
  dn = dimension_numbers
  shape = operand.shape
  starts = full_starts(indices, len(shape), dn.start_index_map, dn.operand_batching_dims,
                       dn.start_indices_batching_dims)
  ok = in_bounds(starts, shape, slice_sizes, dn.start_index_map)
  starts = clamp_starts(starts, shape, slice_sizes)
  positions = window_positions(shape, starts, slice_sizes)
  flat = operand.reshape(-1)
  xp = array_namespace.of(operand)
  out = flat[positions] if flat.size else xp.zeros(positions.shape, operand.dtype)
  # (On a GPU, without asking whether any is out: that would wait for it.)
  if mode == GatherScatterMode.FILL_OR_DROP and (xp is not np or not ok.all()):
    with np.errstate(invalid="ignore", over="ignore"):
      fill = np.array(fill_value if fill_value is not None else 0).astype(operand.dtype)
    out[~ok] = fill[()]
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  window = tuple(s for d, s in enumerate(slice_sizes) if d not in dropped)
  out = out.reshape(indices.shape[:-1] + window)
  order = result_order(out.ndim, dn.offset_dims)
  return np.transpose(out, order) if order != tuple(range(out.ndim)) else out


# impl_on_gpu_arrays: runs on CuPy's arrays as on NumPy's (see dot_general_p)
gather_p = standard_primitive("gather", _gather_abstract_eval, _gather_impl,
                              impl_on_gpu_arrays=True)
gather_p.c_code = None


def scatter_dnums_of(dn):
  """The scatter dimension numbers that undo a gather's (for transposes)."""
  from purejax._src.lax.scatter import ScatterDimensionNumbers
  return ScatterDimensionNumbers(
      update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
      scatter_dims_to_operand_dims=dn.start_index_map,
      operand_batching_dims=dn.operand_batching_dims,
      scatter_indices_batching_dims=dn.start_indices_batching_dims)


@gather_p.def_jvp
def _gather_jvp(primals, tangents, *, dimension_numbers, slice_sizes, unique_indices,
                indices_are_sorted, mode, fill_value):
  # Linear in the operand; out-of-bounds windows have zero tangents.
  operand, indices = primals
  params = dict(dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
                unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                mode=mode)
  out = gather_p.bind(operand, indices, fill_value=fill_value, **params)
  g = tangents[0]
  if type(g) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  zero_fill = 0 if mode == GatherScatterMode.FILL_OR_DROP else None
  return out, gather_p.bind(g, indices, fill_value=zero_fill, **params)


@gather_p.def_transpose
def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      unique_indices, indices_are_sorted, mode, fill_value):
  from purejax._src.lax.scatter import scatter_add
  aval = operand.aval
  if type(ct) is ad.Zero:
    return [ad.Zero(aval), None]
  zeros = ad.zeros_like_aval(core.ShapedArray(aval.shape, core.get_aval(ct).dtype))
  out = scatter_add(zeros, indices, ct, scatter_dnums_of(dimension_numbers),
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                    mode=mode)
  return [out, None]


def _shift(dims, by=1):
  return tuple(d + by for d in dims)


@gather_p.def_batch
def _gather_batch(axis_size, vals, dims, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
  operand, indices = vals
  od, idim = dims
  dn = dimension_numbers
  params = dict(mode=mode, fill_value=fill_value)
  if idim is None:
    # Take the whole batch axis as one more window axis.
    operand = batching.moveaxis(operand, od, 0)
    new = GatherDimensionNumbers(
        offset_dims=(0,) + _shift(dn.offset_dims),
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
        start_index_map=_shift(dn.start_index_map),
        operand_batching_dims=_shift(dn.operand_batching_dims),
        start_indices_batching_dims=dn.start_indices_batching_dims)
    return gather_p.bind(operand, indices, dimension_numbers=new,
                         slice_sizes=(axis_size,) + tuple(slice_sizes),
                         unique_indices=unique_indices,
                         indices_are_sorted=indices_are_sorted, **params), 0
  indices = batching.moveaxis(indices, idim, 0)
  if od is None:
    # One more batch axis of indices (a leading axis of the result).
    new = dn._replace(offset_dims=_shift(dn.offset_dims),
                      start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
    return gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes,
                         unique_indices=False, indices_are_sorted=False, **params), 0
  # Both batched: pair the two batch axes as batching dims.
  operand = batching.moveaxis(operand, od, 0)
  new = GatherDimensionNumbers(
      offset_dims=_shift(dn.offset_dims),
      collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
      start_index_map=_shift(dn.start_index_map),
      operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
      start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims))
  size = 0 if axis_size == 0 else 1
  return gather_p.bind(operand, indices, dimension_numbers=new,
                       slice_sizes=(size,) + tuple(slice_sizes),
                       unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                       **params), 0


def default_fill_value(dtype):
  """JAX's fill for out-of-bounds gathers: NaN, the lowest signed or the
  highest unsigned integer, True."""
  if dtypes.issubdtype(dtype, np.inexact):
    return np.nan
  if dtypes.issubdtype(dtype, np.signedinteger):
    return int(dtypes.iinfo(dtype).min)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return int(dtypes.iinfo(dtype).max)
  if dtype == np.bool_:
    return True
  raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
  """XLA's Gather (see the module docstring).

  ``mode=None`` is PROMISE_IN_BOUNDS (clamping), as in JAX; ``fill_value``
  is used by FILL_OR_DROP only.
  """
  parsed = GatherScatterMode.from_any(
      GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
  if parsed == GatherScatterMode.FILL_OR_DROP:
    if fill_value is None:
      fill_value = default_fill_value(utils.aval(operand).dtype)
  else:
    fill_value = None
  return utils.bind(gather_p, operand, start_indices,
                    dimension_numbers=canonical_gather_dnums(dimension_numbers),
                    slice_sizes=utils.canonicalize_shape(slice_sizes),
                    unique_indices=bool(unique_indices),
                    indices_are_sorted=bool(indices_are_sorted), mode=parsed,
                    fill_value=fill_value)


def index_take(src, idxs, axes):
  """``src`` indexed by the integer arrays ``idxs`` along ``axes`` (wrapping
  negative indices)."""
  from purejax import lax
  cols = [lax.expand_dims(i, (1,)) for i in idxs]
  indices = lax.concatenate(cols, 1)
  shape = np.shape(src)
  sizes = np.array([shape[a] for a in axes], utils.aval(indices).dtype)
  sizes = lax.broadcast_in_dim(sizes, utils.aval(indices).shape, (1,))
  indices = lax.rem(lax.add(lax.rem(indices, sizes), sizes), sizes)
  slice_sizes = list(shape)
  for a in axes:
    slice_sizes[a] = 1
  dnums = GatherDimensionNumbers(
      offset_dims=tuple(range(1, len(shape) - len(axes) + 1)),
      collapsed_slice_dims=tuple(axes), start_index_map=tuple(axes))
  return gather(src, indices, dnums, tuple(slice_sizes))
