"""The Array type: an immutable array backed by a NumPy buffer (or, on a
GPU, a CuPy array: ``_host`` is the value on the host either way).

Operators and most methods (``x + y``, ``x.sum()``, ``x.at[...]``) are shared
with tracers and installed by ``purejax.numpy``; this module holds what only
concrete arrays have: their value, conversions, printing.
"""
import threading

import numpy as np

from purejax._src import basearray
from purejax._src import core
from purejax._src import dtypes
from purejax._src import devices as _devices
from purejax._src import mesh_context as _mesh_context
from purejax._src.async_dispatch import Pending

_IMMUTABLE_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def immutable_error():
  return TypeError(_IMMUTABLE_MESSAGE)


class ArrayImpl(core.ArrayBase):
  """A concrete array.  Create one with ``jnp.array`` or ``device_put``.

  Inside purejax this class is called ``Array``; the public
  ``purejax.Array`` is the abstract ``basearray.Array``, which tracers and
  key arrays are instances of too."""
  # _python_scalar: set on weak scalars made from a Python number, which a
  # traced jaxpr prints as written (see jaxpr.literal_value).
  # _v: the NumPy value, or an async_dispatch.Pending until it is computed;
  # read it through ``_value``, which waits.
  # _sharding: how the value is laid out over devices (set by pmap,
  # shard_map and device_put; unset means all of it on the default device).
  __slots__ = ("_v", "aval", "_python_scalar", "_sharding", "__weakref__")

  def __init__(self, value, weak_type=False):
    value = np.asarray(value)
    aval = core.ShapedArray(value.shape, value.dtype, weak_type)
    _init(self, value, aval)

  @property
  def _value(self):
    v = self._v
    if type(v) is Pending:
      v = self._v = v.resolve()
    return v

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  weak_type = property(lambda self: self.aval.weak_type)
  ndim = property(lambda self: len(self.aval.shape))
  size = property(lambda self: self._value.size)
  itemsize = property(lambda self: self._value.itemsize)
  nbytes = property(lambda self: self._value.nbytes)

  # -- conversions to Python and NumPy ---------------------------------------

  @property
  def _host(self):
    """The value as a NumPy array (a GPU array's copied to the host)."""
    v = self._value
    if type(v) is np.ndarray:
      return v
    from purejax._src.backends.cuda import gpu_runtime
    return gpu_runtime.to_host(v, self.aval.dtype)

  def __array__(self, dtype=None, copy=None):
    if copy:
      return np.array(self._host, dtype=dtype)
    return np.asarray(self._host, dtype=dtype)

  def __bool__(self):
    return bool(self._host)

  def __int__(self):
    return int(self._host)

  def __float__(self):
    return float(self._host)

  def __complex__(self):
    return complex(self._host)

  def __index__(self):
    if not np.issubdtype(self.dtype, np.integer):
      raise TypeError("only integer scalar arrays can be converted to a scalar index")
    return self._host.__index__()

  def item(self, *args):
    return self._host.item(*args)

  def tolist(self):
    return self._host.tolist()

  def __len__(self):
    if not self.aval.shape:
      raise TypeError("len() of unsized object")
    return self.aval.shape[0]

  def __iter__(self):
    if not self.aval.shape:
      raise TypeError("iteration over a 0-d array")
    # Rows share this array's (read-only) buffer, so iterating is cheap.
    weak = self.aval.weak_type
    return (wrap_numpy(row, core.ShapedArray(row.shape, row.dtype, weak))
            for row in self._host)

  def __hash__(self):
    raise TypeError("unhashable type: 'Array'")

  def __setitem__(self, idx, value):
    raise immutable_error()

  def __reduce__(self):
    return (_rebuild, (self._host, self.aval.weak_type))

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self

  # -- printing --------------------------------------------------------------

  def __repr__(self):
    return array_repr(self._host, self.aval.weak_type)

  def __str__(self):
    return str(self._host)

  def __format__(self, spec):
    if self.ndim == 0:
      return format(self._host[()], spec)
    return format(self._host, spec)

  # -- devices and asynchrony --------------------------------------------------

  def block_until_ready(self):
    v = self._value   # waits for a pending value (and raises its computation's error)
    if type(v) is not np.ndarray:   # on a GPU: wait for its kernels
      from purejax._src.backends.cuda import gpu_runtime
      gpu_runtime.synchronize(v.device.id)
    return self

  def copy_to_host_async(self):
    pass

  def is_ready(self):
    v = self._v
    return type(v) is not Pending or v.done()

  # The layout lives in ``_sharding`` (None: uncommitted, on the default
  # device); the value is one host array whatever the layout.
  @property
  def device(self):
    """The array's device; for an array on several devices, its sharding
    (as JAX returns)."""
    sharding = self.sharding
    if sharding.num_devices == 1:
      return next(iter(sharding.device_set))
    return sharding

  def devices(self):
    return set(self.sharding.device_set)

  @property
  def sharding(self):
    sharding = getattr(self, "_sharding", None)
    if sharding is not None:
      return sharding
    if getattr(self.aval, "explicit_sharding", None) is not None:   # a typed result
      from purejax._src.sharding_types import concrete_sharding
      return concrete_sharding(self.aval)
    gpu = gpu_of(self._v)
    if gpu is None:
      return _devices.SingleDeviceSharding(_devices.CPU)
    return _devices.SingleDeviceSharding(_devices.gpu_list()[gpu])

  @property
  def committed(self):
    return (getattr(self, "_sharding", None) is not None
            or getattr(self.aval, "explicit_sharding", None) is not None)

  is_fully_addressable = True

  @property
  def is_fully_replicated(self):
    return self.sharding.is_fully_replicated

  def addressable_data(self, index):
    return self.addressable_shards[index].data

  @property
  def addressable_shards(self):
    from purejax._src.sharded_array import shards
    return shards(self)

  @property
  def global_shards(self):
    return self.addressable_shards

  def delete(self):
    """Frees the value: reading it afterwards raises ``RuntimeError``."""
    self._v = Pending(_DeletedValue(self.aval), 0, self.aval.dtype)

  def is_deleted(self):
    v = self._v
    return type(v) is Pending and type(v.job) is _DeletedValue

  def unsafe_buffer_pointer(self):
    v = self._value
    return v.ctypes.data if type(v) is np.ndarray else v.data.ptr


