"""Eager ``shard_map``: outside ``jit`` the body runs once, as in JAX, on
values that hold every device's block (one leading axis per manual mesh
axis, in mesh order, then the block).

``print`` of such a value shows one section per device of the mesh, as
JAX's does; ``jax.typeof`` gives the per-device type, with its varying
manual axes (``float32[1,1]{V:(x,y)}``) when ``check_vma``.  Each
primitive runs as nested named ``vmap`` over the manual axes (the same
machinery as shard_map.emulate), so collectives act per device.  Every
value is kept stacked over all the manual axes (an invariant one is
broadcast): simple, and eager bodies are for debugging.
"""
import numpy as np

from purejax._src import core
from purejax._src.array import wrap_numpy


class ShardMapTracer(core.Tracer):
  __slots__ = ("val",)
  _tracer_name = "ShardMapTracer"

  def __init__(self, trace, val):
    self._trace = trace
    self.val = val            # [*manual axis sizes, *block]

  @property
  def aval(self):
    aval = core.get_aval(self.val)
    return aval.update(shape=aval.shape[len(self._trace.names):], sharding=None)

  def to_concrete_value(self):
    return None               # as JAX: a block is not one concrete value

  def typed_aval(self):
    """``jax.typeof``: the block's type, marked with its varying axes."""
    aval = self.aval
    body = self._trace.typed
    vma = body.vma_of(self) if body is not None else None
    if not vma:
      return aval
    return VaryingAval(aval, tuple(n for n in self._trace.names if n in vma))

  def __str__(self):
    return self._trace.sections(self)

  __repr__ = __str__


class VaryingAval(core.ShapedArray):
  """A block's type inside an eager shard_map body: prints its varying
  manual axes as JAX does (``{V:x}``, ``{V:(x,y)}``)."""

  def __init__(self, aval, varying):
    super().__init__(aval.shape, aval.dtype, aval.weak_type)
    self.varying = varying

  def str_short(self, short_dtypes=False, mark_weak=False):
    names = self.varying[0] if len(self.varying) == 1 else f"({','.join(self.varying)})"
    return super().str_short(short_dtypes, mark_weak) + f"{{V:{names}}}"


class ShardMapTrace(core.Trace):
  """Holds the stacked blocks; its parent binds the manual axis names."""

  def __init__(self, parent, mesh, names, sizes, check_vma):
    super().__init__(parent)
    self.mesh, self.names, self.sizes = mesh, tuple(names), tuple(sizes)
    self.check_vma = check_vma

  @property
  def typed(self):
    """The vma.checking body that types the values, when check_vma."""
    from purejax._src import vma
    return vma.current() if self.check_vma else None

  def lift(self, x):
    """(stacked value, whether it has the leading manual axes)."""
    if isinstance(x, ShardMapTracer) and x._trace is self:
      return x.val, True
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    return x, False

  def stacked(self, x):
    """``x`` with the leading manual axes (an unstacked one broadcast)."""
    from purejax._src.lax import structural
    val, mapped = self.lift(x)
    if mapped:
      return val
    with core.set_current_trace(self.parent):
      aval = core.get_aval(val)
      return structural.broadcast_in_dim(val, self.sizes + aval.shape,
                                         tuple(range(len(self.names), len(self.names) + aval.ndim)))

  def process_primitive(self, primitive, args, params):
    vals, mapped = zip(*map(self.lift, args)) if args else ((), ())
    if params.get("axis_index_groups") is not None:   # vmap has no groups: the devices do
      outs = self._on_devices(primitive, params, vals, mapped)
    else:
      with core.set_current_trace(self.parent):
        outs = per_device(lambda *xs: primitive.bind(*xs, **params), vals, mapped,
                          self.names, self.sizes)
    if primitive.multiple_results:
      return [ShardMapTracer(self, o) for o in outs]
    return ShardMapTracer(self, outs)

  def _on_devices(self, primitive, params, vals, mapped):
    """``primitive`` run by a shard_map of it on the devices, each getting
    its block of the stacked values (as JAX runs each eager primitive)."""
    from purejax._src import pjit
    from purejax._src import shard_map as sm
    n = len(self.names)
    blocks = [core.get_aval(v).update(shape=(1,) * n + core.get_aval(v).shape[n:]
                                      if m else None, sharding=None)
              for v, m in zip(vals, mapped)]

    def body(*xs):
      xs = [x.reshape(x.shape[n:]) if m else x for x, m in zip(xs, mapped)]
      outs = primitive.bind(*xs, **params)
      outs = outs if primitive.multiple_results else [outs]
      return [o.reshape((1,) * n + o.shape) for o in outs]

    with core.eval_context(), sm.manual_axes(self.names, self.sizes):
      closed, consts = pjit.trace_closed(body, blocks)
    stacked = sm.P(*self.names)
    with core.eval_context():
      outs = sm.shard_map_p.bind(
          *consts, *vals, jaxpr=closed, mesh=self.mesh,
          in_specs=(sm.P(),) * len(consts) + tuple(stacked if m else sm.P() for m in mapped),
          out_specs=(stacked,) * len(closed.out_avals), check_vma=False,
          newly_manual_axes=frozenset(self.names))
    return outs if primitive.multiple_results else outs[0]

  def sections(self, tracer):
    """JAX's text for a stacked value: each device's block, in mesh order."""
    stacked = np.asarray(tracer.val)
    aval = tracer.aval
    axis_names = f"({', '.join(map(str, self.mesh.axis_names))},)"
    at = [self.mesh.axis_names.index(n) for n in self.names]
    texts = []
    for idx, device in np.ndenumerate(self.mesh.devices):
      block = wrap_numpy(stacked[tuple(idx[a] for a in at)], aval)
      texts.append(f"On {device} at mesh coordinates {axis_names} = {idx}:\n{block}\n")
    return "\n".join(texts)


