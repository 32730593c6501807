"""checkpoint (remat): differentiate without storing intermediate values.

``checkpoint(f)`` stages ``f`` as a ``checkpoint`` call.  When it is
linearized, the known part still runs forward, but the unknown (tangent)
part keeps only what the policy says is saveable: everything else is
recomputed from the call's inputs during the backward pass.
"""

from purejax._src import checkpoint_names
from purejax._src import core
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.pjit import (call_batch, call_partial_eval, call_partial_eval_jaxpr, call_transpose,
                               executable_for, jvp_jaxpr, trace_closed)

remat_p = core.Primitive("remat2", multiple_results=True)   # JAX's name for it
remat_p.call_jaxpr_param = "jaxpr"
remat_p.call_shares_names = False   # JAX prints its body with fresh names
remat_p.impl = lambda *args, jaxpr, **params: executable_for(jaxpr)(*args)
remat_p.abstract_eval = lambda *avals, jaxpr, **params: jaxpr.out_avals


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  jvp_closed, consts, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros)
  outs = remat_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not ad.Zero],
                      jaxpr=jvp_closed, prevent_cse=prevent_cse, differentiated=True,
                      policy=policy)
  n = len(jaxpr.out_avals)
  nz = iter(outs[n:])
  return outs[:n], [next(nz) if k else ad.Zero(ad.tangent_aval(a))
                    for k, a in zip(out_nonzeros, jaxpr.out_avals)]


def _saveable(params):
  policy = params["policy"] or checkpoint_policies.nothing_saveable
  return lambda eqn: checkpoint_names.saves(
      policy(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params))


remat_p.jvp = _remat_jvp
remat_p.saveable = _saveable
remat_p.partial_eval = call_partial_eval(remat_p)
remat_p.partial_eval_jaxpr = call_partial_eval_jaxpr
remat_p.transpose = call_transpose
remat_p.batch = call_batch(remat_p)


class DotsSaveable:
  """The policy saving matrix products (only those without batch dims, if
  ``only_if_no_batch_dims``): an object with JAX's repr."""
  __slots__ = ("only_if_no_batch_dims",)

  def __init__(self, only_if_no_batch_dims):
    self.only_if_no_batch_dims = bool(only_if_no_batch_dims)

  def __call__(self, prim, *avals, **params):
    if prim.name != "dot_general":
      return False
    if not self.only_if_no_batch_dims:
      return True
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch

  def __repr__(self):
    return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"

  def __eq__(self, other):
    return type(other) is DotsSaveable and other.only_if_no_batch_dims == self.only_if_no_batch_dims

  def __hash__(self):
    return hash((DotsSaveable, self.only_if_no_batch_dims))


class checkpoint_policies:
  """Which intermediate values a checkpointed function may save.

  A policy is called as ``policy(primitive, *avals, **params)`` and says
  whether that equation's output may be kept as a residual.
  """

  @staticmethod
  def everything_saveable(prim, *avals, **params):
    return True

  @staticmethod
  def nothing_saveable(prim, *avals, **params):
    return False

  dots_saveable = checkpoint_dots = DotsSaveable(False)
  dots_with_no_batch_dims_saveable = checkpoint_dots_with_no_batch_dims = DotsSaveable(True)

  @staticmethod
  def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    # purejax has one memory: an offloaded value is a saved one.
    def policy(prim, *avals, **params):
      if checkpoint_policies.dots_with_no_batch_dims_saveable(prim, *avals, **params):
        return checkpoint_names.Offloadable(offload_src, offload_dst)
      return checkpoint_names.Recompute
    return policy

  save_only_these_names = staticmethod(checkpoint_names.save_only_these_names)
  save_any_names_but_these = staticmethod(checkpoint_names.save_any_names_but_these)
  save_anything_except_these_names = staticmethod(
      checkpoint_names.save_anything_except_these_names)
  save_and_offload_only_these_names = staticmethod(
      checkpoint_names.save_and_offload_only_these_names)
  save_from_both_policies = staticmethod(checkpoint_names.save_from_both_policies)


for _policy in vars(checkpoint_policies).values():   # printed by name, as JAX's functions
  _policy = getattr(_policy, "__func__", _policy)
  if callable(_policy) and hasattr(_policy, "__qualname__"):
    _policy.__qualname__ = _policy.__name__
del _policy


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
  """``fun`` whose reverse-mode derivative recomputes intermediates instead
  of storing them (except what ``policy`` allows)."""
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)

  @source_info.wraps(fun)
  def fun_remat(*args, **kwargs):
    nargs = len(args)
    static = {i % nargs for i in static_argnums} if nargs else set()
    dyn_pos = [i for i in range(nargs) if i not in static]
    leaves, in_tree = tree_util.tree_flatten(([args[i] for i in dyn_pos], kwargs))
    out_tree_box = []

    def flat_fun(*flat):
      dyn, kw = tree_util.tree_unflatten(in_tree, flat)
      full = list(args)
      for i, x in zip(dyn_pos, dyn):
        full[i] = x
      out_leaves, out_tree = tree_util.tree_flatten(fun(*full, **kw))
      out_tree_box.append(out_tree)
      return out_leaves

    closed, consts = trace_closed(flat_fun, [core.get_aval(x) for x in leaves])
    outs = remat_p.bind(*consts, *leaves, jaxpr=closed, prevent_cse=bool(prevent_cse),
                        differentiated=False, policy=policy)
    return tree_util.tree_unflatten(out_tree_box[0], outs)

  return fun_remat


remat = checkpoint
