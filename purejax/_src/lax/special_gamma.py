"""NumPy numerics of the gamma family: lgamma, digamma, polygamma, the Hurwitz
zeta function, the regularized incomplete gamma functions (igamma, igammac),
their derivative in ``a`` (igamma_grad_a), random_gamma_grad and the
regularized incomplete beta function.

Each is evaluated in float64 and rounded once to the operand's dtype, so a
float32 result is within an ulp or so of the exact value; XLA's float32
series are, if anything, less accurate (igamma for a in the thousands loses
digits to cancellation there).  The edge cases follow JAX: the value at
zeros, infinities, poles and outside the domain is what JAX's algorithms
produce there (often nan where SciPy returns a limit).

``random_gamma_grad(a, x)`` is dx/da for x ~ Gamma(a, 1) under implicit
reparameterization (Figurnov et al., 2018): holding the CDF u = P(a, x)
fixed, dx/da = -(dP/da) / (dP/dx).  dP/da has no closed form, so it is summed
alongside P: by P's power series where x is small, by the continued fraction
of Q = 1 - P where x > max(a, 1) (Cephes' split between the two, as XLA).

igamma, igammac and betainc take their values from SciPy (needed for them
only); everything else here is NumPy.
"""
import math

import numpy as np

_HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)
# Lanczos approximation, g = 7, n = 9 (about 15 significant digits).
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)


def _wide(x):
  """x as float64 (wider inputs are left alone)."""
  x = np.asarray(x)
  return x.astype(np.float64) if x.dtype.itemsize < 8 else x


def _scipy_special(name):
  try:
    import scipy.special
  except ImportError:
    raise ImportError(f"lax.{name} needs SciPy (pip install scipy).") from None
  return scipy.special


# -- lgamma, digamma ----------------------------------------------------------------

def _lgamma_pos(x):
  """log Gamma(x) for x >= 0.5 (Lanczos)."""
  z = x - 1
  acc = np.full_like(z, _LANCZOS[0])
  for i, p in enumerate(_LANCZOS[1:], start=1):
    acc = acc + p / (z + i)
  t = z + _LANCZOS_G + 0.5
  return _HALF_LOG_2PI + (z + 0.5) * np.log(t) - t + np.log(acc)


def lgamma_np(x):
  x = _wide(x)
  with np.errstate(all="ignore"):
    small = x < 0.5
    pos = _lgamma_pos(np.where(small, 1 - x, x))
    # Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
    sin = np.abs(np.sin(np.pi * (x - np.floor(x))))
    out = np.where(small, np.log(np.pi / sin) - pos, pos)
    out = np.where(small & (x == np.floor(x)), np.inf, out)   # poles
    out = np.where(np.isinf(x), np.inf, out)
    out = np.where((x == 1) | (x == 2), 0., out)               # exact zeros
  return out


def digamma_np(x):
  x = _wide(x)
  with np.errstate(all="ignore"):
    small = x < 0.5
    y = np.where(small, 1 - x, x)
    # Shift y up to >= 10 with psi(y) = psi(y + 1) - 1/y, then psi's
    # asymptotic series (to B_14: about 1e-17 relative there).
    shift = np.zeros_like(y)
    for _ in range(10):
      low = y < 10
      shift = shift - np.where(low, 1 / y, 0.)
      y = np.where(low, y + 1, y)
    inv2 = 1 / (y * y)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 * (1 / 132 - inv2 * (691 / 32760 - inv2 / 12))))))
    pos = np.log(y) - 0.5 / y - series + shift
    # Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
    frac = x - np.floor(x)
    out = np.where(small, pos - np.pi / np.tan(np.pi * frac), pos)
    out = np.where(small & (frac == 0), np.nan, out)           # poles
    out = np.where(x == np.inf, np.inf, np.where(x == -np.inf, np.nan, out))
  return out


# -- zeta, polygamma ----------------------------------------------------------------

