"""Pytrees: flattening nested containers into leaves and a structure.

A treedef is stored as a nested "spec":

* a leaf is ``None``;
* a node is the tuple ``(kind, aux, kids)`` where ``kind`` is the ``_Kind``
  describing the node's type, ``aux`` its hashable metadata and ``kids`` the
  tuple of the children's specs.

Specs are plain tuples, so treedef equality and hashing run at C speed
(``tuple.__eq__`` / ``tuple.__hash__``).  Metadata of user-registered nodes may
be unhashable or compare strangely, so it is wrapped in ``_Aux``, whose hash is
a constant (as in JAX, a treedef's hash does not depend on node metadata).
"""
import collections
import dataclasses
import difflib
import functools
import itertools
import operator
import textwrap
from typing import Hashable, TypeVar

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

_NoneType = type(None)


# --------------------------------------------------------------------------
# Key path entries
# --------------------------------------------------------------------------

class _KeyEntry:
  """Base of the key classes: immutable, one value, compared by class+value."""
  __slots__ = ("_v",)
  _field = ""

  def __eq__(self, other):
    if type(other) is not type(self):
      return False
    return self._v == other._v

  def __ne__(self, other):
    return not self.__eq__(other)

  def __hash__(self):
    return hash((type(self).__name__, self._v))

  def __repr__(self):
    return f"{type(self).__name__}({self._field}={self._v!r})"

  def __reduce__(self):
    return (type(self), (self._v,))


def _as_int(value, cls):
  try:
    return operator.index(value)
  except TypeError:
    raise TypeError(f"{cls}(): expected an int, got {type(value).__name__}") from None


class SequenceKey(_KeyEntry):
  """The key of a list or tuple element, printed ``[idx]``."""
  __slots__ = ()
  __match_args__ = ("idx",)
  _field = "idx"

  def __init__(self, idx):
    self._v = _as_int(idx, "SequenceKey")

  @property
  def idx(self):
    return self._v

  def __str__(self):
    return f"[{self._v!r}]"


class DictKey(_KeyEntry):
  """The key of a dict entry, printed ``['key']``."""
  __slots__ = ()
  __match_args__ = ("key",)
  _field = "key"

  def __init__(self, key):
    self._v = key

  @property
  def key(self):
    return self._v

  def __hash__(self):
    return hash(self._v)

  def __str__(self):
    return f"[{self._v!r}]"


class GetAttrKey(_KeyEntry):
  """The key of an attribute, printed ``.name``."""
  __slots__ = ()
  __match_args__ = ("name",)
  _field = "name"

  def __init__(self, name):
    if not isinstance(name, str):
      raise TypeError(f"GetAttrKey(): expected a str, got {type(name).__name__}")
    self._v = name

  @property
  def name(self):
    return self._v

  def __hash__(self):
    return hash(self._v)

  def __str__(self):
    return f".{self._v}"


class FlattenedIndexKey(_KeyEntry):
  """The position of a child of a custom node registered without keys."""
  __slots__ = ()
  __match_args__ = ("key",)
  _field = "key"

  def __init__(self, key):
    self._v = _as_int(key, "FlattenedIndexKey")

  @property
  def key(self):
    return self._v

  def __str__(self):
    return f"[<flat index {self._v}>]"


KeyEntry = TypeVar("KeyEntry", bound=Hashable)
KeyPath = tuple[KeyEntry, ...]


def _raw_key(k):
  """The bare key inside a key entry (what ``keystr(simple=True)`` prints)."""
  if isinstance(k, _KeyEntry):
    return k._v
  return k


def keystr(keys, *, simple=False, separator=""):
  """Renders a key path, e.g. ``"['a'][0].x"`` (or ``"a/0/x"`` when simple)."""
  if simple:
    return separator.join([str(_raw_key(k)) for k in keys])
  return separator.join([str(k) for k in keys])


# --------------------------------------------------------------------------
# Node kinds
# --------------------------------------------------------------------------

