"""``jax.experimental.shard_map`` (deprecated in JAX: use ``jax.shard_map``)."""
import warnings as _warnings

from purejax._src.shard_map import shard_map

_warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
               "instead.", DeprecationWarning, stacklevel=2)

__all__ = ["shard_map"]
