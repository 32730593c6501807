"""``jax.custom_derivatives``: user-defined differentiation rules, and the
primitives a ``custom_jvp``/``custom_vjp`` function stages as (which
libraries that walk jaxprs match on: equinox)."""
from purejax._src.api_extras import closure_convert, custom_gradient
from purejax._src.custom_derivatives import (
    CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zero_from_primal)
from purejax._src.custom_jvp import custom_jvp_call_p
from purejax._src.custom_vjp import custom_vjp_call_p
from purejax._src.linear_call import linear_call, linear_call_p

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp",
           "custom_jvp_call_p", "custom_vjp", "custom_vjp_call_p", "linear_call", "linear_call_p",
           "zero_from_primal"]
