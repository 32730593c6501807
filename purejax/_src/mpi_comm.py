"""An SPMD run whose devices span several processes, joined by MPI.

The device grid is global; each process runs only its own positions (a
thread each, as in a single-process run).  A collective first combines
the values of the local threads, then one thread per process -- the one
that called ``spmd.run`` -- talks to the other processes through mpi4py:
``Allreduce`` on buffers for sums, ``Allgather`` for general exchanges.

Every cross-process step starts by checking that the processes agree on
what they are about to do (the collective, its axes, shapes and dtypes),
so a process that disagrees -- or that failed -- is reported by every
process instead of leaving the others waiting.  The check is one tiny
``Allreduce`` of a 64-bit digest of that description; only when the
digests differ do the processes ``allgather`` the descriptions themselves
to say what differs.  At the end of each run the processes meet once more
for the same reason.
"""
import hashlib
import threading

import numpy as np

from purejax._src import distributed
from purejax._src.spmd import Communicator, SpmdError

# NumPy dtypes MPI reduces and gathers natively (others go through pickle).
_MPI_DTYPES = {np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128)}


class ProcessError(SpmdError):
  """Another process failed, or the processes disagree on a collective.
  Every process of the run raises it at the same step."""


def _describe(value):
  """What a collective's value must agree on across processes."""
  if hasattr(value, "shape") and hasattr(value, "dtype"):
    return f"{np.dtype(value.dtype).name}{list(value.shape)}"
  return type(value).__name__


