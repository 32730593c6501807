"""Named values for checkpoint policies: the ``name`` primitive that
``checkpoint_name`` binds, and the policies that save values by name.

``name`` is the identity on values; its ``name`` parameter only tells a
checkpoint policy which values the user wants kept (or recomputed).
"""
import dataclasses

from purejax._src import tree_util
from purejax._src.lax.families import standard_primitive

name_p = standard_primitive("name", lambda aval, *, name: aval, lambda x, *, name: x)


@name_p.def_jvp
def _name_jvp(primals, tangents, *, name):
  # Only the primal value is named: a policy saves primals, never tangents.
  return name_p.bind(primals[0], name=name), tangents[0]


@name_p.def_transpose
def _name_transpose(ct, x, *, name):
  return [ct]


name_p.batch = lambda axis_size, vals, dims, *, name: (name_p.bind(vals[0], name=name), dims[0])


def checkpoint_name(x, name):
  """Every leaf of the pytree ``x`` unchanged, labelled ``name`` for the
  policies of ``checkpoint``."""
  return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


def is_named(prim, params, names=None):
  """Whether an equation is a ``name`` one (with a name among ``names``)."""
  return prim is name_p and (names is None or params["name"] in names)


# -- what a policy may answer besides True / False ---------------------------

class _Answer:
  def __init__(self, text):
    self._text = text

  def __repr__(self):
    return self._text


Saveable = _Answer("Saveable")
Recompute = _Answer("Recompute")


@dataclasses.dataclass(frozen=True)
class Offloadable:
  """Keep the value, moved from memory ``src`` to ``dst`` (purejax has one
  memory: offloading is saving)."""
  src: str
  dst: str


def saves(answer):
  """Whether a policy's answer keeps the value as a residual."""
  return answer is True or answer is Saveable or isinstance(answer, Offloadable)


# -- the name-based policies (frozen, so a policy is a hashable parameter) ---

@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
  saveable_names: frozenset

  def __call__(self, prim, *avals, **params):
    return is_named(prim, params, self.saveable_names)


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
  names: frozenset

  def __call__(self, prim, *avals, **params):
    return is_named(prim, params) and params["name"] not in self.names


@dataclasses.dataclass(frozen=True)
class SaveAndOffloadOnlyTheseNames:
  names_which_can_be_saved: frozenset
  names_which_can_be_offloaded: frozenset
  offload_src: str
  offload_dst: str

  def __call__(self, prim, *avals, **params):
    if is_named(prim, params, self.names_which_can_be_saved):
      return Saveable
    if is_named(prim, params, self.names_which_can_be_offloaded):
      return Offloadable(self.offload_src, self.offload_dst)
    return Recompute


@dataclasses.dataclass(frozen=True)
class SaveFromBothPolicies:
  policy_1: object
  policy_2: object

  def __call__(self, prim, *avals, **params):
    first = self.policy_1(prim, *avals, **params)
    second = self.policy_2(prim, *avals, **params)
    for answer in (first, second):   # an offload wins over a plain save
      if isinstance(answer, Offloadable):
        return answer
    return Saveable if saves(first) or saves(second) else Recompute


def save_only_these_names(*names_which_can_be_saved):
  return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save):
  return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_anything_except_these_names(*names_not_to_save):
  # As in JAX, this saves everything: a name equation is an identity, so a
  # value whose name is not saved is still saved as its operand.
  return lambda *avals, **params: True


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
  return SaveAndOffloadOnlyTheseNames(frozenset(names_which_can_be_saved),
                                      frozenset(names_which_can_be_offloaded),
                                      offload_src, offload_dst)


def save_from_both_policies(policy_1, policy_2):
  return SaveFromBothPolicies(policy_1, policy_2)
