"""Stand-in for ``jax._src.checkify``, imported by flax (``flax.nnx.checkify``):
the public ``jax.experimental.checkify`` API, and ``Out``, the type variable
of its signatures."""
from typing import TypeVar

from purejax.experimental.checkify import *  # noqa: F401,F403
from purejax.experimental.checkify import __all__ as _public
from purejax._src.checkify.errors import JaxException  # noqa: F401

Out = TypeVar("Out")

__all__ = [*_public, "JaxException", "Out"]
