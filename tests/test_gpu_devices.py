"""GPU devices, placement and computations through the CuPy seam
(``gpu_runtime``), run on the CPU with tests/fake_cupy.py standing in for
CuPy: its arrays refuse implicit conversion to NumPy, so a value that
leaves the "GPU" without an explicit transfer fails, and its kernels run
through the emulation (the generated CUDA source compiled for the CPU).

Where CuPy finds a real GPU, the tests taking the ``gpu`` fixture also run
on it (benchmarks/gpu_check.sh runs them on the device machine)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy

needs_cc = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")


def _real_cupy():
  gpu_runtime.use("detect")
  return gpu_runtime.cupy()


@pytest.fixture
def fake():
  """Two fake GPUs, selected by JAX_PLATFORMS=cuda,cpu."""
  cupy = FakeCupy(2, name="NVIDIA Fake")
  gpu_runtime.use(cupy)
  try:
    with config.override("jax_platforms", "cuda,cpu"):
      yield cupy
  finally:
    gpu_runtime.use("detect")


@pytest.fixture(params=["fake", "cupy"])
def gpu(request):
  """The fake GPUs, or CuPy's real ones (skipped where there are none):
  the CuPy-like module in use, selected by JAX_PLATFORMS=cuda,cpu."""
  if request.param == "fake":
    cupy = FakeCupy(2, name="NVIDIA Fake")
    gpu_runtime.use(cupy)
  else:
    cupy = _real_cupy()
    if cupy is None:
      pytest.skip("no GPU found through CuPy")
  try:
    with config.override("jax_platforms", "cuda,cpu"):
      yield cupy
  finally:
    gpu_runtime.use("detect")


def _counts(cupy):
  """(kernels launched, copies to the host) so far; None on a real GPU."""
  if not isinstance(cupy, FakeCupy):
    return None
  return len(cupy.launches), cupy.transfers["to_host"]


def test_without_a_gpu_nothing_changes():
  gpu_runtime.use(None)
  try:
    assert jax.devices() == [jax.devices("cpu")[0]] and jax.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="no platforms that are instances of gpu are "
                       "present. Platforms present are: cpu"):
      jax.devices("gpu")
    with pytest.raises(RuntimeError, match="Unknown backend cuda"):
      jax.devices("cuda")
    with config.override("jax_platforms", "cuda"):
      with pytest.raises(RuntimeError, match="Unable to initialize backend 'cuda'"):
        jax.devices()
  finally:
    gpu_runtime.use("detect")


def test_gpus_are_used_only_when_jax_platforms_names_them():
  gpu_runtime.use(FakeCupy(1))
  try:
    assert jax.default_backend() == "cpu" and repr(jax.devices()) == "[CpuDevice(id=0)]"
    with config.override("jax_platforms", "cpu"):
      assert jax.default_backend() == "cpu"
    with config.override("jax_platforms", "cpu,cuda"):
      assert jax.default_backend() == "cpu"
      assert repr(jax.devices("gpu")) == "[CudaDevice(id=0)]"
  finally:
    gpu_runtime.use("detect")


def test_devices_as_jax_names_them(fake):
  gpus = jax.devices()
  assert repr(gpus) == "[CudaDevice(id=0), CudaDevice(id=1)]"
  assert jax.default_backend() == "gpu"
  assert jax.devices("gpu") == gpus == jax.devices("cuda") == jax.local_devices()
  assert jax.device_count() == 2 and jax.device_count("cpu") == 1
  assert repr(jax.devices("cpu")) == "[CpuDevice(id=0)]"
  d = gpus[1]
  assert (str(d), d.platform, d.device_kind, d.id) == ("cuda:1", "gpu", "NVIDIA Fake", 1)
  assert d != jax.devices("cpu")[0] and gpus[0] != jax.devices("cpu")[0]
  assert len({gpus[0], jax.devices("cpu")[0]}) == 2
  assert jax.devices()[0] is jax.devices()[0]
  with pytest.raises(RuntimeError, match="no platforms that are instances of tpu are present. Platforms present are: cpu, gpu"):
    jax.devices("tpu")


def test_device_put_and_get_move_the_value(gpu):
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  device = jax.devices()[-1]
  x = jax.device_put(a, device)
  assert isinstance(x._v, gpu.ndarray) and x._v.device.id == device.id
  assert x.device == device and x.committed and x.sharding == jax.sharding.SingleDeviceSharding(device)
  a[0, 0] = 99   # the caller's array was copied
  np.testing.assert_array_equal(np.asarray(x), np.arange(6, dtype=np.float32).reshape(2, 3))
  np.testing.assert_array_equal(jax.device_get(x), np.asarray(x))
  assert float(x[1, 2]) == 5.0 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
  assert repr(x) == "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
  back = jax.device_put(x, jax.devices("cpu")[0])
  assert type(back._v) is np.ndarray and back.device == jax.devices("cpu")[0]
  other = jax.device_put(x, jax.devices()[0])
  assert other._v.device.id == 0 and other.device == jax.devices()[0]
  made = jnp.asarray(a)   # made on the default device, uncommitted
  assert made.device == jax.devices()[0] and not made.committed


@needs_cc
def test_jit_runs_on_the_gpu_its_arguments_are_on(gpu):
  rng = np.random.RandomState(0)
  a = rng.randn(64, 48).astype(np.float32)
  b = rng.randint(-100, 100, (64, 48)).astype(np.int32)
  f = jax.jit(lambda x, k: ((x * 3 - 1).sum(0), jnp.maximum(k, 0) * 2 + 1, (x * x).max(1)))
  want = [np.asarray(o) for o in f(a, b)]   # on the CPU
  device = jax.devices()[-1]
  x, k = jax.device_put(a, device), jax.device_put(b, device)
  before = _counts(gpu)
  outs = f(x, k)
  if before is not None:
    launched, to_host = _counts(gpu)
    assert launched > before[0]
    assert to_host == before[1]   # nothing came back to the host
  for o, w in zip(outs, want):
    assert o.device == device and isinstance(o._v, gpu.ndarray)
    np.testing.assert_array_equal(np.asarray(o), w)   # same order of sums: same bits
  outs2 = f(x, k)   # the fast path meets GPU arrays too
  np.testing.assert_array_equal(np.asarray(outs2[0]), want[0])


@needs_cc
def test_eager_operations_on_gpu_arrays_stay_on_the_gpu(gpu):
  a = np.linspace(-2, 2, 30, dtype=np.float32).reshape(5, 6)
  x = jax.device_put(a, jax.devices()[0])
  before = _counts(gpu)
  for got, want in [(x + 1, a + 1), (jnp.abs(x), np.abs(a)), (x * x, a * a),
                    (x.sum(), a.astype(np.float64).sum()), (jnp.exp(x), np.exp(a)),
                    (x.T, a.T), (x > 0, a > 0)]:
    assert got.device == jax.devices()[0] and isinstance(got._v, gpu.ndarray)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)
  assert before is None or _counts(gpu)[0] > before[0]


@needs_cc
def test_matrix_products_and_layout_steps_run_on_the_device(gpu):
  """Steps outside the kernels whose NumPy implementations CuPy arrays
  dispatch (``impl_on_gpu_arrays``: dot_general, reshape, slice, gather...)
  run on the device arrays: nothing goes to the host."""
  rng = np.random.RandomState(1)
  a, b = rng.randn(4, 6).astype(np.float32), rng.randn(6, 3).astype(np.float32)
  f = jax.jit(lambda x, y: (jnp.tanh(x @ y), x[1, 2], x.reshape(3, 8)[0],
                            x[jnp.array([3, 0, 3, -1])], x.at[jnp.array([1, 9])].get(
                                mode="fill", fill_value=-7.0),
                            jnp.concatenate([x, x[::-1]]), x.T, jnp.flip(x, 1),
                            jnp.einsum("ij,jk->ik", x, y),
                            jnp.einsum("bji,bjk->bik", x.reshape(2, 2, 6), x.reshape(2, 2, 6))))
  x, y = jax.device_put(a, jax.devices()[0]), jax.device_put(b, jax.devices()[0])
  before = _counts(gpu)
  outs = f(x, y)
  assert before is None or _counts(gpu)[1] == before[1]
  s = a.astype(np.float64).reshape(2, 2, 6)
  want = [np.tanh(a.astype(np.float64) @ b), a[1, 2], a.reshape(3, 8)[0], a[[3, 0, 3, -1]],
          np.stack([a[1], np.full(6, -7.0, np.float32)]),
          np.concatenate([a, a[::-1]]), a.T, np.flip(a, 1), a.astype(np.float64) @ b,
          np.einsum("bji,bjk->bik", s, s)]
  for o, w in zip(outs, want):
    assert o.device == jax.devices()[0] and o.shape == w.shape and o.dtype == np.float32
    np.testing.assert_allclose(np.asarray(o), w, rtol=1e-5, atol=1e-6)


@needs_cc
def test_sorts_on_the_device(gpu):
  """Sorts and top_k run on the device (CuPy's stable sort of the keys
  XLA's total order gives: -0.0 with 0.0, NaNs last; several keys by one
  stable sort per key, the least significant first), as on the CPU."""
  a = np.random.RandomState(2).randn(6, 50).astype(np.float32)
  a[0, :5] = [np.nan, -0.0, 0.0, -np.inf, np.nan]
  b = np.random.RandomState(3).randint(0, 4, (6, 50)).astype(np.int32)
  f = jax.jit(lambda x, k: (jnp.sort(x * 2, axis=1), jnp.argsort(x, axis=0, stable=True),
                            lax.sort((k, x), num_keys=2),
                            lax.sort((k % 2, x, k, x * 3), num_keys=3),
                            lax.top_k(x, 7), lax.top_k(k, 3), lax.top_k(x.T, 2),
                            lax.approx_max_k(x, 5), lax.approx_min_k(x.T, 3)))
  want = f(a, b)
  x, k = jax.device_put(a, jax.devices()[0]), jax.device_put(b, jax.devices()[0])
  before = _counts(gpu)
  got = f(x, k)
  assert before is None or _counts(gpu)[1] == before[1]
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    assert g.device == jax.devices()[0]
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@needs_cc
def test_scatters_run_on_the_device_in_scatter_order(gpu):
  """Scatters (the gradient of an embedding lookup, ``.at[].set/add/mul/
  min/max``) are kernels over the stably sorted positions: each position
  sees its updates in scatter order, so the bits are the CPU's (the NumPy
  reference's ``ufunc.at``); ``set`` keeps the last.  Nothing is read
  back to the host."""
  rng = np.random.RandomState(4)
  table = rng.randn(50, 8).astype(np.float32)
  rows = rng.randint(0, 50, 300).astype(np.int32)   # many repeated rows
  rows[:4] = [7, 7, 7, 49]
  ups = (rng.randn(300) * 10.0 ** rng.randint(-3, 4, 300)).astype(np.float32)
  ups[:3] = [-0.0, 0.0, np.nan]
  idx = jnp.asarray(rows[:40] % 9)

  def f(t, r, u):
    lookup_grad = jax.grad(lambda t: jnp.sum(jnp.tanh(t[r]) * u[:, None]))(t)
    v = t[:, 0]
    return (lookup_grad, v.at[r].add(u), v.at[r].set(u), v.at[idx].mul(u[:40]),
            v.at[r].min(u), v.at[r].max(u), v.at[r + 45].add(u, mode="drop"))

  with config.override("purejax_backend", "cpu"):
    want = jax.jit(f)(table, rows, ups)
  dev = jax.devices()[0]
  args = [jax.device_put(a, dev) for a in (table, rows, ups)]
  before = len(gpu.host_copies) if isinstance(gpu, FakeCupy) else None
  got = jax.jit(f)(*args)
  assert before is None or gpu.host_copies[before:] == []
  for g, w in zip(got, want):
    assert g.device == dev
    assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@needs_cc
def test_slices_at_traced_positions_stay_on_the_device(gpu):
  """dynamic_slice and dynamic_update_slice (``x[i]``, ``.at[i].set`` with
  a traced i, in a loop too) are kernels reading their starts on the
  device: nothing reaches the host."""
  a = np.random.RandomState(6).randn(6, 5).astype(np.float32)

  def f(x, i):
    def body(k, acc):
      return acc.at[k].set(acc[k - 1] * 2 + x[(i + k) % 6])
    return x[i], x.at[i + 1].set(-1.0), lax.dynamic_slice(x, (i, i), (2, 3)), \
        lax.fori_loop(1, 6, body, jnp.zeros_like(x))

  with config.override("purejax_backend", "cpu"):
    want = jax.jit(f)(a, np.int32(2))
  x, i = jax.device_put(a, jax.devices()[0]), jax.device_put(np.int32(2), jax.devices()[0])
  before = _counts(gpu)
  got = jax.jit(f)(x, i)
  assert before is None or _counts(gpu)[1] == before[1]
  for g, w in zip(got, want):
    assert g.device == jax.devices()[0]
    assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@needs_cc
@pytest.mark.parametrize("dtype", ["float32", "float16"])   # float16: products in float32
def test_ragged_dot_and_its_gradient_on_the_device(gpu, dtype):
  rng = np.random.RandomState(8)
  x, w = rng.randn(10, 4).astype(dtype), rng.randn(3, 4, 5).astype(dtype)
  gs = np.array([3, 0, 7], np.int32)
  f = jax.jit(lambda x, w, gs: (lax.ragged_dot(x, w, gs), jax.grad(
      lambda x, w: lax.ragged_dot(x, w, gs).sum(), argnums=(0, 1))(x, w)))
  with config.override("purejax_backend", "cpu"):
    want = f(x, w, gs)
  args = [jax.device_put(a, jax.devices()[0]) for a in (x, w, gs)]
  before = _counts(gpu)
  got = f(*args)
  assert before is None or _counts(gpu)[1] == before[1]
  for g, h in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    assert g.device == jax.devices()[0] and g.dtype == h.dtype == np.dtype(dtype)
    np.testing.assert_allclose(np.asarray(g), np.asarray(h), rtol=1e-5, atol=1e-5)


@needs_cc
def test_bit_level_operations_on_the_device(gpu):
  """reduce_precision, optimization_barrier and rng_bit_generator (the
  key's words read on the device) give the CPU's bits, nothing read back."""
  a = np.random.RandomState(7).randn(50).astype(np.float32) * 1e3
  a[:4] = [np.nan, np.inf, -0.0, 1e-30]
  key = jnp.array([1, 2, 0xFFFFFFFF, 0xFFFFFFFE], jnp.uint32)   # the counter wraps
  f = jax.jit(lambda x: (lax.reduce_precision(x, 5, 10), lax.reduce_precision(x * 2, 8, 7),
                         lax.optimization_barrier(x + 1),
                         lax.rng_bit_generator(key + x[:4].astype(jnp.uint32) * 0, (5, 3)),
                         lax.rng_bit_generator(key, (4,), dtype=jnp.uint8,
                                               algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)))
  with config.override("purejax_backend", "cpu"):
    want = f(a)
  x = jax.device_put(a, jax.devices()[0])
  before = _counts(gpu)
  got = f(x)
  assert before is None or _counts(gpu)[1] == before[1]
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    assert g.device == jax.devices()[0]
    assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@needs_cc
def test_cumulative_reductions_run_as_kernels(gpu):
  """cumsum & co. are CUDA kernels in scan_order's blocks (the CPU's bits),
  jitted and eager: nothing reaches the host."""
  a = np.random.RandomState(5).randn(3, 700).astype(np.float32)
  f = jax.jit(lambda x: (jnp.cumsum(x, 1), jnp.cumprod(1 + x * 1e-2, 0),
                         lax.cummax(x, 1, reverse=True), jnp.cumsum((x * 9).astype(jnp.int32))))
  with config.override("purejax_backend", "cpu"):
    want = f(a)
  x = jax.device_put(a, jax.devices()[0])
  before = _counts(gpu)
  got = list(f(x)) + [jnp.cumsum(x, axis=1)]
  assert before is None or (_counts(gpu)[1] == before[1] and _counts(gpu)[0] > before[0])
  for g, w in zip(got, list(want) + [want[0]]):
    assert g.device == jax.devices()[0]
    assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


@needs_cc
def test_convolutions_run_on_the_device(gpu):
  """Convolutions (and their gradients: more convolutions) run as im2col
  products on the device arrays: nothing reaches the host."""
  rng = np.random.RandomState(6)
  x = rng.randn(4, 3, 12, 12).astype(np.float32)
  w = rng.randn(5, 3, 3, 3).astype(np.float32)

  def loss(w, x):
    y = lax.conv_general_dilated(x, w, (2, 1), [(1, 1), (0, 2)], rhs_dilation=(1, 2))
    z = lax.conv_general_dilated(jnp.tanh(y), w[:, :1].repeat(5, 1), (1, 1), "SAME",
                                 feature_group_count=1)
    return jnp.sum(z ** 2)

  f = jax.jit(jax.value_and_grad(loss))
  with config.override("purejax_backend", "cpu"):
    want = f(w, x)
  dev = jax.devices()[0]
  args = [jax.device_put(a, dev) for a in (w, x)]
  before = _counts(gpu)
  got = f(*args)
  assert before is None or _counts(gpu)[1] == before[1]
  for g, v in zip(got, want):
    assert g.device == dev
    np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=2e-5, atol=1e-4)


@needs_cc
def test_pooling_and_its_gradients_run_on_the_device(gpu):
  """Max, min and average pooling, max pooling's gradient (select and
  scatter-add, overlapping windows and padding too) and its forward-mode
  derivative run on the device arrays, with the CPU's bits: nothing is
  read back to the host."""
  rng = np.random.RandomState(7)
  x = rng.randn(2, 9, 10, 3).astype(np.float32)
  x[0, :2, :2, 0] = [[0.0, -0.0], [-0.0, 0.0]]   # signed-zero ties
  x[1, 4, 5, 2] = np.nan   # XLA's fold literally
  pads = [(0, 0), (1, 1), (0, 1), (0, 0)]

  def pools(x):
    mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), pads)
    mn = lax.reduce_window(x, jnp.inf, lax.min, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    avg = lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")
    return mx, mn, avg

  def f(x):
    mx, mn, avg = pools(x)
    grad = jax.grad(lambda x: jnp.sum(pools(x)[0] * jnp.cos(pools(x)[0])))(x)
    tangent = jax.jvp(lambda x: pools(x)[0], (x,), (jnp.sin(x),))[1]
    return mx, mn, avg, grad, tangent

  with config.override("purejax_backend", "cpu"):
    want = jax.jit(f)(x)
  dev = jax.devices()[0]
  before = len(gpu.host_copies) if isinstance(gpu, FakeCupy) else None
  got = jax.jit(f)(jax.device_put(x, dev))
  assert before is None or gpu.host_copies[before:] == []
  for g, w in zip(got, want):
    assert g.device == dev
    assert np.asarray(g).tobytes() == np.asarray(w).tobytes()


def test_arguments_on_two_gpus_are_refused(fake):
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  y = jax.device_put(np.ones(3, np.float32), jax.devices()[1])
  with pytest.raises(ValueError, match="incompatible devices"):
    jax.jit(lambda a, b: a + b)(x, y)


@needs_cc
def test_control_flow_runs_its_bodies_on_the_device(gpu):
  """scan, while_loop and cond run their bodies' GPU code from a host loop:
  only a while's condition and a cond's index come back to the host."""
  a = np.random.RandomState(3).randn(10, 4).astype(np.float32)

  def f(x):
    def step(c, xi):
      c = jnp.tanh(c * 0.5 + xi)
      return c, c.sum()
    c, ys = lax.scan(step, jnp.zeros(4, jnp.float32), x)
    w = lax.while_loop(lambda v: v[0] < 7, lambda v: (v[0] + 1, v[1] * 1.5), (0, c))
    k = lax.cond(ys.sum() > 0, lambda v: v * 2, lambda v: v - 1, w[1])
    return c, ys, w[1], k, lax.fori_loop(0, 3, lambda i, v: v + i, x)

  with config.override("jax_platforms", "cpu"):
    want = jax.jit(f)(a)
  x = jax.device_put(a, jax.devices()[0])
  before = _counts(gpu)
  got = jax.block_until_ready(jax.jit(f)(x))   # (run by the dispatch worker: it waits on the host)
  if before is not None:
    assert _counts(gpu)[1] - before[1] == 8 + 1   # 8 while conditions, 1 cond index
  for g, w in zip(got, want):   # tanh: within an ulp or two on a real GPU
    assert g.device == jax.devices()[0]
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=3e-7, atol=3e-7)


@needs_cc
def test_a_default_gpu_runs_everything(fake):
  """With the GPU first in JAX_PLATFORMS, eager operations and jitted
  calls on host data (Python numbers, NumPy arrays, keys) run there, with
  the CPU's results and random bits."""
  def program():
    k1, k2 = jax.random.split(jax.random.key(0))
    return [jax.random.normal(k1, (100,)), jax.random.randint(k2, (9,), 0, 50),
            jnp.ones(3) + 2, jax.jit(lambda a: a * 2)(np.arange(3.0)),
            jax.grad(lambda w: jnp.sum(jnp.sin(w) ** 2))(jnp.arange(3.0))]
  on_gpu = program()
  for x in on_gpu:
    assert x.device == jax.devices()[0] and isinstance(x._v, fake.ndarray)
  with config.override("jax_platforms", "cpu"):
    on_cpu = program()
  for g, c in zip(on_gpu[:4], on_cpu):   # random bits and arithmetic: the same
    np.testing.assert_array_equal(np.asarray(g), np.asarray(c))
  # sin: the C library's, scalar or vectorized (within an ulp or two)
  np.testing.assert_allclose(np.asarray(on_gpu[4]), np.asarray(on_cpu[4]), rtol=3e-7)


