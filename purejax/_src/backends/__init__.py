"""Backends run jitted jaxprs: ``numpy`` (the reference, one NumPy call per
equation) and ``cpu`` (fused loops compiled through the system C compiler).

``compile_jaxpr`` picks one by the ``purejax_backend`` flag
(PUREJAX_BACKEND=cpu|numpy).  When the C backend cannot compile a jaxpr (no
compiler, a compiler error) the NumPy backend runs it, with a warning given
once per reason.
"""
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
  if backend == "cpu":
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