def per_device(fn, vals, mapped, names, sizes):
  """``fn`` on each device's blocks: nested named vmaps over the manual
  axes; ``vals`` that are ``mapped`` carry the leading manual axes."""
  from purejax._src.vmap import vmap

  def level(j, *xs):
    if j == len(names):
      return fn(*xs)
    in_axes = tuple(0 if m else None for m in mapped)
    return vmap(lambda *ys: level(j + 1, *ys), in_axes=in_axes, out_axes=0,
                axis_name=names[j], axis_size=sizes[j])(*xs)

  return level(0, *vals)


def is_eager(leaves):
  """Whether a shard_map of these inputs runs eagerly (outside any trace)."""
  return (core.current_trace() is core.eval_trace
          and not any(isinstance(x, core.Tracer) for x in leaves))


def run_body(body, leaves, specs, mesh, names, check_vma):
  """Runs ``body`` (shard_map's flat body, which enters vma.checking when
  ``check_vma``) on the stacked blocks of ``leaves``; returns its output
  leaves stacked."""
  from purejax._src import shard_map as sm
  sizes = tuple(mesh.shape[n] for n in names)
  with sm.manual_axes(names, sizes):
    trace = ShardMapTrace(core.current_trace(), mesh, names, sizes, check_vma)
  inputs = [ShardMapTracer(trace, _stacked_input(x, s, names, mesh.shape))
            for x, s in zip(leaves, specs)]
  try:
    with core.set_current_trace(trace):
      outs = body(*inputs)
    return [trace.stacked(o) for o in outs]
  finally:
    trace.invalidate()


def _stacked_input(x, spec, names, sizes):
  from purejax._src import shard_map as sm
  aval = core.get_aval(x)
  split_shape, perm, split_by = sm.split_layout(aval.shape, spec, names, sizes)
  value = np.transpose(np.reshape(np.asarray(x), split_shape), perm)
  # a leading axis for each manual axis that does not split x: broadcast
  value = np.expand_dims(value, tuple(k for k, n in enumerate(names) if n not in split_by))
  full = tuple(sizes[n] for n in names) + value.shape[len(names):]
  value = np.ascontiguousarray(np.broadcast_to(value, full))
  return wrap_numpy(value, core.ShapedArray(full, aval.dtype, aval.weak_type))


def assemble(stacked_outs, out_specs, names, sizes):
  """The global outputs, from the stacked ones, per ``out_specs``."""
  from purejax._src import shard_map as sm
  outs = []
  for x, spec in zip(stacked_outs, out_specs):
    aval = core.get_aval(x)
    plain = wrap_numpy(np.asarray(x), core.ShapedArray(aval.shape, aval.dtype, aval.weak_type))
    outs.append(sm._emulated_out(plain, spec, names, sizes))
  return outs