@needs_cc
def test_default_device_places_new_arrays_and_jitted_calls(fake):
  """``jax.default_device`` moves where arrays are made and where eager
  operations and jitted calls on uncommitted values run; the default
  backend and ``jax.devices()`` stay JAX_PLATFORMS's."""
  def program():
    return [jnp.ones(3) + 2, jax.jit(lambda a: a * 2)(np.arange(3.0)), jnp.arange(4.0)]
  cpu = jax.devices("cpu")[0]
  for chosen in (cpu, "cpu"):
    with jax.default_device(chosen):
      assert jax.default_backend() == "gpu" and jax.devices()[0] == jax.devices("gpu")[0]
      for x in program():
        assert x.device == cpu and type(x._v) is np.ndarray
  second = jax.devices()[1]
  with config.override("jax_platforms", "cpu,cuda"):
    assert jax.default_backend() == "cpu"
    for chosen, where in ((second, second), ("gpu", jax.devices("gpu")[0])):
      with jax.default_device(chosen):
        for x in program():
          assert x.device == where and isinstance(x._v, fake.ndarray)
    for x in program():
      assert x.device == cpu


@needs_cc
def test_donated_gpu_arrays_are_deleted(gpu):
  x = jax.device_put(np.arange(3.0, dtype=np.float32), jax.devices()[1])
  y = jax.jit(lambda a: a + 1, donate_argnums=0)(x)
  assert x.is_deleted() and not y.is_deleted() and y.device == jax.devices()[1]
  np.testing.assert_array_equal(np.asarray(y), [1, 2, 3])


