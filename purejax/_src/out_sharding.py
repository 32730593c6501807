"""``out_sharding=`` on array operations (``jnp.dot``, ``reshape``,
``zeros``, ``x.at[i].get``...): the result's sharding type is the one asked
for, whatever the inputs' rule would give (values never move).

``canonical`` checks the request as JAX does (a PartitionSpec needs a set
mesh; its axes must exist, be named once and divide the shape) and gives a
NamedSharding on the abstract mesh, the form primitives take as a param.
``compute_with`` runs an operation on its inputs made untyped (their
Explicit axes go Auto, as ``auto_axes``) and types the result.
"""
from purejax._src import core
from purejax._src import tree_util
from purejax._src.mesh import NamedSharding, PartitionSpec
from purejax._src.mesh_context import abstract_of, get_abstract_mesh


def canonical(out_sharding, shape):
  """``out_sharding`` (a PartitionSpec or NamedSharding) as a NamedSharding
  on an abstract mesh, checked against ``shape``; None stays None."""
  if out_sharding is None:
    return None
  if isinstance(out_sharding, PartitionSpec):
    mesh = get_abstract_mesh()
    if mesh.empty:
      raise ValueError(
          "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
          "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
          f"Got {out_sharding}")
    sharding = NamedSharding(mesh, out_sharding)
  elif isinstance(out_sharding, NamedSharding):
    sharding = NamedSharding(abstract_of(out_sharding.mesh), out_sharding.spec)
  else:
    raise TypeError(f"out_sharding must be a PartitionSpec or a NamedSharding, got "
                    f"{out_sharding!r}")
  spec = sharding.spec
  extra = spec[len(shape):]
  if any(e is not None for e in extra):
    raise ValueError(f"Sharding {sharding} is only valid for values of rank at least "
                     f"{len(spec)}, but was applied to a value of rank {len(shape)}.")
  entries = tuple(spec[:len(shape)]) + (None,) * max(0, len(shape) - len(spec))
  sharding = NamedSharding(sharding.mesh, PartitionSpec(*entries, unreduced=spec.unreduced,
                                                         reduced=spec.reduced))
  sharding.check_compatible_aval(shape, typed=True)
  return sharding


def permuted(out_sharding, perm):
  """The sharding ``y`` needs for ``transpose(y, perm)`` to have ``out_sharding``."""
  sharding = out_sharding.spec if isinstance(out_sharding, NamedSharding) else out_sharding
  entries = list(sharding) + [None] * (len(perm) - len(sharding))
  inner = [None] * len(perm)
  for i, p in enumerate(perm):
    inner[p] = entries[i]
  spec = PartitionSpec(*inner, unreduced=sharding.unreduced, reduced=sharding.reduced)
  return NamedSharding(out_sharding.mesh, spec) if isinstance(out_sharding, NamedSharding) \
      else spec


def typed(aval, sharding):
  """``aval`` with the sharding type ``sharding`` (a canonical NamedSharding)."""
  from purejax._src.sharding_types import type_sharding
  return aval.update(sharding=type_sharding(sharding.mesh, sharding.spec, len(aval.shape)))


def _untyped(x):
  sharding = getattr(getattr(x, "aval", None), "explicit_sharding", None)
  if sharding is None:
    return x
  return put(x, NamedSharding(sharding.mesh, PartitionSpec()))


def put(x, sharding):
  """``x`` typed with ``sharding`` (a canonical NamedSharding)."""
  from purejax._src.reshard import reshard
  from purejax._src.sharding_types import _concrete_meshes
  mesh = _concrete_meshes.get(sharding.mesh, sharding.mesh)
  return reshard(x, NamedSharding(mesh, sharding.spec))


def compute_with(out_sharding, fun, *args):
  """``fun(*args)`` (one array out) with the result typed ``out_sharding``;
  the inputs lose their sharding types first, so no input rule objects."""
  if out_sharding is None:
    return fun(*args)
  args = tree_util.tree_map(_untyped, args)
  out = fun(*args)
  return put(out, canonical(out_sharding, core.get_aval(out).shape))
