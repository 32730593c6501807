"""The uniform distribution on [loc, loc + scale]."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def _outside(x, loc, scale):
  return jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))


def logpdf(x, loc=0, scale=1):
  """-log(scale) inside the interval, -inf outside."""
  x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
  return jnp.where(_outside(x, loc, scale), -np.inf, lax.neg(lax.log(scale)))


def pdf(x, loc=0, scale=1):
  """1/scale inside the interval, 0 outside."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
  """(x - loc) / scale clipped to [0, 1]; 0 for NaN (as JAX)."""
  x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
  hi = lax.add(loc, scale)
  conds = [lax.lt(x, loc), lax.gt(x, hi), lax.ge(x, loc) & lax.le(x, hi)]
  return jnp.select(conds, [const(x, 0), const(x, 1), lax.div(lax.sub(x, loc), scale)])


def ppf(q, loc=0, scale=1):
  """loc + q * scale; NaN for q outside [0, 1]."""
  q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
  bad = jnp.isnan(q) | (q < 0) | (q > 1)
  return jnp.where(bad, np.nan, lax.add(loc, lax.mul(scale, q)))
