"""The call primitive that ``jit`` stages into an enclosing trace.

``pjit_p`` carries a closed jaxpr (constants already turned into leading
inputs).  Its rules for each interpreter are written against that jaxpr:
JVP makes a JVP jaxpr, partial evaluation splits the jaxpr into a known and
an unknown call, transposition runs the backward pass over the jaxpr.
"""
import weakref

import numpy as np

from purejax._src import core
from purejax._src import debug_nans
from purejax._src import fp_errors
from purejax._src import backends
from purejax._src.config import config
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, eval_jaxpr

pjit_p = core.Primitive("jit", multiple_results=True)
pjit_p.call_jaxpr_param = "jaxpr"

# One executable per jaxpr, kept alive only as long as the jaxpr is.
_executables = {}   # backend -> {closed jaxpr: executable}


def executable_for(closed_jaxpr, num_threads=None):
  """The executable of a const-free closed jaxpr on the configured backend
  (compiled once per backend); ``num_threads`` overrides the C kernels'
  thread count (an SPMD body shares the cores among its devices)."""
  key = config.backend_key()   # compiled kernels have the thread count built in
  if num_threads is not None and key[0] == "cpu":
    key = (key[0], num_threads)
  per_backend = _executables.get(key)
  if per_backend is None:
    per_backend = _executables[key] = weakref.WeakKeyDictionary()
  exe = per_backend.get(closed_jaxpr)
  if exe is None:
    _refuse_unstaged(closed_jaxpr.jaxpr)
    # Unused equations without effects are not run (an unused pure_callback
    # is not called), as in JAX.
    exe = per_backend[closed_jaxpr] = backends.compile_jaxpr(pe.dce_jaxpr(closed_jaxpr.jaxpr),
                                                             key[0], num_threads)
  return exe


def _unstaged_error(jaxpr):
  """The ``unstaged_error`` of a primitive that cannot be compiled (an
  unfunctionalized ``checkify.check``) in ``jaxpr`` at any depth, or None."""
  from purejax._src.jaxpr import sub_jaxprs
  for eqn in jaxpr.eqns:
    message = getattr(eqn.primitive, "unstaged_error", None)
    if message is not None:
      return message
    for sub in sub_jaxprs(eqn.params):
      message = _unstaged_error(getattr(sub, "jaxpr", sub))
      if message is not None:
        return message
  return None


def _refuse_unstaged(jaxpr):
  message = _unstaged_error(jaxpr)
  if message is not None:
    raise ValueError(message)


_has_unstaged = weakref.WeakKeyDictionary()


def has_unstaged(closed_jaxpr):
  """Whether ``closed_jaxpr`` holds a primitive that cannot be compiled."""
  found = _has_unstaged.get(closed_jaxpr)
  if found is None:
    found = _has_unstaged[closed_jaxpr] = _unstaged_error(closed_jaxpr.jaxpr) is not None
  return found


@pjit_p.def_impl
def _pjit_impl(*args, jaxpr, name, ctx_mesh=None):
  return executable_for(jaxpr)(*args)


@pjit_p.def_abstract_eval
def _pjit_abstract_eval(*avals, jaxpr, name, ctx_mesh=None):
  return jaxpr.out_avals


# ctx_mesh: the mesh set (jax.set_mesh) while the function was traced; only
# a call traced under one has it.
pjit_p.pp_params = lambda params: [("name", params["name"])] + (
    [("ctx_mesh", params["ctx_mesh"])] if params.get("ctx_mesh") is not None else []) + [
    ("jaxpr", params["jaxpr"])]


def trace_closed(fun, in_avals):
  """Traces ``fun`` to a ClosedJaxpr without consts, plus the consts' values
  (to be passed as leading arguments)."""
  jaxpr, consts = pe.trace_to_jaxpr(fun, in_avals)
  return hoist_consts(jaxpr), consts


# -- constants -------------------------------------------------------------------------
# Inside purejax a call's jaxpr has no consts: they are its leading inputs.
# JAX keeps the concrete ones in the called ClosedJaxpr, and make_jaxpr shows
# them so (``jit[jaxpr={ lambda a:i32[2]; b:f32[]. ...}]``): ``close_consts``
# makes that form for printing, and binding a call in that form (a user
# evaluating make_jaxpr's result) hoists its consts again.

