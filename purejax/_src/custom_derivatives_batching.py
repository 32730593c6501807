"""custom_jvp and custom_vjp under vmap.

A custom function called under a batch trace is staged as a
``custom_jvp_call`` / ``custom_vjp_call`` and reaches the batching rules
below.  They batch the function's jaxpr at once (that fixes the batch axes
of the outputs) and wrap the lazily traced rules, so that if the batched
call is differentiated later the user's rules, batched the same way, are
what runs:

- the JVP rule and fwd are traced as usual, then batched with the inputs'
  axes, their primal (and tangent) outputs moved to the function's output
  axes (see ``OutDims`` for when the rule's axes win instead);
- bwd runs under a batch trace of its own, on residuals and cotangents with
  the axes fwd gave them; the cotangent of an unbatched input is summed over
  the batch (every example used that one value).
"""
import weakref

from purejax._src import core
from purejax._src.custom_derivatives_common import SymbolicZero, lazy_trace
from purejax._src.interpreters import batching
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.ad import Zero
from purejax._src.interpreters.batching import BatchTrace, BatchTracer, not_mapped
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr
from purejax._src.lax.reductions import reduce_sum


class Axis:
  """The vmap a rule was batched for, kept after its trace has ended (the
  rules may be traced long after).  The trace, held weakly (jaxprs in caches
  keep these), tells that vmap's tracers apart when a user's rule closes
  over them."""
  __slots__ = ("size", "name", "spmd_name", "trace_ref")

  def __init__(self, trace):
    self.size = trace.axis_size
    self.name = trace.axis_name
    self.spmd_name = trace.spmd_axis_name
    self.trace_ref = weakref.ref(trace)

  def new_trace(self):
    return BatchTrace(core.current_trace(), self.size, self.name, self.spmd_name)


def batched_aval(aval, dim, size):
  if dim is not_mapped:
    return aval
  shape = list(aval.shape)
  shape.insert(dim, size)
  return aval.update(shape=tuple(shape))


def unbatched_aval(aval, dim):
  if dim is not_mapped:
    return aval
  shape = list(aval.shape)
  del shape[dim]
  return aval.update(shape=tuple(shape))


def _const_in(trace, axis, c):
  """A constant of a rule's jaxpr, seen from ``trace``: a tracer of the
  original vmap (closed over by the rule) is a batched value here."""
  if isinstance(c, BatchTracer) and c._trace is axis.trace_ref():
    if not c._trace.valid:
      raise core.escaped_tracer_error(c)
    return c.val if c.batch_dim is not_mapped else BatchTracer(trace, c.val, c.batch_dim)
  return c


def _to_axis(val, dim, want, size, what):
  if dim == want:
    return val
  if want is not_mapped:
    raise NotImplementedError(
        f"{what} gave an output batched along a vmap where the custom function's "
        "output is not batched.  When the batched call was staged (under jit) before "
        "being differentiated, its outputs' batch axes come from the function, so "
        "the rule's output there must not depend on mapped inputs.")
  return batching.matchaxis(val, dim, want, size)


def batch_closed(closed, axis, in_dims, choose, what):
  """``closed`` (a ClosedJaxpr from a lazily traced rule) as a ClosedJaxpr
  on batched inputs.  ``choose(dims)`` maps the axes its outputs come out
  with to the axes they must have."""

  def fun(*args):
    trace = axis.new_trace()
    tracers = [a if d is not_mapped else BatchTracer(trace, a, d)
               for a, d in zip(args, in_dims)]
    try:
      with core.set_current_trace(trace):
        consts = [_const_in(trace, axis, c) for c in closed.consts]
        outs = eval_jaxpr(closed.jaxpr, consts, *tracers)
      with core.set_current_trace(trace.parent):
        vals, dims = zip(*map(trace.lift, outs)) if outs else ((), ())
        wants = choose(list(dims))
        return [_to_axis(v, d, w, axis.size, what) for v, d, w in zip(vals, dims, wants)]
    finally:
      trace.invalidate()

  avals = [batched_aval(a, d, axis.size) for a, d in zip(closed.in_avals, in_dims)]
  jaxpr, consts = pe.trace_to_jaxpr(fun, avals)
  return ClosedJaxpr(jaxpr, consts)


class OutDims:
  """The batch axes of a batched call's outputs.  They start as the
  function's; while the call is being bound, a rule traced right away (grad
  of vmap) may batch an output the function left unbatched, as JAX lets it.
  Once the batching rule has returned them they are fixed."""

  def __init__(self, dims):
    self.dims = list(dims)
    self.fixed = False

  def settle(self):
    self.fixed = True
    return list(self.dims)

  def want(self, i, *found):
    """The axis output ``i`` must have, given the axes the rule gave it."""
    if self.dims[i] is not_mapped and not self.fixed:
      self.dims[i] = next((d for d in found if d is not not_mapped), not_mapped)
    return self.dims[i]


