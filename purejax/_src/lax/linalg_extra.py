"""lax.linalg's tridiagonal (LAPACK sytrd/hetrd), ormqr (LAPACK ormqr/unmqr),
cholesky_update, symmetric_product and qdwh (the QR-based dynamically
weighted Halley iteration for the polar decomposition).

As in JAX, none of the primitives has a derivative rule.
"""
import numpy as np

from purejax._src import core
from purejax._src.lax import lapack_reflectors
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_util import (
    check_inexact, check_square, front_batch_rule, jnp, lapack_of, split_batch)


# -- tridiagonal -----------------------------------------------------------------------

def _tridiagonal_abstract_eval(a, *, lower):
  check_inexact("tridiagonal", a)
  batch, ((n, n2),) = split_batch("tridiagonal", [a], [2])
  check_square("tridiagonal", (n, n2))
  real = np.finfo(a.dtype).dtype
  k = max(n - 1, 0)
  return [core.ShapedArray(a.shape, a.dtype), core.ShapedArray(batch + (n,), real),
          core.ShapedArray(batch + (k,), real), core.ShapedArray(batch + (k,), a.dtype)]


def _tridiagonal_impl(a, *, lower):
  return lapack_reflectors.sytrd(a, lower=lower)


tridiagonal_p = standard_primitive("tridiagonal", _tridiagonal_abstract_eval,
                                   _tridiagonal_impl, multiple_results=True)
tridiagonal_p.library_call = "LAPACK sytrd/hetrd"
tridiagonal_p.c_code = None
tridiagonal_p.batch = front_batch_rule(tridiagonal_p)


def tridiagonal(a, *, lower=True):
  """(a, d, e, taus): Hermitian a reduced to a real symmetric tridiagonal
  matrix (diagonal d, off-diagonal e) by Householder reflectors, stored in
  a's lower (or upper) triangle with their scalars taus (LAPACK's layout)."""
  return tuple(tridiagonal_p.bind(jnp().asarray(a), lower=bool(lower)))


# -- ormqr -----------------------------------------------------------------------------

def _ormqr_abstract_eval(a, taus, c, *, left, transpose):
  for name, x in (("a", a), ("taus", taus), ("c", c)):
    check_inexact(f"ormqr ({name})", x)
  if not (a.dtype == taus.dtype == c.dtype):
    raise TypeError(f"ormqr requires a, taus and c of one dtype, got {a.dtype}, "
                    f"{taus.dtype} and {c.dtype}")
  batch, ((ma, ka), (m, n)) = split_batch("ormqr", [a, c], [2, 2])
  if taus.shape != batch + (taus.shape[-1],) or taus.shape[-1] > ka:
    raise ValueError(f"ormqr: taus of shape {taus.shape} do not match a of shape {a.shape}")
  if ma != (m if left else n):
    raise ValueError(f"ormqr: a of shape {a.shape} does not match c of shape {c.shape} "
                     f"(left={left})")
  return core.ShapedArray(c.shape, c.dtype)


def _ormqr_impl(a, taus, c, *, left, transpose):
  routines = lapack_of(a, taus, c, host=lapack_reflectors)
  return routines.ormqr(a, taus, c, left=left, transpose=transpose)


# impl_on_gpu_arrays: a GPU's arrays are multiplied there (cuSOLVER's ormqr)
ormqr_p = standard_primitive("ormqr", _ormqr_abstract_eval, _ormqr_impl,
                             impl_on_gpu_arrays=True)
ormqr_p.library_call = "LAPACK ormqr/unmqr"
ormqr_p.c_code = None
ormqr_p.batch = front_batch_rule(ormqr_p)


def ormqr(a, taus, c, *, left=True, transpose=False):
  """Q c (or Q^H c, c Q, c Q^H) for the Q of geqrf's reflectors a and taus."""
  np_ = jnp()
  return ormqr_p.bind(np_.asarray(a), np_.asarray(taus), np_.asarray(c), left=bool(left),
                      transpose=bool(transpose))


# -- cholesky_update -------------------------------------------------------------------

def _cholesky_update_abstract_eval(r, w):
  check_inexact("cholesky_update", r)
  if r.ndim != 2 or r.shape[0] != r.shape[1] or w.shape != r.shape[:1]:
    raise ValueError("cholesky_update expects a square matrix and a vector of its size, "
                     f"got shapes {r.shape} and {w.shape}")
  if w.dtype != r.dtype:
    raise TypeError(f"cholesky_update: r and w must have one dtype, got {r.dtype} and "
                    f"{w.dtype}")
  return core.ShapedArray(r.shape, r.dtype)


def _cholesky_update_impl(r, w):
  # One Givens rotation per row folds w into the factor (O(n^2)); array
  # operations only, so a GPU's arrays stay there.
  r = np.triu(r)
  w = w.copy()
  for k in range(r.shape[0]):
    radius = np.hypot(r[k, k], w[k])
    cos, sin = radius / r[k, k], w[k] / r[k, k]
    r[k, k] = radius
    r[k, k + 1:] = (r[k, k + 1:] + sin * w[k + 1:]) / cos
    w[k + 1:] = cos * w[k + 1:] - sin * r[k, k + 1:]
  return r


cholesky_update_p = standard_primitive("cholesky_update", _cholesky_update_abstract_eval,
                                       _cholesky_update_impl, impl_on_gpu_arrays=True)
cholesky_update_p.c_code = None


def cholesky_update(r_matrix, w_vector):
  """The upper Cholesky factor of r^T r + w w^T, given the upper factor r."""
  np_ = jnp()
  return cholesky_update_p.bind(np_.asarray(r_matrix), np_.asarray(w_vector))


# -- symmetric_product -----------------------------------------------------------------

def _symmetric_product_abstract_eval(a, c, *, alpha, beta):
  check_inexact("symmetric_product", a)
  batch, ((m, _), (m1, m2)) = split_batch("symmetric_product", [a, c], [2, 2])
  if not m == m1 == m2 or a.dtype != c.dtype:
    raise ValueError("symmetric_product expects a of shape (..., m, k) and c of shape "
                     f"(..., m, m) of one dtype, got {a.shape} {a.dtype} and {c.shape} "
                     f"{c.dtype}")
  return core.ShapedArray(c.shape, c.dtype)


def _symmetric_product_impl(a, c, *, alpha, beta):
  product = np.matmul(a, np.swapaxes(a, -1, -2))
  return (alpha * product + beta * c).astype(c.dtype)


# impl_on_gpu_arrays: a GPU's arrays are multiplied there (cuBLAS; see dot_general_p)
symmetric_product_p = standard_primitive(
    "symmetric_product", _symmetric_product_abstract_eval, _symmetric_product_impl,
    impl_on_gpu_arrays=True)
symmetric_product_p.library_call = "BLAS gemm (NumPy matmul)"
symmetric_product_p.c_code = None
symmetric_product_p.batch = front_batch_rule(symmetric_product_p)


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
  """alpha a a^T + beta c; with symmetrize_output, averaged with its transpose."""
  np_ = jnp()
  out = symmetric_product_p.bind(np_.asarray(a_matrix), np_.asarray(c_matrix),
                                 alpha=alpha, beta=beta)
  if symmetrize_output:
    out = (out + np_.swapaxes(out, -1, -2)) / 2
  return out
