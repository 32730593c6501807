"""The source every CUDA module starts with: a header that makes it compile
under NVRTC, nvcc or (emulation) the system C++ compiler, and the C
backend's portable helpers (``cpu.prelude.PORTABLE``) and special functions
(``cpu.special_c``: digamma, the incomplete gamma and beta functions...)
and complex helpers (``cpu.complex_c``, with its versions of the C
library's complex functions, and ``cpu.complex_inverse_c``'s inverse
trigonometric and hyperbolic ones) as device functions and device tables."""
import re

from purejax._src.backends.cpu import (codegen_ops, complex_c, complex_inverse_c, erf_c, prelude,
                                      sort_scan, special_c)

# The header alone: what a hand-written kernel needs (cuda/solver.py).
HEADER = r"""/* purejax CUDA module */
#if defined(__CUDACC_RTC__)   /* NVRTC: no system headers */
typedef signed char int8_t; typedef short int16_t; typedef int int32_t;
typedef long long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;
typedef unsigned int uint32_t; typedef unsigned long long uint64_t;
#define NAN __int_as_float(0x7fc00000)
#define INFINITY __int_as_float(0x7f800000)
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#elif defined(__CUDACC__)   /* nvcc */
#include <stdint.h>
#include <math.h>
#else   /* emulation: a C++ compiler for the CPU; threads are loop variables */
#include <stdint.h>
#include <math.h>
#define __global__
#define __device__
struct pj_dim3 { unsigned x, y, z; };
static pj_dim3 threadIdx, blockIdx, blockDim, gridDim;
static inline int __popc(uint32_t x) { return __builtin_popcount(x); }
static inline int __popcll(uint64_t x) { return __builtin_popcountll(x); }
static inline int __clz(uint32_t x) { return x ? __builtin_clz(x) : 32; }
static inline int __clzll(uint64_t x) { return x ? __builtin_clzll(x) : 64; }
#endif
/* Always 0, but the compiler cannot know it (see the C prelude). */
__device__ int32_t pj_opaque_zero = 0;
"""

# complex64/complex128 (C's float _Complex and double _Complex, which CUDA's
# C++ lacks) as structs in NumPy's layout, with C's conversions (from any
# real; widening implicit, narrowing explicit so that mixed operands are
# never ambiguous) and the operators the C expressions use on complex
# values: + - += == != and negation.  No * or /: products and quotients
# are complex_c's NumPy formulas, as in C.
_COMPLEX = r"""
struct pj_c128;
#define PJ_FROM_REAL(C, R) \
  __device__ C(float r) : re((R)r), im(0) {} __device__ C(double r) : re((R)r), im(0) {} \
  __device__ C(int r) : re((R)r), im(0) {} __device__ C(unsigned r) : re((R)r), im(0) {} \
  __device__ C(long r) : re((R)r), im(0) {} __device__ C(unsigned long r) : re((R)r), im(0) {} \
  __device__ C(long long r) : re((R)r), im(0) {} \
  __device__ C(unsigned long long r) : re((R)r), im(0) {}
struct pj_c64 {
  float re, im;
  pj_c64() = default;
  __device__ pj_c64(float r, float i) : re(r), im(i) {}
  PJ_FROM_REAL(pj_c64, float)
  __device__ explicit pj_c64(const pj_c128& z);
};
struct pj_c128 {
  double re, im;
  pj_c128() = default;
  __device__ pj_c128(double r, double i) : re(r), im(i) {}
  PJ_FROM_REAL(pj_c128, double)
  __device__ pj_c128(const pj_c64& z) : re(z.re), im(z.im) {}
};
__device__ inline pj_c64::pj_c64(const pj_c128& z) : re((float)z.re), im((float)z.im) {}
#define PJ_COMPLEX_OPERATORS(C, R) \
  __device__ inline C operator+(C a, C b) { return C(a.re + b.re, a.im + b.im); } \
  __device__ inline C operator-(C a, C b) { return C(a.re - b.re, a.im - b.im); } \
  __device__ inline C operator-(C a) { return C(-a.re, -a.im); } \
  __device__ inline C& operator+=(C& a, C b) { return a = a + b; } \
  __device__ inline bool operator==(C a, C b) { return a.re == b.re && a.im == b.im; } \
  __device__ inline bool operator!=(C a, C b) { return !(a == b); } \
  __device__ inline C pj_complex(R re, R im) { return C(re, im); }
PJ_COMPLEX_OPERATORS(pj_c64, float)
PJ_COMPLEX_OPERATORS(pj_c128, double)
#define PJ_COMPLEX(re, im) pj_complex((re), (im))
#define PJ_REAL(z) ((z).re)
#define PJ_IMAG(z) ((z).im)
#define PJ_NO_CONTRACT
"""



def device_functions(c_source):
  """C helper functions and constant tables (``static``) as CUDA device
  functions and device tables."""
  return codegen_ops.for_cuda(re.sub(r"^static\b", "static __device__", c_source,
                                     flags=re.MULTILINE))


PRELUDE = HEADER + _COMPLEX + device_functions(
    prelude.PORTABLE + special_c.SOURCE + erf_c.SOURCE + complex_c.BASIC + complex_c.ANNEX_G
    + complex_inverse_c.SOURCE + complex_c.DERIVED
    + sort_scan.LOGADDEXP)   # (cumlogsumexp's; once per module, however many scans)
