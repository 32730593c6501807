"""Runs a jitted jaxpr through its fusion plan on a GPU: the groups' and
cumulative reductions' CUDA kernels; ``scan``/``while``/``cond`` as host
loops over their bodies' GPU code (``control_flow``); the other steps
(``module.HostNumpyStep``) by their primitives' NumPy implementations, on
the device arrays where those take CuPy's (``impl_on_gpu_arrays``: matrix
products through cuBLAS, layout steps, gathers, scatters, convolutions,
pooling, sorts, FFTs through cuFFT, linear algebra through cuSOLVER), else
on host copies, their results copied back (eig, schur...; named by
``describe()``).

The GPU is a ``CupyDevice`` (CuPy arrays, kernels through NVRTC) or the
``EMULATED`` one (NumPy arrays, kernels through the system C++ compiler:
the internal backend ``purejax_backend="cuda_emulation"``, for tests).
"""
import warnings

import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.backends.cpu import fusion
from purejax._src.backends.cuda import control_flow, emulation, gpu_runtime
from purejax._src.backends.cuda import module as cuda_module
from purejax._src.backends.cuda.kernels import GroupKernels, UnsupportedOnGpu
from purejax._src.jaxpr import Literal


class EmulatedDevice:
  """The GPU emulated on the CPU: its buffers are NumPy arrays."""

  def module(self, mod):
    return emulation.compile_module(mod)

  def empty(self, shape, dtype):
    return np.empty(shape, dtype)

  def to_device(self, value, dtype):
    return np.asarray(value, dtype, order="C")   # (ascontiguousarray makes 0-d 1-d)

  def to_host(self, buffer, dtype):
    return buffer

  def full(self, shape, value, dtype):
    return np.full(shape, value, dtype)


class CupyDevice:
  """GPU ``index`` through CuPy (``gpu_runtime``)."""

  def __init__(self, index):
    self.index = index

  def module(self, mod):
    return gpu_runtime.DeviceModule(mod.source, self.index)

  def empty(self, shape, dtype):
    return gpu_runtime.empty(shape, dtype, self.index)

  def to_device(self, value, dtype):
    """``value`` as a C-contiguous buffer for ``dtype`` on this GPU."""
    if not gpu_runtime.is_buffer(value) or value.device.id != self.index:
      if gpu_runtime.is_buffer(value):   # on another GPU
        value = gpu_runtime.to_host(value, dtype)
      return gpu_runtime.to_device(np.asarray(value, dtype), self.index)
    storage = gpu_runtime.storage_dtype(dtype)
    if value.dtype != storage:
      value = value.astype(storage)
    if not value.flags.c_contiguous:   # a view made by a step on the device
      value = value.copy(order="C")
    return value

  def to_host(self, buffer, dtype):
    return gpu_runtime.to_host(buffer, dtype)

  def full(self, shape, value, dtype):
    return gpu_runtime.full(shape, value, dtype, self.index)


def _literal(v, device):
  """Literal ``v`` as a device array: a scalar made there (no copy from the
  host, which would wait for the device)."""
  if np.shape(v.val) != ():
    return device.to_device(v.val, v.aval.dtype)
  return device.full((), v.val, v.aval.dtype)


EMULATED = EmulatedDevice()


def compile_jaxpr(jaxpr, device=EMULATED):
  """A callable ``(*arrays) -> list of arrays`` (``device``'s buffers, or
  host arrays it copies there) running the const-free ``jaxpr`` on
  ``device``."""
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")
  plan = fusion.plan_jaxpr(jaxpr)
  try:
    mod = cuda_module.generate(plan)
  except UnsupportedOnGpu as e:
    return _on_host(jaxpr, device, str(e))
  kernels = device.module(mod) if any(hasattr(s, "functions") for s in mod.steps) else None
  read = numpy_backend.read_vars(plan.jaxpr)
  invars, outvars = plan.jaxpr.invars, plan.jaxpr.outvars
  loops = {id(s): control_flow.compile_step(s.eqn, device, compile_jaxpr)
           for s in mod.steps if type(s) is cuda_module.HostNumpyStep}
  dead = _dead_after(mod.steps, outvars)

  def run(*args):
    env = {v: device.to_device(a, v.aval.dtype) for v, a in zip(invars, args)}
    for step, gone in zip(mod.steps, dead):
      if hasattr(step, "run"):   # a kernel step taking its operands as the NumPy step's
        args = _operands(step, env, device, True, getattr(step, "arguments", None))
        env.update(zip(step.eqn.outvars, step.run(args, kernels, device)))
      elif type(step) is not cuda_module.HostNumpyStep:
        _kernels(step, env, kernels, device)
      elif loops[id(step)] is not None:
        _loop(step, env, loops[id(step)], device)
      else:
        _host(step, env, read, device)
      for v in gone:   # its memory back to the device's pool
        env.pop(v, None)
    return [_literal(v, device) if type(v) is Literal else env[v] for v in outvars]

  run.source = mod.source
  run.module = mod
  run.plan = plan
  run.loops = loops
  return run


