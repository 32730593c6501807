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
it has a loop.
"""
import os
import queue
import threading

import numpy as np

ASYNC_MIN_WORK = 1e8
_LOOPS = frozenset({"scan", "while"})


class Pending:
  """The value of output ``index`` of a dispatched computation."""
  __slots__ = ("job", "index", "dtype")

  def __init__(self, job, index, dtype):
    self.job, self.index, self.dtype = job, index, dtype

  def done(self):
    return self.job.event.is_set()

  def resolve(self):
    value = self.job.result()[self.index]
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


def _worker(jobs):
  while True:
    jobs.get().execute()


def dispatch(run, args, dtypes):
  """Runs ``run(*args)`` (``args`` may hold Pending values) on the worker;
  returns one Pending per output dtype."""
  global _queue
  if _queue is None:
    with _lock:
      if _queue is None:
        q = queue.SimpleQueue()
        threading.Thread(target=_worker, args=(q,), daemon=True,
                         name="purejax-dispatch").start()
        _queue = q
  job = _Job(run, args)
  _queue.put(job)
  return [Pending(job, i, dt) for i, dt in enumerate(dtypes)]


def is_large(closed_jaxpr):
  """Whether a computation is worth running asynchronously."""
  from purejax._src import cost_analysis
  jaxpr = closed_jaxpr.jaxpr
  if _has_loop(jaxpr):
    return True
  cost = cost_analysis.jaxpr_cost(closed_jaxpr)
  return cost.get("flops", 0.0) + cost.get("bytes accessed", 0.0) >= ASYNC_MIN_WORK


def _has_loop(jaxpr):
  for eqn in jaxpr.eqns:
    if eqn.primitive.name in _LOOPS:
      return True
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else (value,):
        inner = getattr(sub, "jaxpr", None)
        if inner is not None and hasattr(inner, "eqns") and _has_loop(inner):
          return True
  return False
