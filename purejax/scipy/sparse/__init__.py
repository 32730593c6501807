"""purejax.scipy.sparse: ``linalg``, the Krylov solvers (as in JAX)."""
from purejax.scipy.sparse import linalg

__all__ = ["linalg"]
