"""The Threefry-2x32 block cipher (Random123, 20 rounds) as a primitive.

``threefry2x32_p(k1, k2, x1, x2)`` encrypts the counter pairs ``(x1, x2)``
under the key ``(k1, k2)``; all four are uint32 arrays that broadcast
together.  Its impl is a vectorised NumPy loop; ``threefry2x32_lax`` is the
same cipher written with lax uint32 ops only (the reference the primitive is
tested against, and a way to see the algorithm as a jaxpr).  The outputs are
integers, so derivatives through it are zero.
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching

# Rotation constants of Threefry-2x32, for even and odd groups of 4 rounds.
ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# The key-schedule parity constant (Skein's C240 truncated to 32 bits).
PARITY = 0x1BD11BDA

_U32 = np.dtype(np.uint32)


def _key_schedule(k1, k2, xor, add):
  """The three words injected between groups of rounds, and their order."""
  ks = (k1, k2, xor(xor(k1, k2), PARITY))
  # Injection i (1..5) adds ks[i % 3] to x1 and ks[(i + 1) % 3] + i to x2.
  return [(ks[i % 3], ks[(i + 1) % 3], i) for i in range(1, 6)]


# ---------------------------------------------------------------------------
# NumPy implementation (the primitive's impl)

def _threefry_numpy(k1, k2, x1, x2):
  shape = np.broadcast_shapes(*(np.shape(a) for a in (k1, k2, x1, x2)))
  # Work on 1-d arrays: uint32 wrap-around is silent for arrays, not scalars.
  flat = (-1,) if shape else (1,)

  def as_flat(a, copy=False):
    a = np.asarray(a, _U32)
    if a.size == 1 and not copy:
      return a.reshape(1)   # broadcasts by itself
    return np.array(np.broadcast_to(a, shape).reshape(flat), copy=copy)

  k1, k2 = as_flat(k1), as_flat(k2)
  x, y = as_flat(x1, copy=True), as_flat(x2, copy=True)
  k3 = k1 ^ k2 ^ np.uint32(PARITY)
  ks = (k1, k2, k3)
  x += k1
  y += k2
  tmp = np.empty_like(x)
  for group in range(5):
    for r in ROTATIONS[group % 2]:
      x += y
      np.left_shift(y, np.uint32(r), out=tmp)
      y >>= np.uint32(32 - r)
      y |= tmp
      y ^= x
    i = group + 1
    x += ks[i % 3]
    y += ks[(i + 1) % 3]
    y += np.uint32(i)
  return x.reshape(shape), y.reshape(shape)


def _impl(k1, k2, x1, x2):
  return list(_threefry_numpy(k1, k2, x1, x2))


# ---------------------------------------------------------------------------
# The same cipher from lax ops

def _rotate_left(x, d):
  from purejax import lax
  return lax.bitwise_or(lax.shift_left(x, np.uint32(d)),
                        lax.shift_right_logical(x, np.uint32(32 - d)))


def threefry2x32_lax(k1, k2, x1, x2):
  """Threefry-2x32 built only from lax uint32 ops (jit/vmap/grad safe)."""
  from purejax import lax
  k3 = lax.bitwise_xor(lax.bitwise_xor(k1, k2), np.uint32(PARITY))
  ks = (k1, k2, k3)
  x, y = lax.add(x1, k1), lax.add(x2, k2)
  for group in range(5):
    for r in ROTATIONS[group % 2]:
      x = lax.add(x, y)
      y = lax.bitwise_xor(_rotate_left(y, r), x)
    i = group + 1
    x = lax.add(x, ks[i % 3])
    y = lax.add(lax.add(y, ks[(i + 1) % 3]), np.uint32(i))
  return x, y


# ---------------------------------------------------------------------------
# The primitive and its rules

threefry2x32_p = core.Primitive("threefry2x32", multiple_results=True)
threefry2x32_p.impl = _impl


@threefry2x32_p.def_abstract_eval
def _abstract_eval(*avals):
  for a in avals:
    if a.dtype != _U32:
      raise TypeError("threefry2x32 requires uint32 arguments, got "
                      f"{', '.join(core.dtype_name(b.dtype) for b in avals)}")
  shape = np.broadcast_shapes(*(a.shape for a in avals))
  out = core.ShapedArray(shape, _U32)
  return [out, out]


@threefry2x32_p.def_batch
def _batch(axis_size, vals, dims):
  # Batch dims to the front, then broadcast every operand to the full shape.
  from purejax import lax
  vals = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
  rest = np.broadcast_shapes(*(core.get_aval(v).shape[1:] for v in vals))
  shape = (axis_size,) + tuple(rest)

  def full(v):
    vshape = core.get_aval(v).shape
    if vshape == shape:
      return v
    # Keep the batch axis first; align the other axes to the right.
    dims = (0,) + tuple(range(len(shape) - len(vshape) + 1, len(shape)))
    return lax.broadcast_in_dim(v, shape, dims)

  vals = [full(v) for v in vals]
  return threefry2x32_p.bind(*vals), [0, 0]


@threefry2x32_p.def_jvp
def _jvp(primals, tangents):
  # Integer outputs: the tangents are symbolic zeros.
  outs = threefry2x32_p.bind(*primals)
  return outs, [ad.Zero.from_primal_value(o) for o in outs]


threefry2x32_p.c_code = None


def _c_expansion(k1, k2, x1, x2):
  """What compiled code computes: the cipher as lax uint32 ops on operands
  broadcast to one shape (scalars stay scalars), so that it fuses into the
  loops around it (see backends/cpu/expansion.py)."""
  from purejax import lax
  shape = np.broadcast_shapes(*(core.get_aval(a).shape for a in (k1, k2, x1, x2)))

  def full(v):
    vshape = core.get_aval(v).shape
    if vshape in (shape, ()):
      return v
    return lax.broadcast_in_dim(v, shape, tuple(range(len(shape) - len(vshape), len(shape))))

  return list(threefry2x32_lax(full(k1), full(k2), full(x1), full(x2)))


threefry2x32_p.c_expansion = _c_expansion


def threefry2x32(k1, k2, x1, x2):
  """(y1, y2) = Threefry-2x32 of the counters (x1, x2) under key (k1, k2)."""
  return threefry2x32_p.bind(k1, k2, x1, x2)


def threefry_2x32(keypair, count):
  """Encrypts a uint32 array of counters of any shape under ``keypair``.

  The flattened counters are split into halves that form the (x1, x2) pairs
  (padded with a zero when odd); the outputs are concatenated back."""
  from purejax import lax
  k1, k2 = keypair[0], keypair[1]
  aval = core.get_aval(count)
  size = int(np.prod(aval.shape, dtype=np.int64))
  flat = lax.reshape(count, (size,))
  odd = size % 2
  if odd:
    flat = lax.concatenate([flat, np.zeros((1,), _U32)], 0)
  half = (size + odd) // 2
  x1 = lax.slice(flat, (0,), (half,))
  x2 = lax.slice(flat, (half,), (2 * half,))
  y1, y2 = threefry2x32(k1, k2, x1, x2)
  out = lax.concatenate([y1, y2], 0)
  if odd:
    out = lax.slice(out, (0,), (size,))
  return lax.reshape(out, aval.shape)
