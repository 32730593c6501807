"""Sorting primitives: ``sort`` (variadic, lexicographic over its first
``num_keys`` operands) and ``top_k``.

Floats sort in XLA's total order.  ``sort`` compares with -0.0 equal to 0.0
and every NaN equal to the others and after +inf (JAX standardizes them in
its comparator; the values themselves come back untouched).  ``top_k``
compares raw bit patterns: -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN.
Complex numbers compare by real part, then imaginary part.

Derivatives move the tangents with the same permutation, found by sorting an
extra iota operand and applied with a gather (``take_along``).
"""
import operator

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import gather as gather_lib
from purejax._src.lax import utils
from purejax._src.lax.families import standard_primitive


# -- NumPy sort keys ------------------------------------------------------------

def _unsigned_view(x):
  bits = 8 * x.dtype.itemsize
  return x.view(np.dtype(f"uint{bits}")), bits


def _float_key(x, standardize):
  """Unsigned integers ordered like ``x`` in XLA's total order."""
  if standardize:   # (scalars, not 0-d arrays: CuPy's arrays take those)
    x = np.where(x == 0, x.dtype.type(0), x)
    x = np.where(np.isnan(x), x.dtype.type(np.nan), x)
  u, bits = _unsigned_view(array_namespace.contiguous(x))
  sign = u.dtype.type(1) << u.dtype.type(bits - 1)
  # Negative floats order backwards by magnitude: flip all their bits; set
  # the sign bit of the others so that they come after.
  return np.where((u & sign) != 0, ~u, u | sign)


def _keys_of(x, standardize):
  """Sort keys of one operand, most significant first."""
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return [_float_key(np.real(x), standardize), _float_key(np.imag(x), standardize)]
  if dtypes.issubdtype(x.dtype, np.floating):
    return [_float_key(x, standardize)]
  return [x]


def stable_order(keys, axis):
  """The stable sorting permutation along ``axis`` of ``keys`` (the most
  significant first), NumPy's or CuPy's arrays."""
  xp = array_namespace.of(keys[0])
  if xp is not np:
    # CuPy's argsort is a stable radix sort: sorting by each key in turn,
    # the least significant first, orders by all of them.
    order = xp.argsort(keys[-1], axis=axis)
    for key in keys[-2::-1]:
      step = xp.argsort(np.take_along_axis(key, order, axis=axis), axis=axis)
      order = np.take_along_axis(order, step, axis=axis)
    return order
  if len(keys) == 1:
    return np.argsort(keys[0], axis=axis, kind="stable")
  return np.lexsort(keys[::-1], axis=axis)   # (stable; the primary key last)


def _sort_impl(*operands, dimension, is_stable, num_keys):
  keys = []
  for x in operands[:num_keys]:
    keys.extend(_keys_of(x, standardize=True))
  order = stable_order(keys, dimension)
  return [np.take_along_axis(x, order, axis=dimension) for x in operands]


def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
  if not avals:
    raise TypeError("Sort requires at least one operand")
  if any(a.shape != avals[0].shape for a in avals[1:]):
    shapes = " ".join(str(a.shape) for a in avals)
    raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
  if not 0 <= dimension < avals[0].ndim:
    raise ValueError(f"axis {dimension} is out of bounds for array of dimension "
                     f"{avals[0].ndim}")
  if not 1 <= num_keys <= len(avals):
    raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(avals)}")
  return list(avals)


def _sorts_on_gpu_arrays(eqn):
  """Keys that are not complex: the GPU backend sorts on the device
  (``impl_on_gpu_arrays``, see dot_general_p)."""
  keys = eqn.invars[:eqn.params["num_keys"]]
  return all(np.dtype(v.aval.dtype).kind != "c" for v in keys)


sort_p = standard_primitive("sort", _sort_abstract_eval, _sort_impl,
                            multiple_results=True, impl_on_gpu_arrays=_sorts_on_gpu_arrays)
sort_p.c_code = None


def _unsigned_index_dtype(size):
  return np.dtype(np.uint32) if size <= np.iinfo(np.uint32).max else np.dtype(np.uint64)


def take_along(x, idx, axis):
  """``x`` permuted along ``axis`` by ``idx`` (same shape as ``x`` but along
  ``axis``; trailing size-1 index axis): a gather with every other axis
  a batch axis, as JAX's sort and top_k derivatives do."""
  ndim = core.get_aval(x).ndim
  others = tuple(d for d in range(ndim) if d != axis)
  dnums = gather_lib.GatherDimensionNumbers(
      offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
      operand_batching_dims=others, start_indices_batching_dims=others)
  return gather_lib.gather(x, idx, dnums, (1,) * ndim,
                           mode=gather_lib.GatherScatterMode.PROMISE_IN_BOUNDS)


def _zero_tangent(t):
  return type(t) is ad.Zero or core.get_aval(t).dtype == dtypes.float0


@sort_p.def_jvp
def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
  from purejax._src.lax.creation import broadcasted_iota
  from purejax._src.lax.structural import expand_dims
  shape = core.get_aval(primals[0]).shape
  iota = broadcasted_iota(_unsigned_index_dtype(shape[dimension]), shape, dimension)
  *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                            num_keys=num_keys)
  if all(_zero_tangent(t) for t in tangents):
    return outs, [ad.Zero.from_primal_value(o) for o in outs]
  idx = expand_dims(perm, (len(shape),))
  out_tangents = [ad.Zero.from_primal_value(o) if _zero_tangent(t)
                  else take_along(t, idx, dimension) for o, t in zip(outs, tangents)]
  return outs, out_tangents


