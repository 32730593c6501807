"""The devices purejax runs on (N host CPU "devices", and NVIDIA GPUs
through CuPy), the single-device sharding, and ``device_put`` /
``device_get``.

N comes from ``config.update("jax_num_cpu_devices", N)`` or, when that flag
is unset, ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (read at
first use); default 1.  CPU devices share the host memory: an Array keeps
one NumPy value whatever its sharding.

GPUs (``CudaDevice``) are used while the GPU backend is being built only
when ``JAX_PLATFORMS`` names them ("cuda" or "gpu", e.g. ``cuda,cpu``) and
CuPy finds a GPU; the first platform named is the default backend.  An
Array placed on a GPU keeps a CuPy array.
"""
import enum
import os
import re

import numpy as np

from purejax._src import core
from purejax._src import host_memory
from purejax._src import tree_util
from purejax._src.config import config

# Platform kinds JAX names in its "no platforms that are instances of"
# error (a specific platform, such as "cuda", is just an unknown backend).
_GPU_NAMES = ("gpu", "tpu")
# The names JAX_PLATFORMS and ``backend=`` accept for NVIDIA GPUs.
_CUDA_NAMES = ("cuda", "gpu")


class Device:
  """A device arrays live on: one of the N CPU devices (threads sharing the
  host's memory), printed as JAX prints it: ``CpuDevice(id=0)``."""
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
    return type(other) is type(self) and other.id == self.id

  def __hash__(self):
    return hash((self.platform, self.id))

  def memory_stats(self):
    return None

  @property
  def client(self):
    return client(self.platform)

  # The memories a CPU device addresses, as JAX lists them; in purejax all
  # three are the host's memory.
  _memory_kinds = ("device", "pinned_host", "unpinned_host")

  def addressable_memories(self):
    return [Memory(self, kind) for kind in self._memory_kinds]

  def default_memory(self):
    return Memory(self, "device")

  def memory(self, kind):
    if kind not in self._memory_kinds:
      from purejax._src.errors import JaxRuntimeError
      raise JaxRuntimeError(
          f"INVALID_ARGUMENT: Could not find memory addressable by device {self.platform}. "
          f"Device {self.platform} can address the following memory kinds: "
          f"{', '.join(self._memory_kinds)}. Got memory kind: {kind}")
    return Memory(self, kind)


class Memory:
  """A memory space a device addresses (``Device.memory(kind)``)."""

  def __init__(self, device, kind):
    self._device = device
    self.kind = kind
    self.platform = device.platform
    self.process_index = device.process_index

  def addressable_by_devices(self):
    return [self._device]

  def __eq__(self, other):
    return type(other) is Memory and (other._device, other.kind) == (self._device, self.kind)

  def __hash__(self):
    return hash((Memory, self._device, self.kind))

  def __repr__(self):
    return f"Memory(kind={self.kind!r}, device={self._device!r})"


CPU = Device(0)


class CudaDevice(Device):
  """An NVIDIA GPU, as JAX prints it: ``CudaDevice(id=0)``."""
  platform = "gpu"
  _memory_kinds = ("device",)   # purejax does not place arrays in host memory for a GPU

  @property
  def device_kind(self):
    from purejax._src.backends.cuda import gpu_runtime
    return gpu_runtime.device_kind(self.id)

  def __repr__(self):
    return f"CudaDevice(id={self.id})"

  def __str__(self):
    return f"cuda:{self.id}"


class Client:
  """The runtime owning one platform's devices (JAX's ``Device.client``, the
  value of ``jax._src.xla_bridge._backends[platform]``): libraries read
  ``platform`` and ``runtime_type`` to tell runtimes apart (orbax: Pathways
  or not)."""
  runtime_type = "purejax"
  platform_version = "purejax"

  def __init__(self, platform):
    self.platform = platform

  def devices(self):
    return devices(self.platform)

  def local_devices(self):
    return local_devices(backend=self.platform)

  def device_count(self):
    return len(self.devices())

  def local_device_count(self):
    return len(self.local_devices())

  def process_index(self):
    return process_index()

  def __repr__(self):
    return f"Client(platform={self.platform!r}, runtime_type='purejax')"


