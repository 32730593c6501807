"""XLA's random-number primitives: ``rng_bit_generator`` (stateless bits
from a key) and ``rng_uniform`` (stateful).

``rng_bit_generator`` reproduces XLA's bit generators bit for bit: the key
(uint32[4], or uint64[2] under x64) is two 64-bit words, a key word and a
counter.  Philox-4x32 (the CPU's default) and Threefry-2x32 run on counters
counting up from the counter word, laid out as XLA lays them out; 8- and
16-bit requests truncate 32-bit words.  ``rng_uniform`` draws from a NumPy
generator: its values, like XLA's, depend on hidden state and differ from
JAX's.
"""
import enum

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.lax import utils
from purejax._src.lax.families import standard_primitive

_U32 = np.uint64(0xFFFFFFFF)
_BIT_DTYPES = tuple(np.dtype(d) for d in ("uint8", "uint16", "uint32", "uint64"))


class RandomAlgorithm(enum.IntEnum):
  """The bit generator ``rng_bit_generator`` uses."""
  RNG_DEFAULT = 0
  RNG_THREE_FRY = 1
  RNG_PHILOX = 2

  def __str__(self):
    return self.name


# -- the generators, on uint64 arrays holding 32-bit words -------------------------

def _rotl(v, d):
  return ((v << np.uint64(d)) | (v >> np.uint64(32 - d))) & _U32


def _threefry2x32(x0, x1, k0, k1):
  """Threefry-2x32 with 20 rounds (Salmon et al., SC 2011); the key words
  k0, k1 are uint64 scalars or 0-d arrays (a GPU's too)."""
  ks = [k0, k1, np.uint64(0x1BD11BDA) ^ k0 ^ k1]
  x0, x1 = (x0 + ks[0]) & _U32, (x1 + ks[1]) & _U32
  rotations = ((13, 15, 26, 6), (17, 29, 16, 24))
  for i in range(5):
    for r in rotations[i % 2]:
      x0 = (x0 + x1) & _U32
      x1 = _rotl(x1, r) ^ x0
    x0 = (x0 + ks[(i + 1) % 3]) & _U32
    x1 = (x1 + ks[(i + 2) % 3] + np.uint64(i + 1)) & _U32
  return x0, x1


def _philox4x32(c, k0, k1):
  """Philox-4x32 with 10 rounds on four counter words ``c`` (key words as
  _threefry2x32's)."""
  for _ in range(10):
    p0, p1 = c[0] * np.uint64(0xD2511F53), c[2] * np.uint64(0xCD9E8D57)
    c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & _U32, p1 & _U32,
         ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & _U32, p0 & _U32]
    k0, k1 = (k0 + np.uint64(0x9E3779B9)) & _U32, (k1 + np.uint64(0xBB67AE85)) & _U32
  return c


