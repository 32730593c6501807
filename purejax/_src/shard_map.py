"""``shard_map``: a function run once per device of a mesh, on its blocks.

``shard_map(f, mesh=, in_specs=, out_specs=)`` traces ``f`` on one
device's blocks (each input split along the mesh axes its PartitionSpec
names, replicated along the others) into the primitive ``shard_map_p``.
Called eagerly on concrete inputs, the body instead runs once on all the
devices' blocks, as JAX's does (shard_map_eager.py: ``print`` shows each
device's block).  Under ``jit`` (as a host step) its impl splits the NumPy
inputs into blocks, runs the body's executable on every device at once
(``spmd.run``; the collectives inside communicate through the run's
Communicator) and assembles the outputs per ``out_specs``.

Transformations of a shard_map (other than JVP, whose rule is a shard_map
of the body's JVP) evaluate the *emulation*: the same program written as
nested ``vmap(..., axis_name=<mesh axis>)`` over the blocks, on the current
trace.  It computes the same numbers on one device.  A shard_map reached
while tracing another one's body (nested pmap) is emulated the same way.
"""
import contextlib
import functools
import math

import numpy as np

from purejax._src import block_views
from purejax._src import core
from purejax._src import pjit
from purejax._src import shard_map_eager
from purejax._src import source_info
from purejax._src import spmd
from purejax._src import tree_util
from purejax._src import vma
from purejax._src.array import Array, with_sharding
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.batching import not_mapped
from purejax._src.jaxpr import Var, eval_jaxpr
from purejax._src.mesh import Mesh, NamedSharding, PartitionSpec, _entry_names

P = PartitionSpec


class _InferSpecs:
  """The default ``in_specs``: each input's own NamedSharding spec (else P())."""

  def __repr__(self):
    return "jax.sharding.Infer"


Infer = _InferSpecs()


# -- tracing: the mesh axes bound while a body is traced -------------------------------

class _ManualAxis(core.Trace):
  """A frame in the trace chain that binds one mesh axis name (so
  ``core.axis_env`` sees it and collectives over it type-check).  It holds
  no values of its own: primitives bound on it go to its parent."""

  def __init__(self, parent, name, size):
    super().__init__(parent)
    self.axis_name, self.axis_size = name, size

  def process_primitive(self, primitive, args, params):
    with core.set_current_trace(self.parent):
      return primitive.bind(*args, **params)


@contextlib.contextmanager
def manual_axes(names, sizes):
  """Binds mesh axes ``names`` (of ``sizes``) around what is traced inside."""
  trace = core.current_trace()
  for name, size in zip(names, sizes):
    trace = _ManualAxis(trace, name, size)
  with core.set_current_trace(trace):
    yield


def _in_manual_context():
  trace = core.current_trace()
  while trace is not None:
    if isinstance(trace, _ManualAxis):
      return True
    trace = trace.parent
  return False


# -- specs -----------------------------------------------------------------------------

def _spec_names(spec, ndim):
  """Per dimension, the mesh axes splitting it."""
  entries = list(spec) + [None] * (ndim - len(spec))
  return [_entry_names(e) for e in entries]


def _splits(names, sizes):
  return math.prod(sizes[n] for n in names)


def _manual(params):
  mesh, manual = params["mesh"], params["newly_manual_axes"]
  names = tuple(n for n in mesh.axis_names if n in manual)
  return names, tuple(mesh.shape[n] for n in names)


def _global_shape(block_shape, spec, sizes):
  return tuple(d * _splits(names, sizes)
               for d, names in zip(block_shape, _spec_names(spec, len(block_shape))))


def _block_shape(shape, spec, sizes):
  return tuple(d // _splits(names, sizes)
               for d, names in zip(shape, _spec_names(spec, len(shape))))


def _block_index(shape, spec, sizes, where):
  """The slices of the block at mesh coordinates ``where`` (name -> index)."""
  index = []
  for d, names in zip(shape, _spec_names(spec, len(shape))):
    block = 0
    for n in names:     # row-major over the entry's names
      block = block * sizes[n] + where[n]
    step = d // _splits(names, sizes)
    index.append(slice(block * step, (block + 1) * step))
  return tuple(index)


