"""Float cumulative sums, products and log-sum-exps are accurate like JAX's
tree-ordered scan (issue 20, point 15): within float32 rounding of a float64
reference on long inputs, eagerly, on the NumPy tier and compiled, with the
same bits for every thread count."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config


@pytest.fixture(autouse=True)
def _compiled():
  with config.override("purejax_compile_sync", True):
    yield


def _rel_error(got, ref, scale):
  return np.max(np.abs(got.astype(np.float64) - ref) / scale)


def test_float32_ones_count_past_2_to_24():
  x = np.ones(2 ** 25, np.float32)
  assert float(jnp.cumsum(x)[-1]) == 2 ** 25
  assert float(jax.jit(jnp.cumsum)(x)[-1]) == 2 ** 25
  with config.override("purejax_backend", "numpy"):
    assert float(jax.jit(jnp.cumsum)(x)[-1]) == 2 ** 25


@pytest.mark.parametrize("mode", ["eager", "jit", "numpy-tier"])
@pytest.mark.parametrize("shape,axis", [((3_000_000,), 0), ((3, 400_000), 1),
                                        ((300_000, 5), 0)])
def test_float32_cumsum_within_rounding_of_float64(mode, shape, axis):
  x = np.random.default_rng(0).uniform(0.0, 1.0, shape).astype(np.float32)
  ref = np.cumsum(x.astype(np.float64), axis=axis)
  f = lambda x: jnp.cumsum(x, axis=axis)
  if mode == "eager":
    got = np.asarray(f(x))
  elif mode == "jit":
    got = np.asarray(jax.jit(f)(x))
  else:
    with config.override("purejax_backend", "numpy"):
      got = np.asarray(jax.jit(f)(x))
  # Correct rounding of the float64 result: half an ulp of float32 (and
  # sequential float32 addition is off by about 1e-3 here).
  assert _rel_error(got, ref, np.abs(ref)) <= 2 ** -24 * 1.01


@pytest.mark.parametrize("reverse", [False, True])
def test_float64_cumsum_close_to_exact(reverse):
  rng = np.random.default_rng(1)
  x = rng.standard_normal(1 << 20) * np.exp(rng.uniform(-5, 5, 1 << 20))
  with config.override("jax_enable_x64", True):
    got = np.asarray(jax.jit(lambda x: lax.cumsum(x, 0, reverse=reverse))(x))
    eager = np.asarray(lax.cumsum(jnp.asarray(x), 0, reverse=reverse))
  xs = x[::-1] if reverse else x
  ref = np.cumsum(xs.astype(np.longdouble))   # 64-bit mantissa where available
  ref = ref[::-1] if reverse else ref
  scale = np.cumsum(np.abs(xs))
  scale = scale[::-1] if reverse else scale
  # A sequential float64 scan errs by up to n eps relative to sum |x|; the
  # block order by a few hundred eps at most.
  assert np.array_equal(got, eager)
  if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps:
    assert _rel_error(got, ref.astype(np.float64), scale) < 300 * 2 ** -52


def test_cumprod_and_cumlogsumexp_float32_accurate():
  rng = np.random.default_rng(2)
  x = (1 + 1e-4 * rng.standard_normal(1 << 20)).astype(np.float32)
  ref = np.cumprod(x.astype(np.float64))
  for got in (lax.cumprod(x, 0), jax.jit(lambda x: lax.cumprod(x, 0))(x)):
    assert _rel_error(np.asarray(got), ref, np.abs(ref)) <= 2 ** -24 * 1.01
  y = rng.standard_normal(1 << 20).astype(np.float32)
  ref = np.logaddexp.accumulate(y.astype(np.float64))
  for got in (lax.cumlogsumexp(y, 0), jax.jit(lambda y: lax.cumlogsumexp(y, 0))(y)):
    assert _rel_error(np.asarray(got), ref, np.abs(ref)) <= 2 ** -23


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cumlogsumexp"])
def test_same_bits_for_every_thread_count_and_as_eager(name):
  rng = np.random.default_rng(3)
  x = rng.standard_normal((4, 300_000)).astype(np.float32)
  if name == "cumprod":
    x = (1 + 1e-3 * x).astype(np.float32)
  f = jax.jit(lambda x: getattr(lax, name)(x, 1) * 1)
  runs = []
  for threads in (1, 2, 4):
    with config.override("purejax_num_threads", threads):
      runs.append(np.asarray(f(x)))
  assert all(np.array_equal(runs[0], r) for r in runs[1:])
  assert np.array_equal(runs[0], np.asarray(getattr(lax, name)(x, 1)))


def test_half_floats_accumulate_accurately():
  x = np.ones(4096, jnp.bfloat16)
  assert float(jnp.cumsum(x)[-1]) == 4096
  assert float(jax.jit(jnp.cumsum)(np.ones(4096, np.float16))[-1]) == 4096
