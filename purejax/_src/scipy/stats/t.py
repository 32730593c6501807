"""Student's t distribution."""
import numpy as np

from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def logpdf(x, df, loc=0, scale=1):
  """Log density of Student's t with ``df`` degrees of freedom."""
  x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
  two = const(x, 2)
  z = lax.div(lax.sub(x, loc), scale)
  half_df = lax.div(df, two)
  half_df_plus_half = lax.add(half_df, const(x, 0.5))
  log_norm = lax.div(lax.log(lax.mul(lax.mul(lax.mul(scale, scale), const(x, np.pi)), df)), two)
  normalizer = lax.sub(lax.add(lax.lgamma(half_df), log_norm), lax.lgamma(half_df_plus_half))
  quadratic = lax.div(lax.mul(z, z), df)
  return lax.neg(lax.add(normalizer, lax.mul(half_df_plus_half, lax.log1p(quadratic))))


def pdf(x, df, loc=0, scale=1):
  """Density at ``x``."""
  return lax.exp(logpdf(x, df, loc, scale))
