"""The beta-binomial distribution."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.api import jit
from purejax._src.numpy.util import promote_args_inexact
from purejax._src.scipy.special import betaln
from purejax._src.scipy.util import const


@jit
def logpmf(k, n, a, b, loc=0):
  """log C(n, y) + log B(y + a, n - y + b) - log B(a, b), y = floor(k) - loc."""
  k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
  y = lax.sub(lax.floor(k), loc)
  one, zero = const(y, 1), const(y, 0)
  log_comb = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
  log_betas = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
  log_probs = lax.add(log_comb, log_betas)
  log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
  outside = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                           lax.le(lax.add(y, a), zero))
  log_probs = jnp.where(outside, -np.inf, log_probs)
  bad = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
  return jnp.where(bad, np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
  """Probability mass at ``k``."""
  return lax.exp(logpmf(k, n, a, b, loc))
