"""Stand-in for ``jax._src.tree_util``, read by flax (``flax.nnx``): its
``_registry``, the pytree node types registered so far (a type is in it
once registered; purejax's values are its own records, not JAX's)."""
from purejax._src.pytree_registry import _REGISTERED as _registry  # noqa: F401

__all__ = ["_registry"]
