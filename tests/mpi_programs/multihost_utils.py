"""jax.experimental.multihost_utils over 2 processes, for tests/test_multihost_utils.py.

    mpirun -n 2 python multihost_utils.py

Every process owns 2 devices (4 in all).  Each process passes values that
depend on its index, so each can compute what the other passed and check
the collective's result against NumPy.  Prints "PASS <what>" per check;
any other outcome raises.
"""
import numpy as np
import ml_dtypes

import purejax as jax
from purejax.experimental import multihost_utils as mh
from purejax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.config.update("jax_num_cpu_devices", 2)
jax.distributed.initialize()
me = jax.process_index()
assert jax.process_count() == 2 and jax.device_count() == 4


def passed(what):
  print(f"PASS {what}", flush=True)


def local(p):
  """What process ``p`` passes."""
  return {"f": np.arange(6, dtype=np.float32).reshape(2, 3) + 10 * p,
          "i": np.int32(p + 1),
          "b": np.array([p == 0, True]),
          "h": (np.arange(3) * (p + 1)).astype(ml_dtypes.bfloat16)}


mine = local(me)
stacked = mh.process_allgather(mine)
for k in mine:
  want = np.stack([local(0)[k], local(1)[k]])
  assert stacked[k].dtype == want.dtype and stacked[k].shape == want.shape, (k, stacked[k])
  np.testing.assert_array_equal(stacked[k], want)
passed("process_allgather stacked")

tiled = mh.process_allgather(mine, tiled=True)
np.testing.assert_array_equal(tiled["f"], np.concatenate([local(0)["f"], local(1)["f"]]))
np.testing.assert_array_equal(tiled["i"], np.array([1, 2], np.int32))   # scalars stack
passed("process_allgather tiled")

# int64 is canonicalized (no x64), as on JAX's devices.
assert mh.process_allgather(np.int64(me)).dtype == np.int32
passed("process_allgather canonical dtype")

got = mh.broadcast_one_to_all(mine)
for k in mine:
  np.testing.assert_array_equal(got[k], local(0)[k])
  assert got[k].dtype == local(0)[k].dtype
passed("broadcast_one_to_all from process 0")
got = mh.broadcast_one_to_all(mine, is_source=me == 1)
np.testing.assert_array_equal(got["f"], local(1)["f"])
passed("broadcast_one_to_all from process 1")

mh.sync_global_devices("step 1")
passed("sync_global_devices barrier")
try:
  mh.sync_global_devices(f"name of process {me}")
except AssertionError as e:
  assert "sync_global_devices name mismatch" in str(e), e
  passed("sync_global_devices mismatch: AssertionError")
else:
  raise AssertionError("different barrier names did not raise")

mh.assert_equal({"x": np.arange(3)})
try:
  mh.assert_equal(np.float32(me), "values differ")
except AssertionError as e:
  assert str(e).startswith("values differ."), e
  passed("assert_equal mismatch: AssertionError")
else:
  raise AssertionError("assert_equal of different values did not raise")

try:
  mh.process_allgather(np.zeros(me + 1))
except ValueError as e:
  assert "same shapes" in str(e), e
  passed("process_allgather shape mismatch: ValueError")
else:
  raise AssertionError("different shapes did not raise")

# host-local <-> global: process p's 2 rows are rows 2p, 2p+1 of the global array.
mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("proc", "dev"))
rows = np.arange(8, dtype=np.float32).reshape(2, 4) + 100 * me
g = mh.host_local_array_to_global_array(rows, mesh, P("proc"))
assert g.shape == (4, 4) and g.sharding == NamedSharding(mesh, P("proc")), (g.shape, g.sharding)
want = np.concatenate([np.arange(8, dtype=np.float32).reshape(2, 4) + 100 * p for p in (0, 1)])
np.testing.assert_array_equal(np.asarray(g), want)
assert mh.process_allgather(g, tiled=True).shape == (4, 4)
passed("host_local_array_to_global_array")

back = mh.global_array_to_host_local_array(g, mesh, P("proc"))
np.testing.assert_array_equal(np.asarray(back), rows)
assert back.shape == (2, 4) and {d.process_index for d in back.sharding.device_set} == {me}
passed("global_array_to_host_local_array")

assert mh.reached_preemption_sync_point(5) is False
passed("done")
