"""OpenBLAS's thread count, shared by every thread of the process.

NumPy and SciPy each bundle an OpenBLAS (``libscipy_openblas*.so`` next to
the package).  Their ``openblas_set_num_threads_local`` is not thread-local
in these (pthreads) builds: it sets the one process-wide count.  A product
that must run single-threaded (compiled code splits its products into
fixed blocks itself, and OpenBLAS's own threading of a block changes its
bits) therefore needs every other thread to agree, so SciPy's count is
changed only through ``scipy_modes``: any number of threads may run in
"single" mode (count 1) together, or any number in "threaded" mode
(OpenBLAS's own count, for large LAPACK calls), never both at once.
Compiled code calls the same two modes from C (``pj_blas_single_enter`` ...).
"""
import contextlib
import ctypes
import functools
import glob
import os
import threading


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


# The two modes of each OpenBLAS (0: SciPy's, 1: NumPy's): how many threads
# are in each, and the count OpenBLAS had before the first "single" thread
# entered, restored when the last one leaves.
MODES_SOURCE = r"""
#include <pthread.h>
typedef int (*pj_threads_t)(int);
static struct pj_mode {
  pj_threads_t setter;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long single, threaded;
  int saved;
} pj_modes[2] = {{0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER},
                 {0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER}};
/* How deep the calling thread is in "single" mode: a thread already in it
   (a compiled loop enters once around all its steps' products) enters and
   leaves again without the lock or the thread-count setter. */
static __thread long pj_single_depth[2];
void pj_blas_modes_init(int which, void* setter) {
  pj_modes[which].setter = (pj_threads_t)setter; }
void pj_blas_single_enter(int which) {
  struct pj_mode* m = &pj_modes[which];
  if (!m->setter || pj_single_depth[which]++ > 0) return;
  pthread_mutex_lock(&m->mu);
  while (m->threaded) pthread_cond_wait(&m->cv, &m->mu);
  if (m->single++ == 0) m->saved = m->setter(1);
  pthread_mutex_unlock(&m->mu);
}
void pj_blas_single_leave(int which) {
  struct pj_mode* m = &pj_modes[which];
  if (!m->setter || --pj_single_depth[which] > 0) return;
  pthread_mutex_lock(&m->mu);
  if (--m->single == 0) { m->setter(m->saved); pthread_cond_broadcast(&m->cv); }
  pthread_mutex_unlock(&m->mu);
}
void pj_blas_threaded_enter(int which) {
  struct pj_mode* m = &pj_modes[which];
  if (!m->setter) return;
  pthread_mutex_lock(&m->mu);
  while (m->single) pthread_cond_wait(&m->cv, &m->mu);
  m->threaded++;
  pthread_mutex_unlock(&m->mu);
}
void pj_blas_threaded_leave(int which) {
  struct pj_mode* m = &pj_modes[which];
  if (!m->setter) return;
  pthread_mutex_lock(&m->mu);
  if (--m->threaded == 0) pthread_cond_broadcast(&m->cv);
  pthread_mutex_unlock(&m->mu);
}
"""
MODE_FUNCTIONS = ("pj_blas_single_enter", "pj_blas_single_leave",
                  "pj_blas_threaded_enter", "pj_blas_threaded_leave")


class _Modes:
  """The two modes of OpenBLAS number ``which``: context managers
  ``single()`` and ``threaded()``, and the C functions' addresses
  (``addresses``, for compiled code: each takes ``which``), or, without a C
  compiler, one lock that every caller holds (then nothing compiled runs
  concurrently with it anyway)."""

  def __init__(self, which, setter):
    self._which, self._setter = which, setter
    self._lib = None
    self.addresses = None
    if setter is None:
      return
    from purejax._src.backends.cpu import toolchain
    try:
      lib = toolchain.compile_library(MODES_SOURCE)
    except (toolchain.CompilerUnavailable, toolchain.CompileError, OSError):
      self._lock = threading.Lock()
      return
    lib.pj_blas_modes_init.argtypes = [ctypes.c_int, ctypes.c_void_p]
    lib.pj_blas_modes_init.restype = None
    lib.pj_blas_modes_init(which, ctypes.cast(setter, ctypes.c_void_p).value)
    for name in MODE_FUNCTIONS:
      getattr(lib, name).restype = None
      getattr(lib, name).argtypes = [ctypes.c_int]
    self._lib = lib
    self.addresses = tuple(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value
                           for n in MODE_FUNCTIONS)

  @contextlib.contextmanager
  def _mode(self, single):
    if self._setter is None:
      yield
      return
    if self._lib is None:
      with self._lock:
        saved = self._setter(1) if single else None
        try:
          yield
        finally:
          if saved is not None:
            self._setter(saved)
      return
    # ctypes releases the GIL while a call waits for the other mode to end.
    enter, leave = ((self._lib.pj_blas_single_enter, self._lib.pj_blas_single_leave)
                    if single else
                    (self._lib.pj_blas_threaded_enter, self._lib.pj_blas_threaded_leave))
    enter(self._which)
    try:
      yield
    finally:
      leave(self._which)

  def single(self):
    return self._mode(True)

  def threaded(self):
    return self._mode(False)


SCIPY, NUMPY = 0, 1


@functools.lru_cache(maxsize=None)
def scipy_modes():
  """The modes of the OpenBLAS that SciPy's BLAS and LAPACK use (the one
  compiled code calls)."""
  return _Modes(SCIPY, threads_setter(scipy_libs(), also_global=True))


@functools.lru_cache(maxsize=None)
def numpy_modes():
  """The modes of the OpenBLAS that NumPy bundles."""
  return _Modes(NUMPY, threads_setter(numpy_libs()))
