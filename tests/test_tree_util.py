"""Tests of the pytree library (purejax.tree_util and purejax.tree).

The last section compares against real JAX when it is installed.
"""
import collections
import dataclasses
import functools
import operator
import pathlib
import pickle
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np
import pytest

import purejax.tree as ptree
import purejax.tree_util as tu
from purejax._src import tree_util as tu_impl

Point = namedtuple("Point", ["x", "y"])
Other = namedtuple("Other", ["x", "y"])
Triple = namedtuple("Triple", ["a", "b", "c"])


class Box:
  """A custom node: children ``items``, metadata ``meta``."""

  def __init__(self, *items, meta=None):
    self.items, self.meta = items, meta

  def __repr__(self):
    return f"Box{self.items}"

  def __eq__(self, other):
    return (type(other) is Box and self.items == other.items
            and self.meta == other.meta)


def _box_flatten(b):
  return b.items, b.meta


def _box_unflatten(meta, children):
  return Box(*children, meta=meta)


class Keyed:
  """A custom node registered with keys (children named by attributes)."""

  def __init__(self, a, b):
    self.a, self.b = a, b

  def __eq__(self, other):
    return type(other) is Keyed and (self.a, self.b) == (other.a, other.b)


def _keyed_flatten_with_keys(k):
  return ((tu.GetAttrKey("a"), k.a), (tu.GetAttrKey("b"), k.b)), "keyed"


def _keyed_unflatten(aux, children):
  return Keyed(*children)


@tu.register_pytree_node_class
class Pair:
  def __init__(self, first, second, tag="t"):
    self.first, self.second, self.tag = first, second, tag

  def tree_flatten(self):
    return (self.first, self.second), self.tag

  @classmethod
  def tree_unflatten(cls, tag, children):
    return cls(*children, tag=tag)


@tu.register_pytree_with_keys_class
class Named:
  def __init__(self, value):
    self.value = value

  def tree_flatten_with_keys(self):
    return ((tu.DictKey("value"), self.value),), None

  @classmethod
  def tree_unflatten(cls, aux, children):
    return cls(*children)


@dataclasses.dataclass
class Params:
  w: object
  b: object
  name: str = ptree.static(default="dense")


@dataclasses.dataclass
class Explicit:
  x: object
  y: object
  z: object


class Plain:
  """Not a dataclass: registered with explicit fields."""

  def __init__(self, data, meta):
    self.data, self.meta = data, meta


@dataclasses.dataclass(frozen=True)
class Config:
  depth: int


tu.register_pytree_node(Box, _box_flatten, _box_unflatten)
tu.register_pytree_with_keys(Keyed, _keyed_flatten_with_keys, _keyed_unflatten)
tu.register_dataclass(Params)
tu.register_dataclass(Explicit, data_fields=["z", "x"], meta_fields=["y"])
tu.register_dataclass(Plain, data_fields=["data"], meta_fields=["meta"])
tu.register_static(Config)


def flat(tree, **kw):
  leaves, treedef = tu.tree_flatten(tree, **kw)
  return leaves, repr(treedef)


# --------------------------------------------------------------------------
# Flatten / unflatten
# --------------------------------------------------------------------------

@pytest.mark.parametrize("tree, leaves, text", [
    (1, [1], "PyTreeDef(*)"),
    (None, [], "PyTreeDef(None)"),
    ((), [], "PyTreeDef(())"),
    ([], [], "PyTreeDef([])"),
    ({}, [], "PyTreeDef({})"),
    ((1,), [1], "PyTreeDef((*,))"),
    ([1, (2, 3)], [1, 2, 3], "PyTreeDef([*, (*, *)])"),
    ([1, {"k1": 2, "k2": (3, 4)}, 5], [1, 2, 3, 4, 5],
     "PyTreeDef([*, {'k1': *, 'k2': (*, *)}, *])"),
    ({"b": 1, "a": 2}, [2, 1], "PyTreeDef({'a': *, 'b': *})"),
    ({1: "x", 0: "y"}, ["y", "x"], "PyTreeDef({0: *, 1: *})"),
    ([None, (None,)], [], "PyTreeDef([None, (None,)])"),
    (Point(1, [2]), [1, 2], "PyTreeDef(CustomNode(namedtuple[Point], [*, [*]]))"),
    (OrderedDict([("b", 1), ("a", 2)]), [1, 2],
     "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"),
    (defaultdict(list, {"b": 1, "a": 2}), [2, 1],
     "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a', 'b'))], [*, *]))"),
    (Box(1, (2,), meta="m"), [1, 2], "PyTreeDef(CustomNode(Box[m], [*, (*,)]))"),
    (Params(1, 2), [1, 2], "PyTreeDef(CustomNode(Params[('dense',)], [*, *]))"),
    (Explicit(1, 2, 3), [3, 1], "PyTreeDef(CustomNode(Explicit[(2,)], [*, *]))"),
    ([Config(2), 5], [5], "PyTreeDef([CustomNode(Config[Config(depth=2)], []), *])"),
    (tu.Partial(print, 1, k=2), [1, 2],
     "PyTreeDef(CustomNode(Partial[<built-in function print>], [(*,), {'k': *}]))"),
    ("text", ["text"], "PyTreeDef(*)"),
])
def test_flatten_leaves_and_repr(tree, leaves, text):
  got_leaves, treedef = tu.tree_flatten(tree)
  assert got_leaves == leaves
  assert repr(treedef) == text
  assert str(treedef) == text
  assert tu.tree_leaves(tree) == leaves
  assert tu.tree_structure(tree) == treedef
  assert treedef.num_leaves == len(leaves)


@pytest.mark.parametrize("tree", [
    None, 1, (), [1, (2, None)], {"b": [1], "a": (2, {"c": 3})},
    Point(1, Point(2, 3)), OrderedDict([("z", 1), ("a", [2])]),
    Box(1, Box(2, meta=1), meta="m"), Params([1], {"a": 2}, name="x"),
    Explicit(1, 2, 3), Keyed(1, (2, 3)), [Config(3), 1],
])
def test_unflatten_round_trip(tree):
  leaves, treedef = tu.tree_flatten(tree)
  # Three times: the interpreted rebuild, then the compiled builder.
  for _ in range(3):
    assert tu.tree_unflatten(treedef, leaves) == tree
  assert treedef.unflatten(iter(leaves)) == tree


def test_unflatten_puts_new_leaves_in_place():
  treedef = tu.tree_structure({"b": (1, 2), "a": [3]})
  for _ in range(3):
    assert treedef.unflatten(["A", "B", "C"]) == {"a": ["A"], "b": ("B", "C")}


def test_dict_unflatten_uses_sorted_key_order():
  out = tu.tree_map(lambda x: x, {"b": 1, "a": 2})
  assert list(out) == ["a", "b"]


def test_ordered_dict_keeps_insertion_order():
  tree = OrderedDict([("b", 1), ("a", 2)])
  assert tu.tree_leaves(tree) == [1, 2]
  out = tu.tree_map(lambda x: x * 10, tree)
  assert type(out) is OrderedDict and list(out.items()) == [("b", 10), ("a", 20)]


def test_defaultdict_keeps_default_factory():
  out = tu.tree_map(lambda x: x + 1, defaultdict(list, {"b": 1, "a": 2}))
  assert type(out) is defaultdict and out.default_factory is list
  assert dict(out) == {"a": 3, "b": 2}
  assert out["missing"] == []


