"""The public modules libraries such as orbax import: jax.monitoring,
jax.experimental.{mesh_utils, pjit, compilation_cache, colocated_python,
array_serialization}, Device.client / memories, and device_put of a
Format; against real JAX where it runs in this process."""
import os
import warnings

import numpy as np
import pytest

import purejax
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config
from purejax.experimental import mesh_utils
from conftest import oracle
from jax_devices_oracle import jax_stdout


# -- jax.monitoring ----------------------------------------------------------------------

def _monitoring_trace(monitoring):
  """What listeners of each kind receive, in order, for a fixed script."""
  seen = []
  listeners = [
      (monitoring.register_event_listener, monitoring.unregister_event_listener,
       lambda e, **kw: seen.append(("event", e, kw))),
      (monitoring.register_event_duration_secs_listener,
       monitoring.unregister_event_duration_listener,
       lambda e, d, **kw: seen.append(("duration", e, d, kw))),
      (monitoring.register_event_time_span_listener,
       monitoring.unregister_event_time_span_listener,
       lambda e, s, t, **kw: seen.append(("span", e, s, t, kw))),
      (monitoring.register_scalar_listener, monitoring.unregister_scalar_listener,
       lambda e, v, **kw: seen.append(("scalar", e, v, kw))),
  ]
  for register, _, callback in listeners:
    register(callback)
  monitoring.register_event_listener(lambda e, **kw: seen.append(("second", e)))
  monitoring.record_event("/test/a", step=1, kind="x")
  monitoring.record_event_duration_secs("/test/b", 0.5, step=2)
  monitoring.record_event_time_span("/test/c", 1.0, 3.0)
  monitoring.record_scalar("/test/d", 7, tag="t")
  for _, unregister, callback in listeners:
    unregister(callback)
    with pytest.raises(AssertionError):
      unregister(callback)
  monitoring.record_event("/test/e")
  monitoring.record_event_duration_secs("/test/f", 1.0)
  return seen


def test_monitoring_listeners_match_jax():
  jax = oracle()
  import jax.monitoring
  try:
    assert _monitoring_trace(purejax.monitoring) == _monitoring_trace(jax.monitoring)
  finally:
    purejax.monitoring.clear_event_listeners()
    jax.monitoring.clear_event_listeners()
  seen = []
  purejax.monitoring.register_event_listener(lambda e, **kw: seen.append(e))
  purejax.monitoring.clear_event_listeners()
  purejax.monitoring.record_event("/test/cleared")
  assert seen == []
  assert purejax.monitoring.record_event is purejax.monitoring.__dict__["record_event"]


# -- mesh_utils --------------------------------------------------------------------------

def test_create_device_mesh_layouts(cpu_devices):
  devices = cpu_devices(8)
  mesh = mesh_utils.create_device_mesh((2, 4))
  assert mesh.shape == (2, 4) and mesh.dtype == object
  assert [d.id for d in mesh.flat] == list(range(8))
  assert [d.id for d in mesh_utils.create_device_mesh([4, 2], devices[::-1]).flat] == \
      list(range(7, -1, -1))
  hybrid = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), devices, process_is_granule=True)
  assert [d.id for d in hybrid.flat] == list(range(8))
  with pytest.raises(ValueError, match=r"Number of slices 1 must equal the product of "
                                       r"dcn_mesh_shape \(1, 2\)"):
    mesh_utils.create_hybrid_device_mesh((2, 2), (1, 2), devices, process_is_granule=True)
  mesh = purejax.sharding.Mesh(mesh_utils.create_device_mesh((2, 4)), ("a", "b"))
  assert mesh.shape == {"a": 2, "b": 4}


