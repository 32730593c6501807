"""Set operations: unique (and the array API's unique_*), union1d,
intersect1d, setdiff1d, setxor1d, isin.

Results whose size depends on the values need concrete inputs, unless a
static ``size=`` is given: then they work under ``jit`` and ``vmap``, padded
with ``fill_value`` (or, as in JAX, a value from the data).  Everything is
built on sorts: a stable sort by "is not selected" lists selected entries
first, and sorting a permutation inverts it, so no scatter is needed.
"""
import functools
import math
import operator
from typing import NamedTuple

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import sorting
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike

_SIZE_HINT = ("To make jnp.unique() compatible with JIT and other transforms, you can "
              "specify a concrete value for the size argument, which will determine the "
              "output size.")


def _concrete_array(x, context):
  """The concrete value of ``x`` as an Array (raising JAX's error if traced)."""
  value = util.concrete_or_error(x, context)
  return util.asarray(np.asarray(value)) if not isinstance(value, core.ArrayBase) else value


def _static_size(size, fun_name):
  return operator.index(util.concrete_or_error(size, f"The error arose in {fun_name}()"))


def _ravel(x):
  x = util.asarray(x)
  return lax.reshape(x, (util.aval_of(x).size,))


def _first(x, count):
  """The first ``count`` (static) entries of 1-D ``x``: cut, or padded with zeros."""
  n = util.shape(x)[0]
  if count <= n:
    return lax.slice_in_dim(x, 0, count, axis=0)
  pad = [(0, count - n, 0)] + [(0, 0, 0)] * (util.ndim(x) - 1)
  return lax.pad(x, np.zeros((), util.aval_of(x).dtype), pad)


def _selected_first(mask, *arrays):
  """``arrays`` reordered along axis 0 so that entries where ``mask`` is true
  come first, each group in its original order."""
  key = lax.bitwise_not(mask)
  flat = [a for a in arrays if util.ndim(a) == 1]
  outs = iter(lax.sort((key, *flat), dimension=0, num_keys=1)[1:]) if flat else None
  result = []
  for a in arrays:
    if util.ndim(a) == 1:
      result.append(next(outs))
    else:
      # Rows: every column moves with the same (stable) sort of the key.
      wide = lax.broadcast_in_dim(key, util.shape(a), (0,))
      result.append(lax.sort((wide, a), dimension=0, num_keys=1)[1])
  return result


def _valid_rows(count, size, like):
  """(size, 1, ...) bools: which of ``size`` output rows hold real results."""
  valid = lax.lt(lax.iota(util.aval_of(count).dtype, size), count)
  return lax.broadcast_in_dim(valid, (size,) + util.shape(like)[1:], (0,))


def _isnan(x):
  if dtypes.issubdtype(util.aval_of(x).dtype, np.complexfloating):
    return lax.bitwise_or(lax.ne(lax.real(x), lax.real(x)), lax.ne(lax.imag(x), lax.imag(x)))
  if dtypes.issubdtype(util.aval_of(x).dtype, np.floating):
    return lax.ne(x, x)
  return lax.full_like(x, False, np.bool_)


# ---------------------------------------------------------------------------
# unique

