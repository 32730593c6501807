"""The compiled executable of a jaxpr: fused C kernels with NumPy between them.

``compile_jaxpr`` plans the fusion, generates one C file for the whole jaxpr,
compiles it (through ``toolchain``, which caches it) and returns a callable
with the NumPy backend's contract.  Without a usable compiler, or if the
compiler rejects the source, it warns once and returns the NumPy backend's
executable instead: compiling never makes a program fail.
"""
import ctypes
import sys
import threading
import warnings
import weakref

import numpy as np

from purejax._src.backends import numpy_backend, psum_fusion
from purejax._src.backends.cpu import blas, fast_runner, fusion, host_steps, program
from purejax._src.config import config
from purejax._src.jaxpr import Literal
from purejax._src.lax import lapack

# Contracting a * b + c into one fused multiply-add (gcc's default) rounds
# differently from NumPy's two operations; the kernels call fma explicitly
# where they want it.
EXTRA_FLAGS = ("-ffp-contract=off",)
# Host steps whose NumPy implementation is mostly matrix products.
_BLAS_HOST_PRIMS = frozenset({"conv_general_dilated", "dot_general"})
_warned = set()


def _warn_once(reason):
  if reason not in _warned:
    _warned.add(reason)
    warnings.warn(f"purejax: running on the NumPy backend instead of compiled C code: "
                  f"{reason}", RuntimeWarning, stacklevel=3)


