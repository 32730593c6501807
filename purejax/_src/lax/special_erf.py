"""NumPy numerics of erf, erfc and erf_inv, as XLA computes them on CPU.

float32 follows XLA's own approximations step by step (products and sums in
float64, rounded to float32 once per fused multiply-add, as XLA's FMAs do):
erf is a rational function x P(x^2) / Q(x^2) on x clamped to +-3.8325 and is
bit-exact; erfc is Cephes' single-precision approximations (1 - x T(x^2)
below |x| = 1, exactly; above, exp(-x^2)/|x| times a polynomial in 1/x^2,
within an ulp or two of XLA's, whose exp rounds differently).  erf_inv is
M. Giles, "Approximating the erfinv function" (GPU Computing Gems 2, 2010),
whose float32 branch random.normal needs bit for bit.  float64 uses Cephes'
double-precision erf/erfc and Giles' double-precision polynomials.
Half-precision inputs go through float32, as XLA's do.
"""
import numpy as np

_F32 = np.float32


def _r32(x):
  return np.asarray(x, np.float64).astype(_F32)


def _fma_poly32(coeffs, y):
  """Horner's rule in float32 with one rounding per step (an FMA)."""
  y = y.astype(np.float64)
  p = np.full(y.shape, _F32(coeffs[0]))
  for c in coeffs[1:]:
    p = _r32(p.astype(np.float64) * y + np.float64(_F32(c)))
  return p


def _poly64(coeffs, y, monic=False):
  p = y + coeffs[0] if monic else np.full_like(y, coeffs[0])
  for c in coeffs[1:]:
    p = p * y + c
  return p


# -- erf ----------------------------------------------------------------------------

# XLA's float32 erf: odd numerator, even denominator (in x^2).
_ERF32_P = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861,
            0.18520832239976145, 1.128379143519084)
_ERF32_Q = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885,
            0.014070470171167667, 0.11098505178285362, 0.49746925110067538, 1.0)
_ERF32_CLAMP = 3.832506856900711   # erf rounds to +-1 beyond

# Cephes, single precision: erf for |x| < 1 and erfc for |x| >= 1 (x < 2, x >= 2).
_ERF32_T = (7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3,
            -2.685381193529856e-2, 1.128358514861418e-1, -3.761262582423300e-1,
            1.128379165726710e+0)
_ERFC32_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1,
             -5.824733027278666e-1, 6.210004621745983e-1, -4.944515323274145e-1,
             3.404879937665872e-1, -2.741127028184656e-1, 5.638259427386472e-1)
_ERFC32_R = (-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0,
             2.921019019210786e+0, -1.015265279202700e+0, 4.218463358204948e-1,
             -2.820767439740514e-1, 5.641895067754075e-1)

# Cephes, double precision: erf = x T(x^2) / U(x^2) for |x| <= 1; erfc =
# exp(-x^2) P(x) / Q(x) below 8, exp(-x^2) R(x) / S(x) above (Q, U, S monic).
_ERF64_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
            7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF64_U = (3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
            2.26290000613890934246E4, 4.92673942608635921086E4)
_ERFC64_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
             4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
             9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC64_Q = (1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
             9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
             1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC64_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
             6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC64_S = (2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
             1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)


def _erf32(x):
  x = np.clip(x.astype(_F32), -_F32(_ERF32_CLAMP), _F32(_ERF32_CLAMP))
  x2 = _r32(x.astype(np.float64) * x)
  p = _r32(x.astype(np.float64) * _fma_poly32(_ERF32_P, x2))
  return _r32(p.astype(np.float64) / _fma_poly32(_ERF32_Q, x2))


def _erfc32(x):
  x = x.astype(_F32)
  ax = np.abs(x)
  x2 = _r32(x.astype(np.float64) * x)
  # |x| < 1: 1 - x T(x^2), the subtraction fused with the product.
  small = _r32(1 - x.astype(np.float64) * _fma_poly32(_ERF32_T, x2))
  # |x| >= 1: exp(-x^2) / |x| * P(1/x^2).
  q = _r32(1 / ax.astype(np.float64))
  y = _r32(q.astype(np.float64) * q)
  poly = np.where(ax < 2, _fma_poly32(_ERFC32_P, y), _fma_poly32(_ERFC32_R, y))
  e = _r32(np.exp(-x2.astype(np.float64)))
  big = _r32(_r32(e.astype(np.float64) * q).astype(np.float64) * poly)
  # exp underflows, and XLA flushes subnormal results to zero.
  big = np.where((-x2 < _F32(-88.72283905206835)) | (big < np.finfo(_F32).tiny), _F32(0), big)
  big = np.where(x < 0, _r32(2 - big.astype(np.float64)), big)
  return np.where(ax < 1, small, big)


def _erfc64_ge1(ax):
  """erfc(|x|) for |x| >= 1 (Cephes)."""
  z = np.exp(-ax * ax)
  low = z * _poly64(_ERFC64_P, ax) / _poly64(_ERFC64_Q, ax, monic=True)
  high = z * _poly64(_ERFC64_R, ax) / _poly64(_ERFC64_S, ax, monic=True)
  # Where exp(-x^2) is 0 the result is too (the polynomials overflow past ~1e154).
  return np.where(ax < 8, low, np.where(z == 0, 0., high))


def _erf64_small(x):
  z = x * x
  return x * _poly64(_ERF64_T, z) / _poly64(_ERF64_U, z, monic=True)


def _erf64(x):
  ax = np.abs(x)
  return np.where(ax <= 1, _erf64_small(x), np.sign(x) * (1 - _erfc64_ge1(ax)))


def _erfc64(x):
  ax = np.abs(x)
  big = _erfc64_ge1(ax)
  return np.where(ax < 1, 1 - _erf64_small(x), np.where(x < 0, 2 - big, big))


def _by_precision(f32, f64):
  def impl(x):
    x = np.asarray(x)
    with np.errstate(all="ignore"):
      out = f64(x) if x.dtype == np.float64 else f32(x)
    return np.asarray(out).astype(x.dtype)
  return impl


erf_np = _by_precision(_erf32, _erf64)
erfc_np = _by_precision(_erfc32, _erfc64)


# -- erf_inv ------------------------------------------------------------------------

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
  x = x.astype(_F32)
  x64 = x.astype(np.float64)
  w = (-np.log1p(-(x * x).astype(np.float64))).astype(_F32)
  small = w < _F32(5)
  w = np.where(small, w - _F32(2.5), np.sqrt(w) - _F32(3)).astype(np.float64)
  p = np.where(small, _F32_SMALL[0], _F32_LARGE[0]).astype(_F32)
  for a, b in zip(_F32_SMALL[1:], _F32_LARGE[1:]):
    c = np.where(small, _F32(a), _F32(b)).astype(np.float64)
    p = (p.astype(np.float64) * w + c).astype(_F32)   # fma, as XLA
  return (p * x).astype(_F32), x64


def _erf_inv_f64(x):
  x = x.astype(np.float64)
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


def erf_inv_np(x):
  x = np.asarray(x)
  with np.errstate(divide="ignore", invalid="ignore"):
    out, xs = _erf_inv_f64(x) if x.dtype == np.float64 else _erf_inv_f32(x)
    # erf_inv(+-1) = +-inf; outside [-1, 1] it is nan.
    out = np.where(np.abs(xs) == 1, xs * np.inf, out)
    out = np.where(np.abs(xs) > 1, np.nan, out)
  return out.astype(x.dtype)
