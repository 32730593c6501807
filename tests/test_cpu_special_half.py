"""The special functions of lax/special.py on float16 and bfloat16 compile to
C (no NumPy host step): evaluated as float32 (in double, rounded to float,
subnormals flushed) and rounded once more to the half type, as XLA evaluates
them.  Both tiers give the same bits; values are within half rounding of
SciPy's float64 values and of real JAX (which agree with its float32 values
rounded to the half type)."""
import numpy as np
import pytest
import scipy.special as sps

import ml_dtypes
import purejax as jax
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

from tests.tier_pair import c_and_numpy_tier

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -1.0, -2.5, 0.5]


def _positive(n, top):
  return RNG.uniform(0.05, top, n)


def _with_edges(x):
  return np.concatenate([x, EDGES])


# name -> (purejax function, SciPy float64 reference, operands in float64)
N = 300
CASES = {
    "digamma": (lax.digamma, sps.digamma, lambda: [_with_edges(RNG.uniform(-6, 30, N))]),
    "igamma": (lax.igamma, sps.gammainc,
               lambda: [_with_edges(_positive(N, 20)), _with_edges(_positive(N, 25))]),
    "igammac": (lax.igammac, sps.gammaincc,
                lambda: [_with_edges(_positive(N, 20)), _with_edges(_positive(N, 25))]),
    "betainc": (lax.betainc, sps.betainc,
                lambda: [_positive(N, 10), _positive(N, 10), RNG.uniform(0, 1, N)]),
    "bessel_i0e": (lax.bessel_i0e, sps.i0e, lambda: [_with_edges(RNG.uniform(-60, 60, N))]),
    "bessel_i1e": (lax.bessel_i1e, sps.i1e, lambda: [_with_edges(RNG.uniform(-60, 60, N))]),
    "zeta": (lax.zeta, sps.zeta, lambda: [RNG.uniform(1.1, 8, N), _positive(N, 10)]),
    "polygamma": (lax.polygamma, lambda m, x: sps.polygamma(m.astype(int), x),
                  lambda: [RNG.randint(0, 4, N).astype(np.float64), _positive(N, 10)]),
    "igamma_grad_a": (lax.igamma_grad_a, None,
                      lambda: [_positive(N, 10), _positive(N, 12)]),
    "random_gamma_grad": (lax.random_gamma_grad, None,
                          lambda: [_positive(N, 10), _positive(N, 12)]),
}
OPERANDS = {name: case[2]() for name, case in CASES.items()}


def _bits(x):
  return np.ascontiguousarray(x).view(np.uint16)


def _within_half_rounding(got, ref, dtype, rel):
  """``got`` (half) is ``ref`` rounded to ``dtype`` up to ``rel`` relative
  error (one half rounding plus the float32 evaluation)."""
  got = got.astype(np.float64)
  assert np.array_equal(np.isnan(got), np.isnan(ref))
  finite = np.isfinite(ref) & (np.abs(ref) <= float(ml_dtypes.finfo(dtype).max))
  np.testing.assert_array_equal(got[~np.isfinite(ref)], ref[~np.isfinite(ref)])
  tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
  np.testing.assert_allclose(got[finite], ref[finite], rtol=rel, atol=tiny)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_special_compiles_with_the_numpy_tiers_bits(name, dtype):
  f, ref_fn, make = CASES[name]
  args = [a.astype(dtype) for a in OPERANDS[name]]
  got, want = c_and_numpy_tier(f, *args)
  assert got.dtype == dtype
  np.testing.assert_array_equal(_bits(got), _bits(want))
  # The float32 result rounded once more: the float32 function's bits
  # rounded to the half type.
  f32 = np.asarray(jax.jit(f)(*[a.astype(np.float32) for a in args]))
  with np.errstate(over="ignore"):   # float32 values beyond float16's range
    np.testing.assert_array_equal(_bits(got), _bits(f32.astype(dtype)))
  if ref_fn is not None:   # the random operands (SciPy's edge values differ from XLA's)
    ref = ref_fn(*[a[:N].astype(np.float64) for a in args])
    got = got[:N]
    eps = float(ml_dtypes.finfo(dtype).eps)
    _within_half_rounding(got, ref, dtype, eps)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [F16, BF16], ids=str)
@pytest.mark.parametrize("name", sorted(CASES))
def test_half_special_against_jax(name, dtype):
  real_jax = pytest.importorskip("jax")
  f = CASES[name][0]
  args = [a.astype(dtype) for a in OPERANDS[name]]
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(f)(*args)).astype(np.float64)
  jax_f = getattr(real_jax.lax, {"betainc": "betainc"}.get(name, name))
  want = np.asarray(real_jax.jit(jax_f)(*args)).astype(np.float64)
  assert np.array_equal(np.isnan(got), np.isnan(want))
  eps = float(ml_dtypes.finfo(dtype).eps)
  # JAX's float32 approximations, rounded to the half type: a half ulp or
  # two apart (JAX's zeta on float16 is further off).
  rtol = 16 * eps if name == "zeta" and dtype == F16 else 2 * eps
  np.testing.assert_allclose(got, want, rtol=rtol, atol=float(ml_dtypes.finfo(dtype).tiny))
