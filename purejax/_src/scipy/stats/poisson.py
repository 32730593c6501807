"""The Poisson distribution with mean ``mu``."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.api import jit
from purejax._src.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes_inexact
from purejax._src.scipy.special import entr, gammaincc, gammaln, xlogy
from purejax._src.scipy.util import const


def logpmf(k, mu, loc=0):
  """k log mu - log k! - mu; -inf below loc or for non-integer k."""
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  x = lax.sub(k, loc)
  log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
  bad = jnp.logical_or(lax.lt(x, const(k, 0)), lax.ne(jnp.round(k), k))
  return jnp.where(bad, -np.inf, log_probs)


def pmf(k, mu, loc=0):
  """Probability mass at ``k``."""
  return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
  """Q(floor(k - loc) + 1, mu); 0 below loc."""
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  zero = const(k, 0)
  x = lax.sub(k, loc)
  return jnp.where(lax.lt(x, zero), zero, gammaincc(jnp.floor(1 + x), mu))


def _entropy_by_sum(mu, max_k, upper):
  """-sum_k p_k log p_k over k < min(max_k, upper) (the rest is negligible)."""
  k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
  probs = jnp.where(k < upper[None, :], pmf(k, mu, 0), 0.0)
  return jnp.sum(entr(probs), axis=0)


@jit
def entropy(mu, loc=0):
  """Entropy of Poisson(mu): a direct sum for mu < 100, then the asymptotic
  expansion 1/2 log(2 pi e mu) - 1/(12 mu)."""
  check_arraylike("poisson.entropy", mu, loc)
  mu, loc = promote_dtypes_inexact(mu, loc)
  shape = np.broadcast_shapes(mu.shape, loc.shape)
  flat = jnp.ravel(mu)
  small = _entropy_by_sum(flat, 35, jnp.ceil(flat + 20))
  medium = _entropy_by_sum(flat, 250, jnp.ceil(flat + 10 * jnp.sqrt(flat) + 20))
  large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
  result = jnp.where(flat == 0, 0.0, jnp.where(flat < 10, small,
                                               jnp.where(flat < 100, medium, large)))
  return jnp.broadcast_to(jnp.reshape(result, mu.shape), shape)