_num_hoisted = weakref.WeakKeyDictionary()   # const-free jaxpr -> leading const inputs
_const_free = weakref.WeakKeyDictionary()    # JAX-form jaxpr -> its const-free form


def hoist_consts(jaxpr):
  """``jaxpr`` with its constvars made leading inputs, as a const-free
  ClosedJaxpr that remembers how many there are."""
  closed = ClosedJaxpr(pe.convert_constvars_jaxpr(jaxpr), [])
  if jaxpr.constvars:
    _num_hoisted[closed] = len(jaxpr.constvars)
  return closed


def _inherit_hoisted(derived, num_consts, closed):
  """``derived`` (a JVP or batched ``closed``) takes its own ``num_consts``
  consts, then ``closed``'s inputs: its leading consts too."""
  k = num_consts + _num_hoisted.get(closed, 0)
  if k:
    _num_hoisted[derived] = k


def _pjit_bind(*args, jaxpr, **params):
  if jaxpr.consts:
    hoisted = _const_free.get(jaxpr)
    if hoisted is None:
      opened, consts = open_consts(jaxpr.jaxpr, jaxpr.consts)
      hoisted = _const_free[jaxpr] = (hoist_consts(opened), consts)
    args = (*hoisted[1], *args)
    jaxpr = hoisted[0]
  return core.Primitive.bind(pjit_p, *args, jaxpr=jaxpr, **params)


pjit_p.bind = _pjit_bind


def _mesh_param(ctx_mesh):
  return {} if ctx_mesh is None else {"ctx_mesh": ctx_mesh}


def open_consts(jaxpr, consts):
  """The inverse of ``close_consts``: calls in ``jaxpr`` (at any depth) take
  their consts as leading inputs, fed by new constvars of ``jaxpr``."""
  constvars, consts = list(jaxpr.constvars), list(consts)
  eqns = []
  for eqn in jaxpr.eqns:
    closed = eqn.params.get("jaxpr") if eqn.primitive is pjit_p else None
    if closed is not None and closed.consts:
      inner, inner_consts = open_consts(closed.jaxpr, closed.consts)
      new_vars = [Var(v.aval) for v in inner.constvars]
      constvars += new_vars
      consts += inner_consts
      eqn = eqn.replace(invars=new_vars + list(eqn.invars),
                        params=dict(eqn.params, jaxpr=hoist_consts(inner)))
    eqns.append(eqn)
  return Jaxpr(constvars, jaxpr.invars, jaxpr.outvars, eqns), consts


def close_consts(jaxpr, consts):
  """JAX's form of a traced ``jaxpr`` and its ``consts``: a call's concrete
  constants (its leading inputs fed by constvars of ``jaxpr``) become
  constvars of the called jaxpr; constvars left unused are dropped."""
  env = {v: c for v, c in zip(jaxpr.constvars, consts) if not isinstance(c, core.Tracer)}
  eqns = [_close_eqn(eqn, env) if eqn.primitive is pjit_p else eqn for eqn in jaxpr.eqns]
  used = {v for e in eqns for v in e.invars if type(v) is not Literal}
  used.update(v for v in jaxpr.outvars if type(v) is not Literal)
  kept = [(v, c) for v, c in zip(jaxpr.constvars, consts) if v in used]
  return (Jaxpr([v for v, _ in kept], jaxpr.invars, jaxpr.outvars, eqns),
            [c for _, c in kept])


def _close_eqn(eqn, env):
  closed = eqn.params["jaxpr"]
  k = _num_hoisted.get(closed, 0) if not closed.consts else 0
  is_const = [type(v) is not Literal and v in env for v in eqn.invars[:k]]
  if not any(is_const):
    return eqn
  inner = closed.jaxpr
  pairs = list(zip(inner.invars[:k], eqn.invars[:k], is_const))
  opened = Jaxpr([iv for iv, _, c in pairs if c],
                 [iv for iv, _, c in pairs if not c] + inner.invars[k:],
                 inner.outvars, inner.eqns)
  inner, inner_consts = close_consts(opened, [env[v] for _, v, c in pairs if c])
  return eqn.replace(invars=[v for _, v, c in pairs if not c] + list(eqn.invars[k:]),
                     params=dict(eqn.params, jaxpr=ClosedJaxpr(inner, inner_consts)))


# -- JVP ----------------------------------------------------------------------

_jvp_jaxprs = weakref.WeakKeyDictionary()