@functools.partial(jit, static_argnames=("equal_nan",))
def _sorted_rows(aux, equal_nan):
  """Rows of ``aux`` (axis 0) sorted lexicographically, the permutation, and
  a mask of the rows that differ from the previous one."""
  dtype = util.aval_of(aux).dtype
  if dtypes.issubdtype(dtype, np.complexfloating):
    # A NaN in either part makes the number NaN: make them all the same NaN.
    aux = lax.select(_isnan(aux), lax.full_like(aux, np.nan), aux)
  n, *rest = util.shape(aux)
  m = math.prod(rest)
  index_dtype = sorting.index_dtype(n)
  iota = lax.iota(index_dtype, n)
  cols = lax.reshape(aux, (n, m))
  columns = [lax.reshape(lax.slice_in_dim(cols, j, j + 1, axis=1), (n,)) for j in range(m)]
  *columns, perm = lax.sort((*columns, iota), dimension=0, num_keys=m)
  aux = lax.reshape(lax.concatenate([lax.expand_dims(c, (1,)) for c in columns], 1),
                    (n, *rest))
  head = lax.slice_in_dim(aux, 1, n, axis=0)
  prev = lax.slice_in_dim(aux, 0, n - 1, axis=0)
  differs = lax.ne(head, prev)
  if equal_nan and dtypes.issubdtype(dtype, np.inexact):
    differs = lax.bitwise_and(differs, lax.bitwise_not(
        lax.bitwise_and(_isnan(head), _isnan(prev))))
  if rest:
    differs = lax.reduce_or(differs, tuple(range(1, len(rest) + 1)))
  mask = lax.concatenate([lax.full((1,), True, np.bool_), differs], 0)
  return aux, mask, perm


def _unique(ar, axis, return_index=False, return_inverse=False, return_counts=False,
            equal_nan=True, size=None, fill_value=None, return_true_size=False):
  """unique along ``axis`` of ``ar``; ``size=None`` needs concrete values."""
  shape = util.shape(ar)
  n = shape[axis]
  if n == 0 and size and fill_value is None:
    raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                     "fill_value must be specified")
  aux = sorting._moveaxis(ar, axis, 0) if len(shape) > 1 else ar
  if util.aval_of(aux).size == 0:
    return _unique_empty(aux, n, axis, return_index, return_inverse, return_counts,
                         size, fill_value, return_true_size)
  aux, mask, perm = _sorted_rows(aux, equal_nan=bool(equal_nan))
  index_dtype = util.aval_of(perm).dtype
  count = lax.reduce_sum(lax.convert_element_type(mask, index_dtype), (0,))
  if size is None:
    size = int(util.concrete_or_error(count, "The error arose in jnp.unique(). " + _SIZE_HINT))
  # The unique rows and their first positions come first; past the true
  # size JAX repeats the first (smallest) row and its position.
  values, firsts = _selected_first(mask, aux, perm)
  values, firsts = _first(values, size), _first(firsts, size)
  valid = _valid_rows(count, size, values)
  smallest = lax.slice_in_dim(aux, 0, 1, axis=0)
  values = lax.select(valid, values, lax.broadcast_in_dim(
      smallest, util.shape(values), tuple(range(util.ndim(values)))))
  firsts = lax.select(_valid_rows(count, size, firsts), firsts,
                      lax.full_like(firsts, lax.reshape(lax.slice(perm, (0,), (1,)), ())))
  if fill_value is not None:
    values = lax.select(valid, values, _filled(fill_value, values))
  result = (sorting._moveaxis(values, 0, axis) if util.ndim(values) > 1 else values,)
  int_dtype = dtypes.default_int_dtype()
  if return_index:
    result += (firsts,)
  if return_inverse:
    group = lax.sub(lax.cumsum(lax.convert_element_type(mask, int_dtype), 0),
                    np.ones((), int_dtype))
    result += (lax.sort_key_val(perm, group)[1],)
  if return_counts:
    result += (_counts(mask, size, n, int_dtype),)
  if return_true_size:
    result += (count,)
  return result[0] if len(result) == 1 else result


def _filled(fill_value, like):
  fill = lax.convert_element_type(util.asarray(fill_value), util.aval_of(like).dtype)
  return lax.broadcast(fill, util.shape(like))


def _unique_empty(aux, n, axis, return_index, return_inverse, return_counts, size,
                  fill_value, return_true_size):
  """unique of an input with no elements (no rows, or rows of no elements:
  those are all equal)."""
  rest = util.shape(aux)[1:]
  rows = (1 if n else 0) if size is None else size
  values = lax.full((rows,) + rest, 0, util.aval_of(aux).dtype)
  if fill_value is not None:
    values = _filled(fill_value, values)
  result = (sorting._moveaxis(values, 0, axis) if len(rest) else values,)
  int_dtype = dtypes.default_int_dtype()
  if return_index:
    result += (lax.full((1 if n else 0,), 0, sorting.index_dtype(n)),)
  if return_inverse:
    result += (lax.full((n,), 0, int_dtype),)
  if return_counts:
    result += (lax.full((1,), n, int_dtype) if n else lax.full((0,), 0, int_dtype),)
  if return_true_size:
    result += (lax.full((), 1 if n else 0, sorting.index_dtype(n)),)
  return result[0] if len(result) == 1 else result