def test_create_device_mesh_matches_jax_with_4_devices(cpu_devices):
  cpu_devices(4)
  code = ("from jax.experimental import mesh_utils as m\n"
          "print([d.id for d in m.create_device_mesh((2, 2)).flat],"
          " m.create_hybrid_device_mesh((2, 2), (1, 1), process_is_granule=True).shape)")
  ours = ([d.id for d in mesh_utils.create_device_mesh((2, 2)).flat],
          mesh_utils.create_hybrid_device_mesh((2, 2), (1, 1), process_is_granule=True).shape)
  assert str(ours[0]) + " " + str(ours[1]) == jax_stdout(code, 4)


def test_mesh_utils_errors_match_jax():
  oracle()
  from jax.experimental import mesh_utils as jmesh_utils
  for shape in ((3,), ("a",)):
    messages = []
    for m in (mesh_utils, jmesh_utils):
      with pytest.raises(ValueError) as info:
        m.create_device_mesh(shape)
      messages.append(str(info.value))
    assert messages[0] == messages[1]
  messages = []
  for m in (mesh_utils, jmesh_utils):
    with pytest.raises(ValueError) as info:
      m.create_hybrid_device_mesh((1,), (1,))   # CPU devices have no slice_index
    messages.append(str(info.value))
  assert messages[0] == messages[1]
  assert "does not have attribute slice_index" in messages[0]


# -- pjit --------------------------------------------------------------------------------

def _pjit_outcomes(j):
  from importlib import import_module
  module = import_module(j.__name__ + ".experimental.pjit")
  with pytest.warns(DeprecationWarning) as warned:
    pjit = module.pjit
  mesh = j.sharding.Mesh(np.array(j.devices()[:1]), ("x",))
  spec = j.sharding.PartitionSpec
  x = np.arange(4.0, dtype=np.float32)
  f = pjit(lambda v: v * 2, spec("x"), spec())   # shardings positional
  with pytest.raises(RuntimeError) as no_mesh:
    f(x)
  with pytest.raises(RuntimeError) as set_mesh_only:
    with j.set_mesh(mesh):   # pjit reads the `with mesh:` mesh, not set_mesh's
      pjit(lambda v: v * 2, in_shardings=spec("x"))(x)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)   # `with mesh:` is deprecated
    with mesh:
      y = f(x)
      z = pjit(lambda v: v + 1)(x)   # unspecified: replicated on the mesh
  j_jit = j.jit(lambda v: v * 2, in_shardings=spec("x"))
  with pytest.raises(RuntimeError) as jit_no_mesh:
    j_jit(x)
  with j.set_mesh(mesh):
    w = j_jit(x)
  return ([str(m.message) for m in warned], str(no_mesh.value), str(set_mesh_only.value),
          np.asarray(y).tolist(), str(y.sharding), np.asarray(z).tolist(), str(z.sharding),
          str(jit_no_mesh.value), np.asarray(w).tolist())


def test_pjit_matches_jax():
  jax = oracle()
  ours = _pjit_outcomes(purejax)
  assert ours == _pjit_outcomes(jax)
  assert "pjit requires a non-empty mesh" in ours[1]


# -- compilation_cache -------------------------------------------------------------------

