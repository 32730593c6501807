"""The mesh a program runs under (``jax.set_mesh``) and its device-free
description (``AbstractMesh``: axis names, sizes and types), which is what
an array's type refers to in explicit sharding."""
import collections
import contextlib
import math
import threading
import warnings

from purejax._src.mesh import AxisType, Mesh, _normalize_axis_types


class AbstractMesh:
  """A mesh without devices: ``AbstractMesh(axis_sizes, axis_names,
  axis_types)`` (axes ``Auto`` unless told)."""

  def __init__(self, axis_sizes, axis_names, axis_types=None, *, device_kind=None,
               num_cores=None, platform=None):
    if isinstance(axis_names, str):
      axis_names = (axis_names,)
    self.axis_sizes = tuple(int(s) for s in axis_sizes)
    self.axis_names = tuple(axis_names)
    if len(self.axis_sizes) != len(self.axis_names):
      raise ValueError(f"Length of axis_sizes {self.axis_sizes} and axis_names "
                       f"{self.axis_names} must match")
    self.axis_types = _normalize_axis_types(self.axis_names, axis_types, "AbstractMesh")
    self.device_kind = device_kind
    self.num_cores = num_cores
    self.platform = platform

  shape = property(lambda self: collections.OrderedDict(zip(self.axis_names, self.axis_sizes)))
  shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
  size = property(lambda self: math.prod(self.axis_sizes))
  empty = property(lambda self: not self.axis_names)
  abstract_mesh = property(lambda self: self)

  def _name_types(self, kind):
    return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == kind)

  explicit_axes = property(lambda self: self._name_types(AxisType.Explicit))
  auto_axes = property(lambda self: self._name_types(AxisType.Auto))
  manual_axes = property(lambda self: self._name_types(AxisType.Manual))

  def update_axis_types(self, new_types):
    """This mesh with ``new_types`` ({axis name: AxisType}) applied."""
    types = tuple(new_types.get(n, t) for n, t in zip(self.axis_names, self.axis_types))
    return AbstractMesh(self.axis_sizes, self.axis_names, types, device_kind=self.device_kind,
                        num_cores=self.num_cores, platform=self.platform)

  def _key(self):
    return (self.axis_sizes, self.axis_names, self.axis_types, self.device_kind,
            self.num_cores, self.platform)

  def __eq__(self, other):
    return isinstance(other, AbstractMesh) and self._key() == other._key()

  def __hash__(self):
    return hash((AbstractMesh, self._key()))

  def __repr__(self):
    if self.empty:
      return "AbstractMesh((), axis_types=())"
    sizes = ", ".join(f"'{n}': {s}" for n, s in self.shape_tuple)
    types = "(" + ", ".join(t.name for t in self.axis_types) + ("," if len(self.axis_types) == 1 else "") + ")"
    device = ""
    if self.device_kind is not None or self.platform is not None:
      device = (f", device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")
    return f"AbstractMesh({sizes}, axis_types={types}{device})"

  __str__ = __repr__


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


def abstract_of(mesh):
  """The AbstractMesh of a Mesh (an AbstractMesh is its own)."""
  if isinstance(mesh, AbstractMesh):
    return mesh
  if mesh.empty:
    return EMPTY_ABSTRACT_MESH
  return AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types, device_kind="cpu",
                      platform="cpu")


# ---------------------------------------------------------------------------
# The current mesh

class _State(threading.local):
  def __init__(self):
    self.mesh = None            # the concrete mesh set by set_mesh
    self.abstract = None        # an override from use_abstract_mesh / auto_axes


_state = _State()

# True while some thread has a mesh set: new Arrays check only this flag
# before looking up the mesh (the no-mesh path stays one attribute read).
mesh_is_set = False
_threads_with_mesh = set()


def _notify_mesh_change():
  """jit's fast-path entries were made under the previous mesh (whose
  results they place): a change makes them stale, as a config change does."""
  from purejax._src import api
  api._on_config_change()


def _set_current(mesh):
  global mesh_is_set
  if mesh is not _state.mesh:
    _notify_mesh_change()
  _state.mesh = mesh
  if mesh is None:
    _threads_with_mesh.discard(threading.get_ident())
  else:
    _threads_with_mesh.add(threading.get_ident())
  mesh_is_set = bool(_threads_with_mesh)


class _MeshSetting:
  """What ``set_mesh`` returns: the mesh is already set; used in a ``with``
  block, the previous one comes back at its end."""

  def __init__(self, previous):
    self._previous = previous

  def __enter__(self):
    return None

  def __exit__(self, *exc):
    _set_current(self._previous)
    return False


def set_mesh(mesh):
  """Makes ``mesh`` the current mesh (for ``device_put(x, P(...))``,
  ``reshard``, ``shard_map`` and sharding in types), at once, or for a
  ``with`` block."""
  if mesh is not None and not isinstance(mesh, Mesh):
    raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
  previous = _state.mesh
  _set_current(None if mesh is None or mesh.empty else mesh)
  return _MeshSetting(previous)


@contextlib.contextmanager
def use_mesh(mesh):
  """Deprecated spelling of ``with jax.set_mesh(mesh):``."""
  warnings.warn("jax.sharding.use_mesh is deprecated; use `with jax.set_mesh(mesh):`",
                DeprecationWarning, stacklevel=3)
  with set_mesh(mesh):
    yield mesh


@contextlib.contextmanager
def use_abstract_mesh(mesh):
  """Within the block, ``get_abstract_mesh()`` is ``mesh``."""
  previous = _state.abstract
  _state.abstract = mesh
  try:
    yield
  finally:
    _state.abstract = previous


def get_mesh():
  """The mesh set by ``set_mesh`` (JAX's empty ``Mesh()`` when none)."""
  from purejax._src.mesh import EMPTY_MESH
  return _state.mesh if _state.mesh is not None else EMPTY_MESH


def concrete_mesh():
  """The mesh set by ``set_mesh``, or None."""
  return _state.mesh


def get_abstract_mesh():
  """The AbstractMesh of the current mesh (empty when none is set)."""
  if _state.abstract is not None:
    return _state.abstract
  return abstract_of(_state.mesh) if _state.mesh is not None else EMPTY_ABSTRACT_MESH