def jvp_jaxpr(closed, nonzeros):
  """A jaxpr computing (primal outs, nonzero tangent outs) from (primals,
  nonzero tangents), and which output tangents are nonzero."""
  per_jaxpr = _jvp_jaxprs.setdefault(closed, {})
  key = tuple(nonzeros)
  if key not in per_jaxpr:
    n = len(closed.in_avals)
    out_nonzeros = []

    def fun(*args):
      primals, nz = args[:n], iter(args[n:])
      tangents = [next(nz) if k else ad.Zero(ad.tangent_aval(a))
                  for k, a in zip(nonzeros, closed.in_avals)]
      outs_p, outs_t = ad.jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                   primals, tangents)
      out_nonzeros[:] = [type(t) is not ad.Zero for t in outs_t]
      return list(outs_p) + [t for t in outs_t if type(t) is not ad.Zero]

    avals = list(closed.in_avals) + [ad.tangent_aval(a) for k, a in
                                     zip(nonzeros, closed.in_avals) if k]
    traced, consts = trace_closed(fun, avals)
    _inherit_hoisted(traced, len(consts), closed)
    per_jaxpr[key] = (traced, consts, list(out_nonzeros))
  return per_jaxpr[key]


def _pjit_jvp(primals, tangents, *, jaxpr, name, ctx_mesh=None):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  jvp_closed, consts, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros)
  outs = pjit_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not ad.Zero],
                     jaxpr=jvp_closed, name=name, **_mesh_param(ctx_mesh))
  n = len(jaxpr.out_avals)
  nz_tangents = iter(outs[n:])
  tangents_out = [next(nz_tangents) if k else ad.Zero(ad.tangent_aval(a))
                  for k, a in zip(out_nonzeros, jaxpr.out_avals)]
  return outs[:n], tangents_out


pjit_p.jvp = _pjit_jvp


# -- partial evaluation -----------------------------------------------------------
# Written for any call primitive with a ``jaxpr`` param; ``prim.saveable(params)``
# says which known intermediates to keep as residuals (checkpoint recomputes
# the others).

def _split_call(closed, in_known, saveable):
  known, unknown, out_known, num_res = pe.partial_eval_jaxpr(closed.jaxpr, in_known, saveable)
  known = ClosedJaxpr(known, [])
  k = _num_hoisted.get(closed, 0)
  if k and all(in_known[:k]):
    _num_hoisted[known] = k   # the known call takes the consts first
  return known, ClosedJaxpr(unknown, []), out_known, num_res


# A call that forwards residuals (``pjit``): the known call does not return
# what its caller already has.  A known output (primal or residual) that is
# one of the known inputs is taken from the caller's argument, and a
# residual that is also a known primal output is taken from that output.
# ``sources`` says, for each output of the unpruned known jaxpr, where its
# value comes from: ``("arg", i)``, the i-th known input, or ``("out", j)``,
# the j-th output of the pruned known call.

_forwarding_splits = weakref.WeakKeyDictionary()


def _split_forwarding(closed, in_known, saveable):
  per_jaxpr = _forwarding_splits.get(closed) if saveable is pe._always_saveable else None
  key = tuple(in_known)
  if per_jaxpr is not None and key in per_jaxpr:
    return per_jaxpr[key]
  known, unknown, out_known, num_res = _split_call(closed, in_known, saveable)
  # Dead code goes, and with it the residuals nothing reads.
  unknown_body, used_res = pe.dce_with_rules(unknown.jaxpr)
  used_res = used_res[:num_res]
  inner = known.jaxpr
  n_primal = len(inner.outvars) - num_res
  if not all(used_res):
    unknown_body = Jaxpr([], [v for i, v in enumerate(unknown_body.invars)
                              if i >= num_res or used_res[i]],
                         unknown_body.outvars, unknown_body.eqns)
    inner = Jaxpr([], inner.invars, inner.outvars[:n_primal] +
                  [v for v, u in zip(inner.outvars[n_primal:], used_res) if u], inner.eqns)
    num_res = sum(used_res)
  if unknown_body is not unknown.jaxpr:
    unknown = ClosedJaxpr(unknown_body, [])
  inner = pe.dce_with_rules(inner)[0]
  arg_index = {}
  for i, v in enumerate(inner.invars):
    arg_index.setdefault(v, i)
  kept, sources, out_index = [], [], {}
  for pos, v in enumerate(inner.outvars):
    literal = type(v) is Literal
    if not literal and v in arg_index:
      sources.append(("arg", arg_index[v]))
    elif not literal and pos >= n_primal and v in out_index:
      sources.append(("out", out_index[v]))
    else:
      if pos < n_primal and not literal:
        out_index.setdefault(v, len(kept))
      sources.append(("out", len(kept)))
      kept.append(v)
  if len(kept) < len(inner.outvars) or inner is not known.jaxpr:
    pruned = ClosedJaxpr(Jaxpr([], inner.invars, kept, inner.eqns), [])
    if known in _num_hoisted:
      _num_hoisted[pruned] = _num_hoisted[known]
    known = pruned
  result = (known, unknown, out_known, num_res, sources)
  if saveable is pe._always_saveable:
    _forwarding_splits.setdefault(closed, {})[key] = result
  return result


