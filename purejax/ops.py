"""The old ``jax.ops`` index-update functions (deprecated: use ``x.at[idx]``)."""
from purejax._src.numpy.index_ops import (
    index, index_add, index_max, index_min, index_mul, index_update)
