"""scipy.stats' mode, rankdata and sem (JAX's subset of nan policies).

mode and rankdata sort along the axis and find runs of equal values with
cumulative max/min of the run boundaries, so they trace to fixed shapes.
"""
import typing

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact


class ModeResult(typing.NamedTuple):
  mode: typing.Any
  count: typing.Any


def _check_nan_policy(nan_policy, supported=("propagate",)):
  if nan_policy not in ("propagate", "omit", "raise"):
    raise ValueError(f"{nan_policy} is not supported")
  if nan_policy == "raise":
    raise ValueError("raise is not supported")
  if nan_policy not in supported:
    raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")


def _run_bounds(sorted_values):
  """For each position of a sorted last axis: the first and last position of
  its run of equal values (NaNs form one run, as they sort last)."""
  n = sorted_values.shape[-1]
  position = lax.broadcasted_iota(jnp.int32, sorted_values.shape, sorted_values.ndim - 1)
  same = sorted_values[..., 1:] == sorted_values[..., :-1]
  if jnp.issubdtype(sorted_values.dtype, jnp.inexact):
    same = same | (jnp.isnan(sorted_values[..., 1:]) & jnp.isnan(sorted_values[..., :-1]))
  edge = jnp.ones(sorted_values.shape[:-1] + (1,), bool)
  starts = jnp.concatenate([edge, ~same], axis=-1)
  ends = jnp.concatenate([~same, edge], axis=-1)
  first = lax.cummax(jnp.where(starts, position, 0), axis=sorted_values.ndim - 1)
  last = lax.cummin(jnp.where(ends, position, n - 1), axis=sorted_values.ndim - 1,
                    reverse=True)
  return first, last, starts


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
  """The most common value along axis (the smallest among ties) and its count."""
  check_arraylike("mode", a)
  a = jnp.asarray(a)
  if nan_policy == "raise":
    raise NotImplementedError(
        "In order to best JIT compile `mode`, we cannot know whether `x` contains nans. "
        "Please check if nans exist in `x` outside of the `mode` function.")
  _check_nan_policy(nan_policy)
  kept_shape = (1,) * a.ndim
  if axis is None:
    a, axis = a.ravel(), 0
  elif a.ndim:
    kept_shape = None
  if a.ndim == 0:
    a = a[None]
  if a.shape[axis] == 0:
    raise ValueError("mode of an empty axis is not defined")
  moved = jnp.sort(jnp.moveaxis(a, axis, -1), axis=-1)
  first, last, _ = _run_bounds(moved)
  counts = last - first + 1
  best = jnp.argmax(counts, axis=-1)[..., None]
  values = jnp.take_along_axis(moved, best, axis=-1)[..., 0]
  count = jnp.take_along_axis(counts, best, axis=-1)[..., 0].astype(jnp.int32)
  if keepdims and kept_shape is not None:
    values, count = values.reshape(kept_shape), count.reshape(kept_shape)
  elif keepdims:
    values, count = jnp.expand_dims(values, axis), jnp.expand_dims(count, axis)
  return ModeResult(values, count)


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _rank_last_axis(a, method):
  n = a.shape[-1]
  order = jnp.argsort(a, axis=-1, stable=True)
  sorted_values = jnp.take_along_axis(a, order, axis=-1)
  inverse = jnp.argsort(order, axis=-1, stable=True)
  if method == "ordinal":
    ranks = jnp.arange(1, n + 1)
    ranks = jnp.broadcast_to(ranks, a.shape)
  else:
    first, last, starts = _run_bounds(sorted_values)
    if method == "min":
      ranks = first + 1
    elif method == "max":
      ranks = last + 1
    elif method == "dense":
      ranks = jnp.cumsum(starts, axis=-1)
    else:
      ranks = (first + last + 2) / 2
  ranks = jnp.take_along_axis(jnp.asarray(ranks), inverse, axis=-1)
  return promote_dtypes_inexact(ranks)[0]


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
  """Ranks (from 1) of the values of a, along axis or over all of a;
  ties ranked by method; any NaN makes its whole slice NaN."""
  check_arraylike("rankdata", a)
  _check_nan_policy(nan_policy)
  if method not in _RANK_METHODS:
    raise ValueError(f"unknown method '{method}'")
  a = jnp.asarray(a)
  if axis is None:
    a, axis = a.ravel(), 0
  if a.ndim == 0:
    a = a[None]
  moved = jnp.moveaxis(a, axis, -1)
  ranks = _rank_last_axis(moved, method)
  if jnp.issubdtype(a.dtype, jnp.inexact):
    has_nan = jnp.any(jnp.isnan(moved), axis=-1, keepdims=True)
    ranks = jnp.where(has_nan, jnp.nan, ranks)
  return jnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
  """The standard error of the mean along axis (over all of a when None)."""
  check_arraylike("sem", a)
  _check_nan_policy(nan_policy, ("propagate", "omit"))
  a, = promote_dtypes_inexact(a)
  if axis is None:
    kept_shape = (1,) * a.ndim
    result = sem(a.ravel(), 0, ddof, nan_policy)
    return result.reshape(kept_shape) if keepdims else result
  if nan_policy == "omit":
    count = jnp.sum(~jnp.isnan(a), axis=axis, keepdims=keepdims)
    spread = jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims)
  else:
    count = a.shape[axis]
    spread = jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims)
  return spread / jnp.sqrt(jnp.asarray(count, a.dtype))
