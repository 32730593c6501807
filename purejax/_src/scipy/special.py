"""scipy.special on lax primitives: gamma and beta families, error functions,
logistic functions, entropies, Bessel I0/I1, softmax.

The normal distribution functions (ndtr, ndtri, log_ndtr) are in
special_ndtr.py, the exponential integrals and spence in special_expint.py.
Functions take any array-like, promote to an inexact dtype as JAX does, and
work under jit, grad and vmap.
"""
import operator

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.custom_jvp import custom_jvp
from purejax._src.nn import functions as nn_functions
from purejax._src.numpy import util
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const as _c, dtype_of as _dtype, real_only as _real_only


# -- gamma and beta functions ------------------------------------------------------

def gammaln(x):
  """log |Gamma(x)|."""
  x, = promote_args_inexact("gammaln", x)
  return lax.lgamma(x)


@jit
def gammasgn(x):
  """Sign of Gamma(x): NaN at poles, -inf and NaN; -1 at -0.0."""
  x, = promote_args_inexact("gammasgn", x)
  _real_only("gammasgn", x)
  floor_x = lax.floor(x)
  negative = lax.lt(x, _c(x, 0))
  at_pole = jnp.logical_or(jnp.logical_and(negative, lax.eq(x, floor_x)), jnp.isnan(x))
  odd_floor = lax.ne(jnp.remainder(floor_x, 2), _c(x, 0))
  minus = jnp.logical_or(jnp.logical_and(negative, odd_floor),
                         jnp.logical_and(lax.eq(x, _c(x, 0)), jnp.signbit(x)))
  return jnp.select([at_pole, minus], [_c(x, np.nan), _c(x, -1.0)], _c(x, 1.0))


def loggamma(x):
  """Principal branch of log Gamma(x): NaN for x <= 0 (real inputs only,
  unlike JAX which also takes complex ones)."""
  x, = promote_args_inexact("loggamma", x)
  if dtypes.issubdtype(_dtype(x), np.complexfloating):
    raise ValueError("loggamma: complex inputs are not supported by purejax yet.")
  return jnp.where(lax.gt(x, _c(x, 0)), lax.lgamma(x), _c(x, np.nan))


def gamma(x):
  """Gamma(x) = gammasgn(x) * exp(gammaln(x)) (real inputs only, unlike JAX
  which also takes complex ones)."""
  x, = promote_args_inexact("gamma", x)
  if dtypes.issubdtype(_dtype(x), np.complexfloating):
    raise ValueError("gamma: complex inputs are not supported by purejax yet.")
  return lax.mul(gammasgn(x), lax.exp(lax.lgamma(x)))


def _algdiv(a, b):
  """log(Gamma(b) / Gamma(a + b)) for b >= 8 (TOMS 708's ALGDIV series)."""
  coeffs = (0.0833333333333333, -0.00277777777760991, 0.00079365066682539,
            -0.00059520293135187, 0.000837308034031215, -0.00165322962780713)
  h = a / b
  c = h / (1 + h)
  x2 = c * c
  s = [1.0 + (c + x2)]   # s3, s5, ...: the partial sums 1 + x + x^2 + ...
  for _ in range(4):
    s.append(1.0 + (c + x2 * s[-1]))
  s3, s5, s7, s9, s11 = s
  t = (1.0 / b) ** 2
  w = (((((coeffs[5] * s11 * t + coeffs[4] * s9) * t + coeffs[3] * s7) * t
         + coeffs[2] * s5) * t + coeffs[1] * s3) * t + coeffs[0]) * (c / b)
  u = (b + (a - 0.5)) * lax.log1p(a / b)
  v = a * (lax.log(b) - 1.0)
  return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
  """log |B(a, b)|, accurate when one argument is large."""
  a, b = promote_args_inexact("betaln", a, b)
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
  large_b = lax.lgamma(a) + _algdiv(a, b)
  return jnp.where(b < 8, small_b, large_b)


def beta(a, b):
  """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."""
  a, b = promote_args_inexact("beta", a, b)
  _real_only("beta", a)
  sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
  return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
  """Regularized incomplete beta function I_x(a, b) (differentiable in x only)."""
  a, b, x = promote_args_inexact("betainc", a, b, x)
  _real_only("betainc", x)
  return lax.betainc(a, b, x)


def gammainc(a, x):
  """Regularized lower incomplete gamma function P(a, x)."""
  a, x = promote_args_inexact("gammainc", a, x)
  return lax.igamma(a, x)


