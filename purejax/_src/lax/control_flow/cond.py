"""``cond`` and ``switch``: run one of several branches, chosen by an index.

``cond_p`` takes an int32 index and the operands, and a ``branches`` param:
a tuple of closed jaxprs with the same input and output types (constants
closed over by any branch are leading operands of every branch).  Every
rule works on those jaxprs: JVP and transposition build a new jaxpr per
branch; partial evaluation splits every branch the same way; batching
batches each branch, or, with a batched index, runs all of them and selects.
"""
import weakref

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.config import config
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from purejax._src.lax.control_flow import common
from purejax._src.pjit import batch_jaxpr, executable_for, jvp_jaxpr, pjit_p, trace_closed

cond_p = core.Primitive("cond", multiple_results=True)


@cond_p.def_impl
def _cond_impl(index, *ops, branches):
  i = int(np.clip(index, 0, len(branches) - 1))
  return executable_for(branches[i])(*ops)


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *ops, branches):
  if index.shape != () or index.dtype != np.int32:
    raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}")
  for b in branches:
    if len(b.in_avals) != len(ops) or any(
        a.shape != o.shape or a.dtype != o.dtype for a, o in zip(b.in_avals, ops)):
      raise TypeError("cond branches take operands of types "
                      f"{[a.str_short() for a in b.in_avals]}, got {[o.str_short() for o in ops]}")
  # JAX gives the outputs the first branch's types (weak types included).
  return list(branches[0].out_avals)


cond_p.pp_params = lambda params: [("branches", params["branches"])]


def _zero_tangent(aval):
  return ad.Zero(ad.tangent_aval(aval))


# -- JVP ----------------------------------------------------------------------
# Every branch gets the same nonzero input tangents and must produce the same
# nonzero output tangents: those nonzero in any branch (instantiated elsewhere).

_jvp_cache = weakref.WeakKeyDictionary()


def _jvp_branch(closed, nonzeros, out_nonzeros):
  per = _jvp_cache.setdefault(closed, {})
  key = (tuple(nonzeros), tuple(out_nonzeros))
  if key not in per:
    n = len(closed.in_avals)

    def fun(*args):
      primals, nz = args[:n], iter(args[n:])
      tangents = [next(nz) if k else _zero_tangent(a) for k, a in zip(nonzeros, closed.in_avals)]
      outs, touts = ad.jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                primals, tangents)
      return list(outs) + [ad.instantiate(t) for t, k in zip(touts, out_nonzeros) if k]

    avals = list(closed.in_avals) + [ad.tangent_aval(a) for k, a in zip(nonzeros, closed.in_avals) if k]
    per[key] = trace_closed(fun, avals)
  return per[key]


def _cond_jvp(primals, tangents, *, branches):
  index, ops, op_tangents = primals[0], primals[1:], tangents[1:]
  nonzeros = [type(t) is not ad.Zero and core.get_aval(t).dtype != dtypes.float0
              for t in op_tangents]
  n_out = len(branches[0].out_avals)
  out_nz = [False] * n_out
  for b in branches:
    out_nz = [x or y for x, y in zip(out_nz, jvp_jaxpr(b, nonzeros)[2])]
  joined, consts = common.join_consts([_jvp_branch(b, nonzeros, out_nz) for b in branches])
  outs = cond_p.bind(index, *consts, *ops, *[t for t, k in zip(op_tangents, nonzeros) if k],
                     branches=tuple(joined))
  nz = iter(outs[n_out:])
  out_avals = branches[0].out_avals
  return outs[:n_out], [next(nz) if k else _zero_tangent(a) for k, a in zip(out_nz, out_avals)]


cond_p.jvp = _cond_jvp


# -- partial evaluation -----------------------------------------------------------
# Every branch is split with the same known inputs.  An output is known only
# if it is known in every branch (a branch that knows it passes it on as a
# residual).  Residuals of all branches share slots by type; a branch fills
# the slots it does not use with zeros.

