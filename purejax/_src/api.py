"""User-facing transformations of the core: jit, make_jaxpr, eval_shape,
device_put and friends."""
import functools
import inspect
import sys
import time
import weakref

import numpy as np

from purejax._src import allocation
from purejax._src import core
from purejax._src import dtypes
from purejax._src import host_memory
from purejax._src import debug_nans as _debug_nans
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src import devices as _devices
from purejax._src import async_dispatch
from purejax._src import compile_log
from purejax._src import refs_discharge
from purejax._src.donation import Donation
from purejax._src.array import (
    Array, OnGpu, dense_value, pending_or_dense, place_on_mesh, wrap_numpy, wrap_pending,
    wrap_read_only)
from purejax._src.config import config
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.dispatch import unaliased
from purejax._src import mesh_context
from purejax._src.jaxpr import ClosedJaxpr, Literal, eval_jaxpr
from purejax._src.mesh_context import concrete_mesh
from purejax._src.pjit import _mesh_param, close_consts, executable_for, hoist_consts, pjit_p
from purejax._src.shape_dtype_struct import ShapeDtypeStruct
from purejax._src.stages import Traced

_ctx = core._ctx
_eval_trace = core.eval_trace


# ---------------------------------------------------------------------------
# Splitting a call's arguments into static values and traced leaves

def _normalize_argnums(fun, static_argnums, static_argnames):
  """JAX infers static_argnames from static_argnums and vice versa."""
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)
  if isinstance(static_argnames, str):
    static_argnames = (static_argnames,)
  static_argnums = tuple(static_argnums or ())
  static_argnames = tuple(static_argnames or ())
  if not static_argnums and not static_argnames:
    return (), ()   # nothing to infer: skip the (slow) signature inspection
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    return static_argnums, static_argnames
  positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  nums, names = set(static_argnums), set(static_argnames)
  for i, p in enumerate(positional):
    if p.name in names:
      nums.add(i)
    if (i in nums or i - len(positional) in nums) and p.kind != p.POSITIONAL_ONLY:
      names.add(p.name)
  return tuple(sorted(nums)), tuple(sorted(names))


def _check_argnums_fit(fun, static_argnums, static_argnames, donate_argnums):
  """As JAX, when ``jit`` is applied: indices past the signature's positional
  parameters, and static names it does not have, are errors."""
  if static_argnums is None and not static_argnames and donate_argnums is None:
    return
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    return
  if not any(p.kind == p.VAR_POSITIONAL for p in params):
    n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    for kind, nums in (("static_argnums", static_argnums), ("donate_argnums", donate_argnums)):
      nums = (nums,) if isinstance(nums, int) else tuple(nums or ())
      if any(not -n <= i < n for i in nums):
        raise ValueError(f"Jitted function has {kind}={nums}, but only accepts {n} "
                         "positional arguments.")
  names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames or ()
  if names and not any(p.kind == p.VAR_KEYWORD for p in params):
    bad = set(names) - {p.name for p in params if p.kind != p.POSITIONAL_ONLY}
    if bad:
      raise ValueError(f"Jitted function has invalid argnames {bad} in static_argnames. "
                       "Function does not take these args.")


_NO_STATICS = ((), ())


class _CallSignature:
  """One call's split: static values, flat dynamic leaves and their tree."""
  __slots__ = ("statics", "leaves", "treedef", "dyn_positions", "dyn_kwarg_names")

  def __init__(self, args, kwargs, static_argnums, static_argnames):
    nargs = len(args)
    if not kwargs and not static_argnums:   # the common case, kept fast
      self.statics = _NO_STATICS
      self.dyn_positions = range(nargs)
      self.dyn_kwarg_names = ()
      self.leaves, self.treedef = tree_util.tree_flatten((args, {}))
      return
    static_pos = {i % nargs for i in static_argnums if -nargs <= i < nargs} if nargs else set()
    dyn_positions = [i for i in range(nargs) if i not in static_pos]
    dyn_kwarg_names = sorted(k for k in kwargs if k not in static_argnames)
    self.statics = (tuple((i, args[i]) for i in sorted(static_pos)),
                    tuple(sorted((k, v) for k, v in kwargs.items() if k in static_argnames)))
    dyn_args = tuple(args[i] for i in dyn_positions)
    dyn_kwargs = {k: kwargs[k] for k in dyn_kwarg_names}
    self.leaves, self.treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    self.dyn_positions = dyn_positions
    self.dyn_kwarg_names = dyn_kwarg_names

  def rebuild(self, nargs, leaves):
    """The (args, kwargs) a call sees, with ``leaves`` for the dynamic ones."""
    dyn_args, dyn_kwargs = self.treedef.unflatten(leaves)
    args = [None] * nargs
    for i, x in zip(self.dyn_positions, dyn_args):
      args[i] = x
    for i, x in self.statics[0]:
      args[i] = x
    kwargs = dict(dyn_kwargs)
    kwargs.update(self.statics[1])
    return args, kwargs


