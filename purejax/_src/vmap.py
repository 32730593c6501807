"""``vmap``: the batching interpreter's public face."""
import collections
import inspect

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.array import host_float0, wrap_numpy
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import BatchTrace, BatchTracer, not_mapped


_TUPLE_OF_ENTRIES = ("vmap in_axes must be an int, None, or a tuple of entries "
                     "corresponding to the positional arguments passed to the function, ")


def _check_axis_leaves(spec, where):
  # Exactly int: bools and NumPy integers are refused, as by JAX.
  if not all(type(leaf) is int for leaf in tree_util.tree_leaves(spec)):
    raise TypeError(f"vmap {where} must be an int, None, or (nested) container with "
                    f"those types as leaves, but got {spec}.")


class PytreeLeaf:
  """Stands for each leaf of a value in prefix-mismatch messages."""

  def __repr__(self):
    return "pytree leaf"


def _prefix_error(where, spec, value):
  """JAX's message for an axis spec that is not a tree prefix of ``value``."""
  leaves, tree = tree_util.tree_flatten(value)
  dummy = tree_util.tree_unflatten(tree, [PytreeLeaf() for _ in leaves])
  errors = tree_util.prefix_errors(spec, dummy, is_leaf=lambda x: x is None)
  details = "\n  ".join(e(f"vmap {where}").args[0] for e in errors)
  return ValueError(f"vmap {where} specification must be a tree prefix of the "
                    f"corresponding value; \n  Mismatch details ({len(errors)} found):"
                    f"\n  {details}")


def _flat_axes(where, spec, value):
  """One axis (or None) per leaf of ``value``, ``spec`` being a tree prefix."""
  try:
    return tree_util.broadcast_prefix(spec, value, is_leaf=lambda x: x is None)
  except ValueError:
    raise _prefix_error(where, spec, value) from None


def _flat_in_axes(in_axes, args, kwargs):
  """One axis (or None) per flat leaf of (args, kwargs); kwargs map along 0."""
  if isinstance(in_axes, tuple) and len(in_axes) != len(args):
    raise ValueError(_TUPLE_OF_ENTRIES + f"but got len(in_axes)={len(in_axes)}, "
                     f"len(args)={len(args)}")
  spec = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
  return _flat_axes("in_axes", spec, tuple(args)) + [0] * len(tree_util.tree_leaves(kwargs))


def _leaf_names(fun, args, kwargs):
  """How the size-mismatch message names each leaf: by the parameter it was
  passed to (when the signature accepts the call), else by its path."""
  try:
    sig = inspect.signature(fun)
    sig.bind(*args, **kwargs)
    params = list(sig.parameters)
  except (TypeError, ValueError):
    params = None
  names = []
  for path, _ in tree_util.tree_flatten_with_path(tuple(args))[0]:
    i = path[0].idx
    if params is None or i >= len(params):
      names.append(f"args{tree_util.keystr(path)}")
    else:
      names.append(f"argument {params[i]}{tree_util.keystr(path[1:])}")
  names += [f"kwargs{tree_util.keystr(path)}"
            for path, _ in tree_util.tree_flatten_with_path(kwargs)[0]]
  return names


def _normalize_axis(leaf, axis):
  if axis is None:
    return None
  aval = _arg_aval(leaf)
  if not -aval.ndim <= axis < aval.ndim:
    raise ValueError(f"vmap was requested to map its argument along axis {axis}, which "
                     f"implies that its rank should be at least "
                     f"{axis + 1 if axis >= 0 else -axis}, but is only {aval.ndim} (its "
                     f"shape is {aval.shape})")
  return axis % aval.ndim


def _arg_aval(x):
  try:
    return core.get_aval(x)
  except TypeError:
    if isinstance(x, np.ndarray):   # JAX names the dtype of a NumPy array
      raise
    raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type") from None


def _axis_size(fun, args, kwargs, leaves, axes, user_axes, axis_size):
  if not leaves and axis_size is None:
    raise ValueError("vmap wrapped function must be passed at least one argument "
                     "containing an array or axis_size must be specified, got empty "
                     f"*args={tuple(args)} and **kwargs={kwargs}")
  sizes = [None if a is None else core.get_aval(x).shape[a] for x, a in zip(leaves, axes)]
  distinct = {s for s in sizes if s is not None} | ({axis_size} - {None})
  if len(distinct) == 1:
    return distinct.pop()
  if not distinct:
    raise ValueError("vmap must have at least one non-None value in in_axes or "
                     "axis_size must be specified")
  # Most common size first, each with its first example (axes as the user wrote them).
  names = _leaf_names(fun, args, kwargs)
  counts = collections.Counter(s for s in sizes if s is not None)
  lines = [f"  * the `axis_size` argument was {axis_size};\n"] if axis_size is not None else []
  for rank, (size, count) in enumerate(counts.most_common()):
    i = sizes.index(size)
    example = (f"axis {user_axes[i]} of {names[i]} of type "
               f"{core.get_aval(leaves[i]).str_short()}")
    if count == 1:
      lines.append(f"  * one axis had size {size}: {example};\n")
    else:
      some = "most" if rank == 0 else "some"
      lines.append(f"  * {some} axes ({count} of them) had size {size}, e.g. {example};\n")
  raise ValueError(("vmap got inconsistent sizes for array axes to be mapped:\n"
                    + "".join(lines))[:-2])


