"""Indexing steps as CUDA kernels, run in emulation against the C backend:

- scatters (backends/cuda/scatters.py): every update folded into its
  position in scatter order over the stably sorted positions, so the
  results are the C backend's bits (which apply them as NumPy's
  ``ufunc.at`` does), for every combiner, dtype and mode, with repeated,
  dropped and clamped windows;
- dynamic_slice and dynamic_update_slice (backends/cuda/dynamic_slices.py):
  starts read on the device and clamped as JAX's."""
import ml_dtypes
import numpy as np
import pytest

import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import fusion, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

from purejax._src.backends.cuda import module as cuda_module  # noqa: E402
from purejax._src.backends.cuda import dynamic_slices, scatters  # noqa: E402
from tests.test_cuda_emulation import run_both  # noqa: E402
from tests.tier_pair import trace  # noqa: E402


def _same_bits(c, g):
  for a, b in zip(c, g):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


def _updates(rng, n, dtype):
  u = rng.randn(n) * 10.0 ** rng.randint(-3, 4, n)
  if np.dtype(dtype).kind == "c":
    u = u + 1j * rng.randn(n)
  u = u.astype(dtype)
  if np.dtype(dtype).kind in "fc" or dtype is ml_dtypes.bfloat16:
    u[:4] = [0.0, -0.0, np.nan, np.inf]
  return u


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32,
                                   np.uint8, np.complex64])
def test_scatter_kernels_give_the_c_backends_bits(dtype):
  rng = np.random.RandomState(1)
  v = _updates(rng, 30, dtype)
  u = _updates(rng, 400, dtype)
  rows = rng.randint(-3, 33, 400).astype(np.int32)   # repeats, and some out of bounds
  rows[:6] = [5, 5, 5, 5, 0, 29]

  def f(v, r, u):
    outs = [v.at[r].set(u, mode="drop"), v.at[r].add(u, mode="drop"),
            v.at[r].mul(u, mode="clip"), v.at[r].max(u, mode="drop"),
            v.at[r].min(u, mode="clip"), v.at[r % 30].add(u, mode="promise_in_bounds")]
    return outs

  c, g = run_both(f, v, rows, u)
  _same_bits(c, g)


def test_window_scatters_and_a_broadcast_operand():
  """Rows of a table (an embedding's gradient), 2-d windows, and a zero
  operand the plan broadcasts from a scalar."""
  rng = np.random.RandomState(2)
  table = rng.randn(40, 6).astype(np.float32)
  rows = rng.randint(0, 40, 200).astype(np.int32)
  grads = rng.randn(200, 6).astype(np.float32)
  img = rng.randn(8, 9).astype(np.float32)
  starts = rng.randint(-2, 9, (50, 2)).astype(np.int32)
  patch = rng.randn(50, 3, 2).astype(np.float32)
  dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                   scatter_dims_to_operand_dims=(0, 1))

  def f(t, r, gr, im, s, p):
    return [jnp.zeros_like(t).at[r].add(gr), t.at[r].add(gr * 2),
            lax.scatter_add(im, s, p, dn, mode="clip"),
            lax.scatter_max(im, s, p, dn, mode="drop")]

  c, g = run_both(f, table, rows, grads, img, starts, patch)
  _same_bits(c, g)


def test_scatters_are_planned_as_kernels():
  jaxpr, _ = trace(lambda v, r, u: v.at[r].add(u), np.zeros(5, np.float32),
                   np.zeros(3, np.int32), np.ones(3, np.float32))
  mod = cuda_module.generate(fusion.plan_jaxpr(jaxpr))
  assert any(type(s) is scatters.ScatterKernel for s in mod.steps), mod.describe()
  # a general combiner has no kernel: it runs its NumPy implementation
  with config.override("jax_enable_x64", False):
    jaxpr, _ = trace(lambda v, r, u: v.at[r].apply(jnp.sin), np.zeros(5, np.float32),
                     np.zeros(3, np.int32), np.ones(3, np.float32))
  mod = cuda_module.generate(fusion.plan_jaxpr(jaxpr))
  assert not any(type(s) is scatters.ScatterKernel for s in mod.steps)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8, np.complex64])
def test_dynamic_slices_give_the_c_backends_bits(dtype):
  rng = np.random.RandomState(3)
  x = (rng.randn(5, 7, 6) * 9).astype(dtype)
  u = (rng.randn(2, 3, 4) * 9).astype(dtype)

  def f(x, u, i, j, k):
    lit = lambda v: np.array(v).astype(i.dtype)[()]   # a literal start of the same type
    return [lax.dynamic_slice(x, (i, j, k), (2, 3, 4)),
            lax.dynamic_slice(x, (i, lit(2), lit(200)), (5, 1, 2)),   # clamped
            lax.dynamic_update_slice(x, u, (i, j, k)),
            lax.dynamic_update_slice(x, u, (lit(-4), j, lit(3))),
            lax.dynamic_slice(x[0, 0], (k,), (1,)),
            lax.dynamic_update_slice(x[0, 0], u[0, 0, :1], (j,))]

  for starts in [(1, 2, 3), (-7, 9, 100), (4, -1, 0), (3, 4, 2)]:
    for index in (np.int32, np.uint8):   # unsigned: only the upper clamp
      c, g = run_both(f, x, u, *[index(s % 256 if index is np.uint8 else s) for s in starts])
      _same_bits(c, g)


def test_dynamic_slices_are_planned_as_kernels():
  jaxpr, _ = trace(lambda x, i: [lax.dynamic_slice(x, (i, 0), (2, 3)),
                                 lax.dynamic_update_slice(x, x[:1] * 2, (i, 1))],
                   np.zeros((4, 5), np.float32), np.int32(1))
  mod = cuda_module.generate(fusion.plan_jaxpr(jaxpr))
  kinds = [type(s) for s in mod.steps]
  assert kinds.count(dynamic_slices.DynamicSliceKernel) == 2, mod.describe()
