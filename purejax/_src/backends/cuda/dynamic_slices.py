"""``dynamic_slice`` and ``dynamic_update_slice`` as CUDA kernels: the start
indices are read on the device (clamped into range as JAX's are, like the
C backend's native steps), so a slice at a traced position, as a scan body
or a ``.at[i].set`` makes, reads nothing back to the host.

A kernel has a thread per output element: for dynamic_slice the element
at the clamped start plus its position; for dynamic_update_slice the
update's element inside the window, else the operand's.  Literal starts
are constants of the source.
"""
import numpy as np

from purejax._src.backends.cpu import codegen_ops
from purejax._src.backends.cuda.kernels import Launch, function_text, grid_stride
from purejax._src.jaxpr import Literal

NAMES = ("dynamic_slice", "dynamic_update_slice")


def _strides(shape):
  return [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]


class DynamicSliceKernel:
  """The step of a dynamic_slice or dynamic_update_slice (a ``cpu.native``
  step's: its operands may be read through views)."""

  def __init__(self, native, name):
    eqn = self.eqn = native.eqn
    self.native, self.name = native, name
    update = eqn.primitive.name == "dynamic_update_slice"
    x = eqn.invars[0]
    starts = eqn.invars[2:] if update else eqn.invars[1:]
    dims = tuple(x.aval.shape)
    window = tuple(eqn.invars[1].aval.shape) if update else tuple(eqn.params["slice_sizes"])
    ct = codegen_ops.storage_ctype(x.aval.dtype)
    # The kernel's array arguments: the operand (and update), the starts
    # that are not literals, then the output.
    self.arguments = [0, 1] if update else [0]
    params = [f"const {ct}* __restrict__ x"] + ([f"const {ct}* __restrict__ u"] if update
                                                else [])
    lines = []
    for d, (s, n, w) in enumerate(zip(starts, dims, window)):
      hi = n - w
      if type(s) is Literal:
        lines.append(f"const int64_t st{d} = {min(max(int(s.val), 0), hi)};")
        continue
      self.arguments.append(eqn.invars.index(s))
      it = codegen_ops.ctype(s.aval.dtype)
      params.append(f"const {it}* __restrict__ s{d}")
      v = f"(int64_t)*s{d}"
      if np.dtype(s.aval.dtype).kind == "u":
        lines.append(f"const int64_t st{d} = (uint64_t)*s{d} > {hi}ULL ? {hi} : {v};")
      else:
        lines.append(f"const int64_t st{d} = {v} < 0 ? 0 : {v} > {hi} ? {hi} : {v};")
    params.append(f"{ct}* __restrict__ out")
    self.count = int(np.prod(dims if update else window, dtype=np.int64))
    body = ["  int64_t rest = i, at = 0;"]
    if update:
      body.append("  int inside = 1;")
    walked, ws = (dims, _strides(window)) if update else (window, _strides(dims))
    for d in reversed(range(len(dims))):
      body.append(f"  const int64_t k{d} = rest % {walked[d]}; rest /= {walked[d]};")
      if update:
        body.append(f"  inside &= k{d} >= st{d} && k{d} < st{d} + {window[d]};")
        body.append(f"  at += (k{d} - st{d}) * {ws[d]};")
      else:
        body.append(f"  at += (st{d} + k{d}) * {ws[d]};")
    body.append("  out[i] = inside ? u[at] : x[i];" if update else "  out[i] = x[at];")
    lines += [grid_stride("i", self.count)] + body + ["}"]
    self.functions = [(name, params)]
    self.source = codegen_ops.for_cuda(function_text(name, params, lines))

  def describe(self):
    return f"kernels {self.name}: {self.eqn.primitive.name}"

  def run(self, args, kernels, device):
    """[the result] (a new device array) of the operands ``args``."""
    out_var = self.eqn.outvars[0]
    out = device.empty(out_var.aval.shape, out_var.aval.dtype)
    if self.count:
      kernels.launch(Launch(self.name, self.count, ()),
                     [args[i] for i in self.arguments] + [out])
    return [out]
