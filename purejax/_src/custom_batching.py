"""custom_vmap: a function with its own batching rule.

A call is staged as one ``custom_vmap_call`` equation holding the traced
function; its batching rule runs the user's rule (traced again for each
batching, like JAX), every other interpreter uses the traced function.
Outside any ``vmap`` the function is simply called.
"""
import functools
import inspect

from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr

custom_vmap_call_p = core.Primitive("custom_vmap_call", multiple_results=True)


@custom_vmap_call_p.def_impl
def _impl(*args, call, rule, in_tree, out_tree, name):
  from purejax._src.pjit import executable_for
  return executable_for(call)(*args)


@custom_vmap_call_p.def_abstract_eval
def _abstract_eval(*avals, call, **params):
  return call.out_avals


def _jvp(primals, tangents, *, call, **params):
  # Differentiated through the traced function (the rule is for vmap only).
  tangents = [ad.instantiate(t) for t in tangents]
  return ad.jvp_flat(lambda *xs: eval_jaxpr(call.jaxpr, call.consts, *xs), primals, tangents)


custom_vmap_call_p.jvp = _jvp


def _batch(axis_size, vals, dims, *, call, rule, in_tree, out_tree, name):
  num_consts = len(call.in_avals) - in_tree.num_leaves
  if any(d is not batching.not_mapped for d in dims[:num_consts]):
    raise NotImplementedError(f"custom_vmap function {name} closes over a value batched "
                              "by vmap: pass it as an argument instead")
  leaves = [batching.moveaxis(v, d, 0) if d is not batching.not_mapped else v
            for v, d in zip(vals[num_consts:], dims[num_consts:])]
  flags = [d is not batching.not_mapped for d in dims[num_consts:]]
  args = in_tree.unflatten(leaves)
  in_batched = list(in_tree.unflatten(flags))
  out, out_batched = rule(axis_size, in_batched, *args)
  out_leaves, rule_tree = tree_util.tree_flatten(out)
  batched_leaves, batched_tree = tree_util.tree_flatten(out_batched)
  if rule_tree != batched_tree:
    raise ValueError(
        "structure of output value and output batching specification returned by custom "
        f"vmap rule ({getattr(rule, '__name__', rule)}) do not match.\nOutput values: "
        f"{rule_tree}\nBatching spec: {batched_tree}")
  if rule_tree != out_tree:
    raise ValueError(
        f"structure of output returned by custom vmap rule "
        f"({getattr(rule, '__name__', rule)}) does not match that of original custom-vmapped "
        f"function ({name}).\nOriginal output: {out_tree}\nRule output: {rule_tree}")
  return out_leaves, [0 if b else batching.not_mapped for b in batched_leaves]


custom_vmap_call_p.batch = _batch


def _under_vmap():
  trace = core.current_trace()
  while trace is not None:
    if isinstance(trace, batching.BatchTrace):
      return True
    trace = trace.parent
  return False


class custom_vmap:
  """``custom_vmap(fun)``: ``fun`` with a batching rule set by
  ``@f.def_vmap``.  The rule is called as ``rule(axis_size, in_batched,
  *args)`` with batched arguments' batch axis first and ``in_batched`` a
  list (one pytree of bools per argument); it returns ``(out,
  out_batched)``.  Under ``jvp``/``grad`` the function itself is
  differentiated (JAX supports forward mode only)."""

  def __init__(self, fun):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.vmap_rule = None

  def def_vmap(self, vmap_rule):
    self.vmap_rule = vmap_rule
    return vmap_rule

  def __call__(self, *args, **kwargs):
    name = getattr(self.fun, "__name__", str(self.fun))
    if self.vmap_rule is None:
      raise AttributeError(
          f"No batching rule defined for custom_vmap function {name} using def_vmap.")
    if kwargs:
      bound = inspect.signature(self.fun).bind(*args, **kwargs)
      bound.apply_defaults()
      args, kwargs = bound.args, bound.kwargs
      if kwargs:
        raise TypeError(f"custom_vmap function {name} was given keyword-only arguments")
    if not _under_vmap():   # no batching can reach this call: no equation needed
      return self.fun(*args)
    leaves, in_tree = tree_util.tree_flatten(args)
    out_tree_box = []

    def flat_fun(*xs):
      out_leaves, out_tree = tree_util.tree_flatten(self.fun(*in_tree.unflatten(xs)))
      out_tree_box.append(out_tree)
      return out_leaves

    jaxpr, consts = pe.trace_to_jaxpr(flat_fun, [core.get_aval(x) for x in leaves])
    call = ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), [])
    outs = custom_vmap_call_p.bind(*consts, *leaves, call=call, rule=self.vmap_rule,
                                   in_tree=in_tree, out_tree=out_tree_box[0], name=name)
    return out_tree_box[0].unflatten(outs)


def sequential_vmap(f):
  """``f`` as a ``custom_vmap`` whose batching rule runs ``f`` once per
  batch element in a loop (``lax.map``), the unbatched arguments shared."""
  f = custom_vmap(f)

  @f.def_vmap
  def rule(axis_size, in_batched, *args):
    from purejax import lax
    leaves, tree = tree_util.tree_flatten(args)
    flags = tree_util.tree_leaves(in_batched)
    batched = [x for x, b in zip(leaves, flags) if b]

    def one(xs):
      xs = iter(xs)
      return f.fun(*tree.unflatten([next(xs) if b else x for x, b in zip(leaves, flags)]))

    out = lax.map(one, batched)
    return out, tree_util.tree_map(lambda _: True, out)

  return f
