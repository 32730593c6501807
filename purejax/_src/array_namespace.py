"""The array namespace of an implementation's operands: NumPy's, or CuPy's
for arrays on a GPU.  A primitive's NumPy implementation that creates
arrays takes the functions that do so from here, so that the one
implementation also runs on device arrays (the GPU backend runs those
marked ``impl_on_gpu_arrays`` on them; other NumPy functions dispatch to
CuPy by themselves, through ``__array_function__``)."""
import numpy as np


def of(*arrays):
  """``numpy``, or the CuPy module when one of ``arrays`` is a CuPy array."""
  for a in arrays:
    if type(a) is not np.ndarray and hasattr(a, "__array_function__") \
        and not isinstance(a, np.generic):
      from purejax._src.backends.cuda import gpu_runtime
      if gpu_runtime.is_buffer(a):
        return gpu_runtime.cupy()
  return np


def contiguous(x):
  """``x`` C-contiguous, NumPy's or CuPy's (``np.ascontiguousarray`` takes
  only NumPy's)."""
  return x if x.flags.c_contiguous else x.copy(order="C")


def stable_argsort(x):
  """The stable argsort of 1-d ``x`` (CuPy's sort is stable and takes no
  ``kind``)."""
  xp = of(x)
  return np.argsort(x, kind="stable") if xp is np else xp.argsort(x)


def sliding_window_view(x, window_shape, axis):
  """``numpy.lib.stride_tricks.sliding_window_view`` of NumPy's or CuPy's
  array (NumPy 2 moved the function's module, which CuPy's dispatch looks
  up by name)."""
  xp = of(x)
  return xp.lib.stride_tricks.sliding_window_view(x, window_shape, axis=axis)
