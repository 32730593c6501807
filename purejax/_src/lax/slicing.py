"""Static and dynamic slicing: slice, dynamic_slice, dynamic_update_slice, and
the ``*_in_dim`` helpers built on them.

Dynamic start indices are clamped so that the slice stays inside the operand,
as XLA does: nothing ever reads or writes out of bounds.
"""
import builtins

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax import utils
from purejax._src.lax.families import check_same_dtypes, standard_primitive
from purejax._src.lax.structural import pad_p

_pyslice = builtins.slice   # this module defines lax.slice


def _check_slice_sizes(sizes, shape):
  """Shared by slice (without strides) and dynamic_slice."""
  if any(s < 0 for s in sizes):
    raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                    f"slice_sizes of {sizes}.")
  if any(s > d for s, d in zip(sizes, shape)):
    raise TypeError("slice slice_sizes must be less than or equal to operand shape, "
                    f"got slice_sizes {sizes} for operand shape {shape}.")


def _clamped_starts(starts, sizes, shape):
  return [min(max(int(i), 0), d - s) for i, s, d in zip(starts, sizes, shape)]


# -- slice --------------------------------------------------------------------

def _check_rank(what, indices, shape):
  if len(indices) != len(shape):
    raise TypeError(f"slice {what} must have length equal to the number of dimensions "
                    f"of the operand, got {what} {indices} for operand shape {shape}.")


