"""The batch loop of lax's LAPACK calls, compiled: one call from Python runs
a LAPACK routine on every matrix of a batch, spread over OpenMP threads
(each calling a single-threaded OpenBLAS) when the matrices are small.

``lax.lapack`` loops in Python without it (same calls, same results); the
C backend hands it this loop when it is imported (``install``), and the
library is compiled on first use.
"""
import ctypes
import functools

from purejax._src.config import thread_count

MAX_ARGS = 16


def _source():
  cases = []
  for n in range(1, MAX_ARGS + 1):
    params = ", ".join(["void*"] * n)
    args = ", ".join(f"a[{k}]" for k in range(n))
    cases.append(f"    case {n}: ((void (*)({params}))fn)({args}); break;")
  switch = "\n".join(cases)
  return r"""
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif
static void pj_call(void* fn, int nargs, void** a) {
  switch (nargs) {
""" + switch + r"""
  }
}

/* Calls fn (every argument a pointer) count times; argument j of call i is
   base[j] + i * stride[j], or base[j] + t * stride[j] for the calling
   thread t when per_thread[j] (a workspace).  With threads > 1 the calls
   are spread over OpenMP threads (the caller has OpenBLAS single-threaded). */
int pj_lapack_loop(void* fn, int nargs, int64_t count, char* const* base,
                   const int64_t* stride, const int* per_thread, int threads) {
  if (nargs < 1 || nargs > """ + str(MAX_ARGS) + r""") return 1;
  if (threads > count) threads = (int)count;
#ifdef _OPENMP
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      const int64_t tid = omp_get_thread_num();
      void* a[""" + str(MAX_ARGS) + r"""];
#pragma omp for schedule(static)
      for (int64_t i = 0; i < count; i++) {
        for (int j = 0; j < nargs; j++)
          a[j] = base[j] + (per_thread[j] ? tid : i) * stride[j];
        pj_call(fn, nargs, a);
      }
    }
    return 0;
  }
#endif
  void* a[""" + str(MAX_ARGS) + r"""];
  for (int64_t i = 0; i < count; i++) {
    for (int j = 0; j < nargs; j++)
      a[j] = base[j] + (per_thread[j] ? 0 : i) * stride[j];
    pj_call(fn, nargs, a);
  }
  return 0;
}

/* out[b] (cols x rows) = in[b] (rows x cols) transposed, for elements of
   4, 8 or 16 bytes (a matrix handed to LAPACK in column-major order and
   back).  8 x 8 blocks through a local array, so that neither side walks
   more than 8 lines of a power-of-two stride at once (32 such lines share
   two L1 sets and evict each other); a tile is 8 rows by 64 columns, tiles
   spread over threads.  With ``lower``, out's elements above its diagonal
   are zeros (a Cholesky factor, in the same pass). */
#define PJ_TR 8
#define PJ_TC 64
#define PJ_TRANSPOSE(NAME, T)                                                          \
static void NAME(const T* in, T* out, int64_t batch, int64_t rows, int64_t cols,        \
                 int threads, int lower) {                                              \
  const T zero = {0};                                                                   \
  const int64_t tr = (rows + PJ_TR - 1) / PJ_TR, tc = (cols + PJ_TC - 1) / PJ_TC;       \
  const int64_t tiles = batch * tr * tc;                                                \
  _Pragma("omp parallel for num_threads(threads) schedule(static) if(threads > 1)")    \
  for (int64_t t = 0; t < tiles; t++) {                                                 \
    const int64_t b = t / (tr * tc), c0 = (t / tr) % tc * PJ_TC, r0 = t % tr * PJ_TR;   \
    const T* src = in + b * rows * cols; T* dst = out + b * rows * cols;                \
    const int64_t r1 = r0 + PJ_TR < rows ? r0 + PJ_TR : rows;                           \
    const int64_t c1 = c0 + PJ_TC < cols ? c0 + PJ_TC : cols;                           \
    for (int64_t cb = c0; cb < c1; cb += PJ_TR) {                                       \
      const int64_t ce = cb + PJ_TR < c1 ? cb + PJ_TR : c1;                             \
      if (r1 - r0 == PJ_TR && ce - cb == PJ_TR) {                                       \
        T blk[PJ_TR][PJ_TR];                                                            \
        for (int r = 0; r < PJ_TR; r++)                                                 \
          for (int c = 0; c < PJ_TR; c++) blk[c][r] = src[(r0 + r) * cols + cb + c];    \
        for (int c = 0; c < PJ_TR; c++)                                                 \
          for (int r = 0; r < PJ_TR; r++)                                               \
            dst[(cb + c) * rows + r0 + r] = lower && r0 + r > cb + c ? zero : blk[c][r]; \
      } else {                                                                          \
        for (int64_t c = cb; c < ce; c++)                                               \
          for (int64_t r = r0; r < r1; r++)                                             \
            dst[c * rows + r] = lower && r > c ? zero : src[r * cols + c];              \
      }                                                                                 \
    }                                                                                   \
  }                                                                                     \
}
typedef struct { uint64_t lo, hi; } pj_u128;
PJ_TRANSPOSE(pj_transpose4, uint32_t)
PJ_TRANSPOSE(pj_transpose8, uint64_t)
PJ_TRANSPOSE(pj_transpose16, pj_u128)

int pj_transpose(const void* in, void* out, int64_t batch, int64_t rows, int64_t cols,
                 int size, int threads, int lower) {
  switch (size) {
    case 4: pj_transpose4(in, out, batch, rows, cols, threads, lower); return 0;
    case 8: pj_transpose8(in, out, batch, rows, cols, threads, lower); return 0;
    case 16: pj_transpose16(in, out, batch, rows, cols, threads, lower); return 0;
  }
  return 1;
}
"""


@functools.lru_cache(maxsize=None)
def _library():
  from purejax._src.backends.cpu import toolchain
  try:
    lib = toolchain.compile_library(_source())
  except (toolchain.CompilerUnavailable, toolchain.CompileError, OSError):
    return None
  fn = lib.pj_lapack_loop
  fn.restype = ctypes.c_int
  fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_void_p,
                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
  tr = lib.pj_transpose
  tr.restype = ctypes.c_int
  tr.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                 ctypes.c_int64, ctypes.c_int, ctypes.c_int, ctypes.c_int]
  return fn, tr, toolchain.openmp_enabled()


def batch_loop():
  """(the compiled loop, OpenMP threads to spread small calls over, the
  compiled transposing copy), or None without a compiler."""
  lib = _library()
  if lib is None:
    return None
  fn, tr, openmp = lib
  threads = thread_count() if openmp else 1
  return fn, threads, tr


def install():
  from purejax._src.lax import lapack
  lapack.batch_loop_provider = batch_loop