def _check_hashable(statics):
  for _, value in statics[0] + statics[1]:
    try:
      hash(value)
    except TypeError as err:
      raise ValueError(
          "Non-hashable static arguments are not supported. An error occurred "
          f"while trying to hash an object of type {type(value)}, {value}. "
          f"The error was:\nTypeError: {err}\n") from None


def _arg_names(fun, sig_split, args, kwargs):
  """Names of the flat dynamic leaves (``x``, ``d['a']``, ``args[1]``)."""
  try:
    params = inspect.signature(fun).parameters
  except (TypeError, ValueError):
    params = {}
  positional = [p.name for p in params.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  var_pos = next((p.name for p in params.values() if p.kind == p.VAR_POSITIONAL), "args")
  var_kw = next((p.name for p in params.values() if p.kind == p.VAR_KEYWORD), "kwargs")
  names = []

  def add(base, value):
    for path, _ in tree_util.tree_flatten_with_path(value)[0]:
      names.append(base + tree_util.keystr(path))

  for i in sig_split.dyn_positions:
    add(positional[i] if i < len(positional) else f"{var_pos}[{i - len(positional)}]", args[i])
  for k in sig_split.dyn_kwarg_names:
    add(k if k in params else f"{var_kw}[{k!r}]", kwargs[k])
  return names


class _LazyArgNames:
  """``_arg_names``, computed only if an error message asks for them
  (inspecting the signature is a good part of a first call's tracing)."""
  __slots__ = ("_inputs", "_names")

  def __init__(self, *inputs):
    self._inputs = inputs
    self._names = None

  def _get(self):
    if self._names is None:
      self._names = _arg_names(*self._inputs)
      self._inputs = None
    return self._names

  def __len__(self):
    return len(self._get())

  def __getitem__(self, i):
    return self._get()[i]

  def __iter__(self):
    return iter(self._get())


def _int_leaf_aval(leaf, name):
  try:
    return core.get_aval(leaf)
  except OverflowError:
    raise OverflowError("An overflow was encountered while parsing an argument to a jitted "
                        f"computation, whose argument path is {name}. Got {type(leaf)} "
                        f"with value {leaf}") from None


def _is_value(leaf):
  """Whether ``leaf`` is a value a call can run on (not a shape-and-dtype stand-in)."""
  if isinstance(leaf, (core.AbstractValue, ShapeDtypeStruct)):
    return False
  try:
    core.get_aval(leaf)
  except TypeError:
    return False
  return True


def _leaf_aval(fun, leaf, name, for_call=False):
  """``leaf``'s aval to trace with.  Tracing alone (``eval_shape``, ``trace``)
  takes abstract stand-ins (a ShapeDtypeStruct, a ShapedArray); a call needs values."""
  try:
    aval = core.shaped_abstractify(leaf)
  except TypeError:
    raise TypeError(
        f"Error interpreting argument to {fun} as an abstract array. The "
        f"problematic value is of type {type(leaf)} and was passed to the "
        f"function at path {name}.\nThis typically means that a jit-wrapped "
        "function was called with a non-array argument, and this argument was "
        "not marked as static using the static_argnums or static_argnames "
        "parameters of jax.jit.") from None
  if for_call and not _is_value(leaf):   # (JAX's two forms of the message)
    what = (f"'{name}' of shape {aval.str_short()}" if isinstance(leaf, ShapeDtypeStruct)
            else f"'{leaf}'")
    raise TypeError(f"Argument {what} of type {type(leaf)} is not a valid JAX type.")
  return aval


# ---------------------------------------------------------------------------
# Tracing a call to a jaxpr

class _Traced:
  """A traced call: its closed jaxpr (consts hoisted to leading inputs),
  the constant values, and the output tree."""
  __slots__ = ("jaxpr", "consts", "out_tree", "in_avals", "closes_over_tracers",
               "_executable", "_large", "ctx_mesh")

  def __init__(self, jaxpr, consts, out_tree, in_avals):
    self.jaxpr = jaxpr
    self.consts = consts
    self.out_tree = out_tree
    self.in_avals = in_avals
    self.closes_over_tracers = any(isinstance(c, core.Tracer) for c in consts)
    self._executable = None
    self._large = None
    self.ctx_mesh = None   # the mesh set while tracing (a jit param, as JAX prints it)

  def runs_async(self):
    """Whether calls are dispatched asynchronously (large computations)."""
    if self._large is None:
      # Key outputs come back as key arrays, made once the values are there.
      self._large = async_dispatch.is_large(self.jaxpr) and not _has_key_outputs(self)
    return self._large and not _debug_nans.enabled

  def executable(self):
    backend = config.backend_key()   # the backend flags may change between calls
    if self._executable is None or self._executable[0] != backend:
      _check_no_tokens(self.jaxpr)
      self._executable = (backend, executable_for(self.jaxpr))
    return self._executable[1]


def _check_no_tokens(closed_jaxpr):
  avals = list(closed_jaxpr.in_avals) + list(closed_jaxpr.out_avals)
  if any(getattr(a, "is_token", False) for a in avals):
    raise NotImplementedError(
        "purejax: tokens (lax.create_token, lax.after_all) cannot be arguments or "
        "results of a jitted function; use them inside it, or outside jit")


def _trace_call(fun, sig_split, args, kwargs, in_avals, traced_for="jit"):
  debug = pe.DebugInfo(source_info.function_location(fun),
                       _LazyArgNames(fun, sig_split, args, kwargs), traced_for)
  out_tree_box = []
  leak_box = []   # the trace, when tracer leaks are checked

  def flat_fun(*leaves):
    if config.jax_check_tracer_leaks:
      leak_box.append(core.current_trace())
    call_args, call_kwargs = sig_split.rebuild(len(args), leaves)
    out = fun(*call_args, **call_kwargs)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    refs_discharge.check_no_ref_outputs(
        fun, traced_for, sig_split.leaves, leaves, out_leaves,
        lambda: _arg_names(fun, sig_split, args, kwargs))
    for leaf in out_leaves:
      if not core.is_array_like(leaf):
        _check_output_leaves(fun, out, traced_for)
    out_tree_box.append(out_tree)
    return out_leaves

  jaxpr, consts = pe.trace_to_jaxpr(flat_fun, in_avals, debug)
  if leak_box:
    compile_log.check_leaks(leak_box.pop())
  return jaxpr, consts, out_tree_box[0]


def _check_output_leaves(fun, out, traced_for):
  """JAX's error for a traced function returning what is not an array."""
  from purejax._src.tree_keys import keystr
  for path, leaf in tree_util.tree_flatten_with_path(out)[0]:
    try:
      core.get_aval(leaf)
    except TypeError:
      where = f" at output component {keystr(path)}" if path else ""
      raise TypeError(f"function {source_info.function_location(fun)} traced for "
                      f"{traced_for} returned a value of type {type(leaf)}{where}, which "
                      "is not a valid JAX type") from None


# ---------------------------------------------------------------------------
# jit

# Traces shared by every jit of the same function, as in JAX: a new
# ``jit(f)`` object reuses what an earlier one traced.
_trace_caches = weakref.WeakKeyDictionary()


class PjitFunction:
  """A function compiled by ``jit``; call it like the function itself.
  (Named as JAX's type is: chex's ``is_traceable`` looks for the name.)"""

  def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
               donate_argnames, inline, keep_unused):
    if not callable(fun):
      raise TypeError(f"Expected a callable value, got {fun}")
    _check_argnums_fit(fun, static_argnums, static_argnames, donate_argnums)
    self._fun = fun
    self._static_argnums, self._static_argnames = _normalize_argnums(
        fun, static_argnums, static_argnames)
    self._donation = Donation(*_normalize_argnums(fun, donate_argnums, donate_argnames))
    # Donating calls never take the fast paths, whose entries are shared
    # by every jit of ``fun`` with the same options.
    self._options = (self._static_argnums, self._static_argnames, inline,
                     bool(self._donation))
    self._inline = inline
    source_info.update_wrapper(self, fun, updated=())
    self._traces = self._shared_cache()
    self._fast = self._traces.fast

  def _shared_cache(self):
    """The per-function cache of traces; this object's own if ``fun`` can't
    be a weak dictionary key."""
    try:
      per_fun = _trace_caches.get(self._fun)
      if per_fun is None:
        per_fun = _trace_caches[self._fun] = {}
    except TypeError:   # not weak-referenceable or not hashable
      return _TraceCache()
    cache = per_fun.get(self._options)
    if cache is None:
      cache = per_fun[self._options] = _TraceCache()
    return cache

  def _split(self, args, kwargs):
    split = _CallSignature(args, kwargs, self._static_argnums, self._static_argnames)
    _check_hashable(split.statics)
    return split

  def _get_traced(self, args, kwargs, for_call=False):
    split = self._split(args, kwargs)
    try:
      in_avals = [core.get_aval(x) if core.is_array_like(x) else None for x in split.leaves]
    except OverflowError:   # a Python int too large for its type: JAX names where it is
      names = _arg_names(self._fun, split, args, kwargs)
      for x, name in zip(split.leaves, names):
        _int_leaf_aval(x, name)
      raise
    except TypeError:   # a NumPy array of a dtype JAX has not (str, object, float128)
      in_avals = [None]
    if None in in_avals:
      names = _arg_names(self._fun, split, args, kwargs)
      in_avals = [_leaf_aval(self._fun, x, n, for_call) for x, n in zip(split.leaves, names)]
    # Bound axis names are part of the key: collectives bake in axis sizes.
    key = (split.treedef, tuple(in_avals), split.statics, config.trace_state(),
           tuple(core.axis_env().items()), concrete_mesh())
    cache = self._traces
    traced = cache.get(key)
    if traced is None:
      if config.jax_no_tracing:
        raise RuntimeError(f"re-tracing function {source_info.function_location(self._fun)} "
                           "for `jit`, but 'no_tracing' is set")
      if config.jax_explain_cache_misses:
        compile_log.explain_miss(self._fun, cache.keys(), key,
                                 _arg_names(self._fun, split, args, kwargs))
      start = time.perf_counter()
      jaxpr, consts, out_tree = _trace_call(self._fun, split, args, kwargs, in_avals)
      closed = hoist_consts(jaxpr)
      if config.purejax_debug >= 1:
        print(f"purejax: jit traced {source_info.function_name(self._fun)}:\n{closed}",
              file=sys.stderr)
      traced = _Traced(closed, consts, out_tree, in_avals)
      traced.ctx_mesh = key[-1]
      compile_log.log_traced(self._fun, in_avals, time.perf_counter() - start)
      if not traced.closes_over_tracers:
        cache[key] = traced
    return traced, split

  def __call__(self, *args, **kwargs):
    if not kwargs and _ctx.trace is _eval_trace:
      try:
        # The fast path: an eager call seen before, with Arrays only...
        avals = [x.aval for x in args if type(x) is Array]
        if len(avals) == len(args):
          entry = self._fast.get(tuple(avals))
          if entry is not None and entry[0] == _config_epoch:
            _, run, consts, aval, out_avals, out_tree, _, wrap = entry
            outs = run(*consts, *[dense_value(x) for x in args])
            if aval is not None:   # one array out
              return wrap(outs[0], aval)
            return out_tree.unflatten([wrap(v, a) for v, a in zip(outs, out_avals)])
          if self._traces.fast_gpu:
            from purejax._src import gpu_dispatch
            out = self._seen_on_gpu(args) if gpu_dispatch.runs_on_gpu(args) else _MISS
            if out is not _MISS:
              return out
        else:   # ... or with Python scalars too
          out = self._call_with_scalars(args)
          if out is not _MISS:
            return out
      except OnGpu:   # an argument is on a GPU: the call runs there
        return self._call_on_gpu(args, kwargs)
    if config.jax_disable_jit:
      if _debug_nans.rerunning:
        return _debug_nans.call_nested_jit(self._fun, args, kwargs)
      return self._fun(*args, **kwargs)
    traced, split = self._get_traced(args, kwargs, for_call=True)
    inputs = traced.consts + split.leaves
    if refs_discharge.uses_refs(traced.jaxpr):   # runs discharged; refs updated in place
      outs = pjit_p.bind(*inputs, jaxpr=traced.jaxpr, name=source_info.function_name(self._fun),
                         **_mesh_param(traced.ctx_mesh))
    elif core.current_trace() is core.eval_trace:
      if config.jax_no_execution:
        from purejax._src.interpreters.dispatch import refuse_execution
        refuse_execution(source_info.function_name(self._fun))
      donated = self._donation and self._donation.check_call(args, kwargs)
      rerun = functools.partial(self._fun, *args, **kwargs) if _debug_nans.enabled else None
      on_gpu = _MISS
      try:
        if _devices.gpu_is_default():
          raise OnGpu
        outs = _run_compiled(traced, inputs, rerun)
      except OnGpu:
        on_gpu = self._call_on_gpu(args, kwargs, traced, split)
      if donated:
        self._donation.donate(donated, traced.jaxpr.out_avals, id(traced))
      if on_gpu is not _MISS:
        return on_gpu
      if (self._plain_call(traced, kwargs)
          and not traced.runs_async() and not _has_key_outputs(traced)
          and all(type(x) is Array or type(x) in _SCALAR_ARGS for x in args)):
        key = tuple([x.aval if type(x) is Array else type(x) for x in args])
        self._fast[key] = _fast_call(traced, args)
    elif self._inline and isinstance(core.current_trace(), pe.DynamicJaxprTrace):
      # Staged into the caller's jaxpr equation by equation, with no call.
      outs = eval_jaxpr(traced.jaxpr.jaxpr, traced.jaxpr.consts, *inputs)
    else:
      outs = pjit_p.bind(*inputs, jaxpr=traced.jaxpr,
                         name=source_info.function_name(self._fun),
                         **_mesh_param(traced.ctx_mesh))
    return traced.out_tree.unflatten(outs)

  def _call_on_gpu(self, args, kwargs, traced=None, split=None):
    """The call, run on the GPU an argument is on, else on the default GPU
    (``gpu_dispatch``)."""
    from purejax._src import gpu_dispatch
    if traced is None:
      if not kwargs and all(type(x) is Array for x in args):
        out = self._seen_on_gpu(args)
        if out is not _MISS:
          return out
      traced, split = self._get_traced(args, kwargs)
    _check_no_tokens(traced.jaxpr)
    rerun = functools.partial(self._fun, *args, **kwargs) if _debug_nans.enabled else None
    outs = gpu_dispatch.run_jitted(traced.jaxpr, traced.consts + split.leaves, rerun,
                                   may_defer=True)
    if self._plain_call(traced, kwargs) and all(type(x) is Array for x in args):
      # The fast path's entry: later calls with these avals skip tracing's cache.
      epoch = -1 if _debug_nans.enabled else _config_epoch
      self._traces.fast_gpu[tuple(x.aval for x in args)] = (epoch, traced)
    return traced.out_tree.unflatten(outs)

  def _plain_call(self, traced, kwargs):
    """Whether a call may leave a fast-path entry (plain positional arguments)."""
    return (not kwargs and not self._static_argnums and not traced.closes_over_tracers
            and not self._donation)

  def _seen_on_gpu(self, args):
    """The call with Arrays ``args``, run on a GPU from the fast path's
    entry for their avals, or _MISS (not seen before)."""
    entry = self._traces.fast_gpu.get(tuple([x.aval for x in args]))
    if entry is None or entry[0] != _config_epoch:
      return _MISS
    from purejax._src import gpu_dispatch
    traced = entry[1]
    return traced.out_tree.unflatten(gpu_dispatch.run_jitted(
        traced.jaxpr, traced.consts + list(args), may_defer=True))

  def _call_with_scalars(self, args):
    """The fast path's result for top-level Arrays and Python scalars, or
    _MISS (not seen before, or a Python int out of range)."""
    key = tuple([x.aval if type(x) is Array else type(x) for x in args])
    entry = self._fast.get(key)
    if entry is None or entry[0] != _config_epoch:
      return _MISS
    _, run, consts, aval, out_avals, out_tree, convs, wrap = entry
    vals = []
    for x, convert in zip(args, convs):
      v = dense_value(x) if convert is None else convert(x)
      if v is None:
        return _MISS
      vals.append(v)
    outs = run(*consts, *vals)
    if aval is not None:
      return wrap(outs[0], aval)
    return out_tree.unflatten([wrap(v, a) for v, a in zip(outs, out_avals)])

  def trace(self, *args, **kwargs):
    traced, _ = self._get_traced(args, kwargs)
    return Traced(traced, source_info.function_name(self._fun))

  def lower(self, *args, **kwargs):
    return self.trace(*args, **kwargs).lower()

  def eval_shape(self, *args, **kwargs):
    traced, _ = self._get_traced(args, kwargs)
    return traced.out_tree.unflatten(
        [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
         for a in traced.jaxpr.out_avals])

  def _cache_size(self):
    return len(self._traces)

  def clear_cache(self):
    self._traces.clear()

  def __get__(self, obj, objtype=None):
    # jit on a method: bind like a function does.
    if obj is None:
      return self
    return functools.partial(self, obj)

  @property
  def __signature__(self):
    # The function's (as JAX's): without it ``inspect.signature(f,
    # follow_wrapped=False)`` takes the object, with its __get__, for a builtin.
    return inspect.signature(self._fun)

  def __repr__(self):
    return f"<PjitFunction of {self._fun!r}>"


