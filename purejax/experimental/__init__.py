"""Experimental APIs (as ``jax.experimental``): ``io_callback``."""
from purejax._src.callbacks import io_callback

__all__ = ["io_callback"]
