"""Counting and binning: bincount, digitize, histogram_bin_edges, histogram,
histogram2d, histogramdd.

Bins are found with ``searchsorted`` and counted with a scatter-add
(``zeros(n).at[idx].add(w, mode='drop')``), so everything works under
``jit`` once the output size is static (``bincount(length=)``, integer or
array ``bins``).
"""
import builtins
import math
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import creation
from purejax._src.numpy import sorting
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
  """Counts (or sums ``weights``) of each non-negative integer in 1-D ``x``;
  negative values count as 0, as in JAX.  Without ``length`` the values
  must be concrete."""
  check_arraylike("bincount", x)
  x = util.asarray(x)
  if util.aval_of(x).dtype == np.bool_:
    x = lax.convert_element_type(x, np.int32)
  if not dtypes.issubdtype(util.aval_of(x).dtype, np.integer):
    raise TypeError("x argument to bincount must have an integer type; got "
                    f"{util.aval_of(x).dtype}")
  if util.ndim(x) != 1:
    raise ValueError("only 1-dimensional input supported.")
  minlength = operator.index(util.concrete_or_error(
      minlength, "The error occurred because of argument 'minlength' of jnp.bincount."))
  if length is None:
    values = np.asarray(util.concrete_or_error(
        x, "The error occurred because of argument 'x' of jnp.bincount. To avoid this "
        "error, pass a static `length` argument."))
    length = builtins.max(minlength, values.size and int(builtins.max(0, values.max())) + 1)
  else:
    length = operator.index(util.concrete_or_error(
        length, "The error occurred because of argument 'length' of jnp.bincount."))
  if weights is None:
    weights = np.array(1, dtypes.default_int_dtype())
  else:
    check_arraylike("bincount", weights)
    weights = util.asarray(weights)
    if util.shape(weights) != util.shape(x):
      raise ValueError("type of weights must match type of x. Got "
                       f"typeof(x)={util.aval_of(x).str_short()} and "
                       f"typeof(weights)={util.aval_of(weights).str_short()}")
  dtype = util.aval_of(weights).dtype
  x = lax.max(x, lax.full_like(x, 0))
  return creation.zeros(length, dtype).at[x].add(weights, mode="drop")


def digitize(x, bins, right=False, *, method=None):
  """The index of the bin each element of ``x`` falls in (bins increasing or
  decreasing); ``method`` is passed to ``searchsorted``."""
  check_arraylike("digitize", x, bins)
  x, bins = util.asarray(x), util.asarray(bins)
  right = bool(util.concrete_or_error(right, "right argument of jnp.digitize()"))
  if util.ndim(bins) != 1:
    raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
  n = util.shape(bins)[0]
  if n == 0:
    return lax.full(util.shape(x), 0, np.int32)
  side = "left" if right else "right"
  kwds = {} if method is None else {"method": method}
  up = sorting.searchsorted(bins, x, side=side, **kwds)
  down = lax.sub(lax.full_like(up, n),
                 sorting.searchsorted(lax.rev(bins, (0,)), x, side=side, **kwds))
  increasing = lax.ge(lax.slice(bins, (n - 1,), (n,))[0], lax.slice(bins, (0,), (1,))[0])
  return lax.select(lax.broadcast(increasing, util.shape(up)), up, down)


def _static_bins(bins, fun_name):
  return operator.index(util.concrete_or_error(bins, f"bins argument of {fun_name}"))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
  """The edges of ``histogram``'s bins: ``bins`` itself when it is 1-D, else
  ``bins + 1`` evenly spaced edges over ``range`` (default: the data's)."""
  if isinstance(bins, str):
    raise NotImplementedError("string values for `bins` not implemented.")
  check_arraylike("histogram_bin_edges", a, bins)
  arr = util.asarray(a)
  dtype = dtypes.to_inexact_dtype(util.aval_of(arr).dtype)
  if np.ndim(bins) == 1:
    return lax.convert_element_type(util.asarray(bins), dtype)
  count = _static_bins(bins, "histogram_bin_edges")
  if range is None:
    lo, hi = lax.reduce_min(arr, tuple(builtins.range(util.ndim(arr)))), \
        lax.reduce_max(arr, tuple(builtins.range(util.ndim(arr))))
  else:
    if np.shape(range) != (2,):
      raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    lo, hi = range
  lo = lax.convert_element_type(util.asarray(lo), dtype)
  hi = lax.convert_element_type(util.asarray(hi), dtype)
  # An empty range is widened by half a unit each way, as NumPy does.
  flat = lax.eq(lax.sub(hi, lo), lax.full_like(lo, 0))
  half = lax.full_like(lo, 0.5)
  lo = lax.select(flat, lax.sub(lo, half), lo)
  hi = lax.select(flat, lax.add(hi, half), hi)
  return creation.linspace(lo, hi, count + 1, dtype=dtype)


