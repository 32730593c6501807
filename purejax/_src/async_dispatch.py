"""Asynchronous dispatch: a large jitted computation is handed to a worker
thread and its call returns at once, with Arrays whose values are pending.

Reading a pending value (``np.asarray``, printing, ``float``, an eager op,
``block_until_ready``) waits for it; an error raised by the computation is
raised there.  Shapes and dtypes are known without waiting.  One worker runs
the computations in the order they were dispatched, so a computation whose
inputs are pending finds them done.

Small computations run synchronously: handing work to a thread costs tens of
microseconds, more than they take.  A computation is "large" when its
estimated work (cost_analysis flops plus bytes) reaches ``ASYNC_MIN_WORK`` or
it has a loop.  On a GPU, kernel launches return at once anyway: the worker
takes the computations that wait for the host (``waits_on_host_on_gpu``).
"""
import os
import queue
import threading

import numpy as np

ASYNC_MIN_WORK = 1e8
_LOOPS = frozenset({"scan", "while"})
# What a computation on a GPU waits for the host in: the runner reads a
# while loop's or a cond's predicate back, and callbacks run on the host.
_GPU_HOST_WAITS = frozenset({"while", "cond", "pure_callback", "io_callback"})
# ... but debugging (prints, breakpoints) stays in step with the caller.
_DEBUGGING = frozenset({"debug_callback", "debug_print"})


class Pending:
  """The value of output ``index`` of a dispatched computation: a NumPy
  array, or a device array on GPU ``gpu`` (None: on the host)."""
  __slots__ = ("job", "index", "dtype", "gpu")

  def __init__(self, job, index, dtype, gpu=None):
    self.job, self.index, self.dtype, self.gpu = job, index, dtype, gpu

  def done(self):
    return self.job.event.is_set()

  def resolve(self):
    value = self.job.result()[self.index]
    if self.gpu is not None:   # stays on its GPU
      return value
    if type(value) is not np.ndarray or value.dtype != self.dtype:
      value = np.asarray(value, dtype=self.dtype)
    value.setflags(write=False)
    return value


class _Job:
  __slots__ = ("run", "args", "event", "outs", "error")

  def __init__(self, run, args):
    self.run, self.args = run, args
    self.event = threading.Event()
    self.outs = self.error = None

  def execute(self):
    try:
      args = [a.resolve() if type(a) is Pending else a for a in self.args]
      self.outs = self.run(*args)
    except BaseException as e:   # noqa: BLE001  (raised where the value is read)
      self.error = e
    self.args = None
    self.event.set()

  def result(self):
    self.event.wait()
    if self.error is not None:
      raise self.error
    return self.outs


_queue = None
_lock = threading.Lock()


def _forget_worker():
  # A forked child has no worker thread: it starts its own when needed.
  global _queue, _lock
  _queue, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_worker)


_here = threading.local()   # .on_worker: set on the worker thread


def _worker(jobs):
  _here.on_worker = True
  while True:
    jobs.get().execute()


def wait_for_all():
  """Waits until every computation dispatched so far has finished (on the
  worker, in a callback: those before the running one have)."""
  jobs = _queue
  if jobs is None or getattr(_here, "on_worker", False):
    return
  # The worker runs jobs in order: once a no-op job is done, so is all before.
  job = _Job(lambda: (), [])
  jobs.put(job)
  job.event.wait()


def dispatch(run, args, dtypes, gpu=None):
  """Runs ``run(*args)`` (``args`` may hold Pending values) on the worker;
  returns one Pending per output dtype (device arrays on GPU ``gpu``)."""
  global _queue
  if _queue is None:
    with _lock:
      if _queue is None:
        q = queue.SimpleQueue()
        threading.Thread(target=_worker, args=(q,), daemon=True,
                         name="purejax-dispatch").start()
        _queue = q
  job = _Job(run, args)
  if getattr(_here, "on_worker", False):
    # Called from a callback of a computation the worker runs: queued, it
    # would wait for that computation, which waits for it.
    job.execute()
  else:
    _queue.put(job)
  return [Pending(job, i, dt, gpu) for i, dt in enumerate(dtypes)]


def is_large(closed_jaxpr):
  """Whether a computation is worth running asynchronously.  One that
  prints or stops for the debugger runs in step with its caller, whose own
  prints then come out in program order (as JAX's on the CPU)."""
  from purejax._src import cost_analysis
  jaxpr = closed_jaxpr.jaxpr
  if _uses(jaxpr, _DEBUGGING):
    return False
  if _uses(jaxpr, _LOOPS):
    return True
  cost = cost_analysis.jaxpr_cost(closed_jaxpr)
  return cost.get("flops", 0.0) + cost.get("bytes accessed", 0.0) >= ASYNC_MIN_WORK


def waits_on_host_on_gpu(closed_jaxpr):
  """Whether a computation run on a GPU waits for the host (its call would
  block until the GPU gets there, where JAX's returns at once)."""
  jaxpr = closed_jaxpr.jaxpr
  return _uses(jaxpr, _GPU_HOST_WAITS) and not _uses(jaxpr, _DEBUGGING)


def _uses(jaxpr, names):
  for eqn in jaxpr.eqns:
    if eqn.primitive.name in names:
      return True
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else (value,):
        inner = getattr(sub, "jaxpr", None)
        if inner is not None and hasattr(inner, "eqns") and _uses(inner, names):
          return True
  return False
