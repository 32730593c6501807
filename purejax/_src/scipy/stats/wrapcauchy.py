"""The wrapped Cauchy distribution on [0, 2 pi]."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def logpdf(x, c):
  """log((1 - c^2) / (2 pi (1 + c^2 - 2c cos x))); NaN unless 0 < c < 1."""
  x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
  c_ok = lax.gt(c, const(c, 0)) & lax.lt(c, const(c, 1))
  x_ok = lax.ge(x, const(x, 0)) & lax.le(x, const(x, np.pi * 2))
  value = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
           - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
  return jnp.where(c_ok, jnp.where(x_ok, value, -np.inf), np.nan)


def pdf(x, c):
  """Density at ``x``."""
  return lax.exp(logpdf(x, c))
