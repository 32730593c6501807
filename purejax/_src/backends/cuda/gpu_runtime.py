"""The GPU backend's one seam to CuPy: finding it and its devices, moving
arrays between host and device, compiling modules through NVRTC and
launching their kernels.  Nothing else in purejax imports CuPy (``solver``
calls cuSOLVER through the module this one found).

``use(module)`` puts a stand-in in CuPy's place: the tests run every GPU
code path on the CPU with one whose arrays are NumPy arrays that refuse
implicit conversion (as CuPy's do) and whose ``RawModule`` compiles the
CUDA source through ``emulation``.
"""
import numpy as np

_UNKNOWN = object()
_cupy = _UNKNOWN   # the CuPy module in use; None when there is none (looked up once)

# NVRTC options: C++17 for the prelude, and no FMA contraction, so that
# products and sums round as the C backend's do.
NVRTC_OPTIONS = ("--std=c++17", "--fmad=false")


def use(module):
  """Use ``module`` (CuPy's API) from now on; ``None``: no GPU; ``"detect"``:
  look CuPy up again.  For tests."""
  global _cupy
  _cupy = _UNKNOWN if module == "detect" else module
  from purejax._src import devices
  devices.gpu_devices_changed()


def cupy():
  """The CuPy module, or None without CuPy or without a usable GPU."""
  global _cupy
  if _cupy is _UNKNOWN:
    _cupy = _find_cupy()
  return _cupy


def _find_cupy():
  try:
    import cupy as cp
  except Exception:   # noqa: BLE001  (absent, or a broken CUDA installation)
    return None
  try:
    return cp if cp.cuda.runtime.getDeviceCount() > 0 else None
  except Exception:   # noqa: BLE001  (no driver, no device)
    return None


def device_count():
  cp = cupy()
  return 0 if cp is None else int(cp.cuda.runtime.getDeviceCount())


def device_kind(index):
  """The GPU's name, as JAX's ``device_kind`` gives it ("NVIDIA H200")."""
  name = cupy().cuda.runtime.getDeviceProperties(index)["name"]
  return name.decode() if isinstance(name, bytes) else str(name)


def storage_dtype(dtype):
  """The dtype of the device buffers holding values of ``dtype``: CuPy has
  no bfloat16 (nor ml_dtypes' other types), so those are held as their
  bits, unsigned integers of their size (the kernels read them so)."""
  dtype = np.dtype(dtype)
  return np.dtype(f"u{dtype.itemsize}") if dtype.kind == "V" else dtype


def is_buffer(value):
  """Whether ``value`` is a device array (CuPy's ndarray)."""
  cp = cupy()
  return cp is not None and isinstance(value, cp.ndarray)


def to_device(value, index):
  """A copy of the host array ``value`` on GPU ``index`` (in its
  ``storage_dtype``)."""
  cp = cupy()
  value = np.asarray(value, order="C")
  storage = storage_dtype(value.dtype)
  with cp.cuda.Device(index):
    return cp.array(value if storage == value.dtype else value.view(storage), copy=True)


def to_host(buffer, dtype=None):
  """The device array ``buffer`` copied to a read-only NumPy array, of
  ``dtype`` where the buffer holds that dtype's bits."""
  out = cupy().asnumpy(buffer)
  if dtype is not None and out.dtype != dtype and storage_dtype(dtype) == out.dtype:
    out = out.view(dtype)
  out.setflags(write=False)
  return out


def empty(shape, dtype, index):
  cp = cupy()
  with cp.cuda.Device(index):
    return cp.empty(shape, storage_dtype(dtype))


def full(shape, value, dtype, index):
  """An array of ``shape`` filled with ``value`` on GPU ``index``, by a fill
  kernel (nothing copied from the host); a type held as its bits is filled
  with the value's bits."""
  cp = cupy()
  value = np.asarray(value, dtype)
  storage = storage_dtype(dtype)
  with cp.cuda.Device(index):
    return cp.full(shape, value.view(storage)[()] if storage != value.dtype else value[()],
                   dtype=storage)


def synchronize(index):
  """Waits until GPU ``index`` has run everything launched on it."""
  cp = cupy()
  with cp.cuda.Device(index):
    cp.cuda.runtime.deviceSynchronize()


def finish_stream(index):
  """Waits until this thread's current stream on GPU ``index`` has run what
  was launched on it (other threads' streams may be CuPy's per-thread
  default streams, which do not wait for it)."""
  cp = cupy()
  with cp.cuda.Device(index):
    cp.cuda.get_current_stream().synchronize()


class DeviceModule:
  """A CUDA module compiled by NVRTC (CuPy keeps the compiled code in its
  disk cache, keyed by source and options); ``launch`` runs one
  ``kernels.Launch`` on device arrays given in its argument order."""

  def __init__(self, source, index):
    cp = cupy()
    self._index = index
    with cp.cuda.Device(index):
      self._module = cp.RawModule(code=source, options=NVRTC_OPTIONS)
    self._functions = {}

  def launch(self, launch, buffers):
    fn = self._functions.get(launch.function)
    if fn is None:
      fn = self._functions[launch.function] = self._module.get_function(launch.function)
    fn((launch.grid,), (launch.threads,), tuple(buffers))
