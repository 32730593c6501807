"""Poisson, binomial and multinomial sampling, as JAX draws them.

Both run one rejection loop over the whole batch (one key for all elements,
split once per round), and pick per element between two algorithms:

* poisson: Knuth's product of uniforms for lam < 10, Hoermann's transformed
  rejection (PTRS, "The transformed rejection method for generating Poisson
  random variables", 1993) otherwise;
* binomial: counting geometric waiting times (inversion) for n q <= 10, and
  Hoermann's BTRS ("The generation of binomial random variates", 1993)
  otherwise, with q = min(p, 1 - p).
"""
import functools

import numpy as np

from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.lax import api_elementwise as lax_ew
from purejax._src.lax.control_flow.loops import while_loop
from purejax._src.lax.convert import convert_element_type
from purejax._src.random import gamma_keys as _keys
from purejax._src.random.gamma import (
    canonical_shape, check_float_dtype, check_shape, default_dtype)
from purejax._src.lax.special import lgamma
import purejax.numpy as jnp

__all__ = ["binomial", "multinomial", "poisson"]


def _c(x, value):
  return np.array(value, dtype=x.dtype)


# -- poisson ------------------------------------------------------------------

@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_knuth(key, lam, shape, dtype, max_iters):
  """Counts uniforms until their product drops below exp(-lam)."""

  def body(state):
    i, k, key, log_prod = state
    key, sub = _keys.split2(key)
    k = lax_ew.select(log_prod > -lam, k + 1, k)
    u = _keys.uniform(sub, np.dtype(np.float32), shape)
    return i + 1, k, key, log_prod + jnp.log(u)

  def cond(state):
    i, log_prod = state[0], state[3]
    return (log_prod > -lam).any() & (i < max_iters)

  k0 = jnp.zeros(shape, dtype)
  log_prod0 = jnp.zeros(shape, np.float32)
  k = while_loop(cond, body, (0, k0, key, log_prod0))[1]
  return (k - 1).astype(dtype)


@functools.partial(jit, static_argnums=(2, 3, 4))
def _poisson_rejection(key, lam, shape, dtype, max_iters):
  """PTRS: a proposal k from a transformed uniform, accepted against the
  log pmf (or early by the squeeze region)."""
  log_lam = lax_ew.log(lam)
  b = 0.931 + 2.53 * lax_ew.sqrt(lam)
  a = -0.059 + 0.02483 * b
  inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
  v_r = 0.9277 - 3.6224 / (b - 2)

  def body(state):
    i, k_out, accepted, key = state
    key, key_u, key_v = _keys.split3(key)
    u = _keys.uniform(key_u, lam.dtype, shape) - 0.5
    v = _keys.uniform(key_v, lam.dtype, shape)
    u_shifted = 0.5 - abs(u)
    k = lax_ew.floor((2 * a / u_shifted + b) * u + lam + 0.43)
    s = lax_ew.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
    t = -lam + k * log_lam - lgamma(k + 1)
    accept1 = (u_shifted >= 0.07) & (v <= v_r)
    reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
    accept_pmf = s <= t
    accept = accept1 | (~reject & accept_pmf)
    k_out = lax_ew.select(accept, k, k_out)
    accepted = accepted | accept
    return i + 1, k_out, accepted, key

  def cond(state):
    i, accepted = state[0], state[2]
    return (~accepted).any() & (i < max_iters)

  k0 = jnp.full(shape, -1, lam.dtype)
  accepted0 = jnp.zeros(shape, bool)
  k = while_loop(cond, body, (0, k0, accepted0, key))[1]
  return k.astype(dtype)


