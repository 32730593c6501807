"""Arrays laid out over several devices: their shards, ``device_put`` to a
device or sharding, and JAX's ``make_array_from_*`` constructors.

Every device shares the host memory, so a sharded Array keeps ONE NumPy
value and its sharding (``Array._sharding``); a shard's data is a view of
its block.  Building an Array from per-device pieces copies them into one
global array.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import PjitFunction
from purejax._src.array import Array, _new, with_sharding, wrap_numpy
from purejax._src.async_dispatch import Pending
from purejax._src.devices import CudaDevice, Device, Sharding, SingleDeviceSharding
from purejax._src.mesh import PartitionSpec


class Shard:
  """One device's block of an Array: ``device``, ``index`` (a tuple of
  slices of the global shape), ``replica_id`` (0 for the first device
  holding that block, 1 for the next, ...) and ``data`` (an Array of the
  block, on that device)."""

  def __init__(self, device, sharding, global_shape, data=None):
    self.device = device
    self._sharding = sharding
    self._global_shape = global_shape
    self._data = data
    self._index = None
    self._replica_id = None

  def _locate(self):
    index_map = self._sharding.devices_indices_map(self._global_shape)
    self._index = index_map[self.device]
    key = _index_key(self._index)
    self._replica_id = 0
    for device, index in index_map.items():   # replicas count in device order
      if device == self.device:
        break
      if _index_key(index) == key:
        self._replica_id += 1

  @property
  def index(self):
    if self._index is None:
      self._locate()
    return self._index

  @property
  def replica_id(self):
    if self._replica_id is None:
      self._locate()
    return self._replica_id

  @property
  def data(self):
    return self._data

  def __repr__(self):
    return (f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})")


def _index_key(index):
  return tuple((s.start, s.stop, s.step) for s in index)


def shards(x):
  """The Shards of Array ``x``, one per device of its sharding (in the
  sharding's device order)."""
  sharding = x.sharding
  index_map = sharding.devices_indices_map(x.shape)
  value = x._value
  out = []
  if type(value) is not np.ndarray:   # on one GPU: the shard is the array
    return [Shard(device, sharding, x.shape, x) for device in sharding._device_assignment]
  for device in sharding._device_assignment:
    block = value[index_map[device]]
    data = with_sharding(wrap_numpy(block, x.aval.update(shape=block.shape)),
                         SingleDeviceSharding(device))
    out.append(Shard(device, sharding, x.shape, data))
  return out


def put(x, target):
  """Concrete ``x`` as an Array laid out by ``target`` (a Device, a
  Sharding or None).  The value is shared, never copied."""
  from purejax._src.devices import _put_concrete
  from purejax._src.random.keys import PRNGKeyArray
  if isinstance(x, PRNGKeyArray):   # the key data, its key axes whole
    return PRNGKeyArray(x._impl, put(x._base, _with_trailing_axes(target, x._nkey, x.shape)))
  x = _put_concrete(x)
  if target is None:
    return x
  sharding = SingleDeviceSharding(target) if isinstance(target, Device) else target
  check_shape(sharding, x.shape, "device_put")
  if getattr(x, "_sharding", None) == sharding:
    return x
  from purejax._src.sharding_types import put_aval
  out = _new(Array)
  out._v = _moved(x, sharding)
  out.aval = put_aval(x.aval, sharding)
  return with_sharding(out, sharding)


def _moved(x, sharding):
  """Array ``x``'s value where ``sharding`` keeps it: a CuPy array on a
  GPU, else on the host (a host value, even a pending one, is shared)."""
  from purejax._src.backends.cuda import gpu_runtime
  gpus = [d for d in sharding.device_set if isinstance(d, CudaDevice)]
  v = x._v
  if type(v) is Pending and v.gpu is not None:
    v = x._value   # (waits for a GPU value still being computed)
  on_gpu = type(v) is not np.ndarray and gpu_runtime.is_buffer(v)
  if not gpus:
    return x._host if on_gpu else v
  if len(sharding.device_set) != 1:
    raise ValueError(f"device_put: an array over several GPUs ({sharding}) is not "
                     "supported yet by purejax's GPU backend")
  index = gpus[0].id
  if on_gpu and v.device.id == index:
    return v
  return gpu_runtime.to_device(x._host, index)


def _with_trailing_axes(target, n, shape):
  """``target`` for an array with ``n`` more (unsplit) trailing axes."""
  spec = getattr(target, "spec", None)
  if spec is None:
    return target
  from purejax._src.mesh import NamedSharding, PartitionSpec
  check_shape(target, shape, "device_put")
  entries = tuple(spec) + (None,) * (len(shape) - len(spec) + n)
  return NamedSharding(target.mesh, PartitionSpec(*entries, unreduced=spec.unreduced,
                                                  reduced=spec.reduced))


def check_shape(sharding, shape, api):
  """Raises JAX's ValueError unless ``sharding`` fits an array of ``shape``."""
  check = getattr(sharding, "check_compatible_aval", None)
  if check is None:
    return
  try:
    check(tuple(shape), typed=True)
  except ValueError as e:
    if "is only valid for values of rank" in str(e) and api == "device_put":
      raise ValueError(f"One of device_put args is incompatible with its sharding "
                       f"annotation {sharding}: {e}") from None
    raise


def _check_sharding(sharding, api):
  if not isinstance(sharding, Sharding):
    raise TypeError(f"{api} expects a jax.sharding.Sharding, got {sharding!r}")


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
  """An Array of ``shape`` laid out by ``sharding`` whose block on each
  device is ``data_callback(index)`` (index: a tuple of slices).  As in
  JAX, the callback runs once per device; the blocks are copied into one
  host array."""
  _check_sharding(sharding, "make_array_from_callback")
  shape = tuple(shape)
  index_map = sharding.devices_indices_map(shape)
  expected = sharding.shard_shape(shape)
  out, out_dtype, weak = None, None, False
  for device in sharding._device_assignment:
    index = index_map[device]
    block = data_callback(index)
    aval = core.get_aval(block)
    block_dtype = dtypes.canonicalize_dtype(aval.dtype)
    block = np.asarray(block, dtype=block_dtype)
    if dtype is not None and np.dtype(dtype) != block_dtype:
      raise ValueError(
          "If `dtype` is provided to `jax.make_array_from_callback`, it must match the "
          f"dtype of the addressable shards. Got dtype={np.dtype(dtype)} and shard "
          f"dtype={block_dtype}`.")
    if out is None:
      out_dtype, weak = block_dtype, aval.weak_type
      out = np.empty(shape, out_dtype)
    if block.shape != expected:
      raise ValueError(
          f"Expected shard shape {expected} doesn't match the single device array shape "
          f"{block.shape}. Shape of Array is {core.ShapedArray(shape, out_dtype).str_short()} "
          f"with sharding {sharding}")
    out[index] = block
  return with_sharding(wrap_numpy(out, core.ShapedArray(shape, out_dtype, weak)), sharding)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
  """An Array of ``shape`` laid out by ``sharding`` from one Array per
  device (each on its own device; their blocks are copied into one host
  array)."""
  _check_sharding(sharding, "make_array_from_single_device_arrays")
  shape = tuple(shape)
  arrays = list(arrays)
  devices = sharding._device_assignment
  if len(arrays) != len(devices):
    raise ValueError(f"Expected {len(devices)} per-device arrays (this is how many devices "
                     f"are addressable by the sharding), but got {len(arrays)}")
  owners = [next(iter(a.devices())) if isinstance(a, Array) else None for a in arrays]
  if None in owners or len(set(owners)) != len(owners):
    ids = [getattr(d, "id", None) for d in owners]
    raise ValueError("When making an array from single-device arrays, the input arrays must "
                     f"be from distinct devices, but got device IDs {ids}")
  if set(owners) != set(devices):
    raise ValueError(f"The arrays' devices {sorted(d.id for d in owners)} are not the "
                     f"sharding's devices {sorted(d.id for d in devices)}")
  index_map = sharding.devices_indices_map(shape)
  expected = sharding.shard_shape(shape)
  out_dtype = np.dtype(dtype) if dtype is not None else arrays[0].dtype
  out = np.empty(shape, out_dtype)
  for device, a in zip(owners, arrays):
    if a.shape != expected:
      raise ValueError(
          f"Expected shard shape {expected} doesn't match the single device array shape "
          f"{a.shape}. Shape of Array is {core.ShapedArray(shape, out_dtype).str_short()} "
          f"with sharding {sharding}")
    if a.dtype != out_dtype:
      raise ValueError(f"All per-device arrays must have dtype {out_dtype}, got {a.dtype}")
    out[index_map[device]] = a._value
  return with_sharding(wrap_numpy(out, core.ShapedArray(shape, out_dtype)), sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
  """An Array laid out by ``sharding`` from this process's data.  In a
  single process the local data is the whole array.

  Across processes (after ``purejax.distributed.initialize()``) the local
  data is the slab of the global array that this process's devices hold
  (``global_shape`` inferred from the sharding when None, as in JAX).
  Differs from JAX: the processes' slabs are gathered through MPI, so every
  process holds the whole global value (purejax arrays keep one host value).
  """
  _check_sharding(sharding, "make_array_from_process_local_data")
  from purejax._src import distributed
  if distributed.global_state.comm is not None:
    return _from_processes(sharding, np.asarray(local_data), global_shape,
                           distributed.global_state.comm)
  local_shape = np.shape(local_data)
  if global_shape is not None and tuple(global_shape) != tuple(local_shape):
    raise ValueError(
        "When calling `make_array_from_process_local_data` on a single process, "
        "global_shape should be None or equal to local_data.shape.Got global_shape="
        f"{tuple(global_shape)} and local_data.shape={tuple(local_shape)}.")
  return put(local_data, sharding)


def _local_slab(sharding, shape):
  """Per dimension, (start, stop) of the blocks this process's devices hold."""
  from purejax._src.devices import process_index
  index_map = sharding.devices_indices_map(tuple(shape))
  mine = [index_map[d] for d in sharding._device_assignment
          if getattr(d, "process_index", 0) == process_index()]
  if not mine:
    raise ValueError(f"make_array_from_process_local_data: none of the devices of {sharding} "
                     "belong to this process")
  return [(min(ix[k].indices(n)[0] for ix in mine), max(ix[k].indices(n)[1] for ix in mine))
          for k, n in enumerate(shape)]


def _from_processes(sharding, local_data, global_shape, comm):
  """The global Array whose slabs the processes hold (see the caller)."""
  local_shape = local_data.shape
  if global_shape is None:
    # On a trial shape of n (the device count, divisible by every split)
    # per dimension, count the blocks along each and this process's share.
    n = len(sharding._device_assignment)
    trial = (n,) * len(local_shape)
    index_map = sharding.devices_indices_map(trial)
    splits = [len({ix[k].indices(n)[0] for ix in index_map.values()}) for k in range(len(trial))]
    slab = _local_slab(sharding, trial)
    mine = [(stop - start) * s // n for (start, stop), s in zip(slab, splits)]
    global_shape = tuple(d * s // m for d, s, m in zip(local_shape, splits, mine))
  global_shape = tuple(global_shape)
  slab = _local_slab(sharding, global_shape)
  problem = None
  if tuple(stop - start for start, stop in slab) != local_shape:
    problem = (f"this process's devices hold the slab {slab} of the global shape "
               f"{global_shape}, of shape {tuple(stop - start for start, stop in slab)}, but "
               f"local_data has shape {local_shape}")
  dtype = dtypes.canonicalize_dtype(local_data.dtype)
  # Every process joins the allgather, so one that fails tells the others.
  parts = comm.allgather(problem or (slab, local_data.astype(dtype, copy=False)))
  for p, part in enumerate(parts):
    if isinstance(part, str):
      raise ValueError(f"make_array_from_process_local_data: on process {p}, {part}")
  out = np.zeros(global_shape, dtype)
  covered = np.zeros(global_shape, bool)
  for part_slab, data in parts:
    index = tuple(slice(start, stop) for start, stop in part_slab)
    out[index] = data
    covered[index] = True
  if not covered.all():
    raise ValueError("make_array_from_process_local_data: the processes' data do not "
                     f"cover the global shape {global_shape}")
  return with_sharding(wrap_numpy(out, core.ShapedArray(global_shape, dtype)), sharding)


# ---------------------------------------------------------------------------
# jit with in_shardings / out_shardings

def _prefix_leaves(spec, tree, what, api="jit"):
  """One sharding (or None) per leaf of ``tree``: ``spec`` is one sharding
  or PartitionSpec, None, or a pytree prefix of ``tree``."""
  from purejax._src import tree_util
  is_none = lambda v: v is None
  n = len(tree_util.tree_leaves(tree))
  if spec is None or isinstance(spec, (Sharding, PartitionSpec)):
    return _on_context_mesh([spec] * n, what, api)
  if tree_util.prefix_errors(spec, tree, is_leaf=is_none):
    raise ValueError(f"jit {what} must be one Sharding or a pytree prefix of the "
                     f"{'arguments' if what == 'in_shardings' else 'outputs'}; got {spec!r}")
  leaves = tree_util.broadcast_prefix(spec, tree, is_leaf=is_none)
  for s in leaves:
    if s is not None and not isinstance(s, (Sharding, PartitionSpec)):
      raise TypeError(f"jit {what} leaves must be Shardings or None, got {s!r}")
  return _on_context_mesh(leaves, what, api)


def _on_context_mesh(leaves, what, api):
  """PartitionSpec leaves as NamedShardings on the context mesh, looked up
  at each call as JAX does: ``jit`` reads ``set_mesh``'s mesh, ``pjit`` the
  ``with mesh:`` one."""
  if not any(isinstance(s, PartitionSpec) for s in leaves):
    return leaves
  from purejax._src.mesh import NamedSharding, _mesh_stack
  from purejax._src.mesh_context import concrete_mesh
  if api == "pjit":
    mesh = _mesh_stack()[-1] if _mesh_stack() else None
  else:
    mesh = concrete_mesh()
  if mesh is None or mesh.empty:
    raise RuntimeError(
        f"{api} requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
        f"{what}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, "
        f"provide `Sharding`s to {what} and then the mesh context manager is not required.")
  return [NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s for s in leaves]


def check_in_shardings(in_shardings, args, api="jit"):
  """JAX's checks of positional ``args`` against ``in_shardings``: each
  sharding fits its argument's shape, and a committed argument is already
  laid out that way."""
  from purejax._src import tree_util
  if isinstance(in_shardings, (Sharding, PartitionSpec)):   # (a PartitionSpec is a tuple)
    in_shardings = (in_shardings,) * len(args)
  specs = _prefix_leaves(tuple(in_shardings) if isinstance(in_shardings, list)
                         else in_shardings, tuple(args), "in_shardings", api)
  for s, x in zip(specs, tree_util.tree_leaves(tuple(args))):
    if s is None or not hasattr(x, "shape"):
      continue
    check_shape(s, np.shape(x), "jit")
    own = getattr(x, "_sharding", None) if isinstance(x, Array) else None
    if own is not None and not own.is_equivalent_to(s, len(x.shape)):
      raise ValueError(
          "Sharding passed to jit does not match the sharding on the respective arg. Got "
          f"jit sharding: {s},\narg sharding: {own} for arg type: {x.aval.str_short()}")


def apply_out_shardings(out_shardings, outs, api="jit"):
  """``outs`` with each Array leaf laid out by its entry of ``out_shardings``."""
  from purejax._src import tree_util
  specs = _prefix_leaves(out_shardings, outs, "out_shardings", api)
  leaves, tree = tree_util.tree_flatten(outs)
  placed = [put(x, s) if s is not None and isinstance(x, Array) else x
            for x, s in zip(leaves, specs)]
  return tree_util.tree_unflatten(tree, placed)


class ShardedJit(PjitFunction):
  """``jit`` with ``in_shardings`` / ``out_shardings``: the same compiled
  function; the shardings are checked and recorded around eager calls
  (under an outer trace they change nothing: values are the same)."""
  _api = "jit"   # the name errors give (jax.experimental.pjit: "pjit")

  def __init__(self, fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
               inline, keep_unused, in_shardings, out_shardings):
    super().__init__(fun, static_argnums, static_argnames, donate_argnums, donate_argnames,
                     inline, keep_unused)
    self._in_shardings = in_shardings
    self._out_shardings = out_shardings

  def __call__(self, *args, **kwargs):
    eager = core.current_trace() is core.eval_trace
    if eager and self._in_shardings is not None:
      dynamic = [a for i, a in enumerate(args) if i not in self._static_argnums]
      check_in_shardings(self._in_shardings, dynamic, self._api)
    outs = super().__call__(*args, **kwargs)
    if eager and self._out_shardings is not None:
      outs = apply_out_shardings(self._out_shardings, outs, self._api)
    return outs
