"""Stand-in for ``jax._src.checkify``, imported by flax (``flax.nnx.checkify``):
the public ``jax.experimental.checkify`` API, and ``Out``, the type variable
of its signatures."""
from typing import TypeVar

from purejax.experimental.checkify import (
    DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxException,
    JaxRuntimeError, NaNError, OOBError, all_checks, automatic_checks, check, check_error,
    checkify, div_checks, float_checks, index_checks, nan_checks, user_checks)

Out = TypeVar("Out")

__all__ = ["DivisionByZeroError", "Error", "ErrorCategory", "FailedCheckError", "JaxException",
           "JaxRuntimeError", "NaNError", "OOBError", "Out", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "div_checks", "float_checks", "index_checks",
           "nan_checks", "user_checks"]
