"""Stand-in for ``jax._src.core``, imported by flax (``flax.linen.fp8_ops``)
when it loads: only ``ShapedArray``, purejax's (also ``jax.core.ShapedArray``)."""
from purejax._src.core import ShapedArray  # noqa: F401