def compile_jaxpr(jaxpr, num_threads=None):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running ``jaxpr``
  (a jaxpr whose constants are inputs) with fused C kernels of
  ``num_threads`` OpenMP threads (default: the purejax_num_threads flag)."""
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")
  plan = fusion.plan_jaxpr(jaxpr, row_prologues=True)
  if not plan.compiled_steps:
    if config.purejax_debug >= 2:
      print(f"purejax: fusion plan (nothing to compile)\n{plan.describe()}\n"
            f"{host_steps.plan_comment(plan)}", file=sys.stderr)
    return numpy_backend.compile_jaxpr(jaxpr)
  from purejax._src.backends.cpu import toolchain
  # The compiler runs of this compilation (probe, kernels, the fast runner's
  # module) end within purejax_compile_timeout all together.
  with toolchain.time_limit():
    try:
      openmp = toolchain.openmp_enabled()
      if num_threads is None:
        num_threads = config.purejax_num_threads
      source, segments = program.generate(plan, num_threads=num_threads, openmp=openmp)
      if config.purejax_debug >= 2:
        print(f"purejax: fusion plan\n{plan.describe()}\n"
              f"{host_steps.plan_comment(plan)}\n"
              f"purejax: generated C\n{source}", file=sys.stderr)
      lib = toolchain.compile_library(source, extra_flags=EXTRA_FLAGS)
    except (toolchain.CompilerUnavailable, toolchain.CompileError, OSError) as e:
      _warn_once(str(e).splitlines()[0] if str(e) else type(e).__name__)
      return numpy_backend.compile_jaxpr(jaxpr)
    blas.link(lib)
    run = _runner(plan, segments, lib, source)
  # The executable holds the library (unloaded once no executable does); the
  # scratch memory its functions keep is given back when the last executable
  # using the library is collected (executables of the same source share it:
  # another may still be running).
  _hold(lib)
  # Not at interpreter exit: a daemon thread may still be running the code.
  weakref.finalize(run, _drop, lib).atexit = False
  run.kept_blocks = lib.pj_kept_blocks   # () -> scratch blocks kept now (tests)
  run.kept_blocks.restype, run.kept_blocks.argtypes = ctypes.c_int, []
  run.release_kept = lib.pj_release   # () -> frees the kept blocks not in use (tests)
  run.release_kept.restype, run.release_kept.argtypes = None, []
  return run


_users = weakref.WeakKeyDictionary()   # library -> executables using it
_users_lock = threading.RLock()   # (a collection may run _drop inside _hold)


def _hold(lib):
  with _users_lock:
    _users[lib] = _users.get(lib, 0) + 1


def _drop(lib):
  """One executable of ``lib`` is gone: the last one frees the scratch
  blocks its functions keep (``pj_release``)."""
  with _users_lock:
    _users[lib] -= 1
    last = _users[lib] == 0
  if last:
    release = lib.pj_release
    release.restype, release.argtypes = None, []
    release()


class _SegmentCall:
  __slots__ = ("fn", "inputs", "outputs", "args_type", "name")

  def __init__(self, segment, lib):
    self.name = segment.name
    self.fn = getattr(lib, segment.name)
    self.fn.restype = ctypes.c_int
    self.inputs = [(v, np.dtype(v.aval.dtype)) for v in segment.inputs]
    self.outputs = [(v, tuple(v.aval.shape), np.dtype(v.aval.dtype))
                    for v in segment.outputs]
    self.args_type = ctypes.c_void_p * max(1, len(self.inputs) + len(self.outputs))


def _host_call(eqn, read):
  vals = [v.val if type(v) is Literal else v for v in eqn.invars]
  literal = [type(v) is Literal for v in eqn.invars]
  impl = numpy_backend.jit_impl(eqn.primitive, numpy_backend.used_outputs(eqn, read))
  return eqn.primitive, impl, eqn.params, vals, literal, eqn.outvars


def _runner(plan, segments, lib, source):
  by_first_step = {seg.steps[0]: _SegmentCall(seg, lib) for seg in segments}
  steps = []
  for step in plan.steps:
    if type(step) is not fusion.HostStep:
      if step in by_first_step:
        steps.append((True, by_first_step[step]))
    else:
      steps.append((False, step.eqn))
  # Independent psums run as one exchange (an SPMD run's devices meet once).
  steps = psum_fusion.schedule(
      steps, eqn_of=lambda s: None if s[0] else s[1],
      reads_of=lambda s: [v for v, _ in s[1].inputs] if s[0] else s[1].invars,
      writes_of=lambda s: [v for v, _, _ in s[1].outputs] if s[0] else s[1].outvars,
      make_item=lambda eqn: (False, eqn))
  read = numpy_backend.read_vars(plan.jaxpr)
  steps = [(True, s) if compiled else (False, _host_call(s, read)) for compiled, s in steps]
  invars, outvars = plan.jaxpr.invars, plan.jaxpr.outvars
  if len(steps) == 1 and steps[0][0]:
    run = _single_segment_runner(steps[0][1], invars, outvars)
  else:
    def run(*args):
      env = dict(zip(invars, args))
      for compiled, step in steps:
        if compiled:
          _call_segment(step, env)
          continue
        prim, impl, params, vals, literal, outs = step   # impl: the NumPy tier's numerics
        args = [x if lit else env[x] for x, lit in zip(vals, literal)]
        if prim.name in _BLAS_HOST_PRIMS:
          with blas.numpy_single_threaded():
            out = impl(*args, **params)
        else:
          out = impl(*args, **params)
        if prim.multiple_results:
          for var, val in zip(outs, out):
            if val is not None:   # None: an output nothing reads
              env[var] = _as_dtype(val, var.aval.dtype)
        else:
          env[outs[0]] = _as_dtype(out, outs[0].aval.dtype)
      return [v.val if type(v) is Literal else env[v] for v in outvars]

  run.source = source
  run.plan = plan
  return run


def _single_segment_runner(call, invars, outvars):
  """The common case, one compiled call and nothing else: a generated
  function of fixed arity, without loops or an environment (the call
  overhead of a small jitted function is mostly this).  Each output is a
  kernel's, an input or a literal."""
  positions = {v: i for i, v in enumerate(invars)}
  names = {"__name__": __name__, "fn": call.fn, "args_type": call.args_type, "empty": np.empty,
           "ndarray": np.ndarray, "c_array": _c_array, "address": _address,
           "fail": _out_of_memory(call.name)}
  params = [f"a{i}" for i in range(len(invars))]
  lines = [f"def run({', '.join(params)}):"]
  ptrs = []
  for i, (v, dtype) in enumerate(call.inputs):
    a, d = f"a{positions[v]}", f"d{i}"
    names[d] = dtype
    lines.append(f"  x{i} = {a} if (type({a}) is ndarray and {a}.dtype == {d} and "
                 f"{a}.flags.c_contiguous) else c_array({a}, {d})")
    ptrs.append(f"address(x{i})")
  out_index = {}
  for j, (v, shape, dtype) in enumerate(call.outputs):
    names[f"s{j}"], names[f"e{j}"] = shape, dtype
    lines.append(f"  o{j} = empty(s{j}, e{j})")
    ptrs.append(f"address(o{j})")
    out_index[v] = j
  lines.append(f"  if fn(args_type({', '.join(ptrs)})):")
  lines.append("    fail()")
  results = []
  for k, v in enumerate(outvars):
    if type(v) is Literal:
      names[f"lit{k}"] = v.val
      results.append(f"lit{k}")
    elif v in out_index:
      results.append(f"o{out_index[v]}")
    else:
      results.append(f"a{positions[v]}")
  lines.append(f"  return [{', '.join(results)}]")
  exec(compile("\n".join(lines), f"<purejax runner {call.name}>", "exec"), names)
  run = names["run"]
  if any(type(v) is Literal for v in outvars):
    return run
  codes = [out_index[v] if v in out_index else -positions[v] - 1 for v in outvars]
  fast = fast_runner.make(call.fn, run, names["fail"], [positions[v] for v, _ in call.inputs],
                          [d for _, d in call.inputs], [s for _, s, _ in call.outputs],
                          [d for _, _, d in call.outputs], codes)
  if fast is None:
    return run
  # Every result read only and of its var's dtype: the caller may wrap it as is.
  fast.read_only_outputs = all(c >= 0 for c in codes)
  return fast