_clients = {}


def client(platform):
  """The one Client of ``platform`` ("cpu" or "gpu")."""
  if platform not in _clients:
    _clients[platform] = Client(platform)
  return _clients[platform]


_gpu_objects = None   # [CudaDevice(i)] once looked up (the same objects each call)


def gpu_devices_changed():
  """Forgets the GPUs found (``gpu_runtime.use`` changed the runtime), and
  the executables compiled for them (their modules are the old runtime's)."""
  global _gpu_objects
  _gpu_objects = None
  from purejax._src import gpu_dispatch
  gpu_dispatch.forget_executables()


def _platform_names():
  text = config.jax_platforms
  return [n.strip() for n in text.split(",") if n.strip()] if text else []


def platforms_name_gpu():
  """Whether JAX_PLATFORMS names GPUs (only then are they used)."""
  return any(n in _CUDA_NAMES for n in _platform_names())


def gpu_list():
  """The GPUs purejax uses: none unless JAX_PLATFORMS names them."""
  global _gpu_objects
  if not platforms_name_gpu():
    return []
  if _gpu_objects is None:
    from purejax._src.backends.cuda import gpu_runtime
    _gpu_objects = [CudaDevice(i) for i in range(gpu_runtime.device_count())]
  return _gpu_objects


def platform_default_device():
  """The default backend's first device: a GPU when JAX_PLATFORMS names
  GPUs first (and CuPy finds one), else the CPU."""
  gpus = gpu_list()
  if gpus and _platform_names()[0] in _CUDA_NAMES:
    return gpus[0]
  return CPU


def default_device():
  """The device arrays and computations go to unless placed:
  ``jax.default_device``'s (a device, or a platform's first device) when
  set, else the default backend's."""
  chosen = config.jax_default_device
  if chosen is None:
    return platform_default_device()
  if isinstance(chosen, str):
    return gpu_list()[0] if _check_backend(chosen) else CPU
  # A CPU device stands for the host (CPU devices share its memory).
  return chosen if type(chosen) is CudaDevice else CPU


def gpu_is_default():
  return default_device() is not CPU


def on_default_device(array):
  """A new concrete Array, its value moved to the default device when that
  is a GPU (still uncommitted, as ``jnp.array``'s results are in JAX)."""
  device = default_device()
  if device is CPU or type(array._v) is not np.ndarray:
    return array
  from purejax._src.backends.cuda import gpu_runtime
  array._v = gpu_runtime.to_device(array._v, device.id)
  return array


def _num_cpu_devices_flag(value):
  value = int(value)
  if value == 0 or value < -1:
    raise ValueError(f"jax_num_cpu_devices must be a positive integer (or -1), got {value}")
  return value


config.define("jax_num_cpu_devices", -1, kind=int, validator=_num_cpu_devices_flag,
              help="Number of CPU devices (-1: from XLA_FLAGS, else 1).  Unlike JAX, "
                   "purejax lets it change at any time.")

_XLA_COUNT = re.compile(r"--xla_force_host_platform_device_count=(\d+)")
_xla_flags_count = None   # XLA_FLAGS's count, read at first use
_device_objects = [CPU]   # Device(i) is always the same object


def _xla_flags_devices():
  global _xla_flags_count
  if _xla_flags_count is None:
    found = _XLA_COUNT.findall(os.environ.get("XLA_FLAGS", ""))
    _xla_flags_count = max(1, int(found[-1])) if found else 1
  return _xla_flags_count


def xla_flags_read():
  """Whether XLA_FLAGS's device count was read (it is fixed from then on)."""
  return _xla_flags_count is not None


def num_devices():
  """The current device count N (the flag, else XLA_FLAGS, else 1)."""
  n = config.jax_num_cpu_devices
  return n if n > 0 else _xla_flags_devices()


# (process index, process count, local device count) once
# purejax.distributed.initialize has joined several processes, else None.
_process_layout = None


