"""Discharging refs through ``scan``, ``while`` and ``cond``.

A loop or branch given ref boxes at a trace where they are plain values runs
a pure form of itself: the refs' values become extra loop carries (or extra
branch operands and outputs), and the final values are written back into the
boxes, in place.  Elsewhere (inside a staging trace) the refs stay operands of
the staged equation, discharged later with the jaxpr that holds it.
"""
from purejax._src import core
from purejax._src import refs
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.refs_discharge import _should_discharge, _write_back, discharge


def _ref_positions(args, lo, hi):
  return [i for i in range(lo, hi) if refs._is_ref(args[i])]


def _reject_ref_carries(args, lo, what):
  if any(refs._is_ref(a) for a in args[lo:]):
    raise TypeError(f"a {what}'s carry or scanned-over inputs can't be mutable array "
                    "references; close over them instead")


def _consts_with_values(n, ref_pos, plain, ref_vals):
  """The ``n`` const operands, plain ones and refs' values in their places."""
  full, plain, ref_vals = [None] * n, iter(plain), dict(zip(ref_pos, ref_vals))
  for i in range(n):
    full[i] = ref_vals[i] if i in ref_vals else next(plain)
  return full


def _writes_refs(closed):
  return any(e.primitive in (refs.swap_p, refs.addupdate_p) for e in closed.jaxpr.eqns)


# -- scan --------------------------------------------------------------------------

def install_scan(scan_p):
  plain_bind = scan_p.bind

  def bind(*args, jaxpr, num_consts, num_carry, **params):
    if not _should_discharge(args, jaxpr):
      return plain_bind(*args, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry,
                        **params)
    _reject_ref_carries(args, num_consts, "scan")
    ref_pos = _ref_positions(args, 0, num_consts)
    pure, extra = discharge(jaxpr)
    # pure takes (extra, consts, carry, xs) and gives (carry, ys, ref finals);
    # the new body takes (extra, plain consts, ref values, carry, xs) and gives
    # (ref finals, carry, ys): the refs' values are leading carries.
    plain_idx = [i for i in range(num_consts) if i not in ref_pos]
    n_refs, n_extra, n_plain = len(ref_pos), len(extra), len(plain_idx)
    n_ys = len(jaxpr.out_avals) - num_carry

    def body(*vals):
      e, pc = vals[:n_extra], vals[n_extra:n_extra + n_plain]
      rv = vals[n_extra + n_plain:n_extra + n_plain + n_refs]
      rest = vals[n_extra + n_plain + n_refs:]
      outs = eval_jaxpr(pure.jaxpr, pure.consts, *e,
                        *_consts_with_values(num_consts, ref_pos, pc, rv), *rest)
      c, ys, finals = (outs[:num_carry], outs[num_carry:num_carry + n_ys],
                       outs[num_carry + n_ys:])
      return list(finals) + list(c) + list(ys)

    avals = pure.in_avals
    in_avals = (avals[:n_extra] + [avals[n_extra + i] for i in plain_idx]
                + [avals[n_extra + i] for i in ref_pos] + avals[n_extra + num_consts:])
    from purejax._src.pjit import trace_closed
    new_jaxpr, new_consts = trace_closed(body, in_avals)
    boxes = [args[i] for i in ref_pos]
    outs = plain_bind(*new_consts, *extra, *[args[i] for i in plain_idx],
                      *[b._value for b in boxes], *args[num_consts:], jaxpr=new_jaxpr,
                      num_consts=len(new_consts) + n_extra + n_plain,
                      num_carry=n_refs + num_carry, **params)
    _write_back(boxes, outs[:n_refs])
    return outs[n_refs:]

  scan_p.bind = bind


# -- while -------------------------------------------------------------------------

