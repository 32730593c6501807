"""``jax.extend.linear_util``: ``WrappedFun`` and its transformations
(see ``purejax/_src/linear_util.py``)."""
from typing import Callable  # noqa: F401  (JAX exports it here too)

from purejax._src.linear_util import (  # noqa: F401
    StoreException, WrappedFun, cache, merge_linear_aux, transformation,
    transformation2, transformation_with_aux, transformation_with_aux2, wrap_init)