def _forwarded(sources, known_ins, call_outs):
  return [known_ins[i] if kind == "arg" else call_outs[i] for kind, i in sources]


def call_partial_eval_jaxpr(eqn, ins_known, saveable):
  """Splits a call equation inside a jaxpr being partially evaluated."""
  saveable = eqn.primitive.saveable(eqn.params) or saveable
  if getattr(eqn.primitive, "forwards_residuals", False):
    known, unknown, out_known, num_res, sources = _split_forwarding(
        eqn.params["jaxpr"], ins_known, saveable)
  else:
    known, unknown, out_known, num_res = _split_call(eqn.params["jaxpr"], ins_known, saveable)
    sources = [("out", j) for j in range(len(known.out_avals))]
  known_ins = [v for v, k in zip(eqn.invars, ins_known) if k]
  known_call_outs = [Var(a) for a in known.out_avals]
  split = len(sources) - num_res
  known_outs = [v for v, k in zip(eqn.outvars, out_known) if k]
  unknown_outs = [v for v, k in zip(eqn.outvars, out_known) if not k]
  # The caller's variables stand for the known call's outputs they name; a
  # known output forwarded from an input is replaced by that input.
  renamed = {}
  for (kind, j), v in zip(sources[:split], known_outs):
    if kind == "out":
      known_call_outs[j] = v
    else:
      renamed[v] = known_ins[j]
  residuals = _forwarded(sources[split:], known_ins, known_call_outs)
  known_eqn = eqn.replace(invars=known_ins, outvars=known_call_outs,
                          params=dict(eqn.params, jaxpr=known))
  unknown_eqn = eqn.replace(
      invars=residuals + [v for v, k in zip(eqn.invars, ins_known) if not k],
      outvars=unknown_outs, params=dict(eqn.params, jaxpr=unknown))
  return (known_eqn, unknown_eqn, renamed) if renamed else (known_eqn, unknown_eqn)


def call_partial_eval(primitive):
  """Under linearize: run the known part of the call now, stage the rest."""

  def rule(trace, args, params):
    in_known = [trace.is_known(x) for x in args]
    saveable = primitive.saveable(params) or pe._always_saveable
    known_ins = [x for x, k in zip(args, in_known) if k]
    if getattr(primitive, "forwards_residuals", False):
      known, unknown, out_known, num_res, sources = _split_forwarding(
          params["jaxpr"], in_known, saveable)
    else:
      known, unknown, out_known, num_res = _split_call(params["jaxpr"], in_known, saveable)
      sources = [("out", j) for j in range(len(known.out_avals))]
    with core.set_current_trace(trace.parent):
      known_outs = primitive.bind(*known_ins, **dict(params, jaxpr=known))
    known_outs = _forwarded(sources, known_ins, known_outs)
    split = len(known_outs) - num_res
    residuals = known_outs[split:]
    unknown_outs = pe.DynamicJaxprTrace.process_primitive(
        trace, primitive, residuals + [x for x, k in zip(args, in_known) if not k],
        dict(params, jaxpr=unknown))
    known_iter, unknown_iter = iter(known_outs[:split]), iter(unknown_outs)
    return [next(known_iter) if k else next(unknown_iter) for k in out_known]

  return rule


pjit_p.saveable = lambda params: None   # keep every residual
pjit_p.forwards_residuals = True
pjit_p.partial_eval = call_partial_eval(pjit_p)
pjit_p.partial_eval_jaxpr = call_partial_eval_jaxpr


# -- transposition ------------------------------------------------------------------

