"""Sorting and searching: sort, argsort, lexsort, sort_complex, partition,
argpartition, searchsorted; and the helpers the set operations, quantiles
and histograms share (total-order comparisons, a gather, a ``nonzero`` of
static size).

Everything is built from ``lax.sort``, ``lax.top_k`` and ``lax.gather``.
Where JAX scatters to invert a permutation, a second sort does it here.
"""
import functools
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.lax import gather as gather_lib
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def _ensure(fun_name, *args):
  check_arraylike(fun_name, *args)
  out = [util.asarray(a) for a in args]
  return out[0] if len(out) == 1 else out


def _check_kind_order(fun_name, kind, order):
  if kind is not None:
    raise TypeError(f"'kind' argument to {fun_name} is not supported. Use stable=True "
                    "or stable=False to specify sort stability.")
  if order is not None:
    raise TypeError(f"'order' argument to {fun_name} is not supported.")


def jit_named(name, static_argnames=()):
  """``jit`` for a private helper, staged under the public function's name
  (as it appears in printed jaxprs)."""
  def wrap(fun):
    fun.__name__ = fun.__qualname__ = name
    return jit(fun, static_argnames=static_argnames)
  return wrap


def index_dtype(size):
  """JAX's index dtype for an axis of ``size``: the default int when it fits."""
  if size <= np.iinfo(np.int32).max:
    return dtypes.default_int_dtype()
  return np.dtype(np.int64)


def iota_like(x, axis, dtype=None):
  shape = util.shape(x)
  dtype = index_dtype(shape[axis]) if dtype is None else dtype
  return lax.broadcasted_iota(dtype, shape, axis)


# ---------------------------------------------------------------------------
# Comparisons in sort's total order (NaN last, -0.0 == 0.0)

def _isnan(x):
  return lax.ne(x, x)


def _float_lt(a, b):
  return lax.bitwise_or(lax.lt(a, b), lax.bitwise_and(lax.bitwise_not(_isnan(a)), _isnan(b)))


def _float_le(a, b):
  return lax.bitwise_or(lax.le(a, b), _isnan(b))


def _float_eq(a, b):
  return lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(_isnan(a), _isnan(b)))


def _compare(a, b, float_op):
  dtype = util.aval_of(a).dtype
  if dtypes.issubdtype(dtype, np.complexfloating):
    ra, rb, ia, ib = lax.real(a), lax.real(b), lax.imag(a), lax.imag(b)
    return lax.bitwise_or(_float_lt(ra, rb),
                          lax.bitwise_and(_float_eq(ra, rb), float_op(ia, ib)))
  if dtypes.issubdtype(dtype, np.floating):
    return float_op(a, b)
  plain = {_float_lt: lax.lt, _float_le: lax.le, _float_eq: lax.eq}[float_op]
  return plain(a, b)


def total_lt(a, b):
  """``a < b`` in the order ``lax.sort`` sorts by (same dtypes)."""
  return _compare(a, b, _float_lt)


def total_le(a, b):
  """``a <= b`` in the order ``lax.sort`` sorts by (same dtypes)."""
  return _compare(a, b, _float_le)


# ---------------------------------------------------------------------------
# Gathers

def take(x, idx, axis=0):
  """``x`` indexed along ``axis`` by the integer array ``idx`` (its shape
  replaces that axis); out-of-range indices are clamped."""
  shape = util.shape(x)
  idx_ndim = util.ndim(idx)
  offset = tuple(range(axis)) + tuple(range(axis + idx_ndim, len(shape) - 1 + idx_ndim))
  dnums = gather_lib.GatherDimensionNumbers(
      offset_dims=offset, collapsed_slice_dims=(axis,), start_index_map=(axis,),
      operand_batching_dims=(), start_indices_batching_dims=())
  sizes = shape[:axis] + (1,) + shape[axis + 1:]
  return gather_lib.gather(x, lax.expand_dims(idx, (idx_ndim,)), dnums, sizes,
                           mode=gather_lib.GatherScatterMode.CLIP)


