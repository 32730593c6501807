"""The Cauchy distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def logpdf(x, loc=0, scale=1):
  """-log(pi scale) - log1p(z^2)."""
  x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
  z = lax.div(lax.sub(x, loc), scale)
  normalizer = lax.log(lax.mul(const(x, np.pi), scale))
  return lax.neg(lax.add(normalizer, lax.log1p(lax.mul(z, z))))


def pdf(x, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """1/2 + arctan(z)/pi."""
  x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
  z = lax.div(lax.sub(x, loc), scale)
  return lax.add(const(x, 0.5), lax.mul(lax.div(const(x, 1.0), const(x, np.pi)), jnp.arctan(z)))


def logcdf(x, loc=0, scale=1):
  """log of cdf."""
  return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
  """cdf reflected about loc."""
  x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
  return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
  """log of sf."""
  x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
  return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
  """loc + scale tan(pi (q - 1/2))."""
  q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
  unscaled = lax.tan(lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
  return lax.add(lax.mul(unscaled, scale), loc)


def isf(q, loc=0, scale=1):
  """loc + scale tan(pi (1/2 - q))."""
  q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
  unscaled = lax.tan(lax.sub(const(q, np.pi / 2), lax.mul(const(q, np.pi), q)))
  return lax.add(lax.mul(unscaled, scale), loc)
