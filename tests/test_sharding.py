"""Meshes, PartitionSpecs, NamedShardings and Arrays laid out over several
CPU devices (device_put, shards, make_array_from_*, jit's shardings)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax.sharding import (AxisType, Mesh, NamedSharding, PartitionSpec, Sharding,
                              SingleDeviceSharding)

P = PartitionSpec
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def mesh22(cpu_devices):
  devices = cpu_devices(4)
  return Mesh(np.array(devices).reshape(2, 2), ("x", "y"))


# -- PartitionSpec, AxisType -------------------------------------------------------

def test_partition_spec():
  assert repr(P("x", None)) == "P('x', None)"
  assert repr(P("x")) == "P('x',)" and repr(P()) == "P()"
  assert repr(P(("x", "y"), None)) == "P(('x', 'y'), None)"
  assert repr(P(P.UNCONSTRAINED)) == "P(UNCONSTRAINED,)"
  assert P(("x",)) == P("x") and P(["x", "y"]) == P(("x", "y"))
  assert P("x") != P("x", None) and P("x") != ("x",)
  assert hash(P("x", None)) == hash(P("x", None))
  assert len(P("x", None)) == 2 and P("x", "y")[1] == "y" and list(P("x", "y")) == ["x", "y"]
  assert P("x") + ("y",) == P("x", "y") and P("x") + P("y") == P("x", "y")
  assert purejax.P is PartitionSpec


def test_axis_type():
  assert [repr(t) for t in AxisType] == ["Auto", "Explicit", "Manual"]


# -- Mesh ---------------------------------------------------------------------------

def test_mesh_attributes(mesh22):
  m = mesh22
  assert list(m.shape.items()) == [("x", 2), ("y", 2)]
  assert m.axis_names == ("x", "y") and m.axis_sizes == (2, 2) and m.size == 4
  assert m.axis_types == (AxisType.Auto, AxisType.Auto)
  assert m.devices.dtype == object and m.devices.shape == (2, 2)
  np.testing.assert_array_equal(m.device_ids, [[0, 1], [2, 3]])
  assert repr(m) == ("Mesh(axis_sizes=(2, 2), axis_names=('x', 'y'), "
                     "axis_types=(Auto, Auto))")
  assert str(m) == "Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto))"
  same = Mesh(np.array(purejax.devices()).reshape(2, 2), ("x", "y"))
  assert same == m and hash(same) == hash(m)
  assert Mesh(np.array(purejax.devices()).reshape(2, 2), ("a", "y")) != m
  assert Mesh(purejax.devices(), "i").shape == {"i": 4}


def test_mesh_errors(cpu_devices):
  devices = cpu_devices(4)
  with pytest.raises(ValueError, match="devices.ndim == 1 and len\\(axis_names\\) == 2"):
    Mesh(np.array(devices), ("x", "y"))
  with pytest.raises(ValueError, match="cannot be None"):
    Mesh(np.array(devices), (None,))
  with pytest.raises(TypeError, match="must be of type `jax.sharding.AxisType`"):
    Mesh(np.array(devices), ("x",), axis_types=("auto",))


def test_mesh_context_manager(mesh22):
  from purejax._src.mesh import context_mesh
  assert context_mesh() is None
  with pytest.warns(DeprecationWarning, match="set_mesh"):
    with mesh22 as m:
      assert m is mesh22 and context_mesh() is mesh22
  assert context_mesh() is None


def test_make_mesh(cpu_devices):
  devices = cpu_devices(4)
  m = purejax.make_mesh((2, 2), ("x", "y"))
  assert m.axis_types == (AxisType.Explicit, AxisType.Explicit)
  assert list(m.devices.flat) == devices
  m = purejax.make_mesh((2,), ("a",), axis_types=(AxisType.Auto,), devices=devices[2:])
  assert list(m.devices.flat) == devices[2:] and m.axis_types == (AxisType.Auto,)
  assert purejax.make_mesh((3,), ("a",)).size == 3   # the first 3 devices
  with pytest.raises(ValueError, match=r"Number of devices 4 must be >= the product of "
                                       r"mesh_shape \(2, 3\)"):
    purejax.make_mesh((2, 3), ("a", "b"))


# -- NamedSharding ---------------------------------------------------------------

def _blocks(sharding, shape):
  """{device id: index as (start, stop) per dimension}."""
  return {d.id: tuple(s.indices(n)[:2] for s, n in zip(index, shape))
          for d, index in sharding.devices_indices_map(shape).items()}


@pytest.mark.parametrize("spec, expected", [
    (P("x"), {0: ((0, 2), (0, 4)), 1: ((0, 2), (0, 4)), 2: ((2, 4), (0, 4)),
              3: ((2, 4), (0, 4))}),
    (P(None, "y"), {0: ((0, 4), (0, 2)), 1: ((0, 4), (2, 4)), 2: ((0, 4), (0, 2)),
                    3: ((0, 4), (2, 4))}),
    (P("y", "x"), {0: ((0, 2), (0, 2)), 1: ((2, 4), (0, 2)), 2: ((0, 2), (2, 4)),
                   3: ((2, 4), (2, 4))}),
    (P(("x", "y")), {i: ((i, i + 1), (0, 4)) for i in range(4)}),
    (P(("y", "x")), {0: ((0, 1), (0, 4)), 1: ((2, 3), (0, 4)), 2: ((1, 2), (0, 4)),
                     3: ((3, 4), (0, 4))}),
    (P(), {i: ((0, 4), (0, 4)) for i in range(4)}),
])
def test_devices_indices_map(mesh22, spec, expected):
  s = NamedSharding(mesh22, spec)
  assert _blocks(s, (4, 4)) == expected
  starts = {b for b in expected.values()}
  assert s.is_fully_replicated == (len(starts) == 1)
  assert s.shard_shape((4, 4)) == tuple(b - a for a, b in expected[0])


def test_named_sharding_interface(mesh22):
  s = NamedSharding(mesh22, P("x"))
  assert isinstance(s, Sharding)
  assert repr(s) == ("NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), "
                     "spec=P('x',), memory_kind=device)")
  assert s.mesh is mesh22 and s.spec == P("x") and s.memory_kind == "device"
  assert s.device_set == set(purejax.devices()) == s.addressable_devices
  assert s.num_devices == 4 and s.is_fully_addressable
  assert s.addressable_devices_indices_map((4,)) == s.devices_indices_map((4,))
  assert s == NamedSharding(mesh22, P("x")) and hash(s) == hash(NamedSharding(mesh22, P("x")))
  assert s != NamedSharding(mesh22, P("x", None))
  assert s.is_equivalent_to(NamedSharding(mesh22, P("x", None)), 2)
  assert not s.is_equivalent_to(NamedSharding(mesh22, P("y")), 2)
  one = Mesh(np.array(purejax.devices()[:1]), ("x",))
  assert NamedSharding(one, P("x")).is_equivalent_to(
      SingleDeviceSharding(purejax.devices()[0]), 1)


def test_named_sharding_errors(mesh22):
  with pytest.raises(ValueError, match=r"Resource axis: z of P\('z',\) is not found in "
                                       r"mesh: \('x', 'y'\)."):
    NamedSharding(mesh22, P("z"))
  with pytest.raises(Exception, match="has duplicate entries for `x`"):
    NamedSharding(mesh22, P("x", "x"))
  with pytest.raises(TypeError, match="PartitionSpec"):
    NamedSharding(mesh22, ("x",))
  with pytest.raises(ValueError, match="but the dimension size is 5"):
    NamedSharding(mesh22, P("x")).devices_indices_map((5,))


def test_single_device_sharding(cpu_devices):
  d = cpu_devices(3)[2]
  s = SingleDeviceSharding(d)
  assert s.devices_indices_map((2, 3)) == {d: (slice(None), slice(None))}
  assert s.shard_shape((2, 3)) == (2, 3) and s.num_devices == 1 and s.is_fully_replicated


# -- sharded Arrays ------------------------------------------------------------

def test_device_put_named_sharding(mesh22):
  value = np.arange(24.0, dtype=np.float32).reshape(4, 6)
  s = NamedSharding(mesh22, P("x"))
  x = purejax.device_put(value, s)
  np.testing.assert_array_equal(x, value)
  assert x.sharding == s and x.committed and not x.is_fully_replicated
  assert x.devices() == set(purejax.devices()) and x.device == s
  assert repr(x) == repr(jnp.asarray(value))
  shards = x.addressable_shards
  assert [sh.device.id for sh in shards] == [0, 1, 2, 3]
  assert [sh.replica_id for sh in shards] == [0, 1, 0, 1]
  for sh in shards:
    np.testing.assert_array_equal(sh.data, value[sh.index])
    assert sh.data.sharding == SingleDeviceSharding(sh.device)
  assert x.global_shards[2].index == (slice(2, 4), slice(None))
  np.testing.assert_array_equal(x.addressable_data(3), value[2:])
  assert repr(shards[0]).startswith(
      "Shard(device=CpuDevice(id=0), index=(slice(0, 2, None), slice(None, None, None)), "
      "replica_id=0, data=[[")
  full = purejax.device_put(x, NamedSharding(mesh22, P()))
  assert full.is_fully_replicated and x.sharding == s   # x is unchanged


def test_device_put_errors(mesh22):
  with pytest.raises(ValueError) as info:
    purejax.device_put(jnp.arange(5.0), NamedSharding(mesh22, P("x")))
  assert type(info.value).__name__ == "IndivisibleError"
  assert str(info.value) == (
      "Sharding NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), "
      "spec=P('x',), memory_kind=device) implies that array axis 0 is partitioned 2 times, "
      "but the dimension size is 5 (full shape: (5,), per-dimension tiling factors: [2] "
      "should evenly divide the shape)")
  explicit = purejax.make_mesh((2, 2), ("x", "y"))
  with pytest.raises(ValueError) as info:
    purejax.device_put(jnp.ones((4, 5)), NamedSharding(explicit, P(None, ("x", "y"))))
  assert str(info.value) == (
      "Sharding spec ('x', 'y') implies that array axis 1 is partitioned 4 times, but does "
      "not evenly divide the dimension size 5. Got shape: (4, 5) and sharding NamedSharding("
      "mesh=AbstractMesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
      "num_cores=None, platform=cpu), spec=P(None, ('x', 'y')))")
  with pytest.raises(ValueError, match="One of device_put args is incompatible with its "
                                       "sharding annotation"):
    purejax.device_put(jnp.ones(4), NamedSharding(mesh22, P("x", "y")))


def test_device_put_device(cpu_devices):
  devices = cpu_devices(3)
  x = jnp.arange(3.0)
  assert not x.committed and x.device == devices[0]
  y = purejax.device_put(x, devices[2])
  assert y.committed and y.device == devices[2] and y.devices() == {devices[2]}
  assert y.sharding == SingleDeviceSharding(devices[2])
  [shard] = y.addressable_shards
  assert shard.device == devices[2] and shard.index == (slice(None),) and shard.replica_id == 0
  np.testing.assert_array_equal(shard.data, x)


def test_make_array_from_callback(mesh22):
  value = np.arange(24.0).reshape(4, 6)
  s = NamedSharding(mesh22, P("x", "y"))
  calls = []

  def callback(index):
    calls.append(index)
    return value[index]

  x = purejax.make_array_from_callback((4, 6), s, callback)
  assert len(calls) == 4 and x.dtype == np.float32 and x.sharding == s and x.committed
  np.testing.assert_array_equal(x, value)
  with pytest.raises(ValueError, match=r"Expected shard shape \(2, 3\) doesn't match the "
                                       r"single device array shape \(3, 6\)"):
    purejax.make_array_from_callback((4, 6), s, lambda i: np.zeros((3, 6)))
  with pytest.raises(ValueError, match="must match the dtype of the addressable shards"):
    purejax.make_array_from_callback((4, 6), s, lambda i: np.zeros((2, 3), np.int32),
                                     dtype=np.float32)


def test_make_array_from_single_device_arrays(mesh22):
  value = np.arange(24.0, dtype=np.float32).reshape(4, 6)
  s = NamedSharding(mesh22, P("x"))
  arrays = [purejax.device_put(value[i], d)
            for d, i in s.addressable_devices_indices_map(value.shape).items()]
  for order in (arrays, arrays[::-1]):   # matched by device, not position
    x = purejax.make_array_from_single_device_arrays((4, 6), s, order)
    np.testing.assert_array_equal(x, value)
    assert x.sharding == s
  with pytest.raises(ValueError, match="Expected 4 per-device arrays"):
    purejax.make_array_from_single_device_arrays((4, 6), s, arrays[:3])
  with pytest.raises(ValueError, match="must be from distinct devices, but got device IDs "
                                       r"\[0, 0, 0, 0\]"):
    purejax.make_array_from_single_device_arrays((4, 6), s, [jnp.ones((2, 6))] * 4)


def test_make_array_from_process_local_data(mesh22):
  s = NamedSharding(mesh22, P("x"))
  x = purejax.make_array_from_process_local_data(s, np.ones((4, 6)))
  assert x.sharding == s and x.shape == (4, 6)
  with pytest.raises(ValueError, match="global_shape should be None or equal to "
                                       "local_data.shape"):
    purejax.make_array_from_process_local_data(s, np.ones((4, 6)), (8, 6))


# -- jit and sharding constraints ----------------------------------------------

def test_jit_sharded_inputs(mesh22):
  value = np.arange(16.0, dtype=np.float32).reshape(4, 4)
  x = purejax.device_put(value, NamedSharding(mesh22, P("x", "y")))
  out = purejax.jit(lambda a: jnp.sin(a) @ a.T + a.sum(0))(x)
  np.testing.assert_allclose(out, np.sin(value) @ value.T + value.sum(0), rtol=1e-5)
  grad = purejax.grad(lambda a: (a * a).sum())(x)
  np.testing.assert_allclose(grad, 2 * value)


def test_jit_shardings(mesh22):
  s = NamedSharding(mesh22, P(None, "y"))
  f = purejax.jit(lambda a: a * 2, out_shardings=s)
  out = f(jnp.ones((4, 4)))
  assert out.sharding == s
  np.testing.assert_array_equal(out, np.full((4, 4), 2.0))
  g = purejax.jit(lambda a, b: (a + b, b), out_shardings=(NamedSharding(mesh22, P("x")), None))
  first, second = g(jnp.ones(4), jnp.ones(4))
  assert first.sharding.spec == P("x") and not second.committed
  h = purejax.jit(lambda a: a * 2, in_shardings=s)
  np.testing.assert_array_equal(h(purejax.device_put(jnp.ones((4, 4)), s)), 2.0)
  with pytest.raises(ValueError, match="Sharding passed to jit does not match the sharding "
                                       "on the respective arg"):
    h(purejax.device_put(jnp.ones((4, 4)), NamedSharding(mesh22, P("x"))))
  assert purejax.jit(out_shardings=s)(lambda a: a + 1)(jnp.ones((2, 2))).sharding == s


def test_with_sharding_constraint(mesh22):
  s = NamedSharding(mesh22, P("x"))
  x = jnp.arange(8.0).reshape(4, 2)
  y = lax.with_sharding_constraint(x, s)
  assert y.sharding == s
  np.testing.assert_array_equal(y, x)
  text = str(purejax.make_jaxpr(lambda a: lax.with_sharding_constraint(a * 2, s))(x))
  assert "sharding_constraint[" in text and "context_mesh=Mesh()" in text
  assert "spec=P('x',)" in text
  np.testing.assert_array_equal(
      purejax.jit(lambda a: lax.with_sharding_constraint(a * 2, s))(x), 2 * x)


# -- against real JAX --------------------------------------------------------------

_ORACLE_SCRIPT = """
import numpy as np
import {mod} as jax
import {mod}.numpy as jnp
from {mod}.sharding import Mesh, NamedSharding, PartitionSpec as P
import warnings
warnings.simplefilter("ignore")
m = Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))
print(repr(m), str(m), m.shape, jax.make_mesh((4,), ("i",)))
for spec in [P("x"), P(None, "y"), P(("y", "x")), P("y", "x"), P()]:
  s = NamedSharding(m, spec)
  x = jax.device_put(jnp.arange(32.0).reshape(4, 8), s)
  print(s, x.is_fully_replicated, s.shard_shape((4, 8)))
  for sh in x.addressable_shards:
    print(sh)
