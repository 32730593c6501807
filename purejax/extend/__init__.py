"""``jax.extend``: the API for extending purejax (new primitives, custom
interpreters, ``linear_util``).  purejax has no XLA, so JAX's ``backend``,
``mlir``, ``lowering`` and ``xla`` submodules are not here; see
``purejax.interpreters.mlir`` for what registering a lowering does.
"""
from purejax.extend import core  # noqa: F401
from purejax.extend import linear_util  # noqa: F401
