"""scipy.special on lax primitives: scaled error functions (erfcx, dawsn),
Fresnel, sine and cosine integrals, Owen's T, Bessel J_n, Bernoulli numbers and the
hypergeometric functions 1F1 and 2F1.

Series run as fixed-length ``fori_loop``s and the functions with simple
derivatives carry custom jvps, so everything works under jit, grad and vmap.
"""
import fractions
import math

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.custom_jvp import custom_jvp
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import digamma, gamma
from purejax._src.scipy.special_ndtr import ndtr
from purejax._src.scipy.util import dtype_of as _dtype, real_only as _real_only

_SQRT_PI = math.sqrt(math.pi)


def _series(term_ratio, first, n_terms):
  """sum_k t_k with t_0 = first and t_{k+1} = t_k * term_ratio(k)."""
  def body(k, carry):
    term, total = carry
    term = term * term_ratio(k)
    return term, total + term
  return lax.fori_loop(0, n_terms, body, (first, first))[1]


# -- erfcx and Dawson's integral ---------------------------------------------------

def _erfcx_continued_fraction(x, n_terms=40):
  # erfc(x) e^{x^2} = (1/sqrt(pi)) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
  # evaluated from the tail; converges fast for the x >= 5 where it is used.
  def body(i, acc):
    k = n_terms - i
    return x + (k / 2) / acc
  return (1 / _SQRT_PI) / lax.fori_loop(0, n_terms, body, x)


@custom_jvp
def _erfcx(x):
  large = x >= 5
  x_small = jnp.where(large, 0, x)       # keeps exp(x^2) finite in the unused branch
  x_large = jnp.where(large, x, 5)
  direct = jnp.exp(x_small * x_small) * lax.erfc(x_small)
  return jnp.where(large, _erfcx_continued_fraction(x_large), direct)


@_erfcx.defjvp
def _erfcx_jvp(primals, tangents):
  x, = primals
  y = _erfcx(x)
  return y, (2 * x * y - 2 / _SQRT_PI) * tangents[0]


def erfcx(x):
  x, = promote_args_inexact("erfcx", x)
  _real_only("erfcx", x)
  return _erfcx(x)


def _dawsn_series(x, n_terms=130):
  # D(x) = exp(-x^2) sum_n x^(2n+1) / (n! (2n+1)): all terms positive, so no
  # cancellation; used for |x| < 6 (terms peak near n = x^2).
  x2 = x * x
  def body(n, carry):
    power, total = carry          # power = x^(2n+1)/n!
    power = power * x2 / (n + 1)
    return power, total + power / (2 * n + 3)
  return jnp.exp(-x2) * lax.fori_loop(0, n_terms, body, (x, x))[1]


def _dawsn_asymptotic(x, n_terms=40):
  # D(x) ~ sum_n (2n-1)!! / (2^(n+1) x^(2n+1)); its smallest term at |x| >= 6 is below 1e-16.
  inv2x2 = 1 / (2 * x * x)
  return _series(lambda n: (2 * n + 1) * inv2x2, 1 / (2 * x), n_terms)


@custom_jvp
def _dawsn(x):
  large = jnp.abs(x) >= 6
  return jnp.where(large, _dawsn_asymptotic(jnp.where(large, x, 6)),
                   _dawsn_series(jnp.where(large, 0, x)))


@_dawsn.defjvp
def _dawsn_jvp(primals, tangents):
  x, = primals
  y = _dawsn(x)
  return y, (1 - 2 * x * y) * tangents[0]


def dawsn(x):
  x, = promote_args_inexact("dawsn", x)
  _real_only("dawsn", x)
  return _dawsn(x)


# -- Fresnel integrals -------------------------------------------------------------

def _fresnel_series(x, n_terms=30):
  # C + iS = sum_n (i pi/2)^n x^(4n... ): split into the two alternating series.
  t = (math.pi / 2) * x * x
  def body(n, carry):
    power, c, s = carry       # power = t^n / n! * x
    power = power * t / (n + 1)
    m = n + 1
    sign_c = jnp.where(m % 4 == 0, 1, jnp.where(m % 4 == 2, -1, 0)).astype(x.dtype)
    sign_s = jnp.where(m % 4 == 1, 1, jnp.where(m % 4 == 3, -1, 0)).astype(x.dtype)
    return power, c + sign_c * power / (2 * m + 1), s + sign_s * power / (2 * m + 1)
  _, c, s = lax.fori_loop(0, n_terms, body, (x, x, jnp.zeros_like(x)))
  return s, c