@needs_cc
def test_tokens_on_a_default_gpu(fake):
  """Tokens carry no data: made eagerly as on the CPU, used inside a jitted
  function, refused at its boundary as on the CPU."""
  assert type(lax.after_all(lax.create_token(), lax.create_token())).__name__ == "Token"
  f = jax.jit(lambda x: (lax.after_all(lax.create_token(x)), x * 2)[1])
  assert f(np.ones(3)).device == jax.devices()[0]
  with pytest.raises(NotImplementedError, match="tokens"):
    jax.jit(lambda x: (lax.create_token(x), x))(1.0)


@needs_cc
def test_errors_on_a_default_gpu_are_jaxs(fake):
  """A result the device cannot hold, and an argument of no JAX type, raise
  JAX's errors as on the CPU."""
  with pytest.raises(jax.errors.JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
    jax.jit(lambda: jnp.ones(2 ** 40))()
  with pytest.raises(TypeError, match="Error interpreting argument to neg as a JAX value"):
    lax.neg(np.ones(2, np.longdouble))


@needs_cc
def test_what_has_no_gpu_kernel_runs_on_the_host_with_a_warning(fake, monkeypatch):
  """A function with no device code (here asinh, made so) makes the whole
  jitted function run on host copies, warned about once."""
  from purejax._src.backends.cpu import codegen_ops
  from purejax._src.backends.cuda import runner
  monkeypatch.setattr(runner, "_warned", set())
  supported = codegen_ops.cuda_supported
  monkeypatch.setattr(codegen_ops, "cuda_supported",
                      lambda name, ins, out: name != "asinh" and supported(name, ins, out))
  a = np.array([1 + 2j, -0.5j], np.complex64)
  x = jnp.asarray(a)
  with pytest.warns(RuntimeWarning, match="asinh on complex64 is unsupported on the GPU"):
    out = jax.jit(lambda v: jnp.arcsinh(v) * 2)(x)
  assert out.device == jax.devices()[0] and isinstance(out._v, fake.ndarray)
  np.testing.assert_allclose(np.asarray(out), np.arcsinh(a.astype(np.complex128)) * 2,
                             rtol=1e-6)


@needs_cc
def test_complex_values_are_computed_by_kernels(gpu, recwarn):
  """complex64 arithmetic, functions and reductions run in the generated
  kernels: no host copies, no warning."""
  a = (np.random.RandomState(4).randn(3, 40) + 1j).astype(np.complex64)
  f = jax.jit(lambda z: (jnp.exp(z) * z / (z + 2), jnp.abs(z).sum(1), jnp.cumsum(z, 1),
                         jnp.sqrt(z).sum(0)))
  z = jax.device_put(a, jax.devices()[0])
  before = _counts(gpu)
  got = f(z)
  assert before is None or (_counts(gpu)[0] > before[0] and _counts(gpu)[1] == before[1])
  assert not [w for w in recwarn if "GPU" in str(w.message)]
  a64 = a.astype(np.complex128)
  want = (np.exp(a64) * a64 / (a64 + 2), np.abs(a64).sum(1), np.cumsum(a64, 1),
          np.sqrt(a64).sum(0))
  for g, w in zip(got, want):
    assert g.device == jax.devices()[0]
    assert g.dtype == (np.float32 if w.dtype.kind == "f" else np.complex64)
    np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6)


