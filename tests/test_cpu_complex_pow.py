"""lax.pow with a complex base compiles to C (no NumPy host step) with NumPy's
algorithm (special cases, repeated squaring for small integer exponents,
cpow otherwise): the NumPy tier's bits, close to a complex128 reference
and to real JAX."""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

from tests.tier_pair import c_and_numpy_tier

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
N = 4000
SPECIAL = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 0.5, 2, 3, -2, 1e30])


def _complex(re, im, dtype):
  out = np.empty(np.broadcast(re, im).shape, dtype)   # parts set apart: no inf * 0
  out.real, out.imag = re, im
  return out


def _operands(dtype):
  a = _complex(RNG.standard_normal(N) * 3, RNG.standard_normal(N) * 3, dtype)
  b = _complex(RNG.standard_normal(N) * 2, RNG.standard_normal(N) * 2, dtype)
  b[:N // 4] = RNG.randint(-120, 120, N // 4)               # integer exponents
  b[N // 4:N // 3] = RNG.standard_normal(N // 3 - N // 4) * 3  # real exponents
  k = len(SPECIAL)
  special = _complex(np.repeat(SPECIAL, k), np.tile(SPECIAL, k), dtype)
  a = np.concatenate([a, np.repeat(special, k * k)])
  b = np.concatenate([b, np.tile(special, k * k)])
  return a, b


def _same(got, want):
  """Equal bits, any NaN equal to any NaN."""
  assert got.dtype == want.dtype
  real = lambda z: np.stack([z.real, z.imag])
  g, w = real(got), real(want)
  same = (g.view(np.uint8).reshape(g.shape + (-1,)) == w.view(np.uint8).reshape(
      w.shape + (-1,))).all(-1) | (np.isnan(g) & np.isnan(w))
  assert same.all(), (got[~same.all(0)][:5], want[~same.all(0)][:5])


def _close_to_reference(got, a, b, rtol):
  got, a, b = got[:N], a[:N], b[:N]   # the random operands
  with np.errstate(all="ignore"):
    ref = np.power(a.astype(np.complex128), b.astype(np.complex128))
  ok = np.isfinite(ref) & (np.abs(ref) < 1e30) & (np.abs(ref) > 1e-30)
  assert ok.sum() > N // 2
  np.testing.assert_allclose(got[ok], ref[ok], rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_pow_compiles_with_the_numpy_tiers_bits(dtype):
  with jax.enable_x64(dtype == np.complex128):
    a, b = _operands(dtype)
    got, want = c_and_numpy_tier(lax.pow, a, b)
    _same(got, want)
    _close_to_reference(got, a, b, 2e-4 if dtype == np.complex64 else 1e-11)
    # An integer exponent array: converted to the base's type first.
    n = RNG.randint(-7, 8, a.shape).astype(np.int32)
    got, want = c_and_numpy_tier(lax.pow, a, n)
    _same(got, want)
    _close_to_reference(got, a, n, 2e-5 if dtype == np.complex64 else 1e-13)


def test_complex_pow_special_values():
  # b = 0 gives 1 (also for a = 0 or NaN); a = 0 gives 0 for Re b > 0, else NaN.
  nan = complex(np.nan, np.nan)
  a = np.array([0, np.nan, 0, 0, 0, 2j, 1 + 1j, 1 + 1j], np.complex64)
  b = np.array([0, 0, 2 + 1j, -1, 1j, 2, 3, -2], np.complex64)
  got, _ = c_and_numpy_tier(lax.pow, a, b)
  want = [1, 1, 0, nan, nan, -4, -2 + 2j, -0.5j]
  np.testing.assert_array_equal(got, np.array(want, np.complex64))


@pytest.mark.oracle
def test_complex_pow_against_jax():
  real_jax = pytest.importorskip("jax")
  a = _complex(RNG.uniform(-3, 3, 500), RNG.uniform(-3, 3, 500), np.complex64)
  b = _complex(RNG.uniform(-3, 3, 500), RNG.uniform(-3, 3, 500), np.complex64)
  b[:100] = RNG.randint(-9, 10, 100)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lax.pow)(a, b))
  want = np.asarray(real_jax.jit(real_jax.lax.pow)(a, b))
  np.testing.assert_allclose(got, want, rtol=5e-5, atol=1e-30)
