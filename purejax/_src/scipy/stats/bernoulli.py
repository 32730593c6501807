"""The Bernoulli distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import xlog1py, xlogy
from purejax._src.scipy.util import const


def logpmf(k, p, loc=0):
  """k log p + (1 - k) log(1 - p) for k - loc in [0, 1], else -inf."""
  k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
  zero, one = const(k, 0), const(k, 1)
  x = lax.sub(k, loc)
  log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
  return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k, p, loc=0):
  """Probability mass at ``k``."""
  return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
  """0 below 0, 1 - p on [0, 1), 1 from 1; NaN for invalid p or NaN k."""
  k, p = promote_args_inexact("bernoulli.cdf", k, p)
  zero, one = const(k, 0), const(k, 1)
  conds = [jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one), lax.lt(k, zero),
           jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)), lax.ge(k, one)]
  return jnp.select(conds, [np.nan, zero, one - p, one])


def ppf(q, p):
  """0 for q <= 1 - p, else 1; NaN for invalid q or p."""
  q, p = promote_args_inexact("bernoulli.ppf", q, p)
  zero, one = const(q, 0), const(q, 1)
  bad = jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one)
  return jnp.where(bad, np.nan, jnp.where(lax.le(q, one - p), zero, one))