# B_2j / (2j)! for the Euler-Maclaurin tail, j = 1..12.
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM_COEFFS = tuple(b / math.factorial(2 * j) for j, b in enumerate(_BERNOULLI, start=1))
_EM_TERMS = 10        # direct terms before the tail (q + 10 >= 10 for q >= 0)
_MAX_SHIFT = 10000    # for q < 0: at most this many more direct terms


def _zeta_em(s, q):
  """Hurwitz zeta for s > 1 finite and finite q off the poles: a direct sum
  up to q + n >= 10, then the Euler-Maclaurin tail."""
  n = _EM_TERMS + np.clip(np.ceil(-q), 0, _MAX_SHIFT).astype(np.int64)
  total = np.zeros_like(q)
  for k in range(int(n.max(initial=0))):
    total = total + np.where(k < n, np.power(q + k, -s), 0.)
  a = q + n
  t = np.power(a, -s)
  tail = a * t / (s - 1) + 0.5 * t
  poch, power = s, t / a
  for j, c in enumerate(_EM_COEFFS, start=1):
    tail = tail + c * poch * power
    poch = poch * (s + 2 * j - 1) * (s + 2 * j)
    power = power / (a * a)
  return total + tail


def _is_int(x):
  return x == np.floor(x)


def zeta_np(s, q):
  """Hurwitz zeta(s, q) = sum_k (q + k)^-s; nan for s < 1, inf at s = 1 and
  at the poles q = 0, -1, ... when s is even (nan when odd), nan for q <= 0
  when s is not an integer, nan when s or q is infinite (as JAX)."""
  s, q = np.broadcast_arrays(_wide(s), _wide(q))
  out = np.full(s.shape, np.nan)
  with np.errstate(all="ignore"):
    nonpos = q <= 0
    pole = nonpos & _is_int(q)
    ok = (s > 1) & np.isfinite(s) & np.isfinite(q) & ~pole & ~(nonpos & ~_is_int(s))
    if ok.any():
      out[ok] = _zeta_em(s[ok], q[ok])
    even = np.isfinite(s) & _is_int(s) & (np.fmod(s, 2) == 0)
    out = np.where(pole, np.where(even, np.inf, np.nan), out)
    out = np.where(s == 1, np.inf, out)
  return out


_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)])


def polygamma_np(m, x):
  """psi^(m)(x): digamma for m = 0, (-1)^(m+1) m! zeta(m + 1, x) above; nan
  unless m is a nonnegative integer."""
  m, x = np.broadcast_arrays(_wide(m), _wide(x))
  with np.errstate(all="ignore"):
    valid = (m >= 0) & np.isfinite(m) & _is_int(m)
    k = np.where(valid, m, 0).astype(np.int64)
    fact = np.where(k <= 170, _FACTORIALS[np.minimum(k, 170)], np.inf)
    sign = np.where(k % 2 == 1, 1., -1.)
    higher = sign * fact * zeta_np(m + 1, x)
    out = np.where(k == 0, digamma_np(x), higher)
    return np.where(valid, out, np.nan)


# -- the incomplete gamma functions ----------------------------------------------------

def _series(a, x):
  """P's power series P = x^a e^-x / Gamma(a+1) * sum_n c_n, c_0 = 1,
  c_n = c_{n-1} x / (a + n): the sum and its a-derivative."""
  c, dc = np.ones_like(a), np.zeros_like(a)
  total, dtotal = np.ones_like(a), np.zeros_like(a)
  r = a.copy()
  live = np.ones(a.shape, bool)
  for _ in range(20000):
    r = r + 1
    dc = dc * (x / r) - c * x / (r * r)
    c = c * (x / r)
    total = np.where(live, total + c, total)
    dtotal = np.where(live, dtotal + dc, dtotal)
    live = live & ((np.abs(c) > 1e-17 * np.abs(total))
                   | (np.abs(dc) > 1e-17 * np.abs(dtotal)))
    if not live.any():
      break
  return total, dtotal


