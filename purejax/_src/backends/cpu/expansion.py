"""Primitives the C code computes as their expansion into other primitives.

A primitive with a ``c_expansion`` attribute (a function of its operands
built from lax operations, returning what the primitive returns) has no C
expression of its own: before fusion planning, each of its equations is
replaced by the equations of that function traced on the equation's avals,
so that it fuses into the surrounding loops like any elementwise chain
(``threefry2x32``: about a hundred uint32 adds, shifts and xors).  A
``c_expansion_applies(eqn)`` attribute limits it to some equations
(``dot_general`` on 16-bit floats: a float32 product, rounded).  An
equation whose operands C cannot hold (a dtype without a C type, an empty
array) is kept as it is, and runs as a host step.
"""
from purejax._src import core
from purejax._src.backends.cpu import codegen_ops
from purejax._src.jaxpr import DropVar, Jaxpr, Literal, Var

_templates = {}   # (primitive, avals, params) -> traced Jaxpr (or None)


def _expandable(eqn):
  if getattr(eqn.primitive, "c_expansion", None) is None:
    return False
  applies = getattr(eqn.primitive, "c_expansion_applies", None)   # only some equations
  if applies is not None and not applies(eqn):
    return False
  for v in list(eqn.invars) + list(eqn.outvars):
    aval = v.aval
    if not hasattr(aval, "shape") or not codegen_ops.dtype_supported(aval.dtype):
      return False
    if any(d == 0 for d in aval.shape):
      return False
  return True


def template(eqn, rule=None):
  """The traced expansion of ``eqn`` on its operands' avals: ``rule(*args,
  **params)``, by default the primitive's ``c_expansion``."""
  rule = rule or eqn.primitive.c_expansion
  avals = tuple(v.aval for v in eqn.invars)
  try:
    key = (eqn.primitive, rule, avals, tuple(sorted(eqn.params.items())))
    hash(key)
  except TypeError:
    key = None
  if key is not None and key in _templates:
    return _templates[key]
  from purejax._src.interpreters import partial_eval as pe
  prim, params = eqn.primitive, eqn.params

  def fun(*args):
    outs = rule(*args, **params)
    return list(outs) if prim.multiple_results else [outs]

  with core.eval_context():
    jaxpr, consts = pe.trace_to_jaxpr(fun, list(avals))
  out_avals = [v.aval for v in jaxpr.outvars]
  ok = not consts and not jaxpr.constvars and all(
      (a.shape, a.dtype) == (v.aval.shape, v.aval.dtype) for a, v in zip(out_avals, eqn.outvars))
  result = jaxpr if ok and len(out_avals) == len(eqn.outvars) else None
  if key is not None:
    _templates[key] = result
  return result


def expand(jaxpr):
  """``jaxpr`` with every expandable equation replaced by its expansion's
  equations (with fresh variables)."""
  return rewrite(jaxpr, lambda e: template(e) if _expandable(e) else None)


def rewrite(jaxpr, template_of):
  """``jaxpr`` with each equation ``e`` for which ``template_of(e)`` gives a
  jaxpr (of ``e``'s operands and results) replaced by that jaxpr's
  equations, with fresh variables."""
  templates = [template_of(e) for e in jaxpr.eqns]
  if all(t is None for t in templates):
    return jaxpr
  env = {}   # a replaced equation's outvars -> the template's results

  def read(v):
    return v if type(v) is Literal else env.get(v, v)

  eqns = []
  for e, inner in zip(jaxpr.eqns, templates):
    invars = [read(v) for v in e.invars]
    if inner is None:
      eqns.append(e.replace(invars=invars) if invars != list(e.invars) else e)
      continue
    sub = dict(zip(inner.invars, invars))
    for ie in inner.eqns:
      outs = [(DropVar if type(v) is DropVar else Var)(v.aval) for v in ie.outvars]
      sub.update(zip(ie.outvars, outs))
      eqns.append(ie.replace(invars=[v if type(v) is Literal else sub[v] for v in ie.invars],
                             outvars=outs))
    for outer, result in zip(e.outvars, inner.outvars):
      if type(outer) is not DropVar:
        env[outer] = result if type(result) is Literal else sub[result]
  return Jaxpr(jaxpr.constvars, jaxpr.invars, [read(v) for v in jaxpr.outvars], eqns)
