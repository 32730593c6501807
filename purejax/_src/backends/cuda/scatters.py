"""Scatters (``scatter``, ``scatter-add/sub/mul/min/max``) on the GPU,
without reading any value back to the host:

1. the flat position of every update, in scatter order (``lax.scatter``'s
   ``marked_positions``: array operations on the device; a dropped
   window's updates at -1);
2. the positions sorted stably (CuPy's radix sort), so each position's
   updates stay in scatter order;
3. a kernel with a thread per sorted update: the first update of each
   position folds all of that position's updates into the output, in
   order, with the C backend's combining expression
   (``cpu.gather_scatter``'s, from the expression table).

Each output element thus sees its updates in scatter order, as NumPy's
``ufunc.at`` and the C backend apply them: the same bits, for any number
of repeats (the gradient of an embedding lookup), whatever the thread
count.  ``scatter`` (replacing) keeps the last update.
"""
import numpy as np

from purejax._src import array_namespace
from purejax._src.backends.cpu import codegen_ops, gather_scatter
from purejax._src.backends.cuda.kernels import Launch, function_text, grid_stride
from purejax._src.lax import scatter


def supported(eqn):
  """Whether ``eqn`` is a scatter the kernel computes (the C backend's:
  no general combiner jaxpr, no boolean arithmetic)."""
  return eqn.primitive.name in gather_scatter.SCATTERS and gather_scatter.supported(eqn)


class ScatterKernel:
  """The step of scatter ``eqn`` (a ``cpu.native`` step's, which says how
  its operands are read): its kernel's ``functions`` and ``source``."""

  def __init__(self, native, name):
    self.eqn, self.native, self.name = native.eqn, native, name
    dtype = np.dtype(self.eqn.outvars[0].aval.dtype)
    self.count = int(np.prod(self.eqn.invars[2].aval.shape, dtype=np.int64))
    ct = codegen_ops.storage_ctype(dtype)
    params = ["const int64_t* __restrict__ sorted", "const int64_t* __restrict__ order",
              f"const {ct}* __restrict__ values", f"{ct}* __restrict__ out"]
    combined = gather_scatter.combine(self.eqn.primitive.name, dtype, "acc", "values[order[j]]")
    lines = [grid_stride("i", self.count),
             "  const int64_t p = sorted[i];",
             "  if (p < 0 || (i > 0 && sorted[i - 1] == p)) continue;   /* not a run's first */",
             f"  {ct} acc = out[p];",
             f"  for (int64_t j = i; j < {self.count} && sorted[j] == p; j++) acc = {combined};",
             "  out[p] = acc;", "}"]
    self.functions = [(name, params)]
    self.source = codegen_ops.for_cuda(function_text(name, params, lines))

  def describe(self):
    return f"kernels {self.name} (after a sort of the positions): {self.eqn.primitive.name}"

  def run(self, args, kernels, device):
    """[the scatter's result] (a new device array; NumPy's in emulation)
    of the operands ``args``."""
    operand, indices, updates = args
    p = self.eqn.params
    out = operand.copy()   # C-contiguous, also of a broadcast scalar
    if self.count == 0 or out.size == 0:
      return [out]
    positions, values = scatter.marked_positions(out, indices, updates,
                                                 p["dimension_numbers"], p["mode"])
    order = array_namespace.stable_argsort(positions)
    sorted_positions = array_namespace.contiguous(positions[order])
    values = array_namespace.contiguous(values)
    kernels.launch(Launch(self.name, self.count, ()),
                   [sorted_positions, array_namespace.contiguous(order), values, out])
    return [out]
