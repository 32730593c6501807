"""scipy.linalg's Schur-based functions: schur, rsf2csf, hessenberg, sqrtm,
funm and solve_sylvester (Bartels-Stewart, or eigendecompositions).

sqrtm and funm fill an upper triangle one superdiagonal at a time: entry
(i, i + p) needs only entries on superdiagonals below p, whose contribution
is one matrix product of the partly filled triangles (the entries not yet
filled are zero, so they add nothing).
"""
import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.lax import linalg as lax_linalg
from purejax._src.lax.linalg_schur import hessenberg as _lax_hessenberg
from purejax._src.lax.linalg_schur import schur as _lax_schur
from purejax._src.numpy.util import promote_dtypes_complex, promote_dtypes_inexact

_HIGHEST = lax.Precision.HIGHEST


def _mm(a, b):
  return jnp.matmul(a, b, precision=_HIGHEST)


def _ct(a):
  return jnp.conj(jnp.swapaxes(a, -1, -2))


def schur(a, output="real"):
  if output not in ("real", "complex"):
    raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
  a = jnp.asarray(a)
  if output == "complex":
    a = a.astype(dtypes.to_complex_dtype(a.dtype))
  t, z = _lax_schur(a)
  return t, z


def _rsf2csf_2d(T, Z):
  n = T.shape[0]
  eps = jnp.finfo(T.dtype).eps
  eye2 = jnp.eye(2, dtype=T.dtype)

  def body(k, TZ):
    T, Z = TZ
    m = n - k       # the 2 x 2 blocks from the bottom up, as SciPy
    sub = T[m, m - 1]
    split = jnp.abs(sub) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m]))
    mu = jnp.linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
    r = jnp.sqrt(jnp.abs(mu[0]) ** 2 + jnp.abs(sub) ** 2).astype(T.dtype)
    c, s = mu[0] / r, sub / r
    G = jnp.where(split, jnp.array([[jnp.conj(c), s], [-s, c]]), eye2)
    # T's rows m-1, m are zero left of column m-1, and its columns m-1, m
    # zero below row m: the rotations act on whole rows and columns.
    rows = _mm(G, lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0))
    T = lax.dynamic_update_slice_in_dim(T, rows, m - 1, axis=0)
    cols = _mm(lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1), _ct(G))
    T = lax.dynamic_update_slice_in_dim(T, cols, m - 1, axis=1)
    zc = _mm(lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1), _ct(G))
    Z = lax.dynamic_update_slice_in_dim(Z, zc, m - 1, axis=1)
    T = T.at[m, m - 1].set(0)
    return T, Z

  if n <= 1:
    return T, Z
  return lax.fori_loop(1, n, body, (T, Z))


def rsf2csf(T, Z, check_finite=True):
  T, Z = promote_dtypes_complex(jnp.asarray(T), jnp.asarray(Z))
  if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
    raise ValueError(f"Input 'T' must be square, got {T.shape=}")
  if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
    raise ValueError(f"Input 'Z' must be square, got {Z.shape=}")
  if T.shape[-1] != Z.shape[-1]:
    raise ValueError(f"Input 'T' and 'Z' must have the same matrix size, "
                     f"got {T.shape=} and {Z.shape=}")
  return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T, Z)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
  a = jnp.asarray(a)
  n = a.shape[-1]
  reflectors, taus = _lax_hessenberg(a)
  h = jnp.triu(reflectors, -1)
  if not calc_q:
    return h
  if n <= 1:
    return h, jnp.broadcast_to(jnp.eye(n, dtype=a.dtype), a.shape)
  # Q = diag(1, Q'), Q' the reflectors' product in the trailing (n-1) block.
  q = lax_linalg.householder_product(reflectors[..., 1:, :-1], taus)
  first = jnp.zeros(a.shape[:-2] + (1, n), a.dtype).at[..., 0, 0].set(1)
  rest = jnp.concatenate([jnp.zeros(a.shape[:-2] + (n - 1, 1), a.dtype), q], axis=-1)
  return h, jnp.concatenate([first, rest], axis=-2)


def _by_superdiagonals(init, entry):
  """Fills the upper triangle of ``init`` (its diagonal set) one
  superdiagonal p = 1 .. n-1 at a time: ``entry(M)`` gives candidates for
  every entry from the partly filled M; the ones on diagonal p are kept."""
  n = init.shape[-1]
  offset = jnp.arange(n)[None, :] - jnp.arange(n)[:, None]

  def body(p, M):
    return jnp.where(offset == p, entry(M), M)

  return lax.fori_loop(1, n, body, init)


