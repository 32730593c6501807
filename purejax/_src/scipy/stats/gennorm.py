"""The generalized normal distribution with shape ``beta``."""
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact


def logpdf(x, beta):
  """log(beta / 2) - log Gamma(1/beta) - |x|^beta."""
  x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
  return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x, beta):
  """(1 + sign(x) P(1/beta, |x|^beta)) / 2."""
  x, beta = promote_args_inexact("gennorm.cdf", x, beta)
  return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x, beta):
  """Density at ``x``."""
  return lax.exp(logpdf(x, beta))
