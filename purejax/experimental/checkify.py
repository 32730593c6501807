"""Functionalized runtime checks (as ``jax.experimental.checkify``)."""
from purejax._src.checkify import control_flow as _control_flow  # registers the rules
from purejax._src.checkify.check import check, check_error, debug_check
from purejax._src.checkify.errors import (
    DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxException,
    JaxRuntimeError, NaNError, OOBError, all_checks, automatic_checks, div_checks,
    float_checks, index_checks, nan_checks, user_checks)
from purejax._src.checkify.errors import no_error as _no_error
from purejax._src.checkify.trace import checkify

init_error = _no_error()   # the error with nothing failed (JAX's name)

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"]