class MpiCommunicator(Communicator):
  """A run over axes ``names`` of ``sizes`` whose positions (row-major) run
  on ``devices``, some of them in other processes."""

  def __init__(self, names, sizes, devices):
    super().__init__(names, sizes)
    state = distributed.global_state
    if state.comm is None:
      raise RuntimeError("a run over devices of several processes needs "
                         "purejax.distributed.initialize() first")
    if len(devices) != self.size:
      raise ValueError(f"{len(devices)} devices for a run over {self.size} positions")
    self._mpi = state.comm
    self._me = state.process_id
    self._owner = [getattr(d, "process_index", 0) for d in devices]
    self._local = [p for p, o in enumerate(self._owner) if o == self._me]
    if set(self._owner) != set(range(self._mpi.Get_size())):
      raise ValueError(f"a multi-process run must use devices of every process; devices "
                       f"{list(devices)} belong to processes {sorted(set(self._owner))} of "
                       f"{self._mpi.Get_size()}")
    if not self._local:
      raise ValueError(f"process {self._me} owns none of the devices {list(devices)}: every "
                       "process must take part in a multi-process run")
    self._even = all(self._owner.count(p) == len(self._local) for p in set(self._owner))
    self._leader = self._local[0]   # its thread is the caller of spmd.run
    self._barrier = threading.Barrier(len(self._local))
    self._results = {}
    self._crossing = {}
    self._step = 0

  def local_positions(self):
    return list(self._local)

  @property
  def process_count(self):
    return self._mpi.Get_size()

  def owner(self, pos):
    """The process that runs position ``pos``."""
    return self._owner[pos]

  def allgather_objects(self, value):
    """Every process's ``value``, in process order (outside a run: all
    processes call it at the same point of the program)."""
    return self._mpi.allgather(value)

  def _crosses(self, names):
    """Whether some group along ``names`` has members in several processes
    (the same answer in every process, so all of them skip MPI together)."""
    names = tuple(names)
    if names not in self._crossing:
      self._crossing[names] = any(
          len({self._owner[q] for q in self.group(p, names)}) > 1 for p in range(self.size))
    return self._crossing[names]

  def _group_key(self, pos, names):
    """Which group along ``names`` ``pos`` belongs to (0 .. #groups-1)."""
    coords = self.coords(pos)
    rest = [i for i, n in enumerate(self.names) if n not in names]
    return int(np.ravel_multi_index([coords[i] for i in rest], [self.sizes[i] for i in rest])) \
        if rest else 0

  # -- the cross-process step, run by the leader thread between barriers --

  def _agree(self, what):
    """Tells every process what this one is about to do and checks they
    all do the same; raises ProcessError (everywhere) otherwise."""
    self._step += 1
    told = _compare(self._mpi, what)
    if told is None:
      return
    failed = [(p, t) for p, t in enumerate(told) if t[0] == "failed"]
    if failed:
      p, t = failed[0]
      raise ProcessError(f"process {p} of the multi-process run failed: {t[1]}")
    if any(t != told[0] for t in told):
      lines = "\n".join(f"  process {p}: {self._say(t)}" for p, t in enumerate(told))
      raise ProcessError(f"the processes disagree on the program at collective {self._step} "
                         "of the run (every process must run the same collectives on values "
                         f"of the same shapes and dtypes):\n{lines}")

  @staticmethod
  def _say(told):
    if told[0] == "end":
      return "finished the run"
    kind, names, values = told
    return f"{kind} over axes {list(names)} of {', '.join(sorted(set(values)))}"

  def _leader_step(self, pos, step):
    """Runs ``step()`` on the leader thread while the other local threads
    wait; every local thread then reads its result (or raises its error)."""
    self._wait()
    if pos == self._leader:
      try:
        step()
      except BaseException as e:   # noqa: BLE001  (raised by every local thread)
        self._results = {q: e for q in self._local}
    self._wait()

  def _take(self, pos):
    out = self._results.pop(pos)
    if isinstance(out, BaseException):
      raise out
    return out

  # -- collectives --

  def exchange(self, pos, value, names):
    if not self._crosses(names):
      return super().exchange(pos, value, names)
    self._slots[pos] = value
    self._leader_step(pos, lambda: self._exchange_across(names))
    return self._take(pos)

  def _exchange_across(self, names):
    mine = [self._slots[q] for q in self._local]
    described = tuple(_describe(v) for v in mine)
    self._agree(("exchange", tuple(names), described))
    first = mine[0]
    # Allgather on buffers needs the same number of devices in every process.
    uniform = (isinstance(first, np.ndarray) and first.dtype in _MPI_DTYPES
               and len(set(described)) == 1 and self._even)
    everyone = [q for p in range(self._mpi.Get_size())
                for q in range(self.size) if self._owner[q] == p]
    if uniform:
      send = np.ascontiguousarray(np.stack(mine))
      recv = np.empty((self.size,) + first.shape, first.dtype)
      self._mpi.Allgather(send, recv)
      table = dict(zip(everyone, recv))
    else:
      table = {}
      for part in self._mpi.allgather(mine):
        table.update(zip(everyone[len(table):], part))
    self._results = {q: [table[r] for r in self.group(q, names)] for q in self._local}

  def all_sum(self, pos, value, names):
    if len(self.group(pos, names)) == 1 or not self._crosses(names):
      return super().all_sum(pos, value, names)
    self._slots[pos] = np.require(value, requirements="C")
    self._leader_step(pos, lambda: self._sum_across(names))
    return self._take(pos)

  def _sum_across(self, names):
    mine = [self._slots[q] for q in self._local]
    self._agree(("psum", tuple(names), tuple(_describe(v) for v in mine)))
    first = mine[0]
    groups = self.size // len(self.group(self._leader, names))
    keys = [self._group_key(q, names) for q in self._local]
    partial = np.empty((groups,) + first.shape, first.dtype)
    seen = set()
    for key, v in zip(keys, mine):   # combine the local devices first
      if key in seen:
        partial[key] += v
      else:
        partial[key] = v
        seen.add(key)
    if len(seen) < groups:   # groups with no local member add nothing
      for key in set(range(groups)) - seen:
        partial[key] = 0
    if first.dtype in _MPI_DTYPES:
      from mpi4py import MPI
      self._mpi.Allreduce(MPI.IN_PLACE, partial, op=MPI.SUM)
      total = partial
    else:   # e.g. bfloat16, which MPI cannot add: sum in process order here
      parts = self._mpi.allgather(partial)
      total = parts[0].copy()
      for part in parts[1:]:
        total += part
    self._results = {q: total[key] for q, key in zip(self._local, keys)}

  def end_run(self, failures):
    """Meets the other processes once more: reports this process's failure
    to them, or learns of theirs (raising ProcessError)."""
    self._step = 0
    if any(isinstance(e, ProcessError) for e in failures):
      return   # every process already saw the failure at the same step
    if failures:
      first = next((e for e in failures if not isinstance(e, SpmdError)), failures[0])
      _compare(self._mpi, ("failed", f"{type(first).__name__}: {first}"))
      return
    self._agree(("end",))


def report_failure(error):
  """Tells the other processes that this one failed before starting a run
  they are entering (e.g. a pmap whose local arguments are wrong here):
  they raise ProcessError at their run's first cross-process step, as if a
  device of this process had failed.  Nothing to do in a single process."""
  comm = distributed.global_state.comm
  if comm is not None:
    _compare(comm, ("failed", f"{type(error).__name__}: {error}"))


def _digest(what):
  """A 62-bit digest of a description (the same in every process, unlike
  ``hash``; 62 bits so that its negation fits an int64 too)."""
  data = hashlib.blake2b(repr(what).encode(), digest_size=8).digest()
  return int.from_bytes(data, "little") >> 2


def _compare(mpi, what):
  """None if every process passed an equal ``what``, else every process's
  ``what`` (in process order).  Every process of ``mpi`` calls it at the
  same point: one Allreduce of (digest, -digest) under MAX tells whether
  the largest and the smallest digests agree; only then the descriptions
  themselves are gathered."""
  from mpi4py import MPI
  digest = _digest(what)
  buf = np.array([digest, -digest], np.int64)
  mpi.Allreduce(MPI.IN_PLACE, buf, op=MPI.MAX)
  if buf[0] == digest and buf[1] == -digest:
    return None
  return mpi.allgather(what)