def device_list():
  """``[CpuDevice(id=0), ..., CpuDevice(id=N-1)]`` (the same objects each call);
  after distributed.initialize, every process's devices in process order."""
  n = num_devices() if _process_layout is None else _process_layout[1] * _process_layout[2]
  while len(_device_objects) < n:
    _device_objects.append(Device(len(_device_objects)))
  if _process_layout is not None:
    for d in _device_objects[:n]:
      d.process_index = d.host_id = d.task_id = d.id // _process_layout[2]
  return _device_objects[:n]


class Sharding:
  """How an array's global shape is laid out over devices (JAX's interface).

  A subclass gives ``device_set``, ``_device_assignment`` (the devices in
  order), ``memory_kind``, ``is_fully_replicated`` and
  ``devices_indices_map``; the rest follows from those.  Every device is
  addressable (one process; the MPI layer widens this)."""

  @property
  def addressable_devices(self):
    return set(self.device_set)

  @property
  def _addressable_device_assignment(self):
    """The addressable devices, in the order of ``_device_assignment``."""
    addressable = self.addressable_devices
    return tuple(d for d in self._device_assignment if d in addressable)

  @property
  def num_devices(self):
    return len(self.device_set)

  @property
  def is_fully_addressable(self):
    return True

  @property
  def has_addressable_devices(self):
    return True

  def addressable_devices_indices_map(self, global_shape):
    """``devices_indices_map`` restricted to this process's devices."""
    return self.devices_indices_map(global_shape)

  def shard_shape(self, global_shape):
    """The shape of each device's block of an array of ``global_shape``."""
    index = next(iter(self.devices_indices_map(tuple(global_shape)).values()))
    return tuple(len(range(*i.indices(n))) for i, n in zip(index, global_shape))

  def is_equivalent_to(self, other, ndim):
    """Whether both put the same blocks on the same devices (for any
    ``ndim``-dimensional shape: checked on a shape every split divides)."""
    if not isinstance(other, Sharding):
      return False
    if self._device_assignment != other._device_assignment:
      return False
    if self.memory_kind != other.memory_kind:
      return False
    shape = (2 * 3 * 5 * 7 * 64,) * ndim
    try:
      return self.devices_indices_map(shape) == other.devices_indices_map(shape)
    except ValueError:
      return False

  def with_memory_kind(self, kind):
    raise NotImplementedError(f"{type(self).__name__}.with_memory_kind")


class SingleDeviceSharding(Sharding):
  """All of an array on one device."""

  def __init__(self, device, *, memory_kind=None):
    if not isinstance(device, Device):
      raise TypeError(f"SingleDeviceSharding expects a Device, got {device!r}")
    self._device = device
    self._memory_kind = memory_kind

  device_set = property(lambda self: {self._device})
  _device_assignment = property(lambda self: (self._device,))
  memory_kind = property(lambda self: self._memory_kind or "device")
  num_devices = 1
  is_fully_replicated = True

  def devices_indices_map(self, global_shape):
    return {self._device: (slice(None),) * len(global_shape)}

  def with_memory_kind(self, kind):
    return SingleDeviceSharding(self._device, memory_kind=kind)

  def __repr__(self):
    return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"

  def __eq__(self, other):
    return (isinstance(other, SingleDeviceSharding) and other._device == self._device
            and other.memory_kind == self.memory_kind)

  def __hash__(self):
    return hash((SingleDeviceSharding, self._device, self.memory_kind))


def _check_platforms():
  """``JAX_PLATFORMS`` (or the jax_platforms flag) may name cpu, and cuda
  or gpu where CuPy finds a GPU."""
  for name in _platform_names():
    if name == "cpu":
      continue
    if name in _CUDA_NAMES:
      if gpu_list():
        continue
      raise RuntimeError(
          f"Unable to initialize backend '{name}': no NVIDIA GPU found (the GPU backend "
          "needs CuPy: pip install \"purejax[cuda]\"). (set JAX_PLATFORMS='' to "
          "automatically choose an available backend)")
    known = ["cpu", "cuda"] if gpu_list() else ["cpu"]
    raise RuntimeError(
        f"Unable to initialize backend '{name}': Backend '{name}' is not "
        f"in the list of known backends: {known}. (set JAX_PLATFORMS='' to "
        "automatically choose an available backend)")


