"""``jax.ops``: segment reductions, and the old index-update functions
(deprecated: use ``x.at[idx]``)."""
from purejax._src.numpy.index_ops import (
    index, index_add, index_max, index_min, index_mul, index_update)
from purejax._src.numpy.segment import (
    segment_max, segment_min, segment_prod, segment_sum)

__all__ = ["index", "index_add", "index_max", "index_min", "index_mul", "index_update",
           "segment_max", "segment_min", "segment_prod", "segment_sum"]