def test_namedtuple_round_trip_keeps_type():
  out = tu.tree_map(lambda x: -x, Point(1, 2))
  assert type(out) is Point and out == Point(-1, -2)


def test_none_is_an_empty_subtree_not_a_leaf():
  assert tu.tree_leaves([None, 1, {"a": None}]) == [1]
  treedef = tu.tree_structure(None)
  assert treedef.num_leaves == 0 and treedef.num_nodes == 1
  assert tu.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]
  assert tu.tree_unflatten(treedef, []) is None


def test_subclasses_of_builtin_containers_are_leaves():
  class MyList(list):
    pass

  class MyDict(dict):
    pass

  class MyTuple(tuple):
    pass
  for x in (MyList([1]), MyDict(a=1), MyTuple((1, 2))):
    assert tu.tree_leaves(x) == [x]


def test_tuple_subclass_with_fields_is_a_namedtuple():
  class Fielded(tuple):
    _fields = ("a", "b")
  leaves, treedef = tu.tree_flatten(Fielded((1, 2)))
  assert leaves == [1, 2]
  assert repr(treedef) == "PyTreeDef(CustomNode(namedtuple[Fielded], [*, *]))"


def test_mixed_dict_keys_raise():
  with pytest.raises(ValueError, match="Comparator raised exception while "
                     "sorting pytree dictionary keys."):
    tu.tree_flatten({1: 2, "a": 3})


def test_leaf_types_are_remembered_but_registration_wins():
  class Late:
    def __init__(self, v):
      self.v = v
  assert tu.tree_leaves([Late(1), Late(2), Late(3), Late(4), Late(5)])[0].v == 1
  tu.register_pytree_node(Late, lambda x: ((x.v,), None),
                          lambda _, c: Late(*c))
  assert tu.tree_leaves([Late(1), Late(2), Late(3), Late(4), Late(5)]) == [
      1, 2, 3, 4, 5]
  assert tu.tree_leaves({"a": Late(7)}) == [7]


def test_long_containers_of_leaves():
  arrays = [np.full(2, i) for i in range(10)]
  leaves, treedef = tu.tree_flatten({f"k{i}": a for i, a in enumerate(arrays)})
  assert [int(a[0]) for a in leaves] == list(range(10))
  assert treedef.num_leaves == 10
  assert tu.tree_leaves(tuple(arrays) + (None,)) == arrays


def test_deep_tree_falls_back_from_compiled_builder():
  tree = 1
  for _ in range(200):
    tree = [tree]
  treedef = tu.tree_structure(tree)
  assert treedef.num_nodes == 201
  for _ in range(3):
    assert treedef.unflatten([2]) == tu.tree_map(lambda x: 2, tree)


def test_unflatten_wrong_number_of_leaves():
  treedef = tu.tree_structure([1, (2, [3])])
  with pytest.raises(ValueError, match=r"^Too few leaves for PyTreeDef; "
                     r"expected 3, got 1$"):
    treedef.unflatten([1])
  with pytest.raises(ValueError, match=r"^Too many leaves for PyTreeDef; "
                     r"expected 3\.$"):
    tu.tree_unflatten(treedef, [1, 2, 3, 4])
  with pytest.raises(TypeError):
    treedef.unflatten(3)


def test_pytreedef_has_no_public_constructor():
  with pytest.raises(TypeError, match="no constructor defined"):
    tu.PyTreeDef()


# --------------------------------------------------------------------------
# is_leaf
# --------------------------------------------------------------------------

def test_is_leaf_stops_descent_and_sees_every_node_in_order():
  seen = []

  def is_leaf(x):
    seen.append(x)
    return isinstance(x, tuple)
  leaves, treedef = tu.tree_flatten([1, (None, 2), {"b": 3, "a": 4}],
                                    is_leaf=is_leaf)
  assert leaves == [1, (None, 2), 4, 3]
  assert repr(treedef) == "PyTreeDef([*, *, {'a': *, 'b': *}])"
  assert seen == [[1, (None, 2), {"b": 3, "a": 4}], 1, (None, 2),
                  {"b": 3, "a": 4}, 4, 3]


def test_is_leaf_can_keep_none():
  assert tu.tree_leaves([1, None], is_leaf=lambda x: x is None) == [1, None]
  assert tu.tree_map(lambda x: "n" if x is None else x, [1, None],
                     is_leaf=lambda x: x is None) == [1, "n"]


def test_is_leaf_returning_none_means_false():
  assert tu.tree_leaves([1, [2]], is_leaf=lambda x: None) == [1, 2]


@pytest.mark.parametrize("bad", [1, np.bool_(True), [1]])
def test_is_leaf_must_return_a_bool(bad):
  with pytest.raises(ValueError, match="is_leaf predicate returned a "
                     "non-boolean value .*; expected a boolean"):
    tu.tree_flatten([1], is_leaf=lambda x: bad)


# --------------------------------------------------------------------------
# PyTreeDef
# --------------------------------------------------------------------------

def test_treedef_counts_children_and_node_data():
  treedef = tu.tree_structure([1, {"b": None, "a": (2, 3)}])
  assert treedef.num_leaves == 3
  assert treedef.num_nodes == 7
  assert [repr(c) for c in treedef.children()] == [
      "PyTreeDef(*)", "PyTreeDef({'a': (*, *), 'b': None})"]
  assert tu.treedef_children(treedef) == treedef.children()
  assert treedef.node_data() == (list, None)
  assert treedef.children()[1].node_data() == (dict, ["a", "b"])
  assert tu.tree_structure(1).node_data() is None
  assert tu.tree_structure(1).children() == []


@pytest.mark.parametrize("tree, data", [
    (None, (type(None), None)),
    ((1,), (tuple, None)),
    (Point(1, 2), (Point, None)),
    (OrderedDict(b=1), (OrderedDict, ("b",))),
    (defaultdict(int, a=1), (defaultdict, (int, ("a",)))),
    (Box(1, meta="m"), (Box, "m")),
    (Params(1, 2), (Params, ("dense",))),
])
def test_node_data(tree, data):
  assert tu.tree_structure(tree).node_data() == data


def test_from_node_data_and_children_inverts_node_data():
  for tree in ([1, (2, 3)], {"a": 1, "b": [2]}, Point(1, 2), Box(1, 2, meta=3)):
    treedef = tu.tree_structure(tree)
    rebuilt = tu.PyTreeDef.from_node_data_and_children(
        tu.default_registry, treedef.node_data(), treedef.children())
    assert rebuilt == treedef
  leaf = tu.PyTreeDef.from_node_data_and_children(tu.default_registry, None, [])
  assert repr(leaf) == "PyTreeDef(*)"


def test_treedef_equality_and_hash():
  a = tu.tree_structure({"x": [1, 2], "y": (3,)})
  b = tu.tree_structure({"x": ["p", "q"], "y": ("r",)})
  assert a == b and hash(a) == hash(b)
  assert not (a != b)
  assert a != tu.tree_structure({"x": [1, 2], "z": (3,)})
  assert a != tu.tree_structure({"x": (1, 2), "y": (3,)})
  assert tu.tree_structure([1]) != tu.tree_structure((1,))
  assert tu.tree_structure([1]) != 3
  assert tu.tree_structure({1: 0}) == tu.tree_structure({1.0: 0})
  assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Other(1, 2))
  assert tu.tree_structure(Box(1, meta="a")) != tu.tree_structure(Box(1, meta="b"))
  assert len({a, b, tu.tree_structure([1])}) == 2