def gammaincc(a, x):
  """Regularized upper incomplete gamma function Q(a, x)."""
  a, x = promote_args_inexact("gammaincc", a, x)
  return lax.igammac(a, x)


def digamma(x):
  """psi(x) = d log Gamma(x) / dx."""
  x, = promote_args_inexact("digamma", x)
  return lax.digamma(x)


def polygamma(n, x):
  """The n-th derivative of digamma; ``n`` must have an integer dtype."""
  n_dtype = _dtype(n)
  if not dtypes.issubdtype(n_dtype, np.integer):
    raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
  n, x = promote_args_inexact("polygamma", n, x)
  _real_only("polygamma", x)
  return lax.polygamma(n, x)


def factorial(n, exact=False):
  """n! as Gamma(n + 1) in floating point; 0 for n < 0.  ``exact=True`` is
  not supported (as in JAX)."""
  if exact:
    raise NotImplementedError("factorial with exact=True")
  n, = promote_args_inexact("factorial", n)
  return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
  """N choose k in floating point (0 outside 0 <= k <= N)."""
  N, k = promote_args_inexact("comb", N, k)
  if repetition:
    result = comb(N + k - 1, k)
    return jnp.where((k == 0) & (N >= 0), 1.0, result)
  ok = (k <= N) & (N >= 0) & (k >= 0)
  N = jnp.where(ok, N, 0.0)
  k = jnp.where(ok, k, 0.0)
  result = lax.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N + 1 - k))
  return jnp.where(ok, result, 0.0)


@custom_jvp
def poch(z, m):
  """Rising factorial Gamma(z + m) / Gamma(z) (1 where m == 0)."""
  z, m = promote_args_inexact("poch", z, m)
  if dtypes.issubdtype(_dtype(z), np.complexfloating):
    raise ValueError("jnp.poch does not support complex-valued inputs.")
  return jnp.where(m == 0.0, _c(z, 1), gamma(z + m) / gamma(z))


poch.defjvps(
    lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, ans, z, m: digamma(z + m) * poch(z, m) * m_dot)


def multigammaln(a, d):
  """Log of the multivariate gamma function of dimension ``d`` (a static int)."""
  d = operator.index(util.concrete_or_error(d, "d argument of multigammaln"))
  a, d_arr = promote_args_inexact("multigammaln", a, d)
  constant = _c(a, 0.25) * d_arr * (d_arr - _c(a, 1)) * lax.log(_c(a, np.pi))
  halves = lax.div(jnp.arange(d, dtype=_dtype(d_arr)), _c(a, 2))
  terms = lax.lgamma(jnp.expand_dims(a, -1) - halves)
  return jnp.sum(terms, axis=-1) + constant


# -- zeta and its series (for the derivative) --------------------------------------

# (2k)! / B_2k for k = 1..16: Euler-Maclaurin remainder coefficients.
_BERNOULLI_DENOMS = np.array([
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1307674368000 / 691, 74724249600.0,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])


def _zeta_series(s, q):
  """Hurwitz zeta by Euler-Maclaurin summation, built from differentiable ops."""
  dtype = _dtype(q)
  n = 8 if dtype == np.float32 else 16
  s_, q_ = jnp.expand_dims(s, -1), jnp.expand_dims(q, -1)
  k = jnp.arange(n, dtype=dtype)
  head = jnp.sum((q_ + k) ** (-s_), -1)
  qn = q + _c(q, n)
  integral = qn ** (_c(s, 1) - s) / (s - _c(s, 1))
  t0 = qn ** (-s)
  m = jnp.arange(2 * n, dtype=dtype)
  ratios = jnp.cumprod((s_ + m) / jnp.expand_dims(qn, -1), -1)[..., ::2]
  ratios = jnp.clip(ratios, max=dtypes.finfo(dtype).max)
  tail = t0 * (_c(q, 0.5) + jnp.sum(ratios / _BERNOULLI_DENOMS[:n].astype(dtype), -1))
  return head + integral + tail


@custom_jvp
def _zeta(x, q):
  return lax.zeta(x, q)


def _zeta_jvp(primals, tangents):
  from purejax._src.ad_api import jvp
  return _zeta(*primals), jvp(_zeta_series, primals, tangents)[1]


_zeta.defjvp(_zeta_jvp)


