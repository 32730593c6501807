"""``jax.interpreters``: the rule registries of JAX's extension API
(``ad``, ``batching``) and ``mlir`` (which only explains that purejax has no
XLA lowerings)."""
from purejax.interpreters import ad  # noqa: F401
from purejax.interpreters import batching  # noqa: F401
from purejax.interpreters import mlir  # noqa: F401
from purejax.interpreters import partial_eval  # noqa: F401