@functools.partial(jit, static_argnames=("shape", "dtype"))
def _poisson(key, lam, shape, dtype):
  use_knuth = jnp.isnan(lam) | (lam < 10)
  lam_knuth = lax_ew.select(use_knuth, lam, jnp.zeros_like(lam))
  # PTRS accepts ~89% at most; elements that use Knuth get a large dummy rate
  # so that they accept fast and do not hold the shared loop.
  lam_rejection = lax_ew.select(use_knuth, jnp.full_like(lam, 1e5), lam)
  max_iters = dtype.type(np.iinfo(dtype).max)
  result = lax_ew.select(
      use_knuth,
      _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
      _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
  return lax_ew.select(lam == 0, jnp.zeros_like(result), result)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
  """Poisson(lam) samples (integers); ``shape`` defaults to lam's shape."""
  key = _keys.check_key("poisson", key)
  _keys.require_threefry("poisson", key)
  dtype = default_dtype(dtype, int)
  if shape is not None:
    shape = canonical_shape(shape)
  else:
    shape = jnp.shape(lam)
  lam = jnp.broadcast_to(lam, shape)
  lam = convert_element_type(lam, np.float32)
  # An infinite rate makes inf - inf in the rejected branch: quiet.
  with np.errstate(invalid="ignore"):
    return _poisson(key, lam, shape, dtype)


# -- binomial -----------------------------------------------------------------

def _stirling_table():
  """fc(k) = log k! - (Stirling's formula) for k = 0..9: the tail that the
  series below is not accurate enough for."""
  from purejax._src.lax.special_gamma import lgamma_np
  k = np.arange(10, dtype=np.float64)
  return lgamma_np(k + 1) - ((k + 0.5) * np.log(k + 1) - (k + 1)
                             + 0.5 * np.log(2 * np.pi))


_STIRLING_TAIL = _stirling_table()


def _stirling_tail(k):
  """The Stirling-series error of log k!: a table for k <= 9, else the
  asymptotic series 1/12(k+1) - 1/360(k+1)^3 + 1/1260(k+1)^5."""
  small = k <= 9
  k = lax_ew.clamp(_c(k, 0), k, _c(k, 9))
  kp1sq = (k + 1) * (k + 1)
  approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
  # table[floor(k)] as a chain of selects (no gather needed).
  k_floor = jnp.floor(k)
  tail = approx
  for i, value in enumerate(_STIRLING_TAIL):
    tail = lax_ew.select(small & (k_floor == i), jnp.full_like(k, value), tail)
  return tail


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
  """Counts geometric(prob) waiting times until their sum passes count."""
  log1m_prob = jnp.log1p(-prob)

  def body(state):
    i, num_geom, geom_sum, key = state
    sub, key = _keys.split2(key)
    num_geom = lax_ew.select(geom_sum <= count, num_geom + 1, num_geom)
    u = _keys.uniform(sub, prob.dtype, shape)
    geom = jnp.ceil(jnp.log(u) / log1m_prob)
    geom_sum = geom_sum + geom
    return i + 1, num_geom, geom_sum, key

  def cond(state):
    i, geom_sum = state[0], state[2]
    return (geom_sum <= count).any() & (i < max_iters)

  zeros = jnp.zeros(shape, prob.dtype)
  num_geom = while_loop(cond, body, (0, zeros, zeros, key))[1]
  return (num_geom - 1).astype(dtype)


@functools.partial(jit, static_argnums=(3, 4, 5), inline=True)
def _btrs(key, count, prob, shape, dtype, max_iters):
  """BTRS: a transformed-uniform proposal, accepted by a squeeze or by
  comparing with the log pmf ratio to the mode (Stirling-approximated)."""
  stddev = jnp.sqrt(count * prob * (1 - prob))
  b = 1.15 + 2.53 * stddev
  a = -0.0873 + 0.0248 * b + 0.01 * prob
  c = count * prob + 0.5
  v_r = 0.92 - 4.2 / b
  r = prob / (1 - prob)
  alpha = (2.83 + 5.1 / b) * stddev
  m = jnp.floor((count + 1) * prob)

  def body(state):
    i, k_out, accepted, key = state
    key, key_u, key_v = _keys.split3(key)
    u = _keys.uniform(key_u, prob.dtype, shape)
    v = _keys.uniform(key_v, prob.dtype, shape)
    u = u - 0.5
    us = 0.5 - jnp.abs(u)
    accept1 = (us >= 0.07) & (v <= v_r)
    k = jnp.floor((2 * a / us + b) * u + c)
    reject = (k < 0) | (k > count)
    v = jnp.log(v * alpha / (a / (us * us) + b))
    ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
          + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
          + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
          + _stirling_tail(m) + _stirling_tail(count - m)
          - _stirling_tail(k) - _stirling_tail(count - k))
    accept_pmf = v <= ub
    accept = accept1 | (~reject & accept_pmf)
    k_out = lax_ew.select(accept, k, k_out)
    accepted = accepted | accept
    return i + 1, k_out, accepted, key

  def cond(state):
    i, accepted = state[0], state[2]
    return (~accepted).any() & (i < max_iters)

  k0 = jnp.full(shape, -1, prob.dtype)
  state = (0, k0, jnp.zeros(shape, bool), key)
  return while_loop(cond, body, state)[1].astype(dtype)


