"""``jax.experimental.colocated_python.serialization``.  JAX pickles colocated
functions and their arguments' shardings here to ship them to other hosts;
purejax runs colocated functions in the calling process, so nothing is
serialized: only ``DeviceList`` (read by libraries, e.g. orbax, in type
annotations) is defined."""
from purejax._src.colocated_python import DeviceList

__all__ = ["DeviceList"]
