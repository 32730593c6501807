"""The matrix exponential: expm and expm_frechet.

Higham's scaling and squaring with Pade approximants (as SciPy and JAX):
scale A by 2^-s so its 1-norm is below the approximant's bound, pick the
lowest Pade degree accurate for that norm (3, 5, 7 for float32; up to 13
for float64), solve Q R = P, then square s times.  Everything is lax
control flow (switch, cond, scan), so expm is differentiable and its
derivative is the Frechet derivative (``expm_frechet`` is its jvp).
"""
import functools

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.api import jit
from purejax._src.ad_api import jvp
from purejax._src.numpy.util import promote_dtypes_inexact
from purejax._src.scipy.util import dtype_of

# Pade coefficients b_0..b_m of degree m (Higham 2005, table 10.4).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# Largest 1-norms for which each degree is accurate, and the squaring bound.
_THETA = {np.dtype(np.float64): ((3, 5, 7, 9, 13), (0.01495585217958292, 0.253939833006323,
                                                     0.9504178996162932, 2.097847961257068),
                                 5.371920351148152),
          np.dtype(np.float32): ((3, 5, 7), (0.4258730016922831, 1.880152677804762),
                                 3.92572478313866)}
_THETA[np.dtype(np.complex128)] = _THETA[np.dtype(np.float64)]
_THETA[np.dtype(np.complex64)] = _THETA[np.dtype(np.float32)]


def _dot(a, b):
  return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade(degree):
  """(U, V): the odd and even parts of the degree-``degree`` Pade numerator."""
  b = _PADE[degree]

  def uv(A):
    ident = jnp.eye(*A.shape, dtype=A.dtype)
    A2 = _dot(A, A)
    if degree == 13:
      A4 = _dot(A2, A2)
      A6 = _dot(A4, A2)
      U = _dot(A, _dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
               + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
      V = (_dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)
           + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident)
      return U, V
    powers = [ident, A2]   # A^0, A^2, A^4, ...
    while len(powers) < (degree + 1) // 2:
      powers.append(_dot(powers[-1], A2))
    odd = sum(b[2 * k + 1] * p for k, p in enumerate(powers))
    even = sum(b[2 * k] * p for k, p in enumerate(powers))
    return _dot(A, odd), even
  return uv


def _pade_terms(A):
  """(P, Q, n_squarings) with exp(A 2^-s) ~ Q^-1 P."""
  if A.dtype not in _THETA:
    raise TypeError(f"A.dtype={A.dtype} is not supported.")
  degrees, bounds, max_norm = _THETA[A.dtype]
  norm = jnp.linalg.norm(A, 1)
  n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm / max_norm)))
  A = A / 2 ** n_squarings.astype(A.dtype)
  idx = jnp.digitize(norm, jnp.array(bounds, dtype=dtype_of(norm)))
  U, V = lax.switch(idx, [_pade(d) for d in degrees], A)
  return U + V, -U + V, n_squarings


def _square(R, n_squarings, max_squarings):
  def step(R, i):
    return lax.cond(i < n_squarings, lambda x: _dot(x, x), lambda x: x, R), None
  R, _ = lax.scan(step, R, jnp.arange(max_squarings, dtype=dtype_of(n_squarings)))
  return R


@functools.partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
  """Matrix exponential of a (batched) square matrix; NaN when more than
  ``max_squarings`` squarings would be needed.  ``upper_triangular=True``
  solves the Pade system by back substitution."""
  A, = promote_dtypes_inexact(A)
  if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
    raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape!r}.")
  if A.ndim > 2:
    fun = functools.partial(expm, upper_triangular=upper_triangular,
                            max_squarings=max_squarings)
    return jnp.vectorize(fun, signature="(n,n)->(n,n)")(A)
  P, Q, n_squarings = _pade_terms(A)

  def compute(args):
    _, P, Q = args
    if upper_triangular:
      R = lax.linalg.triangular_solve(Q, P, left_side=True, lower=False)
    else:
      R = jnp.linalg.solve(Q, P)
    return _square(R, n_squarings, max_squarings)

  return lax.cond(n_squarings > max_squarings, lambda args: jnp.full_like(args[0], np.nan),
                  compute, (A, P, Q))


@functools.partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm=True):
  """Frechet derivative of expm at A in direction E (the jvp of expm):
  (expm(A), L(A, E)), or L alone with ``compute_expm=False``.  ``method``
  is ignored."""
  del method
  A, E = jnp.asarray(A), jnp.asarray(E)
  if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
    raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
  if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
    raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
  if A.shape != E.shape:
    raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} "
                     f"E.shape={E.shape}")
  expm_A, frechet = jvp(functools.partial(expm, max_squarings=16), (A,), (E,))
  return (expm_A, frechet) if compute_expm else frechet