def _check_backend(backend):
  """Whether ``backend`` (None: the default) names the GPUs; raises JAX's
  error for one that is absent or unknown."""
  _check_platforms()
  if backend is None:
    return platform_default_device() is not CPU
  if backend == "cpu":
    return False
  gpus = bool(gpu_list())
  if backend in _CUDA_NAMES and gpus:
    return True
  if backend in _GPU_NAMES:
    raise RuntimeError(
        f"Unknown backend: '{backend}' requested, but no platforms that are instances of "
        f"{backend} are present. Platforms present are: {'cpu, gpu' if gpus else 'cpu'}")
  available = "['cpu', 'cuda']" if gpus else "['cpu']"
  raise RuntimeError(f"Unknown backend {backend}. Available backends are {available}")


def devices(backend=None):
  """Every device of ``backend`` (default: the default backend): N CPU
  devices, N from ``jax_num_cpu_devices`` or ``XLA_FLAGS`` (default 1),
  or the GPUs.  Unlike JAX, purejax lets
  ``config.update("jax_num_cpu_devices", N)`` change N after first use;
  Arrays and Devices made earlier stay valid."""
  if _check_backend(backend):
    return list(gpu_list())
  return device_list()


def local_devices(process_index=None, backend=None, host_id=None):
  """The devices attached to this process (all N in a single process)."""
  if _check_backend(backend):
    if process_index not in (None, 0) or host_id not in (None, 0):
      raise ValueError(f"Invalid process_index {process_index or host_id}; only process 0 "
                       "exists.")
    return list(gpu_list())
  index = process_index if process_index is not None else host_id
  if _process_layout is not None:   # several processes (purejax.distributed)
    me, count, local = _process_layout
    index = me if index is None else index
    if not 0 <= index < count:
      raise ValueError(f"Invalid process_index {index}; processes are 0..{count - 1}.")
    return device_list()[index * local:(index + 1) * local]
  if index not in (None, 0):
    raise ValueError(f"Invalid process_index {index}; only process 0 exists.")
  return device_list()


def device_count(backend=None):
  """The number of devices N."""
  return len(devices(backend))


def local_device_count(backend=None):
  """The number of devices attached to this process."""
  return len(local_devices(backend=backend))


def default_backend():
  """The platform computations run on by default: ``"cpu"`` or ``"gpu"``."""
  _check_platforms()
  return platform_default_device().platform


def process_index(backend=None):
  return 0 if _process_layout is None else _process_layout[0]


def process_count(backend=None):
  return 1 if _process_layout is None else _process_layout[1]


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
  from purejax._src.array import Array, unplaced, wrap_numpy
  if type(x) is Array:
    return x
  aval = core.get_aval(x)
  value = (host_memory.copy(x, aval.dtype) if isinstance(x, np.ndarray)
           else np.array(x, dtype=aval.dtype))
  return unplaced(wrap_numpy(value, aval))


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
  """Every leaf of ``x`` as an Array on ``device`` (a Device, a Sharding
  such as ``NamedSharding``, None, or a pytree prefix of these).  Devices
  share the host memory: nothing is copied, the Array records its layout
  (JAX's errors for shapes a sharding does not divide).  Under a trace it
  is staged as ``device_put`` (the layout is not tracked through jit)."""
  _check_platforms()
  from purejax._src.sharding_types import resolve_target
  from purejax._src.mesh import PartitionSpec
  from purejax.experimental.layout import Format
  # A Format's layout is not kept: purejax arrays have one (row-major) layout.
  device = tree_util.tree_map(
      lambda t: resolve_target(t.sharding if isinstance(t, Format) else t), device,
      is_leaf=lambda v: v is None or isinstance(v, (PartitionSpec, Format)))
  leaves, tree = tree_util.tree_flatten(x)
  targets = _targets(x, device, "device")
  srcs = _targets(x, src, "src")
  if not any(isinstance(v, core.Tracer) for v in leaves):
    from purejax._src.sharded_array import put
    return tree_util.tree_unflatten(tree, [put(v, t) for v, t in zip(leaves, targets)])
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
