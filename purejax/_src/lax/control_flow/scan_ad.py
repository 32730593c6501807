"""Reverse-mode rules of ``scan_p``: partial evaluation and transposition.

Partial evaluation splits the body (jaxpr surgery, no re-tracing) into a
known scan, run now, and an unknown scan, staged.  Each iteration's
residuals become extra stacked outputs of the known scan and extra xs of
the unknown one; residuals that are loop-invariant known consts are passed
as consts instead.  Transposition runs the linear scan backwards: the
cotangents of linear consts accumulate in the carry, those of linear xs
come out as ys.
"""
from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, Var
from purejax._src.lax.control_flow.scan import _split, _stacked, scan_bind, scan_p
from purejax._src.pjit import trace_closed


class _Split:
  """How one scan splits: the two bodies and where each operand goes."""

  def __init__(self, jaxpr, num_consts, num_carry, in_known, saveable):
    body = jaxpr.jaxpr
    carry_known = in_known[num_consts:num_consts + num_carry]
    while True:   # fixed point: a carry is known if its init and its update are
      ins = in_known[:num_consts] + carry_known + in_known[num_consts + num_carry:]
      known, unknown, out_known, num_res = pe.partial_eval_jaxpr(body, ins, saveable)
      new = [a and b for a, b in zip(carry_known, out_known[:num_carry])]
      if new == carry_known:
        break
      carry_known = new
    self.in_known = ins
    self.carry_known = carry_known
    # Known outputs that must be unknown (carries made unknown) are passed to
    # the unknown side per iteration, like residuals.
    forced = [k and not ck for k, ck in zip(out_known[:num_carry], carry_known)]
    forced += [False] * (len(out_known) - num_carry)
    self.out_known = [k and not f for k, f in zip(out_known, forced)]
    n_known_out = sum(out_known)
    known_outs = known.outvars[:n_known_out]
    residuals = known.outvars[n_known_out:]
    res_binders = unknown.invars[:num_res]
    # Residuals that are known consts of the body stay consts; those that are
    # known xs are passed as the same xs: neither is restacked.
    n_front = num_consts + num_carry
    const_vars = {v: i for i, (v, k) in enumerate(zip(body.invars[:num_consts], ins)) if k}
    xs_vars = {v: i for i, (v, k) in enumerate(zip(body.invars[n_front:], ins[n_front:])) if k}
    self.const_res = [const_vars[v] for v in residuals if v in const_vars]
    self.xs_res = [xs_vars[v] for v in residuals if v in xs_vars]
    forwarded = set(const_vars) | set(xs_vars)
    kept_outs = [v for v, f in zip(known_outs, [f for f, k in zip(forced, out_known) if k])
                 if not f]
    forced_vals = [v for v, f in zip(body.outvars, forced) if f]
    stacked_res = [v for v in residuals if v not in forwarded]
    self.known = ClosedJaxpr(Jaxpr([], known.invars, kept_outs + stacked_res + forced_vals,
                                   known.eqns), [])
    # Map body const var -> residual binder of the unknown body.
    binder = dict(zip(residuals, res_binders))
    forced_binders = [Var(v.aval) for v in forced_vals]
    u_consts, u_carry, u_xs = _split(unknown.invars[num_res:],
                                     num_consts - sum(ins[:num_consts]),
                                     num_carry - sum(carry_known))
    const_binders = [binder[v] for v in residuals if v in const_vars]
    xs_binders = [binder[v] for v in residuals if v in xs_vars]
    stacked_binders = [binder[v] for v in stacked_res]
    forced_iter = iter(forced_binders)
    unknown_outs, u_iter = [], iter(unknown.outvars)
    for k, f in zip(out_known, forced):
      if f:
        unknown_outs.append(next(forced_iter))
      elif not k:
        unknown_outs.append(next(u_iter))
    self.unknown = ClosedJaxpr(Jaxpr(
        [], const_binders + u_consts + u_carry + u_xs + xs_binders + stacked_binders
        + forced_binders,
        unknown_outs, unknown.eqns), [])
    self.num_known_consts = sum(ins[:num_consts])
    self.num_known_carry = sum(carry_known)
    self.num_stacked = len(stacked_res) + len(forced_vals)
    self.num_unknown_consts = len(const_binders) + len(u_consts)


def _scan_partial_eval(trace, args, params):
  num_consts, num_carry = params["num_consts"], params["num_carry"]
  length, reverse, unroll = params["length"], params["reverse"], params["unroll"]
  in_known = [trace.is_known(x) for x in args]
  s = _Split(params["jaxpr"], num_consts, num_carry, in_known, pe._always_saveable)
  known_args = [x for x, k in zip(args, s.in_known) if k]
  kc, kcarry, kxs = _split(known_args, s.num_known_consts, s.num_known_carry)
  with core.set_current_trace(trace.parent):
    known_outs = scan_bind(kc, kcarry, kxs, jaxpr=s.known, length=length,
                           reverse=reverse, unroll=unroll)
  stacked = known_outs[len(known_outs) - s.num_stacked:]
  known_outs = known_outs[:len(known_outs) - s.num_stacked]
  consts, carry, xs = _split(list(args), num_consts, num_carry)
  unknown_args = ([consts[i] for i in s.const_res]
                  + [x for x, k in zip(consts, s.in_known[:num_consts]) if not k]
                  + [x for x, k in zip(carry, s.carry_known) if not k]
                  + [x for x, k in zip(xs, s.in_known[num_consts + num_carry:]) if not k]
                  + [xs[i] for i in s.xs_res] + stacked)
  unknown_outs = pe.DynamicJaxprTrace.process_primitive(
      trace, scan_p, unknown_args,
      dict(params, jaxpr=s.unknown, num_consts=s.num_unknown_consts,
           num_carry=num_carry - s.num_known_carry))
  k_iter, u_iter = iter(known_outs), iter(unknown_outs)
  return [next(k_iter) if k else next(u_iter) for k in s.out_known]


