"""Runs a jitted jaxpr through its fusion plan on the emulated GPU: the
groups' CUDA kernels (``emulation``), the other steps on the host by NumPy
(``module.HostNumpyStep``: what cuBLAS, cuSOLVER, CuPy and device loops are
to do on a GPU).  Selected by the internal backend value
``purejax_backend="cuda_emulation"`` (for tests; ``jit`` does not use it
unless asked)."""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.backends.cpu import fusion
from purejax._src.backends.cuda import emulation, module as cuda_module
from purejax._src.jaxpr import Literal


def compile_jaxpr(jaxpr):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running the
  const-free ``jaxpr`` on the emulated GPU."""
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")
  plan = fusion.plan_jaxpr(jaxpr)
  mod = cuda_module.generate(plan)
  emulated = emulation.compile_module(mod)
  read = numpy_backend.read_vars(plan.jaxpr)
  invars, outvars = plan.jaxpr.invars, plan.jaxpr.outvars

  def run(*args):
    env = {v: np.ascontiguousarray(np.asarray(a, v.aval.dtype)) for v, a in zip(invars, args)}
    for step in mod.steps:
      if type(step) is cuda_module.HostNumpyStep:
        _host(step, env, read)
      else:
        _kernels(step, env, emulated)
    return [v.val if type(v) is Literal else env[v] for v in outvars]

  run.source = mod.source
  run.module = mod
  run.plan = plan
  return run


def _kernels(step, env, emulated):
  buffers = {"in": [env[v] for v in step.inputs],
             "out": [np.empty(v.aval.shape, v.aval.dtype) for v in step.outputs],
             "scratch": [np.empty(size, dtype) for dtype, size in step.scratch]}
  for launch in step.launches:
    emulated.launch(launch, [buffers[kind][i] for kind, i in launch.args])
  env.update(zip(step.outputs, buffers["out"]))


def _operand(env, v):
  return v.val if type(v) is Literal else env[v]


def _host(step, env, read):
  eqn, native = step.eqn, step.native
  args = []
  for i, v in enumerate(eqn.invars):
    if native is not None and i == 0 and native.fill is not None:
      # A scatter's operand that broadcasts a scalar: made from the scalar.
      args.append(np.broadcast_to(_operand(env, native.fill), v.aval.shape))
    elif native is not None and type(v) is not Literal and v not in env:
      args.append(np.reshape(env[native.read(v)], v.aval.shape))   # a same-layout view
    else:
      args.append(_operand(env, v))
  impl = numpy_backend.jit_impl(eqn.primitive, numpy_backend.used_outputs(eqn, read))
  out = impl(*args, **eqn.params)
  outs = out if eqn.primitive.multiple_results else [out]
  for var, val in zip(eqn.outvars, outs):
    if val is not None:
      env[var] = np.ascontiguousarray(np.asarray(val, var.aval.dtype))
