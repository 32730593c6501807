"""Finding OpenBLAS's per-thread thread-count setter in the OpenBLAS that
NumPy or SciPy bundles (``libscipy_openblas*.so`` next to the package), so
that a call can run with the threads it needs and no more."""
import ctypes
import functools
import glob
import os


@functools.lru_cache(maxsize=None)
def threads_setter(libs_dir, also_global=False):
  """``openblas_set_num_threads_local`` (int -> previous int) from the
  OpenBLAS in ``libs_dir`` (with ``also_global``: else from one loaded into
  the process), or None."""
  candidates = sorted(glob.glob(os.path.join(libs_dir, "libscipy_openblas*.so*")))
  for path in candidates + ([None] if also_global else []):
    try:
      fn = ctypes.CDLL(path).openblas_set_num_threads_local
    except (OSError, AttributeError):
      continue
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
    return fn
  return None


def scipy_libs():
  import scipy
  return os.path.dirname(scipy.__file__) + ".libs"


def numpy_libs():
  import numpy as np
  return os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
