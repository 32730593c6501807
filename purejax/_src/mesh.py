"""Meshes of devices, partition specs and named shardings (JAX's
``jax.sharding`` types).

A ``Mesh`` is a grid of devices with named axes; a ``PartitionSpec`` says,
per array dimension, which mesh axes split it; a ``NamedSharding`` pairs
the two and tells which block of an array each device holds.  Devices
share the host memory, so a sharding only records the layout: the value
stays one NumPy array.
"""
import collections
import enum
import math
import threading
import warnings

import numpy as np

from purejax._src import devices as _devices
from purejax._src.devices import Device, Sharding


class AxisType(enum.Enum):
  """How a mesh axis is sharded under jit: by the compiler (``Auto``), by
  the types (``Explicit``) or by the user's code (``Manual``, inside
  ``shard_map``).  purejax records it; values never depend on it."""
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

  def __repr__(self):
    return self.name


class _Unconstrained:
  """The ``PartitionSpec.UNCONSTRAINED`` entry: the compiler may choose."""
  _instance = None

  def __new__(cls):
    if cls._instance is None:
      cls._instance = object.__new__(cls)
    return cls._instance

  def __repr__(self):
    return "UNCONSTRAINED"

  def __reduce__(self):
    return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):
  """Per array dimension: None (not split), a mesh axis name, a tuple of
  names (split over their product, row-major) or ``UNCONSTRAINED``.

  A tuple of entries, printed as JAX prints it (``P('x', None)``).  As in
  JAX it equals only another PartitionSpec with the same entries (a
  one-name tuple entry is the name itself)."""
  UNCONSTRAINED = UNCONSTRAINED

  def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
    self = tuple.__new__(cls, tuple(_normalize_entry(p) for p in partitions))
    self.unreduced = _axis_set(unreduced, "unreduced")
    self.reduced = _axis_set(reduced, "reduced")
    used = {n for entry in self for n in _entry_names(entry)}
    for name, axes in (("unreduced", self.unreduced), ("reduced", self.reduced)):
      if used & axes:
        raise ValueError(f"partitions cannot overlap with {name} axes passed to "
                         f"PartitionSpec. Got partitions: {tuple(self)} and {name} axes: "
                         f"frozenset({set(sorted(axes))})")
    if self.unreduced & self.reduced:
      raise ValueError("`unreduced` and `reduced` axes passed to PartitionSpec cannot "
                       f"overlap. Got unreduced: {self.unreduced} and reduced: {self.reduced}")
    return self

  def __repr__(self):
    parts = [repr(p) for p in self]
    for name in ("unreduced", "reduced"):
      axes = getattr(self, name, frozenset())
      if axes:
        parts.append(f"{name}={{{', '.join(repr(a) for a in sorted(axes))}}}")
    return "P(" + ", ".join(parts) + ("," if len(parts) == 1 and len(self) == 1 else "") + ")"

  __str__ = __repr__

  def _extra(self):
    return (getattr(self, "unreduced", frozenset()), getattr(self, "reduced", frozenset()))

  def __eq__(self, other):
    return (isinstance(other, PartitionSpec) and tuple.__eq__(self, other)
            and self._extra() == other._extra())

  def __ne__(self, other):
    return not self == other

  def __hash__(self):
    return hash((PartitionSpec, tuple(self), self._extra()))

  def __reduce__(self):
    return (_rebuild_spec, (tuple(self), *self._extra()))

  def update(self, **kwargs):
    return PartitionSpec(*kwargs.get("partitions", tuple(self)),
                         unreduced=kwargs.get("unreduced", self.unreduced),
                         reduced=kwargs.get("reduced", self.reduced))

  def __add__(self, other):
    if not isinstance(other, tuple):
      return NotImplemented
    return PartitionSpec(*self, *other)

  def __radd__(self, other):
    if not isinstance(other, tuple):
      return NotImplemented
    return PartitionSpec(*other, *self)

  @property
  def partitions(self):
    return tuple(self)

  def _check_compatible_wrt_shape(self, shape):
    if len(shape) < len(self):
      extra = " For scalars the PartitionSpec should be P()" if len(shape) == 0 else ""
      raise ValueError(f"PartitionSpec {self} is only valid for values of rank at least "
                       f"{len(self)}, but was applied to a value of rank {len(shape)}.{extra}")


