"""Buffer donation for ``jit(..., donate_argnums=..., donate_argnames=...)``.

As on JAX's CPU backend, a donated Array whose buffer an output of the same
shape and dtype can reuse is deleted after the call (reading it raises
``RuntimeError``); a donated Array no output can reuse is kept, with JAX's
"Some donated buffers were not usable" warning once per traced signature.
purejax does not reuse the memory itself: donation only frees the input.
"""
import collections
import warnings

from purejax._src import tree_util
from purejax._src.array import Array
from purejax._src.errors import JaxRuntimeError


class Donation:
  """The donated positional indices and keyword names of one jitted
  function; ``donate`` applies them to one call."""
  __slots__ = ("argnums", "argnames", "_warned")

  def __init__(self, argnums, argnames):
    self.argnums, self.argnames = frozenset(argnums), frozenset(argnames)
    self._warned = set()

  def __bool__(self):
    return bool(self.argnums or self.argnames)

  def donated_leaves(self, args, kwargs):
    leaves = []
    for i, arg in enumerate(args):
      if i in self.argnums or i - len(args) in self.argnums:
        leaves += tree_util.tree_leaves(arg)
    for name, arg in kwargs.items():
      if name in self.argnames:
        leaves += tree_util.tree_leaves(arg)
    return [x for x in leaves if type(x) is Array]

  def check_call(self, args, kwargs):
    """Raises as XLA does when a donated Array is also passed elsewhere in
    the same call (its buffer would be read after being reused)."""
    donated = self.donated_leaves(args, kwargs)
    if not donated:
      return donated
    seen = collections.Counter(id(x) for x in tree_util.tree_leaves((args, kwargs))
                               if type(x) is Array)
    for x in donated:
      if seen[id(x)] > 1:
        raise JaxRuntimeError(
            "INVALID_ARGUMENT: Attempt to donate a buffer which is also used by "
            "the same call. Toy example for this bug: `f(a, donate(a))`.")
    return donated

  def donate(self, donated, out_avals, signature):
    """Deletes each donated Array an output of its shape and dtype takes
    over (first come, first served), warning about the rest."""
    free = collections.Counter((a.shape, a.dtype) for a in out_avals)
    unusable = []
    for x in donated:
      kind = (x.aval.shape, x.aval.dtype)
      if free[kind] > 0:
        free[kind] -= 1
        x.delete()
      else:
        unusable.append(x.aval.str_short())
    if unusable and signature not in self._warned:
      self._warned.add(signature)
      warnings.warn(
          f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
          "See an explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
          UserWarning, stacklevel=3)
