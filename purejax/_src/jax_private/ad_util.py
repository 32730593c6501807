"""Stand-in for ``jax._src.ad_util``, imported by lineax (``lineax._solve``):
``stop_gradient_p``, the primitive ``lax.stop_gradient`` binds (lineax
gives it a transpose rule), and the symbolic zero tangent types."""
from purejax._src.custom_derivatives import SymbolicZero
from purejax._src.interpreters.ad import Zero, zeros_like_aval
from purejax._src.lax.stop_gradient import stop_gradient_p

__all__ = ["SymbolicZero", "Zero", "stop_gradient_p", "zeros_like_aval"]
