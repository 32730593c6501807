"""The source every CUDA module starts with: a header that makes it compile
under NVRTC, nvcc or (emulation) the system C++ compiler, and the C
backend's portable helpers (``cpu.prelude.PORTABLE``) and special functions
(``cpu.special_c``: digamma, the incomplete gamma and beta functions...)
as device functions and device tables."""
import re

from purejax._src.backends.cpu import codegen_ops, prelude, special_c

_HEADER = r"""/* purejax CUDA module */
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



def device_functions(c_source):
  """C helper functions and constant tables (``static``) as CUDA device
  functions and device tables."""
  return codegen_ops.for_cuda(re.sub(r"^static\b", "static __device__", c_source,
                                     flags=re.MULTILINE))


PRELUDE = _HEADER + device_functions(prelude.PORTABLE + special_c.SOURCE)
