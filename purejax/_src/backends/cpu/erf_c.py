"""C code of erf and erfc, step for step as their NumPy impls
(``lax/special_erf``), so that jitted code (the C and CUDA backends) gives
the eager results: XLA's float32 rational erf bit for bit, Cephes' float32
erfc, Cephes' float64 erf and erfc.

Each float32 Horner step is a float64 product of two floats (exact) plus a
coefficient, rounded to float64 and then to float32, as the NumPy twins
round; the kernels are compiled without FMA contraction, so no step rounds
otherwise.  float64 uses the same expressions in the same order; its exp is
the C library's, which may round its last bit otherwise than NumPy's.  The
subnormal flush of the primitives' results is the caller's
(``codegen_ops``), as for the other special functions.
"""
import numpy as np

from purejax._src.lax import special_erf as se


def _f32_literal(c):
  return float(np.float32(c)).hex()


def _horner32(coefficients, y):
  """A float32 polynomial in ``y`` (a float), one rounding per step."""
  text = f"(float){_f32_literal(coefficients[0])}"
  for c in coefficients[1:]:
    text = f"(float)((double)({text}) * (double){y} + {_f32_literal(c)})"
  return text


def _horner64(coefficients, y, monic=False):
  text = f"({y} + {coefficients[0].hex()})" if monic else coefficients[0].hex()
  for c in coefficients[1:]:
    text = f"({text}) * {y} + {c.hex()}"
  return text


def _source():
  clamp = _f32_literal(se._ERF32_CLAMP)
  tiny32 = float(np.finfo(np.float32).tiny).hex()
  exp_limit = _f32_literal(-88.72283905206835)
  t64, u64 = [np.float64(c) for c in se._ERF64_T], [np.float64(c) for c in se._ERF64_U]
  p64, q64 = [np.float64(c) for c in se._ERFC64_P], [np.float64(c) for c in se._ERFC64_Q]
  r64, s64 = [np.float64(c) for c in se._ERFC64_R], [np.float64(c) for c in se._ERFC64_S]
  return rf"""
static inline float pj_erff(float x0) {{
  const float x = x0 > {clamp}f ? {clamp}f : x0 < -{clamp}f ? -{clamp}f : x0;
  const float x2 = (float)((double)x * (double)x);
  const float p = (float)((double)x * (double){_horner32(se._ERF32_P, "x2")});
  return (float)((double)p / (double){_horner32(se._ERF32_Q, "x2")});
}}
static inline float pj_erfcf(float x) {{
  const float ax = fabsf(x), x2 = (float)((double)x * (double)x);
  const float small = (float)(1.0 - (double)x * (double){_horner32(se._ERF32_T, "x2")});
  const float q = (float)(1.0 / (double)ax), y = (float)((double)q * (double)q);
  const float poly = ax < 2.0f ? {_horner32(se._ERFC32_P, "y")}
                               : {_horner32(se._ERFC32_R, "y")};
  const float e = (float)exp(-(double)x2);
  const float big0 = (float)((double)(float)((double)e * (double)q) * (double)poly);
  /* exp underflows, and XLA flushes subnormal results to zero */
  const float big1 = (-x2 < {exp_limit}f || big0 < {tiny32}f) ? 0.0f : big0;
  const float big = x < 0 ? (float)(2.0 - (double)big1) : big1;
  return ax < 1.0f ? small : big;
}}
static inline double pj_erfc_ge1(double ax) {{   /* erfc(|x|), |x| >= 1 */
  const double z = exp(-ax * ax);
  const double low = z * ({_horner64(p64, "ax")}) / ({_horner64(q64, "ax", True)});
  const double high = z * ({_horner64(r64, "ax")}) / ({_horner64(s64, "ax", True)});
  return ax < 8.0 ? low : z == 0.0 ? 0.0 : high;
}}
static inline double pj_erf_small(double x) {{   /* |x| <= 1 */
  const double z = x * x;
  return x * ({_horner64(t64, "z")}) / ({_horner64(u64, "z", True)});
}}
static inline double pj_erf(double x) {{
  const double ax = fabs(x);
  if (ax <= 1.0) return pj_erf_small(x);
  const double r = 1.0 - pj_erfc_ge1(ax);
  return x < 0 ? -r : r;
}}
static inline double pj_erfc(double x) {{
  const double ax = fabs(x);
  if (ax < 1.0) return 1.0 - pj_erf_small(x);
  const double big = pj_erfc_ge1(ax);
  return x < 0 ? 2.0 - big : big;
}}
"""


SOURCE = _source()


def emit(name):
  """The C expression of primitive ``name`` (erf or erfc): float64 in
  double, float32 and the half floats in float; float32 and float64
  results flushed as the NumPy impls flush them (a half's float is rounded
  by the caller, unflushed, as the NumPy impl rounds it)."""
  def emit_fn(ctx, args, ins, out, params):
    if np.dtype(out) == np.float64:
      return f"pj_flush(pj_{name}({args[0]}))"
    call = f"pj_{name}f({args[0]})"
    return f"pj_flushf({call})" if np.dtype(out) == np.float32 else call
  return emit_fn
