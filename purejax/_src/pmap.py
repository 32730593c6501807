"""``pmap``: one instance of a function per device, along a mapped axis.

As in JAX 0.10, ``pmap(f)`` is ``jit(shard_map(_fun))`` over a 1-D mesh of
the first ``axis_size`` devices: ``_fun`` squeezes each device's block of
the mapped axis away, calls ``f`` and puts a size-1 axis back at
``out_axes``; the shard_map then runs it on every device at once (see
purejax/_src/shard_map.py for how, and for what grad/vmap of it do).

Across MPI processes (after ``purejax.distributed.initialize()``), as in
JAX, each process passes its local part of the mapped axis (one entry per
local device), the mesh holds every process's devices (process-major, so
axis_index and psum are global) and each process gets back its local part
of the outputs.  The shard_map is traced on the global shapes but run
directly on the local data (``_run_across``), without a global array.
"""

from purejax._src import core
from purejax._src import devices as _devices
from purejax._src import pjit
from purejax._src import source_info
from purejax._src import spmd
from purejax._src import tree_util
from purejax._src.api import jit
from purejax._src.array import Array, with_sharding, wrap_numpy
from purejax._src.devices import devices as _all_devices
from purejax._src.mesh import Mesh, NamedSharding, PartitionSpec as P
from purejax._src.jaxpr import Literal
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
  ``donate_argnums`` is accepted and ignored.  ``pmap(f).lower(*args)``
  gives the Lowered stage, as in JAX.  Across processes a wrong
  local axis size raises a ValueError saying so (JAX fails obscurely), and
  the other processes raise ProcessError instead of waiting; ``axis_size``
  there is the global size; a pmap traced inside jit uses the local
  devices only (as JAX does).
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
    return jit(mapped), out_specs_box, mapped, {}   # (last: _run_across's traces)

  def prepare(args, kwargs):
    """The call's jitted shard_map (built once per signature), its flat
    dynamic arguments, and how it runs across processes (None: here)."""
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
    if axis_size is not None and axis_size != size and _devices.process_count(backend) == 1:
      raise ValueError(f"Specified axis_size {axis_size} doesn't match received "
                       f"axis_size {size}.")
    across = _devices.process_count(backend) > 1
    eager = core.current_trace() is core.eval_trace and spmd.current() is None
    if across and not eager:   # traced in a multi-process run: local devices (as JAX)
      available = devices if devices is not None else tuple(_devices.local_devices())
      across = False
    else:
      available = devices if devices is not None else tuple(_all_devices(backend))
    if across:
      global_size = size * _devices.process_count(backend) if axis_size is None else axis_size
      try:
        if devices is None:
          _check_local_size(available, size)
        mesh = _global_mesh(name, available, global_size)
        _check_local_size(list(mesh.devices.flat), size)
      except ValueError as e:   # the other processes are entering the run: tell them
        from purejax._src.mpi_comm import report_failure
        report_failure(e)
        raise
    else:
      global_size = size
      mesh = _global_mesh(name, available, size)
    key = (mesh, in_tree, flat_axes, static_vals, len(args))
    entry = cache.get(key)
    if entry is None:
      entry = cache[key] = build(mesh, in_tree, flat_axes, static_vals, len(args))
    across = (flat_axes, global_size // size) if across else None
    return entry, leaves, mesh, across

  @source_info.wraps(fun)
  def pmapped(*args, **kwargs):
    entry, leaves, mesh, across = prepare(args, kwargs)
    jitted, out_specs_box, _, _ = entry
    if across is not None:
      return _run_across(entry, mesh, leaves, *across)
    out = jitted(*leaves)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    return out_tree.unflatten(
        [with_sharding(o, NamedSharding(mesh, s)) if type(o) is Array else o
         for o, s in zip(out_leaves, out_specs_box[1])])

  def lower(*args, **kwargs):
    """As JAX's: the jitted shard_map lowered for these arguments; its
    compiled form takes the dynamic arguments (its outputs are not laid out
    over the devices, as in JAX)."""
    entry, leaves, _, across = prepare(args, kwargs)
    if across is not None:
      raise NotImplementedError("pmap(...).lower across several processes is not "
                                "supported by purejax")
    return entry[0].trace(*leaves).lower()

  pmapped.lower = lower
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


# -- across processes ----------------------------------------------------------------------

def _global_mesh(name, available, size):
  if size > len(available):
    raise ValueError(f"compiling computation that requires {size} logical devices, "
                     f"but only {len(available)} XLA devices are available "
                     f"(num_replicas={size})")
  return Mesh(list(available[:size]), (name,))


def _check_local_size(devices, size):
  """Each process passes one entry of the mapped axis per local device of the pmap."""
  me = _devices.process_index()
  mine = [d for d in devices if getattr(d, "process_index", 0) == me]
  if len(mine) != size:
    raise ValueError(
        f"pmap across {_devices.process_count()} processes: each process passes its own "
        "part of the mapped axis, one entry per local device of the pmap, but process "
        f"{me} passed a mapped axis of size {size} while {len(mine)} of the pmap's "
        f"{len(devices)} devices are local to it (jax.local_device_count() = "
        f"{_devices.local_device_count()}).")


def _run_across(entry, mesh, leaves, flat_axes, scale):
  """One multi-process pmap call: ``leaves`` are this process's parts.  The
  shard_map is traced on the global shapes (mapped axes ``scale`` times
  longer) and run on this process's slabs (shard_map.run_process_local);
  the outputs are this process's slabs, laid out on its local devices."""
  from purejax._src.shard_map import run_process_local, shard_map_p
  _, out_specs_box, mapped, traces = entry
  avals = [core.get_aval(x) for x in leaves]
  key = tuple(avals)
  traced = traces.get(key)
  if traced is None:
    global_avals = [a if ax is None else a.update(
        shape=a.shape[:ax] + (a.shape[ax] * scale,) + a.shape[ax + 1:])
        for a, ax in zip(avals, flat_axes)]
    tree_box = []

    def flat(*xs):
      out_leaves, tree = tree_util.tree_flatten(mapped(*xs))
      tree_box.append(tree)
      return out_leaves
    closed, consts = pjit.trace_closed(flat, global_avals)
    traced = traces[key] = (closed, consts, tree_box[0])
  closed, consts, out_tree = traced
  env = dict(zip(closed.jaxpr.invars, list(consts) + list(leaves)))
  read = lambda v: v.val if isinstance(v, Literal) else env[v]
  for eqn in closed.jaxpr.eqns:
    if eqn.primitive is not shard_map_p:
      raise ValueError(f"pmap across processes ran into {eqn.primitive} outside its "
                       "shard_map; only the shard_map itself can run on local data")
    outs = run_process_local([read(v) for v in eqn.invars], eqn.params)
    env.update(zip(eqn.outvars, outs))
  local_mesh = Mesh([d for d in mesh.devices.flat
                     if getattr(d, "process_index", 0) == _devices.process_index()],
                    mesh.axis_names)
  outs = []
  for v, spec in zip(closed.jaxpr.outvars, out_specs_box[1]):
    value = read(v)
    out = wrap_numpy(value, v.aval.update(shape=value.shape))
    outs.append(with_sharding(out, NamedSharding(local_mesh, spec)))
  return out_tree.unflatten(outs)