def _halves(shape):
  """XLA's split of a shape for Threefry's two output words: (half shape,
  the axis split in two)."""
  if not shape:
    return (1,), 0
  even = [i for i, d in enumerate(shape) if d % 2 == 0]
  axis = even[0] if even else int(np.argmax(shape))
  half = list(shape)
  half[axis] = -(-shape[axis] // 2)
  return tuple(half), axis


def _threefry_bits(key, counter, shape, wide):
  xp = array_namespace.of(key)
  k0, k1 = key & _U32, key >> np.uint64(32)
  if wide:
    n = int(np.prod(shape, dtype=np.int64))
    ctr = counter + xp.arange(n, dtype=np.uint64)
    x0, x1 = _threefry2x32(ctr & _U32, ctr >> np.uint64(32), k0, k1)
    return (x0 | (x1 << np.uint64(32))).reshape(shape), n
  half, axis = _halves(shape)
  n = int(np.prod(half, dtype=np.int64))
  ctr = counter + xp.arange(n, dtype=np.uint64)
  x0, x1 = _threefry2x32(ctr & _U32, ctr >> np.uint64(32), k0, k1)
  if not shape:
    return x0.reshape(()), n
  # The two words of counter j fill positions 2j and 2j+1 of the split axis.
  both = np.stack([x0.reshape(half), x1.reshape(half)], axis=axis + 1)
  full = list(shape)
  full[axis] = 2 * half[axis]
  bits = both.reshape(full)
  return bits[(slice(None),) * axis + (slice(0, shape[axis]),)], n


def _philox_bits(key, counter, shape, wide):
  n = int(np.prod(shape, dtype=np.int64))
  words = 2 * n if wide else n
  blocks = -(-words // 4)
  # A 128-bit counter: the counter word, then the key word above it.
  lo = counter + array_namespace.of(key).arange(blocks, dtype=np.uint64)
  hi = key + (lo < counter).astype(np.uint64)
  c = [lo & _U32, lo >> np.uint64(32), hi & _U32, hi >> np.uint64(32)]
  out = _philox4x32(c, key & _U32, key >> np.uint64(32))
  if wide:
    pairs = [out[0] | (out[1] << np.uint64(32)), out[2] | (out[3] << np.uint64(32))]
    flat = np.stack(pairs, axis=1).reshape(-1)
  else:
    flat = np.stack(out, axis=1).reshape(-1)
  return flat[:n].reshape(shape), blocks


def _rng_bit_generator_impl(key, *, shape, dtype, algorithm, out_sharding):
  as_u64 = key.dtype == np.uint32
  words = key.astype(np.uint64)
  if as_u64:   # uint32[4] -> two little-endian 64-bit words
    words = words[0::2] | (words[1::2] << np.uint64(32))
  dtype = np.dtype(dtype)
  wide = dtype.itemsize == 8
  gen = _threefry_bits if algorithm == RandomAlgorithm.RNG_THREE_FRY else _philox_bits
  # The words as 0-d arrays: array arithmetic wraps silently (and stays on
  # a GPU's arrays).
  bits, used = gen(words[0:1].reshape(()), words[1:2].reshape(()), tuple(shape), wide)
  new = words.copy()
  new[1:2] = words[1:2] + np.uint64(used % (1 << 64))   # the counter wraps
  if as_u64:
    new = np.stack([new & _U32, new >> np.uint64(32)], axis=1).reshape(4)
  return [new.astype(key.dtype), bits.astype(dtype)]


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
  if not ((key.shape == (4,) and key.dtype == np.uint32)
          or (key.shape == (2,) and key.dtype == np.uint64)):
    raise TypeError("rng_bit_generator key must be a uint32[4] (or uint64[2]) array, "
                    f"got {key.str_short()}")
  return [key, core.ShapedArray(tuple(shape), np.dtype(dtype))]


# impl_on_gpu_arrays: array operations only, the key's words included
rng_bit_generator_p = standard_primitive(
    "rng_bit_generator", _rng_bit_generator_abstract_eval, _rng_bit_generator_impl,
    multiple_results=True, impl_on_gpu_arrays=True)
rng_bit_generator_p.c_code = None
ad.defjvp_zero(rng_bit_generator_p)


@rng_bit_generator_p.def_batch
def _rng_bit_generator_batch(axis_size, vals, dims, *, shape, **params):
  # As JAX does: the first key generates bits for the whole batch and is the
  # only key that advances.
  from purejax._src.interpreters import batching
  from purejax._src.lax.slicing import dynamic_update_index_in_dim, index_in_dim
  keys = batching.moveaxis(vals[0], dims[0], 0)
  new_key, bits = rng_bit_generator_p.bind(index_in_dim(keys, 0, 0, keepdims=False),
                                           shape=(axis_size,) + tuple(shape), **params)
  return [dynamic_update_index_in_dim(keys, new_key, 0, 0), bits], [0, 0]


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
  """(new key, random bits of ``shape`` and unsigned ``dtype``) from ``key``,
  with XLA's algorithms (the CPU default is Philox): the same bits as JAX."""
  shape = utils.canonicalize_shape(shape)
  dtype = dtypes.canonicalize_user_dtype(dtype, "rng_bit_generator")
  if np.dtype(dtype) not in _BIT_DTYPES:
    raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
  return tuple(utils.bind(rng_bit_generator_p, key, shape=shape, dtype=np.dtype(dtype),
                          algorithm=RandomAlgorithm(algorithm), out_sharding=out_sharding))


# -- rng_uniform -----------------------------------------------------------------

_uniform_state = np.random.default_rng(0)


def _rng_uniform_impl(a, b, *, shape):
  a, b = np.asarray(a), np.asarray(b)
  if dtypes.issubdtype(a.dtype, np.integer):
    if b <= a:
      return np.full(shape, a, a.dtype)
    return _uniform_state.integers(int(a), int(b), size=shape).astype(a.dtype)
  u = _uniform_state.random(size=shape)
  return (a + (b - a) * u).astype(a.dtype)


def _rng_uniform_abstract_eval(a, b, *, shape):
  if a.dtype != b.dtype:
    raise ValueError("Arguments to rng_uniform must have identical dtypes, got "
                     f"{a.dtype} and {b.dtype}.")
  if a.shape != () or b.shape != ():
    raise ValueError("Arguments to rng_uniform must be scalars; got shapes "
                     f"{a.shape} and {b.shape}.")
  return core.ShapedArray(tuple(shape), a.dtype, a.weak_type and b.weak_type)


rng_uniform_p = standard_primitive("rng_uniform", _rng_uniform_abstract_eval,
                                   _rng_uniform_impl)
rng_uniform_p.c_code = None
# As in JAX there is no JVP rule: its derivative raises JAX's error.


@rng_uniform_p.def_batch
def _rng_uniform_batch(axis_size, vals, dims, *, shape):
  # JAX has no rule; one draw per example (bounds are scalars) does it.
  from purejax._src.interpreters import batching
  from purejax._src.lax.slicing import index_in_dim
  from purejax._src.lax.split_tile import stack_p
  a, b = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
  draws = [rng_uniform_p.bind(index_in_dim(a, i, 0, keepdims=False),
                              index_in_dim(b, i, 0, keepdims=False), shape=shape)
           for i in range(axis_size)]
  return stack_p.bind(*draws, axis=0), 0


def rng_uniform(a, b, shape):
  """Values uniform in [a, b) from a stateful generator (not reproducible,
  and different from JAX's; use purejax.random for reproducible numbers)."""
  return utils.bind(rng_uniform_p, a, b, shape=tuple(shape))