P = PartitionSpec


def _rebuild_spec(partitions, unreduced, reduced):
  return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


def _axis_set(axes, name):
  if isinstance(axes, str):
    axes = (axes,)
  axes = frozenset(axes)
  if not all(isinstance(a, str) for a in axes):
    raise TypeError(f"{name} axes passed to PartitionSpec must be mesh axis names, got {axes}")
  return axes


def _normalize_entry(p):
  if isinstance(p, list):
    p = tuple(p)
  if isinstance(p, tuple) and len(p) == 1:
    return p[0]
  return p


def _entry_names(entry):
  """The mesh axis names one PartitionSpec entry splits over."""
  if entry is None or entry is UNCONSTRAINED:
    return ()
  return entry if isinstance(entry, tuple) else (entry,)


# ---------------------------------------------------------------------------
# Mesh

_mesh_context = threading.local()   # the stack of ``with mesh:`` meshes


class Mesh:
  """A grid of devices (``devices``: an array-like of Device, one axis per
  name in ``axis_names``).  ``with mesh:`` makes it the context mesh, as
  JAX's deprecated mesh context manager does."""

  def __init__(self, devices, axis_names, axis_types=None):
    devices = np.array(devices, dtype=object) if not isinstance(devices, np.ndarray) \
        else devices.astype(object)
    if isinstance(axis_names, str):
      axis_names = (axis_names,)
    axis_names = tuple(axis_names)
    if any(n is None for n in axis_names):
      raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
    if devices.ndim != len(axis_names):
      raise ValueError(
          "Mesh requires the ndim of its first argument (`devices`) to equal the length of "
          f"its second argument (`axis_names`), but got devices.ndim == {devices.ndim} "
          f"and len(axis_names) == {len(axis_names)}.")
    if len(set(axis_names)) != len(axis_names):
      raise ValueError(f"Mesh axis names must be unique. Got: {axis_names}")
    empty = not axis_names and devices.size == 1 and devices.flat[0] is None
    if not empty and not all(isinstance(d, Device) for d in devices.flat):
      raise TypeError(f"Mesh expects an array of Devices, got {devices!r}")
    axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
    devices = devices.copy()
    devices.flags.writeable = False
    self.devices = devices
    self.axis_names = axis_names
    self.axis_types = axis_types
    self.size = 0 if empty else int(math.prod(devices.shape))

  # -- derived attributes ------------------------------------------------------

  @property
  def shape(self):
    return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

  @property
  def shape_tuple(self):
    return tuple(zip(self.axis_names, self.devices.shape))

  @property
  def axis_sizes(self):
    return tuple(self.devices.shape)

  @property
  def device_ids(self):
    ids = np.empty(self.devices.shape, dtype=int)
    for i, d in np.ndenumerate(self.devices):
      ids[i] = d.id
    return ids

  @property
  def empty(self):
    return self.size == 0

  @property
  def is_multi_process(self):
    return len({d.process_index for d in self.devices.flat}) > 1

  @property
  def local_devices(self):
    return list(self.devices.flat)

  @property
  def local_mesh(self):
    return self

  @property
  def abstract_mesh(self):
    from purejax._src.mesh_context import abstract_of
    return abstract_of(self)

  @property
  def _flat_devices_tuple(self):
    return tuple(self.devices.flat)

  # -- equality, printing, context -------------------------------------------

  def _key(self):
    return (tuple(getattr(d, "id", None) for d in self.devices.flat), self.devices.shape, self.axis_names,
            self.axis_types)

  def __eq__(self, other):
    return isinstance(other, Mesh) and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def __setattr__(self, name, value):
    if name in self.__dict__:
      raise AttributeError(f"Mesh is immutable: cannot set {name}")
    object.__setattr__(self, name, value)

  def __reduce__(self):
    return (Mesh, (self.devices, self.axis_names, self.axis_types))

  def __str__(self):
    if self.empty:
      return "Mesh()"
    sizes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
    return f"Mesh({sizes}, axis_types={self.axis_types})"

  def __repr__(self):
    if self.empty:
      return "Mesh(axis_sizes=(), axis_names=())"
    return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self.axis_types})")

  def __enter__(self):
    warnings.warn("`with mesh:` context manager has been deprecated. Please use "
                  "`with jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
    _mesh_stack().append(self)
    return self

  def __exit__(self, *exc):
    _mesh_stack().pop()
    return False


def _mesh_stack():
  stack = getattr(_mesh_context, "stack", None)
  if stack is None:
    stack = _mesh_context.stack = []
  return stack


def context_mesh():
  """The innermost ``with mesh:`` mesh of this thread, else the mesh set by
  ``jax.set_mesh``, or None."""
  stack = _mesh_stack()
  if stack:
    return stack[-1]
  from purejax._src.mesh_context import concrete_mesh
  return concrete_mesh()


def _normalize_axis_types(axis_names, axis_types, name):
  if axis_types is None:
    axis_types = (AxisType.Auto,) * len(axis_names)
  if not isinstance(axis_types, tuple):
    axis_types = (axis_types,)
  if not all(isinstance(a, AxisType) for a in axis_types):
    raise TypeError(
        f"axis_types passed to {name} must be of type `jax.sharding.AxisType`. Got "
        f"{axis_types} of type {tuple(type(a) for a in axis_types)}")
  if len(axis_names) != len(axis_types):
    raise ValueError("Number of axis names should match the number of axis_types. Got "
                     f"axis_names={axis_names} and axis_types={axis_types}")
  return axis_types


EMPTY_MESH = Mesh(np.empty((), dtype=object), ())   # JAX's ``Mesh()``: no mesh


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
  """A Mesh of the first ``prod(axis_shapes)`` devices (default: all),
  row-major.  As in JAX 0.10, the axes are ``Explicit`` unless
  ``axis_types`` says otherwise."""
  if devices is None:
    devices = _devices.devices()
  try:
    shape = tuple(int(s) for s in axis_shapes)
  except TypeError:
    raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of ints. "
                     f"Got {axis_shapes}") from None
  size = math.prod(shape)
  if size > len(devices):
    raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                     f"mesh_shape {shape}")
  grid = np.empty(size, dtype=object)
  grid[:] = list(devices)[:size]
  if isinstance(axis_names, str):
    axis_names = (axis_names,)
  if axis_types is None:
    axis_types = (AxisType.Explicit,) * len(shape)
  return Mesh(grid.reshape(shape), axis_names, axis_types=axis_types)


