"""Keys from seeds, and the threefry key operations: split, fold_in, bits.

Each operation exists in JAX's two flavours, chosen by the
``jax_threefry_partitionable`` flag (default True, as in current JAX):

* partitionable: output element ``i`` (row-major index, as a 64-bit counter
  ``(hi, lo)``) is the cipher of ``(hi, lo)``; split keeps both words,
  ``bits`` xors them (32-bit) or joins them (64-bit).
* classic: the cipher runs over the counters ``0 .. n-1`` split in two
  halves (``threefry_2x32``); smaller words are carved out of 32-bit ones.
"""
from collections.abc import Sequence

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.config import config
from purejax._src.random import keys as keys_lib
from purejax._src.random.threefry import threefry2x32, threefry_2x32

_U32 = np.dtype(np.uint32)
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16),
               32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}


def _size(shape):
  return int(np.prod(shape, dtype=np.int64))


# ---------------------------------------------------------------------------
# Threefry operations on raw key data (uint32[2])

def threefry_seed(seed):
  """Raw key of an integer scalar seed: its 64 bits as (hi, lo) words."""
  from purejax import lax
  aval = core.get_aval(seed)
  if aval.shape:
    raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
  if not dtypes.issubdtype(aval.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
  lo = lax.convert_element_type(seed, _U32)
  if aval.dtype.itemsize == 8:
    hi = lax.shift_right_logical(seed, np.array(32, aval.dtype))
    hi = lax.convert_element_type(hi, _U32)
  else:   # a logical shift by >= the bit width gives 0
    hi = lax.full((), 0, _U32)
  return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def iota_2x32_shape(shape):
  """(hi, lo) words of each element's row-major index, as uint32 arrays."""
  from purejax import lax
  size = _size(shape)
  if size > 2 ** 32:
    raise NotImplementedError("random arrays of more than 2**32 elements")
  lo = lax.reshape(lax.iota(_U32, size), tuple(shape))
  return lax.full(tuple(shape), 0, _U32), lo


def _key_words(key):
  from purejax import lax
  return lax.index_in_dim(key, 0, keepdims=False), lax.index_in_dim(key, 1, keepdims=False)


def threefry_split(key, shape):
  from purejax import lax
  shape = tuple(shape)
  if config.jax_threefry_partitionable:
    k1, k2 = _key_words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    b1, b2 = (lax.reshape(b, shape + (1,)) for b in (b1, b2))
    return lax.concatenate([b1, b2], len(shape))
  counts = lax.iota(_U32, _size(shape) * 2)
  return lax.reshape(threefry_2x32(key, counts), shape + (2,))


def threefry_fold_in(key, data):
  """Mixes the uint32 scalar ``data`` into ``key``: the cipher of (0, data)."""
  from purejax import lax
  k1, k2 = _key_words(key)
  b1, b2 = threefry2x32(k1, k2, np.uint32(0), data)
  return lax.concatenate([lax.reshape(b1, (1,)), lax.reshape(b2, (1,))], 0)


def threefry_random_bits(key, bit_width, shape):
  """Uniform random bits: a uint array of ``shape`` and ``bit_width`` bits."""
  if bit_width not in UINT_DTYPES:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  shape = tuple(shape)
  if config.jax_threefry_partitionable:
    return _bits_partitionable(key, bit_width, shape)
  return _bits_classic(key, bit_width, shape)


def _bits_partitionable(key, bit_width, shape):
  from purejax import lax
  k1, k2 = _key_words(key)
  hi, lo = iota_2x32_shape(shape)
  b1, b2 = threefry2x32(k1, k2, hi, lo)
  dtype = UINT_DTYPES[bit_width]
  if bit_width == 64:
    b1, b2 = (lax.convert_element_type(b, dtype) for b in (b1, b2))
    return lax.bitwise_or(lax.shift_left(b1, np.array(32, dtype)), b2)
  out = lax.bitwise_xor(b1, b2)
  return out if bit_width == 32 else lax.convert_element_type(out, dtype)


def _bits_classic(key, bit_width, shape):
  from purejax import lax
  size = _size(shape)
  nwords = -(-bit_width * size // 32)
  if nwords >= np.iinfo(np.uint32).max:
    raise NotImplementedError("random bits arrays of 2**32 or more words")
  bits = threefry_2x32(key, lax.iota(_U32, nwords))
  dtype = UINT_DTYPES[bit_width]
  if bit_width == 64:
    hi, lo = (lax.convert_element_type(b, dtype) for b in
              (lax.slice(bits, (0,), (size,)), lax.slice(bits, (size,), (2 * size,))))
    bits = lax.bitwise_or(lax.shift_left(hi, np.array(32, dtype)), lo)
  elif bit_width < 32:
    # Little-endian view of the words as bytes / half-words.
    per = 32 // bit_width
    wide = lax.broadcast_in_dim(bits, (nwords, per), (0,))
    shifts = lax.mul(lax.broadcasted_iota(_U32, (nwords, per), 1), np.uint32(bit_width))
    parts = lax.bitwise_and(lax.shift_right_logical(wide, shifts),
                            np.uint32((1 << bit_width) - 1))
    bits = lax.slice(lax.reshape(parts, (nwords * per,)), (0,), (size,))
    bits = lax.convert_element_type(bits, dtype)
  return lax.reshape(bits, shape)


# ---------------------------------------------------------------------------
# Public key API

def _seed_array(seed):
  """``seed`` as an integer scalar array; Python ints go through int64 (so
  large hashes work in 32-bit mode by wrapping, as in JAX)."""
  from purejax._src.array import Array
  if isinstance(seed, (core.Tracer, Array)):
    return seed
  if isinstance(seed, (bool, np.bool_)):
    return Array(np.asarray(seed, np.int32 if not config.jax_enable_x64 else np.int64))
  if isinstance(seed, int):
    value = np.int64(seed)   # OverflowError beyond int64, as in JAX
    return Array(value if config.jax_enable_x64 else value.astype(np.int32))
  value = np.asarray(seed)
  return Array(value.astype(dtypes.canonicalize_dtype(value.dtype)))


def _make_key(ctor_name, seed, impl):
  impl = keys_lib.resolve_impl(impl)
  if keys_lib.is_typed_key(seed):
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
  if np.ndim(seed):
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                    f"{np.shape(seed)} != (). Use jax.vmap for batching")
  from purejax._src.random.key_primitives import random_seed_p
  seed = _seed_array(seed)
  aval = core.get_aval(seed)
  if not dtypes.issubdtype(aval.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
  if config.jax_random_seed_offset:   # every seed shifted (jax_random_seed_offset)
    seed = seed + np.asarray(config.jax_random_seed_offset, aval.dtype)
  return random_seed_p.bind(seed, impl=impl)


def key(seed, *, impl=None, dtype=None):
  """A typed PRNG key (dtype ``key<fry>``, shape ``()``) from an integer seed."""
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    impl = dtype
  return _make_key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
  """A raw PRNG key: the uint32[2] data of ``key(seed)``."""
  return keys_lib.random_unwrap(_make_key("PRNGKey", seed, impl))


def key_dtype(impl=None):
  return keys_lib.KeyTy(keys_lib.resolve_impl(impl))


def split(key, num=2):
  """``num`` new keys (``num`` may be a shape) derived from ``key``."""
  typed, wrapped = keys_lib.check_prng_key("split", key)
  return keys_lib.return_keys(wrapped, _split(typed, num))


def _split(typed, num=2):
  from purejax._src.lax.utils import canonicalize_shape
  if typed.ndim:
    raise TypeError(f"split accepts a single key, but was given a key array of shape "
                    f"{typed.shape} != (). Use jax.vmap for batching.")
  from purejax._src.random.key_primitives import random_split_p
  shape = canonicalize_shape(tuple(num) if isinstance(num, Sequence) else (num,))
  return random_split_p.bind(typed, shape=shape)


def fold_in(key, data):
  """A new key from ``key`` and the integer ``data`` (e.g. a step count)."""
  from purejax import numpy as jnp
  typed, wrapped = keys_lib.check_prng_key("fold_in", key)
  if np.ndim(data):
    raise TypeError(f"fold_in accepts a scalar, but was given an array ofshape "
                    f"{np.shape(data)} != (). Use jax.vmap for batching.")
  if isinstance(data, int) and not 0 <= data < 2 ** 32:
    raise OverflowError(f"Python integer {data} out of bounds for uint32")
  from purejax._src.random.key_primitives import random_fold_in_p
  data = jnp.asarray(data).astype(_U32) if not isinstance(data, int) else np.uint32(data)
  out = random_fold_in_p.bind(typed, data)
  return keys_lib.return_keys(wrapped, out)


def random_bits(typed, bit_width, shape):
  """Random bits from the typed key(s) ``typed`` (the ``random_bits`` primitive)."""
  from purejax._src.random.key_primitives import random_bits_p
  if bit_width not in UINT_DTYPES:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  return random_bits_p.bind(typed, bit_width=bit_width, shape=tuple(shape))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
  """Uniform random bits of an unsigned integer dtype (default uint32)."""
  from purejax._src.lax.utils import canonicalize_shape
  typed, _ = keys_lib.check_prng_key("bits", key)
  if dtype is None:
    dtype = dtypes.default_uint_dtype()
  else:
    dtype = dtypes.canonicalize_user_dtype(dtype, "bits")
  if not dtypes.issubdtype(dtype, np.unsignedinteger):
    raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
  shape = canonicalize_shape(shape)
  return random_bits(typed, np.dtype(dtype).itemsize * 8, shape)


def key_data(keys):
  """The uint32 data under a key array (raw keys pass through)."""
  typed, _ = keys_lib.check_prng_key("key_data", keys, allow_batched=True)
  return keys_lib.random_unwrap(typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
  """A typed key array over existing uint32 key data."""
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                       "jax.random.wrap_key_data")
    impl = dtype
  return keys_lib.random_wrap(key_bits_array, keys_lib.resolve_impl(impl))


def key_impl(keys):
  """The name of the PRNG implementation behind ``keys``."""
  typed, _ = keys_lib.check_prng_key("key_impl", keys, allow_batched=True)
  return keys_lib.key_impl_of(typed).name


def clone(key):
  """A copy of ``key`` (keys are immutable, so the same value)."""
  return key