@functools.partial(jit, static_argnums=(3, 4), inline=True)
def _binomial(key, count, prob, shape, dtype):
  if shape is None:
    shape = jnp.broadcast_shapes(jnp.shape(count), jnp.shape(prob))
  else:
    check_shape("binomial", shape, jnp.shape(count), jnp.shape(prob))
  prob = jnp.asarray(prob)
  if not dtypes.issubdtype(prob.dtype, np.inexact):
    prob = prob.astype(dtypes.canonicalize_dtype(float))
  count = convert_element_type(count, prob.dtype)
  count = jnp.broadcast_to(count, shape)
  prob = jnp.broadcast_to(prob, shape)
  p_lt_half = prob < 0.5
  q = lax_ew.select(p_lt_half, prob, 1.0 - prob)
  count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
  count_inf = jnp.isinf(count)
  q_is_nan = jnp.isnan(q)
  q_l_0 = q < 0.0
  q = lax_ew.select(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
  use_inversion = count_nan_or_neg | (count * q <= 10.0)
  count = jnp.floor(count)   # a float count is floored, as in NumPy
  # Each element runs one algorithm; the other gets harmless parameters.
  count_inv = lax_ew.select(use_inversion, count, jnp.zeros_like(count))
  count_btrs = lax_ew.select(use_inversion, jnp.full_like(count, 1e4), count)
  q_btrs = lax_ew.select(use_inversion, jnp.full_like(q, 0.5), q)
  max_iters = dtype.type(np.finfo(dtype).max)
  samples = lax_ew.select(
      use_inversion,
      _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
      _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
  invalid = q_l_0 | q_is_nan | count_nan_or_neg
  samples = lax_ew.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
  samples = lax_ew.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype),
                          samples)
  # Samples were drawn for q = min(p, 1 - p); reflect where p >= 1/2.
  return lax_ew.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
                       samples, count.astype(dtype) - samples)


def binomial(key, n, p, shape=None, dtype=None):
  """Binomial(n, p) samples (as floats); ``shape`` defaults to n and p
  broadcast."""
  key = _keys.check_key("binomial", key)
  dtype = check_float_dtype("binomial", dtype)
  # Rejected proposals take logs of negatives (masked out later): quiet.
  with np.errstate(invalid="ignore", divide="ignore"):
    return _binomial(key, n, p, canonical_shape(shape), dtype)


# -- multinomial --------------------------------------------------------------

def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
  """Counts of ``n`` trials over the outcomes along ``p``'s last axis.

  One binomial per outcome, in order, each with its own key from one split:
  outcome i takes Binomial(remaining trials, p_i / sum(p_i..p_last)), so
  the counts add up to ``n`` (JAX's scheme, hence JAX's bits).  ``shape`` is
  the full result shape (``p`` and ``n`` broadcast to it and its prefix)."""
  from purejax._src.lax.control_flow.scan import scan
  from purejax._src.lax.cumulative import cumsum
  from purejax._src.numpy import util as jnp_util
  key = _keys.check_key("multinomial", key)
  jnp_util.check_arraylike("multinomial", n, p)
  n, p = jnp_util.promote_dtypes_inexact(n, p)
  out_dtype = default_dtype(dtype)
  if shape is None:
    shape = p.shape
  shape = tuple(shape)
  n = jnp.broadcast_to(n, shape[:-1])
  p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
  rest = cumsum(p, axis=0, reverse=True)       # p_i + ... + p_last
  ratios = p / jnp.where(rest == 0, 1, rest)

  def one_outcome(remaining, ratio_and_key):
    ratio, sub = ratio_and_key
    count = binomial(sub, remaining, jnp.clip(ratio, 0, 1), dtype=remaining.dtype)
    return remaining - count, count

  _, counts = scan(one_outcome, n, (ratios, _keys.split_n(key, ratios.shape[0])),
                   unroll=unroll)
  return jnp.moveaxis(counts, 0, -1).astype(out_dtype)
