"""``pmap``: one instance of a function per device, along a mapped axis.

As in JAX 0.10, ``pmap(f)`` is ``jit(shard_map(_fun))`` over a 1-D mesh of
the first ``axis_size`` devices: ``_fun`` squeezes each device's block of
the mapped axis away, calls ``f`` and puts a size-1 axis back at
``out_axes``; the shard_map then runs it on every device at once (see
purejax/_src/shard_map.py for how, and for what grad/vmap of it do).
"""
import functools

from purejax._src import core
from purejax._src import tree_util
from purejax._src.api import jit
from purejax._src.array import Array, with_sharding
from purejax._src.devices import devices as _all_devices
from purejax._src.mesh import Mesh, NamedSharding, PartitionSpec as P
from purejax._src.vmap import _flat_in_axes, _normalize_axis

_DEFAULT_NAME = "_internal_pmap_axis_name"


def _index_tuple(x):
  return (x,) if isinstance(x, int) else tuple(x)


def _axes_to_spec(name, axis):
  return P() if axis is None else P(*([None] * axis), name)


def _check_axes_leaves(axes, what):
  if not all(type(a) is int for a in tree_util.tree_leaves(axes)):
    raise TypeError(f"pmap {what} must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {axes}.")


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
  """Maps ``fun`` over axis ``in_axes`` of its arguments, one instance per
  device (the first ``axis_size`` devices, or ``devices``), all running at
  once; collectives over ``axis_name`` communicate between them.  The
  outputs are Arrays sharded over those devices (a NamedSharding, as JAX
  0.10 gives).

  Differs from JAX: a pmap traced inside another pmap's (or shard_map's)
  body runs as the equivalent vmap on each outer device (JAX 0.10 refuses
  nested pmaps); an axis larger than the device count raises the
  ValueError older JAX gave (JAX 0.10's error depends on divisibility).
  ``donate_argnums`` is accepted and ignored.
  """
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")
  if devices is not None:
    if not devices:
      raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    devices = tuple(devices)
  name = _DEFAULT_NAME if axis_name is None else axis_name
  static = _index_tuple(static_broadcasted_argnums)
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)
  _check_axes_leaves(in_axes, "in_axes")
  _check_axes_leaves(out_axes, "out_axes")
  cache = {}

  def build(mesh, in_tree, flat_axes, static_vals, n_args):
    """The jitted shard_map for one call signature."""
    in_specs = tuple(_axes_to_spec(name, a) for a in flat_axes)
    out_specs_box = []

    def _fun(*flat_args):
      leaves = [x if a is None else _squeeze(x, a) for x, a in zip(flat_args, flat_axes)]
      dyn_args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
      args, dyn = [], iter(dyn_args)
      for i in range(n_args):
        args.append(static_vals[static.index(i)] if i in static else next(dyn))
      out = fun(*args, **kwargs)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      flat_out_axes = _flat_out_axes(out_axes, out)
      out_specs_box[:] = [out_tree.unflatten(
          [_axes_to_spec(name, a) for a in flat_out_axes]),
          [_axes_to_spec(name, a) for a in flat_out_axes]]
      return out_tree.unflatten([x if a is None else _expand(x, a)
                                 for x, a in zip(out_leaves, flat_out_axes)])

    from purejax._src.shard_map import shard_map

    def mapped(*flat_args):
      # out_specs depend on the output's structure: known once traced.
      return shard_map(_fun, mesh=mesh, in_specs=in_specs, out_specs=lambda: out_specs_box[0],
                       check_vma=False, axis_names=frozenset({name}))(*flat_args)
    mapped.__name__ = "_fun"
    return jit(mapped), out_specs_box

  @functools.wraps(fun)
  def pmapped(*args, **kwargs):
    if static and max(static) >= len(args):
      raise ValueError(
          f"pmapped function has static_broadcasted_argnums={static} but was called with "
          f"only {len(args)} positional argument{'s' if len(args) > 1 else ''}. All static "
          "broadcasted arguments must be passed positionally.")
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
    static_vals = tuple(args[i] for i in static)
    dyn_in_axes = (tuple(in_axes[i] for i in range(len(args)) if i not in static)
                   if isinstance(in_axes, tuple) and static else in_axes)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    flat_axes = tuple(_normalize_axis(x, a) for x, a in
                      zip(leaves, _flat_in_axes(dyn_in_axes, dyn_args, kwargs)))
    size = next((core.get_aval(x).shape[a] for x, a in zip(leaves, flat_axes)
                 if a is not None), None)
    if size is None:
      raise ValueError("pmap requires at least one argument with a mapped axis.")
    if axis_size is not None and axis_size != size:
      raise ValueError(f"Specified axis_size {axis_size} doesn't match received "
                       f"axis_size {size}.")
    available = devices if devices is not None else tuple(_all_devices(backend))
    if size > len(available):
      raise ValueError(f"compiling computation that requires {size} logical devices, but "
                       f"only {len(available)} XLA devices are available "
                       f"(num_replicas={size})")
    mesh = Mesh(list(available[:size]), (name,))
    key = (mesh, in_tree, flat_axes, static_vals, len(args))
    entry = cache.get(key)
    if entry is None:
      entry = cache[key] = build(mesh, in_tree, flat_axes, static_vals, len(args))
    jitted, out_specs_box = entry
    out = jitted(*leaves)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    return out_tree.unflatten(
        [with_sharding(o, NamedSharding(mesh, s)) if type(o) is Array else o
         for o, s in zip(out_leaves, out_specs_box[1])])

  return pmapped


def _flat_out_axes(out_axes, out):
  is_none = lambda x: x is None
  errors = tree_util.prefix_errors(out_axes, out, is_leaf=is_none)
  if errors:
    raise errors[0]("pmap out_axes")
  flat = tree_util.broadcast_prefix(out_axes, out, is_leaf=is_none)
  return [None if a is None else a % (core.get_aval(x).ndim + 1)
          for a, x in zip(flat, tree_util.tree_leaves(out))]


def _squeeze(x, axis):
  from purejax._src.lax.structural import squeeze
  return squeeze(x, (axis,))


def _expand(x, axis):
  from purejax._src.lax.structural import expand_dims
  return expand_dims(x, (axis,))