def call_transpose(cts, *args, jaxpr, **params):
  """The backward pass of a called jaxpr: residual inputs are the defined
  ones, linear inputs the ``UndefinedPrimal``s."""
  inner = jaxpr.jaxpr
  undefined = [ad.is_undefined_primal(x) for x in args]
  linear = inner.__class__(
      [v for v, u in zip(inner.invars, undefined) if not u],
      [v for v, u in zip(inner.invars, undefined) if u], inner.outvars, inner.eqns)
  cts_in = iter(ad.backward_pass(linear, [x for x, u in zip(args, undefined) if not u], cts))
  return [next(cts_in) if u else None for u in undefined]


# A linear ``pjit`` is transposed into another ``pjit``: its jaxpr is the
# backward pass of the called jaxpr, staged once per pattern of defined
# inputs and symbolic-zero cotangents.  It takes the defined inputs (the
# residuals) in their order, then the nonzero cotangents, and returns the
# nonzero cotangents of the linear inputs.

_transposed_jaxprs = weakref.WeakKeyDictionary()


def transpose_jaxpr(closed, undefined, ct_avals):
  """(jaxpr, its consts, which linear inputs get a nonzero cotangent) of the
  backward pass of ``closed``; ``ct_avals[i]`` is None for a zero cotangent."""
  per_jaxpr = _transposed_jaxprs.setdefault(closed, {})
  res_avals = tuple(a for a, u in zip(closed.in_avals, undefined) if not u)
  key = (tuple(undefined), tuple(ct_avals))
  hit = per_jaxpr.get(key)
  if hit is not None:
    return hit
  inner = closed.jaxpr
  linear = Jaxpr([v for v, u in zip(inner.invars, undefined) if not u],
                 [v for v, u in zip(inner.invars, undefined) if u], inner.outvars, inner.eqns)
  n_res, out_nonzeros = len(res_avals), []

  def fun(*args):
    nz_cts = iter(args[n_res:])
    cts = [ad.Zero(ad.tangent_aval(a)) if c is None else next(nz_cts)
           for a, c in zip(closed.out_avals, ct_avals)]
    cts_in = ad.backward_pass(linear, args[:n_res], cts)
    out_nonzeros[:] = [type(ct) is not ad.Zero for ct in cts_in]
    return [ct for ct in cts_in if type(ct) is not ad.Zero]

  traced, consts = trace_closed(fun, list(res_avals) + [a for a in ct_avals if a is not None])
  if consts:
    _num_hoisted[traced] = len(consts)
  hit = (traced, consts, out_nonzeros)
  if not any(isinstance(c, core.Tracer) for c in consts):
    per_jaxpr[key] = hit
  return hit


def _pjit_transpose(cts, *args, jaxpr, **params):
  undefined = [ad.is_undefined_primal(x) for x in args]
  ct_avals = [None if type(ct) is ad.Zero else core.get_aval(ct) for ct in cts]
  if all(a is None for a in ct_avals):
    return [None] * len(args)
  transposed, consts, out_nonzeros = transpose_jaxpr(jaxpr, undefined, ct_avals)
  operands = [*consts, *[x for x, u in zip(args, undefined) if not u],
              *[ct for ct in cts if type(ct) is not ad.Zero]]
  if debug_nans.enabled and core.current_trace() is core.eval_trace:
    if _invalid_backward_pass(transposed, operands):
      # As JAX does: the backward pass is run again de-optimized, where the
      # failing operation raises (naming the primitive being transposed).
      print("Invalid nan value encountered in the backward pass of a jax.jit function. "
            "Calling the de-optimized backward pass.")
      return call_transpose(cts, *args, jaxpr=jaxpr)
  outs = iter(pjit_p.bind(*operands, jaxpr=transposed, **params))
  nonzero = iter(out_nonzeros)
  return [(next(outs) if next(nonzero) else None) if u else None for u in undefined]


def _invalid_backward_pass(transposed, operands):
  token = fp_errors.ignore()
  try:
    outs = executable_for(transposed)(*[np.asarray(x) for x in operands])
  finally:
    fp_errors.restore(token)
  return debug_nans.invalid_kind([np.asarray(o) for o in outs]) is not None


pjit_p.transpose = _pjit_transpose
pjit_p.symbolic_zero_cotangents = True


# -- dead-code elimination ------------------------------------------------------------
# A call whose outputs are partly unused (in a linear jaxpr, or in a known
# jaxpr of partial evaluation) keeps only the outputs used and the inputs
# those need, as JAX's tracing with dead-code elimination does.