@sort_p.def_batch
def _sort_batch(axis_size, vals, dims, *, dimension, is_stable, num_keys):
  # Every operand gets the batch axis where the first batched one has it.
  proto, bdim = next((v, d) for v, d in zip(vals, dims) if d is not None)
  shape = core.get_aval(proto).shape
  kept = tuple(i for i in range(len(shape)) if i != bdim)
  args = []
  for v, d in zip(vals, dims):
    if d is None:
      from purejax._src.lax.structural import broadcast_in_dim
      args.append(broadcast_in_dim(v, shape, kept))
    else:
      args.append(batching.moveaxis(v, d, bdim))
  dimension = dimension + (bdim <= dimension)
  outs = sort_p.bind(*args, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
  return outs, [bdim] * len(outs)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
  """Sorts ``operand`` (an array, or a sequence of arrays of one shape sorted
  together by their first ``num_keys``) along ``dimension``.

  Floats: -0.0 equals 0.0 and NaNs go last; complex numbers sort by real,
  then imaginary part.
  """
  if isinstance(operand, (list, tuple)):
    if len(operand) == 0:
      raise TypeError("Sort requires at least one operand")
    if not 1 <= num_keys <= len(operand):
      raise ValueError(f"num_keys={num_keys} must be between 1 and "
                       f"len(operand)={len(operand)}")
    dimension = utils.canonicalize_axis(dimension, np.ndim(operand[0]))
    return tuple(utils.bind(sort_p, *operand, dimension=dimension,
                            is_stable=bool(is_stable), num_keys=int(num_keys)))
  if num_keys != 1:
    raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
  dimension = utils.canonicalize_axis(dimension, np.ndim(operand))
  return utils.bind(sort_p, operand, dimension=dimension, is_stable=bool(is_stable),
                    num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
  """Sorts ``keys`` along ``dimension``, moving ``values`` the same way."""
  dimension = utils.canonicalize_axis(dimension, np.ndim(keys))
  k, v = utils.bind(sort_p, keys, values, dimension=dimension, is_stable=bool(is_stable),
                    num_keys=1)
  return k, v


# -- top_k ----------------------------------------------------------------------

def _descending_key(x):
  """A key whose ascending order is ``x``'s descending raw total order."""
  if dtypes.issubdtype(x.dtype, np.floating):
    return ~_float_key(x, standardize=False)
  return ~x   # order-reversing for bool, signed and unsigned ints alike


def _top_k_impl(x, *, k, axis):
  # A stable sort keeps equal values in index order: ties go to the lower
  # index (CuPy's argsort, for a GPU's arrays, is a stable radix sort).
  order = stable_order([_descending_key(x)], axis)[(slice(None),) * axis + (slice(0, k),)]
  return [np.take_along_axis(x, order, axis=axis), order.astype(np.int32)]


def _top_k_abstract_eval(operand, *, k, axis):
  if dtypes.issubdtype(operand.dtype, np.complexfloating):
    raise ValueError("top_k is not compatible with complex inputs.")
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  if operand.ndim == 0:
    raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
  if not 0 <= axis < operand.ndim:
    raise ValueError(f"axis argument out of range: axis={axis} for "
                     f"operand.shape={operand.shape}")
  shape = list(operand.shape)
  if shape[axis] < k:
    raise ValueError("k argument to top_k must be no larger than size along axis; "
                     f"got k={k} with shape={shape} and axis={axis}")
  shape[axis] = k
  # JAX keeps the operand's weak type on the indices too.
  return [operand.update(shape=tuple(shape)),
          operand.update(shape=tuple(shape), dtype=np.dtype(np.int32))]


# (impl_on_gpu_arrays: see dot_general_p)
top_k_p = standard_primitive("top_k", _top_k_abstract_eval, _top_k_impl,
                             multiple_results=True, impl_on_gpu_arrays=True)
top_k_p.c_code = None


@top_k_p.def_jvp
def _top_k_jvp(primals, tangents, *, k, axis):
  from purejax._src.lax.structural import reshape
  (operand,), (g,) = primals, tangents
  values, idx = top_k_p.bind(operand, k=k, axis=axis)
  if _zero_tangent(g):
    return [values, idx], [ad.Zero.from_primal_value(values), ad.Zero.from_primal_value(idx)]
  shape = core.get_aval(idx).shape
  g_out = take_along(g, reshape(idx, shape + (1,)), axis)
  return [values, idx], [g_out, ad.Zero.from_primal_value(idx)]


@top_k_p.def_batch
def _top_k_batch(axis_size, vals, dims, *, k, axis):
  (x,), (d,) = vals, dims
  axis = axis + (d <= axis)
  return top_k_p.bind(x, k=k, axis=axis), [d, d]


def top_k(operand, k, *, axis=-1):
  """The ``k`` largest entries along ``axis`` and their int32 indices,
  largest first; of equal entries the lower index comes first."""
  try:
    k = operator.index(k)
  except TypeError:
    raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                    f"got {[k]}.") from None
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  axis = utils.canonicalize_axis(axis, np.ndim(operand))
  return utils.bind(top_k_p, operand, k=k, axis=axis)