def test_treedef_hash_ignores_unhashable_metadata():
  a = tu.tree_structure(Box(1, meta={"lr": 0.1}))
  b = tu.tree_structure(Box(2, meta={"lr": 0.1}))
  assert hash(a) == hash(b) and a == b
  assert a != tu.tree_structure(Box(1, meta={"lr": 0.2}))


def test_treedef_equality_with_array_metadata_raises_like_jax():
  a = tu.tree_structure(Box(1, meta=np.arange(2)))
  b = tu.tree_structure(Box(1, meta=np.arange(2)))
  with pytest.raises(ValueError, match="Exception raised while checking "
                     "equality of metadata fields of pytree"):
    _ = a == b
  assert a == a  # the same object is equal without comparing arrays


def test_treedef_pickles():
  treedef = tu.tree_structure([1, {"a": Point(1, None)}, OrderedDict(z=1),
                               Box(1, meta="m"), Params(1, 2)])
  again = pickle.loads(pickle.dumps(treedef))
  assert again == treedef and repr(again) == repr(treedef)
  assert again.unflatten(range(6))[1] == {"a": Point(1, None)}


def test_compose():
  outer = tu.tree_structure([1, (1, None)])
  inner = tu.tree_structure({"a": 1, "b": None})
  composed = outer.compose(inner)
  assert repr(composed) == ("PyTreeDef([{'a': *, 'b': None}, "
                            "({'a': *, 'b': None}, None)])")
  assert composed.num_leaves == 2
  assert repr(tu.tree_structure(None).compose(inner)) == "PyTreeDef(None)"


def test_walk():
  treedef = tu.tree_structure({"b": 1, "a": [2, None]})
  out = treedef.walk(lambda kids, data: (kids, data), lambda x: x * 10, [1, 2])
  assert out == ((((10, ((), None)), None), 20), ["a", "b"])
  assert tu.tree_structure(Point(1, 2)).walk(
      lambda kids, data: (kids, data), None, [1, 2]) == ((1, 2), Point)


def test_from_iterable_tree():
  treedef = tu.tree_structure([1, (1, 1)])
  assert treedef.from_iterable_tree(([5], (6, [7, 8]))) == [[5], (6, [7, 8])]


def test_flatten_up_to():
  treedef = tu.tree_structure([1, (2, 3)])
  assert treedef.flatten_up_to([[1], ({"a": 2}, None)]) == [[1], {"a": 2}, None]
  assert tu.tree_structure(None).flatten_up_to(None) == []
  assert tu.tree_structure(1).flatten_up_to((1, 2)) == [(1, 2)]


@pytest.mark.parametrize("prefix, full, message", [
    ([1, 2], [1], "List arity mismatch: 1 != 2; list: [1]."),
    ([1, 2], (1, 2), "Expected list, got (1, 2)."),
    ((1, (2, 3)), (1, (2,)), "Tuple arity mismatch: 1 != 2; tuple: (2,)."),
    ({"a": 1}, {"b": 1},
     "Dict key mismatch; expected keys: ['a']; present keys: ['b']."),
    ({"a": 1}, OrderedDict(a=1), "Expected dict, got OrderedDict([('a', 1)])."),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Point(1, 2), Other(1, 2), "Named tuple type mismatch: expected type: "
     "<class 'test_tree_util.Point'>, tuple: Other(x=1, y=2)."),
    (Point(1, 2), Triple(1, 2, 3),
     "Named tuple arity mismatch: 3 != 2; tuple: Triple(a=1, b=2, c=3)."),
    (OrderedDict(a=1), {"a": 1}, "Custom node type mismatch: expected type: "
     "<class 'collections.OrderedDict'>, value: {'a': 1}."),
    (OrderedDict(a=1), OrderedDict(b=1), "Mismatch custom node data: ('a',) != "
     "('b',); value: OrderedDict([('b', 1)])."),
    (Box(1, 2, meta="a"), Box(1, meta="a"),
     "Custom type arity mismatch: 1 != 2; value: Box(1,)."),
    (Params(1, 2), Params(1, 2, name="x"), "Mismatch custom dataclass node "
     "data: ('dense',) != ('x',); value: Params(w=1, b=2, name='x')."),
    (Params(1, 2), (1, 2), "Custom dataclass node type mismatch: expected "
     "type: <class 'test_tree_util.Params'>, value: (1, 2)."),
    # With several mismatches, the last one is reported (as in JAX).
    ([[1], [2]], [3, 4], "Expected list, got 4."),
])
def test_flatten_up_to_errors(prefix, full, message):
  with pytest.raises(ValueError) as info:
    tu.tree_structure(prefix).flatten_up_to(full)
  assert str(info.value) == message


def test_flatten_up_to_none_error_explains_the_old_behaviour():
  with pytest.raises(ValueError) as info:
    tu.tree_structure((1, None)).flatten_up_to((1, 2))
  assert str(info.value).startswith("Expected None, got 2.\n\nIn previous "
                                    "releases of JAX, flatten-up-to")


def test_treedef_helpers():
  assert tu.treedef_is_leaf(tu.tree_structure(1))
  assert tu.treedef_is_leaf(tu.tree_structure(None))
  assert tu.treedef_is_leaf(tu.tree_structure(()))
  assert not tu.treedef_is_leaf(tu.tree_structure([1]))
  tup = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, 2]),
                          tu.tree_structure(None)])
  assert repr(tup) == "PyTreeDef((*, [*, *], None))"
  assert tup.unflatten([1, 2, 3]) == (1, [2, 3], None)
  assert repr(tu.treedef_tuple(())) == "PyTreeDef(())"
  with pytest.raises(TypeError):
    tu.treedef_tuple([1])


# --------------------------------------------------------------------------
# Keys and paths
# --------------------------------------------------------------------------

@pytest.mark.parametrize("key, text_repr, text_str, simple", [
    (tu.SequenceKey(1), "SequenceKey(idx=1)", "[1]", "1"),
    (tu.DictKey("a"), "DictKey(key='a')", "['a']", "a"),
    (tu.DictKey(None), "DictKey(key=None)", "[None]", "None"),
    (tu.DictKey((1, "a")), "DictKey(key=(1, 'a'))", "[(1, 'a')]", "(1, 'a')"),
    (tu.GetAttrKey("foo"), "GetAttrKey(name='foo')", ".foo", "foo"),
    (tu.FlattenedIndexKey(3), "FlattenedIndexKey(key=3)", "[<flat index 3>]",
     "3"),
])
def test_key_reprs(key, text_repr, text_str, simple):
  assert repr(key) == text_repr
  assert str(key) == text_str
  assert tu.keystr((key,)) == text_str
  assert tu.keystr((key,), simple=True) == simple
  assert tu.keystr((key, key), simple=True, separator="/") == f"{simple}/{simple}"


