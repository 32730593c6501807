"""The one order in which float sums and products are computed, by every
backend: eager NumPy, the jit's NumPy tier and the compiled C code (whose
``codegen`` emits the same order), so that a jitted function gives the same
bits on its first call and later ones, and for any thread count.

Each output reduces its ``n`` elements in row-major order of the reduced
axes (``r = 0 .. n-1``), in one of two layouts chosen by the shape alone
(``layout``).  Row order, when the last axis longer than 1 is reduced (the
elements of one output lie side by side):

- ``r`` is cut into blocks of ``BLOCK`` elements (one block when
  ``n <= BLOCK``);
- within a block, element ``r`` goes to lane ``r % LANES`` (the position in
  the block, ``BLOCK`` being a multiple of ``LANES``); each of the ``LANES``
  accumulators starts at the identity (0 or 1) and folds its elements in
  increasing ``r``;
- the lanes are combined by halving: ``lane[i] = lane[i] op lane[i + h]``
  for ``h = LANES/2, ..., 1``;
- the block results are combined pairwise, level by level: neighbours
  ``(0, 1), (2, 3), ...``, an odd last one carried up unchanged.

Column order, when that axis is kept (each output a column, its elements a
row apart): the same rule with one lane and blocks of ``COLUMN_BLOCK``
elements, i.e. each block folds its elements in increasing ``r``, and the
blocks are paired as above.  Neighbouring outputs then advance together
down the rows, their accumulators side by side in vector registers.

A fixed number of lanes (not the machine's vector width) keeps the order
the same on every CPU; threads only ever take whole outputs or whole
blocks.  float32 sums accumulate in float64, products in their own type
(the same overflows).  In row order a float32 lane first folds runs of
``RUN`` of its elements in float32 (from 0, in increasing ``r``: the
positions ``RUN * LANES * k .. RUN * LANES * (k + 1) - 1`` of its block
make run ``k``), and adds each run's result to its float64 accumulator:
converting once per run instead of once per element keeps the loop at
memory speed, and a run's error, ``RUN - 1`` float32 roundings at worst,
is below that of NumPy's pairwise float32 sum (16 sequential additions per
accumulator, then a tree).  float64 sums' error grows as BLOCK / LANES +
log2(n / BLOCK) ulps at worst in row order, COLUMN_BLOCK + log2(n /
COLUMN_BLOCK) in column order (where NumPy's is ``n``: it folds an outer
axis in order).
Half-precision floats are reduced as their float32 values (so sums
accumulate in float64, products in float32), the result rounded to float32
and then to the half type.  Integers (which wrap around exactly) need no
fixed order.
"""
import numpy as np

from purejax._src import dtypes

LANES = 64
BLOCK = 4096
COLUMN_BLOCK = 256
RUN = 16
assert BLOCK % (RUN * LANES) == 0   # a run never straddles two blocks
HALF_DTYPES = (dtypes.float16, dtypes.bfloat16)
ORDERED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64)) + HALF_DTYPES


def accumulator(dtype, op):
  """The type ``op`` ("+" or "*") accumulates ``dtype`` in."""
  return np.dtype(np.float64) if op == "+" else np.dtype(dtype)


def folds_runs(dtype, op, lanes):
  """Whether lanes of a ``dtype`` reduction by ``op`` fold runs of RUN
  elements in float32 first (float32 and half-float sums in row order)."""
  return op == "+" and lanes > 1 and np.dtype(dtype) != np.float64


def layout(shape, axes):
  """(elements per block, lanes) of reducing ``axes`` of ``shape``: column
  order when the last axis longer than 1 is kept and some reduced axis is
  longer than 1, row order otherwise."""
  axes = {a % len(shape) for a in axes} if shape else set()
  long_axes = [a for a, size in enumerate(shape) if size > 1]
  if long_axes and long_axes[-1] not in axes and any(a in axes for a in long_axes):
    return COLUMN_BLOCK, 1
  return BLOCK, LANES


def blocks(n, block=BLOCK, lanes=LANES):
  """(number of blocks, elements per block after padding) of ``n`` elements."""
  if n <= block:
    return 1, -(-n // lanes) * lanes
  return -(-n // block), block


def ordered_reduce(x, axes, op):
  """``x`` summed (op "+") or multiplied ("*") over ``axes`` in the fixed
  order; ``x`` is a NumPy array of an ORDERED_DTYPES dtype."""
  if x.dtype in HALF_DTYPES:
    return ordered_reduce(x.astype(np.float32), axes, op).astype(x.dtype)
  ufunc = np.add if op == "+" else np.multiply
  identity = 0.0 if op == "+" else 1.0
  acc = accumulator(x.dtype, op)
  axes = sorted(a % x.ndim for a in axes) if x.ndim else []
  kept = [a for a in range(x.ndim) if a not in axes]
  out_shape = tuple(x.shape[a] for a in kept)
  n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
  m = int(np.prod(out_shape, dtype=np.int64))
  if n == 0 or m == 0:
    return np.full(out_shape, identity, x.dtype)
  block, lanes = layout(x.shape, axes)
  nb, per = blocks(n, block, lanes)
  if lanes == 1:
    # Column order: each block folded row by row, in increasing r.
    x2 = np.transpose(x, axes + kept).reshape(n, m)
    if nb * per != n:
      x2 = np.concatenate([x2, np.full((nb * per - n, m), identity, x.dtype)])
    # Over the middle axis, with the columns innermost, NumPy folds in order.
    v = ufunc.reduce(x2.reshape(nb, per, m), axis=1, dtype=acc, initial=identity)
    return _pair_blocks(ufunc, v.T).reshape(out_shape).astype(x.dtype)
  x2 = np.transpose(x, kept + axes).reshape(m, n)
  if nb * per != n:
    x2 = np.concatenate([x2, np.full((m, nb * per - n), identity, x.dtype)], axis=1)
  chunks = per // LANES
  if folds_runs(x.dtype, op, lanes):
    # Runs of RUN chunks (the last one padded with zeros, which change no
    # float32 partial sum: a run starts at +0 and never becomes -0).
    runs = -(-chunks // RUN)
    x3 = x2.reshape(m, nb, chunks, LANES)
    if runs * RUN != chunks:
      x3 = np.concatenate([x3, np.zeros((m, nb, runs * RUN - chunks, LANES), x.dtype)],
                          axis=2)
    # Reducing a middle axis, NumPy folds it in order (its pairwise summation
    # is only for the innermost axis).
    partial = ufunc.reduce(x3.reshape(m, nb, runs, RUN, LANES), axis=3, initial=identity)
    v = ufunc.reduce(partial, axis=2, dtype=acc, initial=identity)
  else:
    # Each lane in increasing r (NumPy folds a middle axis in order).
    v = ufunc.reduce(x2.reshape(m, nb, chunks, LANES), axis=2, dtype=acc, initial=identity)
  h = LANES
  while h > 1:
    h //= 2
    v = ufunc(v[..., :h], v[..., h:2 * h])
  return _pair_blocks(ufunc, v[..., 0]).reshape(out_shape).astype(x.dtype)


def _pair_blocks(ufunc, v):
  """The block results ``v`` (outputs x blocks) paired level by level."""
  while v.shape[1] > 1:
    k = v.shape[1] // 2
    pairs = ufunc(v[:, 0:2 * k:2], v[:, 1:2 * k:2])
    v = np.concatenate([pairs, v[:, 2 * k:]], axis=1) if v.shape[1] % 2 else pairs
  return v[:, 0]
