"""``pmap``: one instance of a function per device, along a mapped axis.

purejax has one device (the host CPU), so a mapped axis may have size 1 at
most; the instances run as ``jit(vmap(fun))``, and collectives over
``axis_name`` are vmap's.
"""
import functools

from purejax._src import tree_util
from purejax._src.api import jit
from purejax._src.devices import device_count
from purejax._src.vmap import _axis_size, _flat_in_axes, _normalize_axis, vmap


def pmap(fun=None, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=(),
         global_arg_shapes=None):
  """Maps ``fun`` over axis ``in_axes`` of its arguments, one instance per
  device; ``static_broadcasted_argnums`` are hashable values every instance sees."""
  if fun is None:
    return functools.partial(pmap, axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                             static_broadcasted_argnums=static_broadcasted_argnums,
                             axis_size=axis_size)
  static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
            else tuple(static_broadcasted_argnums))

  def dynamic(n_args):
    dyn = [i for i in range(n_args) if i not in static]
    return dyn, tuple(in_axes[i] for i in dyn) if isinstance(in_axes, tuple) else in_axes

  def run(n_args, static_vals, *dyn_args, **kwargs):
    dyn, dyn_axes = dynamic(n_args)

    def instance(*dyn_vals, **kw):
      args = dict(zip([i for i in range(n_args) if i in static], static_vals))
      args.update(zip(dyn, dyn_vals))
      return fun(*(args[i] for i in range(n_args)), **kw)
    return vmap(instance, dyn_axes, out_axes, axis_name=axis_name,
                axis_size=axis_size)(*dyn_args, **kwargs)
  compiled = jit(run, static_argnums=(0, 1))

  @functools.wraps(fun)
  def pmapped(*args, **kwargs):
    dyn, dyn_axes = dynamic(len(args))
    dyn_args = tuple(args[i] for i in dyn)
    leaves = tree_util.tree_leaves((dyn_args, kwargs))
    axes = [_normalize_axis(x, a)
            for x, a in zip(leaves, _flat_in_axes(dyn_axes, dyn_args, kwargs))]
    size = _axis_size(fun, dyn_args, kwargs, leaves, axes, axes, axis_size)
    if size > device_count():
      raise ValueError(f"compiling computation that requires {size} logical devices, but "
                       f"only {device_count()} XLA devices are available (num_replicas={size})")
    static_vals = tuple(args[i] for i in range(len(args)) if i in static)
    return compiled(len(args), static_vals, *dyn_args, **kwargs)

  return pmapped
