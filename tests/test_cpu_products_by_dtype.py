"""Complex matrix products compile to BLAS's cgemm/zgemm (no conjugation,
as lax.dot_general), on the same shape-fixed tiles as real ones; 16-bit
float products to a float32 product rounded once (as XLA:CPU); integer and
boolean products, and products whose result type differs from the
operands', to compiled loops or a converted BLAS product."""
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


# name -> (a's shape, b's shape, the product for jnp and for np)
INTEGER_PRODUCTS = {
    **PRODUCTS,
    "einsum_middle": ((4, 33, 17), (33, 9), lambda xp, a, b: xp.einsum("bjk,jl->blk", a, b)),
    "outer": ((30,), (20,), lambda xp, a, b: xp.outer(a, b)),
}


def _wrapped_product(product, a, b, dtype):
  """NumPy's product in int64/uint64 (which wrap as the narrower types do)."""
  wide = np.uint64 if np.dtype(dtype).kind == "u" else np.int64
  return product(np, a.astype(wide), b.astype(wide)).astype(dtype)


@pytest.mark.parametrize("name", sorted(INTEGER_PRODUCTS))
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64],
                         ids=lambda d: np.dtype(d).name)
def test_integer_products_compile_and_wrap(name, dtype, x64):
  a_shape, b_shape, product = INTEGER_PRODUCTS[name]
  info = np.iinfo(dtype)
  a = RNG.integers(info.min, info.max, a_shape, dtype=dtype, endpoint=True)
  b = RNG.integers(info.min, info.max, b_shape, dtype=dtype, endpoint=True)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(lambda a, b: product(jnp, a, b)).lower(a, b).compile()
    got = np.asarray(compiled(a, b))
  assert stages.host_steps(compiled) == []
  want = _wrapped_product(product, a, b, dtype)
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(got, want)


def test_boolean_product_is_any_of_ands():
  a, b = RNG.random((40, 300)) < 0.01, RNG.random((300, 30)) < 0.5
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(jnp.dot).lower(a, b).compile()
    got = np.asarray(compiled(a, b))
  assert stages.host_steps(compiled) == []
  np.testing.assert_array_equal(got, (a.astype(int) @ b.astype(int)) > 0)


@pytest.mark.parametrize("preferred", [np.int32, np.float32, "bfloat16"], ids=str)
def test_int8_products_with_a_preferred_type(preferred):
  a = RNG.integers(-128, 127, (50, 70), dtype=np.int8)
  b = RNG.integers(-128, 127, (70, 20), dtype=np.int8)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(lambda a, b: jax.lax.dot(a, b, preferred_element_type=preferred)
                       ).lower(a, b).compile()
    got = np.asarray(compiled(a, b))
  assert stages.host_steps(compiled) == []
  want = a.astype(np.int64) @ b.astype(np.int64)
  assert got.dtype == np.dtype(jnp.dtype(preferred))
  # |want| < 2**21: exact in int32 and float32; bfloat16 rounds the exact sum once.
  np.testing.assert_array_equal(got, want.astype(np.float32).astype(got.dtype))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.bool_], ids=str)
def test_integer_products_against_jax(dtype):
  real_jax = pytest.importorskip("jax")
  a = RNG.integers(0, 120, (3, 20, 30)).astype(dtype)
  b = RNG.integers(0, 120, (3, 30, 10)).astype(dtype)
  f = lambda xp, a, b: xp.einsum("bij,bjk->bik", a, b)
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda a, b: f(jnp, a, b))(a, b))
  want = np.asarray(real_jax.jit(lambda a, b: f(real_jax.numpy, a, b))(a, b))
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(got, want)