def _split_branch(closed, ops_known, out_known_all, saveable):
  known, unknown, out_known, num_res = pe.partial_eval_jaxpr(closed.jaxpr, ops_known, saveable)
  n_known = sum(out_known)
  known_outs, residuals = known.outvars[:n_known], known.outvars[n_known:]
  kept, forced = [], {}
  it = iter(known_outs)
  for j, (mine, everyone) in enumerate(zip(out_known, out_known_all)):
    if mine:
      v = next(it)
      if everyone:
        kept.append(v)
      else:
        forced[j] = v
  res_out = list(residuals) + list(forced.values())
  fresh = {j: Var(v.aval) for j, v in forced.items()}
  unknown_it = iter(unknown.outvars)
  unknown_outs = [fresh[j] if mine else next(unknown_it)
                  for j, (mine, everyone) in enumerate(zip(out_known, out_known_all)) if not everyone]
  known = Jaxpr([], known.invars, kept + res_out, known.eqns)
  unknown = Jaxpr([], unknown.invars[:num_res] + list(fresh.values()) + unknown.invars[num_res:],
                  unknown_outs, unknown.eqns)
  return known, unknown, len(kept), len(res_out)


def _assign_slots(res_avals_per_branch):
  slots, assign = [], []
  for res_avals in res_avals_per_branch:
    used, idxs = set(), []
    for a in res_avals:
      key = a.strip_weak_type()
      j = next((s for s, sa in enumerate(slots) if sa == key and s not in used), None)
      if j is None:
        j = len(slots)
        slots.append(key)
      used.add(j)
      idxs.append(j)
    assign.append(idxs)
  return slots, assign


def _known_with_slots(known, n_kept, idxs, slots):
  """The known branch, writing its residuals to their slots and zeros elsewhere."""
  def fun(*args):
    outs = eval_jaxpr(known, [], *args)
    filled = [None] * len(slots)
    for j, r in zip(idxs, outs[n_kept:]):
      filled[j] = r
    zeros = [ad.zeros_like_aval(a) if r is None else r for a, r in zip(slots, filled)]
    return outs[:n_kept] + zeros

  closed, consts = trace_closed(fun, known.in_avals)
  if consts:   # eval_jaxpr of a const-free jaxpr, and scalar zeros: never
    raise AssertionError("internal error: cond partial evaluation made a known branch "
                         "with constants")
  return closed


def _unknown_with_slots(unknown, n_res, idxs, slots):
  own = dict(zip(idxs, unknown.invars[:n_res]))
  invars = [own[j] if j in own else Var(a) for j, a in enumerate(slots)]
  return ClosedJaxpr(Jaxpr([], invars + unknown.invars[n_res:], unknown.outvars, unknown.eqns), [])


def split_branches(branches, ops_known, saveable):
  """(known branches, unknown branches, out_known, residual slot avals)."""
  out_known = None
  for b in branches:
    mine = pe.partial_eval_jaxpr(b.jaxpr, ops_known, saveable)[2]
    out_known = mine if out_known is None else [x and y for x, y in zip(out_known, mine)]
  splits = [_split_branch(b, ops_known, out_known, saveable) for b in branches]
  slots, assign = _assign_slots([[v.aval for v in k.outvars[n:]] for k, _, n, _ in splits])
  known = tuple(_known_with_slots(k, n, idxs, slots) for (k, _, n, _), idxs in zip(splits, assign))
  unknown = tuple(_unknown_with_slots(u, r, idxs, slots)
                  for (_, u, _, r), idxs in zip(splits, assign))
  return known, unknown, out_known, slots


def _cond_partial_eval(trace, args, params):
  index, ops = args[0], args[1:]
  if not trace.is_known(index):
    return pe.DynamicJaxprTrace.process_primitive(trace, cond_p, args, params)
  ops_known = [trace.is_known(x) for x in ops]
  known, unknown, out_known, slots = split_branches(params["branches"], ops_known,
                                                    pe._always_saveable)
  n_known = sum(out_known)
  known_outs = []
  if n_known or slots or any(pe.jaxpr_has_effects(b) for b in known):
    with core.set_current_trace(trace.parent):
      known_outs = cond_p.bind(index, *[x for x, k in zip(ops, ops_known) if k], branches=known)
  residuals = known_outs[n_known:]
  unknown_outs = pe.DynamicJaxprTrace.process_primitive(
      trace, cond_p, [index, *residuals, *[x for x, k in zip(ops, ops_known) if not k]],
      dict(branches=unknown))
  known_it, unknown_it = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(known_it) if k else next(unknown_it) for k in out_known]