def _sqrtm_triangular(T):
  d = jnp.sqrt(jnp.diagonal(T))
  pair = d[:, None] + d[None, :]

  def entry(U):
    s = _mm(U, U)
    return jnp.where(T == s, 0, (T - s) / pair)

  return _by_superdiagonals(jnp.diag(d), entry)


def sqrtm(A, blocksize=1):
  if blocksize > 1:
    raise NotImplementedError("Blocked version is not implemented yet.")
  A = jnp.asarray(A)
  if A.ndim != 2:
    raise ValueError("diag input must be 1d or 2d")
  T, Z = schur(A, output="complex")
  return _mm(_mm(Z, _sqrtm_triangular(T)), _ct(Z))


def funm(A, func, disp=True):
  A = jnp.asarray(A)
  if A.ndim != 2 or A.shape[0] != A.shape[1]:
    raise ValueError("expected square array_like input")
  T, Z = rsf2csf(*schur(A))
  n = T.shape[0]
  diag = jnp.diagonal(T)
  den = diag[None, :] - diag[:, None]          # T_jj - T_ii

  def entry(F):   # Parlett's recurrence (Golub & Van Loan, algorithm 11.1.1)
    s = _mm(T, F) - _mm(F, T)
    return jnp.where(den != 0, s / den, s)

  F = _by_superdiagonals(jnp.diag(func(diag)).astype(T.dtype), entry)
  F = _mm(_mm(Z, F), _ct(Z))
  if disp:
    return F
  upper = jnp.arange(n)[None, :] > jnp.arange(n)[:, None]
  minden = jnp.minimum(jnp.abs(T[0, 0]), jnp.min(jnp.where(upper, jnp.abs(den), jnp.inf)))
  tol = np.finfo(np.float32 if F.dtype.char.lower() == "f" else np.float64).eps
  minden = jnp.where(minden == 0, tol, minden)
  err = jnp.where(jnp.any(jnp.isinf(F)), np.inf, jnp.minimum(1, jnp.maximum(
      tol, (tol / minden) * jnp.linalg.norm(jnp.triu(T, 1), 1))))
  return F, err


def _sylvester_triangular(R, L, F):
  """Y with R Y + Y L = F, R upper and L lower triangular: column j of Y
  solves (R + L_jj I) y_j = F_j - sum_{k > j} Y_k L_kj, from the last
  column back (the columns not yet solved are zero)."""
  m, n = F.shape
  eye = jnp.eye(m, dtype=F.dtype)

  def body(k, Y):
    j = n - 1 - k
    rhs = F[:, j] - _mm(Y, L[:, j])
    y = lax_linalg.triangular_solve(R + L[j, j] * eye, rhs[:, None], left_side=True,
                                    lower=False)
    return Y.at[:, j].set(y[:, 0])

  return lax.fori_loop(0, n, body, jnp.zeros_like(F))


def _solve_sylvester_2d(A, B, C, *, method, tol):
  if method == "schur":
    R, U = schur(A, output="complex")
    # A = U R U^H and B^H = V S V^H: with X = U Y V^H, R Y + Y S^H = U^H C V
    # (S^H lower triangular).
    S, V = schur(_ct(B), output="complex")
    Y = _sylvester_triangular(R, _ct(S), _mm(_mm(_ct(U), C.astype(R.dtype)), V))
    X = _mm(_mm(U, Y), _ct(V))
  elif method == "eigen":
    wa, ua = jnp.linalg.eig(A)
    wb, ub = jnp.linalg.eig(B)
    Y = jnp.linalg.solve(ua, _mm(C.astype(wa.dtype), ub)) / (wa[:, None] + wb[None, :])
    X = _mm(_mm(ua, Y), jnp.linalg.inv(ub))
  else:
    raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                     "\"schur\" or \"eigen\".")
  if not jnp.iscomplexobj(C):
    X = X.real
  near = jnp.abs(jnp.linalg.eigvals(A)[:, None] + jnp.linalg.eigvals(B)[None, :]) < tol
  return jnp.where(jnp.any(near), jnp.full_like(X, np.nan), X)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
  A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
  if method not in ("schur", "eigen"):
    raise ValueError(f"Unrecognized method {method}. The two valid methods are either "
                     "\"schur\" or \"eigen\".")
  return jnp.vectorize(lambda a, b, c: _solve_sylvester_2d(a, b, c, method=method, tol=tol),
                       signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
