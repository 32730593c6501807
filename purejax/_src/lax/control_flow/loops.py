"""``while_p`` and the loops built on it: ``while_loop`` and ``fori_loop``.

``while_p`` takes two closed sub-jaxprs: ``cond_jaxpr`` (cond consts, carry)
-> bool[] and ``body_jaxpr`` (body consts, carry) -> carry.  Its operands
are the cond consts, the body consts, then the initial carry.  Every rule
below works on those jaxprs; the user's Python functions are traced once,
in ``while_loop``.
"""
import weakref

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var, eval_jaxpr
from purejax._src.lax.control_flow import loop_checks
from purejax._src.lax.control_flow.common import trace_fun
from purejax._src.pjit import batch_jaxpr, executable_for, jvp_jaxpr, trace_closed

while_p = core.Primitive("while", multiple_results=True)


def _split(args, cond_nconsts, body_nconsts):
  n = cond_nconsts + body_nconsts
  return list(args[:cond_nconsts]), list(args[cond_nconsts:n]), list(args[n:])


@while_p.def_impl
def _while_impl(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  cond_consts, body_consts, carry = _split(args, cond_nconsts, body_nconsts)
  cond, body = executable_for(cond_jaxpr), executable_for(body_jaxpr)
  while bool(cond(*cond_consts, *carry)[0]):
    carry = body(*body_consts, *carry)
  return [np.asarray(c) for c in carry]


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  # The body's output avals: a strongly typed carry may come out weak (JAX).
  return list(body_jaxpr.out_avals)


# -- JVP ----------------------------------------------------------------------
# The carries with nonzero tangents are a fixed point: a carry's tangent is
# nonzero if its initial tangent is, or if the body makes it so from the
# nonzero ones.  The cond sees only primals (tangent carries are ignored).

def _nonzero(t):
  return type(t) is not ad.Zero


def _carry_nonzeros(body_jaxpr, const_nz, carry_nz):
  carry_nz = list(carry_nz)
  while True:
    _, _, out_nz = jvp_jaxpr(body_jaxpr, const_nz + carry_nz)
    new = [a or b for a, b in zip(carry_nz, out_nz)]
    if new == carry_nz:
      return carry_nz
    carry_nz = new


_jvp_bodies = weakref.WeakKeyDictionary()


def _jvp_body(body_jaxpr, nconsts, const_nz, carry_nz):
  """A body taking (consts, nonzero const tangents, carry, nonzero carry
  tangents) and returning (carry, nonzero carry tangents)."""
  per_jaxpr = _jvp_bodies.setdefault(body_jaxpr, {})
  key = (tuple(const_nz), tuple(carry_nz))
  if key in per_jaxpr:
    return per_jaxpr[key]
  in_avals = body_jaxpr.in_avals
  const_avals, carry_avals = in_avals[:nconsts], in_avals[nconsts:]
  n_ct = sum(const_nz)

  def fun(*args):
    consts, rest = args[:nconsts], args[nconsts:]
    const_ts, rest = iter(rest[:n_ct]), rest[n_ct:]
    carry, carry_ts = rest[:len(carry_avals)], iter(rest[len(carry_avals):])
    tangents = [next(const_ts) if k else ad.Zero(ad.tangent_aval(a))
                for k, a in zip(const_nz, const_avals)]
    tangents += [next(carry_ts) if k else ad.Zero(ad.tangent_aval(a))
                 for k, a in zip(carry_nz, carry_avals)]
    outs, outs_t = ad.jvp_flat(lambda *xs: eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *xs),
                               list(consts) + list(carry), tangents)
    # A carry with a nonzero tangent keeps one every iteration (zeros if need be).
    outs_t = [_tangent_like(ad.instantiate(t), a)
              for t, k, a in zip(outs_t, carry_nz, carry_avals) if k]
    return list(outs) + outs_t

  avals = (list(const_avals) + [ad.tangent_aval(a) for a, k in zip(const_avals, const_nz) if k]
           + list(carry_avals) + [ad.tangent_aval(a) for a, k in zip(carry_avals, carry_nz) if k])
  per_jaxpr[key] = trace_closed(fun, avals)
  return per_jaxpr[key]


