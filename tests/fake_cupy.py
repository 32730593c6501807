"""A stand-in for CuPy on the CPU, for the GPU backend's tests
(``gpu_runtime.use(fake_cupy.FakeCupy(n))``).

Its arrays wrap NumPy arrays and, like CuPy's, refuse implicit conversion
(``np.asarray`` raises TypeError): a value that leaves the "GPU" without an
explicit transfer fails the test.  Transfers are counted.  ``RawModule``
compiles the CUDA source through the emulation (the system C++ compiler,
threads run as loops), so every kernel the backend launches really runs;
cuSOLVER and cuBLAS are LAPACK's routines (tests/fake_cusolver.py).
"""
import contextlib
import re
import types

import numpy as np

from purejax._src.backends.cuda import emulation
from tests.fake_cusolver import FakeSolverLibraries

_KERNEL = re.compile(r'extern "C" __global__ void (\w+)\(([^)]*)\)')


def _supported(a):
  """``a``, unless CuPy has no such dtype (bfloat16 and ml_dtypes' others)."""
  if a.dtype.kind == "V":
    raise TypeError(f"Unsupported dtype {a.dtype}")
  return a


class FakeCupy(types.SimpleNamespace):
  """A CuPy-like module with ``count`` GPUs."""

  def __init__(self, count=1, name="Fake GPU"):
    super().__init__()
    fake = self
    self.current = 0
    self.transfers = {"to_device": 0, "to_host": 0}
    self.host_copies = []   # the shapes of the arrays copied to the host, in order
    self.launches = []   # kernel names, in order
    self.compiled_sources = []
    # A CUDA graph being captured: the device operations in order, each
    # replayed by Graph.launch into the same buffers (fixed addresses).
    self.capturing = None
    self.graph_launches = 0
    self.stream_waits = 0   # streams synchronized

    class ndarray:   # noqa: N801  (CuPy's name)
      def __init__(self, host, device_id):
        self._a, self.device = host, types.SimpleNamespace(id=device_id)

      shape = property(lambda self: self._a.shape)
      dtype = property(lambda self: self._a.dtype)
      size = property(lambda self: self._a.size)
      ndim = property(lambda self: self._a.ndim)
      nbytes = property(lambda self: self._a.nbytes)
      strides = property(lambda self: self._a.strides)
      data = property(lambda self: types.SimpleNamespace(ptr=self._a.ctypes.data))

      def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

      flags = property(lambda self: self._a.flags)
      T = property(lambda self: ndarray(self._a.T, self.device.id))

      # As CuPy's: a size-1 array converts to a Python scalar (a copy to the host).
      def __bool__(self):
        return bool(self.get())

      def __int__(self):
        return int(self.get())

      def __float__(self):
        return float(self.get())

      def get(self):
        if fake.capturing is not None:
          raise RuntimeError("cudaErrorStreamCaptureUnsupported: a copy to the host")
        fake.transfers["to_host"] += 1
        fake.host_copies.append(self.shape)
        return self._a.copy()

      # As CuPy's arrays: NumPy's functions and ufuncs applied to them run
      # "on the device" (here: on the wrapped arrays) and give device arrays.
      def __array_function__(self, func, types, args, kwargs):
        return _on_device(func, args, kwargs)

      def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        if method == "at":   # CuPy's uses atomics: repeated positions in any order
          raise AssertionError(f"{ufunc.__name__}.at on a device array is not deterministic")
        return _on_device(getattr(ufunc, method), args, kwargs)

      def __setitem__(self, index, value):
        index = unwrap(index)
        if isinstance(index, np.ndarray) and index.dtype.kind in "iu":
          # CuPy writes repeated positions in any order: which value stays is undefined.
          first = index.ravel() % max(1, self._a.shape[0])   # (negative ones wrap)
          if np.unique(first).size != first.size:
            raise AssertionError("assignment to repeated positions of a device array")
        self._a[index] = unwrap(value)
        record(lambda: self._a.__setitem__(index, unwrap(value)))

      def __getitem__(self, index):
        return _on_device(lambda a, i: a[i], (self, index), {})

      def __getattr__(self, name):   # methods: reshape, astype, copy, sum...
        method = getattr(self._a, name)
        if not callable(method):
          raise AttributeError(name)
        return lambda *args, **kwargs: _on_device(
            lambda *a, **k: getattr(a[0], name)(*a[1:], **k), (self,) + args, kwargs)

      def __repr__(self):
        return f"fake_cupy.ndarray({self._a!r}, device={self.device.id})"

    # Python's operators, as CuPy's arrays have them.
    import operator
    for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
               "or", "xor", "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne"):
      fn = getattr(operator, op + "_" if op in ("and", "or") else op)
      setattr(ndarray, f"__{op}__", lambda self, other, fn=fn: _on_device(fn, (self, other), {}))
      setattr(ndarray, f"__r{op}__",
              lambda self, other, fn=fn: _on_device(fn, (other, self), {}))
    for op in ("neg", "pos", "invert", "abs"):
      fn = getattr(operator, op)
      setattr(ndarray, f"__{op}__", lambda self, fn=fn: _on_device(fn, (self,), {}))
    ndarray.__hash__ = None
    self.ndarray = ndarray

    def unwrap(x):
      if isinstance(x, ndarray):
        return x._a
      if isinstance(x, (list, tuple)):
        return type(x)(unwrap(v) for v in x)
      if isinstance(x, np.ndarray):   # CuPy refuses host arrays (0-d too; scalars pass)
        raise TypeError("Unsupported type <class 'numpy.ndarray'>")
      return x

    def wrap(x):
      if isinstance(x, (np.ndarray, np.generic)):   # CuPy gives 0-d arrays, not scalars
        return ndarray(_supported(np.asarray(x)), fake.current)
      if isinstance(x, (list, tuple)):
        return type(x)(wrap(v) for v in x)
      return x

    def compute(func, args, kwargs):
      return func(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})

    def _on_device(func, args, kwargs):
      out = wrap(compute(func, args, kwargs))
      if not getattr(func, "__name__", "").startswith("empty"):   # (allocation only)
        record(lambda: _overwrite(out, compute(func, args, kwargs)))
      return out

    def _overwrite(out, value):
      if isinstance(out, ndarray):
        np.copyto(out._a, value)
      elif isinstance(out, (list, tuple)):
        for o, v in zip(out, value):
          _overwrite(o, v)

    def record(replay):
      if fake.capturing is not None:
        fake.capturing.append(replay)
    self.record = record

    def array(value, dtype=None, copy=True):
      if isinstance(value, ndarray):
        return _on_device(lambda v: np.array(v, dtype=dtype), (value,), {})
      if fake.capturing is not None:
        raise RuntimeError("cudaErrorStreamCaptureUnsupported: a copy from the host")
      fake.transfers["to_device"] += 1
      return ndarray(_supported(np.array(value, dtype=dtype)), fake.current)

    self.array = array
    self.asarray = lambda value, dtype=None: (
        value if isinstance(value, ndarray) and dtype in (None, value.dtype)
        else array(value, dtype))
    self.asnumpy = lambda a: a.get() if isinstance(a, ndarray) else np.asarray(a)
    self.empty = lambda shape, dtype=float: ndarray(_supported(np.empty(shape, dtype)),
                                                    fake.current)

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
    # cuSOLVER and cuBLAS: LAPACK's routines on the arrays' memory
    self.solver_libraries = FakeSolverLibraries()
    self.solver_libraries.record = record

    class Stream:   # a capture records the operations; its graph replays them
      def __init__(self, non_blocking=False):
        pass

      def __enter__(self):
        return self

      def __exit__(self, *exc):
        return False

      def begin_capture(self, mode=None):
        assert fake.capturing is None
        fake.capturing = []

      def end_capture(self):
        tape, fake.capturing = fake.capturing, None
        return types.SimpleNamespace(launch=lambda stream=None: replay(tape))

      def synchronize(self):
        fake.stream_waits += 1

    def replay(tape):
      fake.graph_launches += 1
      for operation in tape:
        operation()

    class MemoryPool:
      def malloc(self, size):
        raise AssertionError("the stand-in allocates NumPy memory")

    self.cuda = types.SimpleNamespace(runtime=runtime, Device=device,
                                      cusolver=self.solver_libraries.cusolver,
                                      cublas=self.solver_libraries.cublas,
                                      device=self.solver_libraries.device,
                                      Stream=Stream, MemoryPool=MemoryPool,
                                      get_current_stream=lambda: Stream(),
                                      using_allocator=lambda malloc: contextlib.nullcontext())

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
          run = lambda: self._module.run(name, grid[0], block[0], [a._a for a in args])
          run()
          record(run)
        return launch

    self.RawModule = RawModule
    self._on_device = _on_device
    # CuPy's sorts are radix sorts: stable, and without a kind parameter
    self.argsort = lambda a, axis=-1: _on_device(
        lambda v: np.argsort(v, axis=axis, kind="stable"), (a,), {})
    self.sort = lambda a, axis=-1: _on_device(
        lambda v: np.sort(v, axis=axis, kind="stable"), (a,), {})
    # cupy.fft (cuFFT): NumPy's FFTs on the device arrays (single precision
    # kept, as CuPy's and NumPy 2's); the calls are logged.
    self.fft_calls = []

    def fft_function(name):
      def run(a, s=None, axes=None, norm=None):
        fake.fft_calls.append(name)
        return _on_device(lambda v: getattr(np.fft, name)(v, s=s, axes=axes, norm=norm),
                          (a,), {})
      return run
    self.fft = types.SimpleNamespace(**{name: fft_function(name)
                                        for name in ("fftn", "ifftn", "rfftn", "irfftn")})

  def __getattr__(self, name):   # cupy.zeros, cupy.matmul...: NumPy's, on the device
    func = getattr(np, name)
    if not callable(func):
      return func
    on_device = self.__dict__["_on_device"]
    return lambda *args, **kwargs: on_device(func, args, kwargs)
