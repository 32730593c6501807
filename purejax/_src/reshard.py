"""``jax.sharding.reshard``, ``auto_axes`` and ``explicit_axes``: moving
values between shardings and between Explicit and Auto mesh axes.  The
values never move (one shared memory); only their types change."""
import functools

from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.mesh import AxisType, NamedSharding, PartitionSpec, _entry_names
from purejax._src.mesh_context import concrete_mesh, get_abstract_mesh, use_abstract_mesh


def _is_spec(v):
  return v is None or isinstance(v, (PartitionSpec, NamedSharding))


def reshard(xs, out_shardings):
  """Every leaf of ``xs`` with the sharding ``out_shardings`` gives it (a
  PartitionSpec on the current mesh or a NamedSharding; a pytree prefix)."""
  from purejax._src.devices import device_put
  targets = tree_util.tree_map(_target, out_shardings, is_leaf=_is_spec)
  return device_put(xs, targets)


def _target(spec):
  if isinstance(spec, NamedSharding):
    return spec
  mesh = concrete_mesh()
  if mesh is None:
    raise ValueError("reshard needs a mesh: use `jax.set_mesh(mesh)` or pass a NamedSharding")
  return NamedSharding(mesh, spec if spec is not None else PartitionSpec())


def _axes_tuple(axes, mesh):
  if axes is None:
    return tuple(mesh.axis_names)
  return (axes,) if isinstance(axes, str) else tuple(axes)


def _without(x, axes):
  """``x``'s spec with ``axes`` removed (those axes go Auto)."""
  sharding = getattr(getattr(x, "aval", None), "explicit_sharding", None)
  if sharding is None:
    return x
  entries = []
  for entry in sharding.spec:
    kept = tuple(n for n in _entry_names(entry) if n not in axes)
    entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
  return reshard(x, PartitionSpec(*entries))


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
  """``f`` run with mesh ``axes`` (default: all) Auto: its inputs lose
  their splits over them; its outputs get ``out_sharding``."""
  if f is None:
    return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

  @source_info.wraps(f)
  def wrapped(*args, **kwargs):
    mesh = get_abstract_mesh()
    names = _axes_tuple(axes, mesh)
    args, kwargs = tree_util.tree_map(lambda x: _without(x, names), (args, kwargs))
    with use_abstract_mesh(mesh.update_axis_types({n: AxisType.Auto for n in names})):
      out = f(*args, **kwargs)
    if out_sharding is None:
      raise TypeError("auto_axes needs out_sharding: the sharding of f's outputs")
    return reshard(out, out_sharding)

  return wrapped


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
  """``f`` run with mesh ``axes`` (default: all) Explicit, its inputs
  resharded to ``in_sharding``."""
  if f is None:
    return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

  @source_info.wraps(f)
  def wrapped(*args, **kwargs):
    if in_sharding is None:
      raise TypeError("explicit_axes needs in_sharding: the sharding of f's inputs")
    mesh = get_abstract_mesh()
    names = _axes_tuple(axes, mesh)
    args = reshard(args, in_sharding)
    with use_abstract_mesh(mesh.update_axis_types({n: AxisType.Explicit for n in names})):
      return f(*args, **kwargs)

  return wrapped
