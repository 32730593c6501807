"""``ShapeDtypeStruct``: a shape and dtype standing in for an array (what
``eval_shape`` returns, what ``jit(f).lower`` and ``eval_shape`` accept)."""
import numpy as np

from purejax._src import core
from purejax._src import dtypes


class ShapeDtypeStruct:
  """A shape and dtype standing in for an array (``eval_shape``'s results)."""
  __slots__ = ("shape", "dtype", "weak_type", "sharding")

  def __init__(self, shape, dtype, weak_type=False, sharding=None):
    if dtype is None:
      raise ValueError("ShapeDtypeStruct: dtype must be specified.")
    self.shape = tuple(shape)
    self.dtype = dtype if dtypes.is_extended(dtype) else np.dtype(dtype)
    self.weak_type = weak_type
    self.sharding = sharding

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape)))

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  @classmethod
  def like(cls, x):
    """The shape and (canonical) dtype of array-like ``x``."""
    dtype = x.dtype if dtypes.is_extended(getattr(x, "dtype", None)) else \
        dtypes.canonicalize_dtype(dtypes.dtype(x))
    return cls(np.shape(x), dtype)

  def update(self, **kwargs):
    """A copy with the given fields (shape, dtype, weak_type, sharding) replaced."""
    fields = dict(shape=self.shape, dtype=self.dtype, weak_type=self.weak_type,
                  sharding=self.sharding)
    fields.update(kwargs)
    return ShapeDtypeStruct(**fields)

  @property
  def aval(self):
    return core.ShapedArray(self.shape, self.dtype, self.weak_type)

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

  def __eq__(self, other):
    return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type)

  def __hash__(self):
    return hash((self.shape, self.dtype, self.weak_type))
