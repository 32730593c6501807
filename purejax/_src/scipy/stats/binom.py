"""The binomial distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import gammaln, xlog1py, xlogy
from purejax._src.scipy.util import const


def logpmf(k, n, p, loc=0):
  """log C(n, y) + y log p + (n - y) log(1 - p), y = k - loc in [0, n]."""
  k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
  y = lax.sub(k, loc)
  zero = const(y, 0)
  comb = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
  log_linear = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
  log_probs = lax.add(comb, log_linear)
  # Certain outcomes (n == y == 0, or p in {0, 1} at the matching end) are exactly 0.
  certain = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                           lax.eq(log_linear, zero))
  log_probs = jnp.where(certain, 0.0, log_probs)
  return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
  """Probability mass at ``k``."""
  return lax.exp(logpmf(k, n, p, loc))