def _scan_partial_eval_jaxpr(eqn, ins_known, saveable):
  """Splits a scan equation inside a jaxpr being partially evaluated."""
  p = eqn.params
  num_consts, num_carry = p["num_consts"], p["num_carry"]
  s = _Split(p["jaxpr"], num_consts, num_carry, list(ins_known), saveable)
  length = p["length"]
  stacked = [Var(_stacked(a, length)) for a in
             s.known.out_avals[len(s.known.out_avals) - s.num_stacked:]]
  known_outvars = [v for v, k in zip(eqn.outvars, s.out_known) if k]
  known_eqn = eqn.replace(
      invars=[v for v, k in zip(eqn.invars, s.in_known) if k],
      outvars=known_outvars + stacked,
      params=dict(p, jaxpr=s.known, num_consts=s.num_known_consts,
                  num_carry=s.num_known_carry))
  consts, carry, xs = _split(list(eqn.invars), num_consts, num_carry)
  unknown_in = ([consts[i] for i in s.const_res]
                + [v for v, k in zip(consts, s.in_known[:num_consts]) if not k]
                + [v for v, k in zip(carry, s.carry_known) if not k]
                + [v for v, k in zip(xs, s.in_known[num_consts + num_carry:]) if not k]
                + [xs[i] for i in s.xs_res] + stacked)
  unknown_eqn = eqn.replace(
      invars=unknown_in, outvars=[v for v, k in zip(eqn.outvars, s.out_known) if not k],
      params=dict(p, jaxpr=s.unknown, num_consts=s.num_unknown_consts,
                  num_carry=num_carry - s.num_known_carry))
  return known_eqn, unknown_eqn


scan_p.partial_eval = _scan_partial_eval
scan_p.partial_eval_jaxpr = _scan_partial_eval_jaxpr


# -- transposition ----------------------------------------------------------------

def _scan_transpose(cts, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  consts, carry, xs = _split(list(args), num_consts, num_carry)
  body = jaxpr.jaxpr
  c_lin = [ad.is_undefined_primal(x) for x in consts]
  x_lin = [ad.is_undefined_primal(x) for x in xs]
  b_consts, b_carry, b_xs = _split(body.invars, num_consts, num_carry)
  res_vars = ([v for v, l in zip(b_consts, c_lin) if not l]
              + [v for v, l in zip(b_xs, x_lin) if not l])
  lin_vars = ([v for v, l in zip(b_consts, c_lin) if l] + b_carry
              + [v for v, l in zip(b_xs, x_lin) if l])
  linear = Jaxpr(res_vars, lin_vars, body.outvars, body.eqns)
  n_res_c = num_consts - sum(c_lin)
  n_lin_c = sum(c_lin)
  out_avals = jaxpr.out_avals
  ct_avals = [ad.tangent_aval(v.aval) for v in lin_vars]

  def body_t(*args):
    # consts: residual consts; carry: (const cts so far, carry cts);
    # xs: (y cts, residual xs).
    res_c, acc, ct_carry, rest = _split(list(args), n_res_c, n_lin_c, num_carry)
    ct_ys, res_x = rest[:len(out_avals) - num_carry], rest[len(out_avals) - num_carry:]
    cts_in = ad.backward_pass(linear, res_c + res_x, ct_carry + ct_ys)
    cts_in = [ad.instantiate(ct) if type(ct) is ad.Zero else ct for ct in cts_in]
    ct_c, ct_init, ct_x = _split(cts_in, n_lin_c, num_carry)
    acc = [ad.add_tangents(a, c) for a, c in zip(acc, ct_c)]
    return acc + ct_init + ct_x

  res_avals = [v.aval for v in res_vars]
  avals = (res_avals[:n_res_c] + ct_avals[:n_lin_c]
           + [ad.tangent_aval(a) for a in out_avals[:num_carry]]
           + [ad.tangent_aval(a) for a in out_avals[num_carry:]] + res_avals[n_res_c:])
  closed, body_consts = trace_closed(body_t, avals)
  cts = [ad.instantiate(ct) for ct in cts]
  acc0 = [ad.zeros_like_aval(a) for a in ct_avals[:n_lin_c]]
  res_c = [x for x, l in zip(consts, c_lin) if not l]
  res_x = [x for x, l in zip(xs, x_lin) if not l]
  outs = scan_bind(list(body_consts) + res_c, acc0 + cts[:num_carry],
                   cts[num_carry:] + res_x, jaxpr=closed, length=length,
                   reverse=not reverse, unroll=unroll)
  ct_consts, ct_init, ct_xs = _split(outs, n_lin_c, num_carry)
  c_iter, x_iter = iter(ct_consts), iter(ct_xs)
  return ([next(c_iter) if l else None for l in c_lin] + ct_init
          + [next(x_iter) if l else None for l in x_lin])


scan_p.transpose = _scan_transpose