e = jax.make_mesh((2, 2), ("x", "y"))
for bad in [lambda: jax.device_put(jnp.arange(6.0), NamedSharding(m, P(("x", "y")))),
            lambda: jax.device_put(jnp.ones((5, 4)), NamedSharding(e, P("y"))),
            lambda: jax.device_put(jnp.ones((4, 6)), NamedSharding(e, P(None, ("y", "x")))),
            lambda: NamedSharding(m, P("q")),
            lambda: NamedSharding(e, P("x")).shard_shape((3,)),
            lambda: jax.make_mesh((3, 2), ("a", "b"))]:
  try:
    bad()
  except Exception as e:
    print(type(e).__name__, e)
print(jax.device_put(jnp.ones(2), jax.devices()[3]).sharding)
"""


def _run(mod):
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
             JAX_PLATFORMS="cpu", PYTHONPATH=ROOT)
  result = subprocess.run([sys.executable, "-c", _ORACLE_SCRIPT.format(mod=mod)], env=env,
                          capture_output=True, text=True, timeout=120)
  assert result.returncode == 0, result.stderr
  return result.stdout


@pytest.mark.oracle
def test_matches_jax_in_subprocess():
  pytest.importorskip("jax")
  with warnings.catch_warnings():
    ours, theirs = _run("purejax"), _run("jax")
  assert ours == theirs
