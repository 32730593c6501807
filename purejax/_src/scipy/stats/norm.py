"""The normal distribution N(loc, scale^2)."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy import special_ndtr
from purejax._src.scipy.util import const


def logpdf(x, loc=0, scale=1):
  """Log density of N(loc, scale^2) at ``x``."""
  x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
  var = lax.square(scale)
  log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), var))
  quadratic = lax.div(lax.square(lax.sub(x, loc)), var)
  return lax.div(lax.add(log_normalizer, quadratic), const(x, -2))


def pdf(x, loc=0, scale=1):
  """Density of N(loc, scale^2) at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """P(X <= x)."""
  x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
  return special_ndtr.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
  """log P(X <= x), accurate in the lower tail."""
  x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
  return special_ndtr.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q, loc=0, scale=1):
  """Quantile function; the result has the default float dtype (as JAX)."""
  return jnp.asarray(special_ndtr.ndtri(q) * scale + loc, float)


def sf(x, loc=0, scale=1):
  """P(X > x)."""
  x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
  return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
  """log P(X > x)."""
  x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
  return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
  """Inverse survival function ppf(1 - q)."""
  return ppf(lax.sub(const(q, 1), q), loc, scale)
