"""Runs a jitted jaxpr through its fusion plan on a GPU: the groups' CUDA
kernels, the other steps on the host by NumPy (``module.HostNumpyStep``:
what cuBLAS, cuSOLVER, CuPy and device loops are to do on a GPU; their
operands go to the host and their results back, named by
``describe()``).

The GPU is a ``CupyDevice`` (CuPy arrays, kernels through NVRTC) or the
``EMULATED`` one (NumPy arrays, kernels through the system C++ compiler:
the internal backend ``purejax_backend="cuda_emulation"``, for tests).
"""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.backends.cpu import fusion
from purejax._src.backends.cuda import emulation, gpu_runtime, module as cuda_module
from purejax._src.jaxpr import Literal


class EmulatedDevice:
  """The GPU emulated on the CPU: its buffers are NumPy arrays."""

  def module(self, mod):
    return emulation.compile_module(mod)

  def empty(self, shape, dtype):
    return np.empty(shape, dtype)

  def to_device(self, value, dtype):
    return np.asarray(value, dtype, order="C")   # (ascontiguousarray makes 0-d 1-d)

  def to_host(self, buffer):
    return buffer


class CupyDevice:
  """GPU ``index`` through CuPy (``gpu_runtime``)."""

  def __init__(self, index):
    self.index = index

  def module(self, mod):
    return gpu_runtime.DeviceModule(mod.source, self.index)

  def empty(self, shape, dtype):
    return gpu_runtime.empty(shape, dtype, self.index)

  def to_device(self, value, dtype):
    if gpu_runtime.is_buffer(value) and value.device.id == self.index:
      if value.dtype == dtype:
        return value
      value = gpu_runtime.to_host(value)
    return gpu_runtime.to_device(np.asarray(value, dtype), self.index)

  def to_host(self, buffer):
    return gpu_runtime.to_host(buffer)


EMULATED = EmulatedDevice()


def compile_jaxpr(jaxpr, device=EMULATED):
  """A callable ``(*arrays) -> list of arrays`` (``device``'s buffers, or
  host arrays it copies there) running the const-free ``jaxpr`` on
  ``device``."""
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")
  plan = fusion.plan_jaxpr(jaxpr)
  mod = cuda_module.generate(plan)
  kernels = device.module(mod) if any(hasattr(s, "launches") for s in mod.steps) else None
  read = numpy_backend.read_vars(plan.jaxpr)
  invars, outvars = plan.jaxpr.invars, plan.jaxpr.outvars

  def run(*args):
    env = {v: device.to_device(a, v.aval.dtype) for v, a in zip(invars, args)}
    for step in mod.steps:
      if type(step) is cuda_module.HostNumpyStep:
        _host(step, env, read, device)
      else:
        _kernels(step, env, kernels, device)
    return [device.to_device(v.val, v.aval.dtype) if type(v) is Literal else env[v]
            for v in outvars]

  run.source = mod.source
  run.module = mod
  run.plan = plan
  return run


def _kernels(step, env, kernels, device):
  buffers = {"in": [env[v] for v in step.inputs],
             "out": [device.empty(v.aval.shape, v.aval.dtype) for v in step.outputs],
             "scratch": [device.empty((size,), dtype) for dtype, size in step.scratch]}
  for launch in step.launches:
    kernels.launch(launch, [buffers[kind][i] for kind, i in launch.args])
  env.update(zip(step.outputs, buffers["out"]))


def _operand(env, v, device):
  return v.val if type(v) is Literal else device.to_host(env[v])


def _host(step, env, read, device):
  eqn, native = step.eqn, step.native
  args = []
  for i, v in enumerate(eqn.invars):
    if native is not None and i == 0 and native.fill is not None:
      # A scatter's operand that broadcasts a scalar: made from the scalar.
      args.append(np.broadcast_to(_operand(env, native.fill, device), v.aval.shape))
    elif native is not None and type(v) is not Literal and v not in env:
      # a same-layout view
      args.append(np.reshape(device.to_host(env[native.read(v)]), v.aval.shape))
    else:
      args.append(_operand(env, v, device))
  impl = numpy_backend.jit_impl(eqn.primitive, numpy_backend.used_outputs(eqn, read))
  out = impl(*args, **eqn.params)
  outs = out if eqn.primitive.multiple_results else [out]
  for var, val in zip(eqn.outvars, outs):
    if val is not None:
      env[var] = device.to_device(val, var.aval.dtype)