Array = ArrayImpl
basearray.Array.register(ArrayImpl)


class _DeletedValue:
  """The stand-in computation of a deleted Array's value: reading it
  raises, wherever it is read (eagerly, by jit, or on the worker)."""
  __slots__ = ("aval",)
  event = threading.Event()   # already finished
  event.set()

  def __init__(self, aval):
    self.aval = aval

  def result(self):
    raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}.")


def _init(array, value, aval):
  value.flags.writeable = False
  array._v = value
  array.aval = aval
  if _mesh_context.mesh_is_set:
    place_on_mesh(array)


_replicated = {}   # (mesh, rank, spelled per dimension) -> NamedSharding


def place_on_mesh(array, per_dimension=True):
  """An Array made while a mesh is set lives on all of it, replicated and
  committed, as in JAX: ``P(None, ...)`` (one entry per dimension) for a
  computed result on a mesh with Explicit axes, ``P()`` for data put there
  (``per_dimension=False``) or on an all-Auto mesh.  A result typed with
  an explicit sharding keeps the one its type gives."""
  mesh = _mesh_context.concrete_mesh()
  if mesh is None or getattr(array.aval, "explicit_sharding", None) is not None:
    return array
  ndim = len(array.aval.shape)
  key = (mesh, ndim, per_dimension)
  sharding = _replicated.get(key)
  if sharding is None:
    from purejax._src.mesh import AxisType, NamedSharding, PartitionSpec
    typed = per_dimension and AxisType.Explicit in mesh.axis_types
    sharding = NamedSharding(mesh, PartitionSpec(*[None] * ndim) if typed else PartitionSpec())
    _replicated[key] = sharding
  array._sharding = sharding
  return array