def _out_value(trace, out, spec, axis_size, path):
  val, dim = trace.lift(out)
  if spec is None:
    if dim is not not_mapped:
      raise ValueError(f"at vmap out_axes{tree_util.keystr(path)}, got axis spec None "
                       f"but output was batched on axis {dim}")
    return val
  ndim = core.get_aval(val).ndim + (dim is not_mapped)
  if not -ndim <= spec < ndim:
    raise ValueError(f"axis {spec} is out of bounds for array of dimension {ndim}")
  return batching.matchaxis(val, dim, spec % ndim, axis_size)


def _as_array(x):
  """An output that is an argument passed through as a NumPy array becomes
  an Array of its own (a copy: the caller's array stays writeable); a float0
  value stays on the host, as in JAX."""
  if isinstance(x, np.ndarray) and x.dtype != dtypes.float0:
    aval = core.get_aval(x)
    return wrap_numpy(np.array(x, dtype=aval.dtype), aval)
  return host_float0(x)


def _check_outputs(leaves):
  for x in leaves:
    if not core.is_array_like(x):
      raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not "
                      "a valid JAX type")


def _check_batch_splits(leaves, axes, spmd_axis_name):
  """Explicit sharding: the mapped axes of all inputs must be split alike
  (JAX's ValueError), and not over other axes than ``spmd_axis_name``."""
  entries, typed = [], False
  for x, a in zip(leaves, axes):
    if a is None:
      continue
    sharding = getattr(core.get_aval(x), "explicit_sharding", None)
    typed = typed or sharding is not None
    entries.append(None if sharding is None else tuple(sharding.spec)[a])
  if not typed:
    return
  for e in entries[1:]:
    if e != entries[0]:
      raise ValueError("Mapped away dimension of inputs passed to vmap should be sharded "
                       f"the same. Got inconsistent axis specs: {entries[0]} vs {e}")
  entry = entries[0]
  if spmd_axis_name is not None and entry is not None:
    spmd = (spmd_axis_name,) if isinstance(spmd_axis_name, str) else tuple(spmd_axis_name)
    names = (entry,) if isinstance(entry, str) else tuple(entry)
    if spmd != names:
      raise ValueError(
          "Only one of spmd_axis_name or arrays sharded on `Explicit` mesh axis type is "
          f"allowed. Got spmd_axis_name={spmd} and arrays sharded on "
          f"explicit_mesh_axis={names}")


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None):
  """Vectorizes ``fun`` along the axes ``in_axes`` of its arguments."""
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)   # lists of per-argument axes are accepted as tuples
  if not (in_axes is None or type(in_axes) in (int, tuple)):
    raise TypeError(_TUPLE_OF_ENTRIES + f"but got {in_axes}.")
  _check_axis_leaves(in_axes, "in_axes")
  _check_axis_leaves(out_axes, "out_axes")

  @source_info.wraps(fun)
  def vmapped(*args, **kwargs):
    axes = _flat_in_axes(in_axes, args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    user_axes = axes
    axes = [_normalize_axis(x, a) for x, a in zip(leaves, axes)]
    size = _axis_size(fun, args, kwargs, leaves, axes, user_axes, axis_size)
    _check_batch_splits(leaves, axes, spmd_axis_name)
    trace = BatchTrace(core.current_trace(), size, axis_name, spmd_axis_name)
    tracers = [BatchTracer(trace, x, a) if a is not None else x for x, a in zip(leaves, axes)]
    try:
      with core.set_current_trace(trace):
        call_args, call_kwargs = tree_util.tree_unflatten(in_tree, tracers)
        out = fun(*call_args, **call_kwargs)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      _check_outputs(out_leaves)
      out_spec = _flat_axes("out_axes", out_axes, out)
      paths = [p for p, _ in tree_util.tree_flatten_with_path(out)[0]]
      with core.set_current_trace(trace.parent):
        outs = [_as_array(_out_value(trace, o, s, size, p))
                for o, s, p in zip(out_leaves, out_spec, paths)]
    finally:
      trace.invalidate()
    return tree_util.tree_unflatten(out_tree, outs)

  return vmapped
