"""Computations on a GPU: a jitted function called with arrays that live on
a GPU runs there (``run_jitted``), and so does an eager primitive applied
to them, as a one-equation jitted computation (``apply_primitive``), which
is how JAX runs eager operations too.

The CPU paths reach here only through ``OnGpu``: ``array.dense_value``
raises it for a GPU value, so the jit fast paths cost nothing more on the
CPU.  Host inputs of a computation on a GPU are copied there; results stay
on the GPU, committed to it where an input was (as in JAX).
"""
import functools
import weakref

import numpy as np

from purejax._src import async_dispatch, core, debug_nans, dtypes, errors
from purejax._src.array import Array, _new, gpu_of
from purejax._src.async_dispatch import Pending
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from purejax._src import devices as _devices
from purejax._src.devices import SingleDeviceSharding, default_device, gpu_list
from purejax._src.interpreters.dispatch import eager_aval


_executables = weakref.WeakKeyDictionary()   # const-free closed jaxpr -> {GPU: executable}
_defer = weakref.WeakKeyDictionary()   # const-free closed jaxpr -> whether calls are deferred


def gpu_index(values):
  """The GPU that the device buffers (or pending ones) among ``values`` are
  on (None: none is); JAX's ValueError for buffers on different GPUs."""
  found = {i for i in map(gpu_of, values) if i is not None}
  if len(found) > 1:
    devices = ", ".join(repr(gpu_list()[i]) for i in sorted(found))
    raise ValueError(f"Received incompatible devices for jitted computation. Got argument "
                     f"devices {devices}: a computation runs on one device.")
  return found.pop() if found else None


def runs_on_gpu(arrays):
  """Whether a computation on Arrays ``arrays`` runs on a GPU: one of them
  is there (or being computed there), or a GPU is the default device."""
  return any(gpu_of(x._v) is not None for x in arrays) or _devices.gpu_is_default()


def forget_executables():
  """Drops every compiled executable (the GPU runtime changed)."""
  _executables.clear()


def executable(closed_jaxpr, index):
  """The GPU ``index``'s executable of a const-free closed jaxpr (once each)."""
  per_gpu = _executables.get(closed_jaxpr)
  if per_gpu is None:
    per_gpu = _executables[closed_jaxpr] = {}
  exe = per_gpu.get(index)
  if exe is None:
    from purejax._src import backends
    from purejax._src.interpreters import partial_eval as pe
    from purejax._src.pjit import _refuse_unstaged
    _refuse_unstaged(closed_jaxpr.jaxpr)   # what no compiler takes, as on the CPU
    exe = per_gpu[index] = backends.compile_jaxpr(pe.dce_jaxpr(closed_jaxpr.jaxpr), "cuda",
                                                  device_index=index)
  return exe


def _value(x, aval, keep_pending=False):
  """The value of input ``x``: a GPU value still being computed stays
  pending with ``keep_pending`` (the worker, running in order, finds it done)."""
  if type(x) is not Array:
    if dtypes.is_extended(aval.dtype):   # a typed key array: its key data
      x = x._base
    else:
      return np.asarray(x, aval.dtype)
  v = x._v
  if keep_pending and type(v) is Pending and v.gpu is not None:
    return v
  return x._value


def _deferred(closed_jaxpr):
  """Whether calls of ``closed_jaxpr`` run on the dispatch worker: it waits
  for the host and returns no key arrays (see async_dispatch)."""
  deferred = _defer.get(closed_jaxpr)
  if deferred is None:
    deferred = _defer[closed_jaxpr] = (
        async_dispatch.waits_on_host_on_gpu(closed_jaxpr)
        and not any(dtypes.is_extended(a.dtype) for a in closed_jaxpr.out_avals))
  return deferred


def _run(exe, index, *vals):
  try:
    return exe(*vals)
  except MemoryError as e:   # CuPy's OutOfMemoryError: XLA's error
    raise errors.JaxRuntimeError(f"RESOURCE_EXHAUSTED: Out of memory on {gpu_list()[index]}: "
                                 f"{e}") from None


def _run_on_worker(exe, index, *vals):
  outs = _run(exe, index, *vals)
  # Done only once its kernels are: the caller's thread may launch on
  # another stream (with CuPy's per-thread default streams).
  gpu_runtime.finish_stream(index)
  return outs


def _wrap(buffer, aval, index, committed):
  if dtypes.is_extended(aval.dtype):   # key data, back as a key array
    from purejax._src.random.keys import PRNGKeyArray
    data = core.ShapedArray(buffer.shape, buffer.dtype)
    return PRNGKeyArray(aval.dtype._impl, wrap_device(buffer, data, index, committed))
  return wrap_device(buffer, aval, index, committed)


