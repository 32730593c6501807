"""The basic samplers: uniform, normal, randint, bernoulli (JAX's algorithms).

uniform fills a float's mantissa with random bits under the exponent of 1.0
(a float in [1, 2)), subtracts 1 and scales; normal is sqrt(2) erf_inv of a
uniform on (-1, 1); randint reduces twice as many random bits as the dtype
has modulo the span, which keeps the bias tiny.
"""
import functools

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.lax.utils import canonicalize_shape
from purejax._src.random import keys as keys_lib
from purejax._src.lax.convert import bitcast_convert_type
from purejax._src.random.prng import (   # noqa: F401  (re-exported)
    PRNGKey, UINT_DTYPES, bits, fold_in, random_bits, split)
from purejax._src.lax.special import erf_inv


def check_shape(name, shape, *param_shapes):
  """The parameters' shapes must broadcast to exactly ``shape``."""
  if param_shapes:
    try:
      joint = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
      joint = None
    if joint != tuple(shape):
      raise ValueError(
          f"{name} parameter shapes must be broadcast-compatible with shape argument, "
          "and the result of broadcasting the shapes must equal the shape argument, "
          f"but got result {joint} for shape argument {tuple(shape)}.")


def broadcast_shapes_or(name, shape, *args):
  """``shape`` checked against the parameters, or their broadcast if None."""
  arg_shapes = [np.shape(a) for a in args]
  if shape is None:
    return tuple(np.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
  shape = canonicalize_shape(shape)
  check_shape(name, shape, *arg_shapes)
  return shape


def float_dtype(name, dtype, kinds=np.floating, what="a float"):
  """The canonical dtype a float sampler produces (with x64 truncation)."""
  dtype = dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, kinds):
    raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
  return np.dtype(dtype)


def scalar_dtype(x):
  """The canonical dtype of a sampler parameter (Python scalars: default)."""
  return np.dtype(dtypes.dtype(x, canonicalize=True))


# ---------------------------------------------------------------------------
# uniform

def uniform(key, shape=(), dtype=None, minval=0., maxval=1., *, out_sharding=None):
  """Uniform floats in [minval, maxval)."""
  typed, _ = keys_lib.check_prng_key("uniform", key)
  dtype = float_dtype("uniform", dtype)
  shape = canonicalize_shape(shape)
  return _uniform(typed, minval, maxval, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _uniform(typed, minval, maxval, shape, dtype):
  from purejax import lax
  minval = lax.convert_element_type(minval, dtype)
  maxval = lax.convert_element_type(maxval, dtype)
  minval = lax.broadcast_to_rank(minval, len(shape))
  maxval = lax.broadcast_to_rank(maxval, len(shape))
  finfo = dtypes.finfo(dtype)
  nbits, nmant = finfo.bits, finfo.nmant
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
  # Narrow floats draw 8 random bits (at least their mantissa's worth).
  rng_bits = 8 if nmant < 8 else nbits
  uint = UINT_DTYPES[nbits]
  raw = random_bits(typed, rng_bits, shape)
  if rng_bits != nbits:
    raw = lax.convert_element_type(raw, uint)
  mantissa = lax.shift_right_logical(raw, np.array(rng_bits - nmant, uint))
  one_bits = np.array(1.0, dtype).view(uint)
  floats = lax.sub(bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype),
                   np.array(1.0, dtype))
  scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
  return lax.max(minval, lax.reshape(scaled, shape))


# ---------------------------------------------------------------------------
# normal

def normal(key, shape=(), dtype=None, *, out_sharding=None):
  """Standard normal floats (complex dtypes: real and imaginary parts each
  have variance 1/2)."""
  typed, _ = keys_lib.check_prng_key("normal", key)
  shape = canonicalize_shape(shape)
  dtype = float_dtype("normal", dtype, np.inexact, "a float or complex")
  return _normal(typed, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal(typed, shape, dtype):
  from purejax import lax
  if dtypes.issubdtype(dtype, np.complexfloating):
    real = np.array(0, dtype).real.dtype
    k_re, k_im = _split_typed(typed)
    re = _normal_real(k_re, shape, real).astype(dtype)
    im = _normal_real(k_im, shape, real).astype(dtype)
    return (re + 1j * im) / np.array(np.sqrt(2), dtype)
  return _normal_real(typed, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2))
def _normal_real(typed, shape, dtype):
  from purejax import lax
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  u = uniform(typed, shape, dtype, lo, np.array(1., dtype))
  return lax.mul(np.array(np.sqrt(2), dtype), erf_inv(u))