class _Aux:
  """Boxes a custom node's metadata: constant hash, guarded equality."""
  __slots__ = ("value",)

  def __init__(self, value):
    self.value = value

  def __eq__(self, other):
    if type(other) is not _Aux:
      return NotImplemented
    a, b = self.value, other.value
    return a is b or bool(a == b)

  def __hash__(self):
    return 0x5EED

  def __reduce__(self):
    return (_Aux, (self.value,))

  def __repr__(self):
    return f"_Aux({self.value!r})"


# Flavors: how a kind flattens, prints and reports mismatches.
_TUPLE, _LIST, _DICT, _NONE = "tuple", "list", "dict", "none"
_NAMEDTUPLE, _CUSTOM, _DATACLASS = "namedtuple", "custom", "dataclass"


class _Kind:
  """How one node type is taken apart and rebuilt.

  split(x) -> (children, spec_aux)
  split_keyed(x) -> (keys, children, spec_aux)
  build(spec_aux, children_list) -> node
  data(spec_aux) -> the metadata JAX shows (node_data, flatten_one_level)
  """
  __slots__ = ("type", "flavor", "split", "split_keyed", "build", "data")

  def __init__(self, type_, flavor, split, split_keyed, build, data):
    self.type, self.flavor = type_, flavor
    self.split, self.split_keyed, self.build, self.data = (
        split, split_keyed, build, data)

  def __reduce__(self):
    return (_kind_for_type, (self.type,))

  def __repr__(self):
    return f"_Kind({self.type.__name__}, {self.flavor})"


def _seq_keys(xs):
  return [SequenceKey(i) for i in range(len(xs))]


def _sorted_keys(d):
  try:
    return sorted(d)
  except Exception:
    raise ValueError(
        "Comparator raised exception while sorting pytree dictionary keys.") from None


def _split_dict(x):
  keys = _sorted_keys(x)
  return [x[k] for k in keys], tuple(keys)


def _split_keyed_dict(x):
  keys = _sorted_keys(x)
  return [DictKey(k) for k in keys], [x[k] for k in keys], tuple(keys)


_TUPLE_KIND = _Kind(
    tuple, _TUPLE, lambda x: (x, None),
    lambda x: (_seq_keys(x), x, None),
    lambda aux, kids: tuple(kids), lambda aux: None)
_LIST_KIND = _Kind(
    list, _LIST, lambda x: (x, None),
    lambda x: (_seq_keys(x), x, None),
    lambda aux, kids: kids, lambda aux: None)
_DICT_KIND = _Kind(
    dict, _DICT, _split_dict, _split_keyed_dict,
    lambda aux, kids: dict(zip(aux, kids)), lambda aux: aux)
_NONE_KIND = _Kind(
    _NoneType, _NONE, lambda x: ((), None), lambda x: ((), (), None),
    lambda aux, kids: None, lambda aux: None)
_NONE_SPEC = (_NONE_KIND, None, ())


def _make_namedtuple_kind(cls):
  fields = cls._fields
  return _Kind(
      cls, _NAMEDTUPLE, lambda x: (x, None),
      lambda x: ([GetAttrKey(f) for f in fields], x, None),
      lambda aux, kids: cls(*kids), lambda aux: cls)


def _check_split(result):
  """Validates what a user flatten function returned."""
  if type(result) is not tuple or len(result) != 2:
    raise ValueError(
        "The to_iterable function for a custom PyTree node should return a "
        f"(children, aux_data) tuple, got {result!r}")
  children, aux = result
  if not isinstance(children, (list, tuple)):
    try:
      children = list(children)
    except TypeError:
      raise ValueError(
          "The to_iterable function for a custom PyTree node should return a "
          "(children, aux_data) tuple where 'children' is iterable, got "
          f"{result!r}") from None
  return children, aux


