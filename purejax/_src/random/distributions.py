"""Samplers built by transforming uniform or normal samples (JAX's formulas,
so the same key gives the same values)."""
import functools
import operator

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.lax.utils import canonicalize_shape
from purejax._src.random import keys as keys_lib
from purejax._src.random.basic import (
    _split_typed, bernoulli, broadcast_shapes_or, check_shape, float_dtype, normal,
    uniform)
from purejax._src.random.prng import random_bits
from purejax._src.lax.special import erf, erf_inv


def _lax():
  from purejax import lax
  return lax


def _jnp():
  from purejax import numpy as jnp
  return jnp


def _simple(name, key, shape, dtype):
  """(typed key, shape, dtype) of a parameterless float sampler."""
  typed, _ = keys_lib.check_prng_key(name, key)
  dtype = float_dtype(name, dtype)
  return typed, canonicalize_shape(shape), dtype


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
  """Normal samples conditioned on lower < x < upper (inverse-CDF method)."""
  if shape is not None:
    shape = canonicalize_shape(shape)
  typed, _ = keys_lib.check_prng_key("truncated_normal", key)
  dtype = float_dtype("truncated_normal", dtype)
  return _truncated_normal(typed, lower, upper, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _truncated_normal(typed, lower, upper, shape, dtype):
  lax, jnp = _lax(), _jnp()
  shape = broadcast_shapes_or("truncated_normal", shape, lower, upper)
  sqrt2 = np.array(np.sqrt(2), dtype)
  lower = lax.convert_element_type(lower, dtype)
  upper = lax.convert_element_type(upper, dtype)
  a, b = erf(lower / sqrt2), erf(upper / sqrt2)
  u = uniform(typed, shape, dtype, minval=a, maxval=b)
  out = sqrt2 * erf_inv(u)
  # Keep rounding from landing exactly on (or past) the bounds.
  lo = lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype))
  hi = lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype))
  return jnp.clip(out, lo, hi)


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
  """Exponential(1): -log(1 - u)."""
  return _exponential(*_simple("exponential", key, shape, dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _exponential(typed, shape, dtype):
  lax = _lax()
  u = uniform(typed, shape, dtype)
  return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
  """Laplace(0, 1): sign(u) log(1 - |u|) for u uniform on (-1, 1)."""
  return _laplace(*_simple("laplace", key, shape, dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _laplace(typed, shape, dtype):
  lax = _lax()
  u = uniform(typed, shape, dtype, minval=-1. + dtypes.finfo(dtype).epsneg, maxval=1.)
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
  """Logistic(0, 1): log(u) - log(1 - u)."""
  return _logistic(*_simple("logistic", key, shape, dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _logistic(typed, shape, dtype):
  lax = _lax()
  x = uniform(typed, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.)
  return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
  """Standard Cauchy: tan(pi (u - 1/2))."""
  return _cauchy(*_simple("cauchy", key, shape, dtype))


@functools.partial(jit, static_argnums=(1, 2))
def _cauchy(typed, shape, dtype):
  lax = _lax()
  u = uniform(typed, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.)
  return lax.tan(lax.mul(np.array(np.pi, dtype), lax.sub(u, np.array(0.5, dtype))))


def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
  """Standard Gumbel: -log(-log(u)).  ``mode`` "high" spends two uniforms per
  sample for resolution near u = 0; "highest" (float32) turns 64 random bits
  into a float with full precision near both ends.  The default comes from
  the ``jax_high_dynamic_range_gumbel`` flag ("low" unless it is set)."""
  from purejax._src.config import config
  typed, shape, dtype = _simple("gumbel", key, shape, dtype)
  if mode is None:
    mode = "high" if config.jax_high_dynamic_range_gumbel else "low"
  if mode not in ("highest", "high", "low"):
    raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
  return _gumbel(typed, shape, dtype, mode)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _gumbel(typed, shape, dtype, mode):
  from purejax._src.random.basic import _uniform
  jnp = _jnp()
  info = dtypes.finfo(dtype)
  if mode == "highest" and dtype == np.float32:
    return _gumbel_highest_f32(typed, shape)
  if mode in ("high", "highest"):
    high, low = _uniform(typed, minval=0., maxval=1., shape=(2,) + tuple(shape),
                         dtype=dtype)
    x = jnp.where(high >= 0.5, high, high + 2 ** -info.nmant * low + info.tiny)
    return -jnp.log(-jnp.log1p(-x))
  return -jnp.log(-jnp.log(
      _uniform(typed, minval=info.tiny, maxval=1., shape=shape, dtype=dtype)))


def _gumbel_highest_f32(typed, shape):
  """Gumbel from a 64-bit fixed-point uniform u: below one half u itself is
  converted exactly (log1p(-u)); above, 1 - u is (log(1 - u))."""
  lax, jnp = _lax(), _jnp()
  u32 = np.uint32
  bits = random_bits(typed, 32, (2,) + tuple(shape))
  # 1 - u in 64-bit two's complement: ~u + 1, carrying into the high word.
  neg = lax.bitwise_not(bits)
  low_word = neg[1]
  carry = jnp.array([low_word == u32(0xFFFFFFFF), jnp.ones_like(low_word)], dtype=u32)
  neg = neg + carry
  small = bits[0] < u32(1 << 31)
  x = _fixed64_to_float32(jnp.where(small, bits, neg))
  return jnp.where(small, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def _fixed64_to_float32(words):
  """The float32 nearest below the fraction 0.hi lo (two uint32 words),
  normalised by the leading-zero count so that small values keep all 24
  significant bits."""
  lax, jnp = _lax(), _jnp()
  u32 = np.uint32
  hi_zeros, lo_zeros = lax.clz(words)
  hi, lo = words
  # Shift the first set bit to the top of a 32-bit word (shifts >= 32 give 0).
  top = lax.bitwise_or(
      lax.shift_left(hi, hi_zeros),
      jnp.where(hi_zeros == 32, lax.shift_left(lo, lo_zeros),
                lax.shift_right_logical(lo, 32 - hi_zeros)))
  # Drop the leading one (implicit in the float) and keep 23 mantissa bits.
  mantissa = lax.shift_right_logical(top, np.array(8, u32))
  mantissa = lax.bitwise_and(mantissa, np.array((1 << 23) - 1, u32))
  # value = 1.m * 2**-(zeros + 1): biased exponent 126 - zeros.
  exponent = lax.shift_left(126 - jnp.where(hi_zeros == 32, 32 + lo_zeros, hi_zeros),
                            np.array(23, u32))
  exponent = lax.bitwise_and(exponent, np.array((1 << 30) - (1 << 22), u32))
  return lax.bitwise_or(exponent, mantissa).view(np.float32)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
  """-1 or +1 with equal probability (an integer dtype by default)."""
  typed, _ = keys_lib.check_prng_key("rademacher", key)
  dtype = np.dtype(dtypes.canonicalize_user_dtype(int if dtype is None else dtype))
  shape = canonicalize_shape(shape)
  return _rademacher(typed, shape, dtype, None)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _rademacher(typed, shape, dtype, out_sharding):
  b = bernoulli(key=typed, p=0.5, shape=shape).astype(dtype)
  return (2 * b - 1).astype(dtype)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
  """Maxwell: the length of a standard normal 3-vector."""
  typed, shape, dtype = _simple("maxwell", key, shape, dtype)
  return _maxwell(typed, shape, dtype, None)


@functools.partial(jit, static_argnums=(1, 2, 3))
def _maxwell(typed, shape, dtype, out_sharding):
  jnp = _jnp()
  x = normal(key=typed, shape=tuple(shape) + (3,), dtype=dtype)
  return jnp.linalg.norm(x, axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """A Maxwell sample with a random sign, scaled and shifted."""
  typed, shape, dtype = _simple("double_sided_maxwell", key, shape, dtype)
  return _double_sided_maxwell(typed, loc, scale, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(typed, loc, scale, shape, dtype):
  params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
  if not shape:
    shape = params_shape
  shape = tuple(shape) + params_shape
  k_maxwell, k_sign = _split_typed(typed)
  magnitude = maxwell(k_maxwell, shape=shape, dtype=dtype)
  sign = rademacher(k_sign, shape=shape, dtype=dtype)
  return sign * magnitude * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Weibull: scale * (-log(1 - u)) ** (1 / concentration)."""
  typed, shape, dtype = _simple("weibull_min", key, shape, dtype)
  return _weibull_min(typed, scale, concentration, shape, dtype)


@functools.partial(jit, static_argnums=(3, 4))
def _weibull_min(typed, scale, concentration, shape, dtype):
  jnp = _jnp()
  u = uniform(key=typed, shape=shape, minval=0, maxval=1, dtype=dtype)
  return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
  """Pareto(b) on [1, inf): exp(e / b) for e ~ Exponential(1)."""
  typed, _ = keys_lib.check_prng_key("pareto", key)
  dtype = float_dtype("pareto", dtype)
  shape = broadcast_shapes_or("pareto", shape, b)
  return _pareto(typed, b, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _pareto(typed, b, shape, dtype):
  lax = _lax()
  b = lax.convert_element_type(b, dtype)
  e = exponential(typed, shape, dtype)
  return lax.exp(e / b)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
  """exp(sigma * z) for z standard normal."""
  typed, _ = keys_lib.check_prng_key("lognormal", key)
  dtype = float_dtype("lognormal", dtype, np.inexact, "a float or complex")
  shape = broadcast_shapes_or("lognormal", shape, sigma)
  return _lognormal(typed, sigma, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3), inline=True)
def _lognormal(typed, sigma, shape, dtype):
  lax = _lax()
  sigma = lax.convert_element_type(sigma, dtype)
  return lax.exp(normal(typed, shape, dtype) * sigma)


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
  """Rayleigh(scale): scale * sqrt(-2 log u)."""
  typed, _ = keys_lib.check_prng_key("rayleigh", key)
  dtype = float_dtype("rayleigh", dtype)
  shape = broadcast_shapes_or("rayleigh", shape, scale)
  return _rayleigh(typed, scale, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3))
def _rayleigh(typed, scale, shape, dtype):
  lax, jnp = _lax(), _jnp()
  u = uniform(typed, shape, dtype)
  scale = jnp.broadcast_to(scale.astype(dtype), shape)
  minus_two = -2 if core.get_aval(scale).weak_type else np.array(-2, scale.dtype)
  return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), minus_two)))


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
  """Triangular on [left, right] with peak at ``mode`` (inverse CDF)."""
  typed, _ = keys_lib.check_prng_key("triangular", key)
  dtype = float_dtype("triangular", dtype)
  shape = broadcast_shapes_or("triangular", shape, left, mode, right)
  return _triangular(typed, left, mode, right, shape, dtype)


@functools.partial(jit, static_argnums=(4, 5), inline=True)
def _triangular(typed, left, mode, right, shape, dtype):
  lax, jnp = _lax(), _jnp()
  left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
  right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
  mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
  fc = (mode - left) / (right - left)
  u = uniform(typed, shape, dtype)
  out1 = left + lax.sqrt(u * (right - left) * (mode - left))
  out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
  return lax.select(u < fc, out1, out2)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
  """Number of Bernoulli(p) trials up to the first success (>= 1)."""
  typed, _ = keys_lib.check_prng_key("geometric", key)
  dtype = np.dtype(dtypes.canonicalize_user_dtype(int if dtype is None else dtype))
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  shape = broadcast_shapes_or("geometric", shape, p)
  return _geometric(typed, p, shape, dtype, None)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _geometric(typed, p, shape, dtype, out_sharding):
  from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact
  lax, jnp = _lax(), _jnp()
  check_arraylike("geometric", p)
  p, = promote_dtypes_inexact(p)
  u = uniform(typed, shape, p.dtype)
  u = jnp.where(u == 0, 1, u)
  log_u = lax.log(u)
  log_q = jnp.broadcast_to(lax.log1p(-p), shape)
  return (lax.floor(lax.div(log_u, log_q)) + 1).astype(dtype)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
  """Uniform samples from the unit p-norm ball in ``d`` dimensions."""
  typed, shape, dtype = _simple("ball", key, shape, dtype)
  d = _concrete_index(d)
  return _ball(typed, p, d, shape, dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _ball(typed, p, d, shape, dtype):
  jnp = _jnp()
  # Imported here: the gamma family's module imports this one.
  from purejax._src.random.gamma_derived import generalized_normal
  from purejax._src.random.prng import split
  k1, k2 = split(typed)
  g = generalized_normal(k1, p, (*shape, d), dtype)
  e = exponential(k2, shape, dtype)
  return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
  """Haar-random orthogonal (n, m) matrices: QR of a normal matrix, with the
  columns' signs fixed by diag(R) (Mezzadri 2007)."""
  typed, _ = keys_lib.check_prng_key("orthogonal", key)
  dtype = float_dtype("orthogonal", dtype, np.inexact, "a float or complex")
  shape = canonicalize_shape(shape)
  n = _concrete_index(n)
  m = n if m is None else _concrete_index(m)
  return _orthogonal(typed, n, m, shape, dtype)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(typed, n, m, shape, dtype):
  jnp = _jnp()
  z = normal(typed, (*shape, max(n, m), min(n, m)), dtype)
  q, r = jnp.linalg.qr(z)
  x = q * jnp.expand_dims(jnp.sign(jnp.linalg.diagonal(r)), -2)
  return x.mT if n < m else x


def _concrete_index(n):
  # tracers refuse __index__ with JAX's concretization error
  return operator.index(n)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
  """mean + factor @ z, with cov = factor factor^T from cholesky, eigh or svd."""
  from purejax._src.numpy.util import promote_dtypes_inexact
  typed, _ = keys_lib.check_prng_key("multivariate_normal", key)
  mean, cov = promote_dtypes_inexact(mean, cov)
  if method not in {"svd", "eigh", "cholesky"}:
    raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
  dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `multivariate_normal` must be a float "
                     f"dtype, got {dtype}")
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _multivariate_normal(typed, mean, cov, shape, dtype, method)


@functools.partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(typed, mean, cov, shape, dtype, method):
  jnp = _jnp()
  if not np.ndim(mean) >= 1:
    raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                     f"{np.ndim(mean)}")
  if not np.ndim(cov) >= 2:
    raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                     f"{np.ndim(cov)}")
  n = mean.shape[-1]
  if np.shape(cov)[-2:] != (n, n):
    raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                     f"but got cov.shape == {np.shape(cov)}.")
  if shape is None:
    shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
  else:
    check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
  if method == "svd":
    u, s, _ = jnp.linalg.svd(cov)
    factor = u * jnp.sqrt(s[..., None, :])
  elif method == "eigh":
    w, v = jnp.linalg.eigh(cov)
    factor = v * jnp.sqrt(w[..., None, :])
  else:
    factor = jnp.linalg.cholesky(cov)
  z = normal(typed, shape + mean.shape[-1:], dtype)
  return mean + jnp.einsum("...ij,...j->...i", factor, z)
