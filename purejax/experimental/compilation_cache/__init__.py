"""``jax.experimental.compilation_cache``: the on-disk cache of compiled code."""
from purejax.experimental.compilation_cache import compilation_cache

__all__ = ["compilation_cache"]
