"""The BLAS matrix products compiled code calls: SciPy's sgemm/dgemm.

SciPy exports its BLAS (the OpenBLAS it ships) to compiled extensions as
PyCapsules in ``scipy.linalg.cython_blas``; a kernel library receives the
function addresses through ``pj_set_blas`` after it is loaded, so no BLAS
has to be found at link time.  SciPy is a dependency; without it
``dot_general`` runs on NumPy, with a warning.
"""
import ctypes
import functools
import os

from purejax._src import openblas

# Fortran BLAS, every argument by reference; SciPy's BLAS takes 32-bit ints.
# OpenBLAS's own threads busy-wait after a call and then fight the OpenMP
# threads of the next kernel for the cores, and how it splits a product
# changes the product's bits, so products run on OpenMP threads: each calls
# gemm on a fixed block of rows or columns while OpenBLAS runs
# single-threaded (openblas.py's "single" mode, entered once per product).
C_DECLARATIONS = r"""
#ifdef _OPENMP
#include <omp.h>
#endif
typedef void (*pj_sgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const float*, const float*, const int*, const float*, const int*,
                           const float*, float*, const int*);
typedef void (*pj_dgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const double*, const double*, const int*, const double*, const int*,
                           const double*, double*, const int*);
typedef void (*pj_cgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const float _Complex*, const float _Complex*, const int*,
                           const float _Complex*, const int*, const float _Complex*,
                           float _Complex*, const int*);
typedef void (*pj_zgemm_t)(const char*, const char*, const int*, const int*, const int*,
                           const double _Complex*, const double _Complex*, const int*,
                           const double _Complex*, const int*, const double _Complex*,
                           double _Complex*, const int*);
typedef void (*pj_mode_t)(int);
static pj_sgemm_t pj_sgemm;
static pj_dgemm_t pj_dgemm;
static pj_cgemm_t pj_cgemm;
static pj_zgemm_t pj_zgemm;
static pj_mode_t pj_single_enter, pj_single_leave;   /* NULL: no OpenBLAS found */
void pj_set_blas(void* s, void* d, void* c, void* z, void* enter, void* leave) {
  pj_sgemm = (pj_sgemm_t)s; pj_dgemm = (pj_dgemm_t)d;
  pj_cgemm = (pj_cgemm_t)c; pj_zgemm = (pj_zgemm_t)z;
  pj_single_enter = (pj_mode_t)enter; pj_single_leave = (pj_mode_t)leave; }

/* out[b] (M x N, row-major) = lhs[b] (M x K, or K x M unless lhs_last)
   @ rhs[b] (K x N if rhs_first, else N x K), as column-major
   out^T = rhs^T lhs^T.  out is cut into tiles, one gemm call each, that
   ``threads`` OpenMP threads share: about two per core of this machine,
   columns of PJ_GEMM_WIDE or more first (a gemm call over all rows and a
   band of columns repacks least), then rows.  The shape and the machine,
   not the thread count, decide the tiles and so which gemm call computes
   an element: the bits do not depend on the thread count. */
#define PJ_GEMM_CORES @CORES@
#define PJ_GEMM_WIDE @WIDE@
static void pj_gemm_tiles(int M, int N, int* tm, int* tn) {
  const int want = 2 * PJ_GEMM_CORES;
  int cols = (N + PJ_GEMM_WIDE - 1) / PJ_GEMM_WIDE;
  cols = cols > want ? want : cols < 1 ? 1 : cols;
  const int rows = (want + cols - 1) / cols;
  const int n = ((N + cols - 1) / cols + 63) / 64 * 64, m = ((M + rows - 1) / rows + 63) / 64 * 64;
  *tn = n > 64 ? n : 64;
  *tm = m > 64 ? m : 64;
}
/* Tile t of PJ_GEMM's product (the names are PJ_GEMM's locals). */
#define PJ_GEMM_TILE(T, GEMM, t) do {                                                  \
    const int64_t b = (t) / (rows * cols);                                              \
    const int i0 = (int)((t) / cols % rows) * tm, j0 = (int)((t) % cols) * tn;          \
    const int m = M - i0 < tm ? M - i0 : tm, n = N - j0 < tn ? N - j0 : tn;             \
    const T* l = lhs + b * M * K; const T* r = rhs + b * K * N; T* o = out + b * M * N; \
    GEMM(ta, tb, &n, &m, &K, &one, r + (rhs_first ? j0 : (int64_t)j0 * K), &lda,        \
         l + (lhs_last ? (int64_t)i0 * K : i0), &ldb, &zero, o + (int64_t)i0 * N + j0, &ldc);\
  } while (0)
#define PJ_GEMM(NAME, T, GEMM)                                                         \
static void NAME(int64_t batch, int M, int N, int K, int lhs_last, int rhs_first,       \
                 const T* lhs, const T* rhs, T* out, int threads) {                     \
  const char* ta = rhs_first ? "N" : "T";                                               \
  const char* tb = lhs_last ? "N" : "T";                                                \
  const int lda = rhs_first ? N : K, ldb = lhs_last ? K : M, ldc = N;                   \
  const T one = 1, zero = 0;                                                            \
  int tm, tn;                                                                            \
  pj_gemm_tiles(M, N, &tm, &tn);                                                        \
  const int64_t rows = (M + tm - 1) / tm, cols = (N + tn - 1) / tn;                     \
  const int64_t tiles = batch * rows * cols;                                            \
  if (threads < 1) threads = 1;                                                         \
  if (pj_single_enter) pj_single_enter(0);   /* 0: SciPy's OpenBLAS */                 \
  /* One tile or one thread: no OpenMP region (entering one costs about as    \
     much as a small product, the steps of a scan make many of those). */     \
  if (threads == 1 || tiles == 1) {                                                     \
    for (int64_t t = 0; t < tiles; t++)                                                 \
      PJ_GEMM_TILE(T, GEMM, t);                                                         \
  } else {                                                                              \
    _Pragma("omp parallel for num_threads(threads) schedule(dynamic)")  /* unequal tiles */ \
    for (int64_t t = 0; t < tiles; t++)                                                 \
      PJ_GEMM_TILE(T, GEMM, t);                                                         \
  }                                                                                     \
  if (pj_single_leave) pj_single_leave(0);                                             \
}
PJ_GEMM(pj_gemm_f32, float, pj_sgemm)
PJ_GEMM(pj_gemm_f64, double, pj_dgemm)
PJ_GEMM(pj_gemm_c64, float _Complex, pj_cgemm)
PJ_GEMM(pj_gemm_c128, double _Complex, pj_zgemm)
"""
# pj_gemm's tiles: the machine's logical CPUs (not the thread count, which
# must not change the bits) and the narrowest band of columns split off.
GEMM_CORES, GEMM_WIDE = max(1, os.cpu_count() or 1), 256
C_DECLARATIONS = (C_DECLARATIONS.replace("@CORES@", str(GEMM_CORES))
                  .replace("@WIDE@", str(GEMM_WIDE)))


