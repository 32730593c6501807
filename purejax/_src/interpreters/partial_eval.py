"""Staging: tracing a Python function into a jaxpr (what jit and make_jaxpr do).

``DynamicJaxprTrace`` records every primitive applied to its tracers as an
equation.  Values it did not create are constants to it: concrete scalars
become literals, anything else (arrays, or tracers of an enclosing trace)
becomes a constvar whose value travels with the jaxpr.
"""
from purejax._src import core
from purejax._src import jaxpr_check
from purejax._src import jaxpr_printer
from purejax._src import source_info
from purejax._src.config import config
from purejax._src.jaxpr import Jaxpr, JaxprEqn, Literal, Var, literal_value, without_compiled_away


class DebugInfo:
  """What error messages say about the function being traced."""
  __slots__ = ("func_location", "arg_names", "traced_for")

  def __init__(self, func_location, arg_names, traced_for="jit"):
    self.func_location = func_location
    self.arg_names = arg_names
    self.traced_for = traced_for


class DynamicJaxprTracer(core.Tracer):
  __slots__ = ("aval", "jaxpr_var")
  _tracer_name = "JitTracer"

  def __init__(self, trace, aval, var):
    self._trace = trace
    self.aval = aval
    self.jaxpr_var = var


def _is_inner_trace(trace, outer):
  while trace is not None:
    if trace is outer:
      return True
    trace = trace.parent
  return False


class DynamicJaxprTrace(core.Trace):

  def __init__(self, parent, debug_info=None):
    super().__init__(parent)
    self.debug_info = debug_info
    self.invars = []
    self.eqns = []
    self.producers = {}        # Var -> the equation that made it
    self.constvars = []
    self.const_values = []
    # id(value) -> (value, tracer), so a const is lifted once; holding the
    # value keeps its id from being reused by another object while we trace.
    self._const_tracers = {}

  def new_arg(self, aval):
    var = Var(aval)
    self.invars.append(var)
    return DynamicJaxprTracer(self, aval, var)

  def to_tracer(self, x):
    if isinstance(x, DynamicJaxprTracer) and x._trace is self:
      return x
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    hit = self._const_tracers.get(id(x))
    if hit is not None:
      return hit[1]
    lit = literal_value(x)
    if lit is not None:
      tracer = DynamicJaxprTracer(self, lit.aval, lit)
    else:
      if isinstance(x, core.Tracer) and _is_inner_trace(x._trace, self):
        # A tracer of a transformation running inside this one (e.g. closed
        # over by a custom rule run in its parent) can't be a constant here.
        raise core.escaped_tracer_error(x)
      var = Var(core.get_aval(x))
      self.constvars.append(var)
      self.const_values.append(x)
      tracer = DynamicJaxprTracer(self, var.aval, var)
    self._const_tracers[id(x)] = (x, tracer)
    return tracer

  def process_primitive(self, primitive, args, params):
    fold = getattr(primitive, "const_fold", None)
    if fold is not None:
      out = fold(*args, **params)
      if out is not None:
        return out
    tracers = [self.to_tracer(x) for x in args]
    avals = tuple(t.aval for t in tracers)
    out_avals = primitive.typed_abstract_eval(avals, params)
    multiple = primitive.multiple_results
    outvars = [Var(a) for a in (out_avals if multiple else [out_avals])]
    eqn = JaxprEqn([t.jaxpr_var for t in tracers], outvars, primitive, params,
                   source_info.current_source_info())
    self.eqns.append(eqn)
    for v in outvars:
      self.producers[v] = eqn
    outs = [DynamicJaxprTracer(self, v.aval, v) for v in outvars]
    return outs if multiple else outs[0]

  def to_jaxpr(self, out_values):
    """The jaxpr computing ``out_values``, and its constants' values."""
    outvars = [self.to_tracer(x).jaxpr_var for x in out_values]
    jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
    return jaxpr, list(self.const_values)

  # -- error messages --------------------------------------------------------

  def describe_dependence(self, tracer):
    info = self.debug_info
    if info is None or not isinstance(tracer, DynamicJaxprTracer) or tracer._trace is not self:
      return ""
    head = (f"\nThe error occurred while tracing the function {info.func_location} "
            f"for {info.traced_for}.")
    arg_positions, eqns = self._dependence(tracer.jaxpr_var)
    if arg_positions:
      names = [info.arg_names[i] if i < len(info.arg_names) else f"args[{i}]"
               for i in arg_positions]
      if len(names) == 1:
        what = f"the value of the argument {names[0]}"
      else:
        what = f"the values of the arguments {', '.join(names[:-1])} and {names[-1]}"
      return (f"{head} This concrete value was not available in Python because "
              f"it depends on {what}.")
    if not eqns:
      return head
    lines = [f"  operation {jaxpr_printer.eqn_to_string(e)}\n    from line {e.source_info}"
             for e in eqns]
    return (f"{head} This value became a tracer due to JAX operations on these "
            "lines:\n\n" + "\n\n".join(lines))

  def _dependence(self, var):
    """The argument positions ``var`` depends on, and the equations on the way."""
    invar_index = {v: i for i, v in enumerate(self.invars)}
    positions, seen, eqns, stack = set(), set(), [], [var]
    while stack:
      v = stack.pop()
      if v in seen or not isinstance(v, Var):
        continue
      seen.add(v)
      if v in invar_index:
        positions.add(invar_index[v])
      eqn = self.producers.get(v)
      if eqn is not None and eqn not in eqns:
        eqns.append(eqn)
        stack.extend(eqn.invars)
    order = {id(e): i for i, e in enumerate(self.eqns)}
    eqns.sort(key=lambda e: order[id(e)])
    return sorted(positions), eqns


