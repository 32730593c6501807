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
  others' (as JAX's multi-branch primitives do).  A value closed over by
  several sub-jaxprs is passed once."""
  all_consts, slot_of = [], {}
  for _, consts in jaxprs_and_consts:
    for c in consts:
      if id(c) not in slot_of:
        slot_of[id(c)] = len(all_consts)
        all_consts.append(c)
  out = []
  for closed, consts in jaxprs_and_consts:
    inner = closed.jaxpr
    n = len(consts)
    own = {slot_of[id(c)]: v for c, v in zip(consts, inner.invars[:n])}
    lead = [own[i] if i in own else _fresh(c) for i, c in enumerate(all_consts)]
    joined = Jaxpr([], lead + inner.invars[n:], inner.outvars, inner.eqns)
    out.append(ClosedJaxpr(joined, []))
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


# ---------------------------------------------------------------------------
# JAX's error messages for branches whose outputs disagree.

def describe_fun(f):
  """``name at file:line``, as JAX names a user function in errors."""
  while hasattr(f, "func") and not hasattr(f, "__code__"):   # functools.partial
    f = f.func
  name = getattr(f, "__name__", type(f).__name__)
  code = getattr(f, "__code__", None)
  if code is None:
    return name
  return f"{name} at {code.co_filename}:{code.co_firstlineno}"


def _node(x):
  """(type, children, metadata) of a pytree node, or None for a leaf."""
  try:
    children, meta = tree_util.flatten_one_level(x)
  except ValueError:
    return None
  if tree_util.treedef_is_strict_leaf(tree_util.tree_structure(x)):
    return None
  return type(x), list(children), meta


def _plural(n):
  return f"{n} child" if n == 1 else f"{n} children"


def _tree_diff(a, b, name_a, name_b, path=()):
  """Why two pytrees differ in structure (the first difference), or None."""
  na, nb = _node(a), _node(b)
  at = f" at path {tree_util.keystr(path)}" if path else ""
  what_a, what_b = f"{name_a} output{at} is a", f"{name_b} output{at} is a"
  if na is None and nb is None:
    return None
  if na is None or nb is None or na[0] is not nb[0]:
    ta = "pytree leaf" if na is None else str(na[0])
    tb = "pytree leaf" if nb is None else str(nb[0])
    return f"{what_a} {ta} but {what_b} {tb}, so their Python types differ."
  ty = na[0]
  if len(na[1]) != len(nb[1]):
    text = (f"{what_a} {ty} with {_plural(len(na[1]))} but {what_b} {ty} with "
            f"{_plural(len(nb[1]))}, so the numbers of children do not match")
    if isinstance(a, dict):
      text += f", with the symmetric difference of key sets: {set(a) ^ set(b)}"
    return text + "."
  if na[2] != nb[2]:
    ma, mb = (tuple(na[2]), tuple(nb[2])) if isinstance(a, dict) else (na[2], nb[2])
    return (f"{what_a} {ty} with pytree metadata {ma} but {what_b} {ty} with "
            f"pytree metadata {mb}, so the pytree node metadata does not match.")
  pairs, _ = tree_util.flatten_one_level_with_keys(a)
  for (key, ca), cb in zip(pairs, nb[1]):
    found = _tree_diff(ca, cb, name_a, name_b, path + (key,))
    if found:
      return found
  return None


def check_branch_trees(what, name_a, fun_a, tree_a, name_b, fun_b, tree_b):
  """JAX's TypeError when two branches' output pytrees differ in structure."""
  if tree_a == tree_b:
    return
  skel_a = tree_util.tree_unflatten(tree_a, [0] * tree_a.num_leaves)
  skel_b = tree_util.tree_unflatten(tree_b, [0] * tree_b.num_leaves)
  diff = (_tree_diff(skel_a, skel_b, name_a, name_b)
          or f"{name_a} output structure {tree_a} differs from {name_b}'s {tree_b}.")
  raise TypeError(
      f"{what} outputs must have the same pytree structure, but they differ:\n\n"
      f"{name_a} is {describe_fun(fun_a)}\n{name_b} is {describe_fun(fun_b)}\n\n"
      f"{diff}\n\nRevise {name_a} and/or {name_b} so that they have the same "
      "pytree structure.")


def check_branch_types(what, name_a, fun_a, name_b, fun_b, tree, avals_a, avals_b):
  """JAX's TypeError when two branches' outputs differ in shape or dtype
  (weak types may differ)."""
  paths = [p for p, _ in tree_util.tree_flatten_with_path(
      tree_util.tree_unflatten(tree, [0] * tree.num_leaves))[0]]
  problems = []
  for path, a, b in zip(paths, avals_a, avals_b):
    kinds = [k for k, bad in (("shapes", a.shape != b.shape), ("dtypes", a.dtype != b.dtype)) if bad]
    if kinds:
      at = f" at path {tree_util.keystr(path)}" if path else ""
      problems.append(
          f"the output of {name_a}{at} has type {a.str_short()} but the corresponding "
          f"output of {name_b} has type {b.str_short()}, so the {' and '.join(kinds)} "
          "do not match")
  if not problems:
    return
  if len(problems) == 1:
    body = problems[0][0].upper() + problems[0][1:] + "."
  else:
    body = ";\n".join(f"  * {p}" for p in problems) + "."
  raise TypeError(
      f"{what} must have equal output types but they differ.\n\n"
      f"{name_a} is {describe_fun(fun_a)}\n{name_b} is {describe_fun(fun_b)}\n\n"
      f"{body}\n\nRevise {name_a} and/or {name_b} so that all output types match.")
