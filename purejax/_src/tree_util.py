"""Pytrees: flattening nested containers into leaves and a structure.

This module holds the public pytree functions (flattening, mapping, prefix
errors, registration, ``Partial``).  The node registry, the flattening and
rebuilding machinery and ``PyTreeDef`` are in ``pytree_registry``; the key
path entries and ``keystr`` in ``tree_keys``.  Both are re-exported here.
"""
import dataclasses
import difflib
import functools
import operator
import textwrap

from purejax._src.pytree_registry import (
    PyTreeDef, _CUSTOM, _DICT, _LIST, _NAMEDTUPLE, _NONE, _TUPLE, _TUPLE_KIND,
    _add_kind, _flatten, _flatten_path, _flatten_pred, _kind_for_type,
    _leaf_verdict, _make_custom_kind, _make_dataclass_kind, _make_treedef)
# Pickles of treedefs made before the split refer to ``_make_treedef``,
# ``_kind_for_type`` and ``_Aux`` in this module.
from purejax._src.pytree_registry import _Aux  # noqa: F401
from purejax._src.tree_keys import (
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey,
    _raw_key, keystr)

__all__ = [
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "KeyEntry", "KeyPath",
    "Partial", "PyTreeDef", "SequenceKey", "all_leaves", "default_registry",
    "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "keystr", "register_dataclass", "register_pytree_node",
    "register_pytree_node_class", "register_pytree_with_keys",
    "register_pytree_with_keys_class", "register_static", "tree_all",
    "tree_broadcast", "tree_flatten", "tree_flatten_with_path", "tree_leaves",
    "tree_leaves_with_path", "tree_map", "tree_map_with_path", "tree_reduce",
    "tree_reduce_associative", "tree_structure", "tree_transpose",
    "tree_unflatten", "treedef_children", "treedef_is_leaf", "treedef_tuple",
]


# --------------------------------------------------------------------------
# Flattening
# --------------------------------------------------------------------------

def tree_flatten(tree, is_leaf=None):
  """Returns ``(leaves, treedef)`` for ``tree``."""
  leaves = []
  if is_leaf is None:
    spec = _flatten(tree, leaves)
  else:
    spec = _flatten_pred(tree, leaves, is_leaf)
  return leaves, _make_treedef(spec, len(leaves))


def tree_leaves(tree, is_leaf=None):
  """The leaves of ``tree``, in flattening order."""
  leaves = []
  if is_leaf is None:
    _flatten(tree, leaves)
  else:
    _flatten_pred(tree, leaves, is_leaf)
  return leaves


def tree_structure(tree, is_leaf=None):
  """The treedef of ``tree``."""
  return tree_flatten(tree, is_leaf)[1]


def tree_flatten_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
  """Like ``tree_flatten`` but each leaf comes as ``(key_path, leaf)``."""
  pairs = []
  spec = _flatten_path(tree, (), pairs, is_leaf, is_leaf_takes_path)
  return pairs, _make_treedef(spec, len(pairs))


def tree_leaves_with_path(tree, is_leaf=None, is_leaf_takes_path=False):
  """The ``(key_path, leaf)`` pairs of ``tree``."""
  return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


# --------------------------------------------------------------------------
# Treedefs
# --------------------------------------------------------------------------

def tree_unflatten(treedef, leaves):
  """Builds a pytree from ``treedef`` and ``leaves``."""
  return treedef.unflatten(leaves)


def treedef_children(treedef):
  return treedef.children()


def treedef_is_leaf(treedef):
  """True for a single-node treedef (a leaf, ``None`` or an empty container)."""
  return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef):
  return treedef.num_nodes == 1 and treedef.num_leaves == 1


def treedef_tuple(treedefs):
  """The treedef of a tuple whose children have the given treedefs."""
  treedefs = list(treedefs)
  for td in treedefs:
    if type(td) is not PyTreeDef:
      raise TypeError(f"treedef_tuple: expected PyTreeDefs, got {td!r}")
  return _make_treedef((_TUPLE_KIND, None, tuple([td._spec for td in treedefs])))


