"""Type annotations for purejax programs, as ``jax.typing``.

``ArrayLike``: what purejax functions accept as an array (Arrays, NumPy
arrays and scalars, Python scalars).  ``DTypeLike``: what they accept as a
dtype (a name, a scalar type, a ``np.dtype`` or anything with a ``dtype``).
"""
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from purejax._src.basearray import Array as _Array


@runtime_checkable
class SupportsDType(Protocol):
  @property
  def dtype(self) -> np.dtype: ...


ArrayLike = Union[_Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
