"""CUDA graphs (``purejax_cuda_graphs``, backends/cuda/graphs.py) through
the stand-in CuPy, whose capture records every device operation (kernels,
cuSOLVER calls, CuPy's array operations) and whose graph replays them into
the same buffers, as a CUDA graph does, and which refuses copies between
host and device while capturing, as CUDA does."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")


@pytest.fixture(params=["fake", "cupy"])
def graphs(request):
  """The stand-in CuPy, or CuPy's real GPUs (skipped where there are none),
  with CUDA graphs on."""
  if request.param == "fake":
    cupy = FakeCupy(1)
    gpu_runtime.use(cupy)
  else:
    gpu_runtime.use("detect")
    cupy = gpu_runtime.cupy()
    if cupy is None:
      pytest.skip("no GPU found through CuPy")
  try:
    with config.override("jax_platforms", "cuda,cpu"), \
        config.override("purejax_cuda_graphs", True):
      yield cupy
  finally:
    gpu_runtime.use("detect")


def _program(x, y, i):
  def step(c, xi):
    c = jnp.tanh(c * 0.5 + xi)
    return c, c.sum()
  c, ys = lax.scan(step, jnp.zeros(x.shape[1], x.dtype), x)
  spd = x.T @ x + jnp.eye(x.shape[1])
  return (jnp.tanh(x @ y).sum(0), jnp.cumsum(x, 1), jnp.sort(x, 0), c, ys,
          jnp.zeros(9).at[jnp.abs(x[:, 0] * 3).astype(jnp.int32) % 9].add(x[:, 1]),
          lax.dynamic_slice(x, (i, 1), (2, 2)), jnp.linalg.cholesky(spd), x[i])


def _inputs(seed):
  rng = np.random.RandomState(seed)
  return (rng.randn(6, 4).astype(np.float32), rng.randn(4, 3).astype(np.float32),
          np.int32(seed % 5))


def _same(got, want):
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)


def test_calls_from_the_third_on_replay_one_graph(graphs):
  f = jax.jit(_program)
  with config.override("jax_platforms", "cpu"):
    wants = [f(*_inputs(s)) for s in range(5)]
  outs = []
  for s in range(5):
    args = [jax.device_put(a, jax.devices()[0]) for a in _inputs(s)]
    launched = len(getattr(graphs, "launches", ()))
    outs.append(f(*args))
    if isinstance(graphs, FakeCupy):
      if s >= 2:   # replayed: no kernel launched from Python
        assert len(graphs.launches) == launched
      assert graphs.graph_launches == s   # (the second call captures, then launches)
  for got, want in zip(outs, wants):   # earlier results not overwritten by later launches
    _same(got, want)


def test_a_function_reading_values_back_is_not_captured(graphs):
  f = jax.jit(lambda x: lax.while_loop(lambda v: v.sum() < 100.0, lambda v: v * 2 + 1, x))
  for s in range(4):
    a = np.abs(_inputs(s)[0])
    with config.override("jax_platforms", "cpu"):
      want = f(a)
    _same(f(jax.device_put(a, jax.devices()[0])), want)
  assert getattr(graphs, "graph_launches", 0) == 0


def test_a_failed_capture_runs_uncaptured(graphs, monkeypatch):
  if not isinstance(graphs, FakeCupy):
    pytest.skip("the stand-in's refusal")
  """An operation that synchronizes while capturing (here a value read
  back) ends the capture; the function runs as before, never captured."""
  from purejax._src.backends.cuda import graphs as graphs_module
  real = graphs_module.Replayed._capture

  def capture_reading_back(self, args):
    self.run = _reading_back(self.run)
    return real(self, args)

  def _reading_back(run):
    def wrapped(*args):
      np.asarray(graphs.asnumpy(args[0]))   # a copy to the host: refused while capturing
      return run(*args)
    return wrapped

  monkeypatch.setattr(graphs_module.Replayed, "_capture", capture_reading_back)
  f = jax.jit(lambda x: jnp.exp(x) * 2)
  for s in range(4):
    a = _inputs(s)[0]
    _same(f(jax.device_put(a, jax.devices()[0])), np.exp(a.astype(np.float64)) * 2)
  assert graphs.graph_launches == 0