# --------------------------------------------------------------------------
# One-level views
# --------------------------------------------------------------------------

def _one_level_meta(kind, aux):
  if kind.flavor is _NAMEDTUPLE:
    return kind.type
  return kind.data(aux)


def flatten_one_level(tree):
  """``(children, metadata)`` of the root node of ``tree``."""
  kind = _kind_for_type(type(tree))
  if kind is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  children, aux = kind.split(tree)
  if kind.flavor is _DICT or kind.flavor is _TUPLE:
    children = tuple(children)
  elif kind.flavor is not _CUSTOM and kind.flavor is not _NONE:
    children = list(children)
  return children, _one_level_meta(kind, aux)


def flatten_one_level_with_keys(tree):
  """``([(key, child), ...], metadata)`` of the root node of ``tree``."""
  kind = _kind_for_type(type(tree))
  if kind is None:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  keys, children, aux = kind.split_keyed(tree)
  pairs = list(zip(keys, children))
  if kind.flavor in (_DICT, _TUPLE, _LIST, _NONE):
    pairs = tuple(pairs)
  return pairs, _one_level_meta(kind, aux)


def is_tree_node(typ):
  """Whether values of type ``typ`` are pytree nodes (not leaves)."""
  return isinstance(typ, type) and _kind_for_type(typ) is not None


def all_leaves(iterable, is_leaf=None):
  """Whether every element of ``iterable`` is a leaf."""
  if is_leaf is None:
    return all(_kind_for_type(type(x)) is None for x in iterable)
  return all(_leaf_verdict(is_leaf(x)) or _kind_for_type(type(x)) is None
             for x in iterable)


# --------------------------------------------------------------------------
# Prefix errors: explaining why one tree is not a prefix of another
# --------------------------------------------------------------------------

def _is_strict_leaf(x, is_leaf):
  if is_leaf is not None and _leaf_verdict(is_leaf(x)):
    return True
  return _kind_for_type(type(x)) is None


def _prefix_errors(prefix, full, is_leaf, path=()):
  """Yields, for each place where ``prefix`` is not a prefix of ``full``, a
  function ``name -> message`` (``name`` names the prefix tree)."""
  if _is_strict_leaf(prefix, is_leaf):
    return
  if type(prefix) is not type(full):
    yield functools.partial(_types_message, path, type(prefix), type(full))
    return
  p_pairs, p_meta = flatten_one_level_with_keys(prefix)
  f_pairs, f_meta = flatten_one_level_with_keys(full)
  if isinstance(prefix, (list, tuple)):
    if len(prefix) != len(full):
      yield functools.partial(_lengths_message, path, type(prefix),
                              len(prefix), len(full))
      return
  elif len(p_pairs) != len(f_pairs):
    yield functools.partial(_count_message, path, type(prefix),
                            [k for k, _ in p_pairs], [k for k, _ in f_pairs])
    return
  try:
    differ = bool(p_meta != f_meta)
  except Exception:
    differ = True
  if differ:
    yield functools.partial(_metadata_message, path, type(prefix), p_meta,
                            f_meta)
    return
  for (k, p), (_, f) in zip(p_pairs, f_pairs):
    yield from _prefix_errors(p, f, is_leaf, path + (k,))


def _where(what, path, name):
  return (f"pytree structure error: {what} at key path\n"
          f"    {name}{keystr(path)}\n"
          f"At that key path, the prefix pytree {name} has a subtree of type")


def _types_message(path, p_type, f_type, name):
  return (f"{_where('different types', path, name)}\n"
          f"    {p_type}\n"
          "but at the same key path the full pytree has a subtree of "
          f"different type\n    {f_type}.")


def _lengths_message(path, ty, p_len, f_len, name):
  ty = ty.__name__
  return (f"{_where(f'different lengths of {ty}', path, name)} {ty} of length "
          f"{p_len}, but the full pytree has a subtree of the same type but "
          f"of length {f_len}.")