def _tangent_like(t, primal_aval):
  """A tangent of the carry's tangent type (float0 zeros stay float0)."""
  want = ad.tangent_aval(primal_aval)
  aval = core.get_aval(t)
  if aval.dtype != want.dtype:
    return ad.zeros_like_aval(want)
  return t


def _with_extra_invars(closed, avals):
  """``closed`` taking (and ignoring) trailing inputs of ``avals``."""
  inner = closed.jaxpr
  return ClosedJaxpr(Jaxpr(inner.constvars, inner.invars + [Var(a) for a in avals],
                           inner.outvars, inner.eqns), closed.consts)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  cond_consts, body_consts, init = _split(primals, cond_nconsts, body_nconsts)
  _, body_const_ts, init_ts = _split(tangents, cond_nconsts, body_nconsts)
  const_nz = [_nonzero(t) for t in body_const_ts]
  carry_nz = _carry_nonzeros(body_jaxpr, const_nz, [_nonzero(t) for t in init_ts])
  if not any(carry_nz):
    outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, [ad.Zero.from_primal_value(o) for o in outs]
  carry_avals = body_jaxpr.in_avals[body_nconsts:]
  new_body, new_consts = _jvp_body(body_jaxpr, body_nconsts, const_nz, carry_nz)
  tangent_avals = [ad.tangent_aval(a) for a, k in zip(carry_avals, carry_nz) if k]
  new_cond = _with_extra_invars(cond_jaxpr, tangent_avals)
  body_ts = [t for t in body_const_ts if _nonzero(t)]
  carry_ts = [_tangent_like(ad.instantiate(t), a)
              for t, k, a in zip(init_ts, carry_nz, carry_avals) if k]
  outs = while_p.bind(*cond_consts, *new_consts, *body_consts, *body_ts, *init, *carry_ts,
                      cond_jaxpr=new_cond, body_jaxpr=new_body, cond_nconsts=cond_nconsts,
                      body_nconsts=len(new_consts) + body_nconsts + len(body_ts))
  n = len(init)
  out_ts = iter(outs[n:])
  return outs[:n], [next(out_ts) if k else ad.Zero(ad.tangent_aval(a))
                    for k, a in zip(carry_nz, carry_avals)]


while_p.jvp = _while_jvp


# -- partial evaluation and transposition -------------------------------------------
# Carries that depend on unknown (tangent) values are unknown; the rest, and
# the predicate if it is known, are computed now by a loop pruned to them.
# The unknown outputs come from the whole loop, staged (it recomputes the
# known part).  That staged loop can be linearized but never transposed.

_REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
    "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
    "static start/stop.")


def _unknown_outputs(jaxpr, in_unknown):
  unknown = {v for v, u in zip(jaxpr.invars, in_unknown) if u}
  for eqn in jaxpr.eqns:
    if any(type(v) is not Literal and v in unknown for v in eqn.invars):
      unknown.update(eqn.outvars)
  return [type(v) is not Literal and v in unknown for v in jaxpr.outvars]


def _known_part(closed, in_unknown, out_keep):
  """The part of ``closed`` computing the kept outputs from the known inputs."""
  inner = closed.jaxpr
  unknown = {v for v, u in zip(inner.invars, in_unknown) if u}
  eqns = []
  for eqn in inner.eqns:
    if any(type(v) is not Literal and v in unknown for v in eqn.invars):
      unknown.update(eqn.outvars)
    else:
      eqns.append(eqn)
  return ClosedJaxpr(Jaxpr([], [v for v, u in zip(inner.invars, in_unknown) if not u],
                           [v for v, k in zip(inner.outvars, out_keep) if k], eqns), [])


