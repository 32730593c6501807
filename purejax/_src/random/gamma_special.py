"""Special functions the gamma-family samplers need: lgamma, digamma, and
random_gamma_grad.

They are elementwise primitives with NumPy implementations, each evaluated
in float64 and rounded once to the operand's dtype, so a float32 result is
within an ulp or so of XLA's (whose float32 series are, if anything, less
accurate).

``random_gamma_grad(a, x)`` is dx/da for x ~ Gamma(a, 1) under implicit
reparameterization (Figurnov et al., 2018): holding the CDF u = P(a, x)
fixed, dx/da = -(dP/da) / (dP/dx).  dP/da has no closed form, so it is summed
alongside P: by P's power series where x is small, by the continued fraction
of Q = 1 - P where x > max(a, 1) (Cephes' split between the two, as XLA).
"""
import numpy as np

from purejax._src.interpreters import ad
from purejax._src.lax.elementwise import mul_p
from purejax._src.lax.families import binary, float_dtypes, unary

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
    # Shift y up to >= 6 with psi(y) = psi(y + 1) - 1/y, then psi's
    # asymptotic series.
    shift = np.zeros_like(y)
    for _ in range(6):
      low = y < 6
      shift = shift - np.where(low, 1 / y, 0.)
      y = np.where(low, y + 1, y)
    inv2 = 1 / (y * y)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 * (1 / 132)))))
    pos = np.log(y) - 0.5 / y - series + shift
    # Reflection: psi(1 - x) - psi(x) = pi cot(pi x).
    frac = x - np.floor(x)
    out = np.where(small, pos - np.pi / np.tan(np.pi * frac), pos)
    out = np.where(small & (frac == 0), np.nan, out)           # poles
    out = np.where(x == np.inf, np.inf, np.where(x == -np.inf, np.nan, out))
  return out


def _series_grad(a, x, logx):
  """dx/da from P's power series, P = x^a e^-x / Gamma(a+1) * sum_n c_n with
  c_0 = 1, c_n = c_{n-1} x / (a + n); the a-derivative carried term by term."""
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
  # P's prefactor has d log / da = log x - digamma(a + 1); dP/dx = it * a / x.
  return -(dtotal + total * (logx - digamma_np(a + 1))) * x / a


def _fraction_grad(a, x, logx):
  """dx/da from Cephes' continued fraction Q = x^a e^-x / Gamma(a) * F, with
  dF/da carried through the recurrences (their y and z depend on a)."""
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
  # d log(prefactor) / da = log x - digamma(a); dP/dx = prefactor / x.
  return (dans + ans * (logx - digamma_np(a))) * x


def random_gamma_grad_np(a, x):
  out_dtype = np.result_type(a, x)
  a, x = np.broadcast_arrays(_wide(a), _wide(x))
  with np.errstate(all="ignore"):
    nan = np.isnan(a) | np.isnan(x)
    bad = (x < 0) | (a <= 0)
    zero = x == 0
    logx = np.log(x)
    # Where the density underflows the sample carries no derivative (0).
    log_ax = a * logx - x - lgamma_np(a)
    ok = ~(nan | bad | zero) & (log_ax > -np.log(np.finfo(out_dtype).max))
    use_fraction = (x > 1) & (x > a)
    out = np.zeros(a.shape, a.dtype)
    sel = ok & ~use_fraction
    if sel.any():
      out[sel] = _series_grad(a[sel], x[sel], logx[sel])
    sel = ok & use_fraction
    if sel.any():
      out[sel] = _fraction_grad(a[sel], x[sel], logx[sel])
    out = np.where(bad | nan, np.nan, out)
  return out.astype(out_dtype)


def _no_jvp(name):
  def rule(primals, tangents, **params):
    raise NotImplementedError(f"Differentiation rule for '{name}' not implemented")
  return rule


lgamma_p = unary("lgamma", float_dtypes, lambda x: lgamma_np(x).astype(x.dtype))
digamma_p = unary("digamma", float_dtypes, lambda x: digamma_np(x).astype(x.dtype))
ad.defjvp(lgamma_p, lambda g, x: mul_p.bind(g, digamma_p.bind(x)))
digamma_p.jvp = _no_jvp("digamma")
random_gamma_grad_p = binary("random_gamma_grad", float_dtypes, random_gamma_grad_np)
random_gamma_grad_p.jvp = _no_jvp("random_gamma_grad")   # as in JAX


def lgamma(x):
  return lgamma_p.bind(x)


def digamma(x):
  return digamma_p.bind(x)


def random_gamma_grad(a, x):
  """dx/da of x ~ Gamma(a, 1) at a fixed CDF (elementwise, same dtypes)."""
  return random_gamma_grad_p.bind(a, x)