def _split_typed(typed, num=2):
  from purejax._src.random.prng import _split
  return list(_split(typed, num))


# ---------------------------------------------------------------------------
# randint

def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
  """Integers in [minval, maxval)."""
  from purejax import numpy as jnp
  typed, _ = keys_lib.check_prng_key("randint", key)
  dtype = np.dtype(dtypes.canonicalize_user_dtype(int if dtype is None else dtype))
  shape = canonicalize_shape(shape)
  if not dtypes.issubdtype(dtype, np.integer):
    raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
  info = dtypes.iinfo(dtype)
  sample_dtype = dtype
  if info.bits < 32:   # narrow ints are drawn as int32, then narrowed
    sample_dtype = np.dtype(np.int32)
    # (keywords: JAX's Array.clip passes them to jnp.clip by name)
    minval = jnp.asarray(minval).astype(np.int32).clip(min=int(info.min), max=int(info.max))
    maxval = jnp.asarray(maxval).astype(np.int32).clip(min=int(info.min),
                                                       max=int(info.max) + 1)
  return _randint(typed, minval, maxval, shape, sample_dtype).astype(dtype)


def _clip_convert(val, dtype):
  """``val`` clipped to what both its dtype and ``dtype`` hold, converted."""
  from purejax import numpy as jnp
  src = val.dtype
  lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(src).min))
  hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(src).max))
  # bounds typed like ``val``: Python ints when it is weakly typed
  weak = core.get_aval(val).weak_type
  lo, hi = (lo, hi) if weak else (np.array(lo, src), np.array(hi, src))
  return jnp.clip(val, lo, hi).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _randint(typed, minval, maxval, shape, dtype):
  from purejax import lax
  from purejax import numpy as jnp
  from purejax._src.numpy import util as jnp_util
  check_shape("randint", shape, np.shape(minval), np.shape(maxval))
  jnp_util.check_arraylike("randint", minval, maxval)
  minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
  if not dtypes.issubdtype(minval.dtype, np.integer):
    minval = minval.astype(int)
  if not dtypes.issubdtype(maxval.dtype, np.integer):
    maxval = maxval.astype(int)
  # maxval beyond the dtype (randint(k, s, 0, 256, uint8)) widens the span by 1.
  top = _clip_convert(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
  maxval_out_of_range = lax.gt(maxval, top)
  minval = _clip_convert(minval, dtype)
  maxval = _clip_convert(maxval, dtype)
  minval = lax.broadcast_to_rank(minval, len(shape))
  maxval = lax.broadcast_to_rank(maxval, len(shape))
  nbits = dtypes.iinfo(dtype).bits
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
  k1, k2 = _split_typed(typed)
  higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
  uint = UINT_DTYPES[nbits]
  span = lax.convert_element_type(maxval - minval, uint)
  span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
  span = lax.select(maxval_out_of_range & (maxval > minval),
                    lax.add(span, np.array(1, uint)), span)
  # (hi * 2**nbits + lo) mod span, with 2**nbits mod span computed without
  # overflow as ((2**(nbits/2) mod span)**2) mod span.
  mult = lax.rem(np.array(2 ** (nbits // 2), uint), span)
  mult = lax.rem(lax.mul(mult, mult), span)
  offset = lax.add(lax.mul(lax.rem(higher, span), mult), lax.rem(lower, span))
  offset = lax.rem(offset, span)
  return lax.add(minval, lax.convert_element_type(offset, dtype))


# ---------------------------------------------------------------------------
# bernoulli

def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
  """Booleans that are True with probability ``p``."""
  from purejax import lax
  if shape is not None:
    shape = canonicalize_shape(shape)
  if mode not in ("high", "low"):
    raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
  typed, _ = keys_lib.check_prng_key("bernoulli", key)
  dtype = scalar_dtype(p)
  if not dtypes.issubdtype(dtype, np.floating):
    raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
  p = lax.convert_element_type(p, dtype)
  return _bernoulli(typed, p, shape=shape, mode=mode)


@functools.partial(jit, static_argnames=("shape", "mode"))
def _bernoulli(typed, p, shape, mode):
  if shape is None:
    shape = np.shape(p)
  else:
    check_shape("bernoulli", shape, np.shape(p))
  dtype = p.dtype
  if mode == "high":
    # Two uniforms give 2*nmant bits of resolution for tiny p.
    u1, u2 = uniform(typed, (2, *shape), dtype)
    u2 = u2 * 2. ** -dtypes.finfo(dtype).nmant
    return u2 < p - u1
  return uniform(typed, shape, dtype) < p
