"""The GPU backend: CUDA C kernels from the C backend's fusion plan, run
through CuPy.

Design:

- ``kernels`` turns each Group of ``cpu.fusion.plan_jaxpr``'s plan into
  ``extern "C" __global__`` functions, from the same per-primitive
  expression table as the C backend (``cpu.codegen_ops``, with
  ``codegen_ops.for_cuda`` renaming the few functions CUDA names otherwise)
  and the same symbolic indexing (``cpu.indexing``).  An elementwise group is
  one kernel with a grid-stride loop, one thread per output element.  A
  reduction is two kernels and no atomics, shared memory or barriers: the
  first gives each (output, block of ``reduction_order.layout``'s elements,
  lane) of a fixed partition its own thread, folding the lane's elements in
  order into a scratch slot; the second combines each output's slots in
  ``reduction_order``'s order (halving tree over the lanes, pairwise tree
  over the blocks).  The partition depends on the shapes only, so float
  sums give the C backend's bits.
- ``scans`` gives the cumulative reductions (cumsum, cumprod, cumlogsumexp,
  cummax, cummin) kernels in ``lax.scan_order``'s blocks: a thread per
  block, the block totals scanned the same way recursively, then a thread
  per element adding its block's offset (the C backend's bits).
- ``device_prelude`` is the source every module starts with: the C
  prelude's portable helpers as ``__device__`` functions, and, when no CUDA
  compiler is compiling, a stand-in for CUDA (``__global__``/``__device__``
  empty, ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` variables).
- ``emulation`` compiles a module's source unchanged with the system C++
  compiler (``cpu.toolchain``, its disk cache) and launches a kernel on
  NumPy arrays by looping over blocks and threads: every generated kernel
  runs in CI without a GPU.
- ``runner`` runs a whole jaxpr through the plan on a device: ``EMULATED``
  (NumPy arrays; the internal backend ``purejax_backend="cuda_emulation"``)
  or a ``CupyDevice``.  Steps outside the kernels run by their primitives'
  NumPy implementations, on the device arrays where those use only
  functions CuPy dispatches (``impl_on_gpu_arrays``: matrix products
  through cuBLAS, FFTs through cuFFT, layout steps; linear algebra through
  ``solver``: cuSOLVER and cuBLAS by CuPy's bindings, lax.lapack's
  interface), else on host copies;
  ``control_flow`` runs scan/while/cond bodies' GPU code from a host loop.
  A plan with no CUDA kernel for some group (a reduction with no device
  code) runs on the host, warned.
- complex64/complex128 values are the device prelude's structs, in the
  expression table's neutral spelling (``cpu.complex_c``: PJ_COMPLEX,
  PJ_REAL, PJ_IMAG), and the C library's complex functions (cexp, clog,
  csqrt...) ``complex_c``'s and ``complex_inverse_c``'s ports of
  glibc's (its bits in emulation).
- ``gpu_runtime`` is the one module that finds CuPy: devices, transfers,
  modules compiled by NVRTC (``--fmad=false``: no FMA contraction, as the
  C backend; CuPy caches the compiled code on disk) and kernel launches.
  Tests put a stand-in in its place (tests/fake_cupy.py).

- ``graphs`` (``purejax_cuda_graphs``) replays a jitted function that reads
  nothing back to the host as one CUDA graph (its own memory pool; the
  arguments copied in, the outputs copied out).  ``scatters`` and
  ``dynamic_slices`` are kernel steps of their own (positions sorted on the
  device; starts read on the device); ``solver`` is linear algebra.

``purejax._src.gpu_dispatch`` sends jitted calls and eager operations there
when an argument lives on a GPU or the GPU is the default device
(``JAX_PLATFORMS=cuda,cpu``; ``devices.py``).
"""
