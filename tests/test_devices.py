"""Devices, device_put / device_get, Array.device, JAX_PLATFORMS."""
import os
import subprocess
import sys

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.config import config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_device_object():
  d = purejax.devices()[0]
  assert isinstance(d, purejax.Device)
  assert repr(d) == "CpuDevice(id=0)"
  assert str(d) == "cpu:0"
  assert (d.id, d.platform, d.device_kind, d.process_index, d.host_id) == (0, "cpu", "cpu", 0, 0)
  assert d.local_hardware_id == 0
  assert d == purejax.local_devices()[0] and hash(d) == hash(purejax.devices("cpu")[0])


def test_device_counts_and_backend():
  assert purejax.devices() == purejax.local_devices() == purejax.devices("cpu")
  assert purejax.device_count() == purejax.local_device_count() == 1
  assert purejax.default_backend() == "cpu"
  assert purejax.process_index() == 0 and purejax.process_count() == 1


@pytest.mark.parametrize("backend, message", [
    ("gpu", "Unknown backend: 'gpu' requested, but no platforms that are instances of gpu "
            "are present. Platforms present are: cpu"),
    ("foo", "Unknown backend foo. Available backends are ['cpu']"),
])
def test_unknown_backend(backend, message):
  with pytest.raises(RuntimeError) as info:
    purejax.devices(backend)
  assert str(info.value) == message


def test_unknown_backend_matches_jax():
  jax = pytest.importorskip("jax")
  for backend in ("gpu", "cuda", "rocm", "foo"):
    with pytest.raises(RuntimeError) as ours:
      purejax.devices(backend)
    with pytest.raises(RuntimeError) as theirs:
      jax.devices(backend)
    assert str(ours.value) == str(theirs.value)


def test_jit_device_and_backend_arguments_match_jax():
  """jit's deprecated ``device``/``backend``: JAX's warning, its ValueError
  for both, its RuntimeError when a jit for a missing backend is called."""
  jax = pytest.importorskip("jax")

  def outcome(j):
    with pytest.warns(DeprecationWarning) as warned:
      f = j.jit(lambda x: x + 1, backend="gpu")   # made without error
    texts = [str(w.message) for w in warned]
    with pytest.raises(RuntimeError) as missing:
      f(1.0)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError) as both:
      j.jit(lambda x: x, device=j.devices()[0], backend="cpu")
    with pytest.warns(DeprecationWarning):
      value = j.jit(lambda x: x * 2, device=j.devices()[0])(3.0)
    with pytest.warns(DeprecationWarning):
      value2 = j.jit(backend="cpu")(lambda x: x - 1)(3.0)
    return texts, str(missing.value), str(both.value), float(value), float(value2)

  assert outcome(purejax) == outcome(jax)


def test_array_device():
  x = jnp.arange(3.0)
  assert x.device == purejax.devices()[0]
  assert x.devices() == {purejax.devices()[0]}


@pytest.mark.parametrize("value, dtype, weak", [
    (np.arange(3), np.int32, False),
    (np.arange(3.0), np.float32, False),
    (1.0, np.float32, True),
    (2, np.int32, True),
    (np.float16(1), np.float16, False),
])
def test_device_put_leaf(value, dtype, weak):
  for target in (None, purejax.devices()[0], purejax.SingleDeviceSharding(purejax.devices()[0])):
    out = purejax.device_put(value, target)
    assert isinstance(out, purejax.Array)
    assert out.dtype == dtype and out.weak_type == weak
    np.testing.assert_array_equal(out, np.asarray(value, dtype))


def test_device_put_tree_and_prefix():
  d = purejax.devices()[0]
  out = purejax.device_put({"a": 1, "b": np.ones(2)}, {"a": d, "b": None})
  assert isinstance(out["a"], purejax.Array) and out["a"].weak_type
  assert out["b"].dtype == np.float32
  x = jnp.ones(2)
  assert purejax.device_put(x) is x   # nothing moves on one device


def test_device_put_bad_target():
  with pytest.raises(ValueError, match="only accepts `None`, `jax.sharding.Sharding`, "
                     "`jax.Device`.*Received invalid value: cpu"):
    purejax.device_put(jnp.ones(2), "cpu")
  d = purejax.devices()[0]
  with pytest.raises(ValueError, match="device_put device specification must be a tree "
                     "prefix of the corresponding value"):
    purejax.device_put((1.0, 2.0), (d, d, d))


def test_single_device_sharding():
  d = purejax.devices()[0]
  s = purejax.SingleDeviceSharding(d)
  assert repr(s) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"
  assert s.device_set == {d} and s.num_devices == 1 and s.memory_kind == "device"
  assert s == purejax.SingleDeviceSharding(d) and hash(s) == hash(purejax.SingleDeviceSharding(d))


def test_device_put_staged_under_jit():
  d = purejax.devices()[0]
  f = lambda x, y: purejax.device_put((x, y), (d, None))
  text = str(purejax.make_jaxpr(f)(1.0, 2))
  assert "device_put" in text
  assert "devices=(CpuDevice(id=0), None)" in text
  assert "copy_semantics=(ArrayCopySemantics.REUSE_INPUT, ArrayCopySemantics.REUSE_INPUT)" in text
  g = lambda x: purejax.device_put(x, d) * 2.0
  assert float(purejax.jit(g)(1.5)) == 3.0
  assert float(purejax.grad(g)(1.5)) == 2.0
  np.testing.assert_array_equal(purejax.vmap(g)(jnp.arange(3.0)), [0.0, 2.0, 4.0])


