"""lax.linalg.qdwh: the polar decomposition x = u h by the QR-based
dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi, 2010).

Each step maps every singular value s of the iterate through the rational
function s (a + b s^2) / (1 + c s^2) whose weights a, b, c come from l, a
lower bound of the smallest singular value; l reaches 1 in at most six steps
for any condition number up to 1 / eps.  Steps with large c use a QR
factorization, the others (better conditioned) a Cholesky factorization.
"""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.lax import linalg


def _weights(l):
  l2 = l * l
  dd = jnp.cbrt(4 * (1 - l2) / (l2 * l2))
  sqd = jnp.sqrt(1 + dd)
  a = sqd + jnp.sqrt(8 - 4 * dd + 8 * (2 - l2) / (l2 * sqd)) / 2
  b = (a - 1) ** 2 / 4
  c = a + b - 1
  return a, b, c, l * (a + b * l2) / (1 + c * l2)


def _qr_step(u, a, b, c):
  m, n = u.shape
  stacked = jnp.concatenate([jnp.sqrt(c).astype(u.dtype) * u, jnp.eye(n, dtype=u.dtype)])
  q, _ = linalg.qr(stacked, full_matrices=False)
  mixed = q[:m] @ q[m:].conj().T
  return (b / c) * u + ((a - b / c) / jnp.sqrt(c)) * mixed


def _cholesky_step(u, a, b, c):
  n = u.shape[1]
  z = jnp.eye(n, dtype=u.dtype) + c * (u.conj().T @ u)
  factor = linalg.cholesky(z)
  # u z^{-1} = (z^{-1} u^H)^H, z = L L^H.
  y = linalg.triangular_solve(factor, u.conj().T, left_side=True, lower=True)
  y = linalg.triangular_solve(factor, y, left_side=True, lower=True, conjugate_a=True,
                              transpose_a=True)
  return (b / c) * u + (a - b / c) * y.conj().T


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
  """(u, h, iterations, converged): x = u h with u's columns orthonormal and
  h Hermitian positive semi-definite, for x of shape (m, n), m >= n."""
  if dynamic_shape is not None:
    raise NotImplementedError("qdwh: dynamic_shape is not supported")
  x = jnp.asarray(x)
  if x.ndim != 2:
    raise ValueError(f"qdwh expects a matrix, got shape {x.shape}")
  m, n = x.shape
  if m < n:
    raise ValueError("The input matrix of shape M x N must have M >= N.")
  if not jnp.issubdtype(x.dtype, jnp.inexact):
    x = x.astype(jnp.result_type(float))
  real = np.finfo(x.dtype).dtype
  eps = float(np.finfo(real).eps) if eps is None else float(eps)
  max_iterations = 10 if max_iterations is None else int(max_iterations)
  tolerance = np.cbrt(4 * eps).astype(real)

  scale = jnp.linalg.norm(x)
  u = x / jnp.where(scale == 0, 1, scale).astype(x.dtype)

  def cond(state):
    _, l, k, change = state
    return (k < max_iterations) & ((jnp.abs(1 - l) > tolerance) | (change > tolerance))

  def body(state):
    u, l, k, _ = state
    a, b, c, l_next = _weights(l)
    new = lax.cond(c > 100, _qr_step, _cholesky_step, u, a.astype(u.dtype),
                   b.astype(u.dtype), c.astype(u.dtype))
    return new, l_next, k + 1, jnp.linalg.norm(new - u)

  state = (u, jnp.asarray(eps, real), jnp.asarray(0, jnp.int32), jnp.asarray(np.inf, real))
  u, l, iterations, change = lax.while_loop(cond, body, state)
  h = u.conj().T @ x
  h = (h + h.conj().T) / 2
  return u, h, iterations, (jnp.abs(1 - l) <= tolerance) & (change <= tolerance)
