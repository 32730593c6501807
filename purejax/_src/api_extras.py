"""Smaller pieces of JAX's top-level API: clear_caches, typeof, effects
barriers, live arrays, environment and process queries, closure_convert and
custom_gradient."""
import gc
import platform
import sys
import warnings

import numpy as np

from purejax._src import async_dispatch
from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.array import Array


# ---------------------------------------------------------------------------
# Caches

def _cache_dicts():
  """The in-memory dictionaries of traces, derived jaxprs and executables."""
  from purejax._src import pjit
  from purejax._src.lax.control_flow import cond, loops, scan
  return [pjit._executables, pjit._jvp_jaxprs, pjit._batched_jaxprs, cond._jvp_cache,
          cond._batch_cache, loops._jvp_bodies, scan._jvp_bodies, scan._batched_bodies]


def clear_caches():
  """Clears every in-memory cache of traces and compiled executables, so the
  next call of each jitted function traces and compiles again.

  The compiled-kernel cache on disk (``purejax_cache_dir``) is kept, as JAX
  keeps its persistent compilation cache.
  """
  from purejax._src import api
  for ref in list(api._all_trace_caches.values()):
    cache = ref()
    if cache is not None:
      cache.clear()
  for cache in _cache_dicts():
    cache.clear()
  api._on_config_change()   # fast-path entries made before now are stale
  # The kernel libraries of the executables dropped are unloaded when they
  # are collected; they sit in reference cycles (ctypes functions <-> library).
  gc.collect()


# ---------------------------------------------------------------------------
# Abstract values

class _KeyAval:
  """The abstract value of an array of typed PRNG keys."""
  __slots__ = ("shape", "dtype", "explicit_sharding")
  weak_type = False

  def __init__(self, shape, dtype, explicit_sharding=None):
    self.shape, self.dtype, self.explicit_sharding = shape, dtype, explicit_sharding

  ndim = property(lambda self: len(self.shape))
  sharding = core.ShapedArray.sharding

  def str_short(self, short_dtypes=False, mark_weak=False):
    if self.explicit_sharding is not None:
      from purejax._src.sharding_types import shape_with_spec
      return f"{self.dtype}{shape_with_spec(self.shape, self.explicit_sharding.spec)}"
    return f"{self.dtype}[{','.join(map(str, self.shape))}]"

  def _key(self):
    return (self.shape, self.dtype, self.explicit_sharding)

  def __eq__(self, other):
    return type(other) is _KeyAval and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def __repr__(self):
    return f"ShapedArray({self.str_short()})"

  __str__ = str_short


def typeof(x):
  """The abstract value of ``x``: ``ShapedArray(float32[3])``, printed by
  ``str`` as ``float32[3]`` (weak types marked ``~``)."""
  from purejax._src.random.keys import PRNGKeyArray
  if isinstance(x, PRNGKeyArray):
    return _KeyAval(x.shape, x.dtype, x.aval.explicit_sharding)
  from purejax._src.shard_map_eager import ShardMapTracer
  if isinstance(x, ShardMapTracer):      # a block in an eager shard_map body
    return x.typed_aval()
  try:
    return core.get_aval(x)
  except TypeError:
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None


# ---------------------------------------------------------------------------
# Runtime

def effects_barrier():
  """Waits until every computation dispatched so far (and the callbacks,
  e.g. ``jax.debug.print``, that it runs) has finished."""
  async_dispatch.wait_for_all()


def live_arrays(platform=None):
  """The Arrays alive now.  Found by a garbage-collector scan when asked
  (slow-ish), so that creating an Array costs nothing extra."""
  return [x for x in gc.get_objects() if type(x) is Array]


def copy_to_host_async(x):
  """Starts copying each Array leaf of ``x`` to the host (nothing to do
  here: purejax's Arrays live in host memory); returns ``x``."""
  for leaf in tree_util.tree_leaves(x):
    copy = getattr(leaf, "copy_to_host_async", None)
    if copy is not None:
      copy()
  return x


def print_environment_info(return_string=False):
  """Versions of purejax, NumPy and Python, the devices and the platform."""
  from purejax import version
  from purejax._src import devices
  lines = [f"purejax: {version.__version__}",
           f"numpy:   {np.__version__}",
           f"python:  {sys.version}",
           f"device info: cpu-{devices.device_count()}, {devices.local_device_count()} "
           "local devices",
           f"process_count: {devices.process_count()}",
           f"platform: {platform.uname()}"]
  text = "\n".join(lines) + "\n"
  if return_string:
    return text
  print(text, end="")
  return None


def _renamed(old, new):
  warnings.warn(f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
                "removed; please update your code.", UserWarning, stacklevel=3)


