"""Debugging inside transformed code: ``print``, ``log``, ``callback``, ``breakpoint``
(as ``jax.debug``)."""
from purejax._src.debugging import breakpoint  # noqa: A004
from purejax._src.debugging import debug_callback as callback
from purejax._src.debugging import debug_log as log
from purejax._src.debugging import debug_print as print  # noqa: A004
from purejax._src.visualize_sharding import visualize_array_sharding, visualize_sharding

__all__ = ["breakpoint", "callback", "log", "print", "visualize_array_sharding",
           "visualize_sharding"]
