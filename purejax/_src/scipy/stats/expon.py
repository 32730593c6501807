"""The exponential distribution with rate 1/scale, shifted by loc."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact


def logpdf(x, loc=0, scale=1):
  """-(x - loc)/scale - log(scale) for x >= loc, else -inf."""
  x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
  log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """1 - exp(-(x - loc)/scale) (via expm1), 0 below loc."""
  x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def logsf(x, loc=0, scale=1):
  """-(x - loc)/scale, 0 below loc."""
  x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), neg_z)


def sf(x, loc=0, scale=1):
  """P(X > x)."""
  return lax.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """log(1 - sf(x))."""
  return lax.log1p(lax.neg(sf(x, loc, scale)))


def ppf(q, loc=0, scale=1):
  """loc - scale log(1 - q); NaN for q outside [0, 1]."""
  q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
  bad = jnp.isnan(q) | (q < 0) | (q > 1)
  return jnp.where(bad, np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
