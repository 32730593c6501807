"""Stand-in for ``jax._src.tree_util``, read by flax (``flax.nnx``): its
``_registry``, the pytree node types registered so far (a type is in it
once registered; purejax's values are its own records, not JAX's); and by
orbax: ``flatten_one_level`` (a node's children and metadata; ValueError
for a leaf), purejax's own."""
from purejax._src.pytree_registry import _REGISTERED as _registry  # noqa: F401
from purejax._src.tree_util import flatten_one_level

__all__ = ["_registry", "flatten_one_level"]
