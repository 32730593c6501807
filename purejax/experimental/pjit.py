"""``jax.experimental.pjit`` (deprecated in JAX: use ``jax.jit``); see
purejax/_src/pjit_api.py."""
import warnings as _warnings

from purejax._src.pjit_api import pjit as _pjit

_DEPRECATED = {
    "pjit": ("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.",
             _pjit),
}


def __getattr__(name):
  if name in _DEPRECATED:
    message, value = _DEPRECATED[name]
    _warnings.warn(message, DeprecationWarning, stacklevel=2)
    return value
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