def test_key_equality_hash_match_and_pickle():
  assert tu.SequenceKey(1) == tu.SequenceKey(1)
  assert tu.SequenceKey(1) != tu.DictKey(1)
  assert tu.DictKey(1) != tu.FlattenedIndexKey(1)
  assert tu.SequenceKey(1) != 1
  assert len({tu.DictKey("a"), tu.DictKey("a"), tu.GetAttrKey("a")}) == 2
  assert tu.SequenceKey(np.int64(3)).idx == 3
  assert tu.DictKey("k").key == "k" and tu.GetAttrKey("n").name == "n"
  assert tu.FlattenedIndexKey(2).key == 2
  match tu.SequenceKey(3):
    case tu.SequenceKey(idx=i):
      assert i == 3
  match tu.DictKey("z"):
    case tu.DictKey(k):
      assert k == "z"
  for key in (tu.SequenceKey(1), tu.DictKey("a"), tu.GetAttrKey("b"),
              tu.FlattenedIndexKey(0)):
    assert pickle.loads(pickle.dumps(key)) == key


def test_keys_are_immutable_and_typed():
  with pytest.raises(AttributeError):
    tu.SequenceKey(1).idx = 2
  with pytest.raises(TypeError):
    tu.SequenceKey("a")
  with pytest.raises(TypeError):
    tu.GetAttrKey(1)
  with pytest.raises(TypeError):
    tu.FlattenedIndexKey("a")
  with pytest.raises(TypeError):
    hash(tu.DictKey([1]))


def test_keystr_forms():
  path = (tu.DictKey("a"), tu.SequenceKey(0), tu.GetAttrKey("x"))
  assert tu.keystr(path) == "['a'][0].x"
  assert tu.keystr(path, separator="/") == "['a']/[0]/.x"
  assert tu.keystr(path, simple=True, separator="/") == "a/0/x"
  assert tu.keystr(()) == ""
  assert tu.keystr(("a", 1)) == "a1"
  with pytest.raises(TypeError):
    tu.keystr(path, True, "/")


def test_flatten_with_path():
  tree = [1, {"k1": 2, "k2": (3,)}, Point(5, [6]), OrderedDict(b=7, a=8),
          defaultdict(list, z=9), None, tu.Partial(print, 10, k=11),
          Params(12, 13), Keyed(14, 15), Box(16, meta=0)]
  pairs, treedef = tu.tree_flatten_with_path(tree)
  assert treedef == tu.tree_structure(tree)
  assert [leaf for _, leaf in pairs] == list(range(1, 4)) + list(range(5, 17))
  assert [tu.keystr(p) for p, _ in pairs] == [
      "[0]", "[1]['k1']", "[1]['k2'][0]", "[2].x", "[2].y[0]", "[3]['b']",
      "[3]['a']", "[4]['z']", "[6][<flat index 0>][0]",
      "[6][<flat index 1>]['k']", "[7].w", "[7].b", "[8].a", "[8].b",
      "[9][<flat index 0>]"]
  assert tu.tree_leaves_with_path(tree) == pairs
  assert tu.tree_flatten_with_path(5) == ([((), 5)], tu.tree_structure(5))


def test_flatten_with_path_is_leaf():
  tree = [1, (2,), [(3,)]]
  pairs = tu.tree_leaves_with_path(tree, is_leaf=lambda x: isinstance(x, tuple))
  assert [(tu.keystr(p), x) for p, x in pairs] == [
      ("[0]", 1), ("[1]", (2,)), ("[2][0]", (3,))]
  seen = []
  pairs = tu.tree_leaves_with_path(
      tree, is_leaf=lambda p, x: seen.append(p) or len(p) == 1,
      is_leaf_takes_path=True)
  assert [x for _, x in pairs] == [1, (2,), [(3,)]]
  assert seen[0] == ()


def test_map_with_path():
  out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y),
                              {"a": [1, 2]}, {"a": [10, 20]})
  assert out == {"a": [("['a'][0]", 11), ("['a'][1]", 22)]}
  out = ptree.map_with_path(lambda p, x: len(p), [1, (2,)],
                            is_leaf=lambda p, x: isinstance(x, tuple),
                            is_leaf_takes_path=True)
  assert out == [1, 1]


def test_keyed_class_registration():
  pairs, treedef = tu.tree_flatten_with_path(Named(3))
  assert pairs == [((tu.DictKey("value"),), 3)]
  assert repr(treedef) == "PyTreeDef(CustomNode(Named[None], [*]))"
  assert tu.tree_map(lambda x: x + 1, Named(3)).value == 4


# --------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------

def test_register_pytree_node_class():
  out = tu.tree_map(lambda x: x * 2, Pair(1, [2], tag="z"))
  assert (out.first, out.second, out.tag) == (2, [4], "z")
  assert repr(tu.tree_structure(Pair(1, 2))) == (
      "PyTreeDef(CustomNode(Pair[t], [*, *]))")


def test_unflatten_func_receives_a_tuple():
  got = []

  class Spy:
    pass
  tu.register_pytree_node(Spy, lambda s: ([1, 2], None),
                          lambda aux, kids: got.append(kids) or Spy())
  tu.tree_map(lambda x: x, Spy())
  assert got == [(1, 2)]


def test_duplicate_registration():
  with pytest.raises(ValueError, match=r"Duplicate custom PyTreeDef type "
                     r"registration for <class 'test_tree_util.Box'>\."):
    tu.register_pytree_node(Box, _box_flatten, _box_unflatten)
  for builtin in (list, tuple, dict, type(None), OrderedDict, defaultdict):
    with pytest.raises(ValueError, match="Duplicate custom PyTreeDef"):
      tu.register_pytree_node(builtin, lambda x: ((), None), lambda a, c: None)
  with pytest.raises(ValueError, match="Duplicate custom dataclass PyTreeDef "
                     "type registration"):
    tu.register_dataclass(Params)


def test_bad_flatten_results():
  class Bad:
    pass

  class Bad2:
    pass
  tu.register_pytree_node(Bad, lambda x: 5, lambda a, c: Bad())
  tu.register_pytree_node(Bad2, lambda x: (5, None), lambda a, c: Bad2())
  with pytest.raises(ValueError, match=r"should return a \(children, "
                     r"aux_data\) tuple, got 5"):
    tu.tree_flatten(Bad())
  with pytest.raises(ValueError, match="where 'children' is iterable"):
    tu.tree_flatten(Bad2())


def test_generator_children_are_accepted():
  class Gen:
    def __init__(self, *a):
      self.a = a
  tu.register_pytree_node(Gen, lambda g: ((x for x in g.a), None),
                          lambda aux, c: Gen(*c))
  assert tu.tree_leaves(Gen(1, 2)) == [1, 2]


def test_register_dataclass_plain_and_static():
  p = Params(np.ones(2), np.zeros(2), name="layer")
  leaves, treedef = tu.tree_flatten(p)
  assert len(leaves) == 2
  assert repr(treedef) == "PyTreeDef(CustomNode(Params[('layer',)], [*, *]))"
  out = treedef.unflatten([1, 2])
  assert out == Params(1, 2, name="layer")
  assert [tu.keystr(k) for k, _ in tu.tree_leaves_with_path(p)] == [".w", ".b"]


def test_register_dataclass_explicit_fields_order():
  leaves, treedef = tu.tree_flatten(Explicit(1, 2, 3))
  assert leaves == [3, 1]
  assert treedef.unflatten(["z", "x"]) == Explicit("x", 2, "z")


