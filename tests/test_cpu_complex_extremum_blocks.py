"""Complex reduce_max/reduce_min over axes longer than 32 compile to C
(backends/cpu/complex_extremum_c.py) in the block order XLA folds them
(lax/complex_extremum.py): no host step, the NumPy tier's bits for any
thread count, and JAX's values, NaNs and signed zeros included."""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src.backends.cpu import host_steps, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
CASES = [((3, 100), (1,)), ((70, 5), (0,)), ((40, 50), (0, 1)), ((4, 33, 2, 65), (1, 3)),
         ((1000,), (0,)), ((2, 3, 97), (2,))]


def data(shape, dtype):
  """Small integer parts (many ties), some NaNs and signed zeros."""
  x = (RNG.randint(-2, 3, shape) + 1j * RNG.randint(-2, 3, shape)).astype(dtype)
  flat = x.reshape(-1)
  picks = RNG.choice(flat.size, flat.size // 8, replace=False)
  half = len(picks) // 2
  flat[picks[:half // 2]] = complex(np.nan, 1)
  flat[picks[half // 2:half]] = complex(1, np.nan)
  flat[picks[half:]] = complex(-0.0, 0.0)
  return x


def bits(x):
  x = np.atleast_1d(np.ascontiguousarray(x))
  return x.view(np.uint32 if x.dtype == np.complex64 else np.uint64)


@pytest.mark.parametrize("shape,axes", CASES)
@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_blocks_in_c_with_the_numpy_tiers_bits(shape, axes, name, dtype):
  with jax.enable_x64(dtype == np.complex128):
    x = data(shape, dtype)
    f = lambda v: getattr(lax, name)(v * 1, axes)
    assert host_steps.jaxpr_host_steps(jax.make_jaxpr(f)(x).jaxpr) == []
    with config.override("purejax_backend", "numpy"):
      want = np.asarray(jax.jit(f)(x))
    for threads in (1, 2, 3):
      with config.override("purejax_compile_sync", True), \
           config.override("purejax_backend", "cpu"), \
           config.override("purejax_num_threads", threads):
        got = np.asarray(jax.jit(f)(x))
      np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("shape,axes", CASES)
def test_values_as_jax(shape, axes):
  real = pytest.importorskip("jax")
  x = data(shape, np.complex64)
  for name in ("reduce_max", "reduce_min"):
    with config.override("purejax_compile_sync", True):
      got = np.asarray(jax.jit(lambda v: getattr(lax, name)(v, axes))(x))
    # (no operation before it: XLA fused into an elementwise producer folds otherwise)
    want = np.asarray(real.jit(lambda v: getattr(real.lax, name)(v, axes))(x))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(got)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got.real[ok]), np.signbit(want.real[ok]))