def _count_message(path, ty, p_keys, f_keys, name):
  show = lambda keys: " ".join(str(_raw_key(k)) for k in keys)
  text = (f"{_where('different numbers of pytree children', path, name)}\n"
          f"    {ty}\n"
          f"with {len(p_keys)} child keys\n"
          f"    {show(p_keys)}\n"
          "but at the same key path the full pytree has a subtree of the "
          f"same type but with {len(f_keys)} child keys\n"
          f"    {show(f_keys)}\n")
  try:
    diff = set(p_keys).symmetric_difference(f_keys)
  except TypeError:
    return text
  return text + f"so the symmetric difference on key sets is\n    {show(diff)}"


def _metadata_message(path, ty, p_meta, f_meta, name):
  p_text, f_text = str(p_meta), str(f_meta)
  diff = textwrap.indent(
      "\n".join(difflib.ndiff(p_text.splitlines(), f_text.splitlines())),
      prefix="    ")
  return (f"{_where('different pytree metadata', path, name)}\n"
          f"    {ty}\n"
          f"with metadata\n"
          f"    {p_text}\n"
          "but at the same key path the full pytree has a subtree of the same "
          "type but with metadata\n"
          f"    {f_text}\n"
          "so the diff in the metadata at these pytree nodes is\n"
          f"{diff}")


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
  """Functions ``name -> ValueError``, one per place where ``prefix_tree`` is
  not a prefix of ``full_tree`` (the first one is the most useful)."""
  return [functools.partial(_as_error, message)
          for message in _prefix_errors(prefix_tree, full_tree, is_leaf)]


def _as_error(message, name):
  return ValueError(message(name))


def _flatten_up_to_named(treedef, prefix_tree, full_tree, is_leaf, name):
  """``treedef.flatten_up_to(full_tree)`` with JAX's friendlier errors."""
  try:
    return treedef.flatten_up_to(full_tree)
  except ValueError:
    for message in _prefix_errors(prefix_tree, full_tree, is_leaf):
      raise ValueError(message(name)) from None
    raise


# --------------------------------------------------------------------------
# Mapping, reducing, transposing
# --------------------------------------------------------------------------

def tree_map(f, tree, *rest, is_leaf=None):
  """Applies ``f`` to the leaves of ``tree`` (and matching subtrees of rest)."""
  leaves, treedef = tree_flatten(tree, is_leaf)
  if not rest:
    return treedef.unflatten([f(x) for x in leaves])
  others = [_flatten_up_to_named(treedef, tree, r, is_leaf, "tree_map tree")
            for r in rest]
  return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(f, tree, *rest, is_leaf=None, is_leaf_takes_path=False):
  """Like ``tree_map`` but ``f`` also gets each leaf's key path first."""
  pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
  if rest:
    prefix_is_leaf = None
    if is_leaf is not None:
      prefix_is_leaf = ((lambda x: is_leaf((), x)) if is_leaf_takes_path
                        else is_leaf)
    others = [_flatten_up_to_named(treedef, tree, r, prefix_is_leaf,
                                   "tree_map_with_path tree") for r in rest]
  else:
    others = []
  return treedef.unflatten(
      [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


class Unspecified:
  """Marks an argument that was not given (``None`` is a valid value)."""

  def __repr__(self):
    return "<unspecified>"


_UNSPECIFIED = Unspecified()


def tree_reduce(function, tree, initializer=_UNSPECIFIED, is_leaf=None):
  """``functools.reduce`` over the leaves of ``tree``."""
  leaves = tree_leaves(tree, is_leaf)
  if initializer is _UNSPECIFIED:
    return functools.reduce(function, leaves)
  return functools.reduce(function, leaves, initializer)


def _reduce_halves(operation, xs):
  if len(xs) == 1:
    return xs[0]
  mid = len(xs) // 2
  return operation(_reduce_halves(operation, xs[:mid]),
                   _reduce_halves(operation, xs[mid:]))


def tree_reduce_associative(operation, tree, *, identity=_UNSPECIFIED,
                            is_leaf=None):
  """Reduces the leaves pairwise as a balanced tree (``operation`` must be
  associative)."""
  leaves = tree_leaves(tree, is_leaf)
  if not leaves:
    if identity is _UNSPECIFIED:
      raise TypeError(
          "Must specify identity for parallel reduction of empty sequence.")
    return identity
  return _reduce_halves(operation, leaves)


def tree_all(tree, *, is_leaf=None):
  """Whether every leaf of ``tree`` is truthy."""
  return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose):
  """Turns an outer tree of inner trees into an inner tree of outer trees."""
  flat, treedef = tree_flatten(pytree_to_transpose)
  if inner_treedef is None:
    inner_treedef = tree_structure(
        outer_treedef.flatten_up_to(pytree_to_transpose)[0])
  inner_size = inner_treedef.num_leaves
  outer_size = outer_treedef.num_leaves
  if treedef.num_leaves != inner_size * outer_size:
    expected = outer_treedef.compose(inner_treedef)
    raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
  rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
  return inner_treedef.unflatten(
      [outer_treedef.unflatten(c) for c in zip(*rows)])


def broadcast_prefix(prefix_tree, full_tree, is_leaf=None):
  """The leaves of ``prefix_tree``, each repeated once per leaf of the
  matching subtree of ``full_tree``."""
  leaves, treedef = tree_flatten(prefix_tree, is_leaf)
  subtrees = _flatten_up_to_named(treedef, prefix_tree, full_tree, is_leaf,
                                  "broadcast_prefix prefix_tree")
  out = []
  for x, sub in zip(leaves, subtrees):
    out.extend([x] * tree_structure(sub).num_leaves)
  return out


def tree_broadcast(prefix_tree, full_tree, is_leaf=None):
  """``prefix_tree`` with each leaf copied over the matching subtree of
  ``full_tree``."""
  leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf)
  return tree_structure(full_tree).unflatten(leaves)


# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------

def register_pytree_node(nodetype, flatten_func, unflatten_func,
                         flatten_with_keys_func=None):
  """Makes ``nodetype`` a pytree node.

  ``flatten_func(x) -> (children, aux_data)`` and
  ``unflatten_func(aux_data, children) -> x``.
  """
  _add_kind(_make_custom_kind(nodetype, flatten_func, unflatten_func,
                              flatten_with_keys_func))


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func,
                              flatten_func=None):
  """Like ``register_pytree_node`` with a flatten returning ``(key, child)``
  pairs, used for key paths."""
  if flatten_func is None:
    def flatten_func(x):
      pairs, aux = flatten_with_keys(x)
      return [c for _, c in pairs], aux
  register_pytree_node(nodetype, flatten_func, unflatten_func,
                       flatten_with_keys)


def register_pytree_node_class(cls):
  """Class decorator using ``cls.tree_flatten`` / ``cls.tree_unflatten``."""
  register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                       cls.tree_unflatten)
  return cls


def register_pytree_with_keys_class(cls):
  """Class decorator using ``cls.tree_flatten_with_keys`` (and
  ``cls.tree_flatten`` if defined) and ``cls.tree_unflatten``."""
  flatten_func = (operator.methodcaller("tree_flatten")
                  if hasattr(cls, "tree_flatten") else None)
  register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                            cls.tree_unflatten, flatten_func)
  return cls


def _dataclass_fields(nodetype, data_fields, meta_fields):
  """Derives the fields of a plain ``@register_dataclass``."""
  if data_fields is None and meta_fields is None:
    if not dataclasses.is_dataclass(nodetype):
      raise TypeError(
          "register_dataclass: data_fields and meta_fields are required when "
          f"nodetype is not a dataclass. Got nodetype={nodetype!r}.")
    data_fields, meta_fields = [], []
    for f in dataclasses.fields(nodetype):
      (meta_fields if f.metadata.get("static", False) else data_fields).append(
          f.name)
    return data_fields, meta_fields
  if data_fields is None or meta_fields is None:
    raise TypeError(
        "register_dataclass: data_fields and meta_fields must both be "
        f"specified when either is specified. Got data_fields={data_fields!r} "
        f"meta_fields={meta_fields!r}.")
  return list(data_fields), list(meta_fields)


