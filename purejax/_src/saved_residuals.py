"""``print_saved_residuals``: what reverse-mode differentiation of a function
keeps from its forward pass, and where each kept value comes from.

The function ``vjp`` returns has its residuals as pytree leaves, so tracing
``vjp(f, *args)[1]``'s leaves gives a jaxpr whose outputs are the residuals;
each is traced back to an argument, a constant, or the equation computing it.
"""
import inspect

from purejax._src import core
from purejax._src import tree_util
from purejax._src.checkpoint_names import name_p
from purejax._src.interpreters import partial_eval as pe
from purejax._src.jaxpr import Literal
from purejax._src.tree_keys import keystr


def saved_residuals(f, *args, **kwargs):
  """A list of ``(aval, description)``, one per residual."""
  from purejax._src.ad_api import vjp
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))

  def residuals_of(*flat):
    a, kw = tree_util.tree_unflatten(in_tree, flat)
    return tree_util.tree_leaves(vjp(lambda *a: f(*a, **kw), *a)[1])

  jaxpr, _ = pe.trace_to_jaxpr(residuals_of, [core.get_aval(x) for x in leaves])
  arg_index = {v: i for i, v in enumerate(jaxpr.invars)}
  names = _argument_names(f, args, kwargs)
  found = [(v.aval, _origin(jaxpr, v, arg_index, names)) for v in jaxpr.outvars]
  # As JAX lists them: literals, constants, arguments, then computed values,
  # each group in program order.
  found.sort(key=lambda item: item[1][0])
  return [(aval, text) for aval, (_, text) in found]


def print_saved_residuals(f, *args, **kwargs):
  for aval, text in saved_residuals(f, *args, **kwargs):
    print(f"{aval.str_short(short_dtypes=True)} {text}")


def _origin(jaxpr, var, arg_index, names, position=()):
  """(sort key, description) of ``var`` in ``jaxpr``; ``position`` is where
  ``jaxpr`` sits in the outer one (a checkpoint's body)."""
  if type(var) is Literal:
    return (0,), "from a literal"
  if var in jaxpr.constvars:
    return (1, jaxpr.constvars.index(var)), "from a constant"
  if var in arg_index:
    i = arg_index[var]
    return (2, i), f"from the argument {names[i]}"
  index, eqn = next((i, e) for i, e in enumerate(jaxpr.eqns) if var in e.outvars)
  key = (3, *position, index)
  where = f" from {eqn.source_info}" if eqn.source_info is not None else ""
  if eqn.primitive is name_p:
    return key, f"named '{eqn.params['name']}'{where}"
  if eqn.primitive.name == "remat2":   # look inside, as JAX inlines it
    inner = eqn.params["jaxpr"].jaxpr
    inner_var = inner.outvars[eqn.outvars.index(var)]
    if inner_var in inner.invars:
      outer = eqn.invars[inner.invars.index(inner_var)]
      return _origin(jaxpr, outer, arg_index, names, position)
    return _origin(inner, inner_var, {}, names, (*position, index))
  if eqn.primitive.name == "jit":
    return key, f"output of jitted function '{eqn.params['name']}'{where}"
  return key, f"output of {eqn.primitive.name}{where}"


def _argument_names(f, args, kwargs):
  """The name of each flattened argument leaf, as ``p['w']`` or ``a[0]``."""
  try:
    params = list(inspect.signature(f).parameters.values())
  except (TypeError, ValueError):
    params = []
  positional = [p.name for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  var_positional = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
  names = []
  for i, arg in enumerate(args):
    if i < len(positional):
      base, prefix = positional[i], ""
    elif var_positional is not None:
      base, prefix = var_positional, f"[{i - len(positional)}]"
    else:
      base, prefix = "args", f"[{i}]"
    for path, _ in tree_util.tree_flatten_with_path(arg)[0]:
      names.append(base + prefix + keystr(path))
  for path, _ in tree_util.tree_flatten_with_path(kwargs)[0]:
    names.append(keystr(path[:1], simple=True) + keystr(path[1:]))
  return names
