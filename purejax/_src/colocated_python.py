"""``jax.experimental.colocated_python``: Python functions run on the CPU
devices colocated with the devices of their arguments.

In JAX the function is shipped (pickled) to the hosts owning those devices.
Every purejax device of a process lives in that process, so a colocated
function runs right here, on the caller's values: nothing is serialized.
Arguments laid out on devices of other processes (a multi-process run) are
not supported.
"""
import collections

import numpy as np

from purejax._src import devices as _devices
from purejax._src import source_info
from purejax._src import tree_util


class DeviceList(tuple):
  """An ordered, immutable list of devices (JAX's ``xla_client.DeviceList``)."""

  @property
  def device_set(self):
    return frozenset(self)

  @property
  def process_indices(self):
    return {d.process_index for d in self}


def colocated_cpu_devices(devices_or_mesh):
  """The CPU devices colocated with ``devices_or_mesh`` (a sequence of
  devices, or a Mesh: a Mesh of the same shape comes back).  A CPU device
  is its own colocated device; a GPU gets a CPU device of its process, one
  each, in order."""
  from purejax._src.mesh import Mesh
  if isinstance(devices_or_mesh, Mesh):
    mesh = devices_or_mesh
    flat = colocated_cpu_devices(tuple(mesh.devices.flat))
    return Mesh(np.array(flat, dtype=object).reshape(mesh.axis_sizes), mesh.axis_names,
                axis_types=mesh.axis_types)
  devices = tuple(devices_or_mesh)
  if devices and devices[0].platform == "cpu":
    return list(devices)
  spare = collections.defaultdict(list)
  for d in reversed(_devices.devices("cpu")):
    spare[d.process_index].append(d)
  out = []
  for d in devices:
    if not spare[d.process_index]:
      raise ValueError(f"Process {d.process_index} does not have enough local CPU devices")
    out.append(spare[d.process_index].pop())
  return out


def _check_arrays(leaves):
  """JAX ships only Arrays to and from a colocated function."""
  from purejax._src.basearray import Array
  for x in leaves:
    if not isinstance(x, Array):
      raise ValueError("colocated_python only supports jax.Array as input and output, but "
                       f"got {type(x)}.")


def _check_local(leaves):
  me = _devices.process_index()
  for x in leaves:
    if any(getattr(d, "process_index", 0) != me for d in x.sharding.device_set):
      raise NotImplementedError(
          "colocated_python with arguments on devices of other processes is not supported "
          "by purejax: a colocated function runs in the calling process")


def make_callable(fun, fun_sourceinfo=None, fun_signature=None):
  """JAX's ``colocated_python.func.make_callable``: ``fun`` as a colocated
  Python callable (the source info and signature only describe ``fun``)."""
  del fun_sourceinfo, fun_signature
  return _colocated(fun)


def _colocated(fun, devices=None, in_specs=None, out_specs_fn=None):
  """``fun`` as a colocated Python callable: calling it runs ``fun`` on the
  arguments; ``.specialize(in_specs=, out_specs_fn=, devices=)`` returns
  one with those settings (``devices`` is needed for a call without
  arguments, as in JAX; the specs are not needed to run in-process)."""

  @source_info.wraps(fun)
  def call(*args, **kwargs):
    leaves = tree_util.tree_leaves((args, kwargs))
    if not leaves and devices is None:
      raise ValueError("No devices found. colocated_python function without input "
                       "arguments must be first specialized with devices.")
    _check_arrays(leaves)
    _check_local(leaves)
    out = fun(*args, **kwargs)
    _check_arrays(tree_util.tree_leaves(out))
    return out

  def specialize(in_specs=None, out_specs_fn=None, devices=None):
    return _colocated(fun, devices=devices if devices is not None else call._devices,
                      in_specs=in_specs, out_specs_fn=out_specs_fn)

  call._devices = devices
  call.specialize = specialize
  return call


def colocated_python(fun):
  """Executes ``fun`` on the same devices as its arguments (here: in this
  process, see the module docstring)."""
  return _colocated(fun)


def colocated_python_class(cls):
  """JAX runs the class's methods on the devices' hosts, keeping one object
  per host; purejax does not support it."""
  raise NotImplementedError("jax.experimental.colocated_python.colocated_python_class is not "
                            "supported by purejax (colocated_python functions are)")
