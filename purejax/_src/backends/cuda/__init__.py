"""The GPU backend's kernels: CUDA C from the C backend's fusion plan.

Design (issue 22, points 3 and 5; devices, eager ops and library calls come
later):

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
- ``device_prelude`` is the source every module starts with: the C
  prelude's portable helpers as ``__device__`` functions, and, when no CUDA
  compiler is compiling, a stand-in for CUDA (``__global__``/``__device__``
  empty, ``threadIdx``/``blockIdx``/``blockDim``/``gridDim`` variables).
- ``emulation`` compiles a module's source unchanged with the system C++
  compiler (``cpu.toolchain``, its disk cache) and launches a kernel on
  NumPy arrays by looping over blocks and threads: every generated kernel
  runs in CI without a GPU.
- ``runner`` runs a whole jaxpr through the plan in emulation (the internal
  backend ``purejax_backend="cuda_emulation"``); host and native steps
  (matrix products, control flow, sorts...) run on NumPy for now.

On a GPU the same module source is to be compiled once by NVRTC
(``cupy.RawModule(code=source, options=("--std=c++17", "--fmad=false"))``:
no FMA contraction, as the C backend) and each ``Launch`` run as
``module.get_function(name)((grid,), (threads,), args)`` on CuPy arrays,
scratch buffers allocated with ``cupy.empty``.  No CuPy code is here yet.
"""
