"""scipy.linalg on lax.linalg: factorizations (cholesky, lu, qr, svd, eigh),
solves (solve, solve_triangular, cho_solve, lu_solve), det, inv, polar and
structured matrices (block_diag, toeplitz, hankel, circulant).

SciPy's ``overwrite_*``, ``check_finite``, ``lwork`` and ``lapack_driver``
arguments are accepted and ignored, as in JAX.  Leading batch axes are
allowed wherever JAX allows them.
"""
import functools
import warnings

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.api import jit
from purejax._src.custom_jvp import custom_jvp
from purejax._src.lax import linalg as lax_linalg
from purejax._src.lax.linalg_solve import lu_solve as _lax_lu_solve
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, promote_dtypes, promote_dtypes_inexact


def _mT(x):
  return jnp.swapaxes(x, -1, -2)


def _vector_signature(fun_name, a, b, vec_sig, mat_sig):
  """JAX's rule for b: 1-D is a vector; (..., n) with a (..., n, n) of one
  more axis is a deprecated batch of vectors; else (..., n, k) matrices."""
  if b.ndim == 1:
    return vec_sig
  if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
    warnings.warn(f"jax.scipy.linalg.{fun_name}: batched 1D solves with b.ndim > 1 are "
                  "deprecated, and in the future will be treated as a batched 2D solve. "
                  f"Use {fun_name}(..., b[..., None]).squeeze(-1) to avoid this warning.",
                  category=FutureWarning, stacklevel=4)
    return vec_sig
  return mat_sig


# -- Cholesky ----------------------------------------------------------------------

@functools.partial(jit, static_argnames=("lower",))
def _cholesky(a, lower):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  factor = lax_linalg.cholesky(a if lower else jnp.conj(_mT(a)), symmetrize_input=False)
  return factor if lower else jnp.conj(_mT(factor))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
  """Cholesky factor of a Hermitian positive-definite matrix: upper
  (a = U^H U) by default, lower with ``lower=True``; only that triangle of
  ``a`` is read.  A failed factorization gives NaNs (no error), as in JAX."""
  del overwrite_a, check_finite
  return _cholesky(a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
  """(c, lower) for cho_solve; the other triangle of ``c`` is zero (SciPy
  leaves garbage there)."""
  del overwrite_a, check_finite
  return cholesky(a, lower=lower), lower


@functools.partial(jit, static_argnames=("lower",))
def _cho_solve(c, b, lower):
  c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
  sig = _vector_signature("cho_solve", c, b, "(n,n),(n)->(n)", "(n,n),(n,k)->(n,k)")

  def solve(transposed, c, b):
    # lower: L y = b then L^H x = y; upper: U^H y = b then U x = y.
    flip = transposed != lower
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower,
                                       transpose_a=not flip, conjugate_a=not flip)

  b = jnp.vectorize(functools.partial(solve, False), signature=sig)(c, b)
  return jnp.vectorize(functools.partial(solve, True), signature=sig)(c, b)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
  """Solves a x = b from ``cho_factor(a)``."""
  del overwrite_b, check_finite
  c, lower = c_and_lower
  return _cho_solve(c, b, bool(lower))


# -- LU ----------------------------------------------------------------------------

@functools.partial(jit, static_argnames=("permute_l",))
def _lu(a, permute_l):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  lu_, _, permutation = lax_linalg.lu(a)
  dtype = util.aval_of(a).dtype
  m, n = a.shape[-2:]
  k = min(m, n)
  # p[i, j] = 1 where row j of a lands in row i of p^T a.
  p = jnp.real(jnp.array(permutation[..., None, :] == jnp.arange(m)[:, None], dtype=dtype))
  l = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
  u = jnp.triu(lu_)[..., :k, :]
  if permute_l:
    return jnp.matmul(p, l, precision=lax.Precision.HIGHEST), u
  return p, l, u


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
  """(p, l, u) with a = p l u, or (p l, u) with ``permute_l=True``."""
  del overwrite_a, check_finite
  return _lu(a, bool(permute_l))


@jit
def _lu_factor(a):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  lu_, pivots, _ = lax_linalg.lu(a)
  return lu_, pivots


def lu_factor(a, overwrite_a=False, check_finite=True):
  """(lu, piv): L and U packed in one matrix and LAPACK's row swaps (int32)."""
  del overwrite_a, check_finite
  return _lu_factor(a)


@functools.partial(jit, static_argnames=("trans",))
def _lu_solve(lu_, pivots, b, trans):
  lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
  m = lu_.shape[-2]
  perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
  sig = _vector_signature("lu_solve", lu_, b, "(n,n),(n),(n)->(n)",
                          "(n,n),(n),(n,k)->(n,k)")
  vector = sig.endswith("(n)")

  def solve(lu_, perm, b):
    x = _lax_lu_solve(lu_, perm, b[:, None] if vector else b, trans=trans)
    return x[:, 0] if vector else x

  return jnp.vectorize(solve, signature=sig)(lu_, perm, b)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
  """Solves a x = b (trans=0), a^T x = b (1) or a^H x = b (2) from lu_factor."""
  del overwrite_b, check_finite
  lu_, pivots = lu_and_piv
  if trans not in (0, 1, 2):
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
  return _lu_solve(lu_, pivots, b, trans)


