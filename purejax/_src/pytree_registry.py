"""The pytree node registry, flattening and rebuilding, and ``PyTreeDef``.

A treedef is stored as a nested "spec":

* a leaf is ``None``;
* a node is the tuple ``(kind, aux, kids)`` where ``kind`` is the ``_Kind``
  describing the node's type, ``aux`` its hashable metadata and ``kids`` the
  tuple of the children's specs.

Specs are plain tuples, so treedef equality and hashing run at C speed
(``tuple.__eq__`` / ``tuple.__hash__``).  Metadata of user-registered nodes may
be unhashable or compare strangely, so it is wrapped in ``_Aux``, whose hash is
a constant (as in JAX, a treedef's hash does not depend on node metadata).

The public functions built on this (``tree_flatten``, ``tree_map``,
``register_pytree_node``, ...) are in ``tree_util``.
"""
import collections
import functools
import itertools

from purejax._src.tree_keys import (
    DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey)

_NoneType = type(None)


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
  # tuple(x), not x: a namedtuple may override __len__ or __getitem__ (as
  # scipy.spatial.transform.Rotation does) without changing its fields.
  return _Kind(
      cls, _NAMEDTUPLE, lambda x: (tuple(x), None),
      lambda x: ([GetAttrKey(f) for f in fields], tuple(x), None),
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
    flat = _sequence_flattener(kind)  # its children are its items
    if t.__len__ is not tuple.__len__:
      # The class redefines len() (scipy.spatial.transform.Rotation does): count its fields.
      flat = functools.partial(_flat_as_tuple, flat)
    _FLAT[t] = flat
  return kind


def _flat_as_tuple(flat, x, leaves):
  return flat(tuple(x), leaves)


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
    if tuple.__len__(x) != n:
      raise ValueError(
          f"Named tuple arity mismatch: {tuple.__len__(x)} != {n}; tuple: {x!r}.")
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


# --------------------------------------------------------------------------
# Built-in node types
# --------------------------------------------------------------------------

def _register_builtins():
  for kind in (_TUPLE_KIND, _LIST_KIND, _DICT_KIND, _NONE_KIND):
    _REGISTERED[kind.type] = _KINDS[kind.type] = kind
  _FLAT.update({tuple: _flat_tuple, list: _flat_list, dict: _flat_dict,
                _NoneType: _flat_none})
  _add_kind(_ORDERED_DICT_KIND)
  _add_kind(_DEFAULTDICT_KIND)


_register_builtins()