def _fraction(a, x):
  """Cephes' continued fraction Q = x^a e^-x / Gamma(a) * F: F and dF/da,
  carried through the recurrences (their y and z depend on a)."""
  y = 1 - a
  z = x + y + 1
  c = np.zeros_like(a)
  pkm2, qkm2, pkm1, qkm1 = np.ones_like(a), x.copy(), x + 1, z * x
  dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(a), np.zeros_like(a),
                                np.zeros_like(a), -x)
  ans = pkm1 / qkm1
  dans = (dpkm1 - ans * dqkm1) / qkm1
  live = np.ones(a.shape, bool)
  for _ in range(2000):
    c, y, z = c + 1, y + 1, z + 2
    yc = y * c
    pk = pkm1 * z - pkm2 * yc
    qk = qkm1 * z - qkm2 * yc
    dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
    dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
    ok = live & (qk != 0)
    safe_qk = np.where(qk != 0, qk, 1)
    r = pk / safe_qk
    dr = (dpk - r * dqk) / safe_qk
    done = ((np.abs(ans - r) <= 1e-16 * np.abs(r))
            & (np.abs(dans - dr) <= 1e-16 * np.abs(dr)))
    ans = np.where(ok, r, ans)
    dans = np.where(ok, dr, dans)
    live = live & ~(ok & done)
    # Keep the numbers in range: the ratios do not change when all scale.
    scale = np.where(np.abs(pk) > 2.0 ** 600, 2.0 ** -600, 1.)
    pkm2, pkm1, qkm2, qkm1 = pkm1 * scale, pk * scale, qkm1 * scale, qk * scale
    dpkm2, dpkm1, dqkm2, dqkm1 = dpkm1 * scale, dpk * scale, dqkm1 * scale, dqk * scale
    if not live.any():
      break
  return ans, dans


def _by_branch(a, x, sel, series_fn, fraction_fn):
  """Evaluates the series where x is small, the fraction where x > max(a, 1),
  on the selected elements only."""
  out = np.zeros(a.shape, a.dtype)
  use_fraction = (x > 1) & (x > a)
  for mask, fn, branch in ((sel & ~use_fraction, series_fn, _series),
                           (sel & use_fraction, fraction_fn, _fraction)):
    if mask.any():
      out[mask] = fn(a[mask], x[mask], *branch(a[mask], x[mask]))
  return out


def _series_sample_grad(a, x, total, dtotal):
  # P's prefactor has d log / da = log x - digamma(a + 1); dP/dx = it * a / x.
  return -(dtotal + total * (np.log(x) - digamma_np(a + 1))) * x / a


def _fraction_sample_grad(a, x, ans, dans):
  # d log(prefactor) / da = log x - digamma(a); dP/dx = prefactor / x.
  return (dans + ans * (np.log(x) - digamma_np(a))) * x


def random_gamma_grad_np(a, x):
  out_dtype = np.result_type(a, x)
  a, x = np.broadcast_arrays(_wide(a), _wide(x))
  with np.errstate(all="ignore"):
    nan = np.isnan(a) | np.isnan(x)
    bad = (x < 0) | (a <= 0)
    zero = x == 0
    # No density factor here, so no underflow: sum wherever x > 0 (JAX
    # stops early where the density underflows, a cruder value there).
    ok = ~(nan | bad | zero)
    out = _by_branch(a, x, ok, _series_sample_grad, _fraction_sample_grad)
    infinite = (x == np.inf) | ((a == np.inf) & (x > 0))
    out = np.where(bad | nan | infinite, np.nan, out)
  return out.astype(out_dtype)