def host_count(backend=None):
  """Deprecated alias of ``process_count`` (one process)."""
  _renamed("process_count", "process_count")
  return 1


def host_id(backend=None):
  """Deprecated alias of ``process_index`` (one process)."""
  _renamed("process_index", "process_index")
  return 0


def host_ids(backend=None):
  """Deprecated alias of ``process_indices`` (one process)."""
  _renamed("process_indexs", "process_indices")
  return [0]


def process_indices(backend=None):
  """The indices of all processes: ``[0]`` (one process)."""
  return [0]


# ---------------------------------------------------------------------------
# closure_convert, custom_gradient

def _may_have_tangent(x):
  """Whether a closed-over value could carry a nonzero derivative (then it
  becomes an explicit argument); concrete values and integer tracers can't."""
  if not isinstance(x, core.Tracer):
    return False
  from purejax._src.interpreters import ad
  return ad.tangent_dtype(core.get_aval(x).dtype) != dtypes.float0


def closure_convert(fun, *example_args):
  """``(converted, consts)``: ``converted(*args, *consts)`` computes
  ``fun(*args)`` for arguments of the example arguments' types, with the
  values ``fun`` closed over that may carry derivatives (tracers of
  enclosing transformations) passed explicitly as ``consts``."""
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.jaxpr import eval_jaxpr
  flat_args, in_tree = tree_util.tree_flatten(example_args)
  in_avals = [core.get_aval(x) for x in flat_args]
  out_tree_box = []

  def flat_fun(*leaves):
    out_leaves, out_tree = tree_util.tree_flatten(fun(*in_tree.unflatten(leaves)))
    out_tree_box.append(out_tree)
    return out_leaves

  jaxpr, consts = pe.trace_to_jaxpr(flat_fun, in_avals)
  out_tree = out_tree_box[0]
  hoisted = [_may_have_tangent(c) for c in consts]
  kept = [c for c, h in zip(consts, hoisted) if not h]
  const_args = [c for c, h in zip(consts, hoisted) if h]

  def converted(*args_and_consts):
    n = len(args_and_consts) - len(const_args)
    args, explicit = args_and_consts[:n], iter(args_and_consts[n:])
    closed = iter(kept)
    all_consts = [next(explicit) if h else next(closed) for h in hoisted]
    leaves, tree = tree_util.tree_flatten(tuple(args))
    if tree != in_tree:
      raise TypeError("The inputs to the closure produced by closure_convert must have the "
                      "same Pytree structure as the example arguments passed when "
                      f"closure_convert was called. Expected {in_tree}, but got {tree}")
    return out_tree.unflatten(eval_jaxpr(jaxpr, all_consts, *leaves))

  return converted, const_args


class _GradientRule:
  """custom_gradient's residuals: the traced backward rule and the values
  it closed over (the pytree leaves)."""

  def __init__(self, jaxpr, in_tree, consts):
    self.jaxpr, self.in_tree, self.consts = jaxpr, in_tree, consts


tree_util.register_pytree_node(
    _GradientRule, lambda r: (r.consts, (r.jaxpr, r.in_tree)),
    lambda aux, consts: _GradientRule(aux[0], aux[1], list(consts)))


def custom_gradient(fun):
  """TensorFlow-style custom gradients: ``fun(*args)`` returns ``(out,
  vjp_rule)`` with ``vjp_rule(cotangent)`` the tuple of argument cotangents
  (a single one may be returned bare for one argument).  Built on
  ``custom_vjp``; the rule is traced on the forward pass, so it may not
  branch in Python on the values it closes over."""
  from purejax._src.custom_derivatives import custom_vjp
  from purejax._src.interpreters import ad
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.jaxpr import eval_jaxpr

  @custom_vjp
  def wrapped(*args, **kwargs):
    return fun(*args, **kwargs)[0]

  def fwd(*args, **kwargs):
    out, rule = fun(*args, **kwargs)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    ct_avals = [ad.tangent_aval(core.get_aval(x)) for x in out_leaves]
    in_tree_box = []

    def flat_rule(*cts):
      leaves, tree = tree_util.tree_flatten(rule(out_tree.unflatten(cts)))
      in_tree_box.append(tree)
      return leaves

    jaxpr, consts = pe.trace_to_jaxpr(flat_rule, ct_avals)
    return out, _GradientRule(jaxpr, in_tree_box[0], consts)

  def bwd(res, ct):
    cts_in = res.in_tree.unflatten(
        eval_jaxpr(res.jaxpr, res.consts, *tree_util.tree_leaves(ct)))
    return (cts_in,) if tree_util.treedef_is_leaf(res.in_tree) else cts_in

  wrapped.defvjp(fwd, bwd)
  return wrapped
