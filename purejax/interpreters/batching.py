"""``jax.interpreters.batching``: vmap rules of primitives, JAX's way.

``primitive_batchers[p] = rule`` sets ``p.batch``: a JAX batching rule is
``rule(vals, dims, **params) -> (out, out_dims)``, with ``not_mapped``
(None) for an unbatched value; purejax's rules also get the axis size
first, so the table adapts the one to the other in both directions.
"""
from purejax._src import core as _core
from purejax._src.interpreters.batching import (  # noqa: F401
    bdim_at_front, broadcast, elementwise_batch_rule as _elementwise_batch_rule,
    moveaxis, not_mapped)
from purejax._src.rule_tables import RuleTable as _RuleTable


def _from_jax(primitive, rule):
  def batch(axis_size, vals, dims, **params):
    return rule(vals, dims, **params)
  batch.jax_rule = rule
  return batch


def _axis_size(vals, dims):
  for v, d in zip(vals, dims):
    if d is not not_mapped:
      return _core.get_aval(v).shape[d]
  raise ValueError("a batching rule was called with no batched operand")


def _to_jax(primitive, batch):
  own = getattr(batch, "jax_rule", None)
  if own is not None:
    return own
  if getattr(batch, "needs_trace", False):   # a rule of purejax's that wants its BatchTrace
    return None

  def rule(vals, dims, **params):
    return batch(_axis_size(vals, dims), vals, dims, **params)
  return rule


class _BatcherTable(_RuleTable):
  def _rule(self, primitive):
    rule = super()._rule(primitive)
    if rule is None and getattr(primitive, "elementwise", False):
      rule = _to_jax(primitive, _elementwise_batch_rule(primitive))
    return rule


primitive_batchers = _BatcherTable("batch", _from_jax, _to_jax)


def defvectorized(primitive):
  """A primitive that acts on each element along any leading batch axis
  (its operands batched along the same axis)."""
  def rule(vals, dims, **params):
    dim = next(d for d in dims if d is not not_mapped)
    if any(d != dim for d in dims):
      raise ValueError(f"{primitive.name}: defvectorized needs all operands batched "
                       f"along one axis, got {dims}")
    return primitive.bind(*vals, **params), dim
  primitive_batchers[primitive] = rule


def defbroadcasting(primitive):
  """An elementwise primitive whose operands broadcast against each other."""
  primitive.batch = _elementwise_batch_rule(primitive)


def _from_jax_axis(primitive, rule):
  def batch(trace, vals, dims, **params):
    return rule(trace.axis_size, trace.axis_name, None, vals, dims, **params)
  batch.needs_trace = True   # (given the BatchTrace, for the axis name)
  batch.jax_axis_rule = rule
  return batch


# ``axis_primitive_batchers[p] = rule``: JAX's older table, which JAX still
# takes: ``rule(axis_size, axis_name, trace_type, vals, dims, **params) ->
# (out, out_dims)`` (``trace_type`` is None, as in JAX now); it lists the
# primitives whose rule was given this way.
axis_primitive_batchers = _RuleTable(
    "batch", _from_jax_axis, lambda primitive, batch: getattr(batch, "jax_axis_rule", None))