class _TraceCache(dict):
  """The traces of one function (by call signature), and ``fast``: the
  eager calls with Arrays only, by their avals, ready to run."""
  __slots__ = ("fast", "fast_gpu", "__weakref__")

  def __init__(self):
    super().__init__()
    self.fast = {}
    self.fast_gpu = {}   # the same, run on a GPU: avals -> (config epoch, trace)
    key = id(self)
    _all_trace_caches[key] = weakref.ref(self, lambda _: _all_trace_caches.pop(key, None))

  def clear(self):
    super().clear()
    self.fast.clear()
    self.fast_gpu.clear()


# Every live cache (id -> weak reference), for clear_caches().
_all_trace_caches = {}


# A flag change may change what a call traces to or runs on: it makes every
# fast-path entry (``_fast_call``) made before it stale.
_config_epoch = 0


def _on_config_change():
  global _config_epoch
  _config_epoch += 1


config.add_watcher(_on_config_change)


_SCALAR_ARGS = (bool, int, float)
_MISS = object()


def _fast_call(traced, args):
  """What ``PjitFunction.__call__``'s fast path needs to run ``traced`` on
  top-level Arrays and Python scalars, looked up once (``_run_compiled``
  looks it up on every call): ``(epoch, executable, NumPy constants, the
  output aval if there is a single array output, the output avals, the
  output tree, a converter per argument, the function wrapping a result)``.
  Valid while no flag changes."""
  consts = [x._value if type(x) is Array else core.concrete_numpy_value(x)
            for x in traced.consts]
  out_avals, out_tree = traced.jaxpr.out_avals, traced.out_tree
  single = out_tree.num_leaves == 1 and out_tree.node_data() is None
  # A stale epoch (never current) keeps debug-checked calls on the slow path.
  epoch = -1 if _debug_nans.enabled else _config_epoch
  # Every argument is a leaf here: one aval each.
  convs = [None if type(x) is Array else _scalar_arg(a.dtype)
           for x, a in zip(args, traced.in_avals)]
  run = traced.executable()
  wrap = wrap_read_only if getattr(run, "read_only_outputs", False) else wrap_numpy
  return (epoch, run, consts, out_avals[0] if single else None, out_avals, out_tree, convs,
          wrap)


