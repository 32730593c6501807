"""Multi-process runs: ``initialize`` joins the processes of an MPI launch
(``mpirun -n P python prog.py``) so that the devices of all of them form
one global device list.

Unlike JAX, which runs its own coordination service at
``coordinator_address``, purejax uses MPI (through mpi4py), the usual
engine for SPMD programs on clusters: the process count and index come
from the MPI launch, and the collectives of a pmap whose devices span
processes travel through MPI (purejax/_src/mpi_comm.py).

Each process owns ``L`` local CPU devices (``jax_num_cpu_devices`` or
``XLA_FLAGS``, default 1, the same in every process); process ``p``'s
devices have the global ids ``p*L .. p*L+L-1``.
"""
import os

from purejax._src import devices as _devices

_INSTALL = ('mpi4py is needed for multi-process purejax: install it with '
            '`pip install mpi4py` (or `pip install "purejax[mpi]"`), next to an MPI library '
            'such as Open MPI (`apt-get install openmpi-bin libopenmpi-dev`).')

# Environment variables that MPI launchers set in the processes they start.
_LAUNCH_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


class _State:
  """This process's place in a multi-process run (None fields: not joined)."""
  process_id = 0
  num_processes = 1
  local_count = 1
  comm = None        # purejax's own MPI communicator (a duplicate of COMM_WORLD)
  # JAX's coordination-service client and preemption manager: purejax has
  # neither (MPI coordinates the processes); libraries (orbax) read them.
  client = None
  preemption_sync_manager = None
  initialized = False


global_state = _State()


def launched_by_mpi():
  """Whether an MPI launcher (mpirun, mpiexec, srun with PMI) started us."""
  return any(v in os.environ for v in _LAUNCH_VARS)


def _mpi():
  try:
    from mpi4py import MPI
  except ImportError as e:
    raise RuntimeError(_INSTALL) from e
  return MPI


def _check_int(name, value, what):
  if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
    raise TypeError(f"{name} must be a {what} int. Got {name}={value!r} of type {type(value)}.")


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None, initialization_timeout=300,
               heartbeat_timeout_seconds=100, shutdown_timeout_seconds=300,
               coordinator_bind_address=None, slice_index=None, partition_index=None):
  """Joins this process to a multi-process run.

  Under an MPI launch the arguments may be omitted: the process count and
  index come from MPI (given ones must agree with it, else ValueError).
  Outside an MPI launch a single process (``num_processes`` None or 1) is
  fine and needs no MPI.  ``coordinator_address`` and the timeout and
  cluster arguments are accepted for JAX compatibility and unused: MPI does
  the coordination.  ``local_device_ids``, as in JAX on CPU, does not change
  the local devices (their count comes from ``jax_num_cpu_devices`` or
  ``XLA_FLAGS``).
  """
  if global_state.initialized:
    raise RuntimeError("distributed.initialize should only be called once.")
  _check_int("process_id", process_id, "nonnegative")
  _check_int("num_processes", num_processes, "positive")
  if num_processes is not None and process_id is not None and not 0 <= process_id < num_processes:
    raise ValueError("process_id and num_processes must be nonnegative, with process_id < "
                     f"num_processes. Got process_id={process_id}, num_processes={num_processes}.")
  if launched_by_mpi() or (num_processes or 1) > 1:
    MPI = _mpi()
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    if num_processes is not None and num_processes != size:
      raise ValueError(f"num_processes={num_processes} disagrees with the MPI launch, which "
                       f"started {size} process(es) (run under `mpirun -n {num_processes}`).")
    if process_id is not None and process_id != rank:
      raise ValueError(f"process_id={process_id} disagrees with this process's MPI rank {rank}.")
    comm = world.Dup() if size > 1 else None
  else:
    rank, size, comm = 0, 1, None
  local = _devices.num_devices()
  if comm is not None:
    counts = comm.allgather(local)
    if len(set(counts)) != 1:
      comm.Free()
      raise ValueError(f"every process must have the same number of local devices; the "
                       f"processes have {counts} (set jax_num_cpu_devices or XLA_FLAGS alike).")
  global_state.process_id, global_state.num_processes = rank, size
  global_state.local_count, global_state.comm = local, comm
  global_state.initialized = True
  _devices._process_layout = (rank, size, local) if size > 1 else None


def shutdown():
  """Leaves the multi-process run (a no-op when not initialized); the
  device list is this process's own again."""
  if global_state.comm is not None:
    global_state.comm.Barrier()   # nobody leaves while others still communicate
    global_state.comm.Free()
  global_state.comm = None
  global_state.process_id, global_state.num_processes = 0, 1
  global_state.initialized = False
  _devices._process_layout = None
  for d in _devices._device_objects:   # back to the class's process 0
    for attr in ("process_index", "host_id", "task_id"):
      d.__dict__.pop(attr, None)


def is_initialized():
  """Whether ``initialize`` has been called (and not shut down)."""
  return global_state.initialized
