"""purejax.scipy: SciPy's API on purejax arrays (``import purejax.scipy as jsp``).

Submodules load on first use (``jsp.special``, ``jsp.linalg``, ``jsp.fft``, ...), as in
JAX.  Everything is built from ``purejax.lax``, so it works under ``jit``, ``grad`` and ``vmap``.
"""
import importlib

_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize",
               "signal", "sparse", "spatial", "special", "stats")
__all__ = list(_SUBMODULES)


def __getattr__(name):
  if name in _SUBMODULES:
    return importlib.import_module(f"{__name__}.{name}")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted(set(globals()) | set(_SUBMODULES))