def test_device_put_copy_semantics_param():
  text = str(purejax.make_jaxpr(lambda x: purejax.device_put(x, may_alias=False))(1.0))
  assert "ArrayCopySemantics.ALWAYS_COPY" in text
  text = str(purejax.make_jaxpr(lambda x: purejax.device_put(x, donate=True))(1.0))
  assert "ArrayCopySemantics.DONATE_INPUT" in text


def test_device_get():
  x = jnp.arange(3.0)
  out = purejax.device_get({"a": x, "b": 1})
  assert type(out["a"]) is np.ndarray and out["a"].dtype == np.float32
  assert out["b"] == 1
  assert type(purejax.device_get(1.0)) is float


def test_jax_platforms_flag():
  with config.override("jax_platforms", "cpu"):
    assert purejax.devices() == [purejax.Device(0)]
  with config.override("jax_platforms", "cuda"):
    with pytest.raises(RuntimeError, match="Unable to initialize backend 'cuda'"):
      purejax.devices()
    with pytest.raises(RuntimeError, match="Unable to initialize backend 'cuda'"):
      purejax.default_backend()


def test_jax_platforms_env_var():
  code = ("import purejax, purejax.numpy as jnp\n"
          "print(purejax.devices(), purejax.default_backend(), jnp.ones(2).sum())\n")
  env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["[CpuDevice(id=0)]", "cpu", "2.0"]
  env["JAX_PLATFORMS"] = "tpu"
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
  assert out.returncode != 0
  assert "RuntimeError: Unable to initialize backend 'tpu'" in out.stderr


def test_array_sharding_and_the_sharding_module():
  x = jnp.ones(3)
  assert x.sharding == purejax.sharding.SingleDeviceSharding(purejax.devices()[0])
  assert repr(x.sharding) == "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"


def test_shape_dtype_struct_as_jax():
  s = purejax.ShapeDtypeStruct((2, 3), jnp.float32)
  assert len(s) == 2 and s.update(shape=(4,)) == purejax.ShapeDtypeStruct((4,), jnp.float32)
  assert jnp.zeros_like(s).shape == (2, 3) and jnp.full_like(s, 2).dtype == jnp.float32
  assert jnp.ones_like(s, dtype=jnp.int32).dtype == jnp.int32
  with pytest.raises(ValueError, match="dtype must be specified"):
    purejax.ShapeDtypeStruct((2,), None)
  with pytest.raises(TypeError, match="unsized"):
    len(purejax.ShapeDtypeStruct((), jnp.int32))


def test_device_put_transposes_back_to_its_source():
  f = lambda x: purejax.device_put(x, purejax.devices()[0]).sum()
  eqn = purejax.make_jaxpr(purejax.grad(f))(jnp.ones(2)).eqns[-1]
  assert eqn.primitive.name == "device_put"
  assert eqn.params["devices"] == (None,) and eqn.params["srcs"] == (purejax.devices()[0],)
  assert str(eqn.params["copy_semantics"]) == "(ArrayCopySemantics.ALWAYS_COPY,)"
  np.testing.assert_array_equal(purejax.grad(f)(jnp.ones(2)), np.ones(2))


# -- several CPU devices ----------------------------------------------------------

def test_num_cpu_devices_flag(cpu_devices):
  devices = cpu_devices(4)
  assert [d.id for d in devices] == [0, 1, 2, 3]
  assert purejax.devices() == purejax.local_devices() == devices
  assert purejax.device_count() == purejax.local_device_count() == 4
  assert purejax.devices()[3] is devices[3]   # the same objects each call
  x = purejax.device_put(jnp.arange(3.0), devices[3])
  cpu_devices(2)   # purejax (unlike JAX) allows changing the count after first use
  assert purejax.device_count() == 2 and purejax.devices() == devices[:2]
  assert x.device == devices[3] and float(x.sum()) == 3.0   # still valid
  with pytest.raises(ValueError, match="positive"):
    config.update("jax_num_cpu_devices", 0)


def test_xla_flags_device_count():
  code = ("import purejax\n"
          "print(purejax.device_count(), repr(purejax.devices()[-1]))\n"
          "purejax.config.update('jax_num_cpu_devices', 2)\n"
          "print(purejax.device_count())\n")
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=3",
             PYTHONPATH=ROOT)
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["3", "CpuDevice(id=2)", "2"]


def test_device_put_to_another_device(cpu_devices):
  devices = cpu_devices(3)
  x = jnp.arange(4.0).reshape(2, 2)
  assert not x.committed and x.device == devices[0] and x.is_fully_replicated
  y = purejax.device_put(x, devices[1])
  assert y.committed and y.device == devices[1] and y.devices() == {devices[1]}
  assert y.sharding == purejax.SingleDeviceSharding(devices[1])
  assert not x.committed   # x keeps its own layout
  [shard] = y.addressable_shards
  assert shard.device == devices[1] and shard.index == (slice(None), slice(None))
  np.testing.assert_array_equal(y.addressable_data(0), x)
  z = purejax.device_put({"a": x, "b": 1.0}, {"a": devices[2], "b": None})
  assert z["a"].device == devices[2] and not z["b"].committed
  np.testing.assert_array_equal(purejax.jit(lambda a: a * 2)(y), 2 * np.asarray(x))
