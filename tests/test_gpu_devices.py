"""GPU devices, placement and computations through the CuPy seam
(``gpu_runtime``), run on the CPU with tests/fake_cupy.py standing in for
CuPy: its arrays refuse implicit conversion to NumPy, so a value that
leaves the "GPU" without an explicit transfer fails, and its kernels run
through the emulation (the generated CUDA source compiled for the CPU)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.backends.cpu import toolchain
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy

needs_cc = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")


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


def test_device_put_and_get_move_the_value(fake):
  a = np.arange(6, dtype=np.float32).reshape(2, 3)
  gpu = jax.devices()[1]
  x = jax.device_put(a, gpu)
  assert isinstance(x._v, fake.ndarray) and x._v.device.id == 1
  assert x.device == gpu and x.committed and x.sharding == jax.sharding.SingleDeviceSharding(gpu)
  a[0, 0] = 99   # the caller's array was copied
  np.testing.assert_array_equal(np.asarray(x), np.arange(6, dtype=np.float32).reshape(2, 3))
  np.testing.assert_array_equal(jax.device_get(x), np.asarray(x))
  assert float(x[1, 2]) == 5.0 and x.tolist() == [[0, 1, 2], [3, 4, 5]]
  assert repr(x) == "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
  back = jax.device_put(x, jax.devices("cpu")[0])
  assert type(back._v) is np.ndarray and back.device == jax.devices("cpu")[0]
  other = jax.device_put(x, jax.devices()[0])
  assert other._v.device.id == 0 and other.device == jax.devices()[0]


@needs_cc
def test_jit_runs_on_the_gpu_its_arguments_are_on(fake):
  rng = np.random.RandomState(0)
  a = rng.randn(64, 48).astype(np.float32)
  b = rng.randint(-100, 100, (64, 48)).astype(np.int32)
  f = jax.jit(lambda x, k: ((x * 3 - 1).sum(0), jnp.maximum(k, 0) * 2 + 1, (x * x).max(1)))
  want = [np.asarray(o) for o in f(a, b)]   # on the CPU
  x, k = jax.device_put(a, jax.devices()[1]), jax.device_put(b, jax.devices()[1])
  launched, to_host = len(fake.launches), fake.transfers["to_host"]
  outs = f(x, k)
  assert len(fake.launches) > launched
  assert fake.transfers["to_host"] == to_host   # nothing came back to the host
  for o, w in zip(outs, want):
    assert o.device == jax.devices()[1] and isinstance(o._v, fake.ndarray)
    np.testing.assert_array_equal(np.asarray(o), w)   # same order of sums: same bits
  outs2 = f(x, k)   # the fast path meets GPU arrays too
  np.testing.assert_array_equal(np.asarray(outs2[0]), want[0])


@needs_cc
def test_eager_operations_on_gpu_arrays_stay_on_the_gpu(fake):
  a = np.linspace(-2, 2, 30, dtype=np.float32).reshape(5, 6)
  x = jax.device_put(a, jax.devices()[0])
  launched = len(fake.launches)
  for got, want in [(x + 1, a + 1), (jnp.abs(x), np.abs(a)), (x * x, a * a),
                    (x.sum(), a.astype(np.float64).sum()), (jnp.exp(x), np.exp(a)),
                    (x.T, a.T), (x > 0, a > 0)]:
    assert got.device == jax.devices()[0] and isinstance(got._v, fake.ndarray)
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)
  assert len(fake.launches) > launched


@needs_cc
def test_host_steps_of_a_gpu_computation(fake):
  """A matrix product is a host step for now: right, and its result is
  back on the GPU."""
  rng = np.random.RandomState(1)
  a, b = rng.randn(8, 5).astype(np.float32), rng.randn(5, 3).astype(np.float32)
  x, y = jax.device_put(a, jax.devices()[0]), jax.device_put(b, jax.devices()[0])
  out = jax.jit(lambda x, y: jnp.tanh(x @ y))(x, y)
  assert out.device == jax.devices()[0]
  np.testing.assert_allclose(np.asarray(out), np.tanh(a.astype(np.float64) @ b), rtol=1e-5,
                             atol=1e-6)


def test_arguments_on_two_gpus_are_refused(fake):
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  y = jax.device_put(np.ones(3, np.float32), jax.devices()[1])
  with pytest.raises(ValueError, match="incompatible devices"):
    jax.jit(lambda a, b: a + b)(x, y)