def _make_custom_kind(nodetype, flatten_func, unflatten_func,
                      flatten_with_keys_func=None):
  def split(x):
    children, aux = _check_split(flatten_func(x))
    return children, _Aux(aux)

  def split_keyed(x):
    if flatten_with_keys_func is None:
      children, aux = split(x)
      return [FlattenedIndexKey(i) for i in range(len(children))], children, aux
    pairs, aux = _check_split(flatten_with_keys_func(x))
    keys = [k for k, _ in pairs]
    return keys, [c for _, c in pairs], _Aux(aux)

  def build(aux, kids):
    return unflatten_func(aux.value, tuple(kids))

  return _Kind(nodetype, _CUSTOM, split, split_keyed, build, lambda a: a.value)


def _make_dataclass_kind(nodetype, data_fields, meta_fields):
  data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
  keys = [GetAttrKey(f) for f in data_fields]

  def split(x):
    return ([getattr(x, f) for f in data_fields],
            _Aux(tuple([getattr(x, f) for f in meta_fields])))

  def split_keyed(x):
    children, aux = split(x)
    return keys, children, aux

  def build(aux, kids):
    kwargs = dict(zip(meta_fields, aux.value))
    kwargs.update(zip(data_fields, kids))
    return nodetype(**kwargs)

  return _Kind(nodetype, _DATACLASS, split, split_keyed, build,
               lambda a: a.value)


def _split_ordered_dict(x):
  return list(x.values()), _Aux(tuple(x))


def _split_keyed_ordered_dict(x):
  return [DictKey(k) for k in x], list(x.values()), _Aux(tuple(x))


def _split_defaultdict(x):
  keys = sorted(x)
  return [x[k] for k in keys], _Aux((x.default_factory, tuple(keys)))


def _split_keyed_defaultdict(x):
  keys = sorted(x)
  return ([DictKey(k) for k in keys], [x[k] for k in keys],
          _Aux((x.default_factory, tuple(keys))))


_ORDERED_DICT_KIND = _Kind(
    collections.OrderedDict, _CUSTOM, _split_ordered_dict,
    _split_keyed_ordered_dict,
    lambda aux, kids: collections.OrderedDict(zip(aux.value, kids)),
    lambda a: a.value)
_DEFAULTDICT_KIND = _Kind(
    collections.defaultdict, _CUSTOM, _split_defaultdict,
    _split_keyed_defaultdict,
    lambda aux, kids: collections.defaultdict(
        aux.value[0], zip(aux.value[1], kids)),
    lambda a: a.value)


# The registry: every node type that is not a namedtuple.  Namedtuple kinds
# are made on first sight and kept in _KINDS too (they are not "registered",
# so registering a namedtuple class later is allowed and takes over).
_REGISTERED = {}
_KINDS = {}
# Type -> fast flattener ``f(x, leaves) -> spec`` (see _flatten).
_FLAT = {}
_flat_get = _FLAT.get


def _kind_for_type(t):
  """The kind of nodes of type ``t``, or None if such values are leaves."""
  kind = _KINDS.get(t)
  if kind is None and issubclass(t, tuple) and hasattr(t, "_fields"):
    kind = _KINDS[t] = _make_namedtuple_kind(t)
    _FLAT[t] = _sequence_flattener(kind)  # its children are its items
  return kind


def _add_kind(kind, duplicate_message="custom PyTreeDef"):
  t = kind.type
  if t in _REGISTERED:
    raise ValueError(f"Duplicate {duplicate_message} type registration for {t}.")
  _REGISTERED[t] = kind
  _KINDS[t] = kind
  _FLAT[t] = _generic_flattener(kind)
  _LEAF_TYPES.discard(t)


# --------------------------------------------------------------------------
# Flattening
# --------------------------------------------------------------------------

# Types met as leaves.  A container whose children all have such types is
# flattened without a Python-level loop (the common case: tuples/dicts of
# arrays).  Registering a type removes it from here.
_LEAF_TYPES = set()
_all_leaf_types = _LEAF_TYPES.issuperset