def install_while(while_p):
  plain_bind = while_p.bind

  def bind(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=cond_nconsts,
                  body_nconsts=body_nconsts)
    n_consts = cond_nconsts + body_nconsts
    if not (_should_discharge(args, cond_jaxpr) and _should_discharge(args, body_jaxpr)):
      return plain_bind(*args, **params)
    _reject_ref_carries(args, n_consts, "while_loop")
    if _writes_refs(cond_jaxpr):
      raise ValueError("a while_loop's cond_fun can't write to mutable array references")
    cond_pos = _ref_positions(args, 0, cond_nconsts)
    body_pos = [i - cond_nconsts for i in _ref_positions(args, cond_nconsts, n_consts)]
    boxes = []                 # each ref once, though both functions may use it
    for a in [args[i] for i in cond_pos] + [args[cond_nconsts + i] for i in body_pos]:
      if not any(a is b for b in boxes):
        boxes.append(a)
    slot = lambda box: next(k for k, b in enumerate(boxes) if b is box)
    cond_slots = [slot(args[i]) for i in cond_pos]
    body_slots = [slot(args[cond_nconsts + i]) for i in body_pos]
    carry = list(args[n_consts:])
    carry_avals = [core.get_aval(b._value) for b in boxes] + [core.get_aval(c) for c in carry]
    n_boxes = len(boxes)

    def lifted(closed, nconsts, pos, slots, is_body):
      pure, extra = discharge(closed)
      plain_avals = [a for i, a in enumerate(closed.in_avals[:nconsts]) if i not in pos]

      def fun(*vals):
        e, pc = vals[:len(extra)], vals[len(extra):len(extra) + len(plain_avals)]
        box_vals = vals[len(extra) + len(plain_avals):][:n_boxes]
        rest = vals[len(extra) + len(plain_avals) + n_boxes:]
        consts = _consts_with_values(nconsts, pos, pc, [box_vals[k] for k in slots])
        outs = eval_jaxpr(pure.jaxpr, pure.consts, *e, *consts, *rest)
        if not is_body:
          return outs[:1]
        n_out = len(outs) - len(pos)
        finals = list(box_vals)
        for k, v in zip(slots, outs[n_out:]):
          finals[k] = v
        return finals + list(outs[:n_out])

      from purejax._src.pjit import trace_closed
      extra_avals = [core.get_aval(x) for x in extra]
      new, new_consts = trace_closed(fun, extra_avals + plain_avals + carry_avals)
      plain = [args[(cond_nconsts if is_body else 0) + i] for i in range(nconsts)
               if i not in pos]
      return new, [*new_consts, *extra, *plain]

    new_cond, cond_ops = lifted(cond_jaxpr, cond_nconsts, cond_pos, cond_slots, False)
    new_body, body_ops = lifted(body_jaxpr, body_nconsts, body_pos, body_slots, True)
    outs = plain_bind(*cond_ops, *body_ops, *[b._value for b in boxes], *carry,
                      cond_jaxpr=new_cond, body_jaxpr=new_body,
                      cond_nconsts=len(cond_ops), body_nconsts=len(body_ops))
    _write_back(boxes, outs[:n_boxes])
    return outs[n_boxes:]

  while_p.bind = bind


# -- cond --------------------------------------------------------------------------

def install_cond(cond_p):
  plain_bind = cond_p.bind

  def bind(index, *ops, branches):
    if not any(_should_discharge(ops, b) for b in branches):
      return plain_bind(index, *ops, branches=branches)
    if not all(_should_discharge(ops, b) for b in branches):
      return plain_bind(index, *ops, branches=branches)
    ref_pos = _ref_positions(ops, 0, len(ops))
    boxes = [ops[i] for i in ref_pos]
    vals = [b._value if refs._is_ref(b) else b for b in ops]
    val_avals = [core.get_aval(v) for v in vals]
    from purejax._src.pjit import trace_closed
    from purejax._src.lax.control_flow.common import join_consts
    lifted = []
    for branch in branches:
      pure, extra = discharge(branch)
      # each branch gives its outputs then every ref's final value
      fun = (lambda pure, extra: lambda *xs: eval_jaxpr(pure.jaxpr, pure.consts, *extra,
                                                        *xs))(pure, extra)
      lifted.append(trace_closed(fun, val_avals))
    joined, consts = join_consts(lifted)
    outs = plain_bind(index, *consts, *vals, branches=tuple(joined))
    n_out = len(outs) - len(boxes)
    _write_back(boxes, outs[n_out:])
    return outs[:n_out]

  cond_p.bind = bind


def install():
  from purejax._src.lax.control_flow.scan import scan_p
  from purejax._src.lax.control_flow.loops import while_p
  from purejax._src.lax.control_flow.cond import cond_p
  install_scan(scan_p)
  install_while(while_p)
  install_cond(cond_p)
