"""The C code every kernel file starts with: helpers with lax's semantics
(NaN-propagating max/min, bit casts), float32 exp and log, and the
declarations that let gcc vectorize math calls through glibc's libmvec.
"""

# Math functions gcc may call in their vector forms (glibc's libmvec), per
# dtype: those that agree with NumPy within 2 ulp (measured).  float32 exp
# and log have vectorizable implementations below instead (libmvec's are off
# by up to 4 ulp), and so has float32 tanh (in float32, about as fast as libmvec's) (with a NumPy twin, so that jitted
# code using it may be tiered); the other float64 functions stay scalar glibc
# (1 ulp).
VECTOR_MATH = {
    "float": ("exp2", "expm1", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
              "cosh", "asinh", "acosh", "atanh", "cbrt", "pow", "atan2"),
    "double": ("tanh", "cbrt", "asinh", "acosh", "atanh"),
}

# The parts are named so that the CUDA backend's device prelude can take the
# ones that are portable C (``PORTABLE``: no libc calls, no globals) as they are.
_INCLUDES = r"""#include <stdint.h>
#include <stdlib.h>
#include <math.h>

"""
_MINMAX = r"""/* max/min as lax defines them: NaN propagates, -0.0 orders below +0.0. */
static inline float pj_maxf(float a, float b) {
  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b; }
static inline float pj_minf(float a, float b) {
  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b; }
static inline double pj_max(double a, double b) {
  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? b : a) : a > b ? a : b; }
static inline double pj_min(double a, double b) {
  return a != a ? a : b != b ? b : a == b ? (signbit(a) ? a : b) : a < b ? a : b; }
"""
_OPAQUE_ZERO = r"""/* Always 0, but gcc cannot know it: x ^ pj_opaque_zero hides where an
   integer came from (see the int -> float conversion in codegen_ops). */
__attribute__((visibility("hidden"))) int32_t pj_opaque_zero = 0;
"""
_BITS = r"""static inline uint32_t pj_bitsf(float x) {
  union { float f; uint32_t u; } c; c.f = x; return c.u; }
static inline uint64_t pj_bits(double x) {
  union { double f; uint64_t u; } c; c.f = x; return c.u; }
static inline double pj_from_bits(uint64_t u) {
  union { double f; uint64_t u; } c; c.u = u; return c.f; }
/* Floats as signed integers in IEEE total order (-0 below +0), so that a
   float max or min reduces as one vectorized integer max or min. */
static inline int32_t pj_order_keyf(float x) {
  const int32_t s = (int32_t)pj_bitsf(x); return s ^ ((s >> 31) & 0x7fffffff); }
static inline float pj_from_order_keyf(int32_t k) {
  union { float f; uint32_t u; } c; c.u = (uint32_t)(k ^ ((k >> 31) & 0x7fffffff)); return c.f; }
static inline int64_t pj_order_key(double x) {
  const int64_t s = (int64_t)pj_bits(x); return s ^ ((s >> 63) & 0x7fffffffffffffffLL); }
static inline double pj_from_order_key(int64_t k) {
  return pj_from_bits((uint64_t)(k ^ ((k >> 63) & 0x7fffffffffffffffLL))); }
"""
_LGAMMA = r"""/* lgamma without the global signgam (which every thread would write). */
float lgammaf_r(float, int*);
double lgamma_r(double, int*);
static inline float pj_lgammaf(float x) { int s; return lgammaf_r(x, &s); }
static inline double pj_lgamma(double x) { int s; return lgamma_r(x, &s); }

"""
_EXP_LOG_TANH = r"""/* float32 exp and log within 1 ulp, vectorizable (libmvec's expf and logf
   are off by up to 4 ulp).  exp: x = k ln2 + r (ln2 split so that k ln2_hi is
   exact), e^r = 1 + r + r^2 p(r) with p's Taylor series to r^5, then 2^k in
   two steps (exact, and one rounding into the subnormals).  log: in double,
   log m = 2 atanh((m - 1) / (m + 1)) for the mantissa m in [sqrt(1/2), sqrt(2)). */
static inline float pj_f_from_bits(uint32_t u) {
  union { float f; uint32_t u; } c; c.u = u; return c.f; }
static inline float pj_expf(float x) {
  const float xc = x > 88.8f ? 88.8f : x < -104.0f ? -104.0f : x;
  const float k = __builtin_rintf(xc * 1.44269504088896341f);
  const float r = __builtin_fmaf(-k, 1.428606765330187e-06f,
                                 __builtin_fmaf(-k, 0.693145751953125f, xc));
  const float p = 0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720
      + r * (1.0f / 5040)))));
  const float e = 1.0f + __builtin_fmaf(r * r, p, r);
  const int32_t ki = (int32_t)k, k1 = ki >> 1, k2 = ki - k1;
  const float y = e * pj_f_from_bits((uint32_t)(k1 + 127) << 23)
                    * pj_f_from_bits((uint32_t)(k2 + 127) << 23);
  return x != x ? x : y;
}
static inline float pj_logf(float xf) {
  const uint64_t u = pj_bits((double)xf);
  const double m0 = pj_from_bits((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  const int big = m0 > 1.4142135623730951;   /* m in [sqrt(1/2), sqrt(2)) */
  const double m = big ? m0 * 0.5 : m0;
  const double e = (double)((int64_t)((u >> 52) & 0x7ff) - 1023 + big);
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;   /* log m = 2 atanh s */
  const double q = 2.0 * s * (1.0 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9
      + s2 * (1.0 / 11 + s2 * (1.0 / 13)))))));
  const float y = (float)(e * 0.6931471805599453 + q);
  return xf != xf || xf < 0 ? NAN : xf == 0 ? -INFINITY : xf == INFINITY ? xf : y;
}
/* float32 tanh within 1.5 ulp, all in float32, vectorizable (both branches
   computed, then selected).  |x| < 0.55: a + a^3 p(a^2), p fitted (minimax
   style) to (tanh a - a) / a^3.  Else 1 - 2 / (e^{2a} + 1) with 2a clamped
   to 20 (where the result is 1): 2a = k ln2 + r (k ln2_hi and 2a - k ln2_hi
   exact), e^r = 1 + r + r^2 (1/2 + r q(r)) with q fitted, times 2^k.  The
   fmaf calls are emulated exactly by the NumPy twin.  Sign and NaN from x. */
static inline float pj_tanhf(float x) {
  const float a = fabsf(x), s = a * a;
  const float p = __builtin_fmaf(__builtin_fmaf(__builtin_fmaf(__builtin_fmaf(
      -0x1.9b3038p-8f, s, 0x1.593d04p-6f), s, -0x1.b9287ap-5f), s, 0x1.110d26p-3f),
      s, -0x1.55554ap-2f);
  const float ts = __builtin_fmaf(a * s, p, a);
  const float y0 = a + a, y = y0 < 20.0f ? y0 : 20.0f;
  const float k = __builtin_rintf(y * 0x1.715476p+0f);
  const float r = __builtin_fmaf(-k, 0x1.7f7d1cp-20f, __builtin_fmaf(-k, 0x1.62e4p-1f, y));
  const float q = __builtin_fmaf(__builtin_fmaf(__builtin_fmaf(__builtin_fmaf(
      0x1.6b6e18p-10f, r, 0x1.122fc2p-7f), r, 0x1.555688p-5f), r, 0x1.5554a4p-3f), r, 0.5f);
  const float e = (1.0f + __builtin_fmaf(r * r, q, r))
                  * pj_f_from_bits((uint32_t)((int32_t)k + 127) << 23);
  const float tl = 1.0f - 2.0f / (e + 1.0f);
  const float t = a < 0.55f ? ts : tl;
  return x != x ? x : copysignf(t, x);
}
"""
PRELUDE = _INCLUDES + _MINMAX + _OPAQUE_ZERO + _BITS + _LGAMMA + _EXP_LOG_TANH

