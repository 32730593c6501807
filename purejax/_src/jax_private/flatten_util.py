"""Stand-in for ``jax._src.flatten_util``, imported by blackjax (its SMC
tuning): ``ravel_pytree``, the public ``jax.flatten_util``'s."""
from purejax.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
