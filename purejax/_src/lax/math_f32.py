"""float32 exp, log, logistic and tanh as jitted code computes them.

The C backend computes these with its own helpers (``pj_expf``, ``pj_logf``,
``pj_tanhf`` in ``backends/cpu/prelude.py``; logistic is ``1 / (1 +
pj_expf(-x))``).  The functions here are their NumPy twins: the same float32
and float64 operations in the same order, so they give the same bits (the C
code is compiled without FMA contraction; the one explicit ``fmaf`` of
``pj_expf`` is emulated exactly).  They are the primitives' ``jit_impl``
for float32 operands, so the NumPy tier of a jitted function computes what
its compiled code will (``backends/tier_numerics.py``).

Accuracy against float64 NumPy (tests/test_tier_numerics.py): exp within
1.05 ulp, log within 1 ulp, tanh within 1.5 ulp, logistic within 2.5 ulp (and 0 below
-88.72, where exp(-x) overflows).
"""
import numpy as np

_F32, _F64 = np.float32, np.float64


def _fmaf(a, b, c):
  """float32 ``fmaf(a, b, c)``, rounded once: the float64 product of two
  floats is exact; the sum is rounded to odd in float64 (exact sum via
  TwoSum), which then rounds to float32 as the exact result would."""
  p = a.astype(_F64) * b.astype(_F64)
  c = np.asarray(c, _F64)
  s = p + c
  bb = s - p
  err = (p - (s - bb)) + (c - bb)
  bits = s.view(np.int64)
  fix = (err != 0) & ((bits & 1) == 0)
  up = (err > 0) == (s > 0)   # the exact sum lies farther from zero
  bits = np.where(fix, bits + np.where(up, 1, -1), bits)
  return bits.view(_F64).astype(_F32)


def _f32_from_bits(u):
  return u.astype(np.uint32).view(_F32)


# pj_expf's constants, as gcc rounds them (float literals; 1.0f / n folded
# as a float division).
_LOG2E = _F32(1.44269504088896341)
_LN2_HI = _F32(0.693145751953125)
_LN2_LO = _F32(1.428606765330187e-06)
_INV = [_F32(1) / _F32(n) for n in (6, 24, 120, 720, 5040)]


def expf(x):
  """``pj_expf``: x = k ln2 + r, e^r = 1 + r + r^2 p(r), times 2^k in two steps."""
  x = np.asarray(x, _F32)
  with np.errstate(all="ignore"):
    nan = x != x
    xc = np.where(x > _F32(88.8), _F32(88.8), np.where(x < _F32(-104.0), _F32(-104.0), x))
    xc = np.where(nan, _F32(0), xc)
    k = np.rint(xc * _LOG2E)
    r = _fmaf(-k, _LN2_LO, _fmaf(-k, _LN2_HI, xc))
    p = _INV[4]
    for c in _INV[3::-1]:
      p = c + r * p
    p = _F32(0.5) + r * p
    e = _F32(1) + _fmaf(r * r, p, r)
    ki = k.astype(np.int32)
    k1 = ki >> 1
    k2 = ki - k1
    y = e * _f32_from_bits((k1 + 127).astype(np.uint32) << 23) \
        * _f32_from_bits((k2 + 127).astype(np.uint32) << 23)
    return np.where(nan, x, y)


_MANT = np.uint64(0x000fffffffffffff)
_ONE_BITS = np.uint64(0x3ff0000000000000)
_SQRT2 = 1.4142135623730951
_LN2 = 0.6931471805599453


def logf(x):
  """``pj_logf``: in float64, e ln2 + 2 atanh((m - 1) / (m + 1)) for the
  mantissa m in [sqrt(1/2), sqrt(2))."""
  x = np.asarray(x, _F32)
  with np.errstate(all="ignore"):
    u = x.astype(_F64).view(np.uint64)
    m0 = ((u & _MANT) | _ONE_BITS).view(_F64)
    big = m0 > _SQRT2
    m = np.where(big, m0 * 0.5, m0)
    e = (((u >> np.uint64(52)) & np.uint64(0x7ff)).astype(np.int64) - 1023 + big).astype(_F64)
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    q = 1.0 / 13
    for c in (1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3, 1.0):
      q = c + s2 * q
    q = 2.0 * s * q
    y = (e * _LN2 + q).astype(_F32)
    y = np.where(x == np.inf, x, y)
    y = np.where(x == 0, _F32(-np.inf), y)
    return np.where((x != x) | (x < 0), _F32(np.nan), y)


def logistic(x):
  """``1 / (1 + pj_expf(-x))`` in float32."""
  x = np.asarray(x, _F32)
  with np.errstate(all="ignore"):
    return _F32(1) / (_F32(1) + expf(-x))


# pj_tanhf's constants (float32, as the C hex literals).
def _hf(h):
  return _F32(float.fromhex(h))


_TANH_P = [_hf(h) for h in ("-0x1.9b3038p-8", "0x1.593d04p-6", "-0x1.b9287ap-5",
                            "0x1.110d26p-3", "-0x1.55554ap-2")]
_EXP_Q = [_hf(h) for h in ("0x1.6b6e18p-10", "0x1.122fc2p-7", "0x1.555688p-5",
                           "0x1.5554a4p-3", "0x1p-1")]
_TANH_LOG2E = _hf("0x1.715476p+0")
_TANH_LN2_HI = _hf("0x1.62e4p-1")
_TANH_LN2_LO = _hf("0x1.7f7d1cp-20")


def tanhf(x):
  """``pj_tanhf``, in float32: a + a^3 p(a^2) for a = |x| < 0.55, else
  1 - 2 / (e^{2a} + 1) with 2a clamped to 20, 2a = k ln2 + r, e^r = 1 + r +
  r^2 q(r), times 2^k.  Sign and NaN from x."""
  x = np.asarray(x, _F32)
  with np.errstate(all="ignore"):
    a = np.abs(x)
    s = a * a
    p = _TANH_P[0]
    for c in _TANH_P[1:]:
      p = _fmaf(p, s, c)
    ts = _fmaf(a * s, p, a)
    y = a + a
    y = np.where(y < _F32(20), y, _F32(20))
    k = np.rint(y * _TANH_LOG2E)
    # k ln2_hi is exact (k <= 29) and so is y - k ln2_hi: the first fmaf.
    r = _fmaf(-k, _TANH_LN2_LO, y - k * _TANH_LN2_HI)
    q = _EXP_Q[0]
    for c in _EXP_Q[1:]:
      q = _fmaf(q, r, c)
    e = (_F32(1) + _fmaf(r * r, q, r)) \
        * _f32_from_bits((k.astype(np.int32) + 127).astype(np.uint32) << 23)
    tl = _F32(1) - _F32(2) / (e + _F32(1))
    t = np.where(a < _F32(0.55), ts, tl)
    return np.where(x != x, x, np.copysign(t, x))