def _sequence_flattener(kind):
  """A flattener ``(x, leaves) -> spec`` for a tuple or list ``x``.

  This is the hot loop of tree_flatten, so it avoids function calls for leaf
  children; _flat_dict repeats it for the same reason.
  """
  def flat(xs, leaves):
    # Checking all children at once pays off only for longer sequences.
    if len(xs) > 3 and _all_leaf_types(map(type, xs)):
      leaves.extend(xs)
      return (kind, None, (None,) * len(xs))
    specs = []
    push = specs.append
    for c in xs:
      t = type(c)
      if t in _LEAF_TYPES:
        leaves.append(c)
        push(None)
        continue
      f = _flat_get(t)
      push(f(c, leaves) if f is not None else _flatten_unknown(c, t, leaves))
    return (kind, None, tuple(specs))
  return flat


_flat_tuple = _sequence_flattener(_TUPLE_KIND)
_flat_list = _sequence_flattener(_LIST_KIND)
# For a custom node's children: the spec it returns holds their specs at [2].
_flat_children = _sequence_flattener(None)


def _flat_dict(x, leaves):
  try:
    keys = sorted(x)
  except Exception:
    keys = _sorted_keys(x)  # raises JAX's error
  if len(keys) > 3:
    values = list(map(x.__getitem__, keys))
    if _all_leaf_types(map(type, values)):
      leaves.extend(values)
      return (_DICT_KIND, tuple(keys), (None,) * len(keys))
  specs = []
  push = specs.append
  for k in keys:
    c = x[k]
    t = type(c)
    if t in _LEAF_TYPES:
      leaves.append(c)
      push(None)
      continue
    f = _flat_get(t)
    push(f(c, leaves) if f is not None else _flatten_unknown(c, t, leaves))
  return (_DICT_KIND, tuple(keys), tuple(specs))


def _flat_none(x, leaves):
  return _NONE_SPEC


def _generic_flattener(kind):
  split = kind.split

  def flat(x, leaves):
    children, aux = split(x)
    return (kind, aux, _flat_children(children, leaves)[2])
  return flat


def _flatten_unknown(x, t, leaves):
  """Flattens ``x`` whose type ``t`` has no flattener: a namedtuple met for
  the first time, or a leaf."""
  kind = _kind_for_type(t)
  if kind is None:
    if len(_LEAF_TYPES) > 4096:  # types made in a loop: don't grow forever
      _LEAF_TYPES.clear()
    _LEAF_TYPES.add(t)
    leaves.append(x)
    return None
  return _FLAT[t](x, leaves)


def _flatten(x, leaves):
  t = type(x)
  if t in _LEAF_TYPES:
    leaves.append(x)
    return None
  f = _flat_get(t)
  if f is not None:
    return f(x, leaves)
  return _flatten_unknown(x, t, leaves)


def _leaf_verdict(result):
  """Checks an ``is_leaf`` result: True/False, with None meaning False."""
  if result is True:
    return True
  if result is False or result is None:
    return False
  raise ValueError(
      f"is_leaf predicate returned a non-boolean value {result!r}; "
      "expected a boolean")


def _flatten_pred(x, leaves, is_leaf):
  """Flattening when an ``is_leaf`` predicate is given."""
  if _leaf_verdict(is_leaf(x)):
    leaves.append(x)
    return None
  kind = _kind_for_type(type(x))
  if kind is None:
    leaves.append(x)
    return None
  children, aux = kind.split(x)
  return (kind, aux, tuple([_flatten_pred(c, leaves, is_leaf) for c in children]))


def _flatten_path(x, path, pairs, is_leaf, takes_path):
  """Flattening that records each leaf's key path."""
  if is_leaf is not None:
    verdict = is_leaf(path, x) if takes_path else is_leaf(x)
    if _leaf_verdict(verdict):
      pairs.append((path, x))
      return None
  kind = _kind_for_type(type(x))
  if kind is None:
    pairs.append((path, x))
    return None
  keys, children, aux = kind.split_keyed(x)
  return (kind, aux, tuple([
      _flatten_path(c, path + (k,), pairs, is_leaf, takes_path)
      for k, c in zip(keys, children)]))


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
# Rebuilding
# --------------------------------------------------------------------------

