"""Operators and methods of arrays and tracers (``x + y``, ``x[i]``, ``x.sum()``,
``x.at[i].set(v)``), installed on ``core.ArrayBase`` by ``install()``.

They are thin forwards to the ``jnp`` functions, so an Array and every kind
of tracer behave alike.
"""
import numpy as np

from purejax._src import core
from purejax._src.array import Array
from purejax._src.numpy import creation
from purejax._src.numpy import cumulative
from purejax._src.numpy import index_update
from purejax._src.numpy import indexing
from purejax._src.numpy import manipulation
from purejax._src.numpy import products
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import sorting
from purejax._src.numpy import take_put
from purejax._src.numpy import ufuncs

# Operands a binary operator accepts; these others make it raise at once
# (a list would otherwise be traced element by element).
_ACCEPTED = (core.ArrayBase, np.ndarray, np.generic, bool, int, float, complex)
_REJECTED = (list, tuple, set, dict)


def _binary_op(symbol, fun, swap=False):
  def op(self, other):
    if type(other) is not Array and hasattr(other, "__jax_array__"):
      other = other.__jax_array__()
    args = (other, self) if swap else (self, other)
    if isinstance(other, _ACCEPTED):
      return fun(*args)
    if isinstance(other, _REJECTED):
      raise TypeError(f"unsupported operand type(s) for {symbol}: "
                      f"{type(args[0]).__name__!r} and {type(args[1]).__name__!r}")
    return NotImplemented
  return op


_BINARY = {
    "add": ("+", ufuncs.add), "sub": ("-", ufuncs.subtract),
    "mul": ("*", ufuncs.multiply), "truediv": ("/", ufuncs.true_divide),
    "floordiv": ("//", ufuncs.floor_divide), "mod": ("%", ufuncs.remainder),
    "divmod": ("divmod()", ufuncs.divmod), "pow": ("**", ufuncs.power),
    "matmul": ("@", products.matmul), "and": ("&", ufuncs.bitwise_and),
    "or": ("|", ufuncs.bitwise_or), "xor": ("^", ufuncs.bitwise_xor),
    "lshift": ("<<", ufuncs.left_shift), "rshift": (">>", ufuncs.right_shift),
}

_COMPARISONS = {
    "eq": ("==", ufuncs.equal), "ne": ("!=", ufuncs.not_equal),
    "lt": ("<", ufuncs.less), "le": ("<=", ufuncs.less_equal),
    "gt": (">", ufuncs.greater), "ge": (">=", ufuncs.greater_equal),
}


def _round(self, ndigits=None):
  # Python's round(x) gives an integer; round(x, n) keeps the dtype.
  out = ufuncs.round(self, ndigits or 0)
  return out if ndigits is not None else creation.astype(out, int)


# ---------------------------------------------------------------------------
# Methods

def _astype(self, dtype, copy=False, device=None):
  return creation.astype(self, dtype, copy=copy, device=device)


def _reshape(self, *args, order="C", shape=None, out_sharding=None):
  if shape is not None:
    if args:
      raise TypeError("reshape() got multiple values for argument 'shape'")
    new_shape = shape
  elif len(args) == 1:
    new_shape = args[0]
  else:
    new_shape = args
  return shape_ops.reshape(self, new_shape, order=order, out_sharding=out_sharding)


def _transpose(self, *args):
  if not args:
    axes = None
  elif len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple, list))):
    axes = args[0]
  else:
    axes = args
  return shape_ops.transpose(self, axes)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
  return take_put.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _view(self, dtype=None, type=None):
  """The same bytes read as ``dtype`` (NumPy's ``view``): a different
  item size changes the length of the last axis."""
  from purejax import lax
  from purejax._src import dtypes
  if type is not None:
    raise NotImplementedError("`type` argument of array.view() is not supported.")
  if dtype is None:
    return self
  new = np.dtype(dtypes.canonicalize_user_dtype(dtype))
  x = self
  if x.dtype == new:
    return x
  if x.dtype == np.bool_:
    x = lax.convert_element_type(x, np.uint8)
  target = np.uint8 if new == np.bool_ else new
  old_size, new_size = x.dtype.itemsize, np.dtype(target).itemsize
  if old_size != new_size and x.ndim == 0:
    raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
  if new_size > old_size:
    ratio = new_size // old_size
    if x.shape[-1] % ratio:
      raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                       "total size in bytes of the last axis of the array.")
    x = lax.reshape(x, x.shape[:-1] + (x.shape[-1] // ratio, ratio))
  out = lax.bitcast_convert_type(x, target)
  if new_size < old_size:
    out = lax.reshape(out, out.shape[:-2] + (out.shape[-2] * out.shape[-1],))
  return lax.ne(out, np.uint8(0)) if new == np.bool_ else out


def _tobytes(self, order="C"):
  return np.asarray(self).tobytes(order)


_METHODS = {
    "__getitem__": indexing.getitem,
    "__neg__": ufuncs.negative, "__pos__": ufuncs.positive, "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.invert,
    "__round__": _round,
    "at": property(index_update._IndexUpdateHelper, doc="Indexed updates: x.at[i].set(v)."),
    "T": property(lambda self: shape_ops.transpose(self)),
    "mT": property(shape_ops.matrix_transpose),
    "real": property(ufuncs.real), "imag": property(ufuncs.imag),
    "conj": ufuncs.conjugate, "conjugate": ufuncs.conjugate,
    "astype": _astype, "reshape": _reshape, "transpose": _transpose,
    "ravel": lambda self, order="C": shape_ops.ravel(self, order),
    "flatten": lambda self, order="C": shape_ops.ravel(self, order),
    "squeeze": lambda self, axis=None: shape_ops.squeeze(self, axis),
    "swapaxes": shape_ops.swapaxes,
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max,
    "min": reductions.min, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "all": reductions.all, "any": reductions.any,
    "argmax": reductions.argmax, "argmin": reductions.argmin,
    "dot": products.dot,
    "clip": ufuncs.clip,
    "round": lambda self, decimals=0, out=None: ufuncs.round(self, decimals, out),
    "copy": lambda self, order=None: creation.array(self, copy=True),
    "ptp": reductions.ptp,
    "cumsum": cumulative.cumsum, "cumprod": cumulative.cumprod,
    "sort": sorting.sort, "argsort": sorting.argsort,
    "argpartition": sorting.argpartition, "searchsorted": sorting.searchsorted,
    "take": take_put.take, "nonzero": take_put.nonzero, "choose": take_put.choose,
    "compress": _compress,
    "repeat": manipulation.repeat, "trace": products.trace, "diagonal": creation.diagonal,
    "tobytes": _tobytes, "view": _view,
}


def install():
  """Gives arrays and tracers their operators and methods (idempotent)."""
  for name, (symbol, fun) in _BINARY.items():
    setattr(core.ArrayBase, f"__{name}__", _binary_op(symbol, fun))
    setattr(core.ArrayBase, f"__r{name}__", _binary_op(symbol, fun, swap=True))
  for name, (symbol, fun) in _COMPARISONS.items():
    setattr(core.ArrayBase, f"__{name}__", _binary_op(symbol, fun))
  for name, value in _METHODS.items():
    setattr(core.ArrayBase, name, value)

