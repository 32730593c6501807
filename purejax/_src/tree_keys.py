"""Key paths: the entries naming each step from a pytree's root to a child,
and ``keystr`` to render them."""
import operator
from typing import Hashable, TypeVar


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