def test_register_dataclass_on_a_plain_class():
  out = tu.tree_map(lambda x: x + 1, Plain(1, "m"))
  assert (out.data, out.meta) == (2, "m")


def test_register_dataclass_drop_fields():
  @dataclasses.dataclass
  class Dropped:
    a: int
    b: int = 0
  tu.register_dataclass(Dropped, data_fields=["a"], meta_fields=[],
                        drop_fields=["b"])
  assert tu.tree_leaves(Dropped(1, 5)) == [1]
  assert tu.tree_map(lambda x: x, Dropped(1, 5)) == Dropped(1, 0)


def test_register_dataclass_errors():
  @dataclasses.dataclass
  class D:
    a: int
    b: int

  class NotDC:
    pass
  with pytest.raises(TypeError, match="data_fields and meta_fields are "
                     "required when nodetype is not a dataclass"):
    tu.register_dataclass(NotDC)
  with pytest.raises(TypeError, match="must both be specified when either "
                     "is specified"):
    tu.register_dataclass(D, data_fields=["a"])
  with pytest.raises(ValueError, match=r"Missing fields: \{'b'\}\. Add them "
                     "to drop_fields"):
    tu.register_dataclass(D, data_fields=["a"], meta_fields=[])
  with pytest.raises(ValueError, match=r"Unexpected fields: \{'c'\}"):
    tu.register_dataclass(D, data_fields=["a", "b"], meta_fields=["c"])
  with pytest.raises(ValueError, match=r"must not overlap. Overlapping "
                     r"fields: \{'a'\}"):
    tu.register_dataclass(D, data_fields=["a"], meta_fields=["a", "b"])

  @dataclasses.dataclass
  class NoInit:
    a: int
    b: int = dataclasses.field(init=False, default=0)
  with pytest.raises(ValueError, match=r"Unexpected fields: \{'b'\}"):
    tu.register_dataclass(NoInit)


def test_register_dataclass_returns_the_class():
  @dataclasses.dataclass
  class R:
    x: int
  assert tu.register_dataclass(R) is R


def test_register_static():
  leaves, treedef = tu.tree_flatten([Config(1), 2])
  assert leaves == [2]
  assert treedef.unflatten([3]) == [Config(1), 3]
  assert treedef == tu.tree_structure([Config(1), 0])
  assert treedef != tu.tree_structure([Config(2), 0])
  assert tu.register_static(type("S", (), {})).__name__ == "S"


def test_static_field_metadata():
  field = ptree.static(default=3, metadata={"x": 1})
  assert dict(field.metadata) == {"static": True, "x": 1}
  assert field.default == 3
  assert dict(ptree.static().metadata) == {"static": True}


def test_is_tree_node_and_one_level():
  assert tu.is_tree_node(list) and tu.is_tree_node(type(None))
  assert tu.is_tree_node(Point) and tu.is_tree_node(Box)
  assert not tu.is_tree_node(int) and not tu.is_tree_node([1])
  assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
  assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
  assert tu.flatten_one_level(None) == ((), None)
  assert tu.flatten_one_level(Box(1, meta="m")) == ((1,), "m")
  assert tu.flatten_one_level_with_keys([5]) == (((tu.SequenceKey(0), 5),), None)
  assert tu.flatten_one_level_with_keys(Point(1, 2))[0] == [
      (tu.GetAttrKey("x"), 1), (tu.GetAttrKey("y"), 2)]
  with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
    tu.flatten_one_level(1)


def test_default_registry():
  reg = tu.default_registry
  leaves, treedef = reg.flatten([1, (2,)])
  assert leaves == [1, 2] and treedef == tu.tree_structure([1, (2,)])
  assert reg.flatten([1, (2,)], lambda x: isinstance(x, tuple))[0] == [1, (2,)]
  assert reg.flatten_one_level(1) is None
  assert reg.flatten_one_level([1, 2]) == ([1, 2], None)
  assert reg.is_node(list) and not reg.is_node(int)


# --------------------------------------------------------------------------
# Map, reduce, transpose, broadcast
# --------------------------------------------------------------------------

def test_tree_map_multiple_trees_and_prefix_leaves():
  assert tu.tree_map(lambda x, y: x + y, [1, {"a": 2}], [10, {"a": 20}]) == [
      11, {"a": 22}]
  # Leaves of the first tree may be whole subtrees of the others.
  assert tu.tree_map(lambda x, y: (x, y), [1, 2], [[3], (4, 5)]) == [
      (1, [3]), (2, (4, 5))]
  assert tu.tree_map(lambda x, y: x, (1, 2), (1, None)) == (1, 2)


def test_tree_map_is_leaf_applies_to_first_tree():
  out = tu.tree_map(lambda x, y: (x, y), [1, (1, 2)], [1, (2,)],
                    is_leaf=lambda x: isinstance(x, tuple))
  assert out == [(1, 1), ((1, 2), (2,))]


def _error(fn, *args, **kwargs):
  with pytest.raises(ValueError) as info:
    fn(*args, **kwargs)
  return str(info.value)


def test_tree_map_error_different_lengths():
  msg = _error(tu.tree_map, lambda x, y: x, [1, 2], [1, 2, 3])
  assert msg == (
      "pytree structure error: different lengths of list at key path\n"
      "    tree_map tree\n"
      "At that key path, the prefix pytree tree_map tree has a subtree of type "
      "list of length 2, but the full pytree has a subtree of the same type "
      "but of length 3.")


def test_tree_map_error_different_types_with_key_path():
  msg = _error(tu.tree_map, lambda x, y: x, {"a": [1, None]}, {"a": [1, 2]})
  assert msg == (
      "pytree structure error: different types at key path\n"
      "    tree_map tree['a'][1]\n"
      "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
      "    <class 'NoneType'>\n"
      "but at the same key path the full pytree has a subtree of different type\n"
      "    <class 'int'>.")


def test_tree_map_error_different_children():
  msg = _error(tu.tree_map, lambda x, y: x, {"a": 1, "b": 2}, {"a": 1})
  assert msg == (
      "pytree structure error: different numbers of pytree children at key path\n"
      "    tree_map tree\n"
      "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
      "    <class 'dict'>\n"
      "with 2 child keys\n"
      "    a b\n"
      "but at the same key path the full pytree has a subtree of the same type "
      "but with 1 child keys\n"
      "    a\n"
      "so the symmetric difference on key sets is\n"
      "    b")


def test_tree_map_error_different_metadata():
  msg = _error(tu.tree_map, lambda x, y: x, Box(1, meta="a"), Box(1, meta="b"))
  assert msg == (
      "pytree structure error: different pytree metadata at key path\n"
      "    tree_map tree\n"
      "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
      "    <class 'test_tree_util.Box'>\n"
      "with metadata\n"
      "    a\n"
      "but at the same key path the full pytree has a subtree of the same type "
      "but with metadata\n"
      "    b\n"
      "so the diff in the metadata at these pytree nodes is\n"
      "    - a\n"
      "    + b")