# -- QR, SVD, eigh -----------------------------------------------------------------

@functools.partial(jit, static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
  if mode in ("full", "r"):
    full_matrices = True
  elif mode == "economic":
    full_matrices = False
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  a, = promote_dtypes_inexact(jnp.asarray(a))
  q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
  if mode == "r":
    return (r, p[0]) if pivoting else (r,)
  return (q, r, p[0]) if pivoting else (q, r)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
  """QR decomposition: (q, r), (r,) for mode='r' (a 1-tuple, as JAX), and
  the column permutation p as a last output with ``pivoting=True``.
  mode='raw' is not supported (as JAX)."""
  del overwrite_a, lwork, check_finite
  return _qr(a, mode, bool(pivoting))


@functools.partial(jit, static_argnames=("full_matrices", "compute_uv"))
def _svd(a, full_matrices, compute_uv):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
  """(u, s, vh) with a = u diag(s) vh, or s alone with ``compute_uv=False``."""
  del overwrite_a, check_finite, lapack_driver
  return _svd(a, bool(full_matrices), bool(compute_uv))


@functools.partial(jit, static_argnames=("lower", "eigvals_only"))
def _eigh(a, lower, eigvals_only):
  a, = promote_dtypes_inexact(jnp.asarray(a))
  v, w = lax_linalg.eigh(a, lower=lower)
  return w if eigvals_only else (w, v)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):
  """(w, v): ascending eigenvalues and eigenvectors of a Hermitian matrix,
  read from its ``lower`` (or upper) triangle.  The generalized problem
  (``b``), ``type != 1`` and ``eigvals`` are not supported (as JAX)."""
  del overwrite_a, overwrite_b, turbo, check_finite
  if b is not None:
    raise NotImplementedError("Only the b=None case of eigh is implemented")
  if type != 1:
    raise NotImplementedError("Only the type=1 case of eigh is implemented.")
  if eigvals is not None:
    raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
  return _eigh(a, bool(lower), bool(eigvals_only))


# -- det, inv, solve ---------------------------------------------------------------

def det(a, overwrite_a=False, check_finite=True):
  """Determinant (jnp.linalg.det)."""
  del overwrite_a, check_finite
  return jnp.linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
  """Inverse (jnp.linalg.inv)."""
  del overwrite_a, check_finite
  return jnp.linalg.inv(a)


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _pos_solve(a, b, lower):
  return cho_solve(cho_factor(a, lower=lower), b)


@_pos_solve.defjvp
def _pos_solve_jvp(lower, primals, tangents):
  # x = a^-1 b  =>  dx = a^-1 (db - da x), reusing the one Cholesky factor
  # (as JAX's custom_linear_solve, da is taken whole, not one triangle).
  (a, b), (da, db) = primals, tangents
  factor = cho_factor(a, lower=lower)
  x = cho_solve(factor, b)
  return x, cho_solve(factor, db - da @ x)