@needs_cc
def test_ffts_run_on_the_device(gpu):
  """FFTs of device arrays are CuPy's (cuFFT) on the device: single
  precision kept (float32 -> complex64 -> float32), no host copies."""
  rng = np.random.RandomState(5)
  a = rng.randn(4, 16).astype(np.float32)
  c = (rng.randn(3, 8, 6) + 1j * rng.randn(3, 8, 6)).astype(np.complex64)
  f = jax.jit(lambda x, z: (jnp.fft.fft(z), jnp.fft.ifft2(z), jnp.fft.rfft(x),
                            jnp.fft.irfft(jnp.fft.rfft(x) * 2, n=16), jnp.fft.fftn(z * 2)))
  x, z = jax.device_put(a, jax.devices()[0]), jax.device_put(c, jax.devices()[0])
  before = _counts(gpu)
  got = f(x, z)
  assert before is None or _counts(gpu)[1] == before[1]
  if before is not None:   # the fake's cupy.fft saw every transform
    assert sorted(gpu.fft_calls) == ["fftn", "fftn", "ifftn", "irfftn", "rfftn"]
  want = (np.fft.fft(c), np.fft.ifft2(c), np.fft.rfft(a), np.fft.irfft(np.fft.rfft(a) * 2, n=16),
          np.fft.fftn(c * 2))
  for g, w in zip(got, want):
    assert g.device == jax.devices()[0]
    assert g.dtype == (np.float32 if w.dtype.kind == "f" else np.complex64)
    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_an_escaped_tracer_used_on_the_gpu_raises_jax_error(fake):
  leaked = []
  jax.jit(lambda v: leaked.append(v) or v)(1.0)
  with pytest.raises(jax.errors.UnexpectedTracerError):
    leaked[0] + 1


