"""lax.linalg: matrix decompositions and solves.

Every primitive works on the last one or two axes and takes leading batch
axes (so batching only moves the mapped axis to the front).  The families
live in their own modules: linalg_solve (triangular_solve, lu,
tridiagonal_solve), linalg_qr (qr, geqrf, householder_product) and
linalg_spectral (eigh, eig, svd); cholesky is here.
"""
import numpy as np

from purejax._src import core
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.linalg_qr import (
    geqrf, geqrf_p, householder_product, householder_product_p, qr, qr_p)
from purejax._src.lax.linalg_solve import (
    lu, lu_p, lu_pivots_to_permutation, lu_pivots_to_permutation_p, lu_solve,
    triangular_solve, triangular_solve_p, tridiagonal_solve, tridiagonal_solve_p)
from purejax._src.lax.linalg_spectral import (
    EigImplementation, EighImplementation, SvdAlgorithm, eig, eig_p, eigh, eigh_p, svd,
    svd_p)
from purejax._src.lax.linalg_util import (
    check_inexact, front_batch_rule, jnp, lapack_of, mm, split_batch, symmetrize, tril)


# -- cholesky ---------------------------------------------------------------------

def _cholesky_abstract_eval(x):
  check_inexact("cholesky", x)
  _, ((m, n),) = split_batch("cholesky", [x], [2])
  if m != n:
    raise ValueError(f"The input to cholesky must be a square matrix. Got shape {(m, n)}.")
  return core.ShapedArray(x.shape, x.dtype)


def _cholesky_impl(x):
  # LAPACK reads the lower triangle; a matrix that is not positive definite
  # gives NaNs (as in JAX), not an error.
  return lapack_of(x).potrf(x)


# impl_on_gpu_arrays: a GPU's arrays are factored there (cuSOLVER; lapack_of)
cholesky_p = standard_primitive("cholesky", _cholesky_abstract_eval, _cholesky_impl,
                                impl_on_gpu_arrays=True)
cholesky_p.library_call = "LAPACK potrf"
cholesky_p.c_code = None
cholesky_p.batch = front_batch_rule(cholesky_p)


def _cholesky_jvp(primals, tangents):
  # dL = L phi(L^{-1} dA L^{-H}), phi: the lower triangle with a halved
  # diagonal (Murray 2016, arXiv:1602.07527).
  (x,), (sigma_dot,) = primals, tangents
  L = tril(cholesky_p.bind(x))
  n = core.get_aval(x).shape[-1]
  tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True,
                         conjugate_a=True, lower=True)
  inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
  phi = tril(inner) / (1 + np.eye(n, dtype=core.get_aval(x).dtype))
  return L, mm(L, phi)


cholesky_p.jvp = _cholesky_jvp


def cholesky(x, *, symmetrize_input=True):
  """Lower Cholesky factor L with x = L L^H (NaNs where x isn't positive
  definite).  Without ``symmetrize_input`` only the lower triangle is read."""
  x = jnp().asarray(x)
  if symmetrize_input:
    x = symmetrize(x)
  return tril(cholesky_p.bind(x))


__all__ = [
    "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p",
    "eig", "eig_p", "eigh", "eigh_p", "geqrf", "geqrf_p", "householder_product",
    "householder_product_p", "lu", "lu_p", "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p", "lu_solve", "qr", "qr_p", "svd", "svd_p",
    "symmetrize", "triangular_solve", "triangular_solve_p", "tridiagonal_solve",
    "tridiagonal_solve_p"]
