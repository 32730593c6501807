"""Stand-in for ``jax._src.state.types``, imported by flax (``flax.nnx``):
``AbstractRef``, the type of a ``Ref``'s aval (``jax.typeof(jax.new_ref(x))``)."""
from purejax._src.refs import AbstractRef  # noqa: F401

__all__ = ["AbstractRef"]
