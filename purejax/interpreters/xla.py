"""``jax.interpreters.xla``: the little that JAX 0.10 keeps there.

``canonicalize_dtype_handlers`` registers a type whose values become arrays
when passed to ``jit`` or a primitive (TensorFlow Probability registers its
NumPy-backed variables): ``handlers[T] = fn`` makes purejax convert a ``T``
with ``fn`` (None: as it is), and ``handlers[T]`` reads, as in JAX, the
standard conversion (to a NumPy array of the canonical dtype) whatever ``T``.
Register the type's aval in ``jax.core.pytype_aval_mappings`` too.
``apply_primitive`` runs a primitive eagerly. JAX's ``Backend`` (an XLA
client) has no counterpart: purejax compiles jaxprs itself.
"""
import numpy as np

from purejax._src import core as _core

__all__ = ["apply_primitive", "canonicalize_dtype_handlers"]


def _canonical_numpy(x):
  return _core.concrete_numpy_value(np.asarray(x))


def _as_is(x):
  return x


class _CanonicalizeDtypeHandlers:
  """A write-mostly mapping, as JAX's: reading gives the standard conversion."""

  def __getitem__(self, kind):
    return _canonical_numpy

  def __setitem__(self, kind, handler):
    _core.canonicalize_value_handlers[kind] = _as_is if handler is None else handler


canonicalize_dtype_handlers = _CanonicalizeDtypeHandlers()


def apply_primitive(prim, *args, **params):
  """``prim`` applied eagerly to concrete ``args``."""
  from purejax._src.interpreters import dispatch
  return dispatch.apply_primitive(prim, args, params)