# log(1 - s) in double for s in [0, 1], vectorizable: 2 atanh(-s / (2 - s))
# for s < 1/4; else 1 - s (exact for the float32 s erf_inv passes) split into
# 2^e m with m in [sqrt(1/2), sqrt(2)), log m = 2 atanh((m - 1) / (m + 1)),
# e ln2 in two parts.  Against NumPy's float64 log1p(-s): at most 1 ulp
# apart, and the same float32 rounding for every float32 s in [0, 1]
# (checked exhaustively).
_LOG1M = r"""
static inline double pj_log1m(double s) {
  const uint64_t u = pj_bits(1.0 - s);
  const double m0 = pj_from_bits((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  const int big = m0 > 1.4142135623730951;
  const double m = big ? m0 * 0.5 : m0;
  const double e = (double)((int64_t)((u >> 52) & 0x7ff) - 1023 + big);
  const int near = s < 0.25;
  const double a = (near ? -s : m - 1.0) / (near ? 2.0 - s : m + 1.0), a2 = a * a;
  const double q = 2.0 * a + 2.0 * a * a2 * (1.0 / 3 + a2 * (1.0 / 5 + a2 * (1.0 / 7
      + a2 * (1.0 / 9 + a2 * (1.0 / 11 + a2 * (1.0 / 13 + a2 * (1.0 / 15 + a2 * (1.0 / 17
      + a2 * (1.0 / 19 + a2 * (1.0 / 21))))))))));
  const double y = near ? q : e * 6.93147180369123816490e-01 + (e * 1.90821492927058770002e-10 + q);
  return s == 1.0 ? -INFINITY : y;
}
"""
PRELUDE += _LOG1M


