"""Devices, device_put/device_get, block_until_ready, ShapeDtypeStruct."""
import pickle

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp


def test_devices_and_backend():
  assert jax.default_backend() == "cpu"
  devices = jax.devices()
  assert len(devices) == 1 and devices[0].platform == "cpu"
  assert repr(devices[0]) == "CpuDevice(id=0)"
  assert jax.device_count() == 1 and jax.local_device_count() == 1
  x = jnp.ones(3)
  assert x.devices() == {devices[0]} and x.device == devices[0]
  with pytest.raises(RuntimeError):
    jax.devices("gpu")


def test_device_put_copies_and_canonicalizes():
  src = np.arange(4.0)
  x = jax.device_put(src)
  src[0] = 100.0
  assert isinstance(x, jax.Array) and x.dtype == np.float32
  assert float(x[0]) == 0.0
  tree = jax.device_put({"a": np.ones(2), "b": [1, 2.0]})
  assert tree["a"].dtype == np.float32 and tree["b"][0].weak_type


def test_device_get_and_block_until_ready_on_trees():
  tree = {"a": jnp.ones(2), "b": (jnp.zeros(1), 3)}
  assert jax.block_until_ready(tree) is tree
  out = jax.device_get(tree)
  assert type(out["a"]) is np.ndarray and out["b"][1] == 3


def test_arrays_convert_to_numpy_and_back():
  x = jnp.arange(6).reshape(2, 3)
  back = np.asarray(x)
  assert back.dtype == np.int32 and back.shape == (2, 3)
  with pytest.raises(ValueError):
    back[0, 0] = 5    # the buffer is read-only: the Array stays immutable
  assert jnp.asarray(back).shape == (2, 3)


def test_array_pickles():
  x = jnp.array([1.5, 2.5])
  y = pickle.loads(pickle.dumps(x))
  assert isinstance(y, jax.Array)
  np.testing.assert_array_equal(y, x)


def test_shape_dtype_struct():
  s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
  assert s.shape == (2, 3) and s.dtype == np.float32 and s.ndim == 2
  assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
  assert s == jax.ShapeDtypeStruct((2, 3), np.float32)


def test_make_jaxpr_return_shape_and_static_argnums():
  jaxpr, shape = jax.make_jaxpr(lambda x, n: x * n, static_argnums=1, return_shape=True)(
      jnp.ones(3), 2)
  assert shape.shape == (3,) and "mul" in str(jaxpr)
  assert len(jaxpr.jaxpr.invars) == 1
