"""C code of the special functions of ``lax/special.py`` beyond erf and
lgamma: digamma, polygamma, the Hurwitz zeta function, the regularized
incomplete gamma functions and their derivatives in ``a``, the regularized
incomplete beta function and the scaled Bessel functions i0e and i1e.

All are computed in double (for float32 operands too, rounded once to float,
as the NumPy impls round their float64 values; float16 and bfloat16 results
are that float rounded once more, as XLA evaluates halves in float32) and take their edge values
(zeros, infinities, poles, outside the domain) from the NumPy impls, case for
case.  digamma, zeta, polygamma, igamma_grad_a and random_gamma_grad follow
the NumPy algorithms step for step; igamma, igammac, betainc, i0e and i1e
(SciPy's values in the NumPy impls) are series, continued fractions and
asymptotic expansions as Cephes evaluates them.  ``codegen_ops`` wraps each
in ``pj_flush``/``pj_flushf`` (XLA's CPU flushes subnormal results).
"""
import math

import numpy as np

from purejax._src.lax import special_gamma


def _factorials():
  return ", ".join(float(math.factorial(k)).hex() for k in range(171))


def _zetas():
  """zeta(k), k = 0..31 (the first two unused)."""
  from purejax._src.lax.special_gamma import zeta_np
  return ", ".join(["0.0", "0.0"] + [float(zeta_np(np.float64(k), np.float64(1))).hex()
                                     for k in range(2, 32)])


def _em_coefficients():
  return ", ".join(float(c).hex() for c in special_gamma._EM_COEFFS)


