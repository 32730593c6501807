"""Image resampling, as ``jax.image``: ``resize``, ``scale_and_translate``
and ``ResizeMethod``, built from ``purejax.numpy`` operations (so they work
under ``jit``, ``grad`` and ``vmap``)."""
from purejax._src.image import ResizeMethod, resize, scale_and_translate

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