@functools.partial(jit, static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a, lower):
  if assume_a != "pos":
    return jnp.linalg.solve(a, b)
  a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
  if a.ndim < 2 or a.shape[-1] != a.shape[-2] or b.ndim < 1:
    raise ValueError(f"The arguments to solve must have shapes a=[..., m, m] and "
                     f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")
  if b.ndim == a.ndim - 1:
    return jnp.vectorize(lambda a, b: _pos_solve(a, b, lower),
                         signature="(n,n),(n)->(n)")(a, b)
  return jnp.vectorize(lambda a, b: _pos_solve(a, b, lower),
                       signature="(n,n),(n,k)->(n,k)")(a, b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
  """Solves a x = b.  assume_a='pos' uses a Cholesky factorization of the
  ``lower`` (or upper) triangle; 'gen', 'sym' and 'her' use LU, as JAX."""
  del overwrite_a, overwrite_b, debug, check_finite
  valid = ["gen", "sym", "her", "pos"]
  if assume_a not in valid:
    raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
  return _solve(a, b, assume_a, bool(lower))


@functools.partial(jit, static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
  if trans in (0, "N"):
    transpose_a, conjugate_a = False, False
  elif trans in (1, "T"):
    transpose_a, conjugate_a = True, False
  elif trans in (2, "C"):
    transpose_a, conjugate_a = True, True
  else:
    raise ValueError(f"Invalid 'trans' value {trans}")
  a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
  sig = _vector_signature("solve_triangular", a, b, "(n,n),(n)->(n)", "(n,n),(n,k)->(n,k)")
  solve = functools.partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                            transpose_a=transpose_a, conjugate_a=conjugate_a,
                            unit_diagonal=unit_diagonal)
  return jnp.vectorize(solve, signature=sig)(a, b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
  """Solves a x = b for triangular a (only its ``lower``/upper triangle is read);
  trans 0/'N', 1/'T' or 2/'C' solves with a, a^T or a^H."""
  del overwrite_b, debug, check_finite
  return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


# -- polar -------------------------------------------------------------------------

def _polar_2d(a, side, method):
  m, n = a.shape
  if method == "qdwh":
    if not ((m >= n and side == "right") or (m < n and side == "left")):
      raise NotImplementedError(
          "method='qdwh' only supports mxn matrices where m < n where side='right' and "
          f"m >= n side='left', got {a.shape} with side={side!r}")
  elif method != "svd":
    raise ValueError(f"Unknown polar decomposition method {method}.")
  u, s, vh = lax_linalg.svd(a, full_matrices=False)
  s = s.astype(util.aval_of(u).dtype)
  unitary = u @ vh
  if side == "right":
    return unitary, (jnp.conj(vh.T) * s[None, :]) @ vh
  return unitary, (u * s[None, :]) @ jnp.conj(u.T)


@functools.partial(jit, static_argnames=("side", "method", "eps", "max_iterations"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
  """Polar decomposition a = u p (side='right') or p u ('left'), u with
  orthonormal columns/rows and p Hermitian positive semi-definite.

  Differs from JAX: both methods compute it from an SVD (JAX's default
  'qdwh' iterates; results agree to rounding); ``eps`` and
  ``max_iterations`` are ignored."""
  del eps, max_iterations
  arr = jnp.asarray(a)
  if arr.ndim < 2:
    raise ValueError("The input `a` must be at least a 2-D array.")
  if side not in ("right", "left"):
    raise ValueError("The argument `side` must be either 'right' or 'left'.")
  sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
  fun = functools.partial(_polar_2d, side=side, method=method)
  return jnp.vectorize(fun, signature=sig)(arr)


# -- structured matrices -----------------------------------------------------------

@jit
def block_diag(*arrs):
  """The arrays (at most 2-D; scalars and vectors are rows) on the diagonal
  of a zero matrix, in the promoted dtype."""
  if not arrs:
    arrs = (jnp.zeros((1, 0)),)
  arrs = tuple(promote_dtypes(*arrs))
  bad = [i for i, a in enumerate(arrs) if util.ndim(a) > 2]
  if bad:
    raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                     f"dimensions, got {arrs[bad[0]]} at argument {bad[0]}.")
  mats = [jnp.atleast_2d(a) for a in arrs]
  dtype = util.aval_of(mats[0]).dtype
  total = sum(a.shape[1] for a in mats)
  rows, col = [], 0
  for a in mats:
    cols = a.shape[1]
    rows.append(lax.pad(a, np.array(0, dtype), ((0, 0, 0), (col, total - cols - col, 0))))
    col += cols
  return jnp.concatenate(rows, axis=0)


@functools.partial(jnp.vectorize, signature="(m),(n)->(m,n)")
def _toeplitz(c, r):
  m, = c.shape
  n, = r.shape
  dtype = jnp.promote_types(c.dtype, r.dtype)
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=dtype)
  # T[i, j] = c[i - j] on and below the diagonal, r[j - i] above it.
  elems = jnp.concatenate((c[::-1], r[1:]))
  return elems[(m - 1) - jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def toeplitz(c, r=None):
  """Toeplitz matrix with first column ``c`` and first row ``r`` (r[0] is
  ignored); ``r`` defaults to conj(c).  Leading axes are batch axes (as
  JAX, unlike SciPy which flattens)."""
  if r is None:
    check_arraylike("toeplitz", c)
    r = jnp.conjugate(jnp.asarray(c))
  else:
    check_arraylike("toeplitz", c, r)
  return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


@functools.partial(jnp.vectorize, signature="(m),(n)->(m,n)")
def _hankel(c, r):
  m, = c.shape
  n, = r.shape
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=jnp.result_type(c, r))
  v = jnp.concatenate((c, r[1:]))
  return v[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def hankel(c, r=None):
  """Hankel matrix with first column ``c`` and last row ``r`` (zeros by
  default; r[0] is ignored)."""
  if r is None:
    check_arraylike("hankel", c)
    c = jnp.asarray(c)
    r = jnp.zeros_like(c)
  else:
    check_arraylike("hankel", c, r)
    c, r = jnp.asarray(c), jnp.asarray(r)
  if c.ndim == 0:
    raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
  if r.ndim == 0:
    raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
  if c.ndim < r.ndim:
    c = lax.expand_dims(c, tuple(range(r.ndim - c.ndim)))
  elif r.ndim < c.ndim:
    r = lax.expand_dims(r, tuple(range(c.ndim - r.ndim)))
  return _hankel(c, r)


@functools.partial(jnp.vectorize, signature="(n)->(n,n)")
def _circulant(c):
  n, = c.shape
  return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]


def circulant(c):
  """Circulant matrix whose first column is ``c``."""
  check_arraylike("circulant", c)
  return _circulant(jnp.atleast_1d(jnp.asarray(c)))
