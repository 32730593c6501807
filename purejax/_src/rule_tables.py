"""JAX's rule dictionaries (``ad.primitive_jvps[p] = rule``...) as views of
purejax's per-primitive rule attributes.

purejax keeps every rule of a primitive on the primitive itself
(``p.jvp``, ``p.transpose``, ``p.batch``); JAX code registers them in
module-level dicts.  A ``RuleTable`` is such a dict whose items are those
attributes: setting ``table[p] = rule`` sets ``p.<attribute>``, reading
gives it back, so there is one registry, not two.  ``to_attribute`` /
``from_attribute`` convert where JAX's rule signature differs from
purejax's (batching rules take no axis size in JAX).
"""
import collections.abc
import weakref

from purejax._src import core


class RuleTable(collections.abc.MutableMapping):
  """Primitive -> its ``attribute`` rule, for every primitive that has one."""

  def __init__(self, attribute, to_attribute=None, from_attribute=None):
    self.attribute = attribute
    self._to = to_attribute or (lambda p, rule: rule)
    self._from = from_attribute or (lambda p, rule: rule)
    self._seen = weakref.WeakSet()   # primitives registered through this table

  def _rule(self, primitive):
    if not isinstance(primitive, core.Primitive):
      return None
    rule = getattr(primitive, self.attribute, None)
    return None if rule is None else self._from(primitive, rule)

  def __getitem__(self, primitive):
    rule = self._rule(primitive)
    if rule is None:
      raise KeyError(primitive)
    return rule

  def __setitem__(self, primitive, rule):
    if not isinstance(primitive, core.Primitive):
      raise TypeError(f"expected a Primitive, got {type(primitive).__name__}: {primitive!r}")
    setattr(primitive, self.attribute, self._to(primitive, rule))
    self._seen.add(primitive)

  def __delitem__(self, primitive):
    if self._rule(primitive) is None:
      raise KeyError(primitive)
    setattr(primitive, self.attribute, None)

  def __contains__(self, primitive):
    return self._rule(primitive) is not None

  def _primitives(self):
    from purejax.extend.core import primitives
    known = [p for p in vars(primitives).values() if isinstance(p, core.Primitive)]
    return list(dict.fromkeys(known + list(self._seen)))

  def __iter__(self):
    return iter([p for p in self._primitives() if p in self])

  def __len__(self):
    return sum(1 for _ in self)

  def __repr__(self):
    return f"<{self.attribute} rules of {len(self)} primitives>"