def _build(spec, nxt):
  kind, aux, kids = spec
  vals = [nxt() if k is None else _build(k, nxt) for k in kids]
  # The builtin containers inline; the rest through their kind.
  if kind is _DICT_KIND:
    return dict(zip(aux, vals))
  if kind is _TUPLE_KIND:
    return tuple(vals)
  if kind is _LIST_KIND:
    return vals
  return kind.build(aux, vals)


def _builder_source(spec, consts):
  """A Python expression rebuilding ``spec`` from the leaf list ``L``; the
  objects it refers to are put in ``consts``."""
  leaf_index = itertools.count().__next__

  def const(value):
    name = f"_c{len(consts)}"
    consts[name] = value
    return name

  def expr(spec):
    if spec is None:
      return f"L[{leaf_index()}]"
    kind, aux, kids = spec
    parts = [expr(k) for k in kids]
    if kind is _TUPLE_KIND:
      return "(" + "".join(p + ", " for p in parts) + ")"
    if kind is _LIST_KIND:
      return "[" + ", ".join(parts) + "]"
    if kind is _DICT_KIND:
      return "{" + ", ".join(
          f"{const(k)}: {p}" for k, p in zip(aux, parts)) + "}"
    if kind is _NONE_KIND:
      return "None"
    if kind.flavor is _NAMEDTUPLE:
      return f"{const(kind.type)}({', '.join(parts)})"
    return f"{const(kind.build)}({const(aux)}, [{', '.join(parts)}])"
  return expr(spec)


def _depth(spec):
  if spec is None:
    return 0
  return 1 + max([_depth(k) for k in spec[2]], default=0)


def _compile_builder(spec, num_nodes):
  """A function ``leaves -> tree`` for ``spec``, or None when the tree is too
  big or deep to be worth (or able to be) compiled."""
  if num_nodes > 5000 or _depth(spec) > 50:
    return None
  consts = {}
  try:
    source = f"lambda L: {_builder_source(spec, consts)}"
    return eval(compile(source, "<pytree unflatten>", "eval"), consts)
  except (SyntaxError, RecursionError, MemoryError, ValueError):
    return None


def _count_leaves(spec):
  if spec is None:
    return 1
  return sum([1 if k is None else _count_leaves(k) for k in spec[2]])


def _count_nodes(spec):
  if spec is None:
    return 1
  return 1 + sum([1 if k is None else _count_nodes(k) for k in spec[2]])


# --------------------------------------------------------------------------
# flatten_up_to: the leaves of a tree, cut at the leaves of a treedef
# --------------------------------------------------------------------------