# ---------------------------------------------------------------------------
# NamedSharding

class DuplicateSpecError(Exception):
  """A PartitionSpec names one mesh axis twice."""


class IndivisibleError(ValueError):
  """A sharding splits a dimension into blocks that do not divide it."""


class NamedSharding(Sharding):
  """An array split over ``mesh``: dimension i over the mesh axes named by
  ``spec[i]`` (missing trailing entries: not split); the mesh axes the spec
  does not name hold replicas."""

  def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
    from purejax._src.mesh_context import AbstractMesh
    if not isinstance(mesh, (Mesh, AbstractMesh)):
      raise TypeError(f"NamedSharding expects a Mesh, got {mesh!r}")
    if not isinstance(spec, PartitionSpec):
      raise TypeError(f"NamedSharding expects a PartitionSpec, got {spec!r} of type "
                      f"{type(spec).__name__}; wrap it: P(*spec)")
    seen = set()
    for entry in spec:
      for name in _entry_names(entry):
        if not isinstance(name, str):
          raise TypeError(f"PartitionSpec entries must be None, mesh axis names or tuples "
                          f"of them, got {entry!r} in {spec}")
        if name not in mesh.axis_names:
          raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                           f"{mesh.axis_names}.")
        if name in seen:
          raise DuplicateSpecError(
              "A single NamedSharding spec specification can map every mesh axis to at "
              f"most one positional dimension, but {spec} has duplicate entries for "
              f"`{name}`")
        seen.add(name)
    self.mesh = mesh
    self.spec = spec
    self._memory_kind = memory_kind

  @property
  def memory_kind(self):   # an abstract mesh has no memory
    return None if not isinstance(self.mesh, Mesh) else self._memory_kind or "device"

  @property
  def device_set(self):
    if not isinstance(self.mesh, Mesh):
      raise ValueError("device_set is not implemented for `jax.sharding.AbstractMesh`.")
    return set(self.mesh.devices.flat)

  @property
  def _device_assignment(self):
    return tuple(self.mesh.devices.flat)

  @property
  def num_devices(self):
    return self.mesh.size

  @property
  def is_fully_replicated(self):
    return all(self._splits(entry) == 1 for entry in self.spec)

  def _splits(self, entry):
    return math.prod(self.mesh.shape[n] for n in _entry_names(entry))

  def check_compatible_aval(self, shape, typed=False):
    """Raises JAX's ValueError unless every split divides its dimension:
    its IndivisibleError, or with ``typed`` on a mesh of Explicit axes
    the message of JAX's type check (device_put, jit)."""
    if len(shape) < len(self.spec):
      raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                       f"{len(self.spec)}, but was applied to a value of rank {len(shape)}.")
    splits = [self._splits(entry) for entry in self.spec]
    splits += [1] * (len(shape) - len(splits))
    for axis, (n, k) in enumerate(zip(shape, splits)):
      if n % k == 0:
        continue
      if typed and all(t == AxisType.Explicit for t in self.mesh.axis_types):
        names = _entry_names(self.spec[axis])
        padded = PartitionSpec(*self.spec, *[None] * (len(shape) - len(self.spec)))
        sizes = ", ".join(f"'{a}': {v}" for a, v in self.mesh.shape.items())
        raise ValueError(
            f"Sharding spec {names} implies that array axis {axis} is partitioned {k} "
            f"times, but does not evenly divide the dimension size {n}. Got shape: "
            f"{tuple(shape)} and sharding NamedSharding(mesh=AbstractMesh({sizes}, "
            f"axis_types={self.mesh.axis_types}, device_kind=cpu, num_cores=None, "
            f"platform=cpu), spec={padded})")
      raise IndivisibleError(
          f"Sharding {self} implies that array axis {axis} is partitioned {k} times, but "
          f"the dimension size is {n} (full shape: {tuple(shape)}, per-dimension tiling "
          f"factors: {splits} should evenly divide the shape)")

  def devices_indices_map(self, global_shape):
    """{device: the tuple of slices of ``global_shape`` it holds}."""
    global_shape = tuple(global_shape)
    self.check_compatible_aval(global_shape)
    sizes = self.mesh.shape
    out = {}
    for coords in np.ndindex(*self.mesh.axis_sizes):
      where = dict(zip(self.mesh.axis_names, coords))
      index = []
      for axis, n in enumerate(global_shape):
        entry = self.spec[axis] if axis < len(self.spec) else None
        names = _entry_names(entry)
        splits = math.prod(sizes[a] for a in names)
        if splits == 1:
          index.append(slice(None))
          continue
        block = 0
        for a in names:   # row-major over the entry's names
          block = block * sizes[a] + where[a]
        step = n // splits
        index.append(slice(block * step, (block + 1) * step))
      out[self.mesh.devices[coords]] = tuple(index)
    return out

  def with_memory_kind(self, kind):
    return NamedSharding(self.mesh, self.spec, memory_kind=kind)

  def update(self, **kwargs):
    return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec),
                         memory_kind=kwargs.get("memory_kind", self._memory_kind))

  @property
  def replicated_axes(self):
    used = {n for entry in self.spec for n in _entry_names(entry)}
    return tuple(n for n in self.mesh.axis_names if n not in used)

  def __repr__(self):
    if not hasattr(self.mesh, "devices"):   # an AbstractMesh: a type, not a placement
      return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"
    return f"NamedSharding(mesh={self.mesh}, spec={self.spec}, memory_kind={self.memory_kind})"

  def __eq__(self, other):
    return (isinstance(other, NamedSharding) and self.mesh == other.mesh
            and self.spec == other.spec and self.memory_kind == other.memory_kind)

  def __hash__(self):
    return hash((NamedSharding, self.mesh, self.spec, self.memory_kind))

  def __reduce__(self):
    return (_rebuild_named, (self.mesh, self.spec, self._memory_kind))


def _rebuild_named(mesh, spec, memory_kind):
  return NamedSharding(mesh, spec, memory_kind=memory_kind)
