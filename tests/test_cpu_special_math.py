"""erf, erfc and lgamma compile to C (glibc's, lgamma without the global
signgam), within float rounding of SciPy's float64 values and of JAX."""
import numpy as np
import pytest
import scipy.special as sps

import purejax as jax
from purejax import lax
from purejax._src import stages
from purejax._src.config import config

ERF_X = np.concatenate([np.linspace(-6, 6, 2001), [0.0, -0.0, np.inf, -np.inf, np.nan,
                                                    1e-30, -1e-30, 30.0, -30.0]])
# lgamma(-inf) is +inf in JAX and C (SciPy says -inf): checked against JAX.
LGAMMA_X = np.concatenate([np.linspace(0.01, 40, 2001), np.linspace(-9.9, -0.1, 97),
                           [1.0, 2.0, 0.0, -1.0, np.inf, np.nan, 1e-30, 1e30]])
CASES = {"erf": (lax.erf, sps.erf, ERF_X), "erfc": (lax.erfc, sps.erfc, ERF_X),
         "lgamma": (lax.lgamma, sps.gammaln, LGAMMA_X)}


def _ulps(got, want, dtype):
  finite = np.isfinite(want)
  assert np.array_equal(np.isnan(got), np.isnan(want))
  assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
  spacing = np.spacing(np.abs(want[finite]).astype(dtype)).astype(np.float64)
  return np.max(np.abs(got[finite] - want[finite]) / np.maximum(spacing, np.finfo(dtype).tiny))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_functions_compile_within_rounding(name, dtype, x64):
  f, ref, xs = CASES[name]
  x = xs.astype(dtype)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(x).compile()
    got = np.asarray(compiled(x)).astype(np.float64)
  assert stages.host_steps(compiled) == []
  want = ref(x.astype(np.float64))
  if name == "lgamma":   # near its zeros (1, 2 and between the poles) relative error grows
    keep = np.abs(want) > 1e-3
    got, want = got[keep | ~np.isfinite(want)], want[keep | ~np.isfinite(want)]
  if dtype == np.float32:
    assert _ulps(got, want, dtype) <= 4
  else:   # SciPy's (Cephes) float64 values are themselves off by tens of ulps in places
    _ulps(got, want, dtype)   # the same NaNs and infinities
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_special_functions_against_jax(name):
  real_jax = pytest.importorskip("jax")
  f, _, xs = CASES[name]
  x = np.concatenate([xs, [-np.inf]]).astype(np.float32)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(f)(x))
  want = np.asarray(real_jax.jit(getattr(real_jax.lax, name))(x))
  # XLA's lgamma loses absolute accuracy (~1e-6) near its zeros.
  np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 if name == "lgamma" else 1e-7)
