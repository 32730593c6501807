"""erf_inv and erf as elementwise primitives (normal, truncated_normal).

erf_inv follows M. Giles, "Approximating the erfinv function" (GPU Computing
Gems 2, 2010): a polynomial in w = -log1p(-x*x) per range of w, times x,
with the paper's single- and double-precision coefficients.  XLA evaluates
the float32 polynomial with fused multiply-adds; the NumPy impl emulates
that (float64 products, one rounding per step), so float32 normals agree
with JAX's bit for bit except where XLA's own log1p rounds differently
(about 1 sample in 100, by 1-2 ulp).
"""
import numpy as np

from purejax._src.lax.ad_util import const, defjvp_ans
from purejax._src.lax.elementwise import _mul, exp_p
from purejax._src.lax.families import float_dtypes, unary
from purejax._src.lax.utils import bind

# Single precision: w < 5 uses (w - 2.5); otherwise (sqrt(w) - 3).
_F32_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
              0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
              0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

# Double precision: w < 6.25 uses (w - 3.125); w < 16 (sqrt(w) - 3.25);
# otherwise (sqrt(w) - 5).
_F64_SMALL = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_F64_MID = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_F64_LARGE = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)




def _erf_inv_f32(x):
  x = x.astype(np.float32)
  x64 = x.astype(np.float64)
  w = (-np.log1p(-(x * x).astype(np.float64))).astype(np.float32)
  small = w < np.float32(5)
  with np.errstate(invalid="ignore"):
    w = np.where(small, w - np.float32(2.5), np.sqrt(w) - np.float32(3)).astype(np.float64)
  p = np.where(small, _F32_SMALL[0], _F32_LARGE[0]).astype(np.float32)
  for a, b in zip(_F32_SMALL[1:], _F32_LARGE[1:]):
    c = np.where(small, np.float32(a), np.float32(b)).astype(np.float64)
    p = (p.astype(np.float64) * w + c).astype(np.float32)   # fma, as XLA
  return (p * x).astype(np.float32), x64


def _erf_inv_f64(x):
  x = x.astype(np.float64)
  with np.errstate(divide="ignore", invalid="ignore"):
    w = -np.log1p(-x * x)
    small, mid = w < 6.25, w < 16.0
    w = np.where(small, w - 3.125, np.sqrt(w) - np.where(mid, 3.25, 5.0))
  n = len(_F64_SMALL)
  # Right-align the three polynomials: a shorter one starts later.
  p = np.zeros_like(x)
  for i in range(n):
    c = np.full_like(x, _F64_SMALL[i])
    j = i - (n - len(_F64_MID))
    k = i - (n - len(_F64_LARGE))
    if j >= 0:
      c = np.where(small, c, _F64_MID[j])
    if k >= 0:
      c = np.where(mid, c, _F64_LARGE[k])
    started = small | ((j >= 0) & mid) | (k >= 0)
    p = np.where(started, p * w + c, p)
  return p * x, x


@np.errstate(divide="ignore", invalid="ignore")
def _erf_inv_impl(x):
  x = np.asarray(x)
  dtype = x.dtype
  if dtype == np.float64:
    out, xs = _erf_inv_f64(x)
  else:
    out, xs = _erf_inv_f32(x)
  # erf_inv(+-1) = +-inf; outside [-1, 1] it is nan.
  out = np.where(np.abs(xs) == 1, xs * np.inf, out)
  out = np.where(np.abs(xs) > 1, np.nan, out)
  return out.astype(dtype)


erf_inv_p = unary("erf_inv", float_dtypes, _erf_inv_impl)
# d/dx erf_inv(x) = sqrt(pi)/2 * exp(erf_inv(x)^2)
defjvp_ans(erf_inv_p, lambda g, ans, x: _mul(g, _mul(const(ans, np.sqrt(np.pi) / 2),
                                                     exp_p.bind(_mul(ans, ans)))))
erf_inv_p.c_code = None   # no C kernel: the compiled path runs the impl


def erf_inv(x):
  """Inverse error function, elementwise (float dtypes)."""
  return bind(erf_inv_p, x)


# ---------------------------------------------------------------------------
# erf (Cephes single-precision approximations, built from lax ops)

_ERF_T = (7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3,
          -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1,
          1.128379165726710e+0)
_ERFC_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
           -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
           3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)
_ERFC_R = (-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0,
           2.921019019210786e+0, -1.015265279202700e+0, 4.218463358204948e-1,
           -2.820767439740514e-1, 5.641895067754075e-1)


def _poly(x, coeffs, dtype):
  from purejax import lax
  p = lax.full_like(x, coeffs[0])
  for c in coeffs[1:]:
    p = lax.add(lax.mul(p, x), np.array(c, dtype))
  return p


def erf(x):
  """Error function: x P(x^2) for |x| < 1, else 1 - erfc(|x|) (signed)."""
  from purejax import lax
  from purejax._src import core
  dtype = core.get_aval(x).dtype
  one = np.array(1, dtype)
  ax = lax.abs(x)
  inner = lax.mul(x, _poly(lax.mul(x, x), _ERF_T, dtype))
  safe = lax.max(ax, one)   # the erfc branch only sees |x| >= 1
  z = lax.exp(lax.neg(lax.mul(safe, safe)))
  q = lax.div(one, safe)
  y = lax.mul(q, q)
  p = lax.select(lax.lt(safe, np.array(2, dtype)), _poly(y, _ERFC_P, dtype), _poly(y, _ERFC_R, dtype))
  erfc = lax.mul(lax.mul(z, q), p)
  outer = lax.mul(lax.sign(x), lax.sub(one, erfc))
  return lax.select(lax.lt(ax, one), inner, outer)