def _dead_after(steps, outvars):
  """For each step, the values no later step (nor the result) reads: they
  are dropped after it, so the device holds only live values (JAX frees a
  buffer after its last use too)."""
  last = {}
  for i, step in enumerate(steps):
    for v in _reads(step):
      last[v] = i
  kept = {v for v in outvars if type(v) is not Literal}
  dead = [[] for _ in steps]
  for v, i in last.items():
    if v not in kept:
      dead[i].append(v)
  return dead


def _reads(step):
  """The values ``step`` may read: a kernel group's inputs, else its
  equation's operands and, for a native step, the values they are views
  of and its fill."""
  if type(step) is GroupKernels:
    return list(step.inputs)
  native = getattr(step, "native", None)
  out = []
  for v in step.eqn.invars:
    if type(v) is not Literal:
      out += [v] if native is None else [v, native.read(v)]
  if native is not None and native.fill is not None and type(native.fill) is not Literal:
    out.append(native.fill)
  return out


_warned = set()


def _on_host(jaxpr, device, reason):
  """``jaxpr`` run by the NumPy backend on host copies of its inputs, its
  results copied back: for what the GPU backend has no kernels for yet
  (warned about once per reason)."""
  if reason not in _warned:
    _warned.add(reason)
    warnings.warn(f"purejax: {reason}; such computations run on the host (NumPy) and "
                  "their results are copied to the GPU.", RuntimeWarning, stacklevel=2)
  run_numpy = numpy_backend.compile_jaxpr(jaxpr)

  def run(*args):
    host = [device.to_host(device.to_device(a, v.aval.dtype), v.aval.dtype)
            for v, a in zip(jaxpr.invars, args)]
    return [device.to_device(o, v.aval.dtype) for o, v in zip(run_numpy(*host), jaxpr.outvars)]

  run.source = None
  run.module = None
  run.plan = None
  run.on_host = reason
  return run


def _kernels(step, env, kernels, device):
  buffers = {"in": [env[v] for v in step.inputs],
             "out": [device.empty(v.aval.shape, v.aval.dtype) for v in step.outputs],
             "scratch": [device.empty((size,), dtype) for dtype, size in step.scratch]}
  for launch in step.launches:
    kernels.launch(launch, [buffers[kind][i] for kind, i in launch.args])
  env.update(zip(step.outputs, buffers["out"]))


def _loop(step, env, run, device):
  eqn = step.eqn
  args = [_literal(v, device) if type(v) is Literal else env[v] for v in eqn.invars]
  for var, val in zip(eqn.outvars, run(*args)):
    env[var] = device.to_device(val, var.aval.dtype)


def _host(step, env, read, device):
  """Runs a step by its primitive's NumPy implementation: on the device's
  arrays where the implementation takes CuPy's (``impl_on_gpu_arrays``:
  only NumPy functions that CuPy arrays dispatch to CuPy), else on host
  copies, its results copied back."""
  eqn = step.eqn
  on_device = cuda_module.impl_on_device(eqn)
  args = _operands(step, env, device, on_device)
  impl = numpy_backend.jit_impl(eqn.primitive, numpy_backend.used_outputs(eqn, read))
  out = impl(*args, **eqn.params)
  outs = out if eqn.primitive.multiple_results else [out]
  for var, val in zip(eqn.outvars, outs):
    if val is not None:
      env[var] = device.to_device(val, var.aval.dtype)


def _operands(step, env, device, on_device, which=None):
  """The operands of ``step``'s equation (those at the positions ``which``,
  the others None): the device's arrays (``on_device``), else host copies;
  a native step's read through its views (``native.read``) or made from a
  broadcast scalar (``fill``)."""
  eqn, native = step.eqn, step.native
  fetch = (lambda b, dtype: b) if on_device else device.to_host

  def operand(v):
    if type(v) is Literal:
      return _literal(v, device) if on_device else v.val
    return fetch(env[v], v.aval.dtype)

  args = []
  for i, v in enumerate(eqn.invars):
    if which is not None and i not in which:
      args.append(None)
    elif native is not None and i == 0 and native.fill is not None:
      # A scatter's operand that broadcasts a scalar: made from the scalar.
      args.append(np.broadcast_to(operand(native.fill), v.aval.shape))
    elif native is not None and type(v) is not Literal and v not in env:
      args.append(fetch(env[native.read(v)], v.aval.dtype).reshape(v.aval.shape))   # a view
    else:
      args.append(operand(v))
  return args
