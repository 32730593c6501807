"""``jax.interpreters.ad``: differentiation rules of primitives, JAX's way.

``primitive_jvps[p] = rule`` sets ``p.jvp`` and ``primitive_transposes[p] =
rule`` sets ``p.transpose`` (``purejax/_src/rule_tables.py``): the rules
live on the primitive, as purejax's own do, with the same signatures as
JAX's: jvp ``rule(primals, tangents, **params) -> (primal_out,
tangent_out)``, transpose ``rule(ct, *args, **params)`` with the linear
inputs as ``UndefinedPrimal``.  Tangents and cotangents may be symbolic
``Zero``.
"""
from purejax._src.interpreters.ad import (  # noqa: F401
    JVPTrace, JVPTracer, UndefinedPrimal, Zero, add_tangents, defjvp, is_undefined_primal,
    zeros_like_aval)
from purejax._src.interpreters.ad import add_any_p as add_jaxvals_p
from purejax._src.interpreters.ad import deflinear as _deflinear_with_args
from purejax._src.interpreters.ad import instantiate as instantiate_zeros
from purejax._src.rule_tables import RuleTable as _RuleTable

primitive_jvps = _RuleTable("jvp")
primitive_transposes = _RuleTable("transpose")


def add_jaxvals(x, y):
  return add_jaxvals_p.bind(x, y)


def get_primitive_transpose(p):
  rule = p.transpose
  if rule is None:
    raise NotImplementedError(
        f"Transpose rule (for reverse-mode differentiation) for '{p.name}' not implemented")
  return rule


def defjvp2(primitive, *jvp_rules):
  """Like ``defjvp``, but each rule also gets the primal output:
  ``rule(g, ans, *primals, **params)``."""
  def rule(primals, tangents, **params):
    ans = primitive.bind(*primals, **params)
    total = Zero.from_primal_value(ans)
    for jvp_rule, g in zip(jvp_rules, tangents):
      if jvp_rule is not None and type(g) is not Zero:
        total = add_tangents(total, jvp_rule(g, ans, *primals, **params))
    return ans, total
  primitive.jvp = rule
  return rule


def deflinear2(primitive, transpose_rule):
  """A primitive linear in all its inputs; ``transpose_rule(ct, *args,
  **params)`` gives the cotangent of each input."""
  def transpose(ct, *args, **params):
    if type(ct) is Zero:
      return [Zero(x.aval) if is_undefined_primal(x) else None for x in args]
    return transpose_rule(ct, *args, **params)
  return _deflinear_with_args(primitive, transpose)


def deflinear(primitive, transpose_rule):
  """A primitive linear in all its inputs; ``transpose_rule(ct, **params)``
  gives the cotangent of each input (it does not see the inputs)."""
  return deflinear2(primitive, lambda ct, *args, **params: transpose_rule(ct, **params))


def defbilinear(primitive, lhs_rule, rhs_rule):
  """A primitive linear in each of its two inputs separately (a product):
  ``lhs_rule(ct, x, y, **params)`` is the cotangent of ``x`` when ``x`` is
  the linear input, ``rhs_rule`` that of ``y``."""
  defjvp(primitive,
         lambda g, x, y, **params: primitive.bind(g, y, **params),
         lambda g, x, y, **params: primitive.bind(x, g, **params))

  def transpose(ct, x, y, **params):
    if is_undefined_primal(x) == is_undefined_primal(y):
      raise ValueError(f"{primitive.name} is transposed in exactly one of its operands")
    if is_undefined_primal(x):
      return (Zero(x.aval) if type(ct) is Zero else lhs_rule(ct, x, y, **params)), None
    return None, (Zero(y.aval) if type(ct) is Zero else rhs_rule(ct, x, y, **params))

  primitive.transpose = transpose
  primitive.is_linear = True
