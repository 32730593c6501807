"""The parts of ``jax.profiler`` that can be honest without a profiler.

``TraceAnnotation``, ``StepTraceAnnotation`` and ``annotate_function`` mark
regions of host code, as in JAX; since purejax records no profiles they
only keep their name (``TraceAnnotation.current()`` lists the open ones) and
change nothing a program computes or prints.  Starting a profile
(``start_trace``, ``stop_trace``, ``trace``, ``start_server``) and the
device memory profiles raise ``NotImplementedError``.
"""
import contextlib
import functools
import threading

_open = threading.local()


def _stack():
  stack = getattr(_open, "stack", None)
  if stack is None:
    stack = _open.stack = []
  return stack


class TraceAnnotation:
  """Context manager naming a region of host code (``name``, with
  ``kwargs`` as metadata).  Nesting is tracked; nothing is recorded."""

  def __init__(self, name, **kwargs):
    self.name = name
    self.kwargs = kwargs

  def __enter__(self):
    _stack().append(self)
    return self

  def __exit__(self, *exc):
    _stack().remove(self)
    return False

  @staticmethod
  def current():
    """The names of the annotations open on this thread, outermost first."""
    return [a.name for a in _stack()]


class StepTraceAnnotation(TraceAnnotation):
  """A ``TraceAnnotation`` for one training step (``step_num=...``)."""

  def __init__(self, name, **kwargs):
    super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
  """``func`` wrapped so that each call runs inside a ``TraceAnnotation``
  named ``name`` (default: the function's qualified name)."""
  name = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "function")

  @functools.wraps(func)
  def wrapper(*args, **kwargs):
    with TraceAnnotation(name, **decorator_kwargs):
      return func(*args, **kwargs)

  return wrapper


def _unsupported(what):
  raise NotImplementedError(
      f"{what}: purejax cannot record profiler traces (there is no XLA profiler). "
      "Time regions with time.perf_counter, or profile the Python side with cProfile.")


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None):
  """Not supported: raises ``NotImplementedError``."""
  _unsupported("jax.profiler.start_trace")


def stop_trace():
  """Not supported: raises ``NotImplementedError``."""
  _unsupported("jax.profiler.stop_trace")


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
  """Not supported: raises ``NotImplementedError`` on entry."""
  _unsupported("jax.profiler.trace")
  yield


def start_server(port, requires_backend=True):
  """Not supported: raises ``NotImplementedError``."""
  _unsupported("jax.profiler.start_server")


def device_memory_profile(backend=None):
  """Not supported: raises ``NotImplementedError``."""
  _unsupported("jax.profiler.device_memory_profile")


def save_device_memory_profile(filename, backend=None):
  """Not supported: raises ``NotImplementedError``."""
  _unsupported("jax.profiler.save_device_memory_profile")