def _erf_inv_f32_source():
  """float32 erf_inv, step for step as ``special_erf.erf_inv_np`` (and the
  flush of subnormal results of special functions): each Horner step is a
  float64 product of two floats (exact) plus a coefficient, rounded to
  float64 and then to float32.  The kernels are compiled without FMA
  contraction, so no step rounds differently."""
  import numpy as np
  from purejax._src.lax import special_erf

  def lit(c):
    return f"{float(np.float32(c)).hex()}"

  small, large = special_erf._F32_SMALL, special_erf._F32_LARGE
  steps = "\n".join(f"  p = (float)((double)p * w + (small ? {lit(a)} : {lit(b)}));"
                     for a, b in zip(small[1:], large[1:]))
  return rf"""
static inline float pj_erf_invf(float x) {{
  const float w0 = (float)(-pj_log1m((double)(x * x)));
  const int small = w0 < 5.0f;
  const double w = (double)(small ? w0 - 2.5f : sqrtf(w0) - 3.0f);
  float p = small ? (float){lit(small[0])} : (float){lit(large[0])};
{steps}
  const float y = p * x, ax = fabsf(x);
  const float r = ax == 1.0f ? x * INFINITY : ax > 1.0f ? NAN : y;
  return fabsf(r) < 0x1p-126f ? r * 0.0f : r;
}}
"""


_ERF_INV_F32 = _erf_inv_f32_source()
PRELUDE += _ERF_INV_F32


def _erf_inv_f64_source():
  """float64 erf_inv with ``special_erf``'s polynomials, each Horner step
  as the NumPy tier takes it; w from the C library's log1p, which may round
  its last bit otherwise than NumPy's (results a few ulp apart: erf_inv is
  not among the primitives the tiers share bit for bit)."""
  from purejax._src.lax import special_erf

  def horner(coefficients, w):
    text = coefficients[0].hex()
    for c in coefficients[1:]:
      text = f"({text}) * {w} + {c.hex()}"
    return text
  return rf"""
static inline double pj_erf_inv(double x) {{
  const double w0 = -log1p(-x * x);
  const int small = w0 < 6.25, mid = w0 < 16.0;
  const double ws = w0 - 3.125, wm = sqrt(w0) - 3.25, wl = sqrt(w0) - 5.0;
  const double ps = {horner(special_erf._F64_SMALL, "ws")};
  const double pm = {horner(special_erf._F64_MID, "wm")};
  const double pl = {horner(special_erf._F64_LARGE, "wl")};
  const double y = (small ? ps : mid ? pm : pl) * x, ax = fabs(x);
  return ax == 1.0 ? x * INFINITY : ax > 1.0 ? NAN : y;
}}
"""


_ERF_INV_F64 = _erf_inv_f64_source()
PRELUDE += _ERF_INV_F64


def vector_math_declarations():
  """``declare simd`` prototypes so that gcc vectorizes these calls through
  libmvec."""
  lines = []
  for ct, names in VECTOR_MATH.items():
    for name in names:
      args = ", ".join([ct] * (2 if name in ("pow", "atan2") else 1))
      suffix = "f" if ct == "float" else ""
      lines.append(f"#pragma omp declare simd notinbranch\n{ct} {name}{suffix}({args});")
  return "\n".join(lines) + "\n"


