"""A jitted function replayed as a CUDA graph (``purejax_cuda_graphs``,
PUREJAX_CUDA_GRAPHS=1): its second call captures everything the runner
launches (kernels, cuBLAS, cuSOLVER, cuFFT, sorts; a scan's iterations
unrolled) on a capture stream into one graph, and every later call is a
copy of the arguments into the graph's input buffers, one graph launch
and a copy of its outputs: no Python per kernel.

The graph's buffers live at fixed addresses, so everything allocated
while capturing comes from a memory pool of the graph's own, kept as long
as the graph (nothing else may take those addresses), and outputs are
copied out (the next launch overwrites them).  A function whose steps
read values back to the host (a while loop's condition, a cond's index,
host steps) is not captured; one whose capture fails (an operation that
synchronizes) runs uncaptured from then on.  The first call runs
uncaptured too: it compiles the kernels and makes the cuFFT plans, which
capturing could not.
"""
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.backends.cuda import module as cuda_module


def capturable(run):
  """Whether compiled ``run`` (runner.compile_jaxpr's) reads nothing back
  to the host: kernel steps, steps on the device's arrays, and scans whose
  bodies are capturable."""
  if getattr(run, "module", None) is None:
    return False   # (the whole function on the host)
  for step in run.module.steps:
    if type(step) is not cuda_module.HostNumpyStep:
      continue
    name = step.eqn.primitive.name
    if name == "scan":
      if not all(capturable(body) for body in run.loops[id(step)].bodies):
        return False
    elif name in ("while", "cond") or not cuda_module.impl_on_device(step.eqn):
      return False
  return True


class Replayed:
  """``run`` (a CupyDevice's compiled jaxpr) replayed as a CUDA graph from
  its third call on (see the module's docstring)."""

  def __init__(self, run, device, in_avals):
    self.run, self.device, self.in_avals = run, device, in_avals
    self.calls = 0
    self.graph = None
    self.capturable = capturable(run)
    self.source, self.module, self.plan = run.source, run.module, run.plan

  def __call__(self, *args):
    self.calls += 1
    if self.graph is None:
      if not self.capturable or self.calls < 2 or not self._capture(args):
        return self.run(*args)
    cp = gpu_runtime.cupy()
    with cp.cuda.Device(self.device.index):
      for buffer, arg, aval in zip(self.inputs, args, self.in_avals):
        buffer[...] = self.device.to_device(arg, aval.dtype)
      self.graph.launch(stream=cp.cuda.get_current_stream())
      return [out.copy() for out in self.outputs]

  def _capture(self, args):
    """Captures the graph (True), or marks the function uncapturable."""
    cp = gpu_runtime.cupy()
    pool = cp.cuda.MemoryPool()
    with cp.cuda.Device(self.device.index), cp.cuda.using_allocator(pool.malloc):
      stream = cp.cuda.Stream(non_blocking=True)   # (a stream of this GPU)
      inputs = [self.device.empty(a.shape, a.dtype) for a in self.in_avals]
      with stream:
        stream.begin_capture()
        try:
          outputs = self.run(*inputs)
        except Exception:   # noqa: BLE001  (an operation capturing refuses)
          outputs = None
        try:
          graph = stream.end_capture()
        except Exception:   # noqa: BLE001  (the capture was invalidated)
          graph = None
    if outputs is None or graph is None:
      self.capturable = False
      return False
    self.graph, self.inputs, self.outputs, self.pool = graph, inputs, outputs, pool
    return True
