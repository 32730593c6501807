"""jax.experimental.multihost_utils: single-process semantics against real
JAX, and the collectives across 2 MPI processes (tests/mpi_programs/)."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import purejax
from purejax.experimental import multihost_utils as mh
from purejax.sharding import Mesh, NamedSharding, PartitionSpec as P
from conftest import oracle

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tree(j):
  """The same tree for purejax or JAX (``j``): Arrays, NumPy values, scalars."""
  return {"f32": j.numpy.arange(3, dtype=j.numpy.float32), "i64": np.int64(3), "float": 2.5,
          "int": 7, "bool": j.numpy.array(True), "np": np.arange(4).reshape(2, 2),
          "bf16": j.numpy.ones(2, j.numpy.bfloat16)}


def _describe(tree):
  return {k: (type(v).__name__, str(v.dtype), v.shape, np.asarray(v, np.float64).tolist())
          for k, v in tree.items()}


@pytest.mark.parametrize("tiled", [False, True])
def test_process_allgather_single_process_matches_jax(tiled):
  jax = oracle()
  from jax.experimental import multihost_utils as jmh
  got = mh.process_allgather(_tree(purejax), tiled=tiled)
  assert _describe(got) == _describe(jmh.process_allgather(_tree(jax), tiled=tiled))
  assert got["f32"].shape == ((3,) if tiled else (1, 3))


@pytest.mark.parametrize("is_source", [None, True, False])
def test_broadcast_one_to_all_single_process_matches_jax(is_source):
  jax = oracle()
  from jax.experimental import multihost_utils as jmh
  got = mh.broadcast_one_to_all(_tree(purejax), is_source=is_source)
  assert all(type(v) is np.ndarray for v in got.values())
  assert _describe(got) == _describe(jmh.broadcast_one_to_all(_tree(jax), is_source=is_source))


def test_assert_equal_and_barrier_single_process_match_jax():
  oracle()
  from jax.experimental import multihost_utils as jmh
  for m in (mh, jmh):
    m.sync_global_devices("step")
    m.assert_equal({"a": np.arange(3), "b": 1.5})
    assert m.reached_preemption_sync_point(10) is False
  # == decides: NaN is never equal to itself, in JAX too.
  messages = []
  for m in (mh, jmh):
    with pytest.raises(AssertionError) as info:
      m.assert_equal({"x": np.nan}, "nan check")
    messages.append(str(info.value))
  assert messages[0] == messages[1] == "nan check. Expected: {'x': array(nan)}; got: {'x': nan}."


def _mesh(j):
  return j.sharding.Mesh(np.array(j.devices()[:1]), ("x",))


def _layout(tree):
  return {k: (type(v).__name__, str(v.dtype), v.shape, str(v.sharding)) for k, v in tree.items()}


def test_host_local_to_global_and_back_single_process_match_jax():
  jax = oracle()
  from jax.experimental import multihost_utils as jmh

  def run(j, m):
    mesh = _mesh(j)
    spec = j.sharding.PartitionSpec
    g = m.host_local_array_to_global_array(
        {"u": np.arange(4.0), "v": j.numpy.arange(2), "s": np.int64(1)}, mesh,
        {"u": spec("x"), "v": spec("x"), "s": spec()})
    back = m.global_array_to_host_local_array({"u": g["u"], "n": np.arange(4)}, mesh, spec("x"))
    return _layout(g), _layout(back), back["u"] is g["u"]

  assert run(purejax, mh) == run(jax, jmh)
  assert run(purejax, mh)[0]["u"][:3] == ("ArrayImpl", "float32", (4,))


def test_pspec_errors_match_jax():
  jax = oracle()
  from jax.experimental import multihost_utils as jmh
  for m, j in ((mh, purejax), (jmh, jax)):
    with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs argument"):
      m.host_local_array_to_global_array([np.arange(2.0)], _mesh(j), None)
    with pytest.raises(ValueError, match="`None` is not a valid input"):
      m.global_array_to_host_local_array(np.arange(2.0), _mesh(j), None)
  with pytest.raises(ValueError, match="input pspecs"):
    mh.host_local_array_to_global_array([np.arange(2.0), np.arange(2.0)], _mesh(purejax),
                                        [P("x")])


def test_conversions_under_transformations_single_process():
  """In one process the local and global values are the same: under jit,
  grad and vmap the conversions are the identity, as in JAX."""
  jax = oracle()
  from jax.experimental import multihost_utils as jmh
  x = np.arange(4.0, dtype=np.float32)
  for j, m in ((purejax, mh), (jax, jmh)):
    mesh = _mesh(j)
    spec = j.sharding.PartitionSpec
    f = j.jit(lambda v: m.host_local_array_to_global_array(v, mesh, spec("x")) * 2)
    np.testing.assert_array_equal(f(x), x * 2)
    g = j.grad(lambda v: (m.host_local_array_to_global_array(v, mesh, spec()) ** 2).sum())
    np.testing.assert_array_equal(g(x), 2 * x)
    h = j.vmap(lambda v: m.global_array_to_host_local_array(v, mesh, spec()) + 1)
    np.testing.assert_array_equal(h(x), x + 1)


def test_multihost_utils_across_two_processes():
  """process_allgather, broadcast_one_to_all, sync_global_devices,
  assert_equal and the host-local/global conversions over 2 MPI processes
  of 2 devices each (the program checks every result against NumPy)."""
  from tests.test_distributed import _mpirun, _run
  out = _run(_mpirun() + ["-n", "2", sys.executable,
                          os.path.join(ROOT, "tests", "mpi_programs", "multihost_utils.py")])
  for what in ("process_allgather stacked", "process_allgather tiled",
               "process_allgather canonical dtype", "broadcast_one_to_all from process 0",
               "broadcast_one_to_all from process 1", "sync_global_devices barrier",
               "sync_global_devices mismatch: AssertionError",
               "assert_equal mismatch: AssertionError",
               "process_allgather shape mismatch: ValueError",
               "host_local_array_to_global_array", "global_array_to_host_local_array", "done"):
    # The processes share stdout: their lines may interleave.
    assert out.count(f"PASS {what}") == 2, (what, out)


def test_bfloat16_values_survive_a_single_process_gather():
  x = np.array([1.5, -2.25], ml_dtypes.bfloat16)
  out = mh.process_allgather(purejax.numpy.asarray(x))
  assert out.dtype == ml_dtypes.bfloat16 and out.tolist() == [[1.5, -2.25]]


def test_global_array_keeps_its_named_sharding(cpu_devices):
  devices = cpu_devices(2)
  mesh = Mesh(np.array(devices), ("x",))
  g = mh.host_local_array_to_global_array(np.arange(4.0), mesh, P("x"))
  assert g.sharding == NamedSharding(mesh, P("x"))
  assert [s.index for s in g.addressable_shards] == [(slice(0, 2),), (slice(2, 4),)]
