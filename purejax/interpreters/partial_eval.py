"""``jax.interpreters.partial_eval``: tracing with some inputs known.

``PartialVal`` is a ``(aval, value)`` pair: known (``aval`` None, a concrete
value) or unknown (an abstract value).  ``trace_to_jaxpr_nounits`` traces a
``linear_util`` function on such inputs and tells which outputs are known:
those that do not depend on an unknown input are computed and returned as
values (flax evaluates shapes this way)."""
from purejax._src import core
from purejax._src.interpreters.partial_eval import trace_to_jaxpr
from purejax._src.jaxpr import Jaxpr, Literal, eval_jaxpr, sub_jaxprs


class PartialVal(tuple):
  """``(aval, const)``: ``aval`` is None when the value is known."""

  def __new__(cls, xs):
    pv, const = xs
    return tuple.__new__(cls, (pv, const))

  @classmethod
  def known(cls, const):
    return PartialVal((None, const))

  @classmethod
  def unknown(cls, aval):
    return PartialVal((aval, None))

  def is_known(self):
    return self[0] is None

  def get_known(self):
    return self[1] if self[0] is None else None

  def get_aval(self):
    return core.get_aval(self[1]) if self[0] is None else self[0]


def _depends_on_inputs(jaxpr):
  """The variables of ``jaxpr`` computed from its inputs (conservatively: an
  equation with a sub-jaxpr depends on all its operands)."""
  dependent = set(jaxpr.invars)
  for eqn in jaxpr.eqns:
    if any(type(v) is not Literal and v in dependent for v in eqn.invars) or (
        not eqn.invars and list(sub_jaxprs(eqn.params))):
      dependent.update(eqn.outvars)
  return dependent


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
  """``(jaxpr, out_pvals, consts)`` for ``fun`` (a ``WrappedFun``) on
  ``pvals``: the jaxpr takes the unknown inputs; an output independent of
  them is known (its value in ``out_pvals``) unless ``instantiate``."""
  unknown = [i for i, pv in enumerate(pvals) if not pv.is_known()]

  def on_unknowns(*args):
    full = [pv.get_known() for pv in pvals]
    for i, a in zip(unknown, args):
      full[i] = a
    return fun.call_wrapped(*full)

  jaxpr, consts = trace_to_jaxpr(on_unknowns, [pvals[i][0] for i in unknown])
  dependent = _depends_on_inputs(jaxpr)
  known_out = [not instantiate and (type(v) is Literal or v not in dependent)
               for v in jaxpr.outvars]
  values = iter(())
  if any(known_out):
    # Known outputs read no input: the equations computing them run alone
    # (no stand-in inputs, which a key-typed input could not have).
    independent = [e for e in jaxpr.eqns if not any(v in dependent for v in e.outvars)]
    known_vars = [v for v, k in zip(jaxpr.outvars, known_out) if k]
    values = iter(eval_jaxpr(Jaxpr(jaxpr.constvars, [], known_vars, independent), consts))
  out_pvals = [PartialVal.known(next(values)) if k else PartialVal.unknown(v.aval)
               for k, v in zip(known_out, jaxpr.outvars)]
  return jaxpr, out_pvals, consts
