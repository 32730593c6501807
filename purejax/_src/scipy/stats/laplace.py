"""The Laplace (double exponential) distribution."""
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def logpdf(x, loc=0, scale=1):
  """-|x - loc|/scale - log(2 scale)."""
  x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
  linear = lax.div(lax.abs(lax.sub(x, loc)), scale)
  return lax.neg(lax.add(linear, lax.log(lax.mul(const(x, 2), scale))))


def pdf(x, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """exp(z)/2 below loc, 1 - exp(-z)/2 above (z = (x - loc)/scale)."""
  x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
  half = const(x, 0.5)
  z = lax.div(lax.sub(x, loc), scale)
  return lax.select(lax.le(z, const(x, 0)), lax.mul(half, lax.exp(z)),
                    lax.sub(const(x, 1), lax.mul(half, lax.exp(lax.neg(z)))))
