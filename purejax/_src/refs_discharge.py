"""Discharging refs: a jaxpr with ref effects as a pure jaxpr.

Each ref input becomes a value input and its final value an extra output;
refs made inside become local boxes.  A call (``jit``) or a ``scan`` given
boxes at a trace where they are plain values runs its discharged form on the
boxes' values and writes the final values back into the boxes, in place.
"""
import weakref

from purejax._src import core
from purejax._src import refs
from purejax._src.jaxpr import ClosedJaxpr, Literal


def jaxpr_has_refs(jaxpr):
  jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
  if any(isinstance(v.aval, refs.AbstractRef) for v in jaxpr.invars + jaxpr.constvars):
    return True
  for eqn in jaxpr.eqns:
    if eqn.primitive in _REF_PRIMS:
      return True
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else (value,):
        if isinstance(sub, ClosedJaxpr) or hasattr(sub, "eqns"):
          if jaxpr_has_refs(sub):
            return True
  return False


_REF_PRIMS = (refs.new_ref_p, refs.get_p, refs.swap_p, refs.addupdate_p, refs.freeze_p)


def _eval_discharged(jaxpr, consts, args):
  """Runs ``jaxpr`` at the current trace, refs as boxes of this trace."""
  env = {}
  read = lambda v: v.val if type(v) is Literal else env[v]
  trace = core.current_trace()
  for v, x in zip(jaxpr.constvars, consts):
    env[v] = x
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  for eqn in jaxpr.eqns:
    ins = [read(v) for v in eqn.invars]
    p = eqn.primitive
    if p is refs.new_ref_p:
      outs = [refs.Ref(ins[0], trace)]
    elif p is refs.freeze_p:
      outs = [ins[0]._value]
    elif p in (refs.get_p, refs.swap_p, refs.addupdate_p):
      box, rest = ins[0], ins[1:]
      value = None if p is refs.get_p else rest[0]
      operands = rest if p is refs.get_p else rest[1:]
      out = refs._apply(p, box, eqn.params["spec"], operands, value)
      outs = out if p.multiple_results else [out]
    else:
      out = p.bind(*ins, **eqn.params)
      outs = out if p.multiple_results else [out]
    for v, x in zip(eqn.outvars, outs):
      env[v] = x
  return [read(v) for v in jaxpr.outvars]


_discharged = weakref.WeakKeyDictionary()


def discharge(closed):
  """``(pure ClosedJaxpr, leading const values)``: inputs as ``closed``'s
  (a ref input by its value), outputs ``closed``'s then the ref inputs'
  final values."""
  hit = _discharged.get(closed)
  if hit is not None:
    return hit
  jaxpr = closed.jaxpr
  is_ref = [isinstance(v.aval, refs.AbstractRef) for v in jaxpr.invars]
  in_avals = [v.aval.inner_aval if r else v.aval for v, r in zip(jaxpr.invars, is_ref)]

  def fun(*vals):
    trace = core.current_trace()
    _discharge_traces.add(trace)
    args = [refs.Ref(x, trace) if r else x for x, r in zip(vals, is_ref)]
    outs = _eval_discharged(jaxpr, closed.consts, args)
    for o in outs:
      if refs._is_ref(o):
        raise ValueError("mutable array references cannot be returned")
    return outs + [a._value for a, r in zip(args, is_ref) if r]

  from purejax._src.pjit import trace_closed
  hit = _discharged[closed] = trace_closed(fun, in_avals)
  return hit


def _boxes_are_values(args):
  """True when the refs among ``args`` are plain boxes at the current trace
  (and none is a staged ref)."""
  ref_args = [a for a in args if refs._is_ref(a)]
  return all(isinstance(a, refs.Ref) and refs._staging_between(a) is None
             for a in ref_args)


_discharge_traces = weakref.WeakSet()


def _should_discharge(args, jaxpr):
  """Discharge where the refs passed are plain boxes here, or where refs
  made inside would otherwise reach a backend or a transformation."""
  if any(refs._is_ref(a) for a in args):
    return _boxes_are_values(args)
  trace = core.current_trace()
  return ((not refs.is_staging(trace) or trace in _discharge_traces)
          and jaxpr_has_refs(jaxpr))


def _write_back(ref_args, finals):
  from purejax._src.interpreters import ad
  for box, value in zip(ref_args, finals):
    # A value no longer differentiated by a JVP inside the box's level: its primal.
    while (isinstance(value, ad.JVPTracer) and isinstance(value.tangent, ad.Zero)
           and refs._foreign(value, box)):
      value = value.primal
    refs._check_value(box, value, None)
    box._value = value


# -- jit ---------------------------------------------------------------------------

def install_call(pjit_p):
  plain_bind = pjit_p.bind

  def bind(*args, jaxpr, **params):
    if _should_discharge(args, jaxpr):
      if jaxpr.consts:   # JAX's printed form: hoist its consts first
        from purejax._src.pjit import open_consts, hoist_consts
        opened, consts = open_consts(jaxpr.jaxpr, jaxpr.consts)
        jaxpr, args = hoist_consts(opened), (*consts, *args)
      pure, consts = discharge(jaxpr)
      ref_args = [a for a in args if refs._is_ref(a)]
      vals = [a._value if refs._is_ref(a) else a for a in args]
      outs = plain_bind(*consts, *vals, jaxpr=pure, **params)
      n = len(outs) - len(ref_args)
      _write_back(ref_args, outs[n:])
      return outs[:n]
    return plain_bind(*args, jaxpr=jaxpr, **params)

  pjit_p.bind = bind


_has_refs = weakref.WeakKeyDictionary()


def uses_refs(closed):
  """Whether a traced jit's jaxpr takes, makes or closes over refs (cached)."""
  hit = _has_refs.get(closed)
  if hit is None:
    hit = _has_refs[closed] = jaxpr_has_refs(closed)
  return hit


def check_no_ref_outputs(fun, traced_for, in_leaves, in_tracers, out_leaves, arg_names):
  """JAX's errors: a traced function may neither return a ref nor take one
  ref twice."""
  from purejax._src import source_info
  seen = {}
  for i, x in enumerate(in_leaves):
    if refs._is_ref(x):
      if id(x) in seen:
        names = arg_names()
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a "
            f"function, but when tracing {source_info.function_location(fun)} for "
            f"{traced_for} the mutable array reference of type {x.aval.str_short()} "
            f"appeared at both {names[seen[id(x)]]} and {names[i]}.")
      seen[id(x)] = i
  seen = {id(t): i for i, t in enumerate(in_tracers)}
  for out in out_leaves:
    if refs._is_ref(out):
      if id(out) in seen:
        where = f"was passed in as the argument {arg_names()[seen[id(out)]]}."
      else:
        where = "was created inside the function."
      raise ValueError(
          f"function {source_info.function_location(fun)} traced for {traced_for} returned "
          f"a mutable array reference of type {out.aval.str_short()}, but mutable array "
          f"references cannot be returned.\n\nThe returned mutable array {where}")


def install():
  from purejax._src.pjit import pjit_p
  from purejax._src import refs_discharge_control
  install_call(pjit_p)
  refs_discharge_control.install()
