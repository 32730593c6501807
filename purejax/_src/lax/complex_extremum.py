"""reduce_max / reduce_min of complex values in the order XLA's CPU backend
folds them, so NaNs and signed zeros land where JAX puts them.

XLA's complex max(acc, x) keeps ``acc`` only where it is strictly greater
(by real part, then imaginary part); equal values and NaNs give ``x``.  The
result therefore depends on the fold order, which is: a reduced axis of at
most 32 elements is one left-to-right fold from the identity (-inf+0j for
max, +inf+0j for min; a single element is returned as it is).  A longer
one is cut into segments of 32, the remainder split between a first
segment (the larger half) and a last one.  With several reduced axes each
is cut so; every combination of segments (a block) folds its elements in
row-major order from the identity, and the blocks' results fold left to
right in row-major order of the blocks.  (XLA folds a reduction fused
with the elementwise operation producing its operand in another order,
which shows where NaNs are present: not modelled.)
"""
import itertools

import numpy as np

SEGMENT = 32


def segments(n):
  """The ``(start, stop)`` of each sequentially folded run of a length-``n``
  reduced axis, in fold order."""
  if n <= SEGMENT:
    return [(0, n)]
  rest = n % SEGMENT
  if rest == 0:
    bounds = list(range(0, n + 1, SEGMENT))
  else:
    bounds = [0] + list(range((rest + SEGMENT + 1) // 2, n, SEGMENT)) + [n]
  return list(zip(bounds[:-1], bounds[1:]))


def _strictly_first(x, y, first_wins):
  xr, yr = x.real, y.real
  with np.errstate(invalid="ignore"):
    return np.where(xr == yr, first_wins(x.imag, y.imag), first_wins(xr, yr))


def _pick(acc, x, first_wins):
  return np.where(_strictly_first(acc, x, first_wins), acc, x)


def combine(acc, x, is_max):
  """XLA's complex max (or min) of ``acc`` and ``x``, elementwise."""
  return _pick(acc, x, np.greater if is_max else np.less)


def blocks(reduced_shape):
  """Each block's ``slice``s of the reduced axes, in fold order."""
  return [tuple(slice(a, b) for a, b in block)
          for block in itertools.product(*[segments(n) for n in reduced_shape])]


def reduce(x, kept, reduced, is_max):
  """Reduces the ``reduced`` axes (ascending) of complex ``x``, which has at
  least one element."""
  x = np.transpose(x, tuple(kept) + tuple(reduced))
  out_shape = x.shape[:len(kept)]
  if int(np.prod(x.shape[len(kept):])) == 1:   # one element per output: a copy
    return x.reshape(out_shape).copy()
  first_wins = np.greater if is_max else np.less
  identity = np.full(out_shape, complex(-np.inf if is_max else np.inf, 0), x.dtype)
  out = None
  for block in blocks(x.shape[len(kept):]):
    rows = x[(Ellipsis,) + block].reshape(out_shape + (-1,))
    acc = identity
    for i in range(rows.shape[-1]):
      acc = _pick(acc, rows[..., i], first_wins)
    out = acc if out is None else _pick(out, acc, first_wins)
  return out.astype(x.dtype)