def _out_of_memory(name):
  def fail():
    raise MemoryError(f"purejax: out of memory in compiled {name}")
  return fail


def _call_segment(call, env):
  ptrs = call.args_type()
  i = 0
  for v, dtype in call.inputs:
    a = env[v]
    if type(a) is not np.ndarray or a.dtype != dtype or not a.flags.c_contiguous:
      a = env[v] = _c_array(a, dtype)
    ptrs[i] = _address(a)
    i += 1
  for v, shape, dtype in call.outputs:
    a = env[v] = np.empty(shape, dtype)
    ptrs[i] = _address(a)
    i += 1
  if call.fn(ptrs):
    _out_of_memory(call.name)()


def _c_array(x, dtype):
  x = np.asarray(x, dtype=dtype)
  return x if x.flags.c_contiguous else lapack.c_contiguous(x)


def _as_dtype(value, dtype):
  if type(value) is not np.ndarray or value.dtype != dtype:
    return np.asarray(value, dtype=dtype)
  return value


def _find_data_offset():
  """Where an ndarray object keeps its data pointer (right after the object
  header in NumPy's layout), if reading it there gives the right address."""
  offset = object.__basicsize__
  probes = [np.empty(3, np.float32), np.arange(10.0)[2:], np.zeros((2, 3), np.int8).T,
            np.empty((), np.uint8)]
  try:
    if all(ctypes.c_void_p.from_address(id(a) + offset).value == a.ctypes.data
           for a in probes):
      return offset
  except (ValueError, OSError):
    pass
  return None


_DATA_OFFSET = _find_data_offset()
if _DATA_OFFSET is not None:
  _from_address = ctypes.c_void_p.from_address

  def _address(a):
    # 10x faster than a.ctypes.data, which dominates the call overhead.
    return _from_address(id(a) + _DATA_OFFSET).value
else:
  def _address(a):
    return a.ctypes.data
