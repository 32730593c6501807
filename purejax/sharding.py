"""``jax.sharding``: how arrays are laid out over devices.  purejax's
devices share the host memory, so a sharding records the layout (for
``.sharding``, ``.addressable_shards``, shard_map and pmap) while an
Array's value stays one NumPy array."""
from purejax._src.devices import Sharding, SingleDeviceSharding
from purejax._src.mesh import AxisType, Mesh, NamedSharding, PartitionSpec
from purejax._src.reshard import auto_axes, explicit_axes, reshard
from purejax._src.sharding_types import ShardingTypeError
from purejax._src.mesh_context import (AbstractMesh, get_abstract_mesh, get_mesh, set_mesh,
                                       use_abstract_mesh, use_mesh)

__all__ = ["ShardingTypeError", "auto_axes", "explicit_axes", "reshard", "AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "set_mesh",
           "use_abstract_mesh", "use_mesh"]
from purejax._src import sharding_types as _sharding_types  # noqa: F401  (installs the rules)