def _counts(mask, size, n, int_dtype):
  starts = sorting.nonzero_1d(mask, size + 1, fill_value=n, dtype=int_dtype)
  return lax.sub(lax.slice(starts, (1,), (size + 1,)), lax.slice(starts, (0,), (size,)))


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
  """The sorted unique elements (or rows/columns with ``axis``) of ``ar``.

  Without ``size``, ``ar`` must be concrete.  With a static ``size`` the
  result is cut or padded to it: with ``fill_value``, or else with the
  smallest element (counts 0, indices of it), as in JAX.
  """
  check_arraylike("unique", ar)
  if size is None:
    arr = _concrete_array(ar, "The error arose for the first argument of jnp.unique(). "
                          + _SIZE_HINT)
  else:
    arr = util.asarray(ar)
    size = operator.index(util.concrete_or_error(
        size, "The error arose for the size argument of jnp.unique(). " + _SIZE_HINT))
  arr_shape = util.shape(arr)
  if axis is None:
    arr, axis_int = _ravel(arr), 0
  else:
    axis_int = util.canonicalize_axis(axis, len(arr_shape))
  result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                   equal_nan=equal_nan, size=size, fill_value=fill_value)
  if return_inverse and axis is None:
    at = 2 if return_index else 1
    result = (*result[:at], lax.reshape(result[at], arr_shape), *result[at + 1:])
  return result


class _UniqueAllResult(NamedTuple):
  values: object
  indices: object
  inverse_indices: object
  counts: object


class _UniqueCountsResult(NamedTuple):
  values: object
  counts: object


class _UniqueInverseResult(NamedTuple):
  values: object
  inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
  """The array API's unique_all: values, indices, inverse_indices, counts
  (NaNs are all distinct)."""
  check_arraylike("unique_all", x)
  return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                  return_counts=True, equal_nan=False, size=size,
                                  fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
  """The array API's unique_counts: values and counts."""
  check_arraylike("unique_counts", x)
  return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                     fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
  """The array API's unique_inverse: values and inverse_indices."""
  check_arraylike("unique_inverse", x)
  return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                      fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
  """The array API's unique_values."""
  check_arraylike("unique_values", x)
  return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ---------------------------------------------------------------------------
# Membership

_IN1D_METHODS = ("auto", "compare_all", "binary_search", "sort")


@functools.partial(jit, static_argnames=("invert", "method", "assume_unique"))
def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
  arr1, arr2 = util.promote_dtypes(ar1, ar2)
  arr1, arr2 = _ravel(arr1), _ravel(arr2)
  n1, n2 = util.shape(arr1)[0], util.shape(arr2)[0]
  if n1 == 0 or n2 == 0:
    return lax.full((n1,), invert, np.bool_)
  if method in ("auto", "compare_all"):
    wide1 = lax.broadcast_in_dim(arr1, (n1, n2), (0,))
    wide2 = lax.broadcast_in_dim(arr2, (n1, n2), (1,))
    found = lax.reduce_or(lax.eq(wide1, wide2), (1,))
  elif method == "binary_search":
    arr2 = lax.sort(arr2)
    ind = sorting.searchsorted(arr2, arr1)
    found = lax.eq(arr1, sorting.take(arr2, ind))
  else:
    found = _in1d_by_sorting(arr1, arr2)
  return lax.bitwise_not(found) if invert else found