# -- the primitive -----------------------------------------------------------------------

shard_map_p = core.Primitive("shard_map", multiple_results=True)


@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, check_vma,
                             newly_manual_axes):
  sizes = mesh.shape
  return [a.update(shape=_global_shape(a.shape, s, sizes))
          for a, s in zip(jaxpr.out_avals, out_specs)]


class _SortedSet(frozenset):
  def __repr__(self):
    return "frozenset({" + ", ".join(repr(n) for n in sorted(self, key=str)) + "})"

  __str__ = __repr__


shard_map_p.pp_params = lambda params: [
    ("check_vma", params["check_vma"]), ("in_specs", params["in_specs"]),
    ("jaxpr", params["jaxpr"]), ("mesh", params["mesh"]),
    ("newly_manual_axes", _SortedSet(params["newly_manual_axes"])),
    ("out_specs", params["out_specs"])]


def _body_names(params):
  own = set(params["mesh"].axis_names)
  return batching._named_axes_of_jaxpr(params["jaxpr"]) - own


# The names the body communicates over that the shard_map does not bind itself.
shard_map_p.axis_names = _body_names
shard_map_p.sub_jaxpr_axes = lambda params: manual_axes(*_manual(params))


def body_num_threads(num_devices):
  """Compiled kernels' threads per device: the cores shared among devices."""
  from purejax._src.config import thread_count
  return max(1, thread_count() // num_devices)


@shard_map_p.def_impl
def _shard_map_impl(*args, **params):
  if spmd.current() is not None:    # inside a device of another run: one device
    return [np.asarray(o) for o in emulate(*args, **params)]
  return _run_blocks([np.asarray(x) for x in args], params, local_data=False)


def run_process_local(args, params):
  """Runs shard_map ``params`` on process-local data (a multi-process
  pmap): each input is this process's slab of the global value (see
  purejax/_src/process_local.py), and so is each output."""
  return _run_blocks([np.asarray(x) for x in args], params, local_data=True)


def _run_blocks(args, params, local_data):
  """Runs the body on this process's devices; ``args`` are the global
  values, or (``local_data``) this process's slabs of them.  Each device
  gets views of its blocks (never copies: a replicated input is the same
  array on every device)."""
  from purejax._src import process_local
  mesh, in_specs, out_specs = params["mesh"], params["in_specs"], params["out_specs"]
  names, axis_sizes = _manual(params)
  comm = spmd.make_communicator(names, axis_sizes, _run_devices(mesh, names))
  local = tuple(comm.local_positions())
  body_avals = params["jaxpr"].in_avals
  per_device = [[] for _ in local]
  for j, (x, s, a) in enumerate(zip(args, in_specs, body_avals)):
    shape = _global_shape(a.shape, s, mesh.shape)
    if local_data:
      box = process_local.local_box(shape, s, mesh, names, axis_sizes, local, "pmap")
      if x.shape != tuple(b.stop - b.start for b in box):
        raise ValueError(f"pmap: this process's part of argument {j} should have shape "
                         f"{[b.stop - b.start for b in box]} (global shape {list(shape)}), "
                         f"got {list(x.shape)}")
      indexes = [process_local.shift(index, box)
                 for index in _position_indexes(shape, s, mesh, names, axis_sizes, local)]
    elif not _spec_names_any(s):
      indexes = [None] * len(local)
    else:
      indexes = _position_indexes(shape, s, mesh, names, axis_sizes, local)
    for k, index in enumerate(indexes):
      per_device[k].append(x if index is None else x[index])
  body, in_shapes, out_shapes = block_views.without_edge_axes(params["jaxpr"])
  exe = pjit.executable_for(body, num_threads=body_num_threads(len(local)))

  def device(pos, *blocks):
    outs = exe(*[b if s is None else b.reshape(s) for b, s in zip(blocks, in_shapes)])
    return [o if s is None else np.reshape(o, s) for o, s in zip(outs, out_shapes)]
  results = dict(zip(local, spmd.run(comm, device, per_device)))
  out_avals = _shard_map_abstract_eval(*body_avals, **params)
  outs = [(a.shape, s, mesh, names, axis_sizes) for a, s in zip(out_avals, out_specs)]
  if local_data:
    boxes = [process_local.local_box(*o, local, "pmap output") for o in outs]
    remote = {}
  else:
    boxes = [None] * len(outs)
    remote = process_local.gather_missing(comm, results, outs)
  return [_assemble(results, i, aval, spec, mesh, names, axis_sizes, box, remote)
          for i, (aval, spec, box) in enumerate(zip(out_avals, out_specs, boxes))]


def _spec_names_any(spec):
  return any(_entry_names(e) for e in spec)


@functools.lru_cache(maxsize=4096)   # read for every input of every run
def _position_indexes(shape, spec, mesh, names, axis_sizes, positions):
  """The slices of the block of each of ``positions``."""
  return tuple(_block_index(shape, spec, mesh.shape, _where(mesh, names, axis_sizes, pos))
               for pos in positions)


def _run_devices(mesh, names):
  """The devices of the run, row-major over the manual axes (the others at 0)."""
  axes = [mesh.axis_names.index(n) for n in names]
  index = tuple(slice(None) if i in axes else 0 for i in range(len(mesh.axis_names)))
  sub = mesh.devices[index]
  order = sorted(range(len(axes)), key=lambda k: axes[k])   # mesh order is names' order
  return list(np.transpose(sub, order).flat) if sub.ndim else [sub[()]]


def _where(mesh, names, axis_sizes, pos):
  where = {n: 0 for n in mesh.axis_names}
  where.update(zip(names, (int(c) for c in np.unravel_index(pos, axis_sizes))))
  return where


def _assemble(results, i, aval, spec, mesh, names, axis_sizes, box=None, remote=None):
  """Output ``i``'s global value (or its slab ``box``): each block at its
  place, from a local device holding it (along the manual axes ``spec``
  does not name: the lowest such position) else from ``remote`` (blocks
  gathered from other processes, keyed by (i, lowest position)).  When the
  blocks already lie in one buffer at the right places (a psum's result,
  shared by the devices; blocks of an input passed through) the value is
  a read-only view of it instead of a copy."""
  from purejax._src import process_local
  box = box or tuple(slice(0, d) for d in aval.shape)
  placed = []
  for index, positions in process_local.blocks(aval.shape, spec, mesh, names, axis_sizes):
    if not process_local.inside(index, box):
      continue
    pos = next((p for p in positions if p in results), None)
    block = results[pos][i] if pos is not None else remote[(i, positions[0])]
    placed.append((process_local.shift(index, box), block))
  shape = tuple(b.stop - b.start for b in box)
  view = block_views.as_view(placed, shape, aval.dtype)
  if view is not None:
    return view
  out = np.empty(shape, aval.dtype)
  for index, block in placed:
    out[index] = block
  return out


# -- the emulation: nested vmaps over the mesh axes -------------------------------------

def emulate(*args, jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes):
  """The shard_map as nested ``vmap`` over its manual mesh axes, on the
  current trace (one device): each input gets one leading axis per mesh
  axis that splits it, in mesh order."""
  from purejax._src.lax import structural
  from purejax._src.vmap import vmap
  params = dict(mesh=mesh, newly_manual_axes=newly_manual_axes)
  names, axis_sizes = _manual(params)
  sizes = mesh.shape
  xs, mapped = [], []
  for x, spec in zip(args, in_specs):
    split_shape, perm, split_by = split_layout(core.get_aval(x).shape, spec, names, sizes)
    if split_by:
      x = structural.reshape(x, split_shape)
      if perm != tuple(range(len(perm))):
        x = structural.transpose(x, perm)
    xs.append(x)
    mapped.append(set(split_by))

  def level(j, *vals):
    if j == len(names):
      return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *vals)
    in_axes = tuple(0 if names[j] in m else None for m in mapped)
    return vmap(functools.partial(level, j + 1), in_axes=in_axes, out_axes=0,
                axis_name=names[j], axis_size=axis_sizes[j])(*vals)

  outs = level(0, *xs)
  return [_emulated_out(o, spec, names, sizes) for o, spec in zip(outs, out_specs)]


