"""purejax.flatten_util (as ``jax.flatten_util``): ``ravel_pytree``."""
from purejax._src.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
