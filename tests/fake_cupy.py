"""A stand-in for CuPy on the CPU, for the GPU backend's tests
(``gpu_runtime.use(fake_cupy.FakeCupy(n))``).

Its arrays wrap NumPy arrays and, like CuPy's, refuse implicit conversion
(``np.asarray`` raises TypeError): a value that leaves the "GPU" without an
explicit transfer fails the test.  Transfers are counted.  ``RawModule``
compiles the CUDA source through the emulation (the system C++ compiler,
threads run as loops), so every kernel the backend launches really runs.
"""
import contextlib
import re
import types

import numpy as np

from purejax._src.backends.cuda import emulation

_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\)')


class FakeCupy(types.SimpleNamespace):
  """A CuPy-like module with ``count`` GPUs."""

  def __init__(self, count=1, name="Fake GPU"):
    super().__init__()
    fake = self
    self.current = 0
    self.transfers = {"to_device": 0, "to_host": 0}
    self.launches = []   # kernel names, in order
    self.compiled_sources = []

    class ndarray:   # noqa: N801  (CuPy's name)
      def __init__(self, host, device_id):
        self._a, self.device = host, types.SimpleNamespace(id=device_id)

      shape = property(lambda self: self._a.shape)
      dtype = property(lambda self: self._a.dtype)
      size = property(lambda self: self._a.size)
      ndim = property(lambda self: self._a.ndim)
      nbytes = property(lambda self: self._a.nbytes)
      data = property(lambda self: types.SimpleNamespace(ptr=self._a.ctypes.data))

      def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

      def get(self):
        fake.transfers["to_host"] += 1
        return self._a.copy()

      def reshape(self, *shape):
        return ndarray(self._a.reshape(*shape), self.device.id)

      def __repr__(self):
        return f"fake_cupy.ndarray({self._a!r}, device={self.device.id})"

    self.ndarray = ndarray

    def array(value, dtype=None, copy=True):
      if isinstance(value, ndarray):
        return ndarray(np.array(value._a, dtype=dtype), fake.current)
      fake.transfers["to_device"] += 1
      return ndarray(np.array(value, dtype=dtype), fake.current)

    self.array = array
    self.asarray = lambda value, dtype=None: (
        value if isinstance(value, ndarray) and dtype in (None, value.dtype)
        else array(value, dtype))
    self.asnumpy = lambda a: a.get() if isinstance(a, ndarray) else np.asarray(a)
    self.empty = lambda shape, dtype=float: ndarray(np.empty(shape, dtype), fake.current)

    @contextlib.contextmanager
    def device(index):
      if not 0 <= index < count:
        raise RuntimeError(f"CUDA error: invalid device ordinal {index}")
      previous, fake.current = fake.current, index
      try:
        yield
      finally:
        fake.current = previous

    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: count,
        getDeviceProperties=lambda i: {"name": name.encode()},
        deviceSynchronize=lambda: None)
    self.cuda = types.SimpleNamespace(runtime=runtime, Device=device)

    class RawModule:
      def __init__(self, code, options=()):
        assert "--fmad=false" in options
        functions = [(n, [p.strip() for p in params.split(",") if p.strip()])
                     for n, params in _KERNEL.findall(code)]
        fake.compiled_sources.append(code)
        self._module = emulation.EmulatedModule(code, functions)

      def get_function(self, name):
        def launch(grid, block, args):
          fake.launches.append(name)
          for a in args:
            assert isinstance(a, ndarray), f"kernel {name} got {type(a).__name__}"
          self._module.run(name, grid[0], block[0], [a._a for a in args])
        return launch

    self.RawModule = RawModule
