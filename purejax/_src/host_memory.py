"""Copies of large host arrays taken in by purejax (``jnp.asarray`` of a
NumPy array, ``device_put``, a NumPy argument of a jitted call), each in
its own anonymous mapping with transparent huge pages asked for.

With the malloc tuning (``backends/malloc_tuning.py``) every allocation
below 256 MB comes from malloc's heap, whose memory has 4 KB pages where
transparent huge pages are given on request only (``madvise``, a common
default): kernels that walk a large array across its rows (column sums,
reductions over outer axes) then miss the TLB on every row.  A 4096x4096
float32 matrix reduced along each axis took 19.3 ms from the heap and
15.6 ms from 2 MB pages.  A transfer is a one-time copy, so its fresh
pages cost once; arrays computed on every call keep reusing heap memory.
"""
import mmap

import numpy as np

# Copies from this size get their own mapping.
LARGE_BYTES = 16 << 20


def copy(value, dtype=None):
  """A C-contiguous copy of NumPy array ``value``, converted to ``dtype``
  if given (``np.array(value, dtype=dtype)``)."""
  dtype = value.dtype if dtype is None else np.dtype(dtype)
  nbytes = value.size * dtype.itemsize
  if nbytes < LARGE_BYTES or dtype.hasobject or value.dtype.hasobject:
    return np.array(value, dtype=dtype)
  try:
    # Private: a shared anonymous mapping is shmem, which gets no huge pages.
    buffer = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
      buffer.madvise(mmap.MADV_HUGEPAGE)
  except (OSError, ValueError, AttributeError):
    return np.array(value, dtype=dtype)
  out = np.frombuffer(buffer, dtype=dtype, count=value.size).reshape(value.shape)
  np.copyto(out, value, casting="unsafe")   # as np.array(value, dtype) converts
  return out