def inverse_permutation(perm, axis=-1):
  """The inverse of permutations along ``axis``, by sorting (no scatter)."""
  axis = util.canonicalize_axis(axis, util.ndim(perm))
  return lax.sort_key_val(perm, iota_like(perm, axis, util.aval_of(perm).dtype), axis)[1]


def nonzero_1d(mask, size, fill_value=0, dtype=None):
  """Indices of the true entries of the 1-D ``mask``, in order, padded with
  ``fill_value`` (or cut) to the static ``size``: a stable sort puts them
  first."""
  n = util.shape(mask)[0]
  dtype = index_dtype(n) if dtype is None else dtype
  if n == 0 or size == 0:
    return lax.full((size,), fill_value, dtype)
  iota = lax.iota(dtype, n)
  _, positions = lax.sort((lax.bitwise_not(mask), iota), num_keys=1)
  if size <= n:
    positions = lax.slice(positions, (0,), (size,))
  else:
    positions = lax.pad(positions, np.zeros((), dtype), ((0, size - n, 0),))
  count = lax.reduce_sum(lax.convert_element_type(mask, dtype), (0,))
  keep = lax.lt(lax.iota(dtype, size), count)
  return lax.select(keep, positions, lax.full((size,), fill_value, dtype))


# ---------------------------------------------------------------------------
# Sorting

@functools.partial(jit, static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
  """A sorted copy of ``a`` along ``axis`` (flattened if None).

  NaNs sort last; -0.0 and 0.0 compare equal; complex numbers sort by real
  part, then imaginary part.
  """
  arr = _ensure("sort", a)
  _check_kind_order("sort", kind, order)
  if axis is None:
    arr, axis = lax.reshape(arr, (util.aval_of(arr).size,)), 0
  dimension = util.canonicalize_axis(axis, util.ndim(arr))
  out = lax.sort(arr, dimension=dimension, is_stable=stable)
  return lax.rev(out, (dimension,)) if descending else out


@functools.partial(jit, static_argnames=("axis", "kind", "order", "stable", "descending",
                                          "dtype"))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
  """Indices that sort ``a`` along ``axis``; a stable descending sort keeps
  equal elements in their original order."""
  arr = _ensure("argsort", a)
  _check_kind_order("argsort", kind, order)
  if axis is None:
    arr, axis = lax.reshape(arr, (util.aval_of(arr).size,)), 0
  dimension = util.canonicalize_axis(axis, util.ndim(arr))
  if dtype is not None:
    idx_dtype = dtypes.canonicalize_user_dtype(dtype, "argsort")
  else:
    idx_dtype = index_dtype(util.shape(arr)[dimension])
  iota = iota_like(arr, dimension, idx_dtype)
  if descending and stable:
    arr, iota = lax.rev(arr, (dimension,)), lax.rev(iota, (dimension,))
  _, indices = lax.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
  return lax.rev(indices, (dimension,)) if descending else indices


def lexsort(keys, axis=-1):
  """Indices sorting by several keys, the last one primary."""
  keys = tuple(keys)
  check_arraylike("lexsort", *keys)
  return _lexsort(tuple(util.asarray(k) for k in keys), axis=operator.index(axis))


@jit_named("lexsort", static_argnames=("axis",))
def _lexsort(keys, axis):
  if len(keys) == 0:
    raise TypeError("need sequence of keys with len > 0 in lexsort")
  if len({util.shape(k) for k in keys}) > 1:
    raise ValueError("all keys need to be the same shape")
  if util.ndim(keys[0]) == 0:
    return lax.full((), 0, dtypes.default_int_dtype())
  axis = util.canonicalize_axis(axis, util.ndim(keys[0]))
  iota = iota_like(keys[0], axis)
  return lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))[-1]



@jit
def sort_complex(a):
  """``a`` sorted along its last axis, as complex numbers."""
  arr = _ensure("sort_complex", a)
  out = lax.sort(arr)
  return lax.convert_element_type(out, dtypes.to_complex_dtype(util.aval_of(out).dtype))