@needs_cc
def test_bfloat16_is_held_as_its_bits(gpu):
  """CuPy has no bfloat16: buffers hold its bits (uint16), Arrays keep the
  dtype, and kernels, transfers and host steps read them so."""
  a = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6).astype(jnp.bfloat16)
  x = jax.device_put(a, jax.devices()[0])
  assert x.dtype == jnp.bfloat16 and x._v.dtype == np.uint16
  np.testing.assert_array_equal(np.asarray(x), a)
  f = jax.jit(lambda v: (v * 2 + 1, v.sum(0), jnp.sort(v, 1), v.T.reshape(3, 8)))
  for got, want in zip(f(x), f(a)):
    assert got.dtype == want.dtype and got.device == jax.devices()[0]
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_gpu_array_api(gpu):
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  x = jax.device_put(a, jax.devices()[0])
  (shard,) = x.addressable_shards
  assert shard.device == jax.devices()[0] and shard.index == (slice(None), slice(None))
  np.testing.assert_array_equal(np.asarray(shard.data), a)
  assert x.devices() == {jax.devices()[0]} and x.is_fully_replicated
  assert x.block_until_ready() is x and x.unsafe_buffer_pointer() == x._v.data.ptr
  import pickle
  np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(x))), a)
  assert str(x) == str(a) and f"{x[0, 1]:.2f}" == "1.00" and len(x) == 2
  assert [float(r[0]) for r in x] == [0.0, 3.0]