def _in1d_by_sorting(arr1, arr2):
  # Sort both together, arr2's entries first among equals; an entry of arr1
  # is found if its run of equal values starts with one of arr2's.
  n1, n2 = util.shape(arr1)[0], util.shape(arr2)[0]
  n = n1 + n2
  idx_dtype = sorting.index_dtype(n)
  marks = lax.concatenate([lax.full((n1,), 1, idx_dtype), lax.full((n2,), 0, idx_dtype)], 0)
  iota = lax.iota(idx_dtype, n)
  aux, marks, perm = lax.sort((lax.concatenate([arr1, arr2], 0), marks, iota), num_keys=2)
  starts = lax.concatenate([lax.full((1,), True, np.bool_),
                            lax.ne(lax.slice(aux, (1,), (n,)), lax.slice(aux, (0,), (n - 1,)))], 0)
  run = lax.cumsum(lax.convert_element_type(starts, idx_dtype), 0)
  zero = lax.full_like(marks, 0)
  run_with_b = lax.select(lax.bitwise_and(starts, lax.eq(marks, zero)), run,
                          lax.full_like(run, 0))
  found = lax.eq(lax.cummax(run_with_b, 0), run)
  found = lax.sort_key_val(perm, found)[1]
  return lax.slice(found, (0,), (n1,))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
  """Whether each element of ``element`` is in ``test_elements`` (same shape
  as ``element``).  Methods 'auto'/'compare_all', 'binary_search' and 'sort'
  agree."""
  check_arraylike("isin", element, test_elements)
  if method not in _IN1D_METHODS:
    raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                     "'binary_search', 'sort', and 'auto'")
  result = _in1d(util.asarray(element), util.asarray(test_elements), invert=bool(invert),
                 method=method, assume_unique=bool(assume_unique))
  return lax.reshape(result, util.shape(element))


# ---------------------------------------------------------------------------
# Two-set operations

def _fill_tail(vals, count, fill_value):
  """Entries of ``vals`` past ``count`` replaced by ``fill_value``; by
  default, as in JAX, by the smallest valid entry (0 if there is none)."""
  size = util.shape(vals)[0]
  valid = _valid_rows(count, size, vals)
  if fill_value is None:
    # JAX's steps, so that NaNs come out the same: zeros, then the max, then the min.
    vals = lax.select(valid, vals, lax.full_like(vals, 0))
    if size:
      vals = lax.select(valid, vals, lax.full_like(vals, lax.reduce_max(vals, (0,))))
      vals = lax.select(valid, vals, lax.full_like(vals, lax.reduce_min(vals, (0,))))
    return vals
  fill = lax.convert_element_type(util.asarray(fill_value), util.aval_of(vals).dtype)
  return lax.select(valid, vals, lax.broadcast(fill, (size,)))