def _match_children(kind, aux, n, x):
  """Checks that node ``x`` matches the spec node; returns its children."""
  flavor = kind.flavor
  if flavor is _TUPLE or flavor is _LIST:
    name = "Tuple" if flavor is _TUPLE else "List"
    if type(x) is not kind.type:
      raise ValueError(f"Expected {kind.type.__name__}, got {x!r}.")
    if len(x) != n:
      raise ValueError(
          f"{name} arity mismatch: {len(x)} != {n}; {flavor}: {x!r}.")
    return x
  if flavor is _DICT:
    if type(x) is not dict:
      raise ValueError(f"Expected dict, got {x!r}.")
    keys = _sorted_keys(x)
    if tuple(keys) != aux:
      raise ValueError(
          f"Dict key mismatch; expected keys: {list(aux)!r}; "
          f"present keys: {keys!r}.")
    return [x[k] for k in keys]
  if flavor is _NONE:
    if x is not None:
      raise ValueError(
          f"Expected None, got {x!r}.\n\n"
          "In previous releases of JAX, flatten-up-to used to consider None "
          "to be a tree-prefix of non-None values. To obtain the previous "
          "behavior, you can usually write:\n"
          "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
          "is_leaf=lambda x: x is None)")
    return ()
  if flavor is _NAMEDTUPLE:
    if not (isinstance(x, tuple) and hasattr(type(x), "_fields")):
      raise ValueError(f"Expected named tuple, got {x!r}.")
    if len(x) != n:
      raise ValueError(
          f"Named tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
    if type(x) is not kind.type:
      raise ValueError(
          f"Named tuple type mismatch: expected type: {kind.type!r}, "
          f"tuple: {x!r}.")
    return x
  what = "custom dataclass node" if flavor is _DATACLASS else "custom node"
  if type(x) is not kind.type:
    raise ValueError(
        f"{what.capitalize()} type mismatch: expected type: "
        f"{kind.type!r}, value: {x!r}.")
  children, other = kind.split(x)
  if not (aux.value is other.value or aux.value == other.value):
    raise ValueError(
        f"Mismatch {what} data: {aux.value!r} != {other.value!r}; "
        f"value: {x!r}.")
  if len(children) != n:
    raise ValueError(
        f"Custom type arity mismatch: {len(children)} != {n}; value: {x!r}.")
  return children


def _up_to_reversed(spec, x, out):
  """Appends the subtrees in reverse order.  Like JAX, this visits the last
  children first, so that is the mismatch reported when there are several."""
  kind, aux, kids = spec
  children = _match_children(kind, aux, len(kids), x)
  for k, c in zip(reversed(kids), reversed(list(children))):
    if k is None:
      out.append(c)
    else:
      _up_to_reversed(k, c, out)


# --------------------------------------------------------------------------
# PyTreeDef
# --------------------------------------------------------------------------

_EQ_ERROR = (
    "Exception raised while checking equality of metadata fields of pytree. "
    "Make sure that metadata fields are hashable and have simple equality "
    "semantics. (Note: arrays cannot be passed as metadata fields!)")


def _spec_repr(spec):
  if spec is None:
    return "*"
  kind, aux, kids = spec
  parts = [_spec_repr(k) for k in kids]
  flavor = kind.flavor
  if flavor is _TUPLE:
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
  if flavor is _LIST:
    return "[" + ", ".join(parts) + "]"
  if flavor is _DICT:
    return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts)) + "}"
  if flavor is _NONE:
    return "None"
  if flavor is _NAMEDTUPLE:
    label = f"namedtuple[{kind.type.__name__}]"
  else:
    label = f"{kind.type.__name__}[{kind.data(aux)}]"
  return f"CustomNode({label}, [{', '.join(parts)}])"


def _node_data(spec):
  kind, aux, _ = spec
  if kind.flavor is _DICT:
    return list(aux)
  if kind.flavor is _NAMEDTUPLE:
    return None
  return kind.data(aux)


