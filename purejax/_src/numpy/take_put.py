"""Reading and writing by index: take, take_along_axis, put, put_along_axis,
place, choose, compress, extract, select, fill_diagonal, and nonzero with
its relatives (argwhere, flatnonzero).

All follow JAX: writes return a new array (``inplace=False`` is required),
out-of-bounds reads fill or clip, and functions whose result size depends
on values (nonzero, compress) take a static ``size`` to work under jit.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.lax.gather import GatherDimensionNumbers, GatherScatterMode, gather
from purejax._src.lax.scatter import ScatterDimensionNumbers, scatter
from purejax._src.numpy import creation
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util


def _arrays(name, *args):
  util.check_arraylike(name, *args)
  return [util.asarray(a) for a in args]


def _index_normalized(indices, size):
  """Negative indices counted from the end (unsigned ones left alone)."""
  dtype = util.aval_of(indices).dtype
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return indices
  return ufuncs.where(ufuncs.less(indices, 0), ufuncs.add(indices, size), indices)


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
  """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None).

  ``mode`` is "fill" (default: out-of-bounds give ``fill_value``, NaN for
  floats), "clip" or "wrap"; "raise" is not supported, as in JAX."""
  util.check_no_out("take", out)
  a, indices = _arrays("take", a, indices)
  if axis is None:
    a, axis = shape_ops.ravel(a), 0
  else:
    axis = util.canonicalize_axis(axis, util.ndim(a))
  size = util.shape(a)[axis]
  if mode is None or mode == "fill":
    gather_mode = GatherScatterMode.FILL_OR_DROP
    indices = _index_normalized(indices, size)
  elif mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
  elif mode == "wrap":
    # The axis size in the indices' dtype, as JAX makes it: NumPy raises
    # OverflowError where it does not fit (257 for int8 indices).
    indices = ufuncs.mod(indices, np.array(size, util.aval_of(indices).dtype))
    gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
  elif mode == "clip":
    gather_mode = GatherScatterMode.CLIP
  else:
    raise ValueError(f"Invalid mode '{mode}' for np.take")
  shape, ishape = util.shape(a), util.shape(indices)
  if size == 0:
    if int(np.prod(ishape)) != 0:
      raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return a
  if 0 in ishape:
    return lax.full_like(a, 0, shape=shape[:axis] + ishape + shape[axis + 1:])
  n = len(ishape)
  dnums = GatherDimensionNumbers(
      offset_dims=tuple(range(axis)) + tuple(range(axis + n, len(shape) + n - 1)),
      collapsed_slice_dims=(axis,), start_index_map=(axis,))
  sizes = shape[:axis] + (1,) + shape[axis + 1:]
  return gather(a, lax.expand_dims(indices, (n,)), dnums, sizes, mode=gather_mode,
                unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                fill_value=fill_value)


def _index_dtype_for(axis_size):
  """The dtype indices are converted to (wrapping, as JAX: a uint32 4294967295
  becomes -1, the last element): int32 unless ``axis_size`` needs int64."""
  return dtypes.canonicalize_dtype(np.int64 if axis_size > 2 ** 31 - 1 else np.int32)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
  """``arr`` indexed by ``indices`` along ``axis``, the other axes paired up
  (broadcasting size-1 axes), as ``np.take_along_axis``.

  Out-of-bounds indices fill (NaN for floats) unless ``mode`` says
  otherwise; ``mode='one_hot'`` is not supported."""
  a, indices = _arrays("take_along_axis", arr, indices)
  idx_dtype = util.aval_of(indices).dtype
  if not dtypes.issubdtype(idx_dtype, np.integer):
    raise TypeError(f"take_along_axis indices must be of integer type, got {idx_dtype}")
  if mode == "one_hot" or mode == GatherScatterMode.ONE_HOT:
    raise ValueError("jnp.take_along_axis: mode='one_hot' is not supported by purejax.")
  if axis is None:
    if util.ndim(indices) != 1:
      raise ValueError("take_along_axis indices must be 1D if axis=None, got shape "
                       f"{util.shape(indices)}")
    a, axis = shape_ops.ravel(a), 0
  rank = util.ndim(a)
  if rank != util.ndim(indices):
    raise ValueError("indices and arr must have the same number of dimensions; "
                     f"{util.ndim(indices)} vs. {rank}")
  axis = util.canonicalize_axis(axis, rank)
  idx_shape = util.shape(indices)
  arr_shape = tuple(1 if d == axis else n for d, n in enumerate(util.shape(a)))
  out_shape = util.broadcast_shapes(idx_shape, arr_shape)
  axis_size = util.shape(a)[axis]
  if axis_size == 0:
    return lax.full(out_shape, 0, util.aval_of(a).dtype)
  if wrap_negative_indices is None:
    wrap_negative_indices = mode != "promise_in_bounds"
  indices = lax.convert_element_type(indices, _index_dtype_for(axis_size))
  if wrap_negative_indices:
    indices = _index_normalized(indices, axis_size)
  kept = [d for d, n in enumerate(idx_shape) if d == axis or n != 1]
  indices = lax.reshape(indices, tuple(out_shape[d] for d in kept) + (1,))
  sizes, offset, index_map, collapsed, obatch, ibatch, squeezed = [], [], [], [], [], [], []
  new_d = j = 0
  for d in range(rank):
    if d == axis:          # the indexed axis
      sizes.append(1); index_map.append(new_d); collapsed.append(new_d)
      new_d += 1; j += 1
    elif idx_shape[d] == 1:   # taken whole
      offset.append(d); sizes.append(arr_shape[d])
      new_d += 1
    elif arr_shape[d] == 1:   # broadcast: squeezed away
      squeezed.append(d)
      j += 1
    else:                     # paired one to one
      sizes.append(0 if arr_shape[d] == 0 else 1)
      obatch.append(new_d); ibatch.append(j)
      new_d += 1; j += 1
  if squeezed:
    a = lax.squeeze(a, squeezed)
  dnums = GatherDimensionNumbers(tuple(offset), tuple(collapsed), tuple(index_map),
                                 tuple(obatch), tuple(ibatch))
  return gather(a, indices, dnums, tuple(sizes), mode="fill" if mode is None else mode,
                fill_value=fill_value)


def _check_not_inplace(name, inplace):
  if inplace:
    raise ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays "
                     "are immutable. Pass inplace=False to instead return an updated array.")


def _tile_to_size(arr, size):
  """A 1-D ``arr`` repeated (or cut) to ``size`` elements."""
  n = util.shape(arr)[0]
  if n < size:
    arr = lax.concatenate([arr] * -(-size // n), 0)
  return lax.slice(arr, (0,), (size,)) if util.shape(arr)[0] > size else arr


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
  """``arr`` with ``values`` written at ``indices`` along ``axis`` (the
  inverse of take_along_axis); ``inplace=False`` is required."""
  from purejax._src.numpy.index_tricks import indices as grid_indices
  _check_not_inplace("put_along_axis", inplace)
  arr, indices, values = _arrays("put_along_axis", arr, indices, values)
  original_shape = util.shape(arr)
  if axis is None:
    arr, axis = shape_ops.ravel(arr), 0
  if util.ndim(arr) != util.ndim(indices):
    raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                     f"arr.ndim={util.ndim(arr)} and indices.ndim={util.ndim(indices)}.")
  try:
    values = util.broadcast_to(values, util.shape(indices))
  except ValueError:
    raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. "
                     f"Got values.shape={util.shape(values)} and "
                     f"indices.shape={util.shape(indices)}.") from None
  axis = util.canonicalize_axis(axis, util.ndim(arr))
  idx = list(grid_indices(util.shape(arr), sparse=True))
  idx[axis] = indices
  result = arr.at[tuple(idx)].set(values, mode=mode)
  return result if util.shape(result) == original_shape else lax.reshape(result,
                                                                          original_shape)


def put(a, ind, v, mode=None, *, inplace=True):
  """``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed).

  ``mode`` is "clip", "wrap" or None: as in JAX, None clamps indices past
  either end (through unravel_index) and drops nothing."""
  from purejax._src.numpy.index_tricks import unravel_index
  _check_not_inplace("put", inplace)
  arr, ind_arr, v_arr = _arrays("put", a, ind, v)
  ind_arr, v_arr = shape_ops.ravel(ind_arr), shape_ops.ravel(v_arr)
  size = int(np.prod(util.shape(arr)))
  if not size or not util.shape(ind_arr)[0] or not util.shape(v_arr)[0]:
    return arr
  v_arr = _tile_to_size(v_arr, util.shape(ind_arr)[0])
  if mode is None:
    scatter_mode = "drop"
  elif mode == "clip":
    ind_arr, scatter_mode = ufuncs.clip(ind_arr, 0, size - 1), "promise_in_bounds"
  elif mode == "wrap":
    ind_arr, scatter_mode = ufuncs.mod(ind_arr, size), "promise_in_bounds"
  elif mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
  else:
    raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
  return arr.at[unravel_index(ind_arr, util.shape(arr))].set(v_arr, mode=scatter_mode)


def place(arr, mask, vals, *, inplace=True):
  """``arr`` with the True positions of ``mask`` set to ``vals`` in order
  (repeated as needed); ``inplace=False`` is required."""
  data, mask, vals = _arrays("place", arr, mask, vals)
  vals = shape_ops.ravel(vals)
  _check_not_inplace("place", inplace)
  size = int(np.prod(util.shape(data)))
  if size != int(np.prod(util.shape(mask))):
    raise ValueError("place: arr and mask must be the same size")
  if not util.shape(vals)[0]:
    raise ValueError("Cannot place values from an empty array")
  if not size:
    return data
  where_true, = nonzero(shape_ops.ravel(mask), size=size, fill_value=size)
  vals = _tile_to_size(vals, size)
  flat = shape_ops.ravel(data).at[where_true].set(vals, mode="drop")
  return lax.reshape(flat, util.shape(data))


def choose(a, choices, out=None, mode="raise"):
  """``choices[a[i]][i]`` for every position i (all broadcast together)."""
  from purejax._src.numpy.index_tricks import indices as grid_indices
  util.check_no_out("choose", out)
  a, *choices = _arrays("choose", a, *choices)
  if not dtypes.issubdtype(util.aval_of(a).dtype, np.integer):
    raise ValueError("`a` array must be integer typed")
  n = len(choices)
  if mode == "raise":
    concrete = util.concrete_or_error(
        a, "The error occurred because jnp.choose was jit-compiled with mode='raise'. Use "
        "mode='wrap' or mode='clip' instead.")
    if np.any((concrete < 0) | (concrete >= n)):
      raise ValueError("invalid entry in choice array")
  elif mode == "wrap":
    a = ufuncs.mod(a, n)
  elif mode == "clip":
    a = ufuncs.clip(a, 0, n - 1)
  else:
    raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
  a, *choices = util.broadcast_arrays(a, *choices)
  stacked = shape_ops.stack(util.promote_dtypes(*choices))
  return stacked[(a,) + grid_indices(util.shape(a), sparse=True)]


def nonzero(a, *, size=None, fill_value=None):
  """Indices of the nonzero elements, one array per axis.

  Without ``size`` the result's length depends on the values, so it works
  on concrete arrays only (ConcretizationTypeError under jit, as in JAX);
  with ``size`` it is cut or padded with ``fill_value`` (default 0)."""
  (arr,) = _arrays("nonzero", a)
  shape = util.shape(arr)
  if not shape:
    raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                     "jnp.atleast_1d(scalar).nonzero() instead.")
  mask = arr if util.aval_of(arr).dtype == np.bool_ else ufuncs.not_equal(arr, 0)
  count = None
  if size is None:
    count = reductions.sum(mask)
    size = util.concrete_or_error(
        count, "The size argument of jnp.nonzero must be statically specified to use "
        "jnp.nonzero within JAX transformations.")
  size = operator.index(size)
  int_dtype = dtypes.default_int_dtype()
  n = int(np.prod(shape))
  if n == 0 or size == 0:
    return tuple(creation.zeros(size, int_dtype) for _ in shape)
  flat = shape_ops.ravel(mask)
  ones = lax.convert_element_type(flat, int_dtype)
  rank = lax.sub(lax.associative_scan(lax.add, ones), np.array(1, int_dtype))
  # Each true element's rank is its slot in the result; the others go out of
  # bounds and are dropped.
  slot = lax.select(flat, rank, lax.full((n,), size, int_dtype))
  positions = scatter(lax.full((size,), 0, int_dtype), lax.expand_dims(slot, (1,)),
                      lax.iota(int_dtype, n), ScatterDimensionNumbers((), (0,), (0,)),
                      indices_are_sorted=True, unique_indices=True, mode="drop")
  strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
  out = tuple(ufuncs.remainder(ufuncs.floor_divide(positions, np.array(s, int_dtype)),
                               np.array(d, int_dtype)) if len(shape) > 1 else positions
              for s, d in zip(strides, shape))
  if fill_value is not None:
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
    if len(fills) != len(shape) or any(np.shape(f) != () for f in fills):
      raise ValueError(f"fill_value must be a scalar or a tuple of length {len(shape)}; "
                       f"got {fill_value}")
    total = reductions.sum(mask) if count is None else count
    padding = ufuncs.greater_equal(lax.iota(int_dtype, size), total)
    out = tuple(ufuncs.where(padding, f, o) for f, o in zip(fills, out))
  return out


def flatnonzero(a, *, size=None, fill_value=None):
  """Indices of the nonzero elements of ``ravel(a)``."""
  return nonzero(shape_ops.ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
  """The indices of the nonzero elements as rows: shape (count, a.ndim)."""
  (a,) = _arrays("argwhere", a)
  found = nonzero(shape_ops.atleast_1d(a), size=size, fill_value=fill_value)
  result = shape_ops.stack(found, axis=1)
  if util.ndim(a) == 0:
    return lax.reshape(lax.slice(result, (0, 0), (0, 1)), (util.shape(result)[0], 0))
  return result


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
  """The slices of ``a`` along ``axis`` where ``condition`` is true (``size``
  cuts or pads with ``fill_value``, for use under jit)."""
  condition, arr, fill_value = _arrays("compress", condition, a, fill_value)
  util.check_no_out("compress", out)
  condition = lax.convert_element_type(condition, np.bool_) \
      if util.aval_of(condition).dtype != np.bool_ else condition
  if util.ndim(condition) != 1:
    raise ValueError("condition must be a 1D array")
  if axis is None:
    axis, arr = 0, shape_ops.ravel(arr)
  else:
    arr = shape_ops.moveaxis(arr, axis, 0)
  n, m = util.shape(arr)[0], util.shape(condition)[0]
  extra = condition[n:]
  condition, arr = condition[:n], arr[:m]
  if size is None:
    if reductions.any(extra):
      raise ValueError("condition contains entries that are out of bounds")
    result = arr[condition]
  elif not 0 <= size <= util.shape(arr)[0]:
    raise ValueError("size must be positive and not greater than the size of the array "
                     f"axis; got size={size} for a.shape[axis]={util.shape(arr)[0]}")
  else:
    where_true, = nonzero(condition, size=size)
    result = take(arr, where_true, axis=0, mode="clip")
    found = ufuncs.less(lax.iota(util.aval_of(where_true).dtype, size),
                        reductions.sum(condition))
    found = lax.broadcast_in_dim(found, util.shape(result), (0,))
    result = ufuncs.where(found, result,
                          lax.convert_element_type(fill_value, util.aval_of(arr).dtype))
  return shape_ops.moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
  """The elements of ``arr`` where ``condition`` is true (both flattened)."""
  util.check_arraylike("extract", condition, arr, fill_value)
  return compress(shape_ops.ravel(condition), shape_ops.ravel(arr), size=size,
                  fill_value=fill_value)


def select(condlist, choicelist, default=0):
  """``choicelist[i]`` where ``condlist[i]`` is the first true condition,
  else ``default``."""
  if len(condlist) != len(choicelist):
    raise ValueError("condlist must have length equal to choicelist "
                     f"({len(condlist)} vs {len(choicelist)})")
  if len(condlist) == 0:
    raise ValueError("condlist must be non-empty")
  util.check_arraylike("select", *condlist, *choicelist, default)
  choices = util.promote_dtypes(default, *choicelist)
  conds = [util.asarray(c) for c in condlist]
  conds = util.broadcast_arrays(np.False_, *conds)
  conds = shape_ops.stack([lax.convert_element_type(c, np.bool_) for c in conds])
  which = reductions.argmax(conds, axis=0)
  which, *choices = util.broadcast_arrays(which, *choices)
  return lax.select_n(lax.convert_element_type(which, np.int32), *choices)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
  """``a`` with its main diagonal set to ``val`` (repeated as needed);
  ``inplace=False`` is required and ``wrap=True`` is not supported, as in JAX."""
  from purejax._src.numpy.index_tricks import diag_indices
  if inplace:
    raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
  if wrap:
    raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
  a, val = _arrays("fill_diagonal", a, val)
  shape = util.shape(a)
  if len(shape) < 2:
    raise ValueError("array must be at least 2-d")
  if len(shape) > 2 and not all(n == shape[0] for n in shape[1:]):
    raise ValueError("All dimensions of input must be of equal length")
  n = min(shape)
  vals = val if util.ndim(val) == 0 else _tile_to_size(shape_ops.ravel(val), n)
  return a.at[diag_indices(n, len(shape))].set(vals)
