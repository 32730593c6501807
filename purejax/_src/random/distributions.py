"""Samplers built by transforming uniform or normal samples (JAX's formulas,
so the same key gives the same values)."""
import operator

import numpy as np

from purejax._src import dtypes
from purejax._src.lax.utils import canonicalize_shape
from purejax._src.random import keys as keys_lib
from purejax._src.random.basic import (
    _normal, _split_typed, uniform, bernoulli, broadcast_shapes_or, check_shape,
    float_dtype)
from purejax._src.lax.convert import bitcast_convert_type
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
  lax, jnp = _lax(), _jnp()
  if shape is not None:
    shape = canonicalize_shape(shape)
  typed, _ = keys_lib.check_prng_key("truncated_normal", key)
  dtype = float_dtype("truncated_normal", dtype)
  shape = broadcast_shapes_or("truncated_normal", shape, lower, upper)
  sqrt2 = np.array(np.sqrt(2), dtype)
  lower = lax.convert_element_type(lower, dtype)
  upper = lax.convert_element_type(upper, dtype)
  a, b = erf(lax.div(lower, sqrt2)), erf(lax.div(upper, sqrt2))
  u = uniform(typed, shape, dtype, a, b)
  out = lax.mul(sqrt2, erf_inv(u))
  # Keep rounding from landing exactly on (or past) the bounds.
  lo = lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype))
  hi = lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype))
  return jnp.clip(out, lo, hi)


def exponential(key, shape=(), dtype=None, *, out_sharding=None):
  """Exponential(1): -log(1 - u)."""
  lax = _lax()
  typed, shape, dtype = _simple("exponential", key, shape, dtype)
  u = uniform(typed, shape, dtype, 0., 1.)
  return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None, *, out_sharding=None):
  """Laplace(0, 1): sign(u) log(1 - |u|) for u uniform on (-1, 1)."""
  lax = _lax()
  typed, shape, dtype = _simple("laplace", key, shape, dtype)
  u = uniform(typed, shape, dtype, -1. + dtypes.finfo(dtype).epsneg, 1.)
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None, *, out_sharding=None):
  """Logistic(0, 1): log(u) - log(1 - u)."""
  lax = _lax()
  typed, shape, dtype = _simple("logistic", key, shape, dtype)
  x = uniform(typed, shape, dtype, dtypes.finfo(dtype).tiny, 1.)
  return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
  """Standard Cauchy: tan(pi (u - 1/2))."""
  lax = _lax()
  typed, shape, dtype = _simple("cauchy", key, shape, dtype)
  u = uniform(typed, shape, dtype, dtypes.finfo(dtype).eps, 1.)
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


def _gumbel(typed, shape, dtype, mode):
  jnp = _jnp()
  info = dtypes.finfo(dtype)
  if mode == "highest" and dtype == np.float32:
    return _gumbel_highest_f32(typed, shape)
  if mode in ("high", "highest"):
    u = uniform(typed, (2,) + tuple(shape), dtype, 0., 1.)
    high, low = u[0], u[1]
    x = jnp.where(high >= 0.5, high, high + 2 ** -info.nmant * low + info.tiny)
    return -jnp.log(-jnp.log1p(-x))
  return -jnp.log(-jnp.log(uniform(typed, shape, dtype, info.tiny, 1.)))


