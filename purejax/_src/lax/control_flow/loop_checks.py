"""Checking a loop body's carry: JAX's TypeErrors when the output carry's
pytree structure or types differ from the input carry's, and the promotion
of weakly typed initial carries (``while_loop(c, b, 0)`` with a float body
carries a float).
"""
import inspect

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util


def carry_arg_name(fun, index=0):
  """What JAX calls the carry in messages: the name of ``fun``'s parameter."""
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    return f"args[{index}]"
  positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  if index < len(positional):
    return positional[index].name
  var = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
  return var if var is not None else f"args[{index}]"


def _is_node(x):
  return not isinstance(x, core.ShapedArray) and tree_util.default_registry.flatten_one_level(x) is not None


def _single_node(x):
  leaf = lambda y: isinstance(y, core.ShapedArray)
  return tree_util.tree_structure(x, is_leaf=leaf).num_nodes == 1


def _children(x):
  """(key string, child) pairs of a pytree node."""
  kids, _ = tree_util.default_registry.flatten_one_level_with_keys(x)
  return [(tree_util.keystr((k,)), c) for k, c in kids]


def _node_metadata(x):
  return tree_util.tree_structure(x, is_leaf=lambda y: y is not x).node_data()[1]


def _structure_diffs(a, b, path):
  """Where two trees of avals differ in structure: (path, why) pairs."""
  if _single_node(a) and _single_node(b):   # leaves, None, empty containers
    return []
  if type(a) is not type(b):
    return [(path, f"is a {type(a)} but the corresponding component of the carry "
                   f"output is a {type(b)}, so their Python types differ")]
  if isinstance(a, (tuple, list)) and len(a) != len(b):
    name = type(a).__name__
    return [(path, f"is a {name} of length {len(a)} but the corresponding component of "
                   f"the carry output is a {name} of length {len(b)}, so the lengths do "
                   "not match")]
  meta_a, meta_b = _node_metadata(a), _node_metadata(b)
  if meta_a != meta_b:
    return [(path, f"is a {type(a)} with pytree metadata {_meta_text(meta_a)} but the "
                   f"corresponding component of the carry output is a {type(b)} with "
                   f"pytree metadata {_meta_text(meta_b)}, so the pytree node metadata "
                   "does not match")]
  out = []
  for (key, x), (_, y) in zip(_children(a), _children(b)):
    out += _structure_diffs(x, y, path + key)
  return out


def _meta_text(meta):
  return str(tuple(meta)) if isinstance(meta, list) else str(meta)


def _join(diffs, name, say_component):
  """JAX's one-error sentence, or its bulleted list for several."""
  def subject(path, capital):
    the = "The" if capital else "the"
    comp = " component" if path or say_component else ""
    return f"{the} input carry{comp} {name}{path}"
  if len(diffs) == 1:
    path, why = diffs[0]
    return f"{subject(path, True)} {why}."
  return "\n".join(f"  * {subject(path, False)} {why}{';' if i < len(diffs) - 1 else '.'}"
                   for i, (path, why) in enumerate(diffs))


def check_carry_structure(what, name, in_tree, in_avals, out_tree, out_avals):
  if in_tree == out_tree:
    return
  head = (f"{what} function carry input and carry output must have the same pytree "
          "structure, but they differ:\n\n")
  tail = ("\n\nRevise the function so that the carry output has the same pytree "
          "structure as the carry input.")
  a = tree_util.tree_unflatten(in_tree, list(in_avals))
  b = tree_util.tree_unflatten(out_tree, list(out_avals))
  diffs = _structure_diffs(a, b, "")
  if not diffs:
    raise TypeError(head + f"the input tree structure is:\n{in_tree}\nthe output tree "
                    f"structure is:\n{out_tree}" + tail)
  raise TypeError(head + _join(diffs, name, False) + tail)


def check_carry_types(what, name, in_tree, in_avals, out_avals):
  """Shapes and dtypes must agree; weak types may differ."""
  paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(
      tree_util.tree_unflatten(in_tree, list(in_avals)),
      is_leaf=lambda x: isinstance(x, core.ShapedArray))[0]]
  diffs = []
  for path, a, b in zip(paths, in_avals, out_avals):
    why = []
    if a.dtype != b.dtype:
      why.append("the dtypes do not match")
    if a.shape != b.shape:
      why.append("the shapes do not match")
    if why:
      diffs.append((path, f"has type {a.str_short()} but the corresponding output carry "
                          f"component has type {b.str_short()}, so {', and '.join(why)}"))
  if diffs:
    raise TypeError(
        f"{what} function carry input and carry output must have equal types, but they "
        "differ:\n\n" + _join(diffs, name, False) +
        "\n\nRevise the function so that all output types match the corresponding "
        "input types.")


def promote_weak_carries(leaves, in_avals, out_avals):
  """Converts weakly typed initial carries whose dtype the body changes to the
  promoted dtype.  Returns the new leaves, or None if nothing changed."""
  from purejax import lax
  changed = False
  leaves = list(leaves)
  for i, (a, b) in enumerate(zip(in_avals, out_avals)):
    if a.weak_type and (a.dtype != b.dtype or a.shape != b.shape):
      new_dtype = dtypes.result_type(leaves[i], b)
      if new_dtype != a.dtype:
        leaves[i] = lax.convert_element_type(leaves[i], new_dtype)
        changed = True
  return leaves if changed else None
