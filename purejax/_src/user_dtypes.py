"""Dtypes a user asks for (``dtype=`` arguments): checked, canonicalized for
x64 and, when 64-bit types are off, truncated with JAX's warning."""
import sys
import warnings

import numpy as np

from purejax._src.dtypes import (_VALID_DTYPES, _canonical, canonicalize_dtype, is_extended,
                                  python_scalar_dtypes)


def _caller_stacklevel():
  """warnings stacklevel of the first frame outside purejax (the user's code)."""
  frame, level = sys._getframe(2), 2
  while frame is not None and frame.f_globals.get("__name__", "").startswith("purejax."):
    frame, level = frame.f_back, level + 1
  return level


def _looks_like_array(x):
  return (not isinstance(x, (np.dtype, type, str)) and hasattr(x, "shape")
          and isinstance(getattr(x, "dtype", None), np.dtype))


def check_user_dtype_supported(dtype, fun_name=None):
  """Validate an explicitly requested dtype; warn if x64 is off and it is a
  64-bit type that will be truncated to 32 bits."""
  if dtype is None or (isinstance(dtype, type) and dtype in python_scalar_dtypes):
    return  # None means "infer"; Python types mean "the default dtype".
  if is_extended(dtype):
    return  # key<fry>: each function says what it does with a key dtype
  if _looks_like_array(dtype):
    raise ValueError("Passing an array as a dtype argument is no longer supported; "
                     "instead of dtype=arr use dtype=arr.dtype.")
  dt = np.dtype(dtype)
  if dt not in _VALID_DTYPES:
    where = f" in {fun_name}" if fun_name else ""
    raise TypeError(f"JAX only supports number, bool, and string dtypes, got dtype {dtype}{where}")
  canonical = _canonical(dt)
  if canonical != dt:
    where = f" requested in {fun_name}" if fun_name else ""
    msg = (f"Explicitly requested dtype {dt}{where} is not available, and will be "
           f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
           "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
           "environment variable. See https://github.com/jax-ml/jax#current-gotchas for more.")
    warnings.warn(msg, UserWarning, stacklevel=_caller_stacklevel())


def canonicalize_user_dtype(dtype, fun_name=None):
  """Check an explicitly requested dtype and return its canonical np.dtype.

  None stays None; Python scalar types give the default dtype of their kind.
  """
  if dtype is None:
    return None
  check_user_dtype_supported(dtype, fun_name)
  return dtype if is_extended(dtype) else canonicalize_dtype(dtype)


to_numpy_dtype = canonicalize_user_dtype
check_and_canonicalize_user_dtype = canonicalize_user_dtype
