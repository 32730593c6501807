"""Order statistics: quantile, percentile, median and their NaN-ignoring
versions.

The data are sorted along the reduced axis and the two neighbours of each
quantile's fractional position are gathered and interpolated ('inverted_cdf'
instead picks the first element whose cumulative weight reaches q).  Like
JAX, ``quantile`` gives NaN for a slice holding a NaN; the ``nan*`` versions
sort NaNs last and use the other values.
"""
import math
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.lax import gather as gather_lib
from purejax._src.numpy import util
from purejax._src.numpy.sorting import jit_named
from purejax._src.numpy.util import check_arraylike

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _static_axis(axis):
  if isinstance(axis, list):
    axis = tuple(axis)
  if isinstance(axis, tuple):
    return tuple(operator.index(a) for a in axis)
  return None if axis is None else operator.index(axis)


def _check_args(fun_name, a, q, out, overwrite_input, weights):
  check_arraylike(fun_name, a, q)
  if weights is not None:
    check_arraylike(fun_name, weights)
  if overwrite_input or out is not None:
    raise ValueError(f"jax.numpy.{fun_name} does not support overwrite_input=True or "
                     "out != None")


def _run(fun_name, a, q, axis, out, overwrite_input, method, keepdims, weights, squash):
  _check_args(fun_name, a, q, out, overwrite_input, weights)
  return _quantile_jit(util.asarray(a), util.asarray(q),
                       None if weights is None else util.asarray(weights),
                       axis=_static_axis(axis), method=method, keepdims=bool(keepdims),
                       squash_nans=squash)


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
  """The ``q``-th quantiles (q in [0, 1], a scalar or 1-D) of ``a`` over
  ``axis``; a quantile of data holding a NaN is NaN.  ``weights`` go with
  method 'inverted_cdf' only."""
  return _run("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
              False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
  """``quantile`` ignoring NaNs (all-NaN slices give NaN)."""
  return _run("nanquantile", a, q, axis, out, overwrite_input, method, keepdims, weights,
              True)


def _percent(q):
  q, = util.promote_dtypes_inexact(q)
  return lax.div(q, lax.convert_element_type(100, util.aval_of(q).dtype, False))


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, out_sharding=None):
  """The ``q``-th percentiles (q in [0, 100]) of ``a`` over ``axis``."""
  check_arraylike("percentile", a, q)
  return quantile(a, _percent(q), axis=axis, out=out, overwrite_input=overwrite_input,
                  method=method, keepdims=keepdims, weights=weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
  """``percentile`` ignoring NaNs."""
  check_arraylike("nanpercentile", a, q)
  return nanquantile(a, _percent(q), axis=axis, out=out, overwrite_input=overwrite_input,
                     method=method, keepdims=keepdims, weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """The median of ``a`` over ``axis`` (NaN if the data hold a NaN)."""
  check_arraylike("median", a)
  return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                  keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """The median of ``a`` over ``axis``, ignoring NaNs."""
  check_arraylike("nanmedian", a)
  return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                     keepdims=keepdims, method="midpoint")


def _reduced_last(a, axes):
  """``a`` with the reduced ``axes`` merged into its last axis."""
  shape = util.shape(a)
  kept = [d for d in range(len(shape)) if d not in axes]
  merged = lax.transpose(a, tuple(kept) + tuple(axes))
  return lax.reshape(merged, tuple(shape[d] for d in kept)
                     + (math.prod(shape[d] for d in axes),))


def _weights_like(a, weights, axis):
  """``weights`` checked and broadcast to ``a``'s shape."""
  if dtypes.issubdtype(util.aval_of(weights).dtype, np.complexfloating):
    raise ValueError("Weights cannot be complex types.")
  a, weights = util.promote_dtypes_inexact(a, weights)
  if util.shape(weights) == util.shape(a):
    return a, weights
  if axis is None:
    raise ValueError("Weights shape must match 'a' shape when axis is None.")
  axes = util.canonicalize_axes(axis, util.ndim(a))
  reduced = tuple(util.shape(a)[d] for d in axes)
  if util.shape(weights) != reduced:
    raise ValueError(f"Weights shape {util.shape(weights)} must match reduction axes "
                     f"{reduced}")
  return a, lax.broadcast_in_dim(weights, util.shape(a), axes)


@jit_named("quantile", static_argnames=("axis", "method", "keepdims", "squash_nans"))
def _quantile_jit(a, q, weights, axis, method, keepdims, squash_nans):
  if method not in _METHODS:
    raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                     "'nearest' or 'inverted_cdf'")
  if weights is not None:
    if method != "inverted_cdf":
      # JAX's error class, too.
      raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                "'inverted_cdf' supports weights.")
    a, weights = _weights_like(a, weights, axis)
  else:
    a, = util.promote_dtypes_inexact(a)
  dtype = util.aval_of(a).dtype
  if dtypes.issubdtype(dtype, np.complexfloating):
    raise ValueError("quantile does not support complex input, as the operation is "
                     "poorly defined.")
  q_shape = util.shape(q)
  if len(q_shape) > 1:
    raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
  # An integer q is refused (by floor), as in JAX.
  nd = util.ndim(a)
  axes = tuple(range(nd)) if axis is None else util.canonicalize_axes(axis, nd)
  if len(set(axes)) != len(axes):
    raise ValueError("repeated axis")
  keep_shape = tuple(1 if d in axes else util.shape(a)[d] for d in range(nd))
  a = _reduced_last(a, axes)
  weights = None if weights is None else _reduced_last(weights, axes)
  *batch, n = util.shape(a)
  last_axis = len(batch)
  isnan = lax.ne(a, a)
  if squash_nans:
    # Every NaN positive, so that all sort last.
    a = lax.select(isnan, lax.full_like(a, np.nan), a)
  else:
    any_nan = lax.reduce_or(isnan, (last_axis,))
    a = lax.select(lax.broadcast_in_dim(any_nan, util.shape(a), tuple(range(last_axis))),
                   lax.full_like(a, np.nan), a)
  if weights is None:
    a = lax.sort(a, dimension=last_axis)
  else:
    a, weights = lax.sort_key_val(a, weights, dimension=last_axis)
  q_nd = len(q_shape)
  q = lax.broadcast_in_dim(q, q_shape + tuple(batch), tuple(range(q_nd)))
  spread = lambda x: lax.broadcast_in_dim(x, util.shape(q), tuple(range(q_nd, q_nd + last_axis)))
  if squash_nans:
    counts = lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(isnan),
                                                     util.aval_of(q).dtype), (last_axis,))
  else:
    counts = lax.full(tuple(batch), n, util.aval_of(q).dtype)
  counts = spread(counts)
  if method == "inverted_cdf":
    result = _inverted_cdf(a, q, weights, counts, squash_nans, spread)
  else:
    result = _interpolated(a, q, counts, method)
  if keepdims:
    result = lax.reshape(result, q_shape + keep_shape)
  return lax.convert_element_type(result, dtype)


