"""The von Mises distribution on the circle."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.util import const


def logpdf(x, kappa):
  """kappa (cos x - 1) - log(2 pi i0e(kappa)); NaN for kappa <= 0."""
  x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
  value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
  return jnp.where(lax.gt(kappa, const(kappa, 0)), value, np.nan)


def pdf(x, kappa):
  """Density at ``x``."""
  return lax.exp(logpdf(x, kappa))
