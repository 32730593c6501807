"""The gamma distribution with shape ``a``."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import gammainc, gammaincc, gammaln, xlogy
from purejax._src.scipy.util import const


def logpdf(x, a, loc=0, scale=1):
  """(a - 1) log y - y - log Gamma(a) - log scale, y = (x - loc)/scale."""
  x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
  ok = lax.ge(x, loc)
  one = const(x, 1)
  y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
  log_probs = lax.sub(lax.sub(xlogy(lax.sub(a, one), y), y),
                      lax.add(gammaln(a), lax.log(scale)))
  return jnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
  """Regularized lower incomplete gamma P(a, y)."""
  x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
  y = lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, np.inf))
  return gammainc(a, y)


def logcdf(x, a, loc=0, scale=1):
  """log of cdf."""
  return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
  """Regularized upper incomplete gamma Q(a, y); 1 below loc."""
  x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
  y = lax.div(lax.sub(x, loc), scale)
  return jnp.where(lax.lt(y, const(y, 0)), 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
  """log of sf."""
  return lax.log(sf(x, a, loc, scale))
