"""purejax.scipy.linalg: SciPy's linear algebra (JAX's subset).

Differs from JAX: ``polar`` computes through an SVD for both methods.
``eigh_tridiagonal`` uses the dense symmetric eigensolver and supports
select 'a' and 'i'; ``qr_multiply`` has no pivoting.
"""
from purejax._src.scipy.linalg import (
    block_diag, cho_factor, cho_solve, cholesky, circulant, det, eigh, hankel, inv, lu,
    lu_factor, lu_solve, polar, qr, solve, solve_triangular, svd, toeplitz)
from purejax._src.scipy.linalg_special import (
    companion, convolution_matrix, dft, eigh_tridiagonal, fiedler, fiedler_companion,
    hadamard, helmert, hilbert, invhilbert, invpascal, leslie, pascal, qr_multiply)
from purejax._src.scipy.linalg_expm import expm, expm_frechet
from purejax._src.scipy.linalg_schur import (
    funm, hessenberg, rsf2csf, schur, solve_sylvester, sqrtm)

__all__ = [
    "companion", "convolution_matrix", "dft", "eigh_tridiagonal", "fiedler",
    "fiedler_companion", "hadamard", "helmert", "hilbert", "invhilbert", "invpascal",
    "leslie", "pascal", "qr_multiply",
    "funm", "hessenberg", "rsf2csf", "schur", "solve_sylvester", "sqrtm",
    "block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "det", "eigh", "expm",
    "expm_frechet", "hankel", "inv", "lu", "lu_factor", "lu_solve", "polar", "qr", "solve",
    "solve_triangular", "svd", "toeplitz"]