class PartialEvalTrace(DynamicJaxprTrace):
  """Splits a computation into a known part, computed now (in the parent
  trace), and an unknown part, staged into a jaxpr.

  Its own tracers are the unknowns.  A primitive applied only to known
  values is forwarded to the parent; one that touches an unknown is staged,
  and the known values it uses become constvars: the residuals.
  """

  def process_primitive(self, primitive, args, params):
    if not any(isinstance(x, DynamicJaxprTracer) and x._trace is self for x in args):
      with core.set_current_trace(self.parent):
        return primitive.bind(*args, **params)
    rule = getattr(primitive, "partial_eval", None)
    if rule is not None:
      return rule(self, args, params)
    return super().process_primitive(primitive, args, params)

  def is_known(self, x):
    return not (isinstance(x, DynamicJaxprTracer) and x._trace is self)


def trace_to_jaxpr(fun, in_avals, debug_info=None):
  """Traces ``fun(*flat_args) -> flat_outs`` on abstract inputs.

  Returns ``(jaxpr, consts)``: the constvars' values may include tracers of
  enclosing traces (values the function closed over).
  """
  parent = core.current_trace()
  trace = DynamicJaxprTrace(parent, debug_info)
  args = [trace.new_arg(a) for a in in_avals]
  try:
    with core.set_current_trace(trace):
      outs = fun(*args)
    jaxpr, consts = trace.to_jaxpr(outs)
  finally:
    trace.invalidate()
  if config.jax_enable_checks:
    jaxpr_check.check_jaxpr(jaxpr)
  return jaxpr, consts


def convert_constvars_jaxpr(jaxpr):
  """Turns constvars into leading invars (closure conversion)."""
  return Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns)


# ---------------------------------------------------------------------------
# Splitting a jaxpr into known and unknown parts (for call primitives under
# linearize): jaxpr surgery, no re-tracing.

def _always_saveable(eqn):
  return True


def partial_eval_jaxpr(jaxpr, in_known, saveable=_always_saveable):
  """Splits ``jaxpr`` (no constvars) given which inputs are known.

  Returns ``(known_jaxpr, unknown_jaxpr, out_known, num_residuals)``:
  ``known_jaxpr`` maps the known inputs to the known outputs followed by the
  residuals; ``unknown_jaxpr`` maps residuals then unknown inputs to the
  unknown outputs.  A known equation whose output the unknown side needs is
  saved as a residual if ``saveable(eqn)``, else recomputed on the unknown
  side from what it needs (that is what ``checkpoint`` does).
  """
  known = {v for v, k in zip(jaxpr.invars, in_known) if k}
  is_known = lambda v: type(v) is Literal or v in known
  known_eqns, unknown_eqns = [], []
  # A split may forward a known output from one of its inputs: later uses
  # of that output read the input instead.
  renamed = {}
  for eqn in jaxpr.eqns:
    if renamed:
      eqn = eqn.replace(invars=[renamed.get(v, v) if type(v) is not Literal else v
                                for v in eqn.invars])
    ins_known = [is_known(v) for v in eqn.invars]
    if all(ins_known):
      known_eqns.append(eqn)
      known.update(eqn.outvars)
      continue
    split = getattr(eqn.primitive, "partial_eval_jaxpr", None)
    if split is not None and any(ins_known):
      known_eqn, unknown_eqn, *fwd = split(eqn, ins_known, saveable)
      if fwd:
        renamed.update(fwd[0])
      known_eqns.append(known_eqn)
      known.update(known_eqn.outvars)
      unknown_eqns.append(unknown_eqn)
    else:
      unknown_eqns.append(eqn)
  if renamed:
    jaxpr = Jaxpr(jaxpr.constvars, jaxpr.invars,
                  [renamed.get(v, v) if type(v) is not Literal else v for v in jaxpr.outvars],
                  jaxpr.eqns)
  out_known = [is_known(v) for v in jaxpr.outvars]

  # What the unknown side reads from the known side: saved, or recomputed.
  needed = [v for e in unknown_eqns for v in e.invars if type(v) is not Literal and v in known]
  needed += [v for v, k in zip(jaxpr.outvars, out_known) if not k]
  needed_set = set(needed)
  recompute = []
  for eqn in reversed(known_eqns):
    if not saveable(eqn) and any(v in needed_set for v in eqn.outvars):
      recompute.append(eqn)
      for v in eqn.invars:
        if type(v) is not Literal and v not in needed_set:
          needed_set.add(v)
          needed.append(v)
  recompute.reverse()
  produced = {v for e in recompute for v in e.outvars}
  residuals = _unique(v for v in needed if v in known and v not in produced)

  known_in = [v for v, k in zip(jaxpr.invars, in_known) if k]
  unknown_in = [v for v, k in zip(jaxpr.invars, in_known) if not k]
  known_jaxpr = Jaxpr([], known_in,
                      [v for v, k in zip(jaxpr.outvars, out_known) if k] + residuals,
                      known_eqns)
  # Fresh residual binders keep each jaxpr's variables its own.
  fresh = {v: Var(v.aval) for v in residuals}
  unknown_jaxpr = _substitute(
      Jaxpr([], residuals + unknown_in,
            [v for v, k in zip(jaxpr.outvars, out_known) if not k],
            recompute + unknown_eqns), fresh)
  return known_jaxpr, unknown_jaxpr, out_known, len(residuals)