def _noop_eqn():
  empty = ClosedJaxpr(Jaxpr([], [], [], []), [])
  return JaxprEqn([], [], pjit_p, dict(jaxpr=empty, name="cond_known"))


def _cond_partial_eval_jaxpr(eqn, ins_known, saveable):
  if not ins_known[0]:   # unknown index: nothing can run early
    return _noop_eqn(), eqn
  ops_known = ins_known[1:]
  known, unknown, out_known, slots = split_branches(eqn.params["branches"], ops_known, saveable)
  residuals = [Var(a) for a in slots]
  ops = eqn.invars[1:]
  known_eqn = eqn.replace(
      invars=[eqn.invars[0]] + [v for v, k in zip(ops, ops_known) if k],
      outvars=[v for v, k in zip(eqn.outvars, out_known) if k] + residuals,
      params=dict(eqn.params, branches=known))
  unknown_eqn = eqn.replace(
      invars=[eqn.invars[0]] + residuals + [v for v, k in zip(ops, ops_known) if not k],
      outvars=[v for v, k in zip(eqn.outvars, out_known) if not k],
      params=dict(eqn.params, branches=unknown))
  return known_eqn, unknown_eqn


cond_p.partial_eval = _cond_partial_eval
cond_p.partial_eval_jaxpr = _cond_partial_eval_jaxpr


# -- transposition ------------------------------------------------------------------
# Linear in the non-index operands: transpose every branch (with the same
# residuals and cotangents), and pick the transposed branch by the same index.

def _transpose_branch(closed, undefined, res_avals, ct_avals):
  inner = closed.jaxpr
  linear = Jaxpr([v for v, u in zip(inner.invars, undefined) if not u],
                 [v for v, u in zip(inner.invars, undefined) if u], inner.outvars, inner.eqns)

  def fun(*args):
    res, cts = args[:len(res_avals)], args[len(res_avals):]
    return [ad.instantiate(ct) for ct in ad.backward_pass(linear, res, cts)]

  return trace_closed(fun, res_avals + ct_avals)


def _cond_transpose(cts, index, *ops, branches):
  if ad.is_undefined_primal(index):
    raise ValueError("cond index cannot be linear")
  undefined = [ad.is_undefined_primal(x) for x in ops]
  res = [x for x, u in zip(ops, undefined) if not u]
  cts = [ad.instantiate(ct) for ct in cts]
  res_avals = [core.get_aval(x) for x in res]
  ct_avals = [core.get_aval(c) for c in cts]
  joined, consts = common.join_consts(
      [_transpose_branch(b, undefined, res_avals, ct_avals) for b in branches])
  outs = iter(cond_p.bind(index, *consts, *res, *cts, branches=tuple(joined)))
  return [None] + [next(outs) if u else None for u in undefined]


cond_p.transpose = _cond_transpose


# -- batching -------------------------------------------------------------------------

_batch_cache = weakref.WeakKeyDictionary()


def _batch_branch(closed, trace, in_dims, out_batched):
  """``closed`` on inputs batched along ``in_dims``; outputs batched along 0
  where ``out_batched`` (broadcast if needed), unbatched elsewhere."""
  from purejax._src.interpreters import batching
  per = _batch_cache.setdefault(closed, {})
  key = (tuple(in_dims), tuple(out_batched), trace.axis_size, trace.axis_name)
  if key not in per:
    size = trace.axis_size

    def fun(*args):
      pairs = batching.eval_jaxpr_batched(closed, trace, in_dims, args)
      return [batching.matchaxis(v, d, 0, size) if b else v
              for (v, d), b in zip(pairs, out_batched)]

    avals = [a if d is None else _with_axis(a, d, trace.axis_size)
             for a, d in zip(closed.in_avals, in_dims)]
    per[key] = trace_closed(fun, avals)
  return per[key]