# ---------------------------------------------------------------------------
# The wrapped rules

class BatchedJVP:
  """A lazy JVP rule (``nonzeros -> (jaxpr, out_nonzeros)``, see custom_jvp)
  for the batched call: tangents share their primals' axes."""

  def __init__(self, inner, axis, in_dims, out_dims):
    self.inner = inner
    self.call = inner.call        # the name printed in jaxprs
    self.axis = axis
    self.in_dims = list(in_dims)
    self.out_dims = OutDims(out_dims)
    self.cache = {}

  def __call__(self, nonzeros):
    return lazy_trace(self.cache, nonzeros, lambda: self._trace(nonzeros))

  def _trace(self, nonzeros):
    closed, out_nonzeros = self.inner(nonzeros)
    n = len(out_nonzeros)
    tangent_of = [i for i, k in enumerate(out_nonzeros) if k]

    def choose(dims):
      t_dims = dict(zip(tangent_of, dims[n:]))
      wants = [self.out_dims.want(i, d, t_dims.get(i)) for i, d in enumerate(dims[:n])]
      return wants + [wants[i] for i in tangent_of]

    in_dims = self.in_dims + [d for d, k in zip(self.in_dims, nonzeros) if k]
    what = f"The custom JVP rule {self.call.rule_name} for function {self.call.name}"
    return batch_closed(closed, self.axis, in_dims, choose, what), out_nonzeros


class BatchedFwd:
  """A lazy fwd (``in_zeros -> (jaxpr, bwd)``, see custom_vjp) for the
  batched call; its bwd is batched with the axes the residuals came out
  with."""

  def __init__(self, inner, axis, in_dims, out_dims):
    self.inner = inner
    self.call = inner.call        # for names in error messages
    self.axis = axis
    self.in_dims = list(in_dims)
    self.out_dims = OutDims(out_dims)
    self.cache = {}

  def __call__(self, in_zeros):
    return lazy_trace(self.cache, in_zeros, lambda: self._trace(in_zeros))

  def _trace(self, in_zeros):
    closed, bwd = self.inner(in_zeros)
    n = len(self.out_dims.dims)
    res_dims = []

    def choose(dims):
      res_dims[:] = dims[n:]      # residuals keep the axes they come out with
      return [self.out_dims.want(i, d) for i, d in enumerate(dims[:n])] + dims[n:]

    what = f"The custom VJP fwd rule {self.call.fwd_name} for function {self.call.name}"
    batched = batch_closed(closed, self.axis, self.in_dims, choose, what)
    bwd = BatchedBwd(bwd, self.axis, res_dims, self.out_dims.dims[:], self.in_dims)
    return batched, bwd


class BatchedBwd:
  """A flat bwd (``(res, cts) -> one cotangent per input``) run on batched
  residuals and cotangents; gives cotangents with the inputs' axes."""

  def __init__(self, inner, axis, res_dims, ct_dims, in_dims):
    self.inner = inner
    self.axis = axis
    self.res_dims = list(res_dims)
    self.ct_dims = list(ct_dims)
    self.in_dims = list(in_dims)

  def __str__(self):
    return str(self.inner)

  __repr__ = __str__

  def __call__(self, res, cts):
    trace = self.axis.new_trace()
    wrap = lambda x, d: x if d is not_mapped else BatchTracer(trace, x, d)
    res = [wrap(r, d) for r, d in zip(res, self.res_dims)]
    cts = [SymbolicZero(unbatched_aval(ct.aval, d)) if type(ct) is SymbolicZero
           else wrap(ct, d) for ct, d in zip(cts, self.ct_dims)]
    try:
      with core.set_current_trace(trace):
        cts_in = self.inner(res, cts)
      with core.set_current_trace(trace.parent):
        return [self._out(trace, ct, d) for ct, d in zip(cts_in, self.in_dims)]
    finally:
      trace.invalidate()

  def _out(self, trace, ct, want):
    size = self.axis.size
    if type(ct) is Zero:
      return Zero(batched_aval(ct.aval, want, size))
    val, dim = trace.lift(ct)
    if want is not_mapped and dim is not not_mapped:
      return reduce_sum(val, (dim,))    # one input shared by every example
    if want is not_mapped:
      return val
    return batching.matchaxis(val, dim, want, size)