@needs_cc
def test_unfunctionalized_check_on_a_default_gpu(fake):
  from purejax.experimental import checkify

  def f(x):
    checkify.check(x > 0, "x must be positive, got {x}", x=x)
    return x + 1
  with pytest.raises(checkify.JaxRuntimeError, match="x must be positive, got -1.0"):
    f(jnp.float32(-1.0))
  assert float(f(jnp.float32(1.0))) == 2.0
  with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check"):
    jax.jit(f)(jnp.float32(-1.0))


def test_values_are_dropped_after_their_last_use():
  """The runner frees each value after the last step reading it (not an
  output): a chain of matrix products holds two values at a time."""
  from purejax._src.backends.cuda import runner
  from tests.tier_pair import trace
  a = np.ones((4, 4), np.float32)
  jaxpr, _ = trace(lambda x: [jnp.tanh(jnp.tanh(jnp.tanh(x @ x) @ x) @ x) @ x, x.sum()], a)
  run = runner.compile_jaxpr(jaxpr)
  steps, outvars = run.module.steps, jaxpr.outvars
  dead = runner._dead_after(steps, outvars)
  for i, gone in enumerate(dead):
    for v in gone:
      assert v not in outvars
      assert all(v not in runner._reads(s) for s in steps[i + 1:])
  produced = [v for s in steps for v in (s.outputs if hasattr(s, "outputs") else s.eqn.outvars)]
  read = {v for s in steps for v in runner._reads(s)}
  intermediates = [v for v in produced if v in read and v not in outvars]
  assert intermediates and all(sum(v in g for g in dead) == 1 for v in intermediates)
  np.testing.assert_allclose(run(a)[1], 16.0)
