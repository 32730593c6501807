"""The devices purejax runs on (one: the host CPU), shardings over it, and
``device_put`` / ``device_get``."""
import enum

import numpy as np

from purejax._src import core
from purejax._src import tree_util
from purejax._src.config import config

_GPU_NAMES = ("gpu", "cuda", "rocm", "tpu")


class Device:
  """A device arrays live on.  purejax has exactly one, the host CPU,
  printed as JAX prints it: ``CpuDevice(id=0)``."""
  platform = "cpu"
  device_kind = "cpu"
  process_index = 0
  host_id = 0
  task_id = 0

  def __init__(self, id=0):
    self.id = id

  @property
  def local_hardware_id(self):
    return self.id

  def __repr__(self):
    return f"CpuDevice(id={self.id})"

  def __str__(self):
    return f"{self.platform}:{self.id}"

  def __eq__(self, other):
    return isinstance(other, Device) and other.id == self.id

  def __hash__(self):
    return hash(("cpu", self.id))

  def memory_stats(self):
    return None


CPU = Device(0)


class SingleDeviceSharding:
  """All of an array on one device (the only layout purejax has)."""

  def __init__(self, device, *, memory_kind=None):
    if not isinstance(device, Device):
      raise TypeError(f"SingleDeviceSharding expects a Device, got {device!r}")
    self._device = device
    self._memory_kind = memory_kind

  device_set = property(lambda self: {self._device})
  addressable_devices = device_set
  memory_kind = property(lambda self: self._memory_kind or "device")
  num_devices = 1
  is_fully_replicated = True
  is_fully_addressable = True

  def __repr__(self):
    return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"

  def __eq__(self, other):
    return (isinstance(other, SingleDeviceSharding) and other._device == self._device
            and other.memory_kind == self.memory_kind)

  def __hash__(self):
    return hash((SingleDeviceSharding, self._device, self.memory_kind))


def _check_platforms():
  """``JAX_PLATFORMS`` (or the jax_platforms flag) may name only cpu."""
  text = config.jax_platforms
  if not text:
    return
  for name in text.split(","):
    if name.strip() != "cpu":
      raise RuntimeError(
          f"Unable to initialize backend '{name.strip()}': Backend '{name.strip()}' is not "
          "in the list of known backends: ['cpu']. (set JAX_PLATFORMS='' to "
          "automatically choose an available backend)")


def _check_backend(backend):
  _check_platforms()
  if backend is None or backend == "cpu":
    return
  if backend in _GPU_NAMES:
    raise RuntimeError(
        f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
        f"{backend} are present. Platforms present are: cpu")
  raise RuntimeError(f"Unknown backend {backend}. Available backends are ['cpu']")


def devices(backend=None):
  """Every device of ``backend`` (default: the default backend): ``[CpuDevice(id=0)]``."""
  _check_backend(backend)
  return [CPU]


def local_devices(process_index=None, backend=None, host_id=None):
  """The devices attached to this process: ``[CpuDevice(id=0)]``."""
  _check_backend(backend)
  index = process_index if process_index is not None else host_id
  if index not in (None, 0):
    raise ValueError(f"Invalid process_index {index}; only process 0 exists.")
  return [CPU]


def device_count(backend=None):
  """The number of devices: 1."""
  return len(devices(backend))


def local_device_count(backend=None):
  """The number of devices attached to this process: 1."""
  return len(local_devices(backend=backend))


def default_backend():
  """The platform computations run on by default: ``"cpu"``."""
  _check_platforms()
  return "cpu"


def process_index(backend=None):
  return 0


def process_count(backend=None):
  return 1


# ---------------------------------------------------------------------------
# device_put / device_get

class ArrayCopySemantics(enum.Enum):
  """How ``device_put`` treats its input buffer (a param of ``device_put_p``)."""
  ALWAYS_COPY = 0
  REUSE_INPUT = 1
  DONATE_INPUT = 2

  def __repr__(self):
    return f"ArrayCopySemantics.{self.name}"


_BAD_DEVICE = ("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, `jax.Device`, "
               "`Format`, `jax.memory.Space` or a pytree of these values. Received invalid "
               "value: {}")


def _check_target(target):
  if target is None or isinstance(target, Device):
    return
  device_set = getattr(target, "device_set", None)   # any Sharding-like object
  if isinstance(device_set, (set, frozenset)) and all(isinstance(d, Device) for d in device_set):
    return
  raise ValueError(_BAD_DEVICE.format(target))


def _targets(x, device, name):
  """One target (None, Device or sharding) per leaf of ``x``."""
  is_none = lambda v: v is None   # None is a target here, not an empty subtree
  leaves = tree_util.tree_leaves(x)
  if device is None or isinstance(device, Device) or hasattr(device, "device_set"):
    _check_target(device)
    return [device] * len(leaves)
  errors = tree_util.prefix_errors(device, x, is_leaf=is_none)
  if errors:
    details = "\n  ".join(str(e(f"device_put {name}")) for e in errors)
    raise ValueError(f"device_put {name} specification must be a tree prefix of the "
                     f"corresponding value; \n  Mismatch details ({len(errors)} found):"
                     f"\n  {details}")
  targets = tree_util.broadcast_prefix(device, x, is_leaf=is_none)
  for t in targets:
    _check_target(t)
  return targets


def _put_concrete(x):
  from purejax._src.array import Array, wrap_numpy
  if type(x) is Array:
    return x
  aval = core.get_aval(x)
  return wrap_numpy(np.array(x, dtype=aval.dtype), aval)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
  """Every leaf of ``x`` as an Array on ``device`` (a Device, a sharding such
  as ``SingleDeviceSharding``, None, or a pytree prefix of these).  With one
  device nothing moves; under a trace it is staged as ``device_put``."""
  _check_platforms()
  leaves, tree = tree_util.tree_flatten(x)
  targets = _targets(x, device, "device")
  srcs = _targets(x, src, "src")
  if not any(isinstance(v, core.Tracer) for v in leaves):
    return tree_util.tree_unflatten(tree, [_put_concrete(v) for v in leaves])
  from purejax._src.lax.misc_ops import device_put_p
  if donate:
    semantics = ArrayCopySemantics.DONATE_INPUT
  elif may_alias is False:
    semantics = ArrayCopySemantics.ALWAYS_COPY
  else:
    semantics = ArrayCopySemantics.REUSE_INPUT
  outs = device_put_p.bind(*leaves, devices=tuple(targets), srcs=tuple(srcs),
                           copy_semantics=(semantics,) * len(leaves))
  return tree_util.tree_unflatten(tree, outs)


def device_get(x):
  """Every Array leaf of ``x`` as a NumPy array (other leaves unchanged)."""
  from purejax._src.array import Array
  for leaf in tree_util.tree_leaves(x):
    if hasattr(leaf, "copy_to_host_async"):
      leaf.copy_to_host_async()   # start every transfer before waiting on any
  return tree_util.tree_map(lambda v: np.asarray(v) if isinstance(v, Array) else v, x)
