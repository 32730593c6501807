"""Functions with their own batching rules, as ``jax.custom_batching``."""
from purejax._src.custom_batching import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
