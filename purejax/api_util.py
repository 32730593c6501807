"""``jax.api_util``: helpers for writing transformations on
``linear_util.WrappedFun`` (numpyro's provenance tracking uses them):
flattening a function's pytree inputs and outputs, its ``DebugInfo``, and
the abstract value of an argument."""
import inspect
from typing import NamedTuple

from purejax._src import core
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.linear_util import transformation_with_aux2


def _flat_call(f, store, in_tree, *flat_args):
  args, kwargs = tree_util.tree_unflatten(in_tree, flat_args)
  out_leaves, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
  store.store(out_tree)
  return out_leaves


def _flat_call_nokwargs(f, store, in_tree, *flat_args):
  out_leaves, out_tree = tree_util.tree_flatten(f(*tree_util.tree_unflatten(in_tree, flat_args)))
  store.store(out_tree)
  return out_leaves


def flatten_fun(f, in_tree):
  """``f`` (a WrappedFun of ``*args, **kwargs``) on the flat leaves of
  ``(args, kwargs)`` (structure ``in_tree``), returning its output's leaves;
  and a thunk giving the output's treedef once called."""
  return transformation_with_aux2(_flat_call)(f, in_tree)


def flatten_fun_nokwargs(f, in_tree):
  """As ``flatten_fun``, ``in_tree`` being the structure of ``args`` alone."""
  return transformation_with_aux2(_flat_call_nokwargs)(f, in_tree)


class DebugInfo(NamedTuple):
  """What a traced function's errors and jaxprs name: ``traced_for`` (e.g.
  "jit"), where the function is defined, its flat arguments' names, and
  (once known) its flat results' paths."""
  traced_for: str
  func_src_info: str
  arg_names: tuple
  result_paths: tuple = None

  @property
  def func_name(self):
    return self.func_src_info.split(" ")[0]


def _arg_names(fun, args, kwargs):
  try:
    bound = inspect.signature(fun).bind(*args, **kwargs)
  except (TypeError, ValueError):
    return None
  names = []
  for name, value in bound.arguments.items():
    paths, _ = tree_util.tree_flatten_with_path(value)
    names += [name + tree_util.keystr(p) for p, _ in paths]
  return tuple(names)


def debug_info(traced_for, fun, args, kwargs, *, static_argnums=(), static_argnames=(),
               result_paths_thunk=None, sourceinfo=None, signature=None):
  """The ``DebugInfo`` of tracing ``fun`` on ``args``/``kwargs`` for
  ``traced_for``; ``result_paths`` stays None until the result is known."""
  del static_argnums, static_argnames, signature
  src = sourceinfo if sourceinfo is not None else source_info.function_location(fun)
  arg_names = _arg_names(fun, args, kwargs)
  if arg_names is None:
    arg_names = tuple("" for _ in tree_util.tree_leaves((args, kwargs)))
  return DebugInfo(traced_for, src, arg_names,
                   None if result_paths_thunk is None else tuple(result_paths_thunk()))


def shaped_abstractify(x):
  """The abstract value (a ShapedArray) of an array-like argument, an
  abstract value, or anything with a shape and a dtype."""
  return core.shaped_abstractify(x)


def safe_map(f, *args):
  """``map`` over sequences that must all have the same length."""
  args = [list(a) for a in args]
  n = len(args[0])
  for a in args[1:]:
    if len(a) != n:
      raise ValueError(f"length mismatch: {[len(a) for a in args]}")
  return list(map(f, *args))


__all__ = ["DebugInfo", "debug_info", "flatten_fun", "flatten_fun_nokwargs", "safe_map",
           "shaped_abstractify"]
