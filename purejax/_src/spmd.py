"""SPMD execution: one program run by several devices at once (a thread per
device), exchanging values through collectives.

A run has a ``Communicator`` over a grid of named axes (a pmap's one axis,
or a mesh's), one position per device, row-major.  Every device thread runs
the same program, so every device reaches the same collectives in the same
order: a collective is a barrier-separated exchange through shared slots.
Compiled code releases the GIL, so the devices' kernels run in parallel.

The collective primitives' impls (purejax/_src/lax/parallel.py) ask
``current()`` for the calling thread's communicator and position.
"""
import math
import queue
import threading

import numpy as np

_local = threading.local()
# Sums up to this size are computed whole by every device (one barrier);
# larger ones split between the devices (two barriers, half the adds each).
SMALL_SUM_BYTES = 256 << 10


class SpmdError(RuntimeError):
  """A device of an SPMD run failed; the others stopped at their next collective."""


class Communicator:
  """The shared state of one SPMD run over axes ``names`` of ``sizes``."""

  def __init__(self, names, sizes):
    self.names, self.sizes = tuple(names), tuple(sizes)
    self.size = math.prod(self.sizes)
    self._slots = [None] * self.size
    self._small_slots = ([None] * self.size, [None] * self.size)
    self._turns = [0] * self.size   # per position: which small-slot list is next
    self._barrier = threading.Barrier(self.size)

  def coords(self, pos):
    return np.unravel_index(pos, self.sizes)

  def binds(self, names):
    return all(n in self.names for n in names)

  def group(self, pos, names):
    """The positions of the devices that differ from ``pos`` only along
    ``names``, ordered by their index along ``names`` (row-major in the
    order given, as a multi-axis ``axis_index`` counts)."""
    coords = list(self.coords(pos))
    axes = [self.names.index(n) for n in names]
    members = []
    for index in np.ndindex(*[self.sizes[a] for a in axes]):
      for a, i in zip(axes, index):
        coords[a] = i
      members.append(int(np.ravel_multi_index(coords, self.sizes)))
    return members

  def axis_index(self, pos, names):
    return self.group(pos, names).index(pos)

  def exchange(self, pos, value, names):
    """Every value of ``pos``'s group along ``names``, in group order (the
    same objects the other devices passed: treat them as read-only)."""
    self._slots[pos] = value
    self._wait()
    values = [self._slots[q] for q in self.group(pos, names)]
    self._wait()   # the slots may be reused after everyone has read them
    return values

  def all_sum(self, pos, value, names):
    """The sum over ``pos``'s group.  A large value is added up in parallel
    (each member sums one block of the result, which they all share); a
    small one by every member on its own, which saves a barrier."""
    return self._sums(pos, [value], names)[0]

  def all_sum_many(self, pos, values, names):
    """``[all_sum(pos, v, names) for v in values]`` in one exchange (one
    or two barriers for all of them; each sum as ``all_sum`` computes it,
    so the results are the same).  A subclass that changes ``all_sum``
    alone gets one ``all_sum`` per value."""
    if type(self).all_sum is not Communicator.all_sum:
      return [self.all_sum(pos, v, names) for v in values]
    return self._sums(pos, values, names)

  def _sums(self, pos, values, names):
    members = self.group(pos, names)
    values = [np.asarray(v) for v in values]
    if len(members) == 1:
      return values
    if all(_summed_whole(v) for v in values):
      # Two slot lists used in turn: a member writes this list again only
      # after the next collective's barrier, when everyone has read this one.
      turn = self._turns[pos] = self._turns[pos] ^ 1
      slots = self._small_slots[turn]
      slots[pos] = values
      self._wait()
      return [_add_all([slots[q][i] for q in members], out=None) for i in range(len(values))]
    # The first member allocates the large results (C order); the others
    # find them in its slot.
    first = members[0] == pos
    outs = [None if _summed_whole(v) else np.empty(v.shape, v.dtype) if first else None
            for v in values]
    self._slots[pos] = (values, outs)
    self._wait()
    everyone = [self._slots[q][0] for q in members]
    shared = self._slots[members[0]][1]
    k, n = members.index(pos), len(members)
    results = []
    for i, out in enumerate(shared):
      parts = [vals[i] for vals in everyone]
      if out is None:
        results.append(_add_all(parts, out=None))
      else:
        _add_block(parts, out, k, n)
        results.append(out)
    self._wait()   # every block is written; the slots may be reused
    return results

  def _wait(self):
    try:
      self._barrier.wait()
    except threading.BrokenBarrierError:
      raise SpmdError("another device of this SPMD run failed") from None

  def abort(self):
    self._barrier.abort()

  def local_positions(self):
    """The positions this process runs (all of them; an MPI run's are
    this process's share, purejax/_src/mpi_comm.py)."""
    return range(self.size)

  def end_run(self, failures):
    """Called by ``run`` once every local device has finished, with
    their errors (a multi-process run tells the other processes here)."""


