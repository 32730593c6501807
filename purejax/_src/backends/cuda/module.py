"""A plan's CUDA module: the source of all its groups' kernels (after the
device prelude) and its steps in order: GroupKernels (fused groups,
cumulative reductions), kernel steps with a ``run`` (ScatterKernels,
DynamicSliceKernels), or steps run by the primitives' NumPy
implementations (matrix products, control flow, sorts, gathers...; on the
device arrays where those take CuPy's)."""
import numpy as np

from purejax._src.backends.cpu.fusion import Group
from purejax._src.backends.cuda import (device_prelude, dynamic_slices, kernels, scans, scatters,
                                        tridiagonal)


class HostNumpyStep:
  """An equation the GPU backend runs on the host through NumPy for now
  (``native``: one the C backend compiles natively; its operands may be
  read through ``read``/``fill`` as there)."""

  def __init__(self, eqn, native=None):
    self.eqn, self.native = eqn, native

  def describe(self):
    name = self.eqn.primitive.name
    if name in ("scan", "while", "cond"):
      return f"host loop over GPU code: {name}"
    where = "device arrays" if impl_on_device(self.eqn) else "host"
    return f"{where} (NumPy implementation): {name}"


def impl_on_device(eqn):
  """Whether ``eqn`` runs by its NumPy implementation on the device's
  arrays: the primitive says so (``impl_on_gpu_arrays``: True, or a
  predicate of the equation), and no value is of a type held as its bits
  (bfloat16...), which the implementation would take for integers."""
  says = getattr(eqn.primitive, "impl_on_gpu_arrays", False)
  if callable(says):
    says = says(eqn)
  return bool(says) and all(np.dtype(v.aval.dtype).kind != "V"
                            for v in list(eqn.invars) + list(eqn.outvars))


class Module:

  def __init__(self, plan, steps, source):
    self.plan, self.steps, self.source = plan, steps, source

  def describe(self):
    return "\n".join(f"  step {i}: " + (s.describe() if hasattr(s, "describe") else
                                        f"kernels {', '.join(f for f, _ in s.functions)}")
                     for i, s in enumerate(self.steps))


def _kernel_step(plan, step, name):
  """The kernel step (named ``name``) computing ``step`` of ``plan``, or
  None for a step run by its primitive's NumPy implementation."""
  if type(step) is Group:
    return kernels.build_group(plan, step, name)
  eqn, native = step.eqn, hasattr(step, "inputs")
  prim = eqn.primitive.name
  if prim in scans.NAMES:
    return scans.build(eqn, name)
  if native and scatters.supported(eqn):
    return scatters.ScatterKernel(step, name)
  if native and prim in dynamic_slices.NAMES:
    return dynamic_slices.DynamicSliceKernel(step, name)
  if tridiagonal.supported(eqn):
    return tridiagonal.TridiagonalKernel(eqn, name)
  return None


def generate(plan):
  """The Module of ``plan`` (a ``cpu.fusion`` Plan)."""
  steps, sources = [], [device_prelude.PRELUDE]
  for step in plan.steps:
    k = _kernel_step(plan, step, f"kernel_{len(sources) - 1}")
    if k is not None:
      sources.append(k.source)
      steps.append(k)
    elif hasattr(step, "inputs"):   # a native step: its operands may be views
      steps.append(HostNumpyStep(step.eqn, native=step))
    else:
      steps.append(HostNumpyStep(step.eqn))
  return Module(plan, steps, "\n".join(sources))
