"""The chi-squared distribution with ``df`` degrees of freedom."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import gammainc, gammaincc
from purejax._src.scipy.util import const


def logpdf(x, df, loc=0, scale=1):
  """Log density: a gamma(df/2) density with scale 2."""
  x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
  one, two = const(x, 1), const(x, 2)
  y = lax.div(lax.sub(x, loc), scale)
  half_df = lax.div(df, two)
  kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
  normalizer = lax.neg(lax.add(lax.lgamma(half_df), lax.div(lax.mul(lax.log(two), df), two)))
  log_probs = lax.add(lax.sub(normalizer, lax.log(scale)), kernel)
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
  y = lax.div(lax.sub(x, loc), lax.mul(scale, const(scale, 2)))
  return lax.clamp(const(x, 0), y, const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
  """P(df/2, y/2)."""
  x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
  return gammainc(lax.div(df, const(df, 2)), _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
  """log of cdf."""
  return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
  """Q(df/2, y/2)."""
  x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
  return gammaincc(lax.div(df, const(df, 2)), _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
  """log of sf."""
  return lax.log(sf(x, df, loc, scale))
