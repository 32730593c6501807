"""The multivariate normal distribution (the last axis is the event axis)."""
import functools

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.numpy.util import promote_dtypes_inexact


def logpdf(x, mean, cov, allow_singular=None):
  """Log density.  ``cov`` may be a scalar (isotropic) or an (n, n) matrix,
  factored by Cholesky; ``allow_singular`` is not supported (as JAX)."""
  if allow_singular is not None:
    raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
  x, mean, cov = promote_dtypes_inexact(x, mean, cov)
  if not mean.shape:
    return (-1 / 2 * jnp.square(x - mean) / cov
            - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
  n = mean.shape[-1]
  if not np.shape(cov):
    y = x - mean
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
            - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
  if cov.ndim < 2 or cov.shape[-2:] != (n, n):
    raise ValueError("multivariate_normal.logpdf got incompatible shapes")
  L = lax.linalg.cholesky(cov)
  solve = functools.partial(lax.linalg.triangular_solve, lower=True, transpose_a=True)
  y = jnp.vectorize(solve, signature="(n,n),(n)->(n)")(L, x - mean)
  return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
          - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
  """Density at ``x``."""
  return lax.exp(logpdf(x, mean, cov))
