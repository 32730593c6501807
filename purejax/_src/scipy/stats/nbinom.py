"""The negative binomial distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import gammaln, xlogy
from purejax._src.scipy.util import const


def logpmf(k, n, p, loc=0):
  """log C(y + n - 1, y) + n log p + y log(1 - p), y = k - loc."""
  k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
  one = const(k, 1)
  y = lax.sub(k, loc)
  comb = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
  log_probs = lax.add(comb, lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p))))
  return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k, n, p, loc=0):
  """Probability mass at ``k``."""
  return lax.exp(logpmf(k, n, p, loc))
