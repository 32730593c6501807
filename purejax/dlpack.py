"""DLPack interchange, as ``jax.dlpack``: ``from_dlpack`` reads any object
with ``__dlpack__``/``__dlpack_device__`` (NumPy arrays, CPU tensors of
other libraries) through NumPy's DLPack support.  Only CPU buffers can be
read; purejax Arrays are exported with ``np.asarray`` rather than DLPack."""
import numpy as np

from purejax._src import dtypes as _dtypes

_SUPPORTED = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, _dtypes.bfloat16, np.float32, np.float64, np.complex64,
    np.complex128))


def is_supported_dtype(dtype):
  """Whether arrays of ``dtype`` can go through DLPack."""
  return np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array, device=None, copy=None):
  """An Array with the contents of ``external_array`` (always a copy here;
  ``device`` may only be the CPU device).  As ``jnp.asarray``, 64-bit types
  become 32-bit ones unless x64 is enabled."""
  if not (hasattr(external_array, "__dlpack__")
          and hasattr(external_array, "__dlpack_device__")):
    raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                    "__dlpack_device__ methods.")
  if device is not None and getattr(device, "platform", "cpu") != "cpu":
    raise ValueError(f"from_dlpack: purejax has only the CPU device, got {device}")
  from purejax import numpy as jnp
  return jnp.array(np.from_dlpack(external_array))


__all__ = ["from_dlpack", "is_supported_dtype"]
