"""Backends run jitted jaxprs: ``numpy`` (the reference, one NumPy call per
equation) and ``cpu`` (fused loops compiled through the system C compiler).

``compile_jaxpr`` picks one by the ``purejax_backend`` flag
(PUREJAX_BACKEND=cpu|numpy).  When the C backend cannot compile a jaxpr (no
compiler, a compiler error) the NumPy backend runs it, with a warning given
once per reason.

Compilation is tiered: unless ``purejax_compile_sync`` is set, the first
calls run on the NumPy backend; once a jaxpr is called a second time its C
code is compiled in a background thread, and the compiled version takes over
when it is ready.  Only jaxprs that both backends compute bit for bit are
tiered (``tier_numerics``); the others compile before their first call, so
that every call gives the same bits.
"""
import threading
import warnings

import numpy as np

from purejax._src.config import config
from purejax._src.backends import malloc_tuning, numpy_backend, tier_numerics

if config.purejax_malloc_tuning:   # once, at import (malloc_tuning.py says why)
  malloc_tuning.apply()

_warned = set()


def _warn_once(reason):
  if reason not in _warned:
    _warned.add(reason)
    warnings.warn(f"purejax: the C backend is not used ({reason}); jit runs on the "
                  "NumPy backend.", RuntimeWarning, stacklevel=4)


def compile_jaxpr(jaxpr, backend=None, num_threads=None, device_index=0):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running the
  const-free ``jaxpr`` on ``backend`` (default: the configured one);
  ``num_threads``: the C kernels' threads (default: the flag's).
  ``backend="cuda"``: on GPU ``device_index``, taking and giving CuPy arrays."""
  backend = backend or config.purejax_backend
  from purejax._src.random import key_lowering
  lowered = key_lowering.lower_jaxpr(jaxpr)
  if lowered is not None:   # typed PRNG keys: run on their uint32 key data
    return _WithConsts(compile_jaxpr(lowered[0], backend, num_threads, device_index),
                       lowered[1])
  if backend == "cuda_emulation":   # the GPU backend's kernels, emulated (tests)
    from purejax._src.backends.cuda import runner
    return runner.compile_jaxpr(jaxpr)
  if backend == "cuda":
    from purejax._src.backends.cuda import graphs, runner
    device = runner.CupyDevice(device_index)
    run = runner.compile_jaxpr(jaxpr, device)
    if config.purejax_cuda_graphs:
      return graphs.Replayed(run, device, [v.aval for v in jaxpr.invars])
    return run
  if backend != "cpu":
    return numpy_backend.compile_jaxpr(jaxpr)
  if (config.purejax_compile_sync or not tier_numerics.numpy_tier_exact(jaxpr)
      or _tier_work(jaxpr) > _MAX_TIER_ELEMENTS):
    return _compile_cpu(jaxpr, num_threads)
  return _Tiered(jaxpr, num_threads)


# A jaxpr computing more elements than this compiles before its first call:
# its NumPy tier (the float32 transcendentals' exact twins take ~100 ns an
# element) would take longer than gcc does (~0.1-0.3 s).
_MAX_TIER_ELEMENTS = 1 << 20


def _tier_work(jaxpr):
  """Elements the jaxpr's equations produce (loop bodies counted once)."""
  total = 0
  for e in jaxpr.eqns:
    for v in e.outvars:
      total += int(np.prod(getattr(v.aval, "shape", ()), dtype=np.int64))
  return total


def _compile_cpu(jaxpr, num_threads=None):
  """The C backend's executable, or the NumPy backend's where it cannot be
  built (warned about once per reason)."""
  try:
    from purejax._src.backends.cpu import executable, toolchain
  except ImportError as e:   # a partial installation
    _warn_once(f"it cannot be imported: {e}")
    return numpy_backend.compile_jaxpr(jaxpr)
  try:
    return executable.compile_jaxpr(jaxpr, num_threads)
  except toolchain.CompilerUnavailable as e:
    _warn_once(f"no C compiler: {e}")
  except toolchain.CompileError as e:
    _warn_once(f"the C compiler failed: {str(e).splitlines()[0] if str(e) else e}")
  return numpy_backend.compile_jaxpr(jaxpr)


class _WithConsts:
  """An executable called with ``consts`` as its leading arguments."""

  def __init__(self, run, consts):
    self._run, self._consts = run, consts

  def __call__(self, *args):
    return self._run(*self._consts, *args)

  def __getattr__(self, name):   # wait() & co. of the executable
    return getattr(self._run, name)


# Calls that run on NumPy before the C build starts (after the last one's
# result is computed).  A signature called once (a jitted jnp function in an
# eager loop over new shapes, a one-off jit) is never worth compiling.
_CALLS_BEFORE_BUILD = 2


class _Tiered:
  """Runs on the NumPy backend until the C compilation in the background is
  done, then on its result.

  The build starts only once a call has computed its result (the second
  call: see ``_CALLS_BEFORE_BUILD``): its Python half (fusion planning, code
  generation) holds the GIL and gcc takes a core, and both would otherwise
  slow down the calls that are waiting for it.
  """

  def __init__(self, jaxpr, num_threads=None):
    self._jaxpr = jaxpr
    self._num_threads = num_threads
    self._numpy = numpy_backend.compile_jaxpr(jaxpr)
    self._compiled = None
    self._thread = None
    self._calls = 0
    self._lock = threading.Lock()

  def _start(self):
    with self._lock:
      if self._thread is None:
        self._thread = threading.Thread(target=self._build, args=(self._jaxpr,),
                                        daemon=True, name="purejax-compile")
        self._thread.start()

  def _build(self, jaxpr):
    try:
      self._compiled = _compile_cpu(jaxpr, self._num_threads)
    except Exception as e:   # never let a compiler problem break the program
      _warn_once(f"compiling failed: {type(e).__name__}: {e}")
      self._compiled = self._numpy
    self._jaxpr = None   # done with it

  def wait(self):
    """Blocks until the compiled version is in use (for tests and benchmarks);
    starts the build if no call has yet."""
    self._start()
    self._thread.join()

  def __call__(self, *args):
    compiled = self._compiled
    if compiled is not None:
      return compiled(*args)
    out = self._numpy(*args)
    if self._thread is None:
      self._calls += 1
      if self._calls >= _CALLS_BEFORE_BUILD:
        self._start()
    return out