def _split_unknowns(params, in_unknown):
  """Which carries are unknown, and the known loop's params (None when the
  predicate itself is unknown: then nothing can be computed now)."""
  cn, bn = params["cond_nconsts"], params["body_nconsts"]
  cond_u, body_u, carry_u = _split(in_unknown, cn, bn)
  while True:
    out_u = _unknown_outputs(params["body_jaxpr"].jaxpr, body_u + carry_u)
    new = [a or b for a, b in zip(carry_u, out_u)]
    if new == carry_u:
      break
    carry_u = new
  if _unknown_outputs(params["cond_jaxpr"].jaxpr, cond_u + carry_u)[0]:
    return [True] * len(carry_u), None
  known = [not u for u in carry_u]
  known_params = dict(
      cond_jaxpr=_known_part(params["cond_jaxpr"], cond_u + carry_u, [True]),
      body_jaxpr=_known_part(params["body_jaxpr"], body_u + carry_u, known),
      cond_nconsts=cond_u.count(False), body_nconsts=body_u.count(False))
  return carry_u, known_params


def _while_partial_eval(trace, args, params):
  in_unknown = [not trace.is_known(x) for x in args]
  carry_u, known_params = _split_unknowns(params, in_unknown)
  staged = pe.DynamicJaxprTrace.process_primitive(trace, while_p, args, params)
  if known_params is None:
    return staged
  with core.set_current_trace(trace.parent):
    known_outs = iter(while_p.bind(*[x for x, u in zip(args, in_unknown) if not u],
                                   **known_params))
  return [s if u else next(known_outs) for s, u in zip(staged, carry_u)]


def _while_partial_eval_jaxpr(eqn, ins_known, saveable):
  carry_u, known_params = _split_unknowns(eqn.params, [not k for k in ins_known])
  if known_params is None:
    known_eqn = eqn.replace(invars=[], outvars=[], params=_empty_loop_params())
    return known_eqn, eqn
  known_eqn = eqn.replace(invars=[v for v, k in zip(eqn.invars, ins_known) if k],
                          outvars=[v for v, u in zip(eqn.outvars, carry_u) if not u],
                          params=known_params)
  unknown_eqn = eqn.replace(outvars=[v if u else DropVar(v.aval)
                                     for v, u in zip(eqn.outvars, carry_u)])
  return known_eqn, unknown_eqn


def _empty_loop_params():
  """A loop with no carry that never runs (a no-op known equation)."""
  false = Literal(np.bool_(False), core.ShapedArray((), np.dtype(bool)))
  return dict(cond_jaxpr=ClosedJaxpr(Jaxpr([], [], [false], []), []),
              body_jaxpr=ClosedJaxpr(Jaxpr([], [], [], []), []),
              cond_nconsts=0, body_nconsts=0)


def _while_transpose(cts, *args, **params):
  raise ValueError(_REVERSE_MODE_ERROR)


while_p.partial_eval = _while_partial_eval
while_p.partial_eval_jaxpr = _while_partial_eval_jaxpr
while_p.transpose = _while_transpose


# -- batching --------------------------------------------------------------------------
# Carries that are batched (initially, or made so by the body) stay batched,
# at axis 0.  An unbatched predicate: batch the body and cond.  A batched
# predicate: every carry is batched, the loop runs while any example's
# predicate holds, and the body keeps a finished example's carry (select_n).

def _batch_to(closed, trace, in_dims, out_batched, finish=None):
  """``closed`` batched, with each output at axis 0 if ``out_batched`` says
  so (broadcast if need be); ``finish(vals_and_dims)`` may post-process."""
  from purejax._src.interpreters.batching import eval_jaxpr_batched

  def fun(*args):
    pairs = eval_jaxpr_batched(closed, trace, in_dims, args)
    if finish is not None:
      return finish(pairs)
    return [batching.matchaxis(v, d, 0, trace.axis_size) if b else v
            for (v, d), b in zip(pairs, out_batched)]

  avals = [a if d is None else _with_batch_axis(a, d, trace.axis_size)
           for a, d in zip(closed.in_avals, in_dims)]
  return trace_closed(fun, avals)


def _with_batch_axis(aval, dim, size):
  shape = list(aval.shape)
  shape.insert(dim, size)
  return aval.update(shape=tuple(shape))


