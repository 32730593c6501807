"""Backends run jitted jaxprs: ``numpy`` (the reference, one NumPy call per
equation) and ``cpu`` (fused loops compiled through the system C compiler).

``compile_jaxpr`` picks one by the ``purejax_backend`` flag
(PUREJAX_BACKEND=cpu|numpy).  When the C backend cannot compile a jaxpr (no
compiler, a compiler error) the NumPy backend runs it, with a warning given
once per reason.

Compilation is tiered: unless ``purejax_compile_sync`` is set, the C code is
compiled in a background thread while the first calls run on the NumPy
backend; the compiled version takes over when it is ready.
"""
import threading
import warnings

from purejax._src.config import config
from purejax._src.backends import numpy_backend

_warned = set()


def _warn_once(reason):
  if reason not in _warned:
    _warned.add(reason)
    warnings.warn(f"purejax: the C backend is not used ({reason}); jit runs on the "
                  "NumPy backend.", RuntimeWarning, stacklevel=4)


def compile_jaxpr(jaxpr, backend=None):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running the
  const-free ``jaxpr`` on ``backend`` (default: the configured one)."""
  backend = backend or config.purejax_backend
  if backend != "cpu":
    return numpy_backend.compile_jaxpr(jaxpr)
  if config.purejax_compile_sync:
    return _compile_cpu(jaxpr)
  return _Tiered(jaxpr)


def _compile_cpu(jaxpr):
  """The C backend's executable, or the NumPy backend's where it cannot be
  built (warned about once per reason)."""
  try:
    from purejax._src.backends.cpu import executable, toolchain
  except ImportError as e:   # a partial installation
    _warn_once(f"it cannot be imported: {e}")
    return numpy_backend.compile_jaxpr(jaxpr)
  try:
    return executable.compile_jaxpr(jaxpr)
  except toolchain.CompilerUnavailable as e:
    _warn_once(f"no C compiler: {e}")
  except toolchain.CompileError as e:
    _warn_once(f"the C compiler failed: {str(e).splitlines()[0] if str(e) else e}")
  return numpy_backend.compile_jaxpr(jaxpr)


class _Tiered:
  """Runs on the NumPy backend until the C compilation started in the
  background is done, then on its result."""

  def __init__(self, jaxpr):
    self._numpy = numpy_backend.compile_jaxpr(jaxpr)
    self._compiled = None
    self._thread = threading.Thread(target=self._build, args=(jaxpr,), daemon=True,
                                    name="purejax-compile")
    self._thread.start()

  def _build(self, jaxpr):
    try:
      self._compiled = _compile_cpu(jaxpr)
    except Exception as e:   # never let a compiler problem break the program
      _warn_once(f"compiling failed: {type(e).__name__}: {e}")
      self._compiled = self._numpy

  def wait(self):
    """Blocks until the compiled version is in use (for tests and benchmarks)."""
    self._thread.join()

  def __call__(self, *args):
    return (self._compiled or self._numpy)(*args)
