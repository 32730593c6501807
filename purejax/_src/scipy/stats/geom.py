"""The geometric distribution (number of trials to the first success)."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import xlog1py
from purejax._src.scipy.util import const


def logpmf(k, p, loc=0):
  """(k - 1) log(1 - p) + log p for k - loc >= 1, else -inf."""
  k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
  x = lax.sub(k, loc)
  log_probs = xlog1py(lax.sub(x, const(k, 1)), -p) + lax.log(p)
  return jnp.where(lax.le(x, const(k, 0)), -np.inf, log_probs)


def pmf(k, p, loc=0):
  """Probability mass at ``k``."""
  return jnp.exp(logpmf(k, p, loc))