def split_layout(shape, spec, names, sizes):
  """How a global value of ``shape`` becomes its stacked blocks: reshaped
  to ``split_shape`` then transposed by ``perm``, it has one leading axis
  per mesh axis of ``split_by`` (those of ``names`` that split it, in that
  order) followed by the block."""
  split_shape, where, block_axes = [], {}, []
  for d, ns in zip(shape, _spec_names(spec, len(shape))):
    for n in ns:
      where[n] = len(split_shape)
      split_shape.append(sizes[n])
    block_axes.append(len(split_shape))
    split_shape.append(d // _splits(ns, sizes))
  split_by = tuple(n for n in names if n in where)
  perm = tuple(where[n] for n in split_by) + tuple(block_axes)
  return tuple(split_shape), perm, split_by


def _emulated_out(x, spec, names, sizes):
  """[one axis per manual mesh axis, *block] -> the global output."""
  from purejax._src.lax import slicing, structural
  block_ndim = core.get_aval(x).ndim - len(names)
  per_dim = _spec_names(spec, block_ndim)
  used = {n for ns in per_dim for n in ns}
  kept = [n for n in names if n in used]
  for k in reversed(range(len(names))):      # group 0's copy along the others
    if names[k] not in used:
      x = slicing.index_in_dim(x, 0, k, keepdims=False)
  perm, shape = [], []
  for i, ns in enumerate(per_dim):
    perm += [kept.index(n) for n in ns] + [len(kept) + i]
    shape.append(core.get_aval(x).shape[len(kept) + i] * _splits(ns, sizes))
  if perm != list(range(len(perm))):
    x = structural.transpose(x, tuple(perm))
  return structural.reshape(x, tuple(shape))


# -- transformation rules -----------------------------------------------------------------

def _shard_map_jvp(primals, tangents, **params):
  nonzeros = [type(t) is not ad.Zero for t in tangents]
  names, axis_sizes = _manual(params)
  with manual_axes(names, axis_sizes):
    jvp_closed, consts, out_nonzeros = pjit.jvp_jaxpr(params["jaxpr"], nonzeros)
  in_specs, out_specs = params["in_specs"], params["out_specs"]
  outs = shard_map_p.bind(
      *consts, *primals, *[t for t in tangents if type(t) is not ad.Zero],
      **dict(params, jaxpr=jvp_closed,
             in_specs=(P(),) * len(consts) + in_specs
             + tuple(s for s, k in zip(in_specs, nonzeros) if k),
             out_specs=out_specs + tuple(s for s, k in zip(out_specs, out_nonzeros) if k)))
  n = len(out_specs)
  out_avals = _shard_map_abstract_eval(*[core.get_aval(x) for x in primals], **params)
  nz = iter(outs[n:])
  return outs[:n], [next(nz) if k else ad.Zero(ad.tangent_aval(a))
                    for k, a in zip(out_nonzeros, out_avals)]


shard_map_p.jvp = _shard_map_jvp


def _split_params(params, in_known, saveable):
  """The known and unknown shard_maps of a partly known one.  Each device's
  residuals leave the known body with a new leading axis split over all
  the manual axes, and enter the unknown body the same way."""
  from purejax._src.lax import structural
  names, axis_sizes = _manual(params)
  body = params["jaxpr"]
  known, unknown, out_known, num_res = pe.partial_eval_jaxpr(body.jaxpr, in_known, saveable)
  res_spec = P(names)
  n_known_out = len(known.outvars) - num_res

  def known_fn(*xs):
    outs = eval_jaxpr(known, [], *xs)
    return outs[:n_known_out] + [structural.expand_dims(r, (0,)) for r in outs[n_known_out:]]

  res_avals = [v.aval for v in unknown.invars[:num_res]]

  def unknown_fn(*xs):
    res = [structural.squeeze(r, (0,)) for r in xs[:num_res]]
    return eval_jaxpr(unknown, [], *res, *xs[num_res:])

  in_specs, out_specs = params["in_specs"], params["out_specs"]
  known_avals = [a for a, k in zip(body.in_avals, in_known) if k]
  unknown_avals = [a for a, k in zip(body.in_avals, in_known) if not k]
  with manual_axes(names, axis_sizes):
    known_closed, kc = pjit.trace_closed(known_fn, known_avals)
    unknown_closed, uc = pjit.trace_closed(
        unknown_fn, [a.update(shape=(1,) + a.shape) for a in res_avals] + unknown_avals)
  assert not kc and not uc
  known_params = dict(
      params, jaxpr=known_closed,
      in_specs=tuple(s for s, k in zip(in_specs, in_known) if k),
      out_specs=tuple(s for s, k in zip(out_specs, out_known) if k) + (res_spec,) * num_res)
  unknown_params = dict(
      params, jaxpr=unknown_closed,
      in_specs=(res_spec,) * num_res + tuple(s for s, k in zip(in_specs, in_known) if not k),
      out_specs=tuple(s for s, k in zip(out_specs, out_known) if not k))
  return known_params, unknown_params, out_known, num_res


def _shard_map_partial_eval(trace, args, params):
  """Under linearize: the known part runs now (on the devices), the rest
  is staged, with the residuals in between."""
  in_known = [trace.is_known(x) for x in args]
  known_params, unknown_params, out_known, num_res = _split_params(
      params, in_known, pe._always_saveable)
  with core.set_current_trace(trace.parent):
    known_outs = shard_map_p.bind(*[x for x, k in zip(args, in_known) if k], **known_params)
  split = len(known_outs) - num_res
  unknown_outs = pe.DynamicJaxprTrace.process_primitive(
      trace, shard_map_p, known_outs[split:] + [x for x, k in zip(args, in_known) if not k],
      unknown_params)
  known_iter, unknown_iter = iter(known_outs[:split]), iter(unknown_outs)
  return [next(known_iter) if k else next(unknown_iter) for k in out_known]


def _shard_map_partial_eval_jaxpr(eqn, ins_known, saveable):
  """Splits a shard_map equation inside a jaxpr being partially evaluated."""
  known_params, unknown_params, out_known, num_res = _split_params(
      eqn.params, ins_known, saveable)
  known_avals = shard_map_p.abstract_eval(
      *[v.aval for v, k in zip(eqn.invars, ins_known) if k], **known_params)
  residuals = [Var(a) for a in known_avals[len(known_avals) - num_res:]]
  known_eqn = eqn.replace(
      invars=[v for v, k in zip(eqn.invars, ins_known) if k],
      outvars=[v for v, k in zip(eqn.outvars, out_known) if k] + residuals,
      params=known_params)
  unknown_eqn = eqn.replace(
      invars=residuals + [v for v, k in zip(eqn.invars, ins_known) if not k],
      outvars=[v for v, k in zip(eqn.outvars, out_known) if not k], params=unknown_params)
  return known_eqn, unknown_eqn


shard_map_p.partial_eval = _shard_map_partial_eval
shard_map_p.partial_eval_jaxpr = _shard_map_partial_eval_jaxpr


def _shard_map_transpose(cts, *invals, **params):
  linear = [i for i, x in enumerate(invals) if ad.is_undefined_primal(x)]

  def of_linear(*lin):
    vals = list(invals)
    for i, v in zip(linear, lin):
      vals[i] = v
    return emulate(*vals, **params)

  zeros = [ad.zeros_like_aval(invals[i].aval) for i in linear]
  _, lin_jaxpr, residuals = ad.linearize_flat(of_linear, zeros)
  cts_in = ad.backward_pass(lin_jaxpr, residuals, list(cts))
  out = [None] * len(invals)
  for i, ct in zip(linear, cts_in):
    out[i] = ct
  return out


shard_map_p.transpose = _shard_map_transpose


def _shard_map_batch(trace, vals, dims, **params):
  from purejax._src.vmap import vmap
  in_axes = tuple(None if d is not_mapped else d for d in dims)
  outs = vmap(lambda *xs: emulate(*xs, **params), in_axes=in_axes, out_axes=0,
              axis_name=trace.axis_name, axis_size=trace.axis_size)(*vals)
  return outs, [0] * len(outs)


_shard_map_batch.needs_trace = True
shard_map_p.batch = _shard_map_batch


# -- the public function ------------------------------------------------------------------

def _is_spec(x):
  return x is None or isinstance(x, PartitionSpec)


def _flat_specs(specs, value, what):
  errors = tree_util.prefix_errors(specs, value, is_leaf=_is_spec)
  if errors:
    raise errors[0](f"shard_map {what}")
  flat = tree_util.broadcast_prefix(specs, value, is_leaf=_is_spec)
  return [P() if s is None else s for s in flat]


def _check_names(specs, manual, what):
  for spec in specs:
    if not isinstance(spec, PartitionSpec):
      raise TypeError(f"shard_map {what} must be PartitionSpecs, got {spec!r}")
    for ns in _spec_names(spec, len(spec)):
      for n in ns:
        if n not in manual:
          raise ValueError(
              f"shard_map {what} argument must refer to an axis marked as manual "
              f"({_SortedSet(manual)}), but:\n  {what} refers to {n!r}\n"
              f"Check the {what} values passed to shard_map.")


def _spec_paths(specs, out):
  """Per output leaf, the key path of the out_specs entry that covers it."""
  paths = tree_util.tree_map_with_path(lambda p, s: tree_util.keystr(p), specs,
                                       is_leaf=_is_spec)
  return tree_util.broadcast_prefix(paths, out, is_leaf=lambda x: isinstance(x, str))


def _fun_name(f):
  return getattr(f, "__name__", type(f).__name__)


def _arg_desc(f, i, n_args):
  import inspect
  try:
    params = list(inspect.signature(f).parameters)
  except (TypeError, ValueError):
    params = []
  where = f"args[{i}]" if n_args > 1 else "args[0]"
  if i < len(params):
    return f"{where}, where {where} is bound to {_fun_name(f)}'s parameter '{params[i]}'"
  return where


def _check_inputs(f, args, leaves, specs, mesh):
  sizes = mesh.shape
  arg_of_leaf = []
  for i, a in enumerate(args):
    arg_of_leaf += [i] * len(tree_util.tree_leaves(a))
  for leaf, spec, i in zip(leaves, specs, arg_of_leaf):
    aval = core.get_aval(leaf)
    desc = _arg_desc(f, i, len(args))
    if len(spec) > aval.ndim:
      scalar = ("\nFor scalar values (rank 0), consider using an in_specs entry of `P()`, "
                "where `P = jax.sharding.PartitionSpec`.") if aval.ndim == 0 else ""
      raise ValueError(
          f"shard_map applied to the function '{_fun_name(f)}' was given an in_specs entry "
          "which is too long to be compatible with the corresponding input value from the "
          f"function:\nin_specs is {spec} which has length {len(spec)}, but the passed "
          f"{desc}, has shape {aval.str_short()}, which has rank {aval.ndim} (and "
          f"{aval.ndim} < {len(spec)})\nEntries in in_specs must be of length no greater "
          "than the number of axes in the corresponding input value.\nEither revise the "
          f"spec to be shorter, or modify '{_fun_name(f)}' so that its inputs have "
          f"sufficient rank.{scalar}")
    for axis, (d, ns) in enumerate(zip(aval.shape, _spec_names(spec, aval.ndim))):
      if ns and d % _splits(ns, sizes):
        split = _splits(ns, sizes)
        axes = (f"mesh axis {ns[0]!r} (of size {split})" if len(ns) == 1 else
                f"mesh axes {ns} (of total size {split})")
        raise ValueError(
            f"shard_map applied to the function '{_fun_name(f)}' was given argument arrays "
            "with axis sizes that are not evenly divisible by the corresponding mesh axis "
            f"sizes:\nThe mesh given has shape {mesh.axis_sizes} with corresponding axis "
            f"names {mesh.axis_names}.\nthe passed {desc.replace('args', 'args', 1)} of "
            f"shape {aval.str_short()}, corresponds to in_specs of value {spec}, which maps "
            f"array axis {axis} (of size {d}) to {axes}, but {split} does not evenly "
            f"divide {d}\nArray arguments' axis sizes must be evenly divisible by the "
            "mesh axis or axes indicated by the corresponding elements of the argument's "
            "in_specs entry. Consider checking that in_specs are correct, and if so "
            "consider changing the mesh axis sizes or else padding the input and "
            f"adapting '{_fun_name(f)}' appropriately.")


def _placed(out, sharding):
  """A fresh output laid out (and, on Explicit axes, typed) per its out_spec."""
  from purejax._src.sharding_types import put_aval
  out.aval = put_aval(out.aval, sharding)
  return with_sharding(out, sharding)


def _check_explicit_inputs(leaves, specs, mesh):
  """On Explicit mesh axes an input's type already says how it is split:
  ``in_specs`` must say the same (JAX's ValueError)."""
  from purejax._src.mesh import AxisType
  from purejax._src.sharding_types import spec_of, _only
  explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit}
  if not explicit:
    return
  for leaf, spec in zip(leaves, specs):
    aval = core.get_aval(leaf)
    wanted = tuple(spec) + (None,) * (aval.ndim - len(spec))
    have = spec_of(aval)
    if tuple(_only(e, explicit) for e in wanted) != tuple(have):
      raise ValueError(
          f"in_specs passed to shard_map: {P(*wanted)} does not match the specs of the "
          f"input: {P(*have)} for arg: {aval.str_short()}. `in_specs` is an optional "
          "argument so you can omit specifying it and shard_map will infer the in_specs "
          "from the arguments. If you want to reshard your inputs, you can use "
          "`jax.reshard` on the arguments and then pass those args to shard_map.")


