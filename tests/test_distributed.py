"""Multi-process SPMD over MPI: purejax.distributed and the MPI communicator.

The multi-process tests launch ``mpirun -n 2`` on the programs in
tests/mpi_programs/ and skip, saying why, where Open MPI or mpi4py is
missing.  The rest checks ``initialize``'s clear errors in this process.
"""
import functools
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import purejax as jax
from purejax._src import distributed as dist_impl
from purejax._src import spmd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "mpi_programs")


@functools.lru_cache(maxsize=None)
def _mpi_library_problem():
  """Why mpi4py cannot be used here (None when it can).  mpi4py 4 imports
  without an MPI library and fails at first use, so a child process loads
  the library for real."""
  if importlib.util.find_spec("mpi4py") is None:
    return 'MPI tests need mpi4py: pip install "purejax[mpi]"'
  code = "from mpi4py import MPI; print(MPI.Get_library_version())"
  try:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=_env(), cwd=ROOT)
  except subprocess.TimeoutExpired:
    return "MPI tests skipped: loading the MPI library took over 60 s"
  if out.returncode != 0:
    last = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
    return ("MPI tests need an MPI library that mpi4py can load "
            f"(apt-get install openmpi-bin libopenmpi-dev): {last}")
  return None


def _skip_without_mpi_library():
  problem = _mpi_library_problem()
  if problem:
    pytest.skip(problem)


def _mpirun():
  """The mpirun command line, or a pytest skip saying what is missing."""
  mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
  if mpirun is None:
    pytest.skip("MPI tests need mpirun: apt-get install openmpi-bin libopenmpi-dev")
  _skip_without_mpi_library()
  version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
  # Open MPI refuses root without these, and 2 processes may exceed the cores.
  return [mpirun, "--oversubscribe"] if "Open MPI" in version else [mpirun]


def _env():
  env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
             PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  env.pop("XLA_FLAGS", None)   # the programs set their device counts themselves
  return env


def _run(cmd):
  try:
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env(), cwd=ROOT)
  except subprocess.TimeoutExpired as e:
    pytest.fail(f"{cmd} did not finish in 120 s:\n{e.stdout}\n{e.stderr}")
  assert out.returncode == 0, f"{cmd} failed:\n{out.stdout}\n{out.stderr[-4000:]}"
  return out.stdout


def _dp_sgd(tmp_path, mode, processes, local):
  """Runs tests/mpi_programs/dp_sgd.py; returns each process's results."""
  prefix = str(tmp_path / f"{mode}_{processes}x{local}_")
  cmd = [sys.executable, os.path.join(PROGRAMS, "dp_sgd.py"), mode, str(local), prefix]
  _run((_mpirun() + ["-n", str(processes)] if processes > 1 else []) + cmd)
  return [dict(np.load(f"{prefix}{p}.npz")) for p in range(processes)]


def _numpy_sgd(steps=20, batch=64, dim=8, lr=0.1):
  """The same training in float64 NumPy (full-batch gradient descent)."""
  rng = np.random.default_rng(0)
  X = rng.normal(size=(batch, dim)).astype(np.float32).astype(np.float64)
  y = (X @ rng.normal(size=dim) + 0.5 + 0.1 * rng.normal(size=batch)).astype(np.float32)
  w, b = np.zeros(dim), 0.0
  for _ in range(steps):
    r = X @ w + b - y
    w, b = w - lr * 2 * X.T @ r / batch, b - lr * 2 * r.mean()
  return w, b


