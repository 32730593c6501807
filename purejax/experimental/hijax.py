"""``jax.experimental.hijax``: JAX's experimental API for user-defined
"high-level" types and primitives (``HiType``, ``HiPrimitive``...), which
purejax does not implement.

The names exist so that libraries defining hijax types when they load can
load: flax.nnx defines its ``HijaxVariable`` this way and uses it only under
``flax_hijax_variable=True`` (default False).  Binding a ``HiPrimitive``
raises ``NotImplementedError`` saying so.  What purejax has of its own is
real: ``Zero``, ``instantiate_zeros``, ``is_undefined_primal``,
``AbstractValue``, ``ShapedArray``, ``AbstractRef``; ``aval_method`` and
``aval_property`` are JAX's plain records.
"""
import collections

from purejax._src.core import AbstractValue, ShapedArray
from purejax._src.interpreters.ad import Zero, is_undefined_primal
from purejax._src.interpreters.ad import instantiate as instantiate_zeros
from purejax._src.refs import AbstractRef

_UNSUPPORTED = ("purejax does not implement jax.experimental.hijax (user-defined high-level "
                "types and primitives); with flax, keep flax_hijax_variable=False")

# Markers on a hijax type's methods and properties, as JAX's.
aval_property = collections.namedtuple("aval_property", ["fget"])
aval_method = collections.namedtuple("aval_method", ["fun"])


class EffectTypeSet:
  """A set of effect types (purejax records no effects: kept, never read)."""

  def __init__(self):
    self._effect_types = set()

  def add_type(self, effect_type):
    self._effect_types.add(effect_type)

  def contains(self, effect):
    return any(isinstance(effect, t) for t in self._effect_types)


control_flow_allowed_effects = EffectTypeSet()

_hitypes = {}


def register_hitype(cls, to_aval):
  """Records how a hijax type's values become avals (never used: purejax
  refuses hijax primitives, the only makers of such values)."""
  _hitypes[cls] = to_aval


class HiPrimitive:
  """A hijax primitive: defining one works, binding it raises."""

  def __init__(self, name):
    self.name = name

  def bind(self, *args, **params):
    raise NotImplementedError(f"{_UNSUPPORTED} (binding {self.name})")

  def __repr__(self):
    return self.name


class VJPHiPrimitive(HiPrimitive):
  """A hijax primitive with a custom VJP (see ``HiPrimitive``)."""


class HiType(AbstractValue):
  """The aval of a hijax type (see the module docstring)."""


class MutableHiType(HiType):
  """The aval of a mutable hijax type."""


class HiPspec:
  """A hijax type's partition spec (see the module docstring)."""

  def __init__(self, *args, **kwargs):
    raise NotImplementedError(_UNSUPPORTED)


class AvalQDD:
  """An aval with quasi-dynamic data (see the module docstring)."""

  def __init__(self, *args, **kwargs):
    raise NotImplementedError(_UNSUPPORTED)


class AvalMutableQDD(AvalQDD):
  """A mutable aval with quasi-dynamic data (see the module docstring)."""


class TransformedRef:
  """A ref seen through indexing transforms (see the module docstring)."""

  def __init__(self, *args, **kwargs):
    raise NotImplementedError(_UNSUPPORTED)


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiPspec",
           "HiType", "MutableHiType", "ShapedArray", "TransformedRef", "VJPHiPrimitive", "Zero",
           "aval_method", "aval_property", "control_flow_allowed_effects", "instantiate_zeros",
           "is_undefined_primal", "register_hitype"]
