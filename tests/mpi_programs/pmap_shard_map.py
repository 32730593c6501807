"""pmap and shard_map over the devices of 2 processes, for tests/test_distributed.py.

    mpirun -n 2 python pmap_shard_map.py

Every process owns 2 devices (4 in all).  Each check compares what the
processes compute with the value a single-process run over 4 devices
gives (written out in NumPy here), then the clear errors.  Prints
"PASS <what>" per check; any other outcome raises.
"""
import numpy as np

import purejax as jax
import purejax.numpy as jnp
from purejax.sharding import Mesh, NamedSharding, PartitionSpec as P
from purejax._src.mpi_comm import ProcessError

jax.config.update("jax_num_cpu_devices", 2)
jax.distributed.initialize()
me, devs = jax.process_index(), jax.devices()
assert jax.process_count() == 2 and len(devs) == 4 and jax.local_device_count() == 2
mine = [2 * me, 2 * me + 1]   # this process's global device positions
shard_map = jax.shard_map


def passed(what):
  print(f"PASS {what}", flush=True)


# -- pmap: local data in, local results out; collectives over all 4 devices --

def f(x, y):
  i = jax.lax.axis_index("i")
  return (jax.lax.psum(x, "i"), i, jax.lax.psum(1, "i"),
          jax.lax.all_gather(x, "i"), x * y + i, jax.lax.pmax(x, "i"))


X = np.arange(12, dtype=np.float32).reshape(4, 3)   # the global data
psum_, index, size, gathered, scaled, pmax_ = jax.pmap(f, axis_name="i", in_axes=(0, None))(
    X[mine], np.float32(2))
np.testing.assert_array_equal(psum_, np.stack([X.sum(0)] * 2))
np.testing.assert_array_equal(index, mine)
np.testing.assert_array_equal(size, [4, 4])
np.testing.assert_array_equal(gathered, np.stack([X] * 2))
np.testing.assert_array_equal(scaled, X[mine] * 2 + np.array(mine)[:, None])
np.testing.assert_array_equal(pmax_, np.stack([X.max(0)] * 2))
assert psum_.dtype == np.float32 and index.dtype == np.int32 and psum_.shape == (2, 3)
assert [d.id for d in psum_.sharding.mesh.devices.flat] == mine, psum_.sharding
assert {s.device.id for s in psum_.addressable_shards} == set(mine)
passed("pmap collectives")

# out_axes None, pytree outputs, ppermute around the global ring
g = jax.pmap(lambda x: {"total": jax.lax.psum(x.sum(), "i"),
                        "right": jax.lax.ppermute(x, "i", [(k, (k + 1) % 4) for k in range(4)])},
             axis_name="i", out_axes={"total": None, "right": 0})
out = g(X[mine])
np.testing.assert_array_equal(out["total"], X.sum())
np.testing.assert_array_equal(out["right"], np.roll(X, 1, axis=0)[mine])
passed("pmap out_axes None and ppermute")

# grad inside pmap, averaged over the processes (the data-parallel step)
w = np.array([1., -1., 0.5], np.float32)
grads = jax.pmap(lambda w, x: jax.lax.pmean(jax.grad(lambda w: jnp.sum((x @ w) ** 2))(w), "i"),
                 axis_name="i", in_axes=(None, 0))(w, X[mine])
want = np.mean([2 * (X[k] @ w) * X[k] for k in range(4)], axis=0)
np.testing.assert_allclose(grads, np.stack([want] * 2), rtol=1e-6)
passed("pmap of grad with pmean")

# -- shard_map: global values passed alike by every process --------------------

mesh = Mesh(np.array(devs), ("i",))
h = shard_map(lambda x: (jax.lax.psum(x, "i"), x * 2 + jax.lax.axis_index("i")), mesh=mesh,
              in_specs=P("i"), out_specs=(P(), P("i")))