@pytest.mark.parametrize("local", [1, 2])
def test_dp_sgd_two_processes_matches_one(tmp_path, local):
  """2 processes x ``local`` devices train as 1 process with all the devices."""
  _mpirun()
  procs = _dp_sgd(tmp_path, "spmd", 2, local)
  single = _dp_sgd(tmp_path, "spmd", 1, 2 * local)[0]
  for name in ("w", "b", "losses"):
    np.testing.assert_array_equal(procs[0][name], procs[1][name])   # replicas agree exactly
    assert procs[0][name].dtype == np.float32
    np.testing.assert_allclose(procs[0][name], single[name], rtol=2e-6, atol=1e-7)
  w, b = _numpy_sgd()
  np.testing.assert_allclose(single["w"], w, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(single["b"], b, rtol=1e-4, atol=1e-5)
  assert single["losses"][-1] < 0.1 * single["losses"][0]


@pytest.mark.parametrize("local", [1, 2])
def test_dp_sgd_pmap_two_processes(tmp_path, local):
  """The same training written with pmap and lax.pmean over the global
  axis: each process passes its local shards, as in JAX multi-process pmap."""
  _mpirun()
  procs = _dp_sgd(tmp_path, "pmap", 2, local)
  single = _dp_sgd(tmp_path, "pmap", 1, 2 * local)[0]
  for name in ("w", "b", "losses"):
    np.testing.assert_array_equal(procs[0][name], procs[1][name])
    np.testing.assert_allclose(procs[0][name], single[name], rtol=2e-6, atol=1e-7)


def test_pmap_and_shard_map_across_processes():
  """pmap on local data and shard_map on global values over 2 processes x 2
  devices against the single-process values (the program checks), and the
  clear errors: a process whose local mapped size is wrong raises
  ValueError, the other ProcessError, and both go on in step."""
  out = _run(_mpirun() + ["-n", "2", sys.executable,
                          os.path.join(PROGRAMS, "pmap_shard_map.py")])
  for what in ("pmap collectives", "pmap out_axes None and ppermute", "pmap of grad with pmean",
               "shard_map eager over a process-spanning axis",
               "shard_map jit over a process-spanning axis", "shard_map on a 2-D mesh",
               "make_array_from_process_local_data wrong shape",
               "pmap wrong local size everywhere", "done"):
    assert out.count(f"PASS {what}") == 2, (what, out)
  assert out.count("PASS make_array_from_process_local_data") == 4, out   # (and wrong shape)
  assert out.count("PASS pmap wrong local size: ValueError: pmap across 2 processes") == 1, out
  assert "passed a mapped axis of size 1 while 2 of the pmap's 4 devices are local" in out, out
  assert out.count("PASS pmap other process's wrong local size: ProcessError: process 1") == 1


def test_collectives_and_errors_across_processes():
  """exchange/all_sum/axis_index over grids whose axes do or do not span
  the processes, against a threads-only run; disagreeing or failing
  processes raise a clear error on every process (the program checks)."""
  out = _run(_mpirun() + ["-n", "2", sys.executable, os.path.join(PROGRAMS, "collectives.py")])
  # The two processes share stdout: their lines may interleave, so count
  # occurrences in the whole text rather than lines.
  assert out.count("PASS done") == 2, out
  assert out.count("PASS error initialize(") == 4, out
  for what in ("shape", "dtype", "kind", "finished early"):
    assert out.count(f"error {what}: ProcessError") == 2, out
  assert "PASS error remote failure: ProcessError: process 1" in out, out
  assert "PASS error local failure: ValueError: boom on process 1" in out, out
  assert out.count("over ('i',) bfloat16[3]") == 2, out


# --- in this process: no MPI launch -----------------------------------------

@pytest.fixture
def fresh_state():
  assert not jax.distributed.is_initialized()
  yield
  jax.distributed.shutdown()


def test_initialize_single_process(fresh_state):
  before = jax.devices()
  jax.distributed.initialize()
  assert jax.distributed.is_initialized()
  assert jax.process_count() == 1 and jax.process_index() == 0
  assert jax.devices() == before and jax.local_devices() == before
  with pytest.raises(RuntimeError, match="should only be called once"):
    jax.distributed.initialize()
  jax.distributed.shutdown()
  assert not jax.distributed.is_initialized()


def test_initialize_argument_errors(fresh_state):
  with pytest.raises(ValueError, match="process_id < num_processes"):
    jax.distributed.initialize(num_processes=2, process_id=2)
  with pytest.raises(TypeError, match="process_id must be a nonnegative int"):
    jax.distributed.initialize(process_id="0")
  with pytest.raises(TypeError, match="num_processes must be a positive int"):
    jax.distributed.initialize(num_processes=2.0)
  assert not jax.distributed.is_initialized()


@pytest.mark.parametrize("launched", [False, True])
def test_initialize_without_mpi4py(fresh_state, monkeypatch, launched):
  """No mpi4py: a clear RuntimeError that says how to install it, both for
  several processes asked for and for a process started by mpirun."""
  monkeypatch.setitem(sys.modules, "mpi4py", None)   # makes the import fail
  for var in dist_impl._LAUNCH_VARS:
    monkeypatch.delenv(var, raising=False)
  if launched:
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "2")
  with pytest.raises(RuntimeError, match=r"mpi4py.*pip install mpi4py"):
    jax.distributed.initialize(num_processes=None if launched else 2)
  assert not jax.distributed.is_initialized()


def test_run_over_other_processes_devices_needs_initialize():
  other = jax.Device(7)
  other.process_index = 1   # a device of process 1, as initialize would make it
  with pytest.raises(RuntimeError, match=r"distributed.initialize\(\) first"):
    spmd.make_communicator(("i",), (2,), [jax.devices()[0], other])
  assert type(spmd.make_communicator(("i",), (1,), jax.devices()[:1])) is spmd.Communicator


class _FakeMpi:
  """Process 0's view of a 2-process MPI communicator whose process 1 says
  ``other``: its Allreduce(MAX) and allgather combine the two."""

  def __init__(self, other):
    self.other, self.gathered = other, 0

  def Allreduce(self, _inplace, buf, op):
    from purejax._src import mpi_comm
    digest = mpi_comm._digest(self.other)
    np.maximum(buf, np.array([digest, -digest], np.int64), out=buf)

  def allgather(self, value):
    self.gathered += 1
    return [value, self.other]


def test_agreement_is_one_digest_unless_processes_differ():
  """Processes that agree exchange only a digest; otherwise they gather what
  each said (to name the difference)."""
  _skip_without_mpi_library()
  from purejax._src import mpi_comm
  what = ("psum", ("i",), ("float32[3]",))
  mpi = _FakeMpi(("psum", ("i",), ("float32[3]",)))
  assert mpi_comm._compare(mpi, what) is None and mpi.gathered == 0
  for other in [("psum", ("i",), ("float32[4]",)), ("end",), ("failed", "ValueError: x")]:
    mpi = _FakeMpi(other)
    assert mpi_comm._compare(mpi, what) == [what, other] and mpi.gathered == 1
  # The same in every process (Python's hash of a str is not).
  code = ("from purejax._src import mpi_comm; "
          "print(mpi_comm._digest(('psum', ('i',), ('float32[3]',))))")
  seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
  run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, PYTHONHASHSEED=seed))
  assert int(run.stdout) == mpi_comm._digest(what), run.stderr
  assert 0 <= mpi_comm._digest(what) < 2 ** 62
