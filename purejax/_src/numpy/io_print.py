"""Arrays in and out of Python: saving and loading (NumPy's formats),
building arrays from buffers, strings and DLPack capsules, and printing.

These work on concrete values only: they are NumPy's functions around a
conversion, as in JAX.  Arrays print through NumPy, so NumPy's print
options apply to them.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.numpy import creation

# NumPy's own functions, as jax.numpy exports them: an Array converts itself.
save = np.save
savez = np.savez
array_repr = np.array_repr
array_str = np.array_str


def get_printoptions():
  """NumPy's print options (they govern how Arrays print)."""
  return np.get_printoptions()


def printoptions(*args, **kwargs):
  """Context manager setting NumPy's print options, which Arrays follow."""
  return np.printoptions(*args, **kwargs)


def set_printoptions(*args, **kwargs):
  """Sets NumPy's print options, which Arrays follow."""
  return np.set_printoptions(*args, **kwargs)


def load(file, *args, **kwargs):
  """``np.load``, returning an Array for .npy data (bfloat16, which NumPy
  stores as raw 2-byte records, is restored); .npz archives stay NumPy's."""
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray):
    if out.dtype == "V2":
      out = out.view(dtypes.bfloat16)
    try:
      out = creation.asarray(out)
    except (TypeError, AssertionError):   # a dtype Arrays cannot hold
      pass
  return out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
  """An Array of the data in a bytes-like ``buffer``."""
  return creation.asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count,
                                        offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
  """An Array of the numbers in a text ``string`` separated by ``sep``."""
  return creation.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
  """Not provided, as in JAX: reading a file is a side effect."""
  raise NotImplementedError(
      "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
      "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) "
      "instead, although care should be taken if np.fromfile is used within a jax "
      "transformations because of its potential side-effect of consuming the file object.")


def fromiter(*args, **kwargs):
  """Refused, as in JAX: consuming an iterator is a side effect."""
  raise NotImplementedError(
      "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
      "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) "
      "instead, although care should be taken if np.fromiter is used within a jax "
      "transformations because of its potential side-effect of consuming the iterable "
      "object; for more information see "
      "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")


def from_dlpack(x, /, *, device=None, copy=None):
  """An Array of an object exporting ``__dlpack__`` (read through NumPy, so
  only CPU data is accepted)."""
  if isinstance(x, core.ArrayBase):
    return creation.array(x, copy=bool(copy))
  return creation.asarray(np.from_dlpack(x, copy=copy))