def _check_outputs(f, out, out_leaves, specs):
  paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(out)[0]]
  for leaf_aval, spec, path in zip(out_leaves, specs, paths):
    if len(spec) > leaf_aval.ndim:
      where = "out_specs" + path if path else "out_specs"
      scalar = ("\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, "
                "where `P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs "
                "which are not constant over the mesh, add at least one (singleton) axis "
                "to them so that they can be concatenated using out_specs."
                if leaf_aval.ndim == 0 else "")
      raise ValueError(
          f"shard_map applied to the function '{_fun_name(f)}' was given an out_specs entry "
          "which is too long to be compatible with the corresponding output value from the "
          f"function:\n{where} is {spec} which has length {len(spec)}, but "
          f"{_fun_name(f)}(*args){path} has shape {leaf_aval.str_short()}, which has rank "
          f"{leaf_aval.ndim} (and {leaf_aval.ndim} < {len(spec)})\nEntries in out_specs "
          "must be of length no greater than the number of axes in the corresponding "
          f"output value.\nEither revise the spec to be shorter, or modify "
          f"'{_fun_name(f)}' so that its outputs have sufficient rank.{scalar}")


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
  """Runs ``f`` once per device of ``mesh`` on that device's blocks of the
  inputs (split per ``in_specs``); the outputs are put together per
  ``out_specs``.  Collectives over the mesh axis names communicate across
  the devices.

  With ``check_vma=True`` values are typed by the mesh axes they vary over
  as in JAX (pvary/psum_invariant in the body, JAX's error for an out_spec
  that omits an axis the output varies over; see vma.py for the limits).
  With ``check_vma=False`` such an output is taken from the devices at
  index 0 of that axis.  Differs from JAX: mesh axes outside ``axis_names`` simply replicate the computation; under
  grad/linearize/vmap/transpose the shard_map runs as its one-device vmap
  emulation (same values; see this module's docstring).  Across MPI
  processes every process passes the global values (alike, or built by
  make_array_from_process_local_data) and runs its own devices; an
  output block no local device computed is gathered from the process
  that did (one MPI allgather), so every process gets the whole global
  value (JAX returns a non-addressable global Array instead).
  """
  if f is None:
    return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                             axis_names=axis_names, check_vma=check_vma)
  if not callable(f):
    raise TypeError(f"shard_map requires a callable for its first argument, but got {f}")

  @source_info.wraps(f)
  def wrapped(*args):
    the_mesh = mesh
    if the_mesh is None:
      from purejax._src import mesh as mesh_module
      the_mesh = mesh_module.context_mesh()
    if the_mesh is None or the_mesh.empty:
      raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                       "enter into a mesh context")
    if not isinstance(the_mesh, Mesh):
      raise TypeError(f"shard_map requires a Mesh, got {the_mesh!r}")
    manual = frozenset(axis_names) or frozenset(the_mesh.axis_names)
    leaves, in_tree = tree_util.tree_flatten(args)
    for x in leaves:
      if not core.is_array_like(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    if in_specs is Infer:
      specs = [x._sharding.spec if isinstance(getattr(x, "_sharding", None), NamedSharding)
               and x._sharding.mesh == the_mesh else P() for x in leaves]
    else:
      specs = _flat_specs(in_specs, args, "in_specs")
    _check_names(specs, manual, "in_specs")
    _check_inputs(f, args, leaves, specs, the_mesh)
    if in_specs is not Infer:
      _check_explicit_inputs(leaves, specs, the_mesh)
    sizes = the_mesh.shape
    block_avals = [core.get_aval(x).update(shape=_block_shape(core.get_aval(x).shape, s, sizes))
                   for x, s in zip(leaves, specs)]
    out_box = []
    names = tuple(n for n in the_mesh.axis_names if n in manual)
    in_vmas = [{n for ns in _spec_names(s, len(s)) for n in ns} & manual for s in specs]

    def body(*blocks):
      with (vma.checking(names, blocks, in_vmas) if check_vma
            else contextlib.nullcontext()) as typed:
        out = f(*tree_util.tree_unflatten(in_tree, blocks))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_vmas = [typed.vma_of(o) for o in out_leaves] if typed else None
      out_box[:] = [out, out_tree, out_vmas]
      return out_leaves

    eager = shard_map_eager.is_eager(leaves) and not _in_manual_context()
    if eager:        # run now, on every device's blocks (print shows them)
      stacked_outs = shard_map_eager.run_body(body, leaves, specs, the_mesh, names,
                                              check_vma)
      out_avals = [core.get_aval(o).update(shape=core.get_aval(o).shape[len(names):])
                   for o in stacked_outs]
    else:
      with manual_axes(names, [sizes[n] for n in names]):
        closed, consts = pjit.trace_closed(body, block_avals)
      out_avals = closed.out_avals
    out, out_tree, out_vmas = out_box
    # (pmap passes a thunk: its out_specs follow the traced output's structure)
    specs_out = out_specs() if callable(out_specs) else out_specs
    out_flat_specs = _flat_specs(specs_out, out, "out_specs")
    _check_names(out_flat_specs, manual, "out_specs")
    _check_outputs(f, out, out_avals, out_flat_specs)
    if out_vmas is not None:
      vma.check_out_specs(_fun_name(f), the_mesh, out_flat_specs, out_vmas,
                          _spec_paths(specs_out, out))
    if eager:
      outs = shard_map_eager.assemble(stacked_outs, out_flat_specs, names, sizes)
      outs = [_placed(o, NamedSharding(the_mesh, s)) for o, s in zip(outs, out_flat_specs)]
      return tree_util.tree_unflatten(out_tree, outs)
    params = dict(jaxpr=closed, mesh=the_mesh,
                  in_specs=(P(),) * len(consts) + tuple(specs),
                  out_specs=tuple(out_flat_specs), check_vma=bool(check_vma),
                  newly_manual_axes=manual)
    if _in_manual_context():       # nested in another shard_map's body
      outs = emulate(*consts, *leaves, **params)
    else:
      outs = shard_map_p.bind(*consts, *leaves, **params)
      outs = [_placed(o, NamedSharding(the_mesh, s)) if type(o) is Array else o
              for o, s in zip(outs, out_flat_specs)]
    return tree_util.tree_unflatten(out_tree, outs)

  return wrapped
