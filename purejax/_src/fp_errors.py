"""NumPy's floating-point warnings (0 * inf, x / 0 ...) silenced around
primitive implementations: XLA never warns, so JAX programs don't either.

``np.errstate`` costs about a microsecond per use; NumPy 2 keeps the error
state in a context variable that ``ignore``/``restore`` set directly.
"""
import numpy as np

try:
  from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
  _IGNORE_ALL = _make_extobj(all="ignore")
except (ImportError, TypeError):   # NumPy 1.x
  _extobj_contextvar = None

if _extobj_contextvar is not None:
  def ignore():
    """Ignores floating-point errors until ``restore(token)``."""
    return _extobj_contextvar.set(_IGNORE_ALL)

  def restore(token):
    _extobj_contextvar.reset(token)
else:
  def ignore():
    """Ignores floating-point errors until ``restore(token)``."""
    return np.seterr(all="ignore")

  def restore(token):
    np.seterr(**token)
