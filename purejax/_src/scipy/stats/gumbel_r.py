"""The right-skewed Gumbel (extreme value) distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.nn.activations import log1mexp
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import xlogy
from purejax._src.scipy.util import const


def _ok(scale):
  return lax.gt(scale, const(scale, 0))


def logpdf(x, loc=0, scale=1):
  """-log(scale) - z - exp(-z); NaN for scale <= 0."""
  x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
  z = lax.div(lax.sub(x, loc), scale)
  value = lax.add(xlogy(-1, scale), lax.neg(lax.add(z, lax.exp(lax.neg(z)))))
  return jnp.where(_ok(scale), value, np.nan)


def pdf(x, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
  """-exp(-z)."""
  x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
  z = lax.div(lax.sub(x, loc), scale)
  return jnp.where(_ok(scale), lax.neg(lax.exp(lax.neg(z))), np.nan)


def cdf(x, loc=0, scale=1):
  """exp(-exp(-z))."""
  return lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
  """loc - scale log(-log p); NaN outside (0, 1)."""
  p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
  ok = lax.bitwise_and(lax.gt(p, const(p, 0)), lax.lt(p, const(p, 1)))
  return jnp.where(ok, lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p)))), np.nan)


def sf(x, loc=0, scale=1):
  """1 - exp(-exp(-z))."""
  x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  value = lax.sub(const(x, 1), lax.exp(lax.neg(lax.exp(neg_z))))
  return jnp.where(_ok(scale), value, np.nan)


def logsf(x, loc=0, scale=1):
  """log(1 - exp(-exp(-z)))."""
  x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  return jnp.where(_ok(scale), log1mexp(lax.exp(neg_z)), np.nan)