def _fresnel_continued_fraction(x, n_terms=80):
  # C + iS = (1+i)/2 (1 - erfc(z)), z = sqrt(pi)/2 (1-i) x, and erfc from its
  # continued fraction (as in erfcx); e^{-z^2} = e^{i pi x^2 / 2} has modulus 1.
  cdtype = np.result_type(x.dtype, np.complex64)
  z = (_SQRT_PI / 2) * (1 - 1j) * x.astype(cdtype)
  def body(i, acc):
    k = n_terms - i
    return z + (k / 2) / acc
  frac = lax.fori_loop(0, n_terms, body, z)
  phase = (math.pi / 2) * x * x
  ez = lax.complex(jnp.cos(phase), jnp.sin(phase)).astype(cdtype)
  erfc = ez / _SQRT_PI / frac
  cs = (0.5 + 0.5j) * (1 - erfc)
  return jnp.imag(cs), jnp.real(cs)


def fresnel(x):
  x, = promote_args_inexact("fresnel", x)
  _real_only("fresnel", x)
  ax = jnp.abs(x)
  large = ax > 1.8
  s_small, c_small = _fresnel_series(jnp.where(large, 0, ax))
  s_large, c_large = _fresnel_continued_fraction(jnp.where(large, ax, 2))
  sign = jnp.sign(x)
  s = jnp.where(jnp.isinf(x), 0.5, jnp.where(large, s_large, s_small))
  c = jnp.where(jnp.isinf(x), 0.5, jnp.where(large, c_large, c_small))
  return sign * s, sign * c


# -- Owen's T ------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_quadrature(h, a):
  # T(h, a) = 1/(2 pi) int_0^a exp(-h^2 (1+x^2)/2) / (1+x^2) dx, for |a| <= 1.
  nodes = np.asarray((_GL_NODES + 1) / 2, h.dtype)
  weights = np.asarray(_GL_WEIGHTS / 2, h.dtype)
  shape = jnp.broadcast_shapes(jnp.shape(h), jnp.shape(a))
  h, a = jnp.broadcast_to(h, shape)[..., None], jnp.broadcast_to(a, shape)[..., None]
  x2 = (a * nodes) ** 2
  f = jnp.exp(-0.5 * h * h * (1 + x2)) / (1 + x2)
  return a[..., 0] * jnp.sum(weights * f, axis=-1) / (2 * math.pi)


def owens_t(h, a):
  h, a = promote_args_inexact("owens_t", h, a)
  _real_only("owens_t", h)
  h = jnp.abs(h)                       # T is even in h and odd in a
  sign = jnp.sign(a)
  a = jnp.abs(a)
  big = a > 1
  inner = _owens_t_quadrature(h, jnp.where(big, 1, a))
  # For a > 1: T(h, a) = (Phi(h) + Phi(ah))/2 - Phi(h) Phi(ah) - T(ah, 1/a).
  ah = a * h
  ph, pah = ndtr(h), ndtr(ah)
  swapped = (0.5 * (ph + pah) - ph * pah
             - _owens_t_quadrature(ah, 1 / jnp.where(big, a, 1)))
  swapped = jnp.where(jnp.isinf(a), jnp.where(h == 0, 0.25, 0.5 * (1 - ph)), swapped)
  return sign * jnp.where(big, swapped, inner)


# -- Bessel J_n and Bernoulli numbers -----------------------------------------------