def _diff(x):
  n = util.shape(x)[0]
  return lax.sub(lax.slice(x, (1,), (n,)), lax.slice(x, (0,), (n - 1,)))


def histogram(a, bins=10, range=None, weights=None, density=None):
  """Counts (or summed ``weights``) of ``a``'s values in each bin, and the
  bin edges; the last bin includes its right edge."""
  if weights is None:
    check_arraylike("histogram", a, bins)
    a, = util.promote_dtypes_inexact(a)
    weights = lax.full_like(a, 1)
  else:
    check_arraylike("histogram", a, bins, weights)
    if np.shape(a) != np.shape(weights):
      raise ValueError("weights should have the same shape as a.")
    a, weights = util.promote_dtypes_inexact(a, weights)
  edges = histogram_bin_edges(a, bins, range, weights)
  n = util.shape(edges)[0]
  idx = sorting.searchsorted(edges, a, side="right")
  at_end = lax.eq(a, lax.broadcast(lax.slice(edges, (n - 1,), (n,))[0], util.shape(a)))
  idx = lax.select(at_end, lax.full_like(idx, n - 1), idx)
  counts = creation.zeros(n, util.aval_of(weights).dtype).at[idx].add(weights)
  counts = lax.slice(counts, (1,), (n,))
  if density:
    total = lax.reduce_sum(counts, (0,))
    counts = lax.div(lax.div(counts, _diff(edges)), lax.broadcast(total, (n - 1,)))
  return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
  """The 2-D histogram of points (x, y): counts, x edges, y edges."""
  check_arraylike("histogram2d", x, y)
  try:
    count = len(bins)
  except TypeError:
    count = 1
  if count not in (1, 2):
    edges = util.asarray(bins)
    bins = [edges, edges]
  x, y = util.promote_dtypes(x, y)
  sample = lax.concatenate([lax.expand_dims(x, (1,)), lax.expand_dims(y, (1,))], 1)
  hist, edges = histogramdd(sample, bins, range, weights, density)
  return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
  """The histogram of N points in D dimensions (``sample`` of shape (N, D)):
  counts of shape (bins_1, ..., bins_D) and the list of D edge arrays."""
  if weights is None:
    check_arraylike("histogramdd", sample)
    sample, = util.promote_dtypes_inexact(sample)
  else:
    check_arraylike("histogramdd", sample, weights)
    if np.shape(weights) != np.shape(sample)[:1]:
      raise ValueError("should have one weight for each sample.")
    sample, weights = util.promote_dtypes_inexact(sample, weights)
  num, dims = util.shape(sample)
  if range is not None and (len(range) != dims or builtins.any(
      r is not None and np.shape(r)[0] != 2 for r in range)):
    raise ValueError(f"For sample.shape={(num, dims)}, range must be a sequence of {dims} "
                     f"pairs or Nones; got range={range}")
  try:
    per_dim = list(bins)
  except TypeError:
    per_dim = dims * [bins]
  else:
    if len(per_dim) != dims:
      raise ValueError("should be a bin for each dimension.")
  flat_idx, all_edges = None, []
  sizes = []
  for i in builtins.range(dims):
    column = lax.reshape(lax.slice_in_dim(sample, i, i + 1, axis=1), (num,))
    edges = histogram_bin_edges(column, per_dim[i], None if range is None else range[i],
                                weights)
    n = util.shape(edges)[0]
    idx = sorting.searchsorted(edges, column, side="right")
    at_end = lax.eq(column, lax.broadcast(lax.slice(edges, (n - 1,), (n,))[0], (num,)))
    idx = lax.select(at_end, lax.sub(idx, lax.full_like(idx, 1)), idx)
    all_edges.append(edges)
    sizes.append(n + 1)
    # Row-major position in the (n_1 + 1) x ... grid, with outliers at the rims.
    idx = lax.clamp(np.int32(0), lax.convert_element_type(idx, np.int32), np.int32(n))
    flat_idx = idx if flat_idx is None else lax.add(
        lax.mul(flat_idx, lax.full_like(flat_idx, n + 1)), idx)
  hist = bincount(flat_idx, weights, length=math.prod(sizes))
  hist = lax.reshape(hist, tuple(sizes))
  hist = lax.slice(hist, (1,) * dims, tuple(s - 1 for s in sizes))
  if density:
    hist = lax.convert_element_type(hist, util.aval_of(sample).dtype)
    hist = lax.div(hist, lax.full_like(hist, lax.reduce_sum(hist, tuple(builtins.range(dims)))))
    for d, edges in enumerate(all_edges):
      widths = _diff(edges)
      hist = lax.div(hist, lax.broadcast_in_dim(widths, util.shape(hist), (d,)))
  return hist, all_edges