def unplaced(array):
  """``array`` left uncommitted on the default device (``device_put(x)``
  with no target, even under a mesh)."""
  if getattr(array, "_sharding", None) is not None and not isinstance(
      array._sharding, _devices.SingleDeviceSharding):
    del array._sharding
  return array


def _rebuild(value, weak_type):
  return Array(value, weak_type)


_new = object.__new__


def gpu_of(value):
  """The GPU an Array's value (a NumPy array, a device array, or either
  still being computed) is on; None for the host."""
  if type(value) is np.ndarray:
    return None
  return value.gpu if type(value) is Pending else value.device.id


class OnGpu(Exception):
  """``dense_value`` met an Array whose value is on a GPU: the caller's
  computation runs there instead (``gpu_dispatch``)."""


def dense_value(x):
  """Array ``x``'s NumPy value, C-contiguous: a strided view (an eager
  broadcast or transpose) is replaced by a dense copy once, rather than
  copied by compiled code on every call it is passed to.  Raises OnGpu
  for a value on a GPU (without waiting for one being computed)."""
  v = x._v
  if type(v) is not np.ndarray:
    if type(v) is Pending and v.gpu is not None:
      raise OnGpu
    v = x._value
    if type(v) is not np.ndarray:
      raise OnGpu
  if v.flags.c_contiguous:
    return v
  v = np.ascontiguousarray(v)
  v.setflags(write=False)
  x._v = v
  return v


def pending_or_dense(x):
  """What a dispatched computation takes for Array ``x``: its pending value
  as it is (the worker resolves it), else ``dense_value(x)``."""
  v = x._v
  if type(v) is Pending and v.gpu is None:
    return v
  return dense_value(x)   # (OnGpu for a value on a GPU, pending or not)


def with_sharding(array, sharding):
  """``array`` laid out by ``sharding`` (its value is unchanged: devices
  share the host's memory)."""
  array._sharding = sharding
  return array


def wrap_pending(pending, aval):
  """An Array whose value ``pending`` is still being computed."""
  out = _new(Array)
  out._v = pending
  out.aval = aval
  if _mesh_context.mesh_is_set:
    place_on_mesh(out)
  return out


def _token_value():
  from purejax._src.lax.tokens import Token
  return Token()


def wrap_numpy(value, aval):
  """An Array of the NumPy value ``value``, converted to ``aval``'s dtype."""
  if type(value) is not np.ndarray or value.dtype != aval.dtype:
    if type(aval) is not core.ShapedArray and getattr(aval, "is_token", False):
      return _token_value()   # lax.create_token's tokens stay tokens
    value = np.asarray(value, dtype=aval.dtype)
  value.setflags(write=False)   # cheaper than reading .flags first (hot path)
  out = _new(Array)
  out._v = value
  out.aval = aval
  if _mesh_context.mesh_is_set:
    place_on_mesh(out)
  return out


def host_float0(x):
  """A concrete float0 value (a gradient of an integer) is a NumPy array, as
  in JAX: there is nothing to compute with it.  Tracers and other values are
  returned as they are."""
  if not isinstance(x, core.Tracer) and core.get_aval(x).dtype == dtypes.float0:
    return np.zeros(np.shape(x), dtypes.float0)
  return x


def wrap_read_only(value, aval):
  """``wrap_numpy`` for a read-only ndarray (a compiled kernel's output):
  no flag to set."""
  if value.dtype != aval.dtype:
    return wrap_numpy(value, aval)
  out = _new(Array)
  out._v = value
  out.aval = aval
  if _mesh_context.mesh_is_set:
    place_on_mesh(out)
  return out


def array_repr(value, weak_type):
  prefix = "Array("
  dtype_text = f"dtype={value.dtype.name}" + (", weak_type=True" if weak_type else "") + ")"
  width = np.get_printoptions()["linewidth"]
  if value.size == 0:
    body = f"[], shape={value.shape}"
  else:
    body = np.array2string(value, prefix=prefix, suffix=",", separator=", ",
                           max_line_width=width)
  last_line = len(body) - body.rfind("\n") + 1
  sep = " " * len(prefix) if last_line + len(dtype_text) + 1 > width else " "
  return f"{prefix}{body},{sep}{dtype_text}"
