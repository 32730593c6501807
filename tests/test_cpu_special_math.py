"""erf, erfc and lgamma compile to C, within float rounding of SciPy's
float64 values and of JAX: lgamma is glibc's (without the global signgam);
erf and erfc are their NumPy impls' algorithms step for step
(``cpu/erf_c.py``), so jitted code gives the eager bits (float32 erf: XLA's,
bit for bit)."""
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
  if dtype == np.float32 and name == "erfc":
    # XLA's algorithm: exp(-x^2) of x^2 rounded to float32, a relative
    # error of up to x^2 2^-24 (as in JAX), plus a few ulp (1 - x T(x^2) cancels).
    err = np.abs(got - want) / np.maximum(np.abs(want), np.finfo(dtype).tiny)
    finite = np.isfinite(want) & (np.abs(want) >= np.finfo(dtype).tiny)
    _ulps(got, want, dtype)   # the same NaNs and infinities
    assert (err[finite] <= (x[finite].astype(np.float64) ** 2 + 16) * 2.0 ** -24).all()
  elif dtype == np.float32:   # XLA's rational erf: within 5 ulp (as JAX's)
    assert _ulps(got, want, dtype) <= (5 if name == "erf" else 4)
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


def _erf_inputs():
  rng = np.random.RandomState(1)
  tiny = np.exp(rng.uniform(-100, 5, 20000)) * rng.choice([-1, 1], 20000)
  edges = [3.8325, -3.8325, 3.9, 8.0, -8.0, 9.3, 10.0, 26.0, 27.0, 1e10, 1e-40, -1e-40]
  return np.concatenate([ERF_X, rng.uniform(-6, 6, 50000), rng.uniform(-30, 30, 20000), tiny,
                         edges])


def _same_bits(a, b):
  a, b = np.asarray(a), np.asarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  nan = np.isnan(a.astype(np.float64))
  assert np.array_equal(nan, np.isnan(b.astype(np.float64)))
  width = f"u{a.dtype.itemsize}"
  bad = a[~nan].view(width) != b[~nan].view(width)
  assert not bad.any(), (a[~nan][bad][:5], b[~nan][bad][:5])


@pytest.mark.parametrize("name", ["erf", "erfc"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_jitted_erf_gives_the_eager_bits(name, dtype, x64):
  """The C code of erf and erfc computes what the NumPy impl computes; in
  float64 both call an exp (glibc's, NumPy's) that may round its last bit
  otherwise, which erf and erfc carry (a few ulp)."""
  import ml_dtypes
  dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
  with np.errstate(over="ignore"):
    x = _erf_inputs().astype(dt)
  f = getattr(lax, name)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(x).compile()
    got = np.asarray(compiled(x))
  assert stages.host_steps(compiled) == []
  eager = np.asarray(f(x))
  if dtype == "float64":   # (erf: 1 - erfc beyond |x| = 1)
    _ulps(got, eager.astype(np.float64), np.float64)
    np.testing.assert_allclose(got, eager, rtol=4 * np.finfo(np.float64).eps, atol=0)
  else:
    _same_bits(got, eager)


@pytest.mark.oracle
def test_jitted_float32_erf_is_xlas_bit_for_bit():
  real_jax = pytest.importorskip("jax")
  x = _erf_inputs().astype(np.float32)
  x = x[~(np.abs(x) < np.finfo(np.float32).tiny) | (x == 0)]   # XLA flushes subnormals
  with config.override("purejax_compile_sync", True):
    got = jax.jit(lax.erf)(x)
  _same_bits(got, real_jax.jit(real_jax.lax.erf)(x))


def test_float32_erf_shares_the_tiers():
  """float32 erf gives the same bits on both tiers, so a jitted function
  using it may start on the NumPy tier; float64 erf and erfc do not (exp)."""
  from purejax._src.backends import tier_numerics
  import purejax.numpy as jnp
  x32 = np.ones(3, np.float32)
  assert tier_numerics.numpy_tier_exact(jax.make_jaxpr(lambda x: lax.erf(x) * 2)(x32).jaxpr)
  assert not tier_numerics.numpy_tier_exact(jax.make_jaxpr(lax.erfc)(x32).jaxpr)
  with config.override("jax_enable_x64", True):
    jaxpr = jax.make_jaxpr(lax.erf)(np.ones(3)).jaxpr
  assert not tier_numerics.numpy_tier_exact(jaxpr)
  assert not tier_numerics.numpy_tier_exact(jax.make_jaxpr(jnp.sin)(x32).jaxpr)


@pytest.mark.oracle
@pytest.mark.parametrize("name,lo,hi", [("sinh", -80, 80), ("cosh", -80, 80),
                                        ("exp2", -100, 100)])
def test_where_xla_is_less_accurate(name, lo, hi):
  """The README's claim: float32 sinh, cosh and exp2 of large arguments are
  within 3 ulp of the true value (the C library's), JAX's 25-70 ulp off."""
  real_jax = pytest.importorskip("jax")
  x = np.random.RandomState(0).uniform(lo, hi, 20000).astype(np.float32)
  with config.override("purejax_compile_sync", True):
    ours = np.asarray(jax.jit(getattr(lax, name))(x))
  theirs = np.asarray(real_jax.jit(getattr(real_jax.lax, name))(x))
  ref = getattr(np, name)(x.astype(np.float64))

  def worst_ulps(y):
    _, e = np.frexp(ref)
    ok = np.isfinite(ref) & (np.abs(ref) < np.finfo(np.float32).max)
    return (np.abs(y.astype(np.float64) - ref) / np.ldexp(1.0, np.maximum(e - 24, -149)))[ok].max()
  assert worst_ulps(ours) <= 3 and 20 <= worst_ulps(theirs) <= 80
