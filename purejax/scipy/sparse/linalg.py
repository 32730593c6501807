"""purejax.scipy.sparse.linalg: iterative solvers ``cg``, ``bicgstab`` and
``gmres`` for matrices, functions and pytrees, under ``jit``, ``grad`` and
``vmap``."""
from purejax._src.scipy.sparse_linalg import bicgstab, cg, gmres

__all__ = ["bicgstab", "cg", "gmres"]
