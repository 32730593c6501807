"""purejax.lax.linalg: matrix decompositions."""
from purejax._src.lax.linalg import (
    cholesky, cholesky_p, eigh, eigh_p, qr, qr_p, svd, svd_p)

__all__ = ["cholesky", "cholesky_p", "eigh", "eigh_p", "qr", "qr_p", "svd", "svd_p"]