def test_tree_map_error_names():
  assert "tree_map tree[1]" in _error(ptree.map, lambda *a: a, (1, [2]), (1, [2, 3]))
  msg = _error(ptree.map_with_path, lambda *a: a, [1], [1, 2])
  assert "    tree_map_with_path tree\n" in msg
  msg = _error(ptree.broadcast, [1, 2, 3], [1, 2])
  assert "    broadcast_prefix prefix_tree\n" in msg
  assert "curly {braces}" in _error(
      tu.tree_map, lambda *a: a, {"curly {braces}": [1]},
      {"curly {braces}": [1, 2]})


def test_tree_reduce():
  assert tu.tree_reduce(operator.add, [1, 2, (3,)]) == 6
  assert tu.tree_reduce(operator.add, [1, 2, (3,)], 10) == 16
  assert tu.tree_reduce(operator.add, [], None) is None
  assert tu.tree_reduce(lambda a, b: a + b, [(1,), (2,)],
                        is_leaf=lambda x: isinstance(x, tuple)) == (1, 2)
  with pytest.raises(TypeError, match="reduce"):
    tu.tree_reduce(operator.add, [])


def test_tree_reduce_associative():
  show = lambda a, b: f"({a}+{b})"
  assert tu.tree_reduce_associative(show, [1, 2, 3, 4, 5]) == "((1+2)+(3+(4+5)))"
  assert ptree.reduce_associative(operator.add, [], identity=0) == 0
  assert ptree.reduce_associative(operator.add, [3], identity=0) == 3
  with pytest.raises(TypeError, match="Must specify identity for parallel "
                     "reduction of empty sequence."):
    tu.tree_reduce_associative(operator.add, [])


def test_tree_all_and_all_leaves():
  assert tu.tree_all([1, True, (np.array(1),)])
  assert not tu.tree_all([1, 0])
  assert tu.tree_all([]) and tu.tree_all([None])
  assert tu.tree_all([(0,)], is_leaf=lambda x: isinstance(x, tuple))
  assert tu.all_leaves([1, 2, np.zeros(2)])
  assert not tu.all_leaves([1, (2,)])
  assert not tu.all_leaves([1, None])
  assert tu.all_leaves([(1,)], is_leaf=lambda x: isinstance(x, tuple))
  assert not tu.all_leaves([(1,)], is_leaf=lambda x: False)


def test_tree_transpose():
  outer = tu.tree_structure([1, 1])
  inner = tu.tree_structure((1, 1))
  assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
  assert tu.tree_transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
  assert tu.tree_transpose(tu.tree_structure({"a": 1}), None,
                           {"a": {"x": 1, "y": 2}}) == {"x": {"a": 1},
                                                         "y": {"a": 2}}
  with pytest.raises(TypeError) as info:
    tu.tree_transpose(outer, inner, [(1, 2), (3, 4, 5)])
  assert str(info.value) == ("Mismatch\nPyTreeDef([(*, *), (*, *, *)])\n != \n"
                             "PyTreeDef([(*, *), (*, *)])")


def test_tree_broadcast():
  assert tu.tree_broadcast([1, {"a": 2}], [(1, 2), {"a": [3, 4]}]) == [
      (1, 1), {"a": [2, 2]}]
  assert ptree.broadcast(1, [1, [2]]) == [1, [1]]
  assert tu.tree_broadcast([1, (2,)], [1, [2]],
                           is_leaf=lambda x: isinstance(x, tuple)) == [1, [(2,)]]
  msg = _error(tu.tree_broadcast, None, [1])
  assert "<class 'NoneType'>" in msg


# --------------------------------------------------------------------------
# Partial and the public modules
# --------------------------------------------------------------------------

def test_partial_is_a_pytree():
  p = tu.Partial(operator.add, 1)
  assert p(2) == 3
  doubled = tu.tree_map(lambda x: x * 2, p)
  assert isinstance(doubled, tu.Partial) and doubled(2) == 4
  assert isinstance(p, functools.partial)
  assert repr(tu.Partial(print, 1, k=2)) == "Partial(<built-in function print>, 1, k=2)"


def test_partial_of_partial_is_kept_whole():
  inner = tu.Partial(operator.sub, 10)
  outer = tu.Partial(inner, 3)
  assert outer() == 7
  assert outer.args == (3,)
  assert repr(outer.func) == ("_HashableCallableShim(Partial(<built-in "
                              "function sub>, 10))")
  assert tu.tree_leaves(outer) == [3]


def test_public_names():
  expected_tree = {"all", "broadcast", "flatten", "flatten_with_path", "leaves",
                   "leaves_with_path", "map", "map_with_path", "reduce",
                   "reduce_associative", "static", "structure", "transpose",
                   "unflatten"}
  assert expected_tree <= set(dir(ptree))
  assert ptree.map is tu.tree_map and ptree.all is tu.tree_all
  for name in tu_impl.__all__:
    assert hasattr(tu, name), name


def test_tree_module_functions():
  leaves, treedef = ptree.flatten({"a": [1, 2]})
  assert ptree.unflatten(treedef, leaves) == {"a": [1, 2]}
  assert ptree.leaves([1, (2,)]) == [1, 2]
  assert ptree.structure([1]) == tu.tree_structure([0])
  assert ptree.reduce(operator.mul, [2, 3]) == 6
  assert ptree.all([1, 1]) and not ptree.all([1, 0])
  assert ptree.transpose(ptree.structure([1, 1]), None, [(1, 2), (3, 4)]) == (
      [1, 3], [2, 4])
  assert ptree.flatten_with_path([7])[0] == [((tu.SequenceKey(0),), 7)]
  assert ptree.leaves_with_path({"a": 1}) == [((tu.DictKey("a"),), 1)]


def test_implementation_never_imports_jax():
  root = pathlib.Path(tu_impl.__file__).parents[1]
  for path in (root / "_src" / "tree_util.py", root / "tree_util.py",
               root / "tree.py"):
    lines = path.read_text().splitlines()
    assert not [ln for ln in lines
                if ln.strip().startswith(("import jax", "from jax"))], path


# --------------------------------------------------------------------------
# Oracle: compare with real JAX
# --------------------------------------------------------------------------

_REGISTERED_WITH_JAX = []


@pytest.fixture
def jax():
  jax = pytest.importorskip("jax")
  if not _REGISTERED_WITH_JAX:
    jtu = jax.tree_util
    jtu.register_pytree_node(Box, _box_flatten, _box_unflatten)
    # The keyed nodes must make JAX's key objects for JAX.
    jtu.register_pytree_with_keys(
        Keyed, lambda k: (((jtu.GetAttrKey("a"), k.a),
                           (jtu.GetAttrKey("b"), k.b)), "keyed"),
        _keyed_unflatten)
    jtu.register_pytree_node_class(Pair)
    jtu.register_pytree_with_keys(
        Named, lambda n: (((jtu.DictKey("value"), n.value),), None),
        Named.tree_unflatten)
    jtu.register_dataclass(Params)
    jtu.register_dataclass(Explicit, data_fields=["z", "x"], meta_fields=["y"])
    jtu.register_dataclass(Plain, data_fields=["data"], meta_fields=["meta"])
    jtu.register_static(Config)
    _REGISTERED_WITH_JAX.append(True)
  return jax


