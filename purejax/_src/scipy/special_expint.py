"""Exponential integrals (expi, exp1, expn) and the dilogarithm (spence).

The algorithms are Cephes' (as SciPy's and JAX's): expi on x > 0 by
rational approximations on [0, 2], (2, 4], ..., (32, 64] (then
exp(x)/x times a correction); expn by a power series for x <= 1, a
continued fraction for x > 1 and an asymptotic expansion for n >= 5000,
the iterative ones as elementwise ``while_loop``s.
"""
import functools

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.custom_jvp import custom_jvp
from purejax._src.numpy import util
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import gammaln
from purejax._src.scipy.util import const as _c, real_only as _real_only


def _poly(coeffs, x):
  return jnp.polyval(np.array(coeffs, dtype=util.aval_of(x).dtype), x)


# Cephes ei.c: on (0, 2] Ei(x) = euler + log x + x A(x)/B(x); on (2^k, 2^(k+1)]
# Ei(x) = exp(x)/x (1 + A(1/x)/B(1/x) / x).
_EI_SMALL = (
    [-5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557,
     -331338.13311781443, 1592627.1633849454],
    [1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726,
     -729494.9239640528, 1592627.1633849454])
_EI_RANGES = [
    ([0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367,
      -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05],
     [1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212,
      0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05]),
    ([-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623,
      0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05,
      2.141783679522603e-06],
     [1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877,
      0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06,
      2.66519553739071e-06]),
    ([-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566,
      0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05,
      -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10],
     [1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924,
      0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05,
      -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10]),
    ([-0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405,
      0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06,
      -4.239473659313765e-08],
     [1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984,
      -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05,
      2.7289384034767266e-06, -4.239462431819542e-08]),
    ([0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484,
      0.0015100821468651906, -2.5231370954995714e-05],
     [1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008,
      0.0015605448811273888, -2.5231370936032347e-05]),
    ([-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935,
      -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06,
      1.218032765428652e-07, -1.0860761027932903e-09],
     [1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805,
      0.039308526882338234, -0.003414684558602365, 0.00018668443707035555,
      -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09]),
]


def _ei_small(x):
  a, b = _EI_SMALL
  return x * (_poly(a, x) / _poly(b, x)) + np.euler_gamma + jnp.log(x)


def _ei_range(coeffs):
  a, b = coeffs

  def f(x):
    w = _c(x, 1.0) / x
    return jnp.exp(x) * w * (w * (_poly(a, w) / _poly(b, w)) + _c(x, 1.0))
  return f


def _expi_pos(x):
  conds = [(x > 0) & (x <= 2)] + [(x > 2.0 ** k) & (x <= 2.0 ** (k + 1)) for k in range(1, 6)]
  funcs = [_ei_small] + [_ei_range(c) for c in _EI_RANGES]
  return jnp.piecewise(x, conds, funcs)


@custom_jvp
@jit
def expi(x):
  """Exponential integral Ei(x); for x < 0 it is -E1(-x)."""
  x, = promote_args_inexact("expi", x)
  _real_only("expi", x)
  return jnp.piecewise(x, [x < 0], [lambda v: -exp1(-v), _expi_pos])


@expi.defjvp
def _expi_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  return expi(x), jnp.exp(x) / x * x_dot


def _while(active, body, init):
  """Iterates ``body`` elementwise: an element's state freezes once
  ``active(state)`` is false for it; the loop ends when none is active."""
  def step(state):
    keep = active(state)
    return tuple(jnp.where(keep, new, old) for new, old in zip(body(state), state))
  return lax.while_loop(lambda state: jnp.any(active(state)), step, init)


def _expn_series(x, n):
  """E_n(x) for x <= 1: (-x)^(n-1) psi(n) / (n-1)! - sum_k (-x)^k / (k! (k - n + 1))."""
  eps = dtypes.finfo(util.aval_of(x).dtype).eps
  zero, one = _c(x, 0.0), _c(x, 1.0)
  # psi(n) = -euler - log x + sum_{i < n} 1/i.
  _, psi = _while(lambda s: s[0] < n, lambda s: (s[0] + one, s[1] + one / s[0]),
                  (jnp.ones_like(x), -np.euler_gamma - jnp.log(x)))
  n1 = jnp.where(n == 1, one + one, n)
  ans = jnp.where(n == 1, zero, one / (one - n1))
  z = -x

  def body(s):
    xk, yk, pk, ans, _ = s
    xk = xk + one
    yk = yk * z / xk
    pk = pk + one
    ans = ans + jnp.where(pk != zero, yk / pk, zero)
    t = jnp.where(ans != zero, jnp.abs(yk / ans), one)
    return xk, yk, pk, ans, t

  init = (jnp.zeros_like(x), jnp.ones_like(x), one - n, ans, jnp.full_like(x, np.inf))
  ans = _while(lambda s: (x > 0) & (s[4] > eps), body, init)[3]
  return z ** (n - one) * psi / jnp.exp(gammaln(n)) - ans