def bessel_jn(z, *, v, n_iter=50):
  """J_0(z) .. J_v(z), stacked on a new leading axis (Miller's backward recurrence)."""
  z, = promote_args_inexact("bessel_jn", z)
  _real_only("bessel_jn", z)
  v = int(v)
  if v < 0:
    raise ValueError(f"bessel_jn: order v must be non-negative, got {v}")
  start = 2 * ((v + n_iter + int(1)) // 2)      # an even starting order above v
  zsafe = jnp.where(z == 0, 1, z)
  big = np.asarray(1e10, _dtype(z))     # rescale before float32 could overflow
  out0 = jnp.zeros((v + 1,) + jnp.shape(z), _dtype(z))
  one = jnp.ones_like(z)

  def body(i, carry):
    k = start - i                      # computes J_{k-1} from J_k, J_{k+1}
    j_next, j, norm, out = carry
    out = jnp.where(k <= v, out.at[jnp.minimum(k, v)].set(j), out)
    norm = norm + jnp.where(k % 2 == 0, 2 * j, 0)
    j_prev = (2 * k / zsafe) * j - j_next
    scale = jnp.where(jnp.abs(j_prev) > big, 1 / big, 1)
    return j * scale, j_prev * scale, norm * scale, out * scale

  init = (jnp.zeros_like(z), one * 1e-30, jnp.zeros_like(z), out0)
  _, j0, norm, out = lax.fori_loop(0, start, body, init)
  out = out.at[0].set(j0)
  result = out / (norm + j0)
  at_zero = jnp.zeros_like(result).at[0].set(1)
  return jnp.where(z == 0, at_zero, result)


def bernoulli(n):
  """B_0 .. B_n (with B_1 = -1/2), as floats."""
  n = int(n)
  if n < 0:
    raise ValueError("n must be a non-negative integer.")
  b = [fractions.Fraction(1)]
  for m in range(1, n + 1):
    b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
  dtype = dtypes.canonicalize_dtype(np.float64)
  return jnp.asarray(np.array([float(v) for v in b], dtype))


# -- hypergeometric functions ---------------------------------------------------------

def _hyp1f1_series(a, b, x, n_terms=400):
  return _series(lambda n: (a + n) / (b + n) * x / (n + 1), jnp.ones_like(x), n_terms)


def hyp1f1(a, b, x):
  a, b, x = promote_args_inexact("hyp1f1", a, b, x)
  _real_only("hyp1f1", x)
  a, b, x = jnp.broadcast_arrays(a, b, x)
  # Kummer's transformation keeps the series' terms positive for x < 0.
  neg = x < 0
  value = _hyp1f1_series(jnp.where(neg, b - a, a), b, jnp.abs(x))
  return jnp.where(neg, jnp.exp(x) * value, value)


def _hyp2f1_series(a, b, c, x, n_terms=200):
  return _series(lambda n: (a + n) * (b + n) / ((c + n) * (n + 1)) * x,
                 jnp.ones_like(x), n_terms)


def _rgamma(z):
  """1 / gamma(z), zero at the poles."""
  return jnp.where((z <= 0) & (z == jnp.round(z)), 0, 1 / gamma(z))


def _hyp2f1_integer_gap(a, b, c, s, y, n_terms=200):
  """2F1(a, b; c; 1 - y) for 0 < y <= 1/2 when s = c - a - b is an integer m
  or -m (the limit of the 1 - x transformation: Abramowitz & Stegun 15.3.11,
  and 15.3.12 as 15.3.11 with a - m, b - m times y^-m); a, b not
  nonpositive integers (the caller sums those polynomials directly)."""
  m = jnp.abs(s)
  below = s < 0
  a = jnp.where(below, a - m, a)
  b = jnp.where(below, b - m, b)

  def finite(n, carry):       # sum_{n < m} (a)_n (b)_n / (n! (1-m)_n) y^n
    term, total = carry
    more = n + 1 < m
    term = jnp.where(more, term * (a + n) * (b + n) / ((n + 1) * jnp.where(more, 1 - m + n, 1))
                     * y, 0)
    return term, total + term

  one = jnp.ones_like(y)
  head = lax.fori_loop(0, n_terms, finite, (one, one))[1]
  head = jnp.where(m > 0, gamma(jnp.where(m > 0, m, 1)) * gamma(c)
                   * _rgamma(a + m) * _rgamma(b + m) * head, 0)

  def infinite(n, carry):     # (a+m)_n (b+m)_n / (n! (n+m)!) y^n [log y - psi's]
    term, total, p1, pm, pa, pb = carry
    total = total + term * (jnp.log(y) - p1 - pm + pa + pb)
    term = term * (a + m + n) * (b + m + n) / ((n + 1) * (n + m + 1)) * y
    return (term, total, p1 + 1 / (n + 1), pm + 1 / (n + m + 1), pa + 1 / (a + m + n),
            pb + 1 / (b + m + n))

  start = (1 / gamma(m + 1), jnp.zeros_like(y), digamma(one), digamma(m + 1),
           digamma(a + m), digamma(b + m))
  tail = lax.fori_loop(0, n_terms, infinite, start)[1]
  sign = jnp.where(m % 2 == 0, 1, -1).astype(y.dtype)
  tail = sign * y ** m * gamma(c) * _rgamma(a) * _rgamma(b) * tail
  return jnp.where(below, y ** (-m), 1) * (head - tail)


def _hyp2f1_unit_interval(a, b, c, x, s):
  """2F1 for 0 <= x <= 1 (s = c - a - b, computed by the caller without
  rounding where it is an integer): the series up to 1/2, or wherever it is a
  polynomial (a or b a nonpositive integer); the 1 - x transformation above."""
  polynomial = ((a <= 0) & (a == jnp.round(a))) | ((b <= 0) & (b == jnp.round(b)))
  near_one = (x > 0.5) & ~polynomial
  direct = _hyp2f1_series(a, b, c, jnp.where(near_one, 0, x))
  y = jnp.where(near_one, 1 - x, 0)
  integer_gap = s == jnp.round(s)
  # the general transformation where s is not an integer (its gammas have poles there)
  sg = jnp.where(integer_gap, 0.5, s)
  first = (gamma(c) * gamma(sg) * _rgamma(c - a) * _rgamma(c - b)
           * _hyp2f1_series(a, b, 1 - sg, y))
  second = (gamma(c) * gamma(-sg) * _rgamma(a) * _rgamma(b) * y ** sg
            * _hyp2f1_series(c - a, c - b, 1 + sg, y))
  limit = _hyp2f1_integer_gap(a, b, c, jnp.where(integer_gap, s, 0),
                              jnp.where(y == 0, 0.5, y))
  # At x = 1 only Gauss's sum remains (finite when c - a - b > 0).
  gauss = jnp.where(s > 0, gamma(c) * gamma(s) / (gamma(c - a) * gamma(c - b)), jnp.inf)
  transformed = jnp.where(y == 0, gauss, jnp.where(integer_gap, limit, first + second))
  return jnp.where(near_one, transformed, direct)


def hyp2f1(a, b, c, x):
  """2F1(a, b; c; x) for real x <= 1; inf for x > 1, as JAX (the function
  is complex there)."""
  a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
  _real_only("hyp2f1", x)
  a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
  # Pfaff: 2F1(a,b;c;x) = (1-x)^-a 2F1(a, c-b; c; x/(x-1)) maps x < 0 into [0, 1).
  neg = x < 0
  xs = jnp.where(neg, x / (x - 1), x)
  # c - a - b of the transformed parameters is b - a: exact where it is an integer
  s = jnp.where(neg, b - a, c - a - b)
  value = _hyp2f1_unit_interval(a, jnp.where(neg, c - b, b), c, jnp.where(x > 1, 0, xs), s)
  value = jnp.where(neg, (1 - x) ** (-a) * value, value)
  return jnp.where(x > 1, jnp.inf, value)


# -- sine and cosine integrals -------------------------------------------------------

_EULER_GAMMA = 0.5772156649015329


def _sici_series(x, n_terms=40):
  # Si = sum (-1)^n x^(2n+1) / ((2n+1) (2n+1)!), Ci - gamma - ln x = sum_{n>=1}
  # (-1)^n x^(2n) / (2n (2n)!); used for 0 <= x <= 4 (cancellation below e^4).
  def body(m, carry):
    power, si, ci = carry      # power = x^m / m!, m = 1, 2, ...
    power = power * x / (m + 1)
    k = m + 1
    sign = jnp.where((k // 2) % 2 == 0, 1, -1).astype(x.dtype)
    odd = k % 2 == 1
    return (power, si + jnp.where(odd, sign * power / k, 0),
            ci + jnp.where(odd, 0, sign * power / k))
  _, si, ci = lax.fori_loop(1, n_terms, body, (x, x, jnp.zeros_like(x)))
  return si, ci + _EULER_GAMMA + jnp.log(x)


def _sici_continued_fraction(x, n_terms=60):
  # E1(ix) = -Ci(x) + i (Si(x) - pi/2), with E1(z) = e^-z / (z + 1 - 1/(z + 3 - 4/(z + 5 - ...)))
  # evaluated from the tail; used for x > 4.
  cdtype = np.result_type(x.dtype, np.complex64)
  z = lax.complex(jnp.zeros_like(x), x).astype(cdtype)
  def body(i, acc):
    k = n_terms - 1 - i
    return z + (2 * k + 1) - ((k + 1) * (k + 1)) / acc
  frac = lax.fori_loop(0, n_terms, body, z + (2 * n_terms + 1))
  e1 = lax.complex(jnp.cos(x), -jnp.sin(x)).astype(cdtype) / frac
  return jnp.imag(e1) + math.pi / 2, -jnp.real(e1)


def sici(x):
  x, = promote_args_inexact("sici", x)
  _real_only("sici", x)
  ax = jnp.abs(x)
  large = ax > 4
  si_small, ci_small = _sici_series(jnp.where(large, 1, ax))
  si_large, ci_large = _sici_continued_fraction(jnp.where(large, ax, 5))
  si = jnp.where(large, si_large, si_small)
  ci = jnp.where(large, ci_large, ci_small)
  si = jnp.where(jnp.isinf(ax), math.pi / 2, si)
  ci = jnp.where(jnp.isinf(ax), 0, jnp.where(ax == 0, -jnp.inf, ci))
  return jnp.sign(x) * si, ci
