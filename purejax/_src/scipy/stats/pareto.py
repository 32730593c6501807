"""The Pareto distribution with shape ``b``."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def _below(x, loc, scale):
  return lax.lt(x, lax.add(loc, scale))


def logpdf(x, b, loc=0, scale=1):
  """log(b/scale) - (b + 1) log y for y >= 1, else -inf."""
  x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
  y = lax.div(lax.sub(x, loc), scale)
  log_probs = lax.neg(lax.add(lax.log(lax.div(scale, b)),
                              lax.mul(lax.add(b, const(x, 1)), lax.log(y))))
  return jnp.where(_below(x, loc, scale), -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
  """1 - y^-b for y >= 1, else 0."""
  x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
  y = lax.div(lax.sub(x, loc), scale)
  return jnp.where(_below(x, loc, scale), const(x, 0),
                   lax.sub(const(x, 1), lax.pow(y, lax.neg(b))))


def logcdf(x, b, loc=0, scale=1):
  """log1p(-y^-b) for y >= 1, else -inf."""
  x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
  y = lax.div(lax.sub(x, loc), scale)
  return jnp.where(_below(x, loc, scale), -np.inf,
                   lax.log1p(lax.neg(lax.pow(y, lax.neg(b)))))


def logsf(x, b, loc=0, scale=1):
  """-b log y for y >= 1, else 0."""
  x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
  y = lax.div(lax.sub(x, loc), scale)
  return jnp.where(_below(x, loc, scale), const(x, 0), lax.neg(lax.mul(b, lax.log(y))))


def sf(x, b, loc=0, scale=1):
  """P(X > x)."""
  return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
  """loc + scale (1 - q)^(-1/b); NaN for q outside [0, 1]."""
  q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
  one = const(q, 1)
  value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
  return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