def wrap_device(buffer, aval, index, committed=True):
  """An Array of the device buffer ``buffer`` (on GPU ``index``), committed
  to it or not."""
  out = _new(Array)
  out._v = buffer
  out.aval = aval
  if committed:
    out._sharding = SingleDeviceSharding(gpu_list()[index])
  return out


def run_jitted(closed_jaxpr, inputs, rerun=None, check=True, may_defer=False):
  """Runs a const-free closed jaxpr on the GPU its inputs are on (else on
  the default GPU): a list of Arrays there.  With ``jax_debug_nans`` &
  co., the outputs are checked on the host (unless ``check`` is False);
  ``rerun``: the user's function (see ``debug_nans.check_jit``).  With
  ``may_defer`` (a jitted call), a computation that waits for the host
  runs on the dispatch worker and its Arrays are pending, as in JAX."""
  defer = may_defer and not debug_nans.enabled and _deferred(closed_jaxpr)
  vals = [_value(x, a, defer) for x, a in zip(inputs, closed_jaxpr.in_avals)]
  index = gpu_index(vals)
  if index is None:   # all on the host: on the default device (a GPU)
    index = default_device().id
  exe = executable(closed_jaxpr, index)
  if defer:
    outs = async_dispatch.dispatch(functools.partial(_run_on_worker, exe, index), vals,
                                   [a.dtype for a in closed_jaxpr.out_avals], gpu=index)
  else:
    outs = _run(exe, index, *vals)
  committed = any(getattr(x, "committed", False) for x in inputs)
  results = [_wrap(b, a, index, committed) for b, a in zip(outs, closed_jaxpr.out_avals)]
  if debug_nans.enabled and check:
    debug_nans.check_jit(closed_jaxpr, [core.concrete_numpy_value(x) for x in inputs],
                         [core.concrete_numpy_value(r) for r in results], rerun)
  return results


_eager = {}   # (primitive, avals, params) -> one-equation closed jaxpr
_MAX_EAGER = 4096   # entries kept (emptied when full)


def _calls_unstaged(primitive, params):
  """Whether ``primitive`` calls a jaxpr holding what no compiler takes."""
  param = getattr(primitive, "call_jaxpr_param", None)
  if param is None or type(params.get(param)) is not ClosedJaxpr:
    return False
  from purejax._src.pjit import has_unstaged
  return has_unstaged(params[param])


def apply_primitive(primitive, args, params):
  """``primitive`` applied eagerly on the GPU (some argument is there, or
  the GPU is the default device)."""
  # (eager_aval: JAX's errors for an escaped tracer, a value of no JAX type)
  avals = tuple(x.aval if type(x) is Array else eager_aval(primitive, i, x)
                for i, x in enumerate(args))
  if primitive.name in ("create_token", "after_all"):   # no data: a Token, as on the CPU
    return primitive.impl(*args, **params)
  if getattr(primitive, "unstaged_error", None) is not None:
    # What no compiler takes (an unfunctionalized checkify.check) runs as
    # it is, on the host, as on the CPU.
    from purejax._src.array import wrap_numpy
    out = primitive.impl(*[core.concrete_numpy_value(x) for x in args], **params)
    out_avals = primitive.eval_avals(avals, params)
    if primitive.multiple_results:
      return [wrap_numpy(o, a) for o, a in zip(out, out_avals)]
    return wrap_numpy(out, out_avals)
  if _calls_unstaged(primitive, params):
    # A custom_jvp/custom_vjp function holding an unfunctionalized check:
    # its impl runs it equation by equation, as on the CPU.
    return primitive.impl(*args, **params)
  try:
    key = (primitive, avals, tuple(sorted(params.items())))
    hash(key)
  except TypeError:   # unhashable params: made each time
    key = None
  closed = _eager.get(key) if key is not None else None
  if closed is None:
    closed = _one_equation(primitive, avals, params)
    if key is not None:
      if len(_eager) >= _MAX_EAGER:
        _eager.clear()
      _eager[key] = closed
  outs = run_jitted(closed, args, check=False)
  if debug_nans.enabled:   # checked as one eager operation
    debug_nans.check_eager(primitive.name, [core.concrete_numpy_value(x) for x in args],
                           [core.concrete_numpy_value(o) for o in outs], primitive, params)
  return outs if primitive.multiple_results else outs[0]


def _one_equation(primitive, avals, params):
  """The jaxpr applying ``primitive`` once to inputs of ``avals``."""
  out = primitive.eval_avals(avals, params)
  invars = [Var(a) for a in avals]
  outvars = [Var(a) for a in (out if primitive.multiple_results else [out])]
  eqn = JaxprEqn(invars, outvars, primitive, params)
  return ClosedJaxpr(Jaxpr([], invars, outvars, [eqn]), [])