def test_compilation_cache_dir_holds_the_compiled_kernels(tmp_path):
  if not toolchain.compiler_available():
    pytest.skip("no C compiler")
  from purejax.experimental.compilation_cache import compilation_cache as cc
  assert purejax.experimental.compilation_cache.compilation_cache is cc
  old = config.purejax_cache_dir
  try:
    cc.set_cache_dir(tmp_path / "kernels")   # a path-like, as JAX takes
    assert config.purejax_cache_dir == str(tmp_path / "kernels")
    f = purejax.jit(lambda x: purejax.numpy.cos(x) * 2.75 - 0.375)
    with config.override("purejax_compile_sync", True):
      y = f(np.arange(64, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(y), np.cos(np.arange(64)) * 2.75 - 0.375,
                               rtol=1e-6, atol=1e-6)
    assert [p for p in os.listdir(tmp_path / "kernels") if p.endswith(".so")]
    cc.reset_cache()   # nothing to drop: the kernels stay on disk
    assert [p for p in os.listdir(tmp_path / "kernels") if p.endswith(".so")]
  finally:
    config.update("purejax_cache_dir", old)


def test_compilation_cache_names_match_jax():
  oracle()
  from jax.experimental.compilation_cache import compilation_cache as jcc
  from purejax.experimental.compilation_cache import compilation_cache as cc
  public = lambda m: sorted(n for n in dir(m) if not n.startswith("_"))
  assert public(cc) == public(jcc) == ["reset_cache", "set_cache_dir"]


# -- colocated_python --------------------------------------------------------------------

def test_colocated_python_runs_in_process_as_jax():
  jax = oracle()
  from jax.experimental import colocated_python as jcp
  from purejax.experimental import colocated_python as cp

  def outcome(j, m):
    double = m.colocated_python(lambda x: x * 2)
    y = double(j.numpy.arange(3.0))
    ones = m.colocated_python(lambda: j.numpy.ones(2))
    with pytest.raises(ValueError) as no_devices:
      ones()
    z = ones.specialize(devices=j.devices())()
    with pytest.raises(ValueError) as not_array:
      m.colocated_python(lambda x: 1)(j.numpy.arange(2.0))
    return (np.asarray(y).tolist(), str(y.dtype), str(no_devices.value), np.asarray(z).tolist(),
            str(not_array.value), [d.id for d in m.colocated_cpu_devices(j.devices())])

  assert outcome(purejax, cp) == outcome(jax, jcp)
  mesh = purejax.sharding.Mesh(np.array(purejax.devices()), ("x",))
  assert cp.colocated_cpu_devices(mesh) == mesh
  with pytest.raises(NotImplementedError, match="colocated_python_class"):
    cp.colocated_python_class(object)


# -- what orbax reads of devices, shardings and modules ----------------------------------

def test_device_client_and_memories_match_jax():
  jax = oracle()

  def outcome(j):
    d = j.devices()[0]
    kinds = [m.kind for m in d.addressable_memories()]
    with pytest.raises(Exception) as bad:
      d.memory("bogus")
    return (d.client.platform, kinds, d.default_memory().kind, d.memory("pinned_host").kind,
            d.memory("pinned_host") == d.memory("pinned_host"),
            d.memory("device").addressable_by_devices() == [d], str(bad.value),
            type(bad.value).__name__, d.client.process_index(), d.client.device_count())

  assert outcome(purejax) == outcome(jax)
  d = purejax.devices()[0]
  assert d.client is purejax.devices()[0].client and d.client.runtime_type == "purejax"
  sharding = purejax.sharding.SingleDeviceSharding(d)
  assert sharding._addressable_device_assignment == (d,)


def test_device_put_takes_a_format():
  jax = oracle()
  from jax.experimental.layout import Format as JFormat
  from purejax.experimental.layout import Format
  for j, F in ((purejax, Format), (jax, JFormat)):
    s = j.sharding.SingleDeviceSharding(j.devices()[0], memory_kind="pinned_host")
    y = j.device_put(np.arange(3.0, dtype=np.float32), F(None, s))
    assert str(y.sharding) == str(s) and np.asarray(y + 1).tolist() == [1.0, 2.0, 3.0]


def test_modules_for_code_paths_purejax_never_takes():
  from purejax.experimental.array_serialization import serialization
  from purejax.extend.ifrt_programs import ifrt_programs
  from purejax.interpreters import pxla
  with pytest.raises(TypeError):
    serialization.GlobalAsyncCheckpointManagerBase()   # abstract
  with pytest.raises(AttributeError, match="GlobalAsyncCheckpointManagerBase"):
    serialization.async_serialize
  with pytest.raises(AttributeError, match="no XLA executables"):
    pxla.global_avals_to_results_handler
  with pytest.raises(NotImplementedError, match="no IFRT runtime"):
    ifrt_programs.make_plugin_program("x")