def _interpolated(a, q, counts, method):
  q_nd = util.ndim(q) - (util.ndim(a) - 1)
  last = lax.sub(counts, lax.full_like(counts, 1))
  pos = lax.mul(q, last)
  low, high = lax.floor(pos), lax.ceil(pos)
  high_weight = lax.sub(pos, low)
  low_weight = lax.sub(lax.full_like(high_weight, 1), high_weight)
  zero = lax.full_like(low, 0)
  low = lax.max(zero, lax.min(low, last))
  high = lax.max(zero, lax.min(high, last))
  low_value = _pick(a, lax.convert_element_type(low, np.int32), q_nd)
  high_value = _pick(a, lax.convert_element_type(high, np.int32), q_nd)
  q_dtype = util.aval_of(q).dtype
  if method == "linear":
    return lax.add(lax.mul(lax.convert_element_type(low_value, q_dtype), low_weight),
                   lax.mul(lax.convert_element_type(high_value, q_dtype), high_weight))
  if method == "lower":
    return low_value
  if method == "higher":
    return high_value
  if method == "nearest":
    return lax.select(lax.le(high_weight, lax.full_like(high_weight, 0.5)), low_value,
                      high_value)
  return lax.mul(lax.add(low_value, high_value), lax.full_like(low_value, 0.5))


def _inverted_cdf(a, q, weights, counts, squash_nans, spread):
  """The first sorted element whose cumulative weight reaches q times the
  total; NaN if a weight is negative or NaN (or, as in JAX, if the data hold
  a NaN, for ``quantile``, or are all NaN, for ``nanquantile``)."""
  last_axis = util.ndim(a) - 1
  q_nd = util.ndim(q) - last_axis
  if weights is None:
    weights = lax.full_like(a, 1)
  nan_data = lax.ne(a, a)
  bad = lax.bitwise_or(lax.lt(weights, lax.full_like(weights, 0)), lax.ne(weights, weights))
  clean = lax.select(lax.bitwise_or(bad, nan_data), lax.full_like(weights, 0), weights)
  cum = lax.cumsum(clean, last_axis)
  n = util.shape(a)[-1]
  total = spread(lax.reshape(lax.slice_in_dim(cum, n - 1, n, axis=last_axis),
                             util.shape(cum)[:-1]))
  target = lax.mul(q, total)
  wide = util.shape(q) + (n,)
  below = lax.lt(lax.broadcast_in_dim(cum, wide, tuple(range(q_nd, q_nd + last_axis + 1))),
                 lax.broadcast_in_dim(target, wide, tuple(range(len(wide) - 1))))
  int_dtype = dtypes.default_int_dtype()
  idx = lax.reduce_sum(lax.convert_element_type(below, int_dtype), (len(wide) - 1,))
  top = lax.convert_element_type(lax.sub(counts, lax.full_like(counts, 1)), int_dtype)
  idx = lax.max(lax.full_like(idx, 0), lax.min(idx, top))
  result = _pick(a, lax.convert_element_type(idx, np.int32), q_nd)
  if squash_nans:
    no_data = lax.eq(counts, lax.full_like(counts, 0))
  else:
    no_data = spread(lax.reduce_or(nan_data, (last_axis,)))
  force_nan = lax.bitwise_or(spread(lax.reduce_or(bad, (last_axis,))), no_data)
  return lax.select(force_nan, lax.full_like(result, np.nan), result)


def _pick(a, idx, q_ndim):
  """``a[..., idx]`` for ``a`` of shape batch + (n,) and ``idx`` of shape
  q_shape + batch: one element of each row per quantile."""
  batch = util.shape(a)[:-1]
  nb = len(batch)
  # Put the q axis last so that rows pair with the index's leading axes.
  if q_ndim:
    idx = lax.transpose(idx, tuple(range(1, nb + 1)) + (0,))
  dnums = gather_lib.GatherDimensionNumbers(
      offset_dims=(), collapsed_slice_dims=(nb,), start_index_map=(nb,),
      operand_batching_dims=tuple(range(nb)), start_indices_batching_dims=tuple(range(nb)))
  out = gather_lib.gather(a, lax.expand_dims(idx, (util.ndim(idx),)), dnums,
                          (1,) * (nb + 1),
                          mode=gather_lib.GatherScatterMode.PROMISE_IN_BOUNDS)
  if q_ndim:
    out = lax.transpose(out, (nb,) + tuple(range(nb)))
  return out