def _unique(vs):
  seen, out = set(), []
  for v in vs:
    if v not in seen:
      seen.add(v)
      out.append(v)
  return out


def _substitute(jaxpr, mapping):
  sub = lambda v: mapping.get(v, v) if type(v) is not Literal else v
  eqns = [e.replace(invars=[sub(v) for v in e.invars]) for e in jaxpr.eqns]
  return Jaxpr([], [sub(v) for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars], eqns)


# ---------------------------------------------------------------------------
# Effects: a primitive with ``effectful = True`` (debug callbacks, io_callback)
# must run even when nothing uses its outputs, so code that skips binding an
# equation or a sub-jaxpr whose results are unused asks this first.

def jaxpr_has_effects(jaxpr):
  """Whether ``jaxpr`` (or a jaxpr in its equations' params) has an
  effectful equation."""
  inner = getattr(jaxpr, "jaxpr", jaxpr)
  for eqn in inner.eqns:
    if getattr(eqn.primitive, "effectful", False):
      return True
    for value in eqn.params.values():
      for sub in value if isinstance(value, (tuple, list)) else (value,):
        if hasattr(getattr(sub, "jaxpr", sub), "eqns") and jaxpr_has_effects(sub):
          return True
  return False


def dce_jaxpr(jaxpr):
  """``jaxpr`` without the equations whose results nothing uses and that
  have no effect (JAX's dead-code elimination before running a jit): an
  unused ``pure_callback`` is not called; debug callbacks and
  ``io_callback`` stay; what only a transformation gives meaning to
  (``compiled_away``: checkify's ``debug_check``) goes, at any depth.
  Returns ``jaxpr`` itself when nothing is dropped."""
  jaxpr = without_compiled_away(jaxpr)
  used = {v for v in jaxpr.outvars if type(v) is not Literal}
  kept = []
  for eqn in reversed(jaxpr.eqns):
    if (any(v in used for v in eqn.outvars) or getattr(eqn.primitive, "effectful", False)
        or _params_have_effects(eqn)):
      kept.append(eqn)
      used.update(v for v in eqn.invars if type(v) is not Literal)
  if len(kept) == len(jaxpr.eqns):
    return jaxpr
  return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept[::-1])


def dce_with_rules(jaxpr):
  """``jaxpr`` (all outputs used) without its dead equations, where a
  primitive with a ``dce(used_outputs, eqn)`` rule (a call) is pruned by it
  to the outputs that are used and the inputs those need; also which of
  ``jaxpr``'s invars are used.  Returns ``jaxpr`` itself when nothing
  changes."""
  used = {v for v in jaxpr.outvars if type(v) is not Literal}
  kept, changed = [], False
  for eqn in reversed(jaxpr.eqns):
    used_outs = [v in used for v in eqn.outvars]
    effectful = eqn_has_effects(eqn)
    if not any(used_outs) and not effectful:
      changed = True
      continue
    rule = getattr(eqn.primitive, "dce", None)
    if rule is not None:
      new_eqn = rule(used_outs, eqn)
      changed = changed or new_eqn is not eqn
      eqn = new_eqn
    kept.append(eqn)
    used.update(v for v in eqn.invars if type(v) is not Literal)
  used_invars = [v in used for v in jaxpr.invars]
  if changed:
    jaxpr = Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept[::-1])
  return jaxpr, used_invars


def eqn_has_effects(eqn):
  """Whether ``eqn`` is effectful or has an effectful equation in a jaxpr
  among its params."""
  return getattr(eqn.primitive, "effectful", False) or _params_have_effects(eqn)


def _params_have_effects(eqn):
  for value in eqn.params.values():
    for sub in value if isinstance(value, (tuple, list)) else (value,):
      if hasattr(getattr(sub, "jaxpr", sub), "eqns") and jaxpr_has_effects(sub):
        return True
  return False
