"""purejax.lax.linalg: matrix decompositions and linear solves."""
from purejax._src.lax.linalg import (
    EigImplementation, EighImplementation, SvdAlgorithm, cholesky, cholesky_p, eig,
    eig_p, eigh, eigh_p, householder_product, householder_product_p, lu, lu_p,
    lu_pivots_to_permutation, lu_pivots_to_permutation_p, qr, qr_p, svd, svd_p,
    triangular_solve, triangular_solve_p, tridiagonal_solve, tridiagonal_solve_p)
from purejax._src.lax.linalg_extra import (
    cholesky_update, cholesky_update_p, ormqr, ormqr_p, symmetric_product, symmetric_product_p,
    tridiagonal, tridiagonal_p)
from purejax._src.lax.linalg_schur import hessenberg, hessenberg_p, schur, schur_p
from purejax._src.lax.qdwh import qdwh

__all__ = [
    "EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_p",
    "cholesky_update", "cholesky_update_p", "eig", "eig_p", "eigh", "eigh_p", "hessenberg",
    "hessenberg_p", "householder_product", "householder_product_p", "lu", "lu_p",
    "lu_pivots_to_permutation", "lu_pivots_to_permutation_p", "ormqr", "ormqr_p", "qdwh",
    "qr", "qr_p", "schur", "schur_p", "svd", "svd_p", "symmetric_product",
    "symmetric_product_p", "triangular_solve", "triangular_solve_p", "tridiagonal",
    "tridiagonal_p", "tridiagonal_solve", "tridiagonal_solve_p"]
