"""Checks the SPMD communicator across processes, for tests/test_distributed.py.

    mpirun -n 2 python collectives.py

Every process owns 2 devices.  Each device's value is a known function of
its global position, so each process can compute what a single-process run
would give and check what MPI gave.  Then the clear errors: processes that
disagree on a collective's shapes, dtypes or kind, and a process that fails.
Prints "PASS <what>" per check; any other outcome raises.
"""
import numpy as np
import ml_dtypes

import purejax as jax
from purejax._src import spmd
from purejax._src.mpi_comm import MpiCommunicator, ProcessError

jax.config.update("jax_num_cpu_devices", 2)
from mpi4py import MPI   # noqa: E402  (only to name the wrong rank below)
for bad in (dict(num_processes=3), dict(process_id=1 - MPI.COMM_WORLD.Get_rank())):
  try:
    jax.distributed.initialize(**bad)
  except ValueError as e:
    assert "disagree" in str(e), e
    print(f"PASS error initialize({bad}): {e}", flush=True)
  else:
    raise AssertionError(f"initialize({bad}) did not raise")
assert not jax.distributed.is_initialized()
jax.distributed.initialize()
me, devs = jax.process_index(), jax.devices()
assert jax.process_count() == 2 and len(devs) == 4, devs


def value(pos, dtype=np.float32, shape=(3,)):
  return (np.arange(np.prod(shape)).reshape(shape) * 10 + pos).astype(dtype)


def check(comm, names, dtype=np.float32, shape=(3,)):
  """exchange and all_sum against a threads-only run of the same grid."""
  def fn(pos):
    v = value(pos, dtype, shape)
    got = comm.exchange(pos, v, names)
    total = comm.all_sum(pos, v, names)
    return got, total, comm.axis_index(pos, names)
  outs = spmd.run(comm, fn, [()] * len(comm.local_positions()))
  ref = spmd.Communicator(comm.names, comm.sizes)
  for pos, (got, total, index) in zip(comm.local_positions(), outs):
    group = ref.group(pos, names)
    want = [value(q, dtype, shape) for q in group]
    assert len(got) == len(want) and all((g == w).all() for g, w in zip(got, want)), (pos, got)
    np.testing.assert_array_equal(total, sum(want[1:], want[0]))
    assert total.dtype == np.dtype(dtype) and total.shape == shape
    assert index == group.index(pos)
  print(f"PASS {comm.names}{comm.sizes} over {names} {np.dtype(dtype).name}{list(shape)}",
        flush=True)


one_axis = spmd.make_communicator(("i",), (4,), devs)
assert isinstance(one_axis, MpiCommunicator) and one_axis.local_positions() == [2 * me, 2 * me + 1]
check(one_axis, ("i",))
check(one_axis, ("i",), np.int32, (2, 2))
check(one_axis, ("i",), ml_dtypes.bfloat16)   # no MPI type: the pickled path
check(one_axis, ("i",), np.float32, ())
# Axis "a" spans the processes, "b" stays inside each; then the other way round.
check(spmd.make_communicator(("a", "b"), (2, 2), devs), ("a",))
check(spmd.make_communicator(("a", "b"), (2, 2), devs), ("b",))
check(spmd.make_communicator(("a", "b"), (2, 2), devs), ("b", "a"))
swapped = [devs[0], devs[2], devs[1], devs[3]]
check(spmd.make_communicator(("a", "b"), (2, 2), swapped), ("a",))
check(spmd.make_communicator(("a", "b"), (2, 2), swapped), ("b",))
# A run over this process's devices only needs no MPI.
assert type(spmd.make_communicator(("i",), (2,), jax.local_devices())) is spmd.Communicator


def expect_error(what, fn, cls=ProcessError, text=""):
  comm = spmd.make_communicator(("i",), (4,), devs)
  try:
    spmd.run(comm, fn(comm), [()] * 2)
  except cls as e:
    assert text in str(e), str(e)
    print(f"PASS error {what}: {type(e).__name__}: {e}".replace("\n", " | "), flush=True)
  else:
    raise AssertionError(f"no error for {what}")


expect_error("shape", lambda c: lambda pos: c.all_sum(pos, np.zeros(3 + me, np.float32), ("i",)),
             text="disagree")
expect_error("dtype", lambda c: lambda pos: c.exchange(
    pos, np.zeros(3, [np.float32, np.int32][me]), ("i",)), text="disagree")
expect_error("kind", lambda c: lambda pos: (c.all_sum if me else c.exchange)(
    pos, np.zeros(3, np.float32), ("i",)), text="disagree")
expect_error("finished early", lambda c: lambda pos: me and c.all_sum(
    pos, np.zeros(3, np.float32), ("i",)), text="finished the run")


def fails_on_1(comm):
  def fn(pos):
    if me == 1:
      raise ValueError("boom on process 1")
    return comm.all_sum(pos, np.zeros(3, np.float32), ("i",))
  return fn


if me == 0:
  expect_error("remote failure", fails_on_1, ProcessError,
               "process 1 of the multi-process run failed: ValueError: boom on process 1")
else:
  expect_error("local failure", fails_on_1, ValueError, "boom on process 1")
check(one_axis, ("i",))   # the processes are still in step after the errors
jax.distributed.shutdown()
print("PASS done", flush=True)
