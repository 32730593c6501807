"""The logistic distribution."""
import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import expit, logit
from purejax._src.scipy.util import const


def logpdf(x, loc=0, scale=1):
  """-2 log(2 cosh(z/2)) - log(scale), written with logaddexp (no overflow)."""
  x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
  z = lax.div(lax.sub(x, loc), scale)
  half_z = lax.div(z, const(z, 2))
  return lax.sub(lax.mul(const(z, -2), jnp.logaddexp(half_z, lax.neg(half_z))), lax.log(scale))


def pdf(x, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """expit((x - loc)/scale)."""
  x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
  return expit(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
  """expit(-(x - loc)/scale)."""
  x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
  return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def ppf(x, loc=0, scale=1):
  """loc + scale logit(q) (JAX names the quantile argument ``x``)."""
  x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
  return lax.add(lax.mul(logit(x), scale), loc)


def isf(x, loc=0, scale=1):
  """loc - scale logit(q)."""
  x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
  return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)