def _with_axis(aval, dim, size):
  shape = list(aval.shape)
  shape.insert(dim, size)
  return aval.update(shape=tuple(shape))


def _bcast_to(pred, x):
  from purejax import lax
  x_shape = core.get_aval(x).shape
  if core.get_aval(pred).shape == x_shape:
    return pred
  return lax.broadcast_in_dim(pred, x_shape, (0,))


def _cond_batch(trace, vals, dims, *, branches):
  from purejax import lax
  from purejax._src.interpreters import batching
  index, ops = vals[0], vals[1:]
  index_dim, op_dims = dims[0], dims[1:]
  if index_dim is None:
    n_out = len(branches[0].out_avals)
    out_batched = [False] * n_out
    for b in branches:
      out_dims = batch_jaxpr(b, trace, op_dims)[2]
      out_batched = [x or d is not None for x, d in zip(out_batched, out_dims)]
    joined, consts = common.join_consts(
        [_batch_branch(b, trace, op_dims, out_batched) for b in branches])
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(joined))
    return outs, [0 if b else None for b in out_batched]

  # A batched index: every branch runs on every element; select the results.
  # An operand is masked (stop_gradient where its branch is not taken) so that
  # no gradient flows through a branch that was not selected.
  size = trace.axis_size
  index = batching.moveaxis(index, index_dim, 0)
  ops = [batching.bdim_at_front(x, d, size) for x, d in zip(ops, op_dims)]
  results = []
  for i, b in enumerate(branches):
    pred = lax.eq(index, np.int32(i))
    masked = []
    for x in ops:
      stopped = lax.stop_gradient(x)
      masked.append(lax.select_n(_bcast_to(pred, x), stopped, x))
    with core.set_current_trace(trace):
      outs = eval_jaxpr(b.jaxpr, b.consts, *[trace.wrap(x, 0) for x in masked])
      pairs = [trace.lift(o) for o in outs]
    results.append([batching.matchaxis(v, d, 0, size) for v, d in pairs])
  outs = [lax.select_n(_bcast_to(index, cases[0]), *cases) for cases in zip(*results)]
  return outs, [0] * len(outs)


_cond_batch.needs_trace = True
cond_p.batch = _cond_batch


# -- the API ----------------------------------------------------------------------------

_NO_OPERAND = object()


def _operands(operands, operand):
  if operand is _NO_OPERAND:
    return operands
  if operands:
    raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                    f"passed, got operand={operand} and positional operands {operands}")
  return (operand,)


def _flat_operands(operands):
  leaves, in_tree = tree_util.tree_flatten(operands)
  for leaf in leaves:
    if not core.is_array_like(leaf):
      # JAX's wording here quotes the type (core.typeof)
      raise TypeError(f"Argument '{leaf}' of type '{type(leaf)}' is not a valid JAX type")
  return leaves, in_tree, [core.get_aval(x) for x in leaves]


def _trace_branches(what, names, funs, operands):
  """Traces every branch on the operands' types, checks that their outputs
  agree, and returns (branch jaxprs, shared consts, out tree)."""
  leaves, in_tree, avals = _flat_operands(operands)
  traced = [common.trace_fun(lambda *a, f=f: f(*a), in_tree, avals, what) for f in funs]
  closed0, _, tree0 = traced[0]
  for name, f, (closed, _, tree) in zip(names[1:], funs[1:], traced[1:]):
    common.check_branch_trees(f"{what} branch", names[0], funs[0], tree0, name, f, tree)
  for name, f, (closed, _, tree) in zip(names[1:], funs[1:], traced[1:]):
    common.check_branch_types(f"{what} branches", names[0], funs[0], name, f, tree0,
                              closed0.out_avals, closed.out_avals)
  joined, consts = common.join_consts([(c, k) for c, k, _ in traced])
  return joined, consts, leaves, tree0