def _partition_setup(fun_name, a, kth, axis):
  arr = _ensure(fun_name, a)
  if dtypes.issubdtype(util.aval_of(arr).dtype, np.complexfloating):
    # JAX's error class, too.
    raise NotImplementedError(f"jnp.{fun_name} for complex dtype is not implemented.")
  axis = util.canonicalize_axis(axis, util.ndim(arr))
  kth = util.canonicalize_axis(kth, util.shape(arr)[axis])
  return _moveaxis(arr, axis, -1), axis, kth


def _moveaxis(x, src, dst):
  nd = util.ndim(x)
  src, dst = src % nd, dst % nd
  if src == dst:
    return x
  perm = [i for i in range(nd) if i != src]
  perm.insert(dst, src)
  return lax.transpose(x, tuple(perm))


def _negated(arr):
  """A key whose top_k finds ``arr``'s smallest entries, as JAX does it:
  ``-arr``, or ``-(arr + 1)`` for unsigned ints so that 0 stays smallest.
  (Bools are refused by ``neg``, as in JAX.)"""
  dtype = util.aval_of(arr).dtype
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return lax.neg(lax.add(arr, np.ones((), dtype)))
  return lax.neg(arr)


@functools.partial(jit, static_argnames=("kth", "axis"))
def partition(a, kth, axis=-1):
  """A copy of ``a`` with the ``kth`` smallest value (along ``axis``) in
  place, smaller ones before it and larger ones after, in JAX's order (two
  ``top_k``s; NaNs with the sign bit set come first, as in JAX)."""
  arr, axis, kth = _partition_setup("partition", a, kth, axis)
  dtype = util.aval_of(arr).dtype
  n = util.shape(arr)[-1]
  bottom = lax.neg(lax.top_k(_negated(arr), kth + 1)[0])
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    bottom = lax.sub(bottom, np.ones((), dtype))
  top = lax.top_k(arr, n - kth - 1)[0]
  out = lax.concatenate([bottom, top], util.ndim(arr) - 1)
  return _moveaxis(out, -1, axis)


@functools.partial(jit, static_argnames=("kth", "axis"))
def argpartition(a, kth, axis=-1):
  """Indices that partition ``a`` at ``kth`` along ``axis``: the same indices
  JAX returns (the smallest in ``top_k`` order, then the rest in increasing
  index order)."""
  arr, axis, kth = _partition_setup("argpartition", a, kth, axis)
  n = util.shape(arr)[-1]
  last = util.ndim(arr) - 1
  bottom = lax.top_k(_negated(arr), kth + 1)[1]
  # The other indices, ascending: sort the bottom ones together with all
  # indices; an index seen twice is a bottom one.
  iota = lax.broadcasted_iota(np.int32, util.shape(arr), last)
  keys = lax.concatenate([bottom, iota], last)
  marks = lax.concatenate([lax.full_like(bottom, 0), lax.full_like(iota, 1)], last)
  keys, marks = lax.sort((keys, marks), dimension=last, num_keys=2)
  total = n + kth + 1
  head = lax.slice_in_dim(keys, 0, total - 1, axis=last)
  tail = lax.slice_in_dim(keys, 1, total, axis=last)
  seen_twice = lax.concatenate(
      [lax.full_like(lax.slice_in_dim(keys, 0, 1, axis=last), False, np.bool_),
       lax.eq(head, tail)], last)
  rest = lax.bitwise_and(lax.eq(marks, lax.full_like(marks, 1)), lax.bitwise_not(seen_twice))
  _, keys = lax.sort((lax.bitwise_not(rest), keys), dimension=last, num_keys=1)
  top = lax.slice_in_dim(keys, 0, n - kth - 1, axis=last)
  out = lax.concatenate([bottom, top], last)
  return _moveaxis(out, -1, axis)


# ---------------------------------------------------------------------------
# searchsorted

