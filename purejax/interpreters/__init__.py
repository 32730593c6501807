"""``jax.interpreters``: the rule registries of JAX's extension API
(``ad``, ``batching``), ``mlir`` (which only explains that purejax has no
XLA lowerings) and ``xla`` (registering types whose values are arrays)."""
from purejax.interpreters import ad  # noqa: F401
from purejax.interpreters import batching  # noqa: F401
from purejax.interpreters import mlir  # noqa: F401
from purejax.interpreters import partial_eval  # noqa: F401
from purejax.interpreters import xla  # noqa: F401
