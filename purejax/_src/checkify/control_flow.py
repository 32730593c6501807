"""checkify's rules for primitives with sub-jaxprs: jit, checkpoint, cond,
while, scan, custom_jvp, custom_vjp, shard_map (and so pmap).

A sub-jaxpr is checkified once, starting from no error, into a jaxpr that
also returns its error's leaves.  Branches are widened to the union of their
sites; a loop carries the error (starting from nothing failed) and merges
each iteration's error into it; the call's error is merged into the trace's.
"""
import numpy as np

from purejax._src import core
from purejax._src import tree_util
from purejax._src.checkify import errors
from purejax._src.checkify.trace import higher_order_rules, run_checkified
from purejax._src.jaxpr import eval_jaxpr


def checkify_closed(closed, enabled):
  """``(jaxpr, consts, error treedef)``: ``closed`` returning its error's
  leaves before its outputs, taking ``consts`` before its inputs."""
  from purejax._src.pjit import trace_closed
  box = []

  def fun(*args):
    err, outs = run_checkified(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a),
                               args, {}, enabled)
    leaves, tree = tree_util.tree_flatten(err)
    box.append(tree)
    return [*leaves, *outs]

  new, consts = trace_closed(fun, closed.in_avals)
  return new, consts, box[0]


def _sites(tree):
  return tree_util.tree_unflatten(tree, [None] * tree.num_leaves)._sites


def _zeros_error(tree, avals):
  """An error of structure ``tree`` with nothing failed (payloads zero)."""
  from purejax import numpy as jnp
  leaves = [jnp.zeros(a.shape, a.dtype) for a in avals]
  leaves[0] = jnp.asarray(False)
  leaves[1] = jnp.asarray(np.int32(-1))
  return tree_util.tree_unflatten(tree, leaves)


# -- jit, checkpoint ---------------------------------------------------------------------

def _call_rule(primitive):
  """The rule of a call primitive whose ``jaxpr`` runs once: checkified,
  its error merged into the trace's."""
  def rule(trace, vals, params):
    new, consts, tree = checkify_closed(params["jaxpr"], trace.enabled)
    if not _sites(tree):
      return primitive.bind(*vals, **params)
    outs = primitive.bind(*consts, *vals, **dict(params, jaxpr=new))
    n = tree.num_leaves
    trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
    return outs[n:]
  return rule


# -- cond ------------------------------------------------------------------------------

def _cond_rule(trace, vals, params):
  from purejax._src.lax.control_flow import common
  from purejax._src.lax.control_flow.cond import cond_p
  from purejax._src.pjit import trace_closed
  branches = params["branches"]
  done = [checkify_closed(b, trace.enabled) for b in branches]
  if not any(_sites(t) for _, _, t in done):
    return cond_p.bind(*vals, **params)
  union, site_avals = [], {}
  for new, _, tree in done:
    avals = iter(new.out_avals[2:tree.num_leaves])
    for s in _sites(tree):
      site_avals[s] = [next(avals) for _ in range(s.num_payload)]
      if s not in union:
        union.append(s)
  widened = []
  for new, consts, tree in done:
    def fun(*args, new=new, tree=tree):
      from purejax import numpy as jnp
      outs = eval_jaxpr(new.jaxpr, new.consts, *args)
      err = tree_util.tree_unflatten(tree, outs[:tree.num_leaves])
      mine = dict(zip(err._sites, err._payloads))
      payloads = [mine[s] if s in mine else [jnp.zeros(a.shape, a.dtype) for a in site_avals[s]]
                  for s in union]
      full = errors.Error(err._flag, err._code, payloads, union)
      return [*tree_util.tree_leaves(full), *outs[tree.num_leaves:]]
    widened.append(trace_closed(fun, new.in_avals))
  # each widened branch takes its inner consts, then its own consts, then the operands
  joined, all_consts = common.join_consts(
      [(w, list(wc) + list(c)) for (w, wc), (_, c, _) in zip(widened, done)])
  outs = cond_p.bind(vals[0], *all_consts, *vals[1:], **dict(params, branches=tuple(joined)))
  full_tree = tree_util.tree_structure(errors.Error(0, 0, [[0] * s.num_payload
                                                                 for s in union], union))
  n = full_tree.num_leaves
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(full_tree, outs[:n]))
  return outs[n:]