def _slice_abstract_eval(operand, *, start_indices, limit_indices, strides):
  shape = operand.shape
  _check_rank("start_indices", start_indices, shape)
  _check_rank("limit_indices", limit_indices, shape)
  if strides is None:
    # Without strides JAX checks the slice sizes only; out-of-range starts
    # are clamped like a dynamic slice's.
    sizes = tuple(np.subtract(limit_indices, start_indices))
    _check_slice_sizes(sizes, shape)
    return core.ShapedArray(tuple(int(s) for s in sizes), operand.dtype, operand.weak_type)
  _check_rank("strides", strides, shape)
  if any(i < 0 for i in start_indices):
    raise TypeError("slice start_indices must have every element be nonnegative, got "
                    f"{start_indices}.")
  if any(l > d for l, d in zip(limit_indices, shape)):
    raise TypeError("slice limit_indices must be less than or equal to operand shape, "
                    f"got limit_indices {limit_indices} for operand shape {shape}.")
  if any(l < i for i, l in zip(start_indices, limit_indices)):
    raise TypeError("slice limit_indices must be greater than or equal to "
                    f"start_indices, got start_indices {start_indices} and "
                    f"limit_indices {limit_indices}.")
  if any(s < 0 for s in strides):
    raise TypeError(f"slice strides must have every element be nonnegative, got {strides}.")
  out = tuple((l - i + s - 1) // s if l > i else 0
              for i, l, s in zip(start_indices, limit_indices, strides))
  return core.ShapedArray(out, operand.dtype, operand.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
  if strides is None:
    sizes = [l - i for i, l in zip(start_indices, limit_indices)]
    starts = _clamped_starts(start_indices, sizes, x.shape)
    return x[tuple(_pyslice(i, i + s) for i, s in zip(starts, sizes))]
  return x[tuple(_pyslice(i, l, s) for i, l, s in zip(start_indices, limit_indices, strides))]


slice_p = standard_primitive("slice", _slice_abstract_eval, _slice_impl,
                             impl_on_gpu_arrays=True)   # (see dot_general_p)


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
  # Put the cotangent back where the slice came from: pad with zeros, the
  # strides becoming interior padding.
  in_shape, out_shape = operand.aval.shape, core.get_aval(ct).shape
  if strides is None:
    start_indices = _clamped_starts(start_indices, out_shape, in_shape)
    strides = (1,) * len(in_shape)
  config = []
  for start, size, n, stride in zip(start_indices, out_shape, in_shape, strides):
    end = start + (size - 1) * stride + 1 if size else start
    config.append((int(start), int(n - end), int(stride) - 1))
  zero = np.zeros((), core.get_aval(ct).dtype)
  return [pad_p.bind(ct, zero, padding_config=tuple(config))]


ad.deflinear(slice_p, _slice_transpose)


@slice_p.def_batch
def _slice_batch(axis_size, vals, dims, *, start_indices, limit_indices, strides):
  # The batch axis is taken whole.
  (x,), (d,) = vals, dims
  insert = lambda seq, v: None if seq is None else tuple(seq[:d]) + (v,) + tuple(seq[d:])
  return slice_p.bind(x, start_indices=insert(start_indices, 0),
                      limit_indices=insert(limit_indices, axis_size),
                      strides=insert(strides, 1)), d


def slice(operand, start_indices, limit_indices, strides=None):
  """``operand[start:limit:stride]`` along every axis, with static bounds."""
  start = utils.canonicalize_shape(tuple(start_indices))
  limit = utils.canonicalize_shape(tuple(limit_indices))
  strides = None if strides is None else utils.canonicalize_shape(tuple(strides))
  return utils.bind(slice_p, operand, start_indices=start, limit_indices=limit,
                    strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
  """``slice`` along one axis; None and negative bounds count like Python's."""
  shape = np.shape(operand)
  ndim = len(shape)
  axis = int(axis)
  size = shape[axis]
  start = 0 if start_index is None else int(start_index)
  limit = size if limit_index is None else int(limit_index)
  start = start + size if start < 0 else start
  limit = limit + size if limit < 0 else limit
  starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
  starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
  return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
  """The ``index``-th slice along ``axis`` (kept as a size-1 axis by default)."""
  from purejax._src.lax.structural import squeeze
  index, axis = int(index), int(axis)
  size = np.shape(operand)[axis]
  wrapped = index + size if index < 0 else index
  if not 0 <= wrapped < size:
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
  out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
  return out if keepdims else squeeze(out, (axis,))


# -- dynamic_slice ------------------------------------------------------------

def _check_indices(name, operand, indices, colon=":"):
  if len(indices) != operand.ndim:
    raise ValueError("Length of slice indices must match number of operand dimensions "
                     f"({len(indices)} vs {operand.shape})")
  if any(i.ndim for i in indices):
    raise TypeError(f"start_indices arguments to {name} must be scalars,  got indices "
                    f"({', '.join(map(repr, indices))}{',' if len(indices) == 1 else ''})")
  kinds = [i.dtype for i in indices]
  if kinds and (len(set(kinds)) > 1
                or not all(dtypes.issubdtype(k, np.integer) for k in kinds)):
    raise TypeError(f"index arguments to {name} must be integers of the same type, "
                    f"got{colon} {', '.join(core.dtype_name(k) for k in kinds)}")


def _dynamic_slice_abstract_eval(operand, *indices, slice_sizes):
  _check_indices("dynamic_slice", operand, indices)
  utils.safe_zip(operand.shape, slice_sizes)
  _check_slice_sizes(slice_sizes, operand.shape)
  return core.ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _dynamic_slice_impl(x, *indices, slice_sizes):
  starts = _clamped_starts(indices, slice_sizes, x.shape)
  return x[tuple(_pyslice(i, i + s) for i, s in zip(starts, slice_sizes))]


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_abstract_eval,
                                     _dynamic_slice_impl)


# Both dynamic slicing primitives are linear in their arrays, never in the
# (integer) start indices; the same clamping applies to tangents and cotangents.

@dynamic_slice_p.def_jvp
def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
  operand, *indices = primals
  out = dynamic_slice_p.bind(operand, *indices, slice_sizes=slice_sizes)
  g = tangents[0]
  if type(g) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  return out, dynamic_slice_p.bind(g, *indices, slice_sizes=slice_sizes)


@dynamic_slice_p.def_transpose
def _dynamic_slice_transpose(ct, operand, *indices, slice_sizes):
  zeros = ad.zeros_like_aval(core.ShapedArray(operand.aval.shape, operand.aval.dtype))
  return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


dynamic_slice_p.is_linear = True


# -- batching the dynamic slices ------------------------------------------------
# Shared start indices are one more dynamic slice with the batch axis taken
# whole.  Start indices that differ per example make a gather (a scatter, for
# an update) with one row of starts per example, clamped like the dynamic
# slice's (CLIP), and the batch axis a batching axis of operand and indices,
# as JAX does: the work is that of the windows, not of the whole operand.

def _index_dtype(indices):
  return utils.aval(indices[0]).dtype


def _stacked_starts(indices, dims, axis_size):
  """The start indices as one (B, n) array: row b holds example b's."""
  from purejax._src.lax.convert import convert_element_type
  from purejax._src.lax.structural import concatenate_p, reshape_p
  dtype = np.result_type(*[utils.aval(i).dtype for i in indices])
  columns = []
  for i, d in zip(indices, dims):
    if utils.aval(i).dtype != dtype:
      i = convert_element_type(i, dtype)
    i = batching.bdim_at_front(i, d, axis_size)
    columns.append(reshape_p.bind(i, new_sizes=(axis_size, 1), dimensions=None, sharding=None))
  return concatenate_p.bind(*columns, dimension=1)


def _dynamic_slice_batch(axis_size, vals, dims, *, slice_sizes):
  from purejax._src.lax import gather as gather_lib
  operand, *indices = vals
  od, *ids = dims
  if all(d is not_mapped for d in ids):
    x = batching.bdim_at_front(operand, od, axis_size)
    zero = utils.scalar_of(_index_dtype(indices), 0)
    return dynamic_slice_p.bind(x, zero, *indices,
                                slice_sizes=(axis_size,) + tuple(slice_sizes)), 0
  starts = _stacked_starts(indices, ids, axis_size)
  n = len(slice_sizes)
  window = tuple(range(1, n + 1))
  clip = gather_lib.GatherScatterMode.CLIP
  if od is not_mapped:   # one operand, windows at each example's starts
    dnums = gather_lib.GatherDimensionNumbers(
        offset_dims=window, collapsed_slice_dims=(), start_index_map=tuple(range(n)))
    out = gather_lib.gather(operand, starts, dnums, slice_sizes, mode=clip)
  else:                  # each example's window of its own operand
    x = batching.bdim_at_front(operand, od, axis_size)
    dnums = gather_lib.GatherDimensionNumbers(
        offset_dims=window, collapsed_slice_dims=(), start_index_map=window,
        operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out = gather_lib.gather(x, starts, dnums, (1,) + tuple(slice_sizes), mode=clip,
                            indices_are_sorted=True, unique_indices=True)
  return utils.with_weak_type(out, utils.aval(operand).weak_type), 0


dynamic_slice_p.batch = _dynamic_slice_batch


def _dynamic_update_slice_abstract_eval(operand, update, *indices):
  if update.ndim != operand.ndim:
    raise TypeError("dynamic_update_slice update must have the same rank as operand, "
                    f"got update shape {update.shape} for operand shape {operand.shape}.")
  if any(u > d for u, d in zip(update.shape, operand.shape)):
    raise TypeError("dynamic_update_slice update shape must be smaller than operand "
                    f"shape, got update shape {update.shape} for operand shape "
                    f"{operand.shape}.")
  _check_indices("dynamic_update_slice", operand, indices, colon="")
  check_same_dtypes("dynamic_update_slice", [operand, update])
  weak = all(a.weak_type for a in (operand, update) + indices)
  return core.ShapedArray(operand.shape, operand.dtype, weak)


def _dynamic_update_slice_impl(x, update, *indices):
  starts = _clamped_starts(indices, update.shape, x.shape)
  out = np.array(x, copy=True)
  out[tuple(_pyslice(i, i + s) for i, s in zip(starts, update.shape))] = update
  return out


dynamic_update_slice_p = standard_primitive(
    "dynamic_update_slice", _dynamic_update_slice_abstract_eval,
    _dynamic_update_slice_impl)


@dynamic_update_slice_p.def_jvp
def _dynamic_update_slice_jvp(primals, tangents):
  operand, update, *indices = primals
  out = dynamic_update_slice_p.bind(operand, update, *indices)
  g_operand, g_update = tangents[:2]
  if type(g_operand) is ad.Zero and type(g_update) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  return out, dynamic_update_slice_p.bind(ad.instantiate(g_operand),
                                          ad.instantiate(g_update), *indices)


@dynamic_update_slice_p.def_transpose
def _dynamic_update_slice_transpose(ct, operand, update, *indices):
  update_aval = core.get_aval(update)
  ct_operand = ct_update = None
  if ad.is_undefined_primal(operand):
    # The overwritten block gets nothing.
    zeros = ad.zeros_like_aval(core.ShapedArray(update_aval.shape, update_aval.dtype))
    ct_operand = dynamic_update_slice_p.bind(ct, zeros, *indices)
  if ad.is_undefined_primal(update):
    ct_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_aval.shape)
  return [ct_operand, ct_update] + [None] * len(indices)


dynamic_update_slice_p.is_linear = True


def _dynamic_update_slice_batch(axis_size, vals, dims):
  from purejax._src.lax import scatter as scatter_lib
  operand, update, *indices = vals
  od, ud, *ids = dims
  x = batching.bdim_at_front(operand, od, axis_size)
  u = batching.bdim_at_front(update, ud, axis_size)
  if all(d is not_mapped for d in ids):
    zero = utils.scalar_of(_index_dtype(indices), 0)
    return dynamic_update_slice_p.bind(x, u, zero, *indices), 0
  window = tuple(range(1, utils.aval(x).ndim))
  dnums = scatter_lib.ScatterDimensionNumbers(
      update_window_dims=window, inserted_window_dims=(), scatter_dims_to_operand_dims=window,
      operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
  out = scatter_lib.scatter(x, _stacked_starts(indices, ids, axis_size), u, dnums,
                            indices_are_sorted=True, unique_indices=True,
                            mode=scatter_lib.GatherScatterMode.CLIP)
  weak = all(utils.aval(v).weak_type for v in vals)
  return utils.with_weak_type(out, weak), 0


dynamic_update_slice_p.batch = _dynamic_update_slice_batch


# -- start indices --------------------------------------------------------------

def _index_list(indices):
  """Start indices as a list of scalars (an index array is split up)."""
  if isinstance(indices, (np.ndarray, core.ArrayBase)):
    if np.ndim(indices) != 1:
      raise ValueError(f"Slice indices must be a 1D sequence, got {np.shape(indices)}")
    if isinstance(indices, np.ndarray):
      return list(indices)
    from purejax._src.lax.structural import squeeze
    return [squeeze(slice(indices, (i,), (i + 1,), (1,)), (0,))
            for i in range(indices.shape[0])]
  return list(indices)


def _normalize_index(i, size, allow_negative):
  """A start index with negative values counted from the end of the axis.

  Like JAX: Python ints and NumPy values are fixed up right away; any other
  index (an array, a tracer) gets ``select(i < 0, i + size, i)`` staged.
  """
  if type(i) is int:
    i = np.array(i, dtypes.default_int_dtype())
  if isinstance(i, (np.ndarray, np.generic)):
    dtype = dtypes.canonicalize_dtype(np.asarray(i).dtype)
    value = np.asarray(i, dtype)
    if allow_negative and dtypes.issubdtype(dtype, np.integer) and np.any(value < 0):
      # Only a negative start is shifted, so only then can the size overflow
      # the index type (NumPy's OverflowError, as in JAX).
      value = np.where(value < 0, value + size, value).astype(dtype)
    return value
  if not allow_negative:
    return i
  from purejax._src.lax import api_elementwise as ew
  from purejax._src.lax.convert import convert_element_type
  dtype = utils.aval(i).dtype
  negative = ew.lt(i, utils.scalar_of(dtype, 0))
  shifted = ew.add(convert_element_type(i, dtype), utils.scalar_of(dtype, size))
  return ew.select_n(negative, i, shifted)


def _start_indices(operand, start_indices, allow_negative_indices):
  indices = _index_list(start_indices)
  shape = np.shape(operand)
  if len(indices) != len(shape):
    raise ValueError("Length of slice indices must match number of operand dimensions "
                     f"({len(indices)} vs {shape})")
  allow = allow_negative_indices
  allow = [bool(allow)] * len(shape) if isinstance(allow, (bool, np.bool_)) else list(allow)
  return [_normalize_index(i, d, a) for i, d, a in zip(indices, shape, allow)]


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
  """A ``slice_sizes`` block of ``operand`` starting at (possibly traced)
  ``start_indices``; starts are clamped so the block stays in bounds."""
  indices = _start_indices(operand, start_indices, allow_negative_indices)
  sizes = utils.canonicalize_shape(tuple(slice_sizes))
  return utils.bind(dynamic_slice_p, operand, *indices, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
  """``operand`` with the block at ``start_indices`` replaced by ``update``."""
  indices = _start_indices(operand, start_indices, allow_negative_indices)
  return utils.bind(dynamic_update_slice_p, operand, update, *indices)


def _zero_index_like(index):
  return utils.scalar_of(utils.aval(index).dtype, 0)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
  """``dynamic_slice`` along one axis."""
  shape = np.shape(operand)
  axis = int(axis)
  starts = [_zero_index_like(start_index)] * len(shape)
  starts[axis] = start_index
  sizes = list(shape)
  sizes[axis] = int(slice_size)
  allow = [True] * len(shape)
  allow[axis] = allow_negative_indices
  return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
  """``dynamic_update_slice`` along one axis."""
  shape = np.shape(operand)
  axis = int(axis)
  starts = [_zero_index_like(start_index)] * len(shape)
  starts[axis] = start_index
  allow = [True] * len(shape)
  allow[axis] = allow_negative_indices
  return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


# JAX stages these two as named jit calls; so do we, so that jaxprs match.

def _dynamic_index_in_dim(operand, index, axis, keepdims, allow_negative_indices):
  from purejax._src.lax.structural import squeeze
  out = dynamic_slice_in_dim(operand, index, 1, axis,
                             allow_negative_indices=allow_negative_indices)
  return out if keepdims else squeeze(out, (axis,))


def _dynamic_update_index_in_dim(operand, update, index, axis, allow_negative_indices):
  from purejax._src.lax.structural import expand_dims
  if np.ndim(update) != np.ndim(operand):
    update = expand_dims(update, (axis,))
  return dynamic_update_slice_in_dim(operand, update, index, axis,
                                     allow_negative_indices=allow_negative_indices)


_dynamic_index_in_dim.__name__ = "dynamic_index_in_dim"
_dynamic_update_index_in_dim.__name__ = "dynamic_update_index_in_dim"
_jitted = {}


def _jit(fun, static_argnames):
  wrapped = _jitted.get(fun)
  if wrapped is None:
    from purejax._src.api import jit
    wrapped = _jitted[fun] = jit(fun, static_argnames=static_argnames)
  return wrapped


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
  """The ``index``-th slice along ``axis``, for a possibly traced ``index``."""
  axis = utils.canonicalize_axis(axis, np.ndim(operand))
  fun = _jit(_dynamic_index_in_dim, ("axis", "keepdims", "allow_negative_indices"))
  return fun(operand, index, axis=axis, keepdims=bool(keepdims),
             allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
  """``operand`` with its ``index``-th slice along ``axis`` set to ``update``."""
  axis = utils.canonicalize_axis(axis, np.ndim(operand))
  fun = _jit(_dynamic_update_index_in_dim, ("axis", "allow_negative_indices"))
  return fun(operand, update, index, axis=axis,
             allow_negative_indices=allow_negative_indices)