def _scalar_arg(dtype):
  """A Python scalar argument as ``concrete_numpy_value`` makes it, or None
  for an int out of the default integer's range (the general path raises)."""
  if dtype.kind not in "iu":
    return lambda v: np.asarray(v, dtype)
  info = np.iinfo(dtype)
  return lambda v: np.asarray(v, dtype) if info.min <= v <= info.max else None


def _has_key_outputs(traced):
  """Whether some result is not an Array (see ``_wrap_out``)."""
  return any(dtypes.is_extended(a.dtype) or a.dtype == dtypes.float0
             for a in traced.jaxpr.out_avals)


def _wrap_out(value, aval):
  """A result's value: a typed key array for a key aval; for float0 (a
  gradient of an integer) a NumPy array, as JAX returns it."""
  if dtypes.is_extended(aval.dtype):
    from purejax._src.random.keys import PRNGKeyArray
    return PRNGKeyArray(aval.dtype._impl, value)
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  return wrap_numpy(value, aval)


def _run_compiled(traced, inputs, rerun=None):
  allocation.check_avals(traced.jaxpr.out_avals)
  if traced.runs_async():
    # The worker reads the inputs later: a caller's NumPy array is copied
    # now (as a transfer to a device would), so later writes to it are unseen.
    vals = [pending_or_dense(x) if type(x) is Array
            else host_memory.copy(x, core.get_aval(x).dtype) if isinstance(x, np.ndarray)
            else core.concrete_numpy_value(x) for x in inputs]
    avals = traced.jaxpr.out_avals
    pending = async_dispatch.dispatch(traced.executable(), vals, [a.dtype for a in avals])
    results = [wrap_pending(p, a) for p, a in zip(pending, avals)]
    if mesh_context.mesh_is_set:
      _host_inputs_forwarded(traced, inputs, results)
    return results
  vals = [dense_value(x) if type(x) is Array else core.concrete_numpy_value(x) for x in inputs]
  outs = traced.executable()(*vals)
  foreign = [x for x in inputs if type(x) is not Array and isinstance(x, np.ndarray)]
  if foreign:   # an output may be a caller's array passed through (or a view of it)
    outs = unaliased(outs, foreign, True)
  if _has_key_outputs(traced):
    results = [_wrap_out(v, a) for v, a in zip(outs, traced.jaxpr.out_avals)]
  else:
    results = [wrap_numpy(v, a) for v, a in zip(outs, traced.jaxpr.out_avals)]
  if _debug_nans.enabled:   # a module global: no flag lookup per call
    _debug_nans.check_jit(traced.jaxpr, vals, [r._value for r in results], rerun)
  if mesh_context.mesh_is_set:
    _host_inputs_forwarded(traced, inputs, results)
  return results


