"""The standard normal CDF and its inverse: ndtr, ndtri, log_ndtr.

ndtri uses Cephes' rational approximations (three ranges of p); log_ndtr
uses log(ndtr) in the middle, -ndtr(-x) above and an asymptotic series in
the lower tail, with JAX's split points per dtype (float32: -10 and 5;
float64: -20 and 8).
"""
import functools

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.custom_jvp import custom_jvp
from purejax._src.numpy import util


def _float_dtype(name, x):
  dtype = util.aval_of(x).dtype
  if dtype not in (np.float32, np.float64):
    raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")
  return dtype.type


def ndtr(x):
  """Standard normal CDF; only float32 and float64 inputs (as JAX)."""
  x = jnp.asarray(x)
  _float_dtype("ndtr", x)
  return _ndtr(x)


def _ndtr(x):
  # erf near 0, erfc in the tails, so neither tail loses precision.
  t = _float_dtype("ndtr", x)
  half_sqrt_2 = t(0.5) * np.sqrt(2.0, dtype=t)
  w = x * half_sqrt_2
  z = lax.abs(w)
  y = lax.select(lax.lt(z, half_sqrt_2), t(1.0) + lax.erf(w),
                 lax.select(lax.gt(w, t(0.0)), t(2.0) - lax.erfc(z), lax.erfc(z)))
  return t(0.5) * y


# Cephes ndtri: P0/Q0 for |p - 1/2| <= 1/2 - exp(-2); P1/Q1 and P2/Q2 for the
# tails with z = sqrt(-2 log p) below and above 8.
_P0 = [-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
       -1.2391658386738125]
_Q0 = [1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905, -225.46268785411937,
       200.26021238006066, -82.03722561683334, 15.90562251262117, -1.1833162112133]
_P1 = [4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
       14.684956192885803, 2.1866330685079025, -0.1402560791713545, -0.03504246268278482,
       -0.0008574567851546854]
_Q1 = [1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
       2.504649462083094, -0.14218292285478779, -0.03808064076915783, -0.0009332594808954574]
_P2 = [3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
       0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
       2.6580697468673755e-06, 6.239745391849833e-09]
_Q2 = [1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132, 0.21623699359449663,
       0.013420400608854318, 0.00032801446468212774, 2.8924786474538068e-06,
       6.790194080099813e-09]


def ndtri(p):
  """Inverse of ndtr: -inf at 0, inf at 1, NaN outside [0, 1]."""
  p = jnp.asarray(p)
  t = _float_dtype("ndtri", p)
  poly = lambda c, v: jnp.polyval(np.array(c, dtype=t), v)
  # Work with the smaller of p and 1 - p; the sign is restored at the end.
  q = jnp.where(p > t(-np.expm1(-2.0)), t(1.0) - p, p)
  q = jnp.where(q == t(0.0), t(0.5), q)
  w = q - t(0.5)
  ww = lax.square(w)
  x_centre = (w + w * ww * (poly(_P0, ww) / poly(_Q0, ww))) * -t(np.sqrt(2.0 * np.pi))
  z = lax.sqrt(t(-2.0) * lax.log(q))
  base = z - lax.log(z) / z
  inv_z = 1 / z
  x_far = base - poly(_P2, inv_z) / poly(_Q2, inv_z) / z
  x_near = base - poly(_P1, inv_z) / poly(_Q1, inv_z) / z
  x = jnp.where(q > t(np.exp(-2.0)), x_centre, jnp.where(z >= t(8.0), x_far, x_near))
  x = jnp.where(p > t(1.0 - np.exp(-2.0)), x, -x)
  return jnp.where(p == t(0.0), t(-np.inf), jnp.where(p == t(1.0), t(np.inf), x))


_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def log_ndtr(x, series_order=3):
  """log of the standard normal CDF, accurate far into both tails."""
  if not isinstance(series_order, int):
    raise TypeError("series_order must be a Python integer.")
  if series_order < 0:
    raise ValueError("series_order must be non-negative.")
  if series_order > 30:
    raise ValueError("series_order must be <= 30.")
  x = jnp.asarray(x)
  dtype = util.aval_of(x).dtype
  if dtype not in _LOG_NDTR_SEGMENTS:
    raise TypeError(f"x.dtype={dtype} is not supported.")
  lower, upper = (np.array(v, dtype) for v in _LOG_NDTR_SEGMENTS[dtype])
  above = lax.gt(x, upper)
  # Above `upper`, log(1 - ndtr(-x)) ~ -ndtr(-x).
  res = _ndtr(jnp.where(above, -x, lax.max(x, lower)))
  return jnp.where(above, -res, jnp.where(lax.gt(x, lower), lax.log(res),
                                          _log_ndtr_lower(lax.min(x, lower), series_order)))


def _norm_logpdf(x):
  t = util.aval_of(x).dtype.type
  return t(-0.5) * lax.square(x) - t(np.log(np.sqrt(2 * np.pi)))


def _log_ndtr_jvp(series_order, primals, tangents):
  (x,), (t,) = primals, tangents
  ans = log_ndtr(x, series_order=series_order)
  return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


log_ndtr.defjvp(_log_ndtr_jvp)


def _log_ndtr_lower(x, series_order):
  """log ndtr(x) for x << 0: log(phi(x) / -x) + log(asymptotic series)."""
  t = util.aval_of(x).dtype.type
  x_2 = lax.square(x)
  log_scale = -t(0.5) * x_2 - lax.log(-x) - t(0.5 * np.log(2.0 * np.pi))
  return log_scale + lax.log(_asymptotic_series(x, series_order))


def _asymptotic_series(x, series_order):
  """1 + sum_n (-1)^n (2n-1)!! / x^2n, summed as even and odd parts."""
  t = util.aval_of(x).dtype.type
  if series_order <= 0:
    return np.array(1, t)
  x_2 = lax.square(x)
  even = jnp.zeros_like(x)
  odd = jnp.zeros_like(x)
  x_2n = x_2
  for n in range(1, series_order + 1):
    term = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), t) / x_2n
    if n % 2:
      odd = odd + term
    else:
      even = even + term
    x_2n = x_2n * x_2
  return t(1.0) + even - odd
