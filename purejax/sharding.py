"""``jax.sharding``: the layouts of arrays over devices.  purejax has one CPU
device, so every array is on it: ``SingleDeviceSharding``."""
from purejax._src.devices import SingleDeviceSharding

__all__ = ["SingleDeviceSharding"]