def _host_inputs_forwarded(traced, inputs, results):
  """Under a set mesh, an output that is a host (NumPy) input passed through
  keeps the sharding of data put on the mesh, ``P()``, as in JAX (where
  the input's buffer is the output); computed outputs are ``P(None, ...)``."""
  jaxpr = traced.jaxpr.jaxpr
  position = {v: i for i, v in enumerate(jaxpr.invars)}
  for k, v in enumerate(jaxpr.outvars):
    i = position.get(v) if type(v) is not Literal else None
    if i is not None and i < len(inputs) and isinstance(inputs[i], (np.ndarray, np.generic)) \
        and type(results[k]) is Array:
      place_on_mesh(results[k], per_dimension=False)


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, inline=False, keep_unused=False, device=None,
        backend=None, in_shardings=None, out_shardings=None, abstracted_axes=None,
        compiler_options=None):
  """Compiles ``fun``: traces it once per argument signature to a jaxpr.

  Donated Arrays are deleted after the call when an output could take
  their buffer, as on JAX's CPU backend. Sharded inputs need no gathering
  (devices share one host value).  ``in_shardings`` are checked against
  the positional arguments as JAX checks them; ``out_shardings`` lays out
  the eager outputs; without it outputs are uncommitted (JAX would infer a
  layout from the inputs).
  """
  if fun is None:
    return functools.partial(
        jit, static_argnums=static_argnums, static_argnames=static_argnames,
        donate_argnums=donate_argnums, donate_argnames=donate_argnames,
        inline=inline, keep_unused=keep_unused, device=device, backend=backend,
        in_shardings=in_shardings, out_shardings=out_shardings)
  if device is not None or backend is not None:
    _check_device_and_backend(device, backend)
    if backend is not None and backend != "cpu":
      return _UnavailableBackendJit(fun, static_argnums, static_argnames, donate_argnums,
                                    donate_argnames, inline, keep_unused, backend)
  if in_shardings is not None or out_shardings is not None:
    from purejax._src.sharded_array import ShardedJit
    return ShardedJit(fun, static_argnums, static_argnames, donate_argnums,
                      donate_argnames, inline, keep_unused, in_shardings, out_shardings)
  return PjitFunction(fun, static_argnums, static_argnames, donate_argnums,
                    donate_argnames, inline, keep_unused)


