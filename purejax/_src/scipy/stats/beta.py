"""The beta distribution on [loc, loc + scale]."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import betainc, betaln, xlog1py, xlogy
from purejax._src.scipy.util import const


def logpdf(x, a, b, loc=0, scale=1):
  """Log density; -inf outside the support, NaN for nonpositive a, b or scale."""
  x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
  one, zero = const(x, 1), const(a, 0)
  y = lax.div(lax.sub(x, loc), scale)
  log_linear = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
  log_probs = lax.sub(lax.add(lax.neg(betaln(a, b)), log_linear), lax.log(scale))
  outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
  result = jnp.where(outside, -np.inf, log_probs)
  bad = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
  return jnp.where(bad, np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x, loc, scale):
  return lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
  """I_y(a, b) with y clipped to [0, 1]."""
  x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
  return betainc(a, b, _unit(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
  """log of cdf."""
  return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
  """I_(1-y)(b, a)."""
  x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
  return betainc(b, a, 1 - _unit(x, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
  """log of sf."""
  return lax.log(sf(x, a, b, loc, scale))
