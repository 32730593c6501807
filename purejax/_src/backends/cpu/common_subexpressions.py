"""Equations computed twice become one (common subexpression elimination).

JAX programs repeat work that XLA merges: ``mean`` and ``sum`` of one array
are two ``reduce_sum`` equations, ``logsumexp`` takes a ``reduce_max`` that
``max`` also takes, and the backward pass recomputes broadcasts.  Before
fusion planning, an equation with the same primitive, operands and
parameters as an earlier one reuses that one's results, so a fused kernel
reads its input once for both.  Equations with effects are kept as they are.
"""
import numpy as np

from purejax._src.jaxpr import DropVar, Jaxpr, Literal, Var


def eliminate(jaxpr):
  """``jaxpr`` with each repeated effect-free equation dropped and its
  results read from the first one's."""
  seen, rename, eqns = {}, {}, []
  for e in jaxpr.eqns:
    invars = [rename.get(v, v) if type(v) is Var else v for v in e.invars]
    if any(a is not b for a, b in zip(invars, e.invars)):
      e = e.replace(invars=invars)
    key = _key(e)
    first = seen.get(key) if key is not None else None
    if first is not None:
      rename.update(zip(e.outvars, first))
      continue
    if key is not None and not any(type(v) is DropVar for v in e.outvars):
      seen[key] = e.outvars
    eqns.append(e)
  if len(eqns) == len(jaxpr.eqns):
    return jaxpr
  outvars = [rename.get(v, v) if type(v) is Var else v for v in jaxpr.outvars]
  return Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns)


def _key(eqn):
  """What makes two equations compute the same values, or None when that
  cannot be told (effects, parameters that do not hash)."""
  from purejax._src.interpreters.partial_eval import eqn_has_effects
  if eqn_has_effects(eqn):
    return None
  operands = []
  for v in eqn.invars:
    if type(v) is Literal:
      value = np.asarray(v.val)
      operands.append(("literal", str(value.dtype), value.tobytes(),
                       str(getattr(v.aval, "dtype", ""))))
    else:
      operands.append(v)
  try:
    key = (eqn.primitive, tuple(operands), tuple(sorted(eqn.params.items())))
    hash(key)
  except TypeError:
    return None
  return key