def _oracle_trees():
  arr = np.arange(3.0)
  return [
      None, 1, arr, "s", (), [], {}, (1,), [None], ((),), [[]],
      [1, (2, 3)], {"b": 1, "a": 2}, {1: "x", 0: "y"}, {(1, 2): 0, (0, 5): 1},
      [1, {"k1": 2, "k2": (3, 4)}, 5], (None, (None,), {"a": None}),
      Point(1, 2), Point(None, [arr]), [Point(1, 2), Other(3, 4)],
      OrderedDict([("b", 1), ("a", [2, 3])]), defaultdict(list, {"b": 1, "a": 2}),
      defaultdict(None, {"z": (1,)}), Box(1, (2, 3), meta="m"),
      Box(meta={"lr": 0.1}), [Box(1, meta=None), Box(2, meta=(1, "x"))],
      Keyed(1, [2, 3]), Pair(1, {"x": 2}, tag="q"), Named([1, 2]),
      Params(arr, 2.0, name="n"), Explicit(1, 2, 3), Plain([1, 2], "meta"),
      [Config(4), 1], tu.Partial(print, 1, k=2), {"a": {"b": {"c": [1, (2,)]}}},
  ]


def _jax_version(tree, jax):
  """The same tree with purejax's Partial swapped for JAX's."""
  if isinstance(tree, tu.Partial):
    return jax.tree_util.Partial(tree.func, *tree.args, **tree.keywords)
  return tree


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(_oracle_trees())))
def test_oracle_flatten(jax, index):
  tree = _oracle_trees()[index]
  jtree = _jax_version(tree, jax)
  leaves, treedef = tu.tree_flatten(tree)
  jleaves, jtreedef = jax.tree_util.tree_flatten(jtree)
  assert len(leaves) == len(jleaves)
  assert all(a is b for a, b in zip(leaves, jleaves))
  assert repr(treedef) == repr(jtreedef)
  assert treedef.num_leaves == jtreedef.num_leaves
  assert treedef.num_nodes == jtreedef.num_nodes
  assert [repr(c) for c in treedef.children()] == [
      repr(c) for c in jtreedef.children()]
  assert tu.treedef_is_leaf(treedef) == jax.tree_util.treedef_is_leaf(jtreedef)
  if not isinstance(tree, tu.Partial):  # (the Partial classes differ)
    assert repr(treedef.node_data()) == repr(jtreedef.node_data())
  rebuilt = treedef.unflatten(leaves)
  jrebuilt = jtreedef.unflatten(jleaves)
  assert repr(tu.tree_structure(rebuilt)) == repr(jax.tree_util.tree_structure(
      jrebuilt))
  assert type(rebuilt) is type(tree) or isinstance(tree, tu.Partial)


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(_oracle_trees())))
def test_oracle_paths(jax, index):
  tree = _oracle_trees()[index]
  jtree = _jax_version(tree, jax)
  pairs, treedef = tu.tree_flatten_with_path(tree)
  jpairs, jtreedef = jax.tree_util.tree_flatten_with_path(jtree)
  assert repr(treedef) == repr(jtreedef)
  assert [repr(p) for p, _ in pairs] == [repr(p) for p, _ in jpairs]
  for simple in (False, True):
    for sep in ("", "/"):
      assert [tu.keystr(p, simple=simple, separator=sep) for p, _ in pairs] == [
          jax.tree_util.keystr(p, simple=simple, separator=sep)
          for p, _ in jpairs]


@pytest.mark.oracle
@pytest.mark.parametrize("is_leaf", [
    lambda x: x is None, lambda x: isinstance(x, tuple),
    lambda x: isinstance(x, dict), lambda x: isinstance(x, Box)])
@pytest.mark.parametrize("index", range(len(_oracle_trees())))
def test_oracle_is_leaf(jax, index, is_leaf):
  tree = _oracle_trees()[index]
  jtree = _jax_version(tree, jax)
  leaves, treedef = tu.tree_flatten(tree, is_leaf=is_leaf)
  jleaves, jtreedef = jax.tree_util.tree_flatten(jtree, is_leaf=is_leaf)
  assert repr(treedef) == repr(jtreedef)
  assert len(leaves) == len(jleaves)


@pytest.mark.oracle
def test_oracle_treedef_equality(jax):
  trees = _oracle_trees()
  jtrees = [_jax_version(t, jax) for t in trees]
  ours = [tu.tree_structure(t) for t in trees]
  theirs = [jax.tree_util.tree_structure(t) for t in jtrees]
  for i in range(len(trees)):
    for j in range(len(trees)):
      assert (ours[i] == ours[j]) == (theirs[i] == theirs[j]), (i, j)


_MISMATCHES = [
    ([1, 2], [1, 2, 3]),
    ([1, 2], (1, 2)),
    ({"a": 1}, {"b": 1}),
    ({"a": 1, "b": 2}, {"a": 1}),
    ({"a": 1}, {"a": 1, "b": 2}),
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}),
    ((1, [2, 3]), (1, [2])),
    ((1, None), (1, 2)),
    ([1, 2], None),
    (None, [1]),
    ((1, 2), 3),
    (Point(1, 2), (1, 2)),
    ((1, 2), Point(1, 2)),
    (Point(1, 2), Other(1, 2)),
    (Point(1, 2), Triple(1, 2, 3)),
    (OrderedDict(a=1, b=2), OrderedDict(b=1, a=2)),
    (defaultdict(list, a=1), defaultdict(dict, a=1)),
    (Box(1, 2, meta="a"), Box(1, meta="b")),
    (Box(1, 2, meta="a"), Box(1, meta="a")),
    (Box(1, meta="a"), Box(1, meta="b")),
    (Box(1, 2), [1, 2]),
    ({"a": [1, {"b": (1, 2)}]}, {"a": [1, {"b": (1, 2, 3)}]}),
    ({"x": [{"y": 1}]}, {"x": [{"z": 1}]}),
    ({3: [1]}, {3: [1, 2]}),
    ({"x": Box(1, (1, 2))}, {"x": Box(1, (1,))}),
    (Params(1, 2), Params(1, 2, name="other")),
    (Params(1, [2]), Params(1, [2, 3])),
    ([Config(1)], [Config(2)]),
    ([Keyed(1, (2, 3))], [Keyed(1, (2,))]),
    ([[1], [2]], [3, 4]),
    ({"a": (1,), "b": [1]}, {"a": [1], "b": (1,)}),
]


@pytest.mark.oracle
@pytest.mark.parametrize("prefix, full", _MISMATCHES)
def test_oracle_tree_map_errors(jax, prefix, full):
  f = lambda *xs: xs[0]
  for ours, theirs in ((tu.tree_map, jax.tree_util.tree_map),
                       (ptree.map, jax.tree.map)):
    with pytest.raises(Exception) as mine:
      ours(f, prefix, full)
    with pytest.raises(Exception) as real:
      theirs(f, prefix, full)
    assert type(mine.value) is type(real.value)
    assert str(mine.value) == str(real.value)
  with pytest.raises(Exception) as mine:
    tu.tree_map_with_path(f, prefix, full)
  with pytest.raises(Exception) as real:
    jax.tree_util.tree_map_with_path(f, prefix, full)
  assert str(mine.value) == str(real.value)


