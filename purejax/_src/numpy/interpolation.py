"""jnp.interp: piecewise-linear interpolation of sampled points."""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import shape_ops
from purejax._src.numpy import sorting
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util


def _edge_mode(name, value):
  """True for linear extrapolation past this edge, else the constant rule."""
  if isinstance(value, str):
    if value != "extrapolate":
      raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                       f"but got: {value!r}")
    return True
  return False


def interp(x, xp, fp, left=None, right=None, period=None):
  """Linear interpolation of the points (xp, fp) at ``x``, as NumPy's
  ``interp``; ``left``/``right`` may also be ``"extrapolate"`` (as in JAX)."""
  util.check_arraylike("interp", x, xp, fp)
  if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
    raise ValueError("xp and fp must be one-dimensional arrays of equal size")
  x, xp = util.promote_dtypes_inexact(x, xp)
  fp, = util.promote_dtypes_inexact(fp)
  extrapolate_left = _edge_mode("left", left)
  extrapolate_right = _edge_mode("right", right)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    raise ValueError("jnp.interp: complex x values not supported.")
  if period is not None:
    if np.ndim(period) != 0:
      raise ValueError(f"period must be a scalar; got {period}")
    x, xp, fp = _wrap_periodic(x, xp, fp, ufuncs.abs(period))
  n = xp.shape[0]
  # Segment [xp[i-1], xp[i]] holding x (the first or last one outside).
  i = ufuncs.clip(sorting.searchsorted(xp, x, side="right"), 1, n - 1)
  x0, x1, f0, f1 = xp[i - 1], xp[i], fp[i - 1], fp[i]
  width = x1 - x0
  # A zero-width segment takes its left value (and keeps gradients finite).
  flat = lax.abs(width) <= np.spacing(dtypes.finfo(xp.dtype).eps)
  slope_part = (x - x0) / ufuncs.where(flat, 1, width) * (f1 - f0)
  out = ufuncs.where(flat, f0, f0 + slope_part)
  if period is None:
    if not extrapolate_left:
      out = ufuncs.where(x < xp[0], fp[0] if left is None else left, out)
    if not extrapolate_right:
      out = ufuncs.where(x > xp[-1], fp[-1] if right is None else right, out)
  return out


def _wrap_periodic(x, xp, fp, period):
  """Points reduced modulo the period, sorted, and extended by one point
  on each side so that every x falls inside a segment."""
  x, xp = x % period, xp % period
  xp, fp = lax.sort_key_val(xp, fp)
  xp = shape_ops.concatenate([xp[-1:] - period, xp, xp[:1] + period])
  fp = shape_ops.concatenate([fp[-1:], fp, fp[:1]])
  return x, xp, fp
