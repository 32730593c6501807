"""The BLAS matrix products compiled code calls: SciPy's sgemm/dgemm.

SciPy exports its BLAS (the OpenBLAS it ships) to compiled extensions as
PyCapsules in ``scipy.linalg.cython_blas``; a kernel library receives the
function addresses through ``pj_set_blas`` after it is loaded, so no BLAS
has to be found at link time.  Without SciPy, ``dot_general`` runs on NumPy.
"""
import ctypes
import functools

# Fortran BLAS, every argument by reference; SciPy's BLAS takes 32-bit ints.
C_DECLARATIONS = r"""
typedef void (*pj_sgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const float*, const float*, const int*, const float*, const int*,
                           const float*, float*, const int*);
typedef void (*pj_dgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const double*, const double*, const int*, const double*, const int*,
                           const double*, double*, const int*);
static pj_sgemm_t pj_sgemm;
static pj_dgemm_t pj_dgemm;
void pj_set_blas(void* s, void* d) { pj_sgemm = (pj_sgemm_t)s; pj_dgemm = (pj_dgemm_t)d; }
"""

MAX_DIM = 2 ** 31 - 1   # the largest size a 32-bit BLAS int holds


@functools.lru_cache(maxsize=None)
def gemm_pointers():
  """(sgemm, dgemm) function addresses, or None without SciPy's BLAS."""
  try:
    from scipy.linalg import cython_blas
  except ImportError:
    return None
  get_name = ctypes.pythonapi.PyCapsule_GetName
  get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
  get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
  get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
  try:
    capsules = [cython_blas.__pyx_capi__[n] for n in ("sgemm", "dgemm")]
    return tuple(get_pointer(c, get_name(c)) for c in capsules)
  except (AttributeError, KeyError, ValueError):
    return None


def available():
  return gemm_pointers() is not None


def link(lib):
  """Gives a loaded kernel library that calls BLAS the function addresses."""
  setter = getattr(lib, "pj_set_blas", None)
  if setter is not None:
    setter.restype = None
    setter.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    setter(*gemm_pointers())
