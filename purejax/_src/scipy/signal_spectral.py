"""scipy.signal's detrend (constant, or linear per segment between break points)."""
import numpy as np

import purejax.numpy as jnp
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def _detrend_linear_segment(x):
  """x minus its least-squares line along the last axis."""
  n = x.shape[-1]
  t = jnp.arange(n, dtype=x.dtype)
  t = t - t.mean()                     # centred: slope and intercept decouple
  mean = x.mean(axis=-1, keepdims=True)
  denom = jnp.sum(t * t)
  slope = jnp.sum((x - mean) * t, axis=-1, keepdims=True) / jnp.where(denom == 0, 1, denom)
  return x - mean - slope * t


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
  if overwrite_data is not None:
    raise NotImplementedError("overwrite_data argument not implemented.")
  if type not in ("constant", "linear"):
    raise ValueError("Trend type must be 'linear' or 'constant'.")
  check_arraylike("detrend", data)
  data, = promote_dtypes_inexact(jnp.asarray(data))
  x = jnp.moveaxis(data, axis, -1)
  if type == "constant":
    out = x - x.mean(axis=-1, keepdims=True)
  else:
    n = x.shape[-1]
    points = np.unique(np.r_[0, np.atleast_1d(np.asarray(bp, int)), n])
    if np.any(points > n):
      raise ValueError("Breakpoints must be less than length of data along given axis.")
    pieces = [_detrend_linear_segment(x[..., lo:hi]) for lo, hi in zip(points[:-1], points[1:])]
    out = jnp.concatenate(pieces, axis=-1)
  return jnp.moveaxis(out, -1, axis)