_dce_jaxprs = weakref.WeakKeyDictionary()


def dce_call_jaxpr(closed, used_outputs):
  """(``closed`` computing only the used outputs, from only the inputs they
  need; which inputs those are).  ``closed`` itself if nothing is pruned."""
  per_jaxpr = _dce_jaxprs.setdefault(closed, {})
  key = tuple(used_outputs)
  if key not in per_jaxpr:
    inner = closed.jaxpr
    outvars = [v for v, u in zip(inner.outvars, used_outputs) if u]
    body, used_in = pe.dce_with_rules(Jaxpr([], inner.invars, outvars, inner.eqns))
    if pe.jaxpr_has_effects(body):
      used_in = [True] * len(used_in)
    if (all(used_outputs) and all(used_in) and len(body.eqns) == len(inner.eqns)
        and all(a is b for a, b in zip(body.eqns, inner.eqns))):
      per_jaxpr[key] = (closed, used_in)
    else:
      pruned = ClosedJaxpr(Jaxpr([], [v for v, u in zip(inner.invars, used_in) if u],
                                 outvars, body.eqns), closed.consts)
      k = _num_hoisted.get(closed, 0)
      if k and sum(used_in[:k]):
        _num_hoisted[pruned] = sum(used_in[:k])
      per_jaxpr[key] = (pruned, used_in)
  return per_jaxpr[key]


def _pjit_dce(used_outputs, eqn):
  closed = eqn.params["jaxpr"]
  pruned, used_in = dce_call_jaxpr(closed, used_outputs)
  if pruned is closed:
    return eqn
  return eqn.replace(invars=[v for v, u in zip(eqn.invars, used_in) if u],
                     outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
                     params=dict(eqn.params, jaxpr=pruned))


pjit_p.dce = _pjit_dce


# -- batching -------------------------------------------------------------------------

_batched_jaxprs = weakref.WeakKeyDictionary()


def batch_jaxpr(closed, trace, in_dims, batch_splits=None):
  """A jaxpr computing ``closed`` on batched inputs (batch axes ``in_dims``,
  split per ``batch_splits``: (mesh, entry) per input, explicit sharding),
  its constants, and the batch axes of its outputs."""
  from purejax._src.interpreters.batching import eval_jaxpr_batched
  per_jaxpr = _batched_jaxprs.setdefault(closed, {})
  key = (tuple(in_dims), trace.axis_size, trace.axis_name, batch_splits)
  if key not in per_jaxpr:
    out_dims = []

    def fun(*args):
      pairs = eval_jaxpr_batched(closed, trace, in_dims, args)
      out_dims[:] = [d for _, d in pairs]
      return [v for v, _ in pairs]

    splits = batch_splits or [(None, None)] * len(in_dims)
    avals = [a if d is None else _with_batch_axis(a, d, trace.axis_size, *split)
             for a, d, split in zip(closed.in_avals, in_dims, splits)]
    traced, consts = trace_closed(fun, avals)
    _inherit_hoisted(traced, len(consts), closed)
    per_jaxpr[key] = (traced, consts, list(out_dims))
  return per_jaxpr[key]


def _with_batch_axis(aval, dim, size, mesh=None, entry=None):
  from purejax._src.sharding_types import with_dim
  shape = list(aval.shape)
  shape.insert(dim, size)
  return with_dim(aval, dim, tuple(shape), entry, mesh)


def batch_splits(vals, dims):
  """Per batched value, the mesh and split of its batch axis (explicit
  sharding), or None when there are none."""
  splits = []
  for v, d in zip(vals, dims):
    sharding = getattr(core.get_aval(v), "explicit_sharding", None)
    if sharding is None or d is None:
      splits.append((None, None))
    else:
      splits.append((sharding.mesh, tuple(sharding.spec)[d]))
  return tuple(splits) if any(e is not None for _, e in splits) else None


def call_batch(primitive):
  def rule(trace, vals, dims, **params):
    batched, consts, out_dims = batch_jaxpr(params["jaxpr"], trace, dims,
                                            batch_splits(vals, dims))
    outs = primitive.bind(*consts, *vals, **dict(params, jaxpr=batched))
    return outs, out_dims
  rule.needs_trace = True
  return rule


pjit_p.batch = call_batch(pjit_p)
