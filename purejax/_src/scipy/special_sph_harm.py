"""scipy.special.sph_harm_y: spherical harmonics Y_n^m(theta, phi) from
orthonormalized associated Legendre functions (Condon-Shortley phase, as
SciPy), built by the stable three-term recurrence in the degree."""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy.util import promote_args_inexact


def _normalized_legendre(n, m, x, n_max):
  """sqrt((2n+1)/(4 pi) (n-m)!/(n+m)!) P_n^m(x) for 0 <= m, 0 <= n <= n_max
  (zero where m > n)."""
  s = jnp.sqrt(jnp.maximum(1 - x * x, 0))
  mf = m.astype(x.dtype)

  def diagonal(k, p):     # P_k^k from P_{k-1}^{k-1}
    kf = jnp.asarray(k, x.dtype)
    return jnp.where(k <= m, -jnp.sqrt((2 * kf + 1) / (2 * kf)) * s * p, p)

  pmm = lax.fori_loop(1, n_max + 1, diagonal,
                      jnp.full(x.shape, 1 / np.sqrt(4 * np.pi), x.dtype))
  pm1 = jnp.sqrt(2 * mf + 3) * x * pmm

  def up(l, carry):       # P_l^m from P_{l-1}^m and P_{l-2}^m
    p2, p1 = carry
    lf = jnp.asarray(l, x.dtype)
    active = (l >= m + 2) & (l <= n)
    gap = jnp.where(active, lf * lf - mf * mf, 1)
    prev = jnp.where(active, (lf - 1) ** 2 - mf * mf, 0)
    p = jnp.sqrt((4 * lf * lf - 1) / gap) * (
        x * p1 - jnp.sqrt(prev / (4 * (lf - 1) ** 2 - 1)) * p2)
    return jnp.where(active, p1, p2), jnp.where(active, p, p1)

  _, top = lax.fori_loop(2, n_max + 1, up, (pmm, pm1))
  value = jnp.where(n == m, pmm, jnp.where(n == m + 1, pm1, top))
  return jnp.where(m > n, 0, value)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
  if diff_n is not None:
    raise NotImplementedError(
        "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
  n, m = jnp.asarray(n), jnp.asarray(m)
  theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
  if n_max is None:
    n_max = np.max(np.asarray(n))
  try:
    n_max = int(n_max)
  except Exception as err:
    raise TypeError("The `n_max` argument of `jnp.scipy.special.sph_harm` must be "
                    "statically specified to use `sph_harm` within JAX "
                    "transformations.") from err
  theta = jnp.atleast_1d(theta)
  n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
  # the Legendre function's degree and order beyond n_max are clipped to it
  # (not the phase's order), as JAX
  order = jnp.abs(m)
  p = _normalized_legendre(jnp.clip(n, 0, n_max), jnp.clip(order, 0, n_max),
                           jnp.cos(theta), n_max)
  angle = order.astype(phi.dtype) * phi
  y = lax.complex(p * jnp.cos(angle), p * jnp.sin(angle))
  sign = jnp.where(order % 2 == 0, 1, -1).astype(p.dtype)
  return jnp.where(m < 0, sign * jnp.conj(y), y).astype(dtypes.to_complex_dtype(p.dtype))
