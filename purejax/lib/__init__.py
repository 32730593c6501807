"""``jax.lib``: in JAX 0.10 only ``__version__``, jaxlib's version.  purejax
has no separate compiled library: its own version."""
from purejax.version import __version__

__all__ = []
