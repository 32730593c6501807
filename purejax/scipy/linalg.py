"""purejax.scipy.linalg: SciPy's linear algebra (JAX's subset).

Differs from JAX: ``polar`` computes through an SVD for both methods; not
provided yet: schur, rsf2csf, hessenberg, sqrtm, funm, qr_multiply,
solve_sylvester, eigh_tridiagonal and the special matrices beyond
toeplitz, hankel and circulant.
"""
from purejax._src.scipy.linalg import (
    block_diag, cho_factor, cho_solve, cholesky, circulant, det, eigh, hankel, inv, lu,
    lu_factor, lu_solve, polar, qr, solve, solve_triangular, svd, toeplitz)
from purejax._src.scipy.linalg_expm import expm, expm_frechet

__all__ = [
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "det", "eigh", "expm",
    "expm_frechet", "hankel", "inv", "lu", "lu_factor", "lu_solve", "polar", "qr", "solve",
    "solve_triangular", "svd", "toeplitz"]
