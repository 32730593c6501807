"""Stand-in for ``jax._src.dispatch``, imported by equinox (``equinox._jit``):
``wait_for_tokens``, which waits for every computation dispatched so far,
as JAX's waits for the runtime tokens of effectful ones."""
from purejax._src.api_extras import effects_barrier as wait_for_tokens

__all__ = ["wait_for_tokens"]
