"""Shared by the control-flow primitives: tracing user functions of pytrees
to closed sub-jaxprs, and checking that branches or loop carries agree.

A sub-jaxpr is traced once (not per iteration).  Its constants become
leading operands of the primitive (closure conversion), so that a value
closed over from an enclosing trace flows in as an ordinary operand.
"""
from purejax._src import core
from purejax._src import tree_util
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr
from purejax._src.pjit import trace_closed


def trace_fun(fun, in_tree, in_avals, what):
  """Traces ``fun(*tree_unflatten(in_tree, args))``.

  Returns ``(closed_jaxpr, consts, out_tree)``: the jaxpr takes the consts
  first, then the flat inputs.
  """
  box = []

  def flat_fun(*flat):
    out = fun(*tree_util.tree_unflatten(in_tree, flat))
    leaves, out_tree = tree_util.tree_flatten(out)
    box.append(out_tree)
    for leaf in leaves:
      if not core.is_array_like(leaf):
        raise TypeError(f"{what} output must be a pytree of arrays, got {type(leaf)}")
    return leaves

  closed, consts = trace_closed(flat_fun, list(in_avals))
  return closed, consts, box[0]


def flat_avals(tree_leaves):
  return [core.get_aval(x) for x in tree_leaves]


def join_consts(jaxprs_and_consts):
  """Gives several sub-jaxprs (each taking its own consts first) one shared
  list of leading const operands: each jaxpr takes all of them, ignoring the
  others' (as JAX's multi-branch primitives do)."""
  all_consts = [c for _, consts in jaxprs_and_consts for c in consts]
  out, offset = [], 0
  for closed, consts in jaxprs_and_consts:
    inner = closed.jaxpr
    n = len(consts)
    before = [_fresh(c) for c in all_consts[:offset]]
    after = [_fresh(c) for c in all_consts[offset + n:]]
    joined = Jaxpr([], before + inner.invars[:n] + after + inner.invars[n:],
                   inner.outvars, inner.eqns)
    out.append(ClosedJaxpr(joined, []))
    offset += n
  return out, all_consts


def _fresh(value):
  from purejax._src.jaxpr import Var
  return Var(core.get_aval(value))


def _describe(aval):
  return aval.str_short()


def check_same_types(what, name_a, tree_a, avals_a, name_b, tree_b, avals_b):
  """Raises JAX's TypeError when two output trees differ in structure or in
  shape/dtype (weak types are allowed to differ; see ``join_weak_types``)."""
  if tree_a != tree_b:
    raise TypeError(f"{what} must have identical types, got\n{name_a} output "
                    f"structure {tree_a}\n{name_b} output structure {tree_b}.")
  for a, b in zip(avals_a, avals_b):
    if a.shape != b.shape or a.dtype != b.dtype:
      raise TypeError(f"{what} must have identical types, got\n"
                      f"{tree_util.tree_unflatten(tree_a, [_describe(x) for x in avals_a])}\n"
                      f"{tree_util.tree_unflatten(tree_b, [_describe(x) for x in avals_b])}.")
