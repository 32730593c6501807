"""``jax.sharding``: how arrays are laid out over devices.  purejax's
devices share the host memory, so a sharding records the layout (for
``.sharding``, ``.addressable_shards``, shard_map and pmap) while an
Array's value stays one NumPy array."""
from purejax._src.devices import Sharding, SingleDeviceSharding
from purejax._src.mesh import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding"]