def union1d(ar1, ar2, *, size=None, fill_value=None):
  """The sorted unique elements of either array (both flattened)."""
  check_arraylike("union1d", ar1, ar2)
  if size is None:
    ar1 = _concrete_array(ar1, "The error arose in union1d()")
    ar2 = _concrete_array(ar2, "The error arose in union1d()")
  else:
    size = _static_size(size, "union1d")
  arr1, arr2 = util.promote_dtypes(_ravel(ar1), _ravel(ar2))
  return unique(lax.concatenate([arr1, arr2], 0), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """The sorted unique elements of ``ar1`` not in ``ar2``; with ``size``,
  padded with ``fill_value`` (default 0)."""
  check_arraylike("setdiff1d", ar1, ar2)
  if size is None:
    ar1 = _concrete_array(ar1, "The error arose in setdiff1d()")
  else:
    size = _static_size(size, "setdiff1d")
  arr1, arr2 = _ravel(ar1), _ravel(ar2)
  dtype = util.aval_of(arr1).dtype
  fill = lax.convert_element_type(util.asarray(0 if fill_value is None else fill_value),
                                  dtype)
  n1 = util.shape(arr1)[0]
  if n1 == 0:
    return lax.full((size or 0,), fill, dtype)
  count = None
  if not assume_unique:
    arr1, count = _unique(arr1, 0, size=n1 if size is not None else None,
                          return_true_size=True)
  mask = _in1d(arr1, arr2, invert=True, assume_unique=bool(assume_unique))
  if count is not None and size is not None:
    mask = lax.bitwise_and(mask, lax.lt(lax.iota(util.aval_of(count).dtype,
                                                 util.shape(arr1)[0]), count))
  kept = lax.reduce_sum(lax.convert_element_type(mask, np.int32), (0,))
  if size is None:
    size = int(util.concrete_or_error(kept, "The error arose in setdiff1d()"))
  vals, = _selected_first(mask, arr1)
  vals = _first(vals, size)
  return lax.select(lax.lt(lax.iota(np.int32, size), kept), vals,
                    lax.broadcast(fill, (size,)))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """The sorted elements in exactly one of the arrays."""
  check_arraylike("setxor1d", ar1, ar2)
  arr1, arr2 = util.promote_dtypes(_ravel(ar1), _ravel(ar2))
  if size is None:
    arr1 = _concrete_array(arr1, "The error arose in setxor1d()")
    arr2 = _concrete_array(arr2, "The error arose in setxor1d()")
  else:
    size = _static_size(size, "setxor1d")
  fun = _setxor1d if size is None else _setxor1d_jit
  return fun(arr1, arr2, fill_value, assume_unique=bool(assume_unique), size=size)


def _unique_part(arr, idx_dtype):
  """1-D ``arr``'s unique values first, sorted (padded to its size), the
  positions of their first occurrences, and which entries are real."""
  n = util.shape(arr)[0]
  if n == 0:
    return arr, lax.iota(idx_dtype, 0), lax.full((0,), True, np.bool_)
  values, first, count = _unique(arr, 0, size=n, return_index=True, return_true_size=True)
  valid = lax.lt(lax.iota(idx_dtype, n), lax.convert_element_type(count, idx_dtype))
  return values, lax.convert_element_type(first, idx_dtype), valid


def _joined(arr1, arr2, assume_unique, idx_dtype):
  """Both arrays (their unique values, unless assumed unique) end to end,
  each entry's position in its own array, and which entries are real."""
  if assume_unique:
    n1, n2 = util.shape(arr1)[0], util.shape(arr2)[0]
    parts = [(arr1, lax.iota(idx_dtype, n1), lax.full((n1,), True, np.bool_)),
             (arr2, lax.iota(idx_dtype, n2), lax.full((n2,), True, np.bool_))]
  else:
    parts = [_unique_part(arr1, idx_dtype), _unique_part(arr2, idx_dtype)]
  (u1, i1, v1), (u2, i2, v2) = parts
  return lax.concatenate([u1, u2], 0), i1, i2, lax.concatenate([v1, v2], 0)


def _setxor1d(arr1, arr2, fill_value, assume_unique, size):
  n = util.shape(arr1)[0] + util.shape(arr2)[0]
  idx_dtype = sorting.index_dtype(n)
  arr, _, _, valid = _joined(arr1, arr2, assume_unique, idx_dtype)
  if n == 0:
    return arr if size is None else lax.full(
        (size,), 0 if fill_value is None else fill_value, util.aval_of(arr).dtype)
  # Real entries first, sorted; one is kept if it differs from both its
  # neighbours (the last real one has none after it).
  _, aux = lax.sort((lax.bitwise_not(valid), arr), num_keys=2)
  total = lax.reduce_sum(lax.convert_element_type(valid, idx_dtype), (0,))
  iota = lax.iota(idx_dtype, n)
  differs = lax.ne(lax.slice(aux, (1,), (n,)), lax.slice(aux, (0,), (n - 1,)))
  true1 = lax.full((1,), True, np.bool_)
  after = lax.concatenate([differs, true1], 0)
  before = lax.concatenate([true1, differs], 0)
  last = lax.eq(iota, lax.sub(total, np.ones((), idx_dtype)))
  keep = lax.bitwise_and(lax.bitwise_and(before, lax.bitwise_or(after, last)),
                         lax.lt(iota, total))
  kept = lax.reduce_sum(lax.convert_element_type(keep, idx_dtype), (0,))
  vals, = _selected_first(keep, aux)
  if size is None:
    return _first(vals, int(util.concrete_or_error(kept, "The error arose in setxor1d()")))
  return _fill_tail(_first(vals, size), kept, fill_value)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
  """The sorted unique elements in both arrays; with ``return_indices``, also
  the index of each one's first occurrence in ``ar1`` and ``ar2``."""
  check_arraylike("intersect1d", ar1, ar2)
  arr1, arr2 = util.promote_dtypes(_ravel(ar1), _ravel(ar2))
  if size is None:
    arr1 = _concrete_array(arr1, "The error arose in intersect1d()")
    arr2 = _concrete_array(arr2, "The error arose in intersect1d()")
  else:
    size = _static_size(size, "intersect1d")
  fun = _intersect1d if size is None else _intersect1d_jit
  return fun(arr1, arr2, fill_value, assume_unique=bool(assume_unique), size=size,
             return_indices=bool(return_indices))


def _intersect1d(arr1, arr2, fill_value, assume_unique, size, return_indices):
  n1, n2 = util.shape(arr1)[0], util.shape(arr2)[0]
  n = n1 + n2
  idx_dtype = sorting.index_dtype(n)
  arr, ind1, ind2, valid = _joined(arr1, arr2, assume_unique, idx_dtype)
  if n == 0:
    out = lax.full((size or 0,), 0 if fill_value is None else fill_value,
                   util.aval_of(arr).dtype)
    empty = lax.full((size or 0,), 0, idx_dtype)
    return (out, empty, empty) if return_indices else out
  # Real entries first, sorted, arr1's before arr2's among equals; a value
  # in both shows up as two equal neighbours.
  _, aux, origin = lax.sort((lax.bitwise_not(valid), arr, lax.iota(idx_dtype, n)),
                            num_keys=2)
  both = lax.bitwise_and(lax.eq(lax.slice(aux, (1,), (n,)), lax.slice(aux, (0,), (n - 1,))),
                         lax.slice(_valid_prefix(valid), (1,), (n,)))
  kept = lax.reduce_sum(lax.convert_element_type(both, idx_dtype), (0,))
  if size is None:
    size = int(util.concrete_or_error(kept, "The error arose in intersect1d()"))
  head = lax.slice(aux, (0,), (n - 1,))
  vals, first, second = _selected_first(both, head, lax.slice(origin, (0,), (n - 1,)),
                                        lax.slice(origin, (1,), (n,)))
  vals, first, second = _first(vals, size), _first(first, size), _first(second, size)
  vals = _fill_tail(vals, kept, fill_value)
  if not return_indices:
    return vals
  valid_out = lax.lt(lax.iota(idx_dtype, size), kept)
  # Positions in the concatenation back to positions in arr1 / arr2.
  i1 = sorting.take(ind1, first) if n1 else first
  i2 = sorting.take(ind2, lax.sub(second, lax.full_like(second, n1))) if n2 else second
  i1 = lax.select(valid_out, lax.convert_element_type(i1, idx_dtype), lax.full_like(first, n1))
  i2 = lax.select(valid_out, lax.convert_element_type(i2, idx_dtype), lax.full_like(second, n2))
  return vals, i1, i2


# Without a size the values must be concrete: the helpers run eagerly then.
_setxor1d_jit = jit(_setxor1d, static_argnames=("assume_unique", "size"))
_intersect1d_jit = jit(_intersect1d, static_argnames=("assume_unique", "size", "return_indices"))


def _valid_prefix(valid):
  """After sorting by "not valid", the valid flags are a prefix."""
  n = util.shape(valid)[0]
  count = lax.reduce_sum(lax.convert_element_type(valid, np.int32), (0,))
  return lax.lt(lax.iota(np.int32, n), count)