def igamma_grad_a_np(a, x):
  """dP(a, x)/da; nan outside a > 0, x >= 0 and where x is infinite."""
  out_dtype = np.result_type(a, x)
  a, x = np.broadcast_arrays(_wide(a), _wide(x))
  with np.errstate(all="ignore"):
    nan = np.isnan(a) | np.isnan(x) | (x < 0) | (a <= 0)
    log_ax = a * np.log(x) - x - lgamma_np(a)
    ok = ~nan & (x > 0) & np.isfinite(log_ax) & (log_ax > -800)   # else exp(log_ax) = 0

    def series(a, x, total, dtotal):
      dlog = np.log(x) - digamma_np(a + 1)
      return np.exp(a * np.log(x) - x - lgamma_np(a)) * (total * dlog + dtotal) / a

    def fraction(a, x, ans, dans):
      dlog = np.log(x) - digamma_np(a)
      return -np.exp(a * np.log(x) - x - lgamma_np(a)) * (ans * dlog + dans)

    out = _by_branch(a, x, ok, series, fraction)
    out = np.where(nan | ~np.isfinite(log_ax) & (x > 0), np.nan, out)
  return out.astype(out_dtype)


def _gamma_edges(a, x):
  """Masks of JAX's igamma edge cases: nan inputs or outside the domain; a
  infinite (nan unless x < 1); a = 0 (a jump at x = 1)."""
  nan = np.isnan(a) | np.isnan(x) | (x < 0) | (a < 0) | ((a == 0) & (x == 0))
  a_inf = (a == np.inf) & (x >= 1) & (x < np.inf)
  return nan, a_inf


def igamma_np(a, x):
  """P(a, x), the regularized lower incomplete gamma function."""
  sp = _scipy_special("igamma")
  out_dtype = np.result_type(a, x)
  a, x = np.broadcast_arrays(_wide(a), _wide(x))
  with np.errstate(all="ignore"):
    nan, a_inf = _gamma_edges(a, x)
    out = sp.gammainc(np.where(a == 0, 1., a), x)
    out = np.where(a == np.inf, 0., out)
    out = np.where(a == 0, np.where(x >= 1, 1., np.nan), out)
    out = np.where(x == 0, 0., np.where(x == np.inf, 1., out))
    out = np.where(nan | a_inf, np.nan, out)
  return out.astype(out_dtype)


def igammac_np(a, x):
  """Q(a, x) = 1 - P(a, x), the regularized upper incomplete gamma function."""
  sp = _scipy_special("igammac")
  out_dtype = np.result_type(a, x)
  a, x = np.broadcast_arrays(_wide(a), _wide(x))
  with np.errstate(all="ignore"):
    nan, a_inf = _gamma_edges(a, x)
    out = sp.gammaincc(np.where(a == 0, 1., a), x)
    out = np.where(a == np.inf, 1., out)
    out = np.where((x == np.inf) | (a == 0), 0., out)
    out = np.where(nan | a_inf, np.nan, out)
  return out.astype(out_dtype)


# -- the incomplete beta function ----------------------------------------------------

def betainc_np(a, b, x):
  """I_x(a, b), the regularized incomplete beta function; a = 0 or b = inf
  make it a step up at x = 0, b = 0 or a = inf one at x = 1 (as JAX)."""
  sp = _scipy_special("betainc")
  out_dtype = np.result_type(a, b, x)
  a, b, x = np.broadcast_arrays(_wide(a), _wide(b), _wide(x))
  with np.errstate(all="ignore"):
    a_zero = (a == 0) | (b == np.inf)
    b_zero = (b == 0) | (a == np.inf)
    out = sp.betainc(a, b, x)
    out = np.where((b_zero & (x != 1)) | (a_zero & (x == 0)), 0., out)
    out = np.where((a_zero & (x != 0)) | (b_zero & (x == 1)), 1., out)
    nan = ((a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero)
           | np.isnan(a) | np.isnan(b) | np.isnan(x))
    out = np.where(nan, np.nan, out)
  return out.astype(out_dtype)
