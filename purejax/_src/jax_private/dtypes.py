"""Stand-in for ``jax._src.dtypes``, imported by flax (``flax.linen.fp8_ops``)
when it loads: the names flax's FP8 dtype is built from, purejax's own.
purejax has no user-defined extended dtypes, so such a dtype cannot be used.
Also ``TypePromotionError`` (equinox's ``nn.Embedding``), the class purejax
raises."""
from numpy import dtype as DType  # noqa: F401
from purejax._src.dtypes import (  # noqa: F401
    ExtendedDType, TypePromotionError, extended, finfo, supports_inf)