def zeta(x, q=None):
  """Hurwitz zeta function sum_k (q + k)^-x; ``q`` is required (as in JAX,
  the Riemann zeta function is not provided)."""
  if q is None:
    raise NotImplementedError("Riemann zeta function not implemented; pass q != None "
                              "to compute the Hurwitz Zeta function.")
  x, q = promote_args_inexact("zeta", x, q)
  return _zeta(x, q)


# -- error and logistic functions --------------------------------------------------

def erf(x):
  """The error function."""
  x, = promote_args_inexact("erf", x)
  return lax.erf(x)


def erfc(x):
  """The complementary error function 1 - erf(x)."""
  x, = promote_args_inexact("erfc", x)
  return lax.erfc(x)


def erfinv(x):
  """Inverse of erf on (-1, 1)."""
  x, = promote_args_inexact("erfinv", x)
  return lax.erf_inv(x)


def expit(x):
  """The logistic sigmoid 1 / (1 + exp(-x))."""
  x, = promote_args_inexact("expit", x)
  return lax.logistic(x)


@custom_jvp
def logit(x):
  """log(x / (1 - x)), the inverse of expit."""
  x, = promote_args_inexact("logit", x)
  return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


# -- x log y and the entropies -----------------------------------------------------

@custom_jvp
def xlogy(x, y):
  """x * log(y), 0 where x == 0 (unless y is NaN); its gradient is finite
  at x == 0."""
  x, y = promote_args_inexact("xlogy", x, y)
  keep = (x != 0.0) | jnp.isnan(y)
  return jnp.where(keep, lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _xlogy_jvp(primals, tangents):
  (x, y), (x_dot, y_dot) = primals, tangents
  out = xlogy(x, y)
  return out, (x_dot * lax.log(y) + y_dot * x / y).astype(_dtype(out))


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
  """x * log1p(y), 0 where x == 0 (unless y is NaN)."""
  x, y = promote_args_inexact("xlog1py", x, y)
  keep = (x != 0.0) | jnp.isnan(y)
  return jnp.where(keep, lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals, tangents):
  (x, y), (x_dot, y_dot) = primals, tangents
  out = xlog1py(x, y)
  return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(_dtype(out))


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
  return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  return _xlogx(x), x_dot * (lax.log(x) + 1)


def entr(x):
  """-x log x for x >= 0, -inf for x < 0."""
  x, = promote_args_inexact("entr", x)
  _real_only("entr", x)
  return lax.select(lax.lt(x, _c(x, 0)), lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
  """p log(p / q) for p, q > 0; 0 where p == 0 <= q; inf otherwise."""
  p, q = promote_args_inexact("rel_entr", p, q)
  _real_only("rel_entr", p)
  zero = _c(p, 0.0)
  both_pos = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
  p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
  safe_p = jnp.where(both_pos, p, 1)
  safe_q = jnp.where(both_pos, q, 1)
  value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
  return jnp.where(both_pos, value, jnp.where(p_zero, zero, np.inf))


def kl_div(p, q):
  """rel_entr(p, q) - p + q."""
  p, q = promote_args_inexact("kl_div", p, q)
  _real_only("kl_div", p)
  return rel_entr(p, q) - p + q


def boxcox(x, lmbda):
  """Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda == 0."""
  x, lmbda = promote_args_inexact("boxcox", x, lmbda)
  is_zero = lmbda == 0
  safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
  log_x = jnp.log(x)
  return jnp.where(is_zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox1p(x, lmbda):
  """Box-Cox transform of 1 + x."""
  x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
  is_zero = lmbda == 0
  safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
  log1p_x = jnp.log1p(x)
  return jnp.where(is_zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)


# -- modified Bessel functions -----------------------------------------------------

def i0e(x):
  """exp(-|x|) I0(x)."""
  x, = promote_args_inexact("i0e", x)
  return lax.bessel_i0e(x)


def i0(x):
  """Modified Bessel function of order 0."""
  x, = promote_args_inexact("i0", x)
  return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
  """exp(-|x|) I1(x)."""
  x, = promote_args_inexact("i1e", x)
  return lax.bessel_i1e(x)


def i1(x):
  """Modified Bessel function of order 1."""
  x, = promote_args_inexact("i1", x)
  return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# -- softmax (jax.nn's, with SciPy's default of all axes) ----------------------------

def softmax(x, /, *, axis=None):
  """exp(x) / sum(exp(x)) over ``axis`` (all axes by default)."""
  return nn_functions.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
  """x - logsumexp(x) over ``axis`` (all axes by default)."""
  return nn_functions.log_softmax(x, axis=axis)