SOURCE = (r"""
static inline double pj_flush(double r) { return fabs(r) < 0x1p-1022 ? r * 0.0 : r; }
static inline float pj_flushf(float r) { return fabsf(r) < 0x1p-126f ? r * 0.0f : r; }

/* psi(x): shifted up to >= 10 by psi(y) = psi(y + 1) - 1/y, then the
   asymptotic series; reflection below 1/2. */
static double pj_digamma(double x) {
  if (x != x || x == -INFINITY) return NAN;
  if (x == INFINITY) return x;
  const int small = x < 0.5;
  double y = small ? 1 - x : x, shift = 0;
  for (int i = 0; i < 10; i++)
    if (y < 10) { shift = shift - 1 / y; y = y + 1; }
  const double inv2 = 1 / (y * y);
  const double series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (
      1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 / 12))))));
  const double pos = log(y) - 0.5 / y - series + shift;
  if (!small) return pos;
  const double frac = x - floor(x);
  if (frac == 0) return NAN;   /* a pole */
  return pos - 3.141592653589793 / tan(3.141592653589793 * frac);
}

/* Hurwitz zeta: direct terms up to q + n >= 10, then the Euler-Maclaurin
   tail with B_2j / (2j)!, j = 1..12. */
static const double pj_zeta_em[12] = {@EM@};
static double pj_zeta(double s, double q) {
  if (s == 1) return INFINITY;
  const int nonpos = q <= 0, pole = nonpos && q == floor(q);
  if (pole) return isfinite(s) && s == floor(s) && fmod(s, 2.0) == 0 ? INFINITY : NAN;
  if (!(s > 1) || !isfinite(s) || !isfinite(q) || (nonpos && s != floor(s))) return NAN;
  const double up = ceil(-q);
  const int64_t n = 10 + (int64_t)(up < 0 ? 0 : up > 10000 ? 10000 : up);
  double total = 0;
  for (int64_t k = 0; k < n; k++) total = total + pow(q + (double)k, -s);
  const double a = q + (double)n, t = pow(a, -s);
  double tail = a * t / (s - 1) + 0.5 * t, poch = s, power = t / a;
  for (int j = 1; j <= 12; j++) {
    tail = tail + pj_zeta_em[j - 1] * poch * power;
    poch = poch * (s + 2 * j - 1) * (s + 2 * j);
    power = power / (a * a);
  }
  return total + tail;
}

static const double pj_factorial[171] = {@FACTORIALS@};
static double pj_polygamma(double m, double x) {
  if (!(m >= 0) || !isfinite(m) || m != floor(m)) return NAN;
  if (m == 0) return pj_digamma(x);
  const double fact = m <= 170 ? pj_factorial[(int)m] : INFINITY;
  const double sign = fmod(m, 2.0) == 1 ? 1.0 : -1.0;
  return sign * fact * pj_zeta(m + 1, x);
}

/* lgamma(a) - Stirling's (a - 1/2) log a - a + log(2 pi) / 2, for a >= 10. */
static double pj_stirling_tail(double a) {
  const double r = 1 / a, r2 = r * r;
  return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 * (
      1.0 / 1188 - r2 * (691.0 / 360360 - r2 * (1.0 / 156 - r2 * (3617.0 / 122400))))))));
}
/* log(1 + d) - d without the cancellation of small d. */
static double pj_log1pmx(double d) {
  if (fabs(d) >= 0.25) return log1p(d) - d;
  double p = d, sum = 0;
  for (int k = 2; k < 60; k++) {
    p = -p * d;
    const double t = p / k;
    sum += t;
    if (fabs(t) <= 1e-18 * fabs(sum)) break;
  }
  return sum;
}
/* x^a e^-x / Gamma(a), for a large through Stirling (no cancellation of
   a log x - x against lgamma a). */
static double pj_igam_factor(double a, double x) {
  if (a < 10) return exp(a * log(x) - x - pj_lgamma(a));
  const double d = (x - a) / a;
  const double e = fabs(d) < 0.25 ? a * pj_log1pmx(d) : a * log(x / a) + (a - x);
  return sqrt(a / 6.283185307179586) * exp(e - pj_stirling_tail(a));
}
/* lgamma(1 + a), accurate for small a: -gamma a + sum_k zeta(k) (-a)^k / k. */
static const double pj_zeta_int[32] = {@ZETAS@};
static double pj_lgam1p(double a) {
  if (fabs(a) >= 0.2) return pj_lgamma(1 + a);
  double p = -a, sum = -0.5772156649015329 * a;
  for (int k = 2; k < 32; k++) { p *= -a; sum += pj_zeta_int[k] * p / k; }
  return sum;
}
/* Q(a, x) for small x and a: 1 - x^a / Gamma(a + 1) (by expm1) minus
   x^a / Gamma(a) sum_n>=1 (-x)^n / (n! (a + n)). */
static double pj_igamc_small(double a, double x) {
  double f = 1, sum = 0;
  for (int n = 1; n < 2000; n++) {
    f *= -x / n;
    const double t = f / (a + n);
    sum += t;
    if (fabs(t) <= 1e-17 * fabs(sum)) break;
  }
  const double lx = log(x);
  return -expm1(a * lx - pj_lgam1p(a)) - exp(a * lx - pj_lgamma(a)) * sum;
}
/* P(a, x) (upper = 0) or Q(a, x) (upper = 1) for finite a, x > 0: P's power
   series where x < a + 1, else Q's continued fraction (Lentz). */
static double pj_igam(double a, double x, int upper) {
  if (upper && x <= 1.1 && a < (x <= 0.5 ? -0.4 / log(x) : 1.1 * x))
    return pj_igamc_small(a, x);
  const double fac = pj_igam_factor(a, x);
  if (fac == 0) return upper ? (x > a ? 0 : 1) : (x > a ? 1 : 0);
  if (x < a + 1) {
    double r = a, c = 1, sum = 1;
    for (int i = 0; i < 100000; i++) {
      r += 1; c *= x / r; sum += c;
      if (c <= 1e-17 * sum) break;
    }
    const double p = fac * sum / a;
    return upper ? 1 - p : p;
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, cc = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b; if (fabs(d) < tiny) d = tiny;
    cc = b + an / cc; if (fabs(cc) < tiny) cc = tiny;
    d = 1 / d;
    const double del = d * cc;
    h *= del;
    if (fabs(del - 1) <= 1e-16) break;
  }
  const double q = fac * h;
  return upper ? q : 1 - q;
}
static double pj_igamma(double a, double x) {
  if (a != a || x != x || x < 0 || a < 0 || (a == 0 && x == 0)) return NAN;
  if (a == INFINITY && x >= 1 && x < INFINITY) return NAN;
  if (x == 0) return 0;
  if (x == INFINITY) return 1;
  if (a == 0) return x >= 1 ? 1 : NAN;
  if (a == INFINITY) return 0;
  return pj_igam(a, x, 0);
}
static double pj_igammac(double a, double x) {
  if (a != a || x != x || x < 0 || a < 0 || (a == 0 && x == 0)) return NAN;
  if (a == INFINITY && x >= 1 && x < INFINITY) return NAN;
  if (x == INFINITY || a == 0) return 0;
  if (a == INFINITY || x == 0) return 1;
  return pj_igam(a, x, 1);
}

/* P's power series sum and its a-derivative (prefactor x^a e^-x / Gamma(a+1)). */
static void pj_igam_series_da(double a, double x, double* total, double* dtotal) {
  double c = 1, dc = 0, t = 1, dt = 0, r = a;
  for (int i = 0; i < 20000; i++) {
    r = r + 1;
    dc = dc * (x / r) - c * x / (r * r);
    c = c * (x / r);
    t = t + c; dt = dt + dc;
    if (!(fabs(c) > 1e-17 * fabs(t) || fabs(dc) > 1e-17 * fabs(dt))) break;
  }
  *total = t; *dtotal = dt;
}
/* Q's continued fraction (Cephes' recurrences) and its a-derivative. */
static void pj_igam_fraction_da(double a, double x, double* ans_out, double* dans_out) {
  double y = 1 - a, z = x + y + 1, c = 0;
  double pkm2 = 1, qkm2 = x, pkm1 = x + 1, qkm1 = z * x;
  double dpkm2 = 0, dqkm2 = 0, dpkm1 = 0, dqkm1 = -x;
  double ans = pkm1 / qkm1, dans = (dpkm1 - ans * dqkm1) / qkm1;
  for (int i = 0; i < 2000; i++) {
    c = c + 1; y = y + 1; z = z + 2;
    const double yc = y * c;
    const double pk = pkm1 * z - pkm2 * yc, qk = qkm1 * z - qkm2 * yc;
    const double dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    const double dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    if (qk != 0) {
      const double r = pk / qk, dr = (dpk - r * dqk) / qk;
      const int done = fabs(ans - r) <= 1e-16 * fabs(r) && fabs(dans - dr) <= 1e-16 * fabs(dr);
      ans = r; dans = dr;
      if (done) break;
    }
    const double scale = fabs(pk) > 0x1p600 ? 0x1p-600 : 1.0;
    pkm2 = pkm1 * scale; pkm1 = pk * scale; qkm2 = qkm1 * scale; qkm1 = qk * scale;
    dpkm2 = dpkm1 * scale; dpkm1 = dpk * scale; dqkm2 = dqkm1 * scale; dqkm1 = dqk * scale;
  }
  *ans_out = ans; *dans_out = dans;
}
static double pj_random_gamma_grad(double a, double x) {
  if (a != a || x != x || x < 0 || a <= 0) return NAN;
  if (x == INFINITY || (a == INFINITY && x > 0)) return NAN;
  if (x == 0) return 0;
  double v, dv;
  if (x > 1 && x > a) {
    pj_igam_fraction_da(a, x, &v, &dv);
    return (dv + v * (log(x) - pj_digamma(a))) * x;
  }
  pj_igam_series_da(a, x, &v, &dv);
  return -(dv + v * (log(x) - pj_digamma(a + 1))) * x / a;
}
static double pj_igamma_grad_a(double a, double x) {
  if (a != a || x != x || x < 0 || a <= 0) return NAN;
  const double log_ax = a * log(x) - x - pj_lgamma(a);
  if (x > 0 && !isfinite(log_ax)) return NAN;
  if (!(x > 0) || !(log_ax > -800)) return 0;
  double v, dv;
  if (x > 1 && x > a) {
    pj_igam_fraction_da(a, x, &v, &dv);
    return -exp(log_ax) * (v * (log(x) - pj_digamma(a)) + dv);
  }
  pj_igam_series_da(a, x, &v, &dv);
  return exp(log_ax) * (v * (log(x) - pj_digamma(a + 1)) + dv) / a;
}

/* I_x(a, b) for finite a, b > 0 and 0 < x < 1: the continued fraction
   (modified Lentz) on the side of the mean where it converges fast. */
static double pj_betainc_cf(double a, double b, double x, double y, double log_x,
                            double log_y) {
  const double lbeta = pj_lgamma(a) + pj_lgamma(b) - pj_lgamma(a + b);
  const double front = exp(a * log_x + b * log_y - lbeta) / a;
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (fabs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m < 100000; m++) {
    const double m2 = 2.0 * m;
    double an = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
    d = 1 + an * d; if (fabs(d) < tiny) d = tiny;
    c = 1 + an / c; if (fabs(c) < tiny) c = tiny;
    d = 1 / d; h *= d * c;
    an = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
    d = 1 + an * d; if (fabs(d) < tiny) d = tiny;
    c = 1 + an / c; if (fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (fabs(del - 1) <= 1e-16) break;
  }
  (void)y;
  return front * h;
}
static double pj_betainc(double a, double b, double x) {
  if (a != a || b != b || x != x || a < 0 || b < 0 || x < 0 || x > 1) return NAN;
  const int a_zero = a == 0 || b == INFINITY, b_zero = b == 0 || a == INFINITY;
  if (a_zero && b_zero) return NAN;
  if ((a_zero && x != 0) || (b_zero && x == 1)) return 1;
  if (b_zero || a_zero) return 0;
  if (x == 0) return 0;
  if (x == 1) return 1;
  const double y = 1 - x;
  if (x > (a + 1) / (a + b + 2))
    return 1 - pj_betainc_cf(b, a, y, x, log(y), log(x));
  return pj_betainc_cf(a, b, x, y, log(x), log1p(-x));
}

/* exp(-|x|) I_nu(|x|), nu = 0 or 1: the power series times exp(-x) up to
   x = 30 (positive terms), the asymptotic expansion above (its smallest
   term is about e^-2x). */
static double pj_bessel_ie(double x, int nu) {
  if (x != x) return x;
  if (x == INFINITY) return 0;
  if (x <= 30) {
    const double q = x * x / 4;
    double t = nu ? x / 2 : 1, sum = t;
    for (int k = 1; k < 500; k++) {
      t *= q / ((double)k * (double)(k + nu));
      sum += t;
      if (t <= 1e-17 * sum) break;
    }
    return sum * exp(-x);
  }
  const double mu = 4.0 * nu * nu;
  double t = 1, sum = 1;
  for (int k = 1; k < 60; k++) {
    const double odd = 2.0 * k - 1;
    t *= -(mu - odd * odd) / (8.0 * k * x);
    sum += t;
    if (fabs(t) <= 1e-17 * fabs(sum)) break;
  }
  return sum / sqrt(6.283185307179586 * x);
}
static double pj_bessel_i0e(double x) { return pj_bessel_ie(fabs(x), 0); }
static double pj_bessel_i1e(double x) {
  const double r = pj_bessel_ie(fabs(x), 1);
  return signbit(x) ? -r : r;
}
""".replace("@FACTORIALS@", _factorials()).replace("@EM@", _em_coefficients())
                 .replace("@ZETAS@", _zetas()))

# primitive -> its C function (arguments in the primitive's order).
FUNCTIONS = {
    "digamma": "pj_digamma", "polygamma": "pj_polygamma", "zeta": "pj_zeta",
    "igamma": "pj_igamma", "igammac": "pj_igammac", "igamma_grad_a": "pj_igamma_grad_a",
    "random_gamma_grad": "pj_random_gamma_grad",
    "regularized_incomplete_beta": "pj_betainc",
    "bessel_i0e": "pj_bessel_i0e", "bessel_i1e": "pj_bessel_i1e",
}


def supports(ins, out, params):
  """float64, float32 and the half floats (through float)."""
  return all(np.dtype(d).name in ("float64", "float32", "float16", "bfloat16")
             for d in list(ins) + [out])


def emit(name):
  def emit_fn(ctx, args, ins, out, params):
    call = f"{FUNCTIONS[name]}({', '.join(f'(double)({a})' for a in args)})"
    if np.dtype(out) != np.float64:   # a half's float is rounded by codegen_ops.emit
      return f"pj_flushf((float){call})"
    return f"pj_flush({call})"
  return emit_fn


OPS = {name: (supports, emit(name)) for name in FUNCTIONS}