# -- loops -----------------------------------------------------------------------------

def _merging_body(new, tree, n_consts, split_rest):
  """A body over (new's consts, consts, error carry, rest) that merges the
  body's error into the carried one.  ``split_rest`` sizes the rest."""
  n = tree.num_leaves

  def fun(*args):
    inner_consts, rest = args[:n_consts], args[n_consts:]
    consts, carried, rest = rest[:split_rest], rest[split_rest:split_rest + n], rest[split_rest + n:]
    outs = eval_jaxpr(new.jaxpr, new.consts, *inner_consts, *consts, *rest)
    merged = errors.merge(tree_util.tree_unflatten(tree, list(carried)),
                          tree_util.tree_unflatten(tree, outs[:n]))
    return [*tree_util.tree_leaves(merged), *outs[n:]]
  return fun


def _checked_cond_rule(trace, vals, params, checked, checked_consts, tree):
  """A while loop whose cond checks: as JAX, the checks run on the initial
  carry before the loop and on each new carry at the end of the body, and
  the loop's cond only computes the predicate."""
  from purejax._src.pjit import trace_closed
  cond, body = params["cond_jaxpr"], params["body_jaxpr"]
  cn, bn = params["cond_nconsts"], params["body_nconsts"]
  cond_consts, body_consts, init = vals[:cn], vals[cn:cn + bn], vals[cn + bn:]
  n = tree.num_leaves
  first = eval_jaxpr(checked.jaxpr, checked.consts, *checked_consts, *cond_consts, *init)
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, first[:n]))

  def predicate(*args):
    return eval_jaxpr(checked.jaxpr, checked.consts, *args)[n:]
  new_cond, cond_extra = trace_closed(
      predicate, [core.get_aval(c) for c in checked_consts] + cond.in_avals)

  def step(*args):
    consts_c, consts_b, carry = args[:cn], args[cn:cn + bn], args[cn + bn:]
    carry = eval_jaxpr(body.jaxpr, body.consts, *consts_b, *carry)
    eval_jaxpr(cond.jaxpr, cond.consts, *consts_c, *carry)   # its checks, staged
    return carry
  new_body, body_extra = trace_closed(step, cond.in_avals[:cn] + body.in_avals)
  vals = [*cond_extra, *checked_consts, *cond_consts, *body_extra, *cond_consts,
          *body_consts, *init]
  return _while_rule(trace, vals, dict(
      params, cond_jaxpr=new_cond, body_jaxpr=new_body,
      cond_nconsts=len(cond_extra) + len(checked_consts) + cn,
      body_nconsts=len(body_extra) + cn + bn))


def _while_rule(trace, vals, params):
  from purejax._src.lax.control_flow.loops import while_p
  from purejax._src.pjit import trace_closed
  cond, body = params["cond_jaxpr"], params["body_jaxpr"]
  cn, bn = params["cond_nconsts"], params["body_nconsts"]
  checked, checked_consts, cond_tree = checkify_closed(cond, trace.enabled)
  if _sites(cond_tree):
    return _checked_cond_rule(trace, vals, params, checked, checked_consts, cond_tree)
  cond_consts, body_consts, init = vals[:cn], vals[cn:cn + bn], vals[cn + bn:]
  new, inner_consts, tree = checkify_closed(body, trace.enabled)
  if not _sites(tree):
    return while_p.bind(*vals, **params)
  n = tree.num_leaves
  err_avals = new.out_avals[:n]
  body_avals = ([core.get_aval(c) for c in inner_consts] + body.in_avals[:bn] + err_avals
                + body.in_avals[bn:])
  new_body, body_extra = trace_closed(_merging_body(new, tree, len(inner_consts), bn),
                                      body_avals)

  def cond_fun(*args):
    return eval_jaxpr(cond.jaxpr, cond.consts, *args[:cn], *args[cn + n:])
  new_cond, cond_extra = trace_closed(cond_fun, cond.in_avals[:cn] + err_avals + cond.in_avals[cn:])
  init_err = tree_util.tree_leaves(_zeros_error(tree, err_avals))
  outs = while_p.bind(*cond_extra, *cond_consts, *body_extra, *inner_consts, *body_consts,
                      *init_err, *init, cond_jaxpr=new_cond, body_jaxpr=new_body,
                      cond_nconsts=len(cond_extra) + cn,
                      body_nconsts=len(body_extra) + len(inner_consts) + bn)
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
  return outs[n:]


