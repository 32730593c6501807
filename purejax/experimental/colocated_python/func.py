"""``jax.experimental.colocated_python.func``: making colocated callables."""
from purejax._src.colocated_python import make_callable

__all__ = ["make_callable"]