def _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields):
  overlap = set(data_fields) & set(meta_fields)
  if overlap:
    raise ValueError(
        "data_fields and meta_fields must not overlap. Overlapping fields: "
        f"{overlap}.")
  if not dataclasses.is_dataclass(nodetype):
    return
  init = {f.name for f in dataclasses.fields(nodetype) if f.init}
  init.difference_update(drop_fields)
  given = set(data_fields) | set(meta_fields)
  if given == init:
    return
  msg = ("data_fields and meta_fields must include all dataclass fields with "
         "``init=True`` and only them.")
  missing, unexpected = init - given, given - init
  if missing:
    msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress "
            "this error.")
  if unexpected:
    msg += f" Unexpected fields: {unexpected}."
  raise ValueError(msg)


def register_dataclass(nodetype, data_fields=None, meta_fields=None,
                       drop_fields=()):
  """Makes a dataclass (or any class with the named attributes) a pytree
  node: ``data_fields`` are children, ``meta_fields`` static metadata.

  With no fields given, fields whose metadata has ``static=True`` (see
  ``purejax.tree.static``) are meta fields and the others data fields.
  """
  data_fields, meta_fields = _dataclass_fields(nodetype, data_fields,
                                               meta_fields)
  _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)
  _add_kind(_make_dataclass_kind(nodetype, data_fields, meta_fields),
            "custom dataclass PyTreeDef")
  return nodetype


def register_static(cls):
  """Makes instances of ``cls`` childless nodes carried in the treedef (they
  must be hashable)."""
  register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
  return cls


def static(**kwargs):
  """``dataclasses.field`` marked ``static=True`` for ``register_dataclass``."""
  metadata = {"static": True}
  metadata.update(kwargs.pop("metadata", None) or {})
  return dataclasses.field(metadata=metadata, **kwargs)


# --------------------------------------------------------------------------
# Partial
# --------------------------------------------------------------------------

class _HashableCallableShim:
  """Wraps a functools.partial given to ``Partial`` so that it is kept whole
  (functools would merge it) and compared by value in treedefs."""

  def __init__(self, fun):
    self.fun = fun

  def __call__(self, *args, **kwargs):
    return self.fun(*args, **kwargs)

  def __hash__(self):
    return hash(self.fun)

  def __eq__(self, other):
    if isinstance(other, _HashableCallableShim):
      return self.fun == other.fun
    return self.fun == other

  def __repr__(self):
    return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
  """A ``functools.partial`` that is a pytree: the bound arguments are its
  children and the function is static metadata."""

  def __new__(cls, func, *args, **kwargs):
    if isinstance(func, functools.partial):
      func = _HashableCallableShim(func)
    return super().__new__(cls, func, *args, **kwargs)


Partial.__module__ = "purejax.tree_util"


# --------------------------------------------------------------------------
# The registry object
# --------------------------------------------------------------------------

class PyTreeRegistry:
  """The node-type registry, as an object (JAX exposes ``default_registry``)."""

  def flatten(self, tree, leaf_predicate=None):
    return tree_flatten(tree, leaf_predicate)

  def flatten_with_path(self, tree, leaf_predicate=None):
    return tree_flatten_with_path(tree, leaf_predicate, True)

  def flatten_one_level(self, tree):
    if _kind_for_type(type(tree)) is None:
      return None
    return flatten_one_level(tree)

  def flatten_one_level_with_keys(self, tree):
    if _kind_for_type(type(tree)) is None:
      return None
    return flatten_one_level_with_keys(tree)

  def is_node(self, type):
    return is_tree_node(type)

  def register_node(self, type, to_iterable, from_iterable,
                    to_iterable_with_keys=None):
    register_pytree_node(type, to_iterable, from_iterable,
                         to_iterable_with_keys)

  def register_dataclass_node(self, type, data_fields, meta_fields, /):
    _add_kind(_make_dataclass_kind(type, data_fields, meta_fields),
              "custom dataclass PyTreeDef")


default_registry = PyTreeRegistry()


def _register_builtins():
  # The builtin containers are registered by pytree_registry; Partial is here.
  register_pytree_node(
      Partial, lambda p: ((p.args, p.keywords), p.func),
      lambda func, children: Partial(func, *children[0], **children[1]))


_register_builtins()