def _scan_rule(trace, vals, params):
  from purejax._src.lax.control_flow.scan import scan_p
  from purejax._src.pjit import trace_closed
  body, nc, ncarry = params["jaxpr"], params["num_consts"], params["num_carry"]
  new, inner_consts, tree = checkify_closed(body, trace.enabled)
  if not _sites(tree):
    return scan_p.bind(*vals, **params)
  n = tree.num_leaves
  err_avals = new.out_avals[:n]
  body_avals = ([core.get_aval(c) for c in inner_consts] + body.in_avals[:nc] + err_avals
                + body.in_avals[nc:])
  new_body, body_extra = trace_closed(_merging_body(new, tree, len(inner_consts), nc),
                                      body_avals)
  init_err = tree_util.tree_leaves(_zeros_error(tree, err_avals))
  outs = scan_p.bind(*body_extra, *inner_consts, *vals[:nc], *init_err, *vals[nc:],
                     **dict(params, jaxpr=new_body,
                            num_consts=len(body_extra) + len(inner_consts) + nc,
                            num_carry=n + ncarry))
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
  return outs[n:]


# -- shard_map (and pmap, a jitted shard_map) ------------------------------------------

def _shard_map_rule(trace, vals, params):
  """Each device checks its own block: its error leaves the body with a new
  leading axis split over the manual axes, so the error is mapped over the
  devices, as JAX's is for ``pmap`` ("at mapped index i: ...")."""
  from purejax._src.lax import structural
  from purejax._src.mesh import PartitionSpec
  from purejax._src.pjit import trace_closed
  from purejax._src.shard_map import _manual, manual_axes, shard_map_p
  names, sizes = _manual(params)
  with manual_axes(names, sizes):
    new, consts, tree = checkify_closed(params["jaxpr"], trace.enabled)
  if not _sites(tree):
    return shard_map_p.bind(*vals, **params)
  n = tree.num_leaves

  def body(*args):
    outs = eval_jaxpr(new.jaxpr, new.consts, *args)
    return [structural.expand_dims(o, (0,)) for o in outs[:n]] + outs[n:]
  with manual_axes(names, sizes):
    stacked, extra = trace_closed(body, new.in_avals)
  replicated = (PartitionSpec(),) * (len(extra) + len(consts))
  outs = shard_map_p.bind(*extra, *consts, *vals, **dict(
      params, jaxpr=stacked, in_specs=replicated + tuple(params["in_specs"]),
      out_specs=(PartitionSpec(names),) * n + tuple(params["out_specs"])))
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
  return outs[n:]


# -- custom_jvp ------------------------------------------------------------------------