@pytest.mark.oracle
@pytest.mark.parametrize("prefix, full", _MISMATCHES)
def test_oracle_flatten_up_to_errors(jax, prefix, full):
  with pytest.raises(Exception) as mine:
    tu.tree_structure(prefix).flatten_up_to(full)
  with pytest.raises(Exception) as real:
    jax.tree_util.tree_structure(prefix).flatten_up_to(full)
  assert type(mine.value) is type(real.value)
  assert str(mine.value) == str(real.value)


@pytest.mark.oracle
@pytest.mark.parametrize("prefix, full", [
    ([1, 2, 3], [(1, 2), {"a": [3, 4]}]),
    ([1, None], [(1, 2), {"a": [3, 4]}]),
    (None, [1, [2]]),
    ([1, [2]], 1),
    ({"a": 1}, {"b": [1]}),
])
def test_oracle_broadcast_errors(jax, prefix, full):
  with pytest.raises(Exception) as mine:
    tu.tree_broadcast(prefix, full)
  with pytest.raises(Exception) as real:
    jax.tree_util.tree_broadcast(prefix, full)
  assert type(mine.value) is type(real.value)
  assert str(mine.value) == str(real.value)


@pytest.mark.oracle
@pytest.mark.parametrize("prefix, full", [
    ([1, {"a": 2}], [(1, 2), {"a": [3, 4]}]),
    (1, [1, [2]]),
    ([1, 2], [None, (3, [4])]),
    (Point(1, 2), Point([1], {"a": 2, "b": 3})),
])
def test_oracle_broadcast(jax, prefix, full):
  assert repr(tu.tree_broadcast(prefix, full)) == repr(
      jax.tree_util.tree_broadcast(prefix, full))


@pytest.mark.oracle
@pytest.mark.parametrize("leaves_count", [0, 1, 2, 4])
def test_oracle_unflatten_count_errors(jax, leaves_count):
  tree = [1, (2, {"a": 3})]
  treedef = tu.tree_structure(tree)
  jtreedef = jax.tree_util.tree_structure(tree)
  with pytest.raises(Exception) as mine:
    treedef.unflatten(list(range(leaves_count)))
  with pytest.raises(Exception) as real:
    jtreedef.unflatten(list(range(leaves_count)))
  assert type(mine.value) is type(real.value)
  assert str(mine.value) == str(real.value)


@pytest.mark.oracle
def test_oracle_misc_functions(jax):
  jtu = jax.tree_util
  tree = [1, (2, 3), {"b": 4, "a": [5, 6]}]
  assert tu.tree_reduce(operator.add, tree) == jtu.tree_reduce(operator.add, tree)
  show = lambda a, b: f"({a}+{b})"
  for n in range(1, 9):
    xs = list(range(n))
    assert tu.tree_reduce_associative(show, xs) == jtu.tree_reduce_associative(
        show, xs)
  assert tu.tree_all(tree) == jtu.tree_all(tree)
  for items in ([1, 2], [1, (2,)], [1, None], []):
    assert tu.all_leaves(items) == jtu.all_leaves(items)
  for t in ([1, 2], {"b": 1, "a": 2}, None, (1, 2), Point(1, 2),
            OrderedDict(b=1, a=2), Box(1, 2, meta="m")):
    ours, theirs = tu.flatten_one_level(t), jtu.flatten_one_level(t)
    assert repr(ours) == repr(theirs)
  for typ in (list, int, Point, type(None), Box, np.ndarray):
    assert tu.is_tree_node(typ) == jtu.is_tree_node(typ)
  outer = tu.tree_structure([1, 1])
  jouter = jtu.tree_structure([1, 1])
  for pt in ([(1, 2), (3, 4)], [((1,), 2), ((3,), 4)], [{"a": 1}, {"a": 2}]):
    assert repr(tu.tree_transpose(outer, None, pt)) == repr(
        jtu.tree_transpose(jouter, None, pt))
  composed = tu.tree_structure([1, (1, None)]).compose(
      tu.tree_structure({"a": 1, "b": None}))
  jcomposed = jtu.tree_structure([1, (1, None)]).compose(
      jtu.tree_structure({"a": 1, "b": None}))
  assert repr(composed) == repr(jcomposed)
  assert composed.num_nodes == jcomposed.num_nodes


@pytest.mark.oracle
def test_oracle_transpose_errors(jax):
  jtu = jax.tree_util
  cases = [([(1, 2), (3, 4, 5)], (1, 1)), ([(1, 2), (3, 4), 5], (1, 1)),
           ([(1, 2), (3, 4)], [1])]
  for pt, inner in cases:
    with pytest.raises(Exception) as mine:
      tu.tree_transpose(tu.tree_structure([1, 1]), tu.tree_structure(inner), pt)
    with pytest.raises(Exception) as real:
      jtu.tree_transpose(jtu.tree_structure([1, 1]), jtu.tree_structure(inner), pt)
    assert type(mine.value) is type(real.value)
    assert str(mine.value) == str(real.value)


@pytest.mark.oracle
def test_oracle_registration_errors(jax):
  jtu = jax.tree_util

  @dataclasses.dataclass
  class D:
    a: int
    b: int

  class NotDC:
    pass
  calls = [
      lambda m: m.register_dataclass(NotDC),
      lambda m: m.register_dataclass(D, data_fields=["a"]),
      lambda m: m.register_dataclass(D, data_fields=["a"], meta_fields=[]),
      lambda m: m.register_dataclass(D, data_fields=["a", "b"], meta_fields=["c"]),
      lambda m: m.register_dataclass(D, data_fields=["a"], meta_fields=["a", "b"]),
      lambda m: m.register_pytree_node(Box, _box_flatten, _box_unflatten),
      lambda m: m.register_pytree_node(list, _box_flatten, _box_unflatten),
      lambda m: m.register_dataclass(Params),
  ]
  for call in calls:
    with pytest.raises(Exception) as mine:
      call(tu)
    with pytest.raises(Exception) as real:
      call(jtu)
    assert type(mine.value) is type(real.value)
    assert str(mine.value) == str(real.value)


@pytest.mark.oracle
def test_oracle_key_classes(jax):
  jtu = jax.tree_util
  for name, arg in (("SequenceKey", 1), ("DictKey", "a"), ("DictKey", (1, None)),
                    ("GetAttrKey", "attr"), ("FlattenedIndexKey", 3)):
    ours, theirs = getattr(tu, name)(arg), getattr(jtu, name)(arg)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    assert type(ours).__match_args__ == type(theirs).__match_args__


@pytest.mark.oracle
def test_oracle_is_leaf_errors(jax):
  for bad in (1, np.bool_(True), [1]):
    with pytest.raises(Exception) as mine:
      tu.tree_flatten([1], is_leaf=lambda x: bad)
    with pytest.raises(Exception) as real:
      jax.tree_util.tree_flatten([1], is_leaf=lambda x: bad)
    assert type(mine.value) is type(real.value)
    assert str(mine.value) == str(real.value)
  with pytest.raises(Exception) as mine:
    tu.tree_flatten({1: 2, "a": 3})
  with pytest.raises(Exception) as real:
    jax.tree_util.tree_flatten({1: 2, "a": 3})
  assert str(mine.value) == str(real.value)


@pytest.mark.oracle
def test_oracle_public_names(jax):
  import jax.tree as jtree
  public = lambda m: {n for n in dir(m) if not n.startswith("_")}
  assert public(jtree) <= public(ptree)
  assert public(jax.tree_util) <= public(tu)
