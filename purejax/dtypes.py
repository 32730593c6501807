"""Public dtype utilities, mirroring ``jax.dtypes``."""
from ml_dtypes import bfloat16 as bfloat16   # the scalar type, as JAX's (not a dtype)

from purejax._src.dtypes import (
    TypePromotionError as TypePromotionError,
    canonicalize_dtype as canonicalize_dtype,
    extended as extended,
    finfo as finfo,
    float0 as float0,
    iinfo as iinfo,
    issubdtype as issubdtype,
    itemsize_bits as itemsize_bits,
    prng_key as prng_key,
    result_type as result_type,
    scalar_type_of as scalar_type_of,
)

__all__ = [
    "TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
    "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
    "scalar_type_of",
]
