"""``ravel_pytree``: a pytree of arrays as one flat 1-D array, and back.

The flat array has the promoted dtype of all leaves (their canonical dtypes,
weak types dropped, as JAX does); the returned ``unravel`` cuts a flat array
into the leaves' sizes, reshapes them and converts each back to its leaf's
dtype. Everything is built from ``lax`` primitives, so both directions
trace under ``jit``, ``grad`` and ``vmap``.
"""
import functools
import warnings

import numpy as np

from purejax._src import dtypes
from purejax._src.lax.convert import convert_element_type
from purejax._src.lax.creation import full
from purejax._src.lax.split_tile import split
from purejax._src.lax.structural import concatenate, reshape
from purejax._src.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
  """Returns ``(flat, unravel)``: ``flat`` is every leaf of ``pytree``
  raveled and concatenated in leaf order; ``unravel(flat)`` rebuilds a
  pytree of the same structure, shapes and dtypes."""
  leaves, treedef = tree_flatten(pytree)
  flat, unravel_list = _ravel_list(leaves)
  return flat, _HashablePartial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
  return tree_unflatten(treedef, unravel_list(flat))


def _leaf_dtype(x):
  return dtypes.canonicalize_dtype(dtypes.dtype(x))


def _ravel_list(leaves):
  if not leaves:
    return _empty_float32(), _HashablePartial(_unravel_empty)
  from_dtypes = tuple(_leaf_dtype(x) for x in leaves)
  to_dtype = dtypes.result_type(*from_dtypes)
  shapes = tuple(np.shape(x) for x in leaves)
  sizes = tuple(int(np.prod(s, dtype=np.int64)) for s in shapes)
  pieces = [reshape(convert_element_type(x, to_dtype), (n,))
            for x, n in zip(leaves, sizes)]
  flat = pieces[0] if len(pieces) == 1 else concatenate(pieces, 0)
  return flat, _HashablePartial(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _empty_float32():
  return full((0,), 0, np.dtype(np.float32))


def _unravel_empty(flat):
  return []


def _unravel_list(sizes, shapes, from_dtypes, to_dtype, flat):
  got = dtypes.dtype(flat)
  if got != to_dtype:
    raise TypeError(f"unravel function given array of dtype {got}, "
                    f"but expected dtype {to_dtype}")
  chunks = split(flat, sizes, axis=0)
  with warnings.catch_warnings():
    # complex -> real takes the real part, silently, as JAX's unravel does
    warnings.simplefilter("ignore")
    return [convert_element_type(reshape(c, shape), dt)
            for c, shape, dt in zip(chunks, shapes, from_dtypes)]


class _HashablePartial:
  """A partial application that compares and hashes by its function and
  arguments, so ``unravel`` functions from equal pytree layouts are equal
  (and a ``jit`` keyed on one as a static argument is not re-traced)."""

  def __init__(self, f, *args):
    self.f, self.args = f, args

  def __eq__(self, other):
    return (type(other) is _HashablePartial and self.f is other.f
            and self.args == other.args)

  def __hash__(self):
    return hash((self.f, self.args))

  def __call__(self, *args):
    return self.f(*self.args, *args)

  def __repr__(self):
    return repr(functools.partial(self.f, *self.args))