def _gumbel_highest_f32(typed, shape):
  """Gumbel from a 64-bit fixed-point uniform u: below one half u itself is
  converted exactly (log1p(-u)); above, 1 - u is (log(1 - u))."""
  lax, jnp = _lax(), _jnp()
  u32 = np.uint32
  bits = random_bits(typed, 32, (2,) + tuple(shape))
  # 1 - u in 64-bit two's complement: ~u + 1, carrying into the high word.
  neg = lax.bitwise_not(bits)
  carry = lax.convert_element_type(neg[1] == u32(0xFFFFFFFF), u32)
  neg = jnp.stack([neg[0] + carry, neg[1] + u32(1)])
  small = bits[0] < u32(1 << 31)
  x = _fixed64_to_float32(jnp.where(small, bits, neg))
  return jnp.where(small, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def _fixed64_to_float32(words):
  """The float32 nearest below the fraction 0.hi lo (two uint32 words),
  normalised by the leading-zero count so that small values keep all 24
  significant bits."""
  lax, jnp = _lax(), _jnp()
  u32 = np.uint32
  hi, lo = words[0], words[1]
  hi_zeros, lo_zeros = lax.clz(hi), lax.clz(lo)
  hi_empty = hi_zeros == u32(32)
  # Shift the first set bit to the top of a 32-bit word (shifts >= 32 give 0).
  top = lax.bitwise_or(
      lax.shift_left(hi, hi_zeros),
      jnp.where(hi_empty, lax.shift_left(lo, lo_zeros),
                lax.shift_right_logical(lo, u32(32) - hi_zeros)))
  # Drop the leading one (implicit in the float) and keep 23 mantissa bits.
  mantissa = lax.bitwise_and(lax.shift_right_logical(top, u32(8)), u32((1 << 23) - 1))
  leading_zeros = jnp.where(hi_empty, u32(32) + lo_zeros, hi_zeros)
  # value = 1.m * 2**-(zeros + 1): biased exponent 127 - (zeros + 1).
  exponent = lax.shift_left(u32(126) - leading_zeros, u32(23))
  exponent = lax.bitwise_and(exponent, u32(0xFF << 23))
  return bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
  """-1 or +1 with equal probability (an integer dtype by default)."""
  typed, _ = keys_lib.check_prng_key("rademacher", key)
  dtype = np.dtype(dtypes.canonicalize_user_dtype(int if dtype is None else dtype))
  shape = canonicalize_shape(shape)
  b = bernoulli(typed, 0.5, shape).astype(dtype)
  return (2 * b - 1).astype(dtype)


def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
  """Maxwell: the length of a standard normal 3-vector."""
  jnp = _jnp()
  typed, shape, dtype = _simple("maxwell", key, shape, dtype)
  x = _normal(typed, tuple(shape) + (3,), dtype)
  return jnp.sqrt(jnp.sum(x * x, axis=-1))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """A Maxwell sample with a random sign, scaled and shifted."""
  typed, shape, dtype = _simple("double_sided_maxwell", key, shape, dtype)
  params_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
  if not shape:
    shape = params_shape
  shape = tuple(shape) + params_shape
  k_maxwell, k_sign = _split_typed(typed)
  magnitude = maxwell(k_maxwell, shape, dtype)
  sign = rademacher(k_sign, shape, dtype)
  return sign * magnitude * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Weibull: scale * (-log(1 - u)) ** (1 / concentration)."""
  jnp = _jnp()
  typed, shape, dtype = _simple("weibull_min", key, shape, dtype)
  u = uniform(typed, shape, dtype, 0, 1)
  return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
  """Pareto(b) on [1, inf): exp(e / b) for e ~ Exponential(1)."""
  lax = _lax()
  typed, _ = keys_lib.check_prng_key("pareto", key)
  dtype = float_dtype("pareto", dtype)
  shape = broadcast_shapes_or("pareto", shape, b)
  b = lax.convert_element_type(b, dtype)
  e = exponential(typed, shape, dtype)
  return lax.exp(lax.div(e, b))


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
  """exp(sigma * z) for z standard normal."""
  lax = _lax()
  typed, _ = keys_lib.check_prng_key("lognormal", key)
  dtype = float_dtype("lognormal", dtype, np.inexact, "a float or complex")
  shape = broadcast_shapes_or("lognormal", shape, sigma)
  sigma = lax.convert_element_type(sigma, dtype)
  return lax.exp(lax.mul(_normal(typed, shape, dtype), sigma))


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
  """Rayleigh(scale): scale * sqrt(-2 log u)."""
  lax, jnp = _lax(), _jnp()
  typed, _ = keys_lib.check_prng_key("rayleigh", key)
  dtype = float_dtype("rayleigh", dtype)
  shape = broadcast_shapes_or("rayleigh", shape, scale)
  u = uniform(typed, shape, dtype, 0., 1.)
  scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
  return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), np.array(-2, dtype))))


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
  """Triangular on [left, right] with peak at ``mode`` (inverse CDF)."""
  lax, jnp = _lax(), _jnp()
  typed, _ = keys_lib.check_prng_key("triangular", key)
  dtype = float_dtype("triangular", dtype)
  shape = broadcast_shapes_or("triangular", shape, left, mode, right)
  left, mode, right = (jnp.broadcast_to(lax.convert_element_type(v, dtype), shape)
                       for v in (left, mode, right))
  fc = (mode - left) / (right - left)
  u = uniform(typed, shape, dtype, 0., 1.)
  out1 = left + lax.sqrt(u * (right - left) * (mode - left))
  out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
  return lax.select(u < fc, out1, out2)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
  """Number of Bernoulli(p) trials up to the first success (>= 1)."""
  lax, jnp = _lax(), _jnp()
  typed, _ = keys_lib.check_prng_key("geometric", key)
  dtype = np.dtype(dtypes.canonicalize_user_dtype(int if dtype is None else dtype))
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  shape = broadcast_shapes_or("geometric", shape, p)
  p = jnp.asarray(p)
  if not dtypes.issubdtype(p.dtype, np.inexact):
    p = p.astype(dtypes.default_float_dtype())
  u = uniform(typed, shape, p.dtype, 0., 1.)
  u = jnp.where(u == 0, 1, u)
  log_q = jnp.broadcast_to(lax.log1p(-p), shape)
  return (lax.floor(lax.div(lax.log(u), log_q)) + 1).astype(dtype)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
  """Uniform samples from the unit p-norm ball in ``d`` dimensions."""
  jnp = _jnp()
  typed, shape, dtype = _simple("ball", key, shape, dtype)
  # Imported here: the gamma family's module imports this one.
  from purejax._src.random.gamma_derived import generalized_normal
  d = int(d)
  k1, k2 = _split_typed(typed)
  g = generalized_normal(k1, p, tuple(shape) + (d,), dtype)
  e = exponential(k2, shape, dtype)
  return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
  """Haar-random orthogonal (n, m) matrices: QR of a normal matrix, with the
  columns' signs fixed by diag(R) (Mezzadri 2007)."""
  from purejax._src.lax import linalg
  jnp = _jnp()
  typed, _ = keys_lib.check_prng_key("orthogonal", key)
  dtype = float_dtype("orthogonal", dtype, np.inexact, "a float or complex")
  shape = canonicalize_shape(shape)
  n = _concrete_index(n)
  m = n if m is None else _concrete_index(m)
  z = _normal(typed, (*shape, max(n, m), min(n, m)), dtype)
  q, r = linalg.qr(z, full_matrices=False)
  d = _diag(r)
  x = q * jnp.expand_dims(jnp.sign(d), -2)
  return jnp.swapaxes(x, -1, -2) if n < m else x


def _concrete_index(n):
  # tracers refuse __index__ with JAX's concretization error
  return operator.index(n)


def _diag(x):
  """The diagonal of the last two axes (a product with the identity's mask)."""
  jnp = _jnp()
  k = min(np.shape(x)[-2:])
  x = x[..., :k, :k]
  return jnp.sum(x * np.eye(k, dtype=bool), axis=-1)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
  """mean + factor @ z, with cov = factor factor^T from cholesky, eigh or svd."""
  from purejax._src.lax import linalg
  from purejax._src.numpy.util import promote_dtypes_inexact
  jnp = _jnp()
  typed, _ = keys_lib.check_prng_key("multivariate_normal", key)
  mean, cov = promote_dtypes_inexact(mean, cov)
  if method not in {"svd", "eigh", "cholesky"}:
    raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
  dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `multivariate_normal` must be a float "
                     f"dtype, got {dtype}")
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
    shape = canonicalize_shape(shape)
    check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
  if method == "svd":
    u, s, _ = linalg.svd(cov)
    factor = u * jnp.sqrt(s[..., None, :])
  elif method == "eigh":
    v, w = linalg.eigh(cov)
    factor = v * jnp.sqrt(w[..., None, :])
  else:
    factor = linalg.cholesky(cov)
  z = _normal(typed, shape + mean.shape[-1:], dtype)
  return mean + jnp.matmul(factor, z[..., None])[..., 0]