class PyTreeDef:
  """The structure of a pytree: everything but its leaves."""
  # _builder: None until the first unflatten, then False, then (from the
  # second unflatten on) a compiled builder, or True if it has none.  Treedefs
  # unflattened repeatedly (e.g. a jitted function's output structure) get
  # a builder; one-off ones don't pay for compiling one.
  __slots__ = ("_spec", "_leaves", "_nodes", "_hash", "_builder")

  def __new__(cls, *args, **kwargs):
    raise TypeError("purejax.tree_util.PyTreeDef: no constructor defined!")

  @property
  def num_leaves(self):
    n = self._leaves
    if n is None:
      n = self._leaves = _count_leaves(self._spec)
    return n

  @property
  def num_nodes(self):
    n = self._nodes
    if n is None:
      n = self._nodes = _count_nodes(self._spec)
    return n

  def unflatten(self, leaves, /):
    """Builds the pytree with this structure from ``leaves``."""
    if type(leaves) is not list and type(leaves) is not tuple:
      leaves = list(leaves)
    expected = self.num_leaves
    if len(leaves) != expected:
      if len(leaves) > expected:
        raise ValueError(
            f"Too many leaves for PyTreeDef; expected {expected}.")
      raise ValueError(
          f"Too few leaves for PyTreeDef; expected {expected}, got {len(leaves)}")
    spec = self._spec
    if spec is None:
      return leaves[0]
    builder = self._builder
    if builder is False:
      builder = self._builder = _compile_builder(spec, self.num_nodes) or True
    elif builder is None:
      self._builder = False
    if builder is None or builder is True:
      return _build(spec, iter(leaves).__next__)
    return builder(leaves)

  def flatten_up_to(self, tree):
    """The subtrees of ``tree`` found at this treedef's leaves."""
    if self._spec is None:
      return [tree]
    out = []
    _up_to_reversed(self._spec, tree, out)
    out.reverse()
    return out

  def children(self):
    """The treedefs of the root node's children."""
    if self._spec is None:
      return []
    return [_make_treedef(k) for k in self._spec[2]]

  def node_data(self):
    """``(type, metadata)`` of the root node, or None for a leaf."""
    if self._spec is None:
      return None
    return (self._spec[0].type, _node_data(self._spec))

  def compose(self, inner, /):
    """This treedef with every leaf replaced by ``inner``."""
    def sub(spec):
      if spec is None:
        return inner._spec
      kind, aux, kids = spec
      return (kind, aux, tuple([sub(k) for k in kids]))
    return _make_treedef(sub(self._spec), self.num_leaves * inner.num_leaves)

  def walk(self, f_node, f_leaf, leaves, /):
    """Folds the tree: ``f_node(child_results, node_data)`` at nodes."""
    nxt = iter(leaves).__next__
    leaf = (lambda x: x) if f_leaf is None else f_leaf

    def go(spec):
      if spec is None:
        return leaf(nxt())
      kind, aux, kids = spec
      data = kind.type if kind.flavor is _NAMEDTUPLE else _node_data(spec)
      return f_node(tuple([go(k) for k in kids]), data)
    return go(self._spec)

  def from_iterable_tree(self, tree, /):
    """Rebuilds with this structure, taking children by iterating ``tree``."""
    def go(spec, x):
      if spec is None:
        return x
      kind, aux, kids = spec
      xs = list(x)
      if len(xs) != len(kids):
        raise ValueError("Arity mismatch between trees")
      return kind.build(aux, [go(k, c) for k, c in zip(kids, xs)])
    return go(self._spec, tree)

  @staticmethod
  def from_node_data_and_children(registry, node_data, children):
    """Inverse of ``node_data()`` / ``children()``."""
    children = list(children)
    if node_data is None:
      return _make_treedef(None, 1)
    nodetype, data = node_data
    kind = _kind_for_type(nodetype)
    if kind is None:
      raise ValueError(f"Unknown custom type in from_node_data_and_children: "
                       f"{nodetype}")
    flavor = kind.flavor
    if flavor is _DICT:
      aux = tuple(data)
    elif flavor in (_TUPLE, _LIST, _NONE, _NAMEDTUPLE):
      aux = None
    else:
      aux = _Aux(data)
    return _make_treedef((kind, aux, tuple([c._spec for c in children])))

  def __eq__(self, other):
    if self is other:
      return True
    if type(other) is not PyTreeDef:
      return NotImplemented
    h1, h2 = self._hash, other._hash
    if h1 is not None and h2 is not None and h1 != h2:
      return False
    try:
      return self._spec == other._spec
    except Exception as e:
      raise ValueError(_EQ_ERROR) from e

  def __hash__(self):
    h = self._hash
    if h is None:
      h = self._hash = hash(self._spec)
    return h

  def __repr__(self):
    return f"PyTreeDef({_spec_repr(self._spec)})"

  __str__ = __repr__

  def __reduce__(self):
    return (_make_treedef, (self._spec,))


_object_new = object.__new__


def _make_treedef(spec, num_leaves=None):
  td = _object_new(PyTreeDef)
  td._spec = spec
  td._leaves = num_leaves
  td._nodes = None
  td._hash = None
  td._builder = None
  return td


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
  for kind in (_TUPLE_KIND, _LIST_KIND, _DICT_KIND, _NONE_KIND):
    _REGISTERED[kind.type] = _KINDS[kind.type] = kind
  _FLAT.update({tuple: _flat_tuple, list: _flat_list, dict: _flat_dict,
                _NoneType: _flat_none})
  _add_kind(_ORDERED_DICT_KIND)
  _add_kind(_DEFAULTDICT_KIND)
  register_pytree_node(
      Partial, lambda p: ((p.args, p.keywords), p.func),
      lambda func, children: Partial(func, *children[0], **children[1]))


_register_builtins()
