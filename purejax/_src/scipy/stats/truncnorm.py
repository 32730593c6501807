"""The normal distribution truncated to [a, b] (in standard units)."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.api import jit
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.logsumexp import logsumexp
from purejax._src.scipy.special_ndtr import log_ndtr, ndtr
from purejax._src.scipy.stats import norm


def _log_diff(x, y):
  """log(exp(x) - exp(y))."""
  return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]),
                   axis=0)


def _log_gauss_mass(a, b):
  """log(ndtr(b) - ndtr(a)), using the tail nearer to zero for accuracy."""
  a, b = jnp.broadcast_arrays(jnp.array(a), jnp.array(b))
  left = b <= 0
  right = a > 0
  central = ~(left | right)
  a_tail = jnp.where(right, -b, a)
  b_tail = jnp.where(right, -a, b)
  mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
  mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
  return jnp.where(central, mass_central, mass_tail)


@jit
def logpdf(x, a, b, loc=0, scale=1):
  """Normal log density minus the log mass of [a, b]; -inf outside, NaN if a >= b."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
  val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
  z = lax.div(lax.sub(x, loc), scale)
  val = jnp.where((z < a) | (z > b), -np.inf, val)
  return jnp.where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, a, b, loc, scale))


@jit
def logcdf(x, a, b, loc=0, scale=1):
  """log P(X <= x), from whichever of the two masses is more accurate."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
  x, a, b = jnp.broadcast_arrays(x, a, b)
  x = lax.div(lax.sub(x, loc), scale)
  total = _log_gauss_mass(a, b)
  log_cdf = _log_gauss_mass(a, x) - total
  log_sf = _log_gauss_mass(x, b) - total
  log_cdf = jnp.select([x >= b, x <= a, log_cdf > -0.1, x > a],
                       [0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
  return jnp.where(a >= b, np.nan, log_cdf)


def cdf(x, a, b, loc=0, scale=1):
  """P(X <= x)."""
  return lax.exp(logcdf(x, a, b, loc, scale))


@jit
def logsf(x, a, b, loc=0, scale=1):
  """log P(X > x), by reflection."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
  return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
  """P(X > x)."""
  return lax.exp(logsf(x, a, b, loc, scale))
