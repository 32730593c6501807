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
1.05 ulp, log and tanh within 1 ulp, logistic within 2.5 ulp (and 0 below
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


# pj_tanhf's expm1 polynomial: 1/n! for n = 2..8 (float64).
_FACT = [1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320]
_SHIFT = float.fromhex("0x1.8p52")   # 1.5 * 2^52


def tanhf(x):
  """``pj_tanhf``: in float64, em / (em + 2) with em = expm1(2|x|), for
  2|x| clamped to 20 (where the float32 result is 1): 2|x| = k ln2 + r,
  expm1(r) by its Taylor series to r^8, em = 2^k (1 + expm1 r) - 1 for k > 0.
  Sign and NaN from x."""
  x = np.asarray(x, _F32)
  with np.errstate(all="ignore"):
    a = np.abs(x.astype(_F64))
    y = a + a
    y = np.where(y < 20.0, y, 20.0)
    kd = y * 1.4426950408889634 + _SHIFT
    k = kd - _SHIFT
    r = y - k * 0.6931471805599453
    p = _FACT[6]
    for c in _FACT[5::-1]:
      p = c + r * p
    p = r + r * r * p
    scale = ((kd.view(np.uint64) << np.uint64(52)) + (np.uint64(1023) << np.uint64(52))).view(_F64)
    em = np.where(k == 0, p, scale * (1.0 + p) - 1.0)
    t = (em / (em + 2.0)).astype(_F32)
    return np.where(x != x, x, np.copysign(t, x))