def _summed_whole(value):
  return value.nbytes <= SMALL_SUM_BYTES or value.ndim == 0


def _add_block(values, out, k, n):
  """Member ``k`` of ``n``'s share of ``out = values[0] + values[1] + ...``
  (``out`` in C order): a k-th of the elements when all are contiguous, else
  of the rows."""
  if all(v.flags.c_contiguous for v in values):
    values, out = [v.reshape(-1) for v in values], out.reshape(-1)
  elif out.ndim > 1 and all(v.T.flags.c_contiguous for v in values):
    # Transposed values (weight gradients): NumPy adds arrays whose strides
    # differ from out's one element at a time, 20x slower; add them in
    # their own order, then copy the block into out (one strided pass).
    values, out = [v.T for v in values], out.T
    rows = slice(len(out) * k // n, len(out) * (k + 1) // n)
    out[rows] = _add_all([v[rows] for v in values], out=None)
    return
  rows = slice(len(out) * k // n, len(out) * (k + 1) // n)
  _add_all([v[rows] for v in values], out=out[rows])


def _add_all(values, out):
  """values[0] + values[1] + ... in the order given (into ``out`` if given)."""
  out = np.asarray(np.add(values[0], values[1], out=out))   # (a 0-d sum is a scalar)
  for v in values[2:]:
    np.add(out, v, out=out)
  return out


def current():
  """(communicator, position) of the calling device thread, or None."""
  return getattr(_local, "context", None)


def bound(names):
  """The calling thread's (communicator, position) if it binds every axis
  of ``names``, else None."""
  ctx = current()
  if ctx is not None and ctx[0].binds(names):
    return ctx
  return None


class _DeviceThread:
  """A long-lived worker thread that runs one device's share of each run."""

  def __init__(self, index):
    self.jobs = queue.SimpleQueue()
    self.thread = threading.Thread(target=self._loop, name=f"purejax-device-{index}",
                                   daemon=True)
    self.thread.start()

  def _loop(self):
    while True:
      job = self.jobs.get()
      job()


_workers = []
_workers_lock = threading.Lock()


def _worker(i):
  with _workers_lock:
    while len(_workers) <= i:
      _workers.append(_DeviceThread(len(_workers)))
    return _workers[i]


def run(comm, fn, per_device_args):
  """Runs ``fn(pos, *per_device_args[k])`` on every device ``pos`` (the
  k-th of ``comm.local_positions()``: all of them, unless the run spans
  processes) at once and returns the results in that order.  The first
  error raised by any device is re-raised here (the others are stopped)."""
  if current() is not None:
    raise SpmdError("an SPMD run cannot start inside another one's device")
  local = list(comm.local_positions())
  n = len(local)
  results, errors = [None] * n, [None] * n
  done = threading.Semaphore(0)

  def job(k):
    def go():
      pos = local[k]
      _local.context = (comm, pos)
      try:
        results[k] = fn(pos, *per_device_args[k])
      except BaseException as e:   # noqa: BLE001  (re-raised by the caller)
        errors[k] = e
        comm.abort()
      finally:
        _local.context = None
        done.release()
    return go

  for k in range(1, n):
    _worker(k).jobs.put(job(k))
  job(0)()   # the calling thread runs the first local device
  for _ in range(n):   # every job releases once, the calling thread's too
    done.acquire()
  failures = [e for e in errors if e is not None]
  comm.end_run(failures)
  if failures:
    # The device that failed first, rather than one stopped by the abort.
    # (A subclass, such as a multi-process run's ProcessError, says more
    # than the plain "another device failed".)
    first = next((e for e in failures if not isinstance(e, SpmdError)), None)
    first = first or next((e for e in failures if type(e) is not SpmdError), failures[0])
    raise first
  return results


def make_communicator(names, sizes, devices=None):
  """The communicator of a run over axes ``names`` of ``sizes`` whose
  positions (row-major) run on ``devices``: an MPI one when the devices
  belong to more than one process, else a threads-only one."""
  if devices is not None:
    from purejax._src import distributed
    devices = list(devices)
    owners = {getattr(d, "process_index", 0) for d in devices}
    if owners - {distributed.global_state.process_id}:
      from purejax._src.mpi_comm import MpiCommunicator
      return MpiCommunicator(names, sizes, devices)
  return Communicator(names, sizes)
