"""purejax.numpy.linalg: NumPy's linear algebra API (on lax.linalg)."""
from purejax._src.numpy.linalg import (
    cholesky, det, eig, eigh, eigvals, eigvalsh, inv, lstsq, matrix_power, matrix_rank,
    pinv, qr, slogdet, solve, svd, svdvals)
from purejax._src.numpy.linalg_norms import (
    cond, cross, diagonal, matmul, matrix_norm, matrix_transpose, multi_dot, norm, outer,
    tensordot, tensorinv, tensorsolve, trace, vecdot, vector_norm)

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot",
    "vector_norm"]
