"""Runs a CUDA module on the CPU: its source, unchanged, compiled by the
system C++ compiler (the device prelude's header stands in for CUDA), with
one launcher per kernel that loops over the blocks and threads of a launch
setting ``blockIdx``/``threadIdx`` (generated kernels use no barriers or
shared memory, so running the threads one after another is exact)."""
import ctypes

from purejax._src.backends.cpu import codegen_ops, toolchain

# As the C backend: no FMA contraction (a GPU module is to be compiled with
# --fmad=false for the same reason); the source is C++.  No SLP
# vectorization: GCC's complex-product patterns contract into FMAs
# (fmaddsub) despite -ffp-contract=off, which a GPU never does.
EXTRA_FLAGS = ("-ffp-contract=off", "-fno-tree-slp-vectorize", "-xc++")


def launcher_source(functions):
  """C++ launchers ``pj_emulate_<name>(grid, threads, args)``."""
  lines = []
  for name, params in functions:
    casts = []
    for i, p in enumerate(params):
      ctype = codegen_ops.for_cuda(p.rsplit("__restrict__", 1)[0].strip())
      casts.append(f"({ctype})a[{i}]")
    lines += [f'extern "C" void pj_emulate_{name}(unsigned grid, unsigned threads, '
              f'void* const* a) {{',
              "  gridDim.x = grid; blockDim.x = threads;",
              "  gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;",
              "  for (unsigned bx = 0; bx < grid; bx++) {",
              "    blockIdx.x = bx;",
              "    for (unsigned tx = 0; tx < threads; tx++) {",
              f"      threadIdx.x = tx; {name}({', '.join(casts)});",
              "    }", "  }", "}"]
  return "\n".join(lines) + "\n"


class EmulatedModule:
  """A module compiled for the CPU; ``launch(launch, arrays)`` runs one
  ``kernels.Launch`` on C-contiguous NumPy arrays (in its argument order)."""

  def __init__(self, source, functions):
    self.lib = toolchain.compile_library(source + "\n" + launcher_source(functions),
                                         extra_flags=EXTRA_FLAGS)
    self._fns = {}
    for name, params in functions:
      fn = getattr(self.lib, f"pj_emulate_{name}")
      fn.restype = None
      fn.argtypes = [ctypes.c_uint, ctypes.c_uint, ctypes.c_void_p]
      self._fns[name] = (fn, ctypes.c_void_p * max(1, len(params)))

  def launch(self, launch, arrays):
    self.run(launch.function, launch.grid, launch.threads, arrays)

  def run(self, function, grid, threads, arrays):
    """Runs kernel ``function`` over ``grid`` blocks of ``threads``."""
    fn, args_type = self._fns[function]
    for a in arrays:
      assert a.flags.c_contiguous
    fn(grid, threads, args_type(*[a.ctypes.data for a in arrays]))


def compile_module(module):
  """The EmulatedModule of a ``module.Module``."""
  functions = [f for s in module.steps if hasattr(s, "functions") for f in s.functions]
  return EmulatedModule(module.source, functions)
