"""Stand-in for ``jax._src.distributed``, read by orbax (``global_state``:
``process_id``, and ``client``, JAX's coordination-service client, to tell
whether it may use its key-value store and barriers).  ``global_state`` is
purejax's own (purejax/_src/distributed.py): purejax coordinates its
processes through MPI and has no such client, so ``client`` is None."""
from purejax._src.distributed import global_state

__all__ = ["global_state"]
