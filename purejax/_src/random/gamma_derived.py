"""Distributions built from gamma samples (and wald, from a normal).

Each follows JAX's construction step by step (which keys feed which draw,
the order of the arithmetic), so values agree with JAX for the same key.
Ratios of gamma variates are formed from ``loggamma`` where small shape
parameters would make the gammas underflow.
"""
import functools

import numpy as np

from purejax._src.api import jit
from purejax._src.lax import api_elementwise as lax_ew
from purejax._src.lax.convert import convert_element_type
from purejax._src.lax.stop_gradient import stop_gradient
from purejax._src.random import gamma_keys as _keys
from purejax._src.random.gamma import (
    canonical_shape, check_float_dtype, default_dtype, check_shape, gamma, loggamma)
import purejax.numpy as jnp

__all__ = ["beta", "chisquare", "dirichlet", "f", "generalized_normal", "t", "wald"]


def _c(x, value):
  return np.array(value, dtype=x.dtype)


# -- beta ---------------------------------------------------------------------

@functools.partial(jit, static_argnames=("shape", "dtype"))
def _beta(key, a, b, shape, dtype):
  if shape is None:
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
  else:
    check_shape("beta", shape, jnp.shape(a), jnp.shape(b))
  a = convert_element_type(a, dtype)
  b = convert_element_type(b, dtype)
  key_a, key_b = _keys.split2(key)
  a = jnp.broadcast_to(a, shape)
  b = jnp.broadcast_to(b, shape)
  log_ga = loggamma(key_a, a, shape, dtype)
  log_gb = loggamma(key_b, b, shape, dtype)
  # ga / (ga + gb) scaled by the larger one: no overflow or 0/0.
  log_max = lax_ew.max(log_ga, log_gb)
  ga = jnp.exp(log_ga - log_max)
  gb = jnp.exp(log_gb - log_max)
  return ga / (ga + gb)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
  """Beta(a, b) samples; ``shape`` defaults to a and b broadcast."""
  key = _keys.check_key("beta", key)
  dtype = check_float_dtype("beta", dtype)
  return _beta(key, a, b, canonical_shape(shape), dtype)


# -- dirichlet ----------------------------------------------------------------

def _softmax(x, axis):
  x_max = jnp.max(x, axis, initial=-np.inf, keepdims=True)
  unnormalized = jnp.exp(x - stop_gradient(x_max))
  return unnormalized / unnormalized.sum(axis, keepdims=True)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _dirichlet(key, alpha, shape, dtype):
  if not jnp.ndim(alpha) >= 1:
    raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {jnp.ndim(alpha)}")
  if shape is None:
    shape = jnp.shape(alpha)[:-1]
  else:
    check_shape("dirichlet", shape, jnp.shape(alpha)[:-1])
  alpha = convert_element_type(alpha, dtype)
  # Normalize in log space: small alphas give gammas that underflow.
  log_g = loggamma(key, alpha, shape + jnp.shape(alpha)[-1:], dtype)
  return _softmax(log_g, -1)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
  """Dirichlet(alpha) samples, shape ``shape + alpha.shape[-1:]``."""
  key = _keys.check_key("dirichlet", key)
  dtype = check_float_dtype("dirichlet", dtype)
  return _dirichlet(key, alpha, canonical_shape(shape), dtype)


# -- chisquare, f, t ----------------------------------------------------------

@functools.partial(jit, static_argnames=("shape", "dtype"))
def _chisquare(key, df, shape, dtype):
  if shape is None:
    shape = jnp.shape(df)
  else:
    check_shape("chisquare", shape, jnp.shape(df))
  df = convert_element_type(df, dtype)
  two = _c(df, 2)
  log_g = loggamma(key, lax_ew.div(df, two), shape, dtype)
  return lax_ew.mul(jnp.exp(log_g), two)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Chi-square(df) samples: 2 Gamma(df / 2)."""
  key = _keys.check_key("chisquare", key)
  dtype = check_float_dtype("chisquare", dtype)
  return _chisquare(key, df, canonical_shape(shape), dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _f(key, dfnum, dfden, shape, dtype):
  if shape is None:
    shape = jnp.broadcast_shapes(jnp.shape(dfden), jnp.shape(dfnum))
  else:
    check_shape("f", shape, jnp.shape(dfden), jnp.shape(dfnum))
  dfden = convert_element_type(dfden, dtype)
  dfnum = convert_element_type(dfnum, dtype)
  key_den, key_num = _keys.split2(key)
  chi2_num = chisquare(key_num, dfnum, shape, dtype)
  chi2_den = chisquare(key_den, dfden, shape, dtype)
  return lax_ew.div(lax_ew.div(chi2_num, dfnum), lax_ew.div(chi2_den, dfden))


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
  """F(dfnum, dfden) samples: a ratio of scaled chi-squares."""
  key = _keys.check_key("f", key)
  dtype = check_float_dtype("f", dtype)
  return _f(key, dfnum, dfden, canonical_shape(shape), dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _t(key, df, shape, dtype):
  if shape is None:
    shape = jnp.shape(df)
  else:
    check_shape("t", shape, jnp.shape(df))
  df = convert_element_type(df, dtype)
  key_n, key_g = _keys.split2(key)
  n = _keys.normal(key_n, dtype, shape)
  half_df = lax_ew.div(df, _c(n, 2))
  g = gamma(key_g, half_df, shape, dtype)
  return n * jnp.sqrt(half_df / g)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Student's t(df) samples: N / sqrt(Gamma(df/2) / (df/2))."""
  key = _keys.check_key("t", key)
  dtype = check_float_dtype("t", dtype)
  return _t(key, df, canonical_shape(shape), dtype)


# -- generalized normal, wald -------------------------------------------------

@functools.partial(jit, static_argnames=("shape", "dtype"))
def _generalized_normal(key, p, shape, dtype):
  keys = _keys.split_n(key, 2)   # indexed where used, as JAX does
  g = gamma(keys[0], 1 / p, shape, dtype)
  r = _keys.rademacher(keys[1], shape, dtype)
  return r * g ** (1 / p)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
  """Samples with density proportional to exp(-|x|^p): a random sign times
  Gamma(1/p)^(1/p)."""
  key = _keys.check_key("generalized_normal", key)
  shape = canonical_shape(shape)
  dtype = default_dtype(dtype)   # gamma checks that it is a float dtype
  return _generalized_normal(key, p, shape, dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _wald(key, mean, shape, dtype):
  if shape is None:
    shape = jnp.shape(mean)
  else:
    check_shape("wald", shape, jnp.shape(mean))
  key_v, key_z = _keys.split2(key)
  mean = convert_element_type(mean, dtype)
  mean = jnp.broadcast_to(mean, shape)
  v = _keys.normal(key_v, dtype, shape)
  z = _keys.uniform(key_z, dtype, shape)
  # Michael, Schucany & Haas: the smaller root of the chi-square(1)
  # transformation, or mean^2 / root, chosen with probability mean/(mean+x).
  y = v ** 2
  y_sq = y ** 2
  mean_sq = mean ** 2
  sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
  x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
  return lax_ew.select(lax_ew.le(z, mean / (mean + x)), x, mean_sq / x)


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
  """Wald (inverse Gaussian, scale 1) samples with the given mean."""
  key = _keys.check_key("wald", key)
  dtype = check_float_dtype("wald", dtype)
  return _wald(key, mean, canonical_shape(shape), dtype)
