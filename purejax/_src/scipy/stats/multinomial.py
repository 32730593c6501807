"""The multinomial distribution (counts ``x`` on the last axis)."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy.util import promote_args_inexact, promote_args_numeric
from purejax._src.scipy.special import gammaln, xlogy


def logpmf(x, n, p):
  """log n! + sum(x log p - log x!); -inf unless sum(x) == n.  ``x`` and
  ``n`` must be integers."""
  p, = promote_args_inexact("multinomial.logpmf", p)
  x, n = promote_args_numeric("multinomial.logpmf", x, n)
  if not dtypes.issubdtype(x.dtype, np.integer):
    raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                     f"n.dtype={n.dtype}")
  x = x.astype(p.dtype)
  n = n.astype(p.dtype)
  log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
  return jnp.where(jnp.equal(jnp.sum(x), n), log_probs, -np.inf)


def pmf(x, n, p):
  """Probability mass at ``x``."""
  return lax.exp(logpmf(x, n, p))
