"""The old ``jax.ops`` index-update functions, kept for old code.

Each warns with a DeprecationWarning and forwards to ``x.at[idx]``.
"""
import warnings

from purejax._src.numpy import index_update as _updates
from purejax._src.numpy import util


class _Indexable:
  """``index[1, :]`` returns the index ``(1, slice(None))`` itself."""
  __slots__ = ()

  def __getitem__(self, idx):
    return idx

  def __repr__(self):
    return "jax.ops.index"


index = _Indexable()


def _deprecated(name, method):
  def fun(x, idx, y, indices_are_sorted=False, unique_indices=False):
    warnings.warn(f"jax.ops.{name} is deprecated: use x.at[idx].{method}(y) instead.",
                  DeprecationWarning, stacklevel=2)
    ref = _updates._IndexUpdateRef(util.asarray(x), idx)
    return getattr(ref, method)(y, indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"Deprecated: ``{name}(x, idx, y)`` is ``x.at[idx].{method}(y)``."
  return fun


index_update = _deprecated("index_update", "set")
index_add = _deprecated("index_add", "add")
index_mul = _deprecated("index_mul", "multiply")
index_min = _deprecated("index_min", "min")
index_max = _deprecated("index_max", "max")
