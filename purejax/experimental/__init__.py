"""Experimental APIs (as ``jax.experimental``): ``io_callback``."""
from purejax._src.callbacks import io_callback
# Imported with jax, as in JAX (the others load on first import).
from purejax.experimental import compilation_cache

__all__ = ["compilation_cache", "io_callback"]