_METHODS = ("scan", "scan_unrolled", "sort", "compare_all")


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
  """Where ``v``'s elements would go in the sorted 1-D ``a`` to keep it
  sorted, in sort's total order (NaNs last).  The four methods agree."""
  if sorter is None:
    check_arraylike("searchsorted", a, v)
  else:
    check_arraylike("searchsorted", a, v, sorter)
  if util.ndim(a) != 1:
    raise ValueError("a should be 1-dimensional")
  if side not in ("left", "right"):
    raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                     "['left', 'right']")
  if method not in _METHODS:
    raise ValueError(f"Unsupported method: {method}")
  a, v = util.promote_dtypes(a, v)
  if sorter is not None:
    a = take(a, util.asarray(sorter))
  dtype = np.dtype(np.int32) if util.shape(a)[0] <= np.iinfo(np.int32).max \
      else np.dtype(np.int64)
  dtype = dtypes.canonicalize_dtype(dtype)
  return _searchsorted(a, v, side=side, method=method, dtype=dtype)


@jit_named("searchsorted", static_argnames=("side", "method", "dtype"))
def _searchsorted(a, v, side, method, dtype):
  n = util.shape(a)[0]
  if n == 0:
    return lax.full(util.shape(v), 0, dtype)
  if method in ("scan", "scan_unrolled"):
    return _search_by_bisection(a, v, side, dtype, method == "scan_unrolled")
  if method == "compare_all":
    return _search_by_comparing(a, v, side, dtype)
  return _search_by_sorting(a, v, side, dtype)



def _search_by_bisection(a, v, side, dtype, unrolled):
  # Invariant: the answer lies in (low, high]; each step halves the interval.
  n = util.shape(a)[0]
  go_left = total_le if side == "left" else total_lt
  udtype = np.dtype(np.uint64) if np.dtype(dtype).itemsize == 8 else np.dtype(np.uint32)
  shape = util.shape(v)
  two = np.ones((), udtype) + np.ones((), udtype)

  def step(carry, _):
    low, high = carry
    mid = lax.add(low, lax.div(lax.sub(high, low), lax.full_like(low, two)))
    left = go_left(v, take(a, mid))
    return (lax.select(left, low, mid), lax.select(left, mid, high)), None

  levels = int(np.ceil(np.log2(n + 1)))
  carry = (lax.full(shape, 0, udtype), lax.full(shape, n, udtype))
  if unrolled:
    for _ in range(levels):
      carry, _ = step(carry, None)
  else:
    carry, _ = lax.scan(step, carry, None, length=levels)
  return lax.convert_element_type(carry[1], dtype)


def _search_by_comparing(a, v, side, dtype):
  before = total_lt if side == "left" else total_le
  v_ndim = util.ndim(v)
  a_wide = lax.broadcast_in_dim(a, (util.shape(a)[0],) + util.shape(v), (0,))
  v_wide = lax.broadcast_in_dim(v, util.shape(a_wide), tuple(range(1, v_ndim + 1)))
  hits = lax.convert_element_type(before(a_wide, v_wide), dtype)
  return lax.reduce_sum(hits, (0,))


def _rank(x, dtype):
  """Each element's position in the stable sort of the 1-D ``x``."""
  iota = lax.iota(dtype, util.shape(x)[0])
  return inverse_permutation(lax.sort_key_val(x, iota)[1])


def _search_by_sorting(a, v, side, dtype):
  # A query's insertion point is its rank among a and the queries, less its
  # rank among the queries; ties go after a's elements for side='right'.
  n, m = util.shape(a)[0], util.aval_of(v).size
  work = np.dtype(np.int32) if n + m <= np.iinfo(np.int32).max else np.dtype(np.int64)
  flat = lax.reshape(v, (m,))
  if side == "left":
    index = lax.slice(_rank(lax.concatenate([flat, a], 0), work), (0,), (m,))
  else:
    index = lax.slice(_rank(lax.concatenate([a, flat], 0), work), (n,), (n + m,))
  out = lax.sub(index, _rank(flat, work))
  return lax.convert_element_type(lax.reshape(out, util.shape(v)), dtype)