def _custom_jvp_rule(trace, vals, params):
  """The function is checked; its JVP rule is not (as in JAX: check the jvp
  of a function to check its rule): on the JVP path nothing has failed."""
  from purejax._src.custom_derivatives_common import Named
  from purejax._src.custom_jvp import custom_jvp_call_p
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.jaxpr import ClosedJaxpr
  new, inner_consts, tree = checkify_closed(params["call_jaxpr"], trace.enabled)
  if not _sites(tree):
    return custom_jvp_call_p.bind(*vals, **params)
  n = tree.num_leaves
  err_avals = new.out_avals[:n]
  rule, cache = params["jvp_jaxpr_fun"], {}

  def lifted(nonzeros):
    if nonzeros not in cache:
      closed, out_nonzeros = rule.value(nonzeros)
      # checks the rule makes (calling the function) are functionalized, then dropped
      rule_checked, rule_consts, rule_tree = checkify_closed(closed, trace.enabled)

      def fun(*args):
        no_error = tree_util.tree_leaves(_zeros_error(tree, err_avals))
        outs = eval_jaxpr(rule_checked.jaxpr, rule_checked.consts, *rule_consts, *args)
        return [*no_error, *outs[rule_tree.num_leaves:]]
      jaxpr, consts = pe.trace_to_jaxpr(fun, closed.in_avals)
      cache[nonzeros] = (ClosedJaxpr(jaxpr, consts), (False,) * n + tuple(out_nonzeros))
    return cache[nonzeros]

  outs = custom_jvp_call_p.bind(*inner_consts, *vals, **dict(
      params, call_jaxpr=new, jvp_jaxpr_fun=Named(rule.name, lifted),
      num_consts=len(inner_consts) + params["num_consts"]))
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
  return outs[n:]


# -- custom_vjp --------------------------------------------------------------------------

class _UncheckedFwd:
  """fwd of a checkified custom_vjp function: as JAX, fwd's own checks are
  not functionalized (run eagerly they raise); on the differentiated path
  nothing has failed, and bwd ignores the error outputs' cotangents."""

  def __init__(self, fwd, tree, err_avals):
    self.fwd, self.tree, self.err_avals = fwd, tree, err_avals
    self.call = fwd.call   # the custom_vjp function (its names, for messages)

  def __call__(self, in_zeros):
    from purejax._src.pjit import trace_closed
    closed, bwd = self.fwd(in_zeros)

    def fun(*args):
      no_error = tree_util.tree_leaves(_zeros_error(self.tree, self.err_avals))
      return [*no_error, *eval_jaxpr(closed.jaxpr, closed.consts, *args)]
    lifted, consts = trace_closed(fun, closed.in_avals)
    assert not consts
    return lifted, _ErrorsIgnoredBwd(bwd, len(self.err_avals))


class _ErrorsIgnoredBwd:
  def __init__(self, bwd, n_errors):
    self.bwd, self.n_errors = bwd, n_errors

  def __call__(self, res, cts):
    return self.bwd(res, list(cts)[self.n_errors:])

  def __str__(self):
    return str(self.bwd)

  __repr__ = __str__


def _custom_vjp_rule(trace, vals, params):
  """The function is checked, as in JAX; its fwd is not (_UncheckedFwd)."""
  from purejax._src.custom_derivatives_common import Named
  from purejax._src.custom_vjp import custom_vjp_call_p
  new, inner_consts, tree = checkify_closed(params["call_jaxpr"], trace.enabled)
  if not _sites(tree):
    return custom_vjp_call_p.bind(*vals, **params)
  n = tree.num_leaves
  fwd = params["fwd_jaxpr_thunk"]
  outs = custom_vjp_call_p.bind(*inner_consts, *vals, **dict(
      params, call_jaxpr=new,
      fwd_jaxpr_thunk=Named(fwd.name, _UncheckedFwd(fwd.value, tree, new.out_avals[:n])),
      num_consts=len(inner_consts) + params["num_consts"]))
  trace.error = errors.merge(trace.error, tree_util.tree_unflatten(tree, outs[:n]))
  return outs[n:]


def _register():
  from purejax._src.lax.control_flow.cond import cond_p
  from purejax._src.lax.control_flow.loops import while_p
  from purejax._src.lax.control_flow.scan import scan_p
  from purejax._src.custom_jvp import custom_jvp_call_p
  from purejax._src.custom_vjp import custom_vjp_call_p
  from purejax._src.pjit import pjit_p
  from purejax._src.remat import remat_p
  from purejax._src.shard_map import shard_map_p
  higher_order_rules.update({pjit_p: _call_rule(pjit_p), remat_p: _call_rule(remat_p),
                             cond_p: _cond_rule, while_p: _while_rule,
                             scan_p: _scan_rule, custom_jvp_call_p: _custom_jvp_rule,
                             custom_vjp_call_p: _custom_vjp_rule,
                             shard_map_p: _shard_map_rule})


_register()
