"""Deviation (m) of benchmarks/fuzz_deviations.py for updates computed from
the operand: XLA fuses the computation of a dynamic_update_slice's update
into the in-place update, so each update element is computed from the
buffer as it is at that moment, earlier elements already written (seed
93's index program 14, with x64: an update made by a product with the
operand's elements read some of them overwritten)."""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.lax.slicing import _clamped_starts

_UNCHANGED = object()


def replay(producer, operand, buffer, memo=None):
  """The value ``producer`` (name, params, operands, their producers,
  primitive) made, recomputed with ``operand`` (an array object among the
  operands it was made from) replaced by ``buffer``: _UNCHANGED where it
  does not depend on it, None where it cannot be recomputed."""
  memo = {} if memo is None else memo
  key = id(producer)
  if key in memo:
    return memo[key]
  _, params, vals, prods = producer[:4]
  args, changed = [], False
  for v, p in zip(vals, prods):
    if v is operand:
      args.append(buffer)
      changed = True
      continue
    again = replay(p, operand, buffer, memo) if p is not None else _UNCHANGED
    if again is None:
      memo[key] = None
      return None
    changed |= again is not _UNCHANGED
    args.append(v if again is _UNCHANGED else again)
  prim = producer[4] if len(producer) > 4 else None
  if not changed:
    result = _UNCHANGED
  elif prim is None or prim.multiple_results:
    result = None
  else:
    with np.errstate(all="ignore"):
      result = np.asarray(numpy_backend.jit_impl(prim)(*args, **params))
  memo[key] = result
  return result


def recomputed_update(vals, update_producer):
  """The dynamic_update_slice of ``vals`` (operand, update, starts) done in
  place with each update element, in row-major order, recomputed from the
  buffer being written; None if the update does not depend on the operand
  or cannot be recomputed."""
  x, update = np.asarray(vals[0]), np.asarray(vals[1])
  if update_producer is None or update.size == 0:
    return None
  first = replay(update_producer, vals[0], x)
  if first is None or first is _UNCHANGED:
    return None
  starts = _clamped_starts(vals[2:], update.shape, x.shape)
  out = x.copy()
  for k in np.ndindex(update.shape):
    current = replay(update_producer, vals[0], out.copy())
    out[tuple(s + i for s, i in zip(starts, k))] = np.asarray(current)[k]
  return out