# float16 and bfloat16 values are computed as floats (exact: both widen to
# float32 exactly) and rounded back to their type after every operation, as
# XLA does on the CPU; stored as their bits (uint16_t).  The conversions are
# bit manipulation (no compiler _Float16 support is needed), branch-free so
# that loops over them vectorize.  Rounding (pj_round_*) goes to nearest
# even; a NaN keeps its sign and is quieted (float16 keeps the payload's top
# bits, bfloat16 none), as XLA converts.  Storing (pj_store_*) takes a value
# already of the type and keeps every bit (a NaN's payload too).
_HALF = r"""
static inline float pj_h2f(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  const float sub = (float)m * 0x1p-24f;   /* zero or subnormal: exact */
  const uint32_t big = e == 31 ? 0x7f800000u | (m << 13) : ((e + 112) << 23) | (m << 13);
  return pj_f_from_bits((e == 0 ? pj_bitsf(sub) : big) | sign);
}
static inline uint16_t pj_f2h_nan(float f, uint32_t quiet) {
  const uint32_t x = pj_bitsf(f), a = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  /* Below 2^-14: adding 0.5f rounds |f| to a multiple of 2^-24 (to nearest
     even, by the FPU), whose count is then in the low bits. */
  const uint32_t sub = pj_bitsf(pj_f_from_bits(a) + 0.5f) - 0x3f000000u;
  /* Normal: rebias the exponent, round the 13 dropped bits to nearest even
     (a carry may reach the exponent, up to infinity). */
  const uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
  const uint32_t h = a > 0x7f800000u ? 0x7c00u | quiet | ((a >> 13) & 0x3ffu)
                   : a >= 0x47800000u ? 0x7c00u : a < 0x38800000u ? sub : norm;
  return (uint16_t)(h | sign);
}
static inline float pj_bf2f(uint16_t h) { return pj_f_from_bits((uint32_t)h << 16); }
static inline uint16_t pj_f2bf(float f) {
  const uint32_t x = pj_bitsf(f);
  const uint32_t r = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? ((x >> 16) & 0x8000u) | 0x7fc0u : r);
}
static inline uint16_t pj_f2h(float f) { return pj_f2h_nan(f, 0x200u); }
static inline uint16_t pj_store_f16(float f) { return pj_f2h_nan(f, 0); }
static inline uint16_t pj_store_bf16(float f) { return (uint16_t)(pj_bitsf(f) >> 16); }
static inline float pj_round_f16(float f) { return pj_h2f(pj_f2h(f)); }
static inline float pj_round_bf16(float f) { return pj_bf2f(pj_f2bf(f)); }
"""
PRELUDE += _HALF

# complex64/complex128 values are C99 complex types (as NumPy lays them out:
# real, imaginary), in ``complex_c``'s neutral spelling: PJ_COMPLEX, PJ_REAL
# and PJ_IMAG are GCC's __builtin_complex, __real__ and __imag__ (no
# <complex.h>: its macro ``I`` would take a name).  The transcendental
# functions are glibc's (NumPy's own complex exp, log, sqrt, sin, cos and
# tanh call them too).
from purejax._src.backends.cpu import complex_c  # noqa: E402

_COMPLEX_MACROS = r"""
#define PJ_COMPLEX(re, im) __builtin_complex((re), (im))
#define PJ_REAL(z) (__real__ (z))
#define PJ_IMAG(z) (__imag__ (z))
#define PJ_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
/* Loops over complex values are not vectorized: GCC makes the alternating
   real/imaginary lanes of a product a fused multiply-add-subtract
   (vfmaddsub), -ffp-contract=off notwithstanding, whose bits then depend
   on where a thread's part of the loop starts. */
#define PJ_SCALAR_COMPLEX __attribute__((optimize("no-tree-vectorize")))
"""
_LIBRARY_COMPLEX = complex_c.expand("".join(
    f"T _Complex {name}@(T _Complex{', T _Complex' if name == 'cpow' else ''});\n"
    for name in complex_c.LIBRARY))
PRELUDE += _COMPLEX_MACROS + complex_c.BASIC + _LIBRARY_COMPLEX + complex_c.DERIVED

# digamma, zeta, the incomplete gamma and beta functions, i0e, i1e; erf, erfc.
from purejax._src.backends.cpu import erf_c, special_c  # noqa: E402

PRELUDE += special_c.SOURCE + erf_c.SOURCE

# Portable C helpers (no libc calls but math.h's, no globals), in dependency
# order: the CUDA backend's device prelude is built from these.
PORTABLE = _MINMAX + _BITS + _EXP_LOG_TANH + _LOG1M + _ERF_INV_F32 + _ERF_INV_F64 + _HALF