def _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  """A body over (cond consts, body consts, carry) that leaves the carry
  unchanged where the predicate is false."""
  from purejax import lax
  cond_avals = cond_jaxpr.in_avals[:cond_nconsts]
  avals = cond_avals + body_jaxpr.in_avals

  def fun(*args):
    cond_consts, body_consts, carry = _split(args, cond_nconsts, body_nconsts)
    pred, = eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cond_consts, *carry)
    new = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *body_consts, *carry)
    outs = []
    for old, x in zip(carry, new):
      shape = core.get_aval(old).shape
      p = lax.broadcast_in_dim(pred, shape, ()) if shape else pred
      outs.append(lax.select_n(p, old, x))
    return outs

  return trace_closed(fun, avals)


def _reduce_pred(pairs):
  from purejax import lax
  (pred, dim), = pairs
  return [pred if dim is None else lax.reduce_or(pred, (dim,))]


def _while_batch(trace, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  cond_consts, body_consts, init = _split(vals, cond_nconsts, body_nconsts)
  cond_d, body_d, init_d = _split(dims, cond_nconsts, body_nconsts)
  carry_b = [d is not None for d in init_d]
  while True:
    _, _, out_dims = batch_jaxpr(body_jaxpr, trace, body_d + [0 if b else None for b in carry_b])
    new = [b or d is not None for b, d in zip(carry_b, out_dims)]
    if new == carry_b:
      break
    carry_b = new
  carry_dims = [0 if b else None for b in carry_b]
  _, _, (pred_dim,) = batch_jaxpr(cond_jaxpr, trace, cond_d + carry_dims)
  if pred_dim is not None:
    carry_b, carry_dims = [True] * len(init), [0] * len(init)
  init = [batching.matchaxis(x, d, 0, trace.axis_size) if b else x
          for x, d, b in zip(init, init_d, carry_b)]
  if pred_dim is None:
    new_body, body_extra = _batch_to(body_jaxpr, trace, body_d + carry_dims, carry_b)
    new_cond, cond_extra = _batch_to(cond_jaxpr, trace, cond_d + carry_dims, [False])
    outs = while_p.bind(*cond_extra, *cond_consts, *body_extra, *body_consts, *init,
                        cond_jaxpr=new_cond, body_jaxpr=new_body,
                        cond_nconsts=len(cond_extra) + cond_nconsts,
                        body_nconsts=len(body_extra) + body_nconsts)
    return outs, carry_dims
  guarded, guarded_consts = _guarded_body(cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
  new_body, body_extra = _batch_to(guarded, trace, [None] * len(guarded_consts) + cond_d
                                   + body_d + carry_dims, carry_b)
  new_cond, cond_extra = _batch_to(cond_jaxpr, trace, cond_d + carry_dims, [False],
                                   finish=_reduce_pred)
  outs = while_p.bind(*cond_extra, *cond_consts, *body_extra, *guarded_consts, *cond_consts,
                      *body_consts, *init, cond_jaxpr=new_cond, body_jaxpr=new_body,
                      cond_nconsts=len(cond_extra) + cond_nconsts,
                      body_nconsts=(len(body_extra) + len(guarded_consts) + cond_nconsts
                                    + body_nconsts))
  return outs, carry_dims


_while_batch.needs_trace = True
while_p.batch = _while_batch


# -- the user-facing loops ----------------------------------------------------------------

def _leaf_avals(leaves):
  avals = []
  for x in leaves:
    try:
      avals.append(core.get_aval(x))
    except TypeError:
      raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None
  return avals


def _trace_loop(cond_fun, body_fun, in_tree, avals):
  in_tree = tree_util.treedef_tuple([in_tree])   # trace_fun splats its args
  cond_closed, cond_consts, cond_tree = trace_fun(cond_fun, in_tree, avals, "cond_fun")
  body_closed, body_consts, body_tree = trace_fun(body_fun, in_tree, avals, "body_fun")
  return cond_closed, cond_consts, cond_tree, body_closed, body_consts, body_tree


def while_loop(cond_fun, body_fun, init_val):
  """Calls ``body_fun`` on the carry while ``cond_fun(carry)`` is true."""
  if not (callable(cond_fun) and callable(body_fun)):
    raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
  leaves, in_tree = tree_util.tree_flatten(init_val)
  avals = _leaf_avals(leaves)
  name = loop_checks.carry_arg_name(body_fun)
  traced = _trace_loop(cond_fun, body_fun, in_tree, avals)
  body_closed, body_tree = traced[3], traced[5]
  loop_checks.check_carry_structure("while_loop body", name, in_tree, avals, body_tree,
                                    body_closed.out_avals)
  promoted = loop_checks.promote_weak_carries(leaves, avals, body_closed.out_avals)
  if promoted is not None:   # retrace with the promoted carry types
    leaves, avals = promoted, _leaf_avals(promoted)
    traced = _trace_loop(cond_fun, body_fun, in_tree, avals)
  cond_closed, cond_consts, cond_tree, body_closed, body_consts, body_tree = traced
  out_avals = cond_closed.out_avals
  if cond_tree.num_leaves != 1:
    raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
  if out_avals[0].shape != () or out_avals[0].dtype != np.dtype(bool):
    raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                    f"{list(out_avals)}.")
  loop_checks.check_carry_structure("while_loop body", name, in_tree, avals, body_tree,
                                    body_closed.out_avals)
  loop_checks.check_carry_types("while_loop body", name, in_tree, avals, body_closed.out_avals)
  outs = while_p.bind(*cond_consts, *body_consts, *leaves, cond_jaxpr=cond_closed,
                      body_jaxpr=body_closed, cond_nconsts=len(cond_consts),
                      body_nconsts=len(body_consts))
  return tree_util.tree_unflatten(in_tree, outs)


def _concrete_int(x):
  """``int(x)`` if ``x`` is a known value, else None."""
  if isinstance(x, core.Tracer):
    x = x.to_concrete_value()
    if x is None:
      return None
  try:
    return int(x)
  except (TypeError, ValueError):
    return None


def _bounds_dtype(lower, upper):
  lower_dtype, upper_dtype = dtypes.dtype(lower, canonicalize=True), dtypes.dtype(upper, canonicalize=True)
  if lower_dtype == upper_dtype:
    return lower_dtype
  if dtypes.is_signed_int(lower_dtype) and dtypes.is_signed_int(upper_dtype):
    lower_weak, upper_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
    if lower_weak and not upper_weak:
      return upper_dtype
    if upper_weak and not lower_weak:
      return lower_dtype
  raise TypeError("lower and upper arguments to fori_loop must have equal types, "
                  f"got {lower_dtype.name} and {upper_dtype.name}")


def _scan_or_none():
  try:
    from purejax._src.lax.control_flow.scan import scan
  except ImportError:   # scan not there yet: loop with while instead
    return None
  return scan


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
  """``for i in range(lower, upper): val = body_fun(i, val)``.

  With known bounds it is a ``scan`` (so reverse mode works); with traced
  bounds a ``while_loop``.
  """
  if not callable(body_fun):
    raise TypeError("lax.fori_loop: body_fun argument should be callable.")
  dtype = _bounds_dtype(lower, upper)
  lower_, upper_ = _concrete_int(lower), _concrete_int(upper)
  scan = _scan_or_none()
  if lower_ is not None and upper_ is not None and scan is not None:
    def scan_body(loop_carry, _):   # JAX's messages call the carry loop_carry
      i, x = loop_carry
      return (i + 1, body_fun(i, x)), None
    (_, result), _ = scan(scan_body, (lower_, init_val), None,
                          length=max(upper_ - lower_, 0),
                          unroll=False if unroll is None else unroll)
    return result
  if unroll is not None and unroll is not False and unroll != 1 and (
      lower_ is None or upper_ is None):
    raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are "
                     "statically known.")
  from purejax import lax
  if dtypes.dtype(lower, canonicalize=True) != dtype:
    lower = lax.convert_element_type(lower, dtype)
  if dtypes.dtype(upper, canonicalize=True) != dtype:
    upper = lax.convert_element_type(upper, dtype)

  def cond(loop_carry):
    return loop_carry[0] < loop_carry[1]

  def body(loop_carry):
    i, stop, x = loop_carry
    return (i + 1, stop, body_fun(i, x))

  _, _, result = while_loop(cond, body, (lower, upper, init_val))
  return result
