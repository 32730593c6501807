"""Vectorization: the batching interpreter behind ``vmap``.

Each value carries a batch dimension (an axis index, or ``not_mapped``).
A primitive's ``batch`` rule, ``rule(axis_size, vals, dims, **params) ->
(out, out_dim)``, computes the batched result directly; elementwise
primitives share one generic rule.  Unbatched values are never broadcast
unless an operation needs it.
"""
import weakref

from purejax._src import core
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr

not_mapped = None


class BatchTracer(core.Tracer):
  __slots__ = ("val", "batch_dim")
  _tracer_name = "VmapTracer"

  def __init__(self, trace, val, batch_dim):
    self._trace = trace
    self.val = val
    self.batch_dim = batch_dim

  @property
  def aval(self):
    aval = core.get_aval(self.val)
    if self.batch_dim is not_mapped:
      return aval
    shape = list(aval.shape)
    del shape[self.batch_dim]
    if getattr(aval, "explicit_sharding", None) is None:
      return aval.update(shape=tuple(shape))
    from purejax._src.sharding_types import without_dim
    return without_dim(aval, self.batch_dim, tuple(shape))

  def __repr__(self):
    return (f"VmapTracer(aval={self.aval.str_short()}, "
            f"batched={core.get_aval(self.val).str_short()})")

  __str__ = __repr__


class BatchTrace(core.Trace):

  def __init__(self, parent, axis_size, axis_name=None, spmd_axis_name=None):
    super().__init__(parent)
    self.axis_size = axis_size
    self.axis_name = axis_name
    self.spmd_axis_name = spmd_axis_name

  def lift(self, x):
    if isinstance(x, BatchTracer) and x._trace is self:
      return x.val, x.batch_dim
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    return x, not_mapped

  def process_primitive(self, primitive, args, params):
    vals, dims = zip(*map(self.lift, args)) if args else ((), ())
    if all(d is not_mapped for d in dims) and not self._communicates(primitive, params):
      with core.set_current_trace(self.parent):
        return primitive.bind(*vals, **params)
    rule = primitive.batch
    if rule is None and primitive.elementwise:
      rule = elementwise_batch_rule(primitive)
    if rule is None:
      raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
    with core.set_current_trace(self.parent):
      if getattr(rule, "needs_trace", False):
        out, out_dims = rule(self, vals, dims, **params)
      else:
        out, out_dims = rule(self.axis_size, vals, dims, **params)
    if primitive.multiple_results:
      return [self.wrap(v, d) for v, d in zip(out, out_dims)]
    return self.wrap(out, out_dims)

  def wrap(self, val, dim):
    return BatchTracer(self, val, dim)

  def _communicates(self, primitive, params):
    """Whether ``primitive`` is a collective over this trace's axis name:
    those are batched even with no batched operand (``psum(1., 'i')``)."""
    return self.axis_name is not None and self.axis_name in axis_names(primitive, params)

  def describe_dependence(self, tracer):
    return ""


# ---------------------------------------------------------------------------
# Named axes: a collective primitive lists the axis names it communicates
# over as ``prim.axis_names(params)``; a primitive with sub-jaxprs (jit)
# communicates over those its equations name.

_jaxpr_axis_names = weakref.WeakKeyDictionary()   # ClosedJaxpr -> frozenset


def axis_names(primitive, params):
  own = getattr(primitive, "axis_names", None)
  if own is not None:
    return frozenset(own(params))
  names = frozenset()
  for value in params.values():
    for jaxpr in value if isinstance(value, (tuple, list)) else (value,):
      if isinstance(jaxpr, (Jaxpr, ClosedJaxpr)):
        names |= _named_axes_of_jaxpr(jaxpr)
  return names


def _named_axes_of_jaxpr(jaxpr):
  closed = jaxpr if isinstance(jaxpr, ClosedJaxpr) else None
  if closed is not None and closed in _jaxpr_axis_names:
    return _jaxpr_axis_names[closed]
  inner = closed.jaxpr if closed is not None else jaxpr
  names = frozenset().union(*[axis_names(e.primitive, e.params) for e in inner.eqns])
  if closed is not None:
    _jaxpr_axis_names[closed] = names
  return names


# ---------------------------------------------------------------------------
# Moving and materializing batch dimensions (used by rules)

def moveaxis(x, src, dst):
  """Moves axis ``src`` of ``x`` to ``dst`` (both non-negative)."""
  from purejax import lax
  if src == dst:
    return x
  ndim = core.get_aval(x).ndim
  perm = [i for i in range(ndim) if i != src]
  perm.insert(dst, src)
  return lax.transpose(x, tuple(perm))


def bdim_at_front(x, dim, axis_size):
  """``x`` with its batch dimension first, broadcasting it if unbatched."""
  if dim is not_mapped:
    return broadcast(x, axis_size, 0)
  return moveaxis(x, dim, 0)


def broadcast(x, size, axis):
  """Inserts a new axis of ``size`` at ``axis`` (an unbatched value made batched)."""
  from purejax import lax
  aval = core.get_aval(x)
  shape = list(aval.shape)
  shape.insert(axis, size)
  dims = tuple(i for i in range(len(shape)) if i != axis)
  return lax.broadcast_in_dim(x, tuple(shape), dims)


def matchaxis(x, src, dst, axis_size):
  """Puts ``x``'s batch dimension (or a broadcast one) at ``dst``."""
  if src is not_mapped:
    return broadcast(x, axis_size, dst)
  return moveaxis(x, src, dst)


def elementwise_batch_rule(primitive):
  """Elementwise ops: batched operands get their batch dim at the front;
  unbatched ones get a size-1 axis there only if they aren't rank 0 (lax's
  elementwise ops broadcast rank-0 and size-1 operands themselves)."""

  def rule(axis_size, vals, dims, **params):
    from purejax import lax
    out_ndim = max(core.get_aval(v).ndim - (d is not not_mapped) for v, d in zip(vals, dims))
    moved = []
    for v, d in zip(vals, dims):
      ndim = core.get_aval(v).ndim
      if d is not_mapped:
        if ndim:
          v = lax.expand_dims(v, tuple(range(1 + out_ndim - ndim)))
      else:
        v = moveaxis(v, d, 0)
        if ndim - 1 < out_ndim:   # a rank-0 batched value against bigger operands
          v = lax.expand_dims(v, tuple(range(1, 1 + out_ndim - (ndim - 1))))
      moved.append(v)
    out = primitive.bind(*moved, **params)
    if primitive.multiple_results:
      return out, [0] * len(out)
    return out, 0

  return rule


def eval_jaxpr_batched(closed, trace, in_dims, args):
  """Evaluates ``closed`` on ``args`` (batched along ``in_dims``) under a
  fresh BatchTrace over the same axis as ``trace``, in the current trace.

  Returns ``(value, batch_dim)`` per output: the building block of every
  rule that batches a sub-jaxpr (jit, checkpoint, cond, loops, scan).
  """
  from purejax._src.jaxpr import eval_jaxpr
  inner = BatchTrace(core.current_trace(), trace.axis_size, trace.axis_name,
                     trace.spmd_axis_name)
  tracers = [a if d is None else BatchTracer(inner, a, d) for a, d in zip(args, in_dims)]
  try:
    with core.set_current_trace(inner):
      outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
    return [inner.lift(o) for o in outs]
  finally:
    inner.invalidate()