def _expn_fraction(x, n):
  """E_n(x) for x > 1 by its continued fraction (rescaled when it grows)."""
  big = _c(x, 1.4411518807585587e17)
  eps = dtypes.finfo(util.aval_of(x).dtype).eps
  zero, one = _c(x, 0.0), _c(x, 1.0)

  def body(s):
    k, pkm2, qkm2, pkm1, qkm1, ans, _, r = s
    k = k + one
    odd = jnp.remainder(k, 2) == 1
    yk = jnp.where(odd, one, x)
    xk = jnp.where(odd, n + (k - one) / 2, k / 2)
    pk = pkm1 * yk + pkm2 * xk
    qk = qkm1 * yk + qkm2 * xk
    nonzero = qk != zero
    r = jnp.where(nonzero, pk / qk, r)
    t = jnp.where(nonzero, jnp.abs((ans - r) / r), one)
    ans = jnp.where(nonzero, r, ans)
    scale = jnp.where(jnp.abs(pk) > big, big, one)
    return k, pkm1 / scale, qkm1 / scale, pk / scale, qk / scale, ans, t, r

  ones = jnp.ones_like(x)
  init = (ones, ones, x, ones, x + n, one / (x + n), jnp.full_like(x, np.inf),
          jnp.zeros_like(x))
  ans = _while(lambda s: (x > 0) & (s[6] > eps), body, init)[5]
  return ans * jnp.exp(-x)


def _expn_large_n(x, n):
  """E_n(x) for n >= 5000: three terms of the asymptotic expansion."""
  one = _c(x, 1.0)
  xk = x + n
  yk = one / (xk * xk)
  ans = yk * n * (6 * x * x - 8 * n * x + n * n)
  ans = yk * (ans + n * (n - 2 * x))
  ans = yk * (ans + n)
  return (ans + one) * jnp.exp(-x) / xk


@jit
def _expn(n, x):
  n, x = promote_args_inexact("expn", n, x)
  _real_only("expn", x)
  n, x = jnp.broadcast_arrays(n, x)
  zero, one = _c(x, 0.0), _c(x, 1.0)
  # Cephes' cases, in JAX's order: the last that holds decides.  E_n(0) for
  # n >= 2 is 1/n here, as JAX returns (SciPy: 1/(n - 1)).
  n1 = jnp.where(n == 1, n + n, n)
  fraction = x > one
  conds = [(n < 0) | (x < zero), (x == zero) & (n < 2), (x == zero) & (n >= 2),
           (n == 0) & (x >= zero), n >= 5000, fraction]
  # Each iterative method sees only its own elements (the others get an input
  # that converges at once), so no element keeps a loop running.
  series = ~functools.reduce(jnp.logical_or, conds)
  out = _expn_series(jnp.where(series, x, 0.5), jnp.where(series, n, one))
  values = [_c(x, np.nan), _c(x, np.inf), one / n1, jnp.exp(-x) / x, _expn_large_n(x, n),
            _expn_fraction(jnp.where(fraction, x, 2.0), jnp.where(fraction, n, one))]
  for cond, value in zip(conds, values):
    out = jnp.where(cond, value, out)
  return out


@custom_jvp
def _expn_custom(n, x):
  return _expn(n, x)


def _expn_jvp(primals, tangents):
  (n, x), (_, x_dot) = primals, tangents
  return _expn_custom(n, x), lax.mul(lax.neg(x_dot), _expn_custom(n - 1, x))


_expn_custom.defjvp(_expn_jvp)


def expn(n, x):
  """Generalized exponential integral E_n(x); its derivative in ``n`` is
  zero (as JAX's).  Differs from JAX: the iterations run per element, so a
  tiny x in an array does not make the loop run forever."""
  n, x = promote_args_inexact("expn", n, x)
  _real_only("expn", x)
  return _expn_custom(n, x)


def exp1(x):
  """Exponential integral E1(x) = expn(1, x)."""
  x, = promote_args_inexact("exp1", x)
  _real_only("exp1", x)
  return expn(1, x)


# Cephes spence.c: a rational approximation on [0.5, 1.5] and reflections.
_SPENCE_A = [4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903,
             0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0]
_SPENCE_B = [0.0006909904889125533, 0.02540437639325444, 0.2829748606025681,
             1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0]


def _spence_calc(x):
  inverted = x > 2.0
  x = jnp.where(inverted, 1.0 / x, x)
  above = x > 1.5
  below = x < 0.5
  inverted = inverted | above
  w = jnp.where(above, 1.0 / x - 1.0, jnp.where(below, -x, x - 1.0))
  y = -w * _poly(_SPENCE_A, w) / _poly(_SPENCE_B, w)
  y = jnp.where(below, np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
  return jnp.where(inverted, -0.5 * jnp.log(x) ** 2 - y, y)


def spence(x):
  """Dilogarithm integral_1^x log(t) / (1 - t) dt for x >= 0 (NaN below);
  float32 and float64 only (as JAX)."""
  x = jnp.asarray(x)
  dtype = util.aval_of(x).dtype
  if dtype not in (np.float32, np.float64):
    raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported types.")
  return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0],
                       [np.nan, 0, np.pi ** 2 / 6, _spence_calc])