def _bind_forwarding(index, operands, branches):
  """Binds cond_p; an output that every branch passes straight through from
  the same operand is taken from that operand instead (as JAX does)."""
  positions = []
  for j in range(len(branches[0].out_avals)):
    found = {b.jaxpr.invars.index(b.jaxpr.outvars[j]) if b.jaxpr.outvars[j] in b.jaxpr.invars
             else None for b in branches}
    positions.append(found.pop() if len(found) == 1 else None)
  keep = [k is None for k in positions]
  if all(keep):
    return cond_p.bind(index, *operands, branches=tuple(branches))
  pruned = tuple(ClosedJaxpr(Jaxpr([], b.jaxpr.invars, [v for v, k in zip(b.jaxpr.outvars, keep) if k],
                                   b.jaxpr.eqns), []) for b in branches)
  effects = any(pe.jaxpr_has_effects(b) for b in branches)   # never dropped
  outs = iter(cond_p.bind(index, *operands, branches=pruned) if any(keep) or effects else [])
  return [next(outs) if k is None else _as_array(operands[k]) for k in positions]


def _as_array(x):
  """A forwarded operand comes out as an array, as a computed one would."""
  if isinstance(x, core.ArrayBase):
    return x
  from purejax._src.array import wrap_numpy
  aval = core.get_aval(x)
  return wrap_numpy(np.asarray(x, aval.dtype), aval)


def _cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
  from purejax import lax
  if pred is None:
    raise TypeError("cond predicate is None")
  if not (callable(true_fun) and callable(false_fun)):
    raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
  operands = _operands(operands, operand)
  try:
    aval = core.get_aval(pred)
  except TypeError:
    raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}") from None
  if aval.shape != ():
    raise TypeError(f"Pred must be a scalar, got {pred} of shape {aval.shape}.")
  if aval.dtype != np.bool_:
    if not (dtypes.issubdtype(aval.dtype, np.integer) or dtypes.issubdtype(aval.dtype, np.floating)):
      raise TypeError(f"Pred type must be either boolean or number, got {aval.dtype.name}.")
    pred = lax.ne(pred, np.zeros((), aval.dtype))
  if config.jax_disable_jit and not isinstance(pred, core.Tracer):
    return true_fun(*operands) if bool(pred) else false_fun(*operands)
  index = lax.convert_element_type(pred, np.int32)
  (true_j, false_j), consts, leaves, out_tree = _trace_branches(
      "cond", ["true_fun", "false_fun"], [true_fun, false_fun], operands)
  outs = _bind_forwarding(index, [*consts, *leaves], (false_j, true_j))
  return tree_util.tree_unflatten(out_tree, outs)


def cond(*args, **kwargs):
  """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both
  branches are traced, and one runs.  Also accepts the old per-branch form
  ``cond(pred, true_operand, true_fun, false_operand, false_fun)``."""
  if (len(args) == 5 and not kwargs and callable(args[2]) and callable(args[4])
      and not callable(args[1])):
    pred, true_op, true_fun, false_op, false_fun = args
    return _cond(pred, lambda ops: true_fun(ops[0]), lambda ops: false_fun(ops[1]),
                 (true_op, false_op))
  return _cond(*args, **kwargs)


def switch(index, branches, *operands, operand=_NO_OPERAND):
  """``branches[index](*operands)``, with ``index`` clamped into range."""
  from purejax import lax
  try:
    aval = core.get_aval(index)
  except TypeError:
    raise TypeError(f"Index type must be an integer, got {index}.") from None
  if aval.shape != ():
    raise TypeError(f"Branch index must be scalar, got {index} of shape {aval.shape}.")
  if not dtypes.issubdtype(aval.dtype, np.integer) or aval.dtype == np.bool_:
    raise TypeError(f"Index type must be an integer, got {index} as {aval.dtype.name}")
  branches = tuple(branches)
  operands = _operands(operands, operand)
  if not branches:
    raise ValueError("Empty branch sequence")
  if len(branches) == 1:
    return branches[0](*operands)
  index = lax.convert_element_type(index, np.int32)
  index = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
  if config.jax_disable_jit and not isinstance(index, core.Tracer):
    return branches[int(index)](*operands)
  names = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
  jaxprs, consts, leaves, out_tree = _trace_branches("switch", names, list(branches), operands)
  outs = _bind_forwarding(index, [*consts, *leaves], jaxprs)
  return tree_util.tree_unflatten(out_tree, outs)
