"""custom_jvp and custom_vjp: functions whose derivatives the user defines.

This module gathers the public names; the work is done in
``custom_derivatives_common`` (shared values and call handling),
``custom_jvp``, ``custom_vjp``, ``custom_lin`` (custom_vjp's linear
stand-in) and ``custom_derivatives_batching`` (their rules under vmap).
"""
from purejax._src.custom_derivatives_common import (
    CustomJVPException, CustomVJPException, CustomVJPPrimal, SymbolicZero, zero_from_primal)
from purejax._src.custom_jvp import custom_jvp, custom_jvp_call_p
from purejax._src.custom_lin import custom_lin_p
from purejax._src.custom_vjp import custom_vjp, custom_vjp_call_p

__all__ = [
    "CustomJVPException", "CustomVJPException", "CustomVJPPrimal", "SymbolicZero",
    "custom_jvp", "custom_jvp_call_p", "custom_lin_p", "custom_vjp", "custom_vjp_call_p",
    "zero_from_primal",
]
