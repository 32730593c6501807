"""The stages of a jitted call, as ``jax.stages``: ``jit(f)`` is a
``Wrapped``; ``jit(f).trace(*args)`` a ``Traced``, its ``.lower()`` a
``Lowered`` (purejax lowers to the jaxpr itself) and that one's
``.compile()`` a ``Compiled``.  JAX's ``ArgInfo`` and ``CompilerOptions``
are not provided."""
from purejax._src.api import PjitFunction as Wrapped
from purejax._src.stages import Compiled, Lowered, Traced

__all__ = ["Wrapped", "Traced", "Lowered", "Compiled"]
