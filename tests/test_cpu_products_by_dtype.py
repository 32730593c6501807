"""Complex matrix products compile to BLAS's cgemm/zgemm (no conjugation,
as lax.dot_general), on the same shape-fixed tiles as real ones; 16-bit
float products to a float32 product rounded once (as XLA:CPU)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src import stages
from purejax._src.config import config

RNG = np.random.default_rng(9)

# name -> (a's shape, b's shape, the product for jnp and for np)
PRODUCTS = {
    "ab": ((300, 200), (200, 150), lambda xp, a, b: a @ b),
    "aT_b": ((200, 300), (200, 150), lambda xp, a, b: a.T @ b),
    "a_bT": ((300, 200), (150, 200), lambda xp, a, b: a @ b.T),
    "batched": ((4, 70, 50), (4, 50, 30), lambda xp, a, b: xp.einsum("bij,bjk->bik", a, b)),
    "vector": ((300, 200), (200,), lambda xp, a, b: a @ b),
}


def _complex(shape, dtype):
  return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_products_compile_and_match_numpy(name, dtype, x64):
  a_shape, b_shape, product = PRODUCTS[name]
  a, b = _complex(a_shape, dtype), _complex(b_shape, dtype)
  results = set()
  for threads in (1, 2, 4):
    with config.override("purejax_compile_sync", True), \
         config.override("purejax_num_threads", threads):
      compiled = jax.jit(lambda a, b: product(jnp, a, b)).lower(a, b).compile()
      got = np.asarray(compiled(a, b))
    assert stages.host_steps(compiled) == []
    results.add(got.tobytes())
  assert len(results) == 1   # the same bits for any thread count
  want = product(np, a.astype(np.complex128), b.astype(np.complex128))
  assert got.dtype == dtype and got.shape == want.shape
  tol = 1e-4 if dtype == np.complex64 else 1e-12
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.oracle
def test_complex_product_against_jax():
  real_jax = pytest.importorskip("jax")
  a, b = _complex((64, 48), np.complex64), _complex((48, 32), np.complex64)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda a, b: jax.lax.dot(a, b) * 1j)(a, b))
  want = np.asarray(real_jax.jit(lambda a, b: real_jax.lax.dot(a, b) * 1j)(a, b))
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_products_are_float32_products_rounded_once(dtype):
  dtype = np.dtype(getattr(jnp, dtype))
  a = RNG.standard_normal((3, 64, 48)).astype(np.float32).astype(dtype)
  b = RNG.standard_normal((3, 48, 40)).astype(np.float32).astype(dtype)
  f = lambda a, b: jnp.einsum("bij,bjk->bik", a, b)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(a, b).compile()
    got = np.asarray(compiled(a, b))
  assert stages.host_steps(compiled) == []
  want = np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64))
  assert got.dtype == dtype
  # One rounding of a float32 product: within half a 16-bit ulp (plus float32 error).
  ulp = np.spacing(np.abs(want).astype(dtype)).astype(np.float64)
  assert np.all(np.abs(got.astype(np.float64) - want) <= 0.5 * ulp + 1e-5 * np.abs(want) + 1e-6)


@pytest.mark.oracle
def test_bfloat16_product_has_jaxs_bits():
  real_jax = pytest.importorskip("jax")
  a = RNG.standard_normal((64, 48)).astype(np.float32).astype(jnp.bfloat16)
  b = RNG.standard_normal((48, 40)).astype(np.float32).astype(jnp.bfloat16)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda a, b: a @ b)(a, b))
  want = np.asarray(real_jax.jit(lambda a, b: a @ b)(a, b))
  np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))