for how, fn in (("eager", h), ("jit", jax.jit(h))):
  total, blocks = fn(X)
  np.testing.assert_array_equal(total, X.reshape(4, 1, 3).sum(0))
  np.testing.assert_array_equal(blocks, X * 2 + np.arange(4)[:, None])   # gathered via MPI
  assert blocks.shape == (4, 3)
  assert how == "jit" or blocks.sharding == NamedSharding(mesh, P("i")), blocks.sharding
  passed(f"shard_map {how} over a process-spanning axis")

# 2-D mesh: "a" spans the processes, "b" stays inside each
mesh2 = Mesh(np.array(devs).reshape(2, 2), ("a", "b"))
k = shard_map(lambda x: (jax.lax.psum(x, "a"), jax.lax.psum(x, "b")), mesh=mesh2,
              in_specs=P("a", "b"), out_specs=(P(None, "b"), P("a")))
Y = np.arange(16, dtype=np.float32).reshape(4, 4)
over_a, over_b = k(Y)
blocks_ab = Y.reshape(2, 2, 2, 2).transpose(0, 2, 1, 3)   # [a, b, rows, cols]
np.testing.assert_array_equal(over_a, np.concatenate(list(blocks_ab.sum(0)), axis=1))
np.testing.assert_array_equal(over_b, np.concatenate(list(blocks_ab.sum(1)), axis=0))
passed("shard_map on a 2-D mesh")

# process-local data made global (gathered through MPI), then used by shard_map
local_rows = jax.make_array_from_process_local_data(NamedSharding(mesh, P("i")), X[mine])
assert local_rows.shape == (4, 3) and local_rows.sharding == NamedSharding(mesh, P("i"))
np.testing.assert_array_equal(local_rows, X)
np.testing.assert_array_equal(h(local_rows)[0], X.reshape(4, 1, 3).sum(0))
cols = jax.make_array_from_process_local_data(NamedSharding(mesh2, P(None, "a")), Y[:, 2 * me:][:, :2],
                                              (4, 4))
np.testing.assert_array_equal(cols, Y)
replicated = jax.make_array_from_process_local_data(NamedSharding(mesh, P()), X)
np.testing.assert_array_equal(replicated, X)
doubled = jax.make_array_from_process_local_data(NamedSharding(mesh, P("i")), X)
assert doubled.shape == (8, 3), doubled.shape   # global shape inferred: 2 processes x 4 rows
np.testing.assert_array_equal(doubled, np.concatenate([X, X]))
try:   # process 1's part has the wrong shape: both processes raise
  jax.make_array_from_process_local_data(NamedSharding(mesh, P("i")), X[: 2 + me], (4, 3))
except ValueError as e:
  assert "on process 1" in str(e) and "local_data has shape (3, 3)" in str(e), e
  passed("make_array_from_process_local_data wrong shape")
else:
  raise AssertionError("no error for process-local data of the wrong shape")
passed("make_array_from_process_local_data")

# -- clear errors ---------------------------------------------------------------

try:   # process 1 passes 1 entry per process instead of its 2 local devices
  jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(X[mine][: 2 - me])
except ValueError as e:
  assert me == 1 and "one entry per local device" in str(e), e
  passed(f"pmap wrong local size: ValueError: {e}")
except ProcessError as e:
  assert me == 0 and "process 1 of the multi-process run failed: ValueError" in str(e), e
  passed(f"pmap other process's wrong local size: ProcessError: {e}")
else:
  raise AssertionError("no error for a wrong local size")

try:   # every process wrong alike: each says so, nobody waits
  jax.pmap(lambda x: x, axis_name="i")(X[:3])
except ValueError as e:
  assert "passed a mapped axis of size 3" in str(e), e
  passed("pmap wrong local size everywhere")
else:
  raise AssertionError("no error for a wrong local size")

# still in step after the errors
np.testing.assert_array_equal(jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(X[mine]),
                              np.stack([X.sum(0)] * 2))
jax.distributed.shutdown()
passed("done")
