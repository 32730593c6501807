"""``jax.experimental.mesh_utils``: device arrays to build a ``Mesh`` from.

JAX arranges TPU devices by their physical torus coordinates; purejax has
CPU and GPU devices only, which JAX lays out in ``jax.devices()`` order
(GPUs sorted by id), so that is what these functions do.
"""
import collections
import math

import numpy as np

from purejax._src import devices as _devices

# Device kind -> a function (mesh_shape, devices, *, contiguous_submeshes)
# returning a device array or None (then the default layout applies), as in
# JAX, where TPU kinds have entries.
device_kind_handler_dict = {}


def _axis_sizes(mesh_shape):
  try:
    return tuple(int(s) for s in mesh_shape)
  except (TypeError, ValueError):
    return None


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
  """A NumPy array of ``devices`` (default ``jax.devices()``) of shape
  ``mesh_shape``.  ``contiguous_submeshes`` and ``allow_split_physical_axes``
  concern TPU topologies and do not change a CPU or GPU layout."""
  if devices is None:
    devices = _devices.devices()
  sizes = _axis_sizes(mesh_shape)
  if sizes is None:
    raise ValueError("`mesh_shape` passed to `create_device_mesh` should be a sequence of "
                     f"ints. Got {mesh_shape}")
  if math.prod(sizes) != len(devices):
    raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                     f"mesh_shape {sizes}")
  last = devices[-1]
  handler = device_kind_handler_dict.get(last.device_kind)
  if handler is not None:
    result = handler(sizes, devices, contiguous_submeshes=contiguous_submeshes)
    if result is not None:
      return result
  if last.platform == "gpu":
    devices = sorted(devices, key=lambda d: d.id)
  return np.asarray(devices, dtype=object).reshape(sizes)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False):
  """A device array for two-level parallelism: ``mesh_shape`` within each
  granule (a slice, or a process with ``process_is_granule``), the granules
  themselves arranged as ``dcn_mesh_shape``; the result's shape is their
  elementwise product.  purejax devices have no ``slice_index`` (as JAX's
  CPU devices), so only ``process_is_granule=True`` applies to them."""
  if devices is None:
    devices = _devices.devices()
  attr = "process_index" if process_is_granule else "slice_index"
  if not hasattr(devices[0], attr):
    raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                     "`process_is_granule` option.")
  by_granule = collections.defaultdict(list)
  for device in devices:
    by_granule[getattr(device, attr)].append(device)
  keys = sorted(by_granule) if should_sort_granules_by_key else list(by_granule)
  granules = [by_granule[k] for k in keys]
  if math.prod(dcn_mesh_shape) != len(granules):
    raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                     f"dcn_mesh_shape {dcn_mesh_shape}")
  meshes = [create_device_mesh(mesh_shape, g, allow_split_physical_axes=allow_split_physical_axes)
            for g in granules]
  layout = np.arange(len(granules)).reshape(dcn_mesh_shape)
  blocks = np.empty(layout.shape, dtype=object)
  for where, i in np.ndenumerate(layout):
    blocks[where] = meshes[i]
  return np.block(blocks.tolist())
