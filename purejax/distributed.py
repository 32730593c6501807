"""``purejax.distributed``: multi-process runs over MPI (JAX's
``jax.distributed``).  Launch with ``mpirun -n P python prog.py`` and call
``purejax.distributed.initialize()`` first."""
from purejax._src.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
