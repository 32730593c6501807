"""``vmap``: the batching interpreter's public face."""
import functools
import inspect

from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import BatchTrace, BatchTracer, not_mapped


def _check_axis_spec(spec, where):
  for leaf in tree_util.tree_leaves(spec):
    if not isinstance(leaf, int):
      raise TypeError(f"vmap {where} must be an int, None, or a tuple of entries "
                      "corresponding to the positional arguments passed to the function, "
                      f"but got {spec}.")


def _arg_names(fun, args):
  try:
    params = [p.name for p in inspect.signature(fun).parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  except (TypeError, ValueError):
    params = []
  return [params[i] if i < len(params) else f"args[{i}]" for i in range(len(args))]


def _flat_in_axes(fun, in_axes, args, kwargs):
  """One axis (or None) per flat leaf of (args, kwargs); kwargs map along 0."""
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)
  _check_axis_spec(in_axes, "in_axes")
  if isinstance(in_axes, tuple) and len(in_axes) != len(args):
    raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                     "corresponding to the positional arguments passed to the function, "
                     f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
  spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
  axes, names = [], []
  for name, arg, axis in zip(_arg_names(fun, args), args, spec):
    try:
      leaf_axes = tree_util.broadcast_prefix(axis, arg, is_leaf=lambda x: x is None)
    except ValueError as err:
      raise ValueError(f"vmap in_axes specification must be a tree prefix of the "
                       f"corresponding value, got specification {axis} for value tree "
                       f"{tree_util.tree_structure(arg)}.") from err
    axes += leaf_axes
    names += [name + tree_util.keystr(path)
              for path, _ in tree_util.tree_flatten_with_path(arg)[0]]
  for k, v in sorted(kwargs.items()):
    leaves = tree_util.tree_leaves(v)
    axes += [0] * len(leaves)
    names += [k] * len(leaves)
  return axes, names


def _normalize_axis(leaf, axis):
  if axis is None:
    return None
  aval = core.get_aval(leaf)
  if not -aval.ndim <= axis < aval.ndim:
    raise ValueError(f"vmap was requested to map its argument along axis {axis}, which "
                     f"implies that its rank should be at least "
                     f"{axis + 1 if axis >= 0 else -axis}, but is only {aval.ndim} (its "
                     f"shape is {aval.shape})")
  return axis % aval.ndim


def _axis_size(leaves, axes, names, axis_size):
  sizes = {core.get_aval(x).shape[a] for x, a in zip(leaves, axes) if a is not None}
  if axis_size is not None:
    sizes.add(axis_size)
  if not sizes:
    raise ValueError("vmap must have at least one non-None value in in_axes or "
                     "axis_size must be specified")
  if len(sizes) > 1:
    lines = [f"  * one axis had size {core.get_aval(x).shape[a]}: axis {a} of argument "
             f"{n} of type {core.get_aval(x).str_short()}"
             for x, a, n in zip(leaves, axes, names) if a is not None]
    raise ValueError("vmap got inconsistent sizes for array axes to be mapped:\n"
                     + ";\n".join(lines))
  return sizes.pop()


def _out_value(trace, out, spec, axis_size):
  val, dim = trace.lift(out)
  if spec is None:
    if dim is not not_mapped:
      raise ValueError(f"at vmap out_axes, got axis spec None but output was batched on "
                       f"axis {dim}")
    return val
  ndim = core.get_aval(val).ndim + (dim is not_mapped)
  if not -ndim <= spec < ndim:
    raise ValueError(f"axis {spec} is out of bounds for array of dimension {ndim - 1}")
  return batching.matchaxis(val, dim, spec % ndim, axis_size)


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
  """Vectorizes ``fun`` along the axes ``in_axes`` of its arguments."""
  if not callable(fun):
    raise TypeError(f"vmap requires a callable, got {fun}")
  if isinstance(out_axes, list):
    out_axes = tuple(out_axes)
  _check_axis_spec(out_axes, "out_axes")

  @functools.wraps(fun)
  def vmapped(*args, **kwargs):
    axes, names = _flat_in_axes(fun, in_axes, args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    axes = [_normalize_axis(x, a) for x, a in zip(leaves, axes)]
    size = _axis_size(leaves, axes, names, axis_size)
    trace = BatchTrace(core.current_trace(), size, axis_name, spmd_axis_name)
    tracers = [BatchTracer(trace, x, a) if a is not None else x for x, a in zip(leaves, axes)]
    try:
      with core.set_current_trace(trace):
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, tracers)
        out = fun(*call_args, **call_kwargs)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      try:
        out_spec = tree_util.broadcast_prefix(out_axes, out, is_leaf=lambda x: x is None)
      except ValueError as err:
        raise ValueError(f"vmap out_axes specification must be a tree prefix of the "
                         f"corresponding value, got specification {out_axes} for value "
                         f"tree {out_tree}.") from err
      with core.set_current_trace(trace.parent):
        outs = [_out_value(trace, o, s, size) for o, s in zip(out_leaves, out_spec)]
    finally:
      trace.invalidate()
    return tree_util.tree_unflatten(out_tree, outs)

  return vmapped