def gemm_tile_count(m, n):
  """How many tiles ``pj_gemm`` cuts an m x n product into (pj_gemm_tiles)."""
  want = 2 * GEMM_CORES
  cols = min(want, max(1, -(-n // GEMM_WIDE)))
  rows = -(-want // cols)
  tn = max(64, -(-(-(-n // cols)) // 64) * 64)
  tm = max(64, -(-(-(-m // rows)) // 64) * 64)
  return -(-m // tm) * -(-n // tn)

# Products smaller than this many multiply-adds run on one thread.
PARALLEL_MIN_FLOPS = 1 << 19

MAX_DIM = 2 ** 31 - 1   # the largest size a 32-bit BLAS int holds


@functools.lru_cache(maxsize=None)
def gemm_pointers():
  """(sgemm, dgemm, cgemm, zgemm, single mode's enter and leave, or 0, 0)
  function addresses,
  or None without SciPy's BLAS (then matrix products run on NumPy, and a
  warning says so once: SciPy is a dependency, so this is a broken install)."""
  try:
    from scipy.linalg import cython_blas
  except ImportError as e:
    _warn_no_blas(f"SciPy cannot be imported ({e})")
    return None
  get_name = ctypes.pythonapi.PyCapsule_GetName
  get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
  get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
  get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
  try:
    capsules = [cython_blas.__pyx_capi__[n] for n in ("sgemm", "dgemm", "cgemm", "zgemm")]
    gemms = tuple(get_pointer(c, get_name(c)) for c in capsules)
  except (AttributeError, KeyError, ValueError) as e:
    _warn_no_blas(f"SciPy does not export sgemm/dgemm/cgemm/zgemm ({e!r})")
    return None
  return gemms + (openblas.scipy_modes().addresses or (0, 0, 0, 0))[:2]


def _warn_no_blas(why):
  import warnings
  warnings.warn(f"{why}: jitted matrix products run on NumPy, without BLAS in compiled "
                "code; install SciPy (`pip install scipy`) for them", RuntimeWarning,
                stacklevel=3)


def numpy_single_threaded():
  """Runs NumPy's matrix products in the calling thread only, for a host
  step between compiled kernels: OpenBLAS's threads busy-wait after a
  product and would take the cores from the next kernel's threads."""
  return openblas.numpy_modes().single()


def available():
  return gemm_pointers() is not None


def link(lib):
  """Gives a loaded kernel library that calls BLAS the function addresses."""
  setter = getattr(lib, "pj_set_blas", None)
  if setter is not None:
    setter.restype = None
    setter.argtypes = [ctypes.c_void_p] * 6
    setter(*gemm_pointers())