def _check_device_and_backend(device, backend):
  """jit's deprecated ``device``/``backend`` arguments, as JAX takes them:
  a warning, and an error for both at once."""
  import warnings
  warnings.warn("backend and device argument on jit is deprecated. You can use "
                "`jax.device_put(..., jax.local_devices(backend=\"cpu\")[0])` on the inputs "
                "to the jitted function to get the same behavior.", DeprecationWarning,
                stacklevel=3)
  if device is not None and backend is not None:
    raise ValueError(f"can't specify both a device and a backend for jit, got "
                     f"device={device!r} and backend={backend!r}")


class _UnavailableBackendJit(PjitFunction):
  """A jit for a backend this process lacks: calls raise JAX's error."""

  def __init__(self, *args):
    *args, self._backend = args
    super().__init__(*args)

  def __call__(self, *args, **kwargs):
    from purejax._src import devices
    devices._check_backend(self._backend)
    return super().__call__(*args, **kwargs)


def disable_jit(disable=True):
  """Context manager: jitted functions run eagerly, op by op."""
  return config.override("jax_disable_jit", disable)


# ---------------------------------------------------------------------------
# make_jaxpr, eval_shape

def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False,
               abstracted_axes=None):
  """``make_jaxpr(f)(*args)`` is the ClosedJaxpr ``jit`` would trace.
  ``axis_env`` ([(name, size)]) binds axis names while tracing, so that
  collectives over them can be traced outside pmap/shard_map."""
  import operator
  static_argnums, static_argnames = _normalize_argnums(fun, static_argnums, ())
  axis_env = [(name, operator.index(size)) for name, size in (axis_env or ())]

  @source_info.wraps(fun)
  def make(*args, **kwargs):
    from purejax._src.shard_map import manual_axes
    split = _CallSignature(args, kwargs, static_argnums, static_argnames)
    names = _arg_names(fun, split, args, kwargs)
    in_avals = [_leaf_aval(fun, x, n) for x, n in zip(split.leaves, names)]
    with manual_axes([n for n, _ in axis_env], [k for _, k in axis_env]):
      jaxpr, consts, out_tree = _trace_call(fun, split, args, kwargs, in_avals)
    closed = ClosedJaxpr(*close_consts(jaxpr, consts))
    if return_shape:
      shapes = out_tree.unflatten([ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                                   for a in jaxpr.out_avals])
      return closed, shapes
    return closed

  return make


def eval_shape(fun, *args, **kwargs):
  """The shapes and dtypes ``fun`` would return, computed without running it."""
  return jit(fun).eval_shape(*args, **kwargs)


def block_until_ready(x):
  """Waits for every array in ``x`` (those of asynchronously dispatched
  computations); raises the error a computation raised."""
  if type(x) is Array:   # the common case, without flattening
    return x.block_until_ready()
  for leaf in tree_util.tree_leaves(x):
    if hasattr(leaf, "block_until_ready"):
      leaf.block_until_ready()
  return x
