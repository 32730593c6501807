"""Automatic differentiation.

Forward mode is the JVP trace: each value carries a tangent, and each
primitive's ``jvp`` rule maps (primals, tangents) to (primal out, tangent out).
Reverse mode linearizes (JVP under a partial-evaluation trace, so that the
tangent computation is staged into a linear jaxpr while primal values are
computed) and then transposes that linear jaxpr with each primitive's
``transpose`` rule: the backward pass.

Tangents may be symbolic zeros (``Zero``) so that unused inputs cost nothing.
Integer and boolean values have float0 tangents, as in JAX.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.array import Array, wrap_numpy
from purejax._src.jaxpr import Literal, literal_array


# ---------------------------------------------------------------------------
# Symbolic zeros and tangent types

class Zero:
  """A tangent or cotangent known to be zero, of abstract value ``aval``."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return f"Zero({self.aval.str_short()})"

  @staticmethod
  def from_primal_value(x):
    return Zero(tangent_aval(core.get_aval(x)))


def tangent_dtype(dtype):
  """Inexact values have tangents of their own dtype; others have float0."""
  return dtype if dtypes.issubdtype(dtype, np.inexact) else dtypes.float0


def tangent_aval(aval):
  dtype = tangent_dtype(aval.dtype)
  return core.ShapedArray(aval.shape, dtype, aval.weak_type and dtype != dtypes.float0)


def zeros_like_aval(aval):
  if aval.dtype == dtypes.float0:
    return wrap_numpy(np.zeros(aval.shape, dtypes.float0), aval)
  from purejax import lax   # lax's modules import this one for their rules
  zero = lax.convert_element_type(0, aval.dtype, aval.weak_type)
  return lax.broadcast(zero, aval.shape) if aval.shape else zero


def instantiate(t):
  return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(x, y):
  if type(x) is Zero:
    return y
  if type(y) is Zero:
    return x
  return add_any_p.bind(x, y)


def _add_any_abstract_eval(x, y):
  if x.shape != y.shape or x.dtype != y.dtype:
    raise TypeError(f"add_any got mismatched operands {x.str_short()} and {y.str_short()}")
  return core.ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def _add_any_impl(x, y):
  if x.dtype == dtypes.float0:
    return x
  return np.add(x, y)


# Adds tangents; unlike ``add`` it ignores weak types and accepts float0.
add_any_p = core.Primitive("add_any")
add_any_p.impl = _add_any_impl
add_any_p.abstract_eval = _add_any_abstract_eval
add_any_p.is_linear = True
add_any_p.elementwise = True


def _add_any_batch(axis_size, vals, dims):
  # Unlike add, add_any wants equal shapes: no size-1 broadcasting, so an
  # unbatched operand is broadcast along the other's batch axis.
  from purejax._src.interpreters import batching
  (x, y), (dx, dy) = vals, dims
  d = dx if dx is not None else dy
  x, y = batching.matchaxis(x, dx, d, axis_size), batching.matchaxis(y, dy, d, axis_size)
  return add_any_p.bind(x, y), d


add_any_p.batch = _add_any_batch


# ---------------------------------------------------------------------------
# Forward mode: the JVP trace

class JVPTracer(core.Tracer):
  __slots__ = ("primal", "tangent")
  _tracer_name = "JVPTracer"

  def __init__(self, trace, primal, tangent):
    self._trace = trace
    self.primal = primal
    self.tangent = tangent

  @property
  def aval(self):
    return core.get_aval(self.primal)

  def to_concrete_value(self):
    primal = self.primal
    if isinstance(primal, core.Tracer):
      return primal.to_concrete_value()
    return core.concrete_numpy_value(primal) if type(primal) is Array else primal

  def __array__(self, dtype=None, copy=None):
    # As in JAX: NumPy never sees a differentiated value, known or not
    # (``bool``/``int``/``float`` of a known primal still work).
    from purejax._src import errors
    raise errors.TracerArrayConversionError(self)


class JVPTrace(core.Trace):

  def lift(self, x):
    """(primal, tangent) of any value seen by this trace."""
    if isinstance(x, JVPTracer) and x._trace is self:
      return x.primal, x.tangent
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    return x, Zero.from_primal_value(x)

  def process_primitive(self, primitive, args, params):
    primals, tangents = zip(*map(self.lift, args)) if args else ((), ())
    if all(type(t) is Zero for t in tangents):
      with core.set_current_trace(self.parent):
        return primitive.bind(*primals, **params)
    rule = primitive.jvp
    if rule is None:
      raise NotImplementedError(
          f"Differentiation rule for '{primitive.name}' not implemented")
    with core.set_current_trace(self.parent):
      primal_out, tangent_out = rule(primals, tangents, **params)
    if primitive.multiple_results:
      return [maybe_jvp_tracer(self, p, t) for p, t in zip(primal_out, tangent_out)]
    return maybe_jvp_tracer(self, primal_out, tangent_out)

  def describe_dependence(self, tracer):
    primal = getattr(tracer, "primal", None)
    if isinstance(primal, core.Tracer):
      return primal._trace.describe_dependence(primal)
    return ""


def maybe_jvp_tracer(trace, primal, tangent):
  """A tracer of ``trace``, or, as in JAX, the primal itself when its tangent
  is a symbolic zero: a value that does not depend on the inputs' tangents
  is no tracer of the JVP (libraries tell outputs apart this way)."""
  if type(tangent) is Zero or getattr(tangent, "dtype", None) == dtypes.float0:
    return primal
  return JVPTracer(trace, primal, tangent)


def jvp_flat(flat_fun, primals, tangents, parent=None):
  """Runs ``flat_fun`` on JVP tracers; returns (primal outs, tangent outs).

  ``parent`` is the trace the JVP trace's rules run in (default: current)."""
  # float0 tangents (of integer values) carry nothing: make them symbolic.
  tangents = [Zero(core.get_aval(t)) if type(t) is not Zero and core.get_aval(t).dtype == dtypes.float0
              else t for t in tangents]
  trace = JVPTrace(core.current_trace() if parent is None else parent)
  try:
    with core.set_current_trace(trace):
      outs = flat_fun(*[maybe_jvp_tracer(trace, p, t) for p, t in zip(primals, tangents)])
    pairs = [trace.lift(o) for o in outs]
  finally:
    trace.invalidate()
  return [p for p, _ in pairs], [t for _, t in pairs]


# ---------------------------------------------------------------------------
# Reverse mode: linearize, then transpose

def linearize_flat(flat_fun, primals):
  """Primal outputs and the linear map from input to output tangents.

  Returns ``(primal_outs, linear_jaxpr, residuals)``: the jaxpr's invars are
  the input tangents and its constvars the residuals (primal values the
  tangent computation needs).
  """
  from purejax._src.interpreters.partial_eval import PartialEvalTrace
  pe_trace = PartialEvalTrace(core.current_trace())
  tangents_in = [pe_trace.new_arg(tangent_aval(core.get_aval(p))) for p in primals]
  try:
    primal_outs, tangent_outs = jvp_flat(flat_fun, primals, tangents_in, parent=pe_trace)
    with core.set_current_trace(pe_trace):
      tangent_outs = [instantiate(t) for t in tangent_outs]
    jaxpr, residuals = pe_trace.to_jaxpr(tangent_outs)
  finally:
    pe_trace.invalidate()
  # As JAX's tangent trace does, calls keep only the outputs that are used.
  from purejax._src.interpreters.partial_eval import dce_with_rules
  jaxpr = dce_with_rules(jaxpr)[0]
  return primal_outs, jaxpr, residuals


class UndefinedPrimal:
  """A linear input of an equation being transposed: only its type is known."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x):
  return type(x) is UndefinedPrimal


def backward_pass(jaxpr, consts, cotangents):
  """Transposes a jaxpr that is linear in its invars.

  ``consts`` are the values of its constvars (residuals); ``cotangents``
  those of its outputs (``Zero`` allowed).  Returns the cotangents of the
  invars (``Zero`` where nothing flows).
  """
  primal_env = dict(zip(jaxpr.constvars, consts))

  def read_primal(v):
    if type(v) is Literal:
      return literal_array(v)
    return primal_env[v] if v in primal_env else UndefinedPrimal(v.aval)

  # Equations that use no linear input are ordinary computations on residuals.
  linear = set(jaxpr.invars)
  for eqn in jaxpr.eqns:
    if any(type(v) is not Literal and v in linear for v in eqn.invars):
      linear.update(eqn.outvars)
    else:
      outs = eqn.primitive.bind(*map(read_primal, eqn.invars), **eqn.params)
      outs = outs if eqn.primitive.multiple_results else [outs]
      primal_env.update(zip(eqn.outvars, outs))

  ct_env = {}

  def write_ct(v, ct):
    if type(v) is Literal or ct is None or type(ct) is Zero or v not in linear:
      return
    ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

  for v, ct in zip(jaxpr.outvars, cotangents):
    write_ct(v, ct)
  for eqn in reversed(jaxpr.eqns):
    if eqn.outvars and eqn.outvars[0] not in linear:
      continue
    cts_out = [ct_env.pop(v, None) for v in eqn.outvars]
    if all(ct is None for ct in cts_out):
      continue
    if getattr(eqn.primitive, "symbolic_zero_cotangents", False):
      cts_out = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, cts_out)]
    else:
      cts_out = [zeros_like_aval(v.aval) if ct is None else ct
                 for v, ct in zip(eqn.outvars, cts_out)]
    rule = eqn.primitive.transpose
    if rule is None:
      raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) "
                                f"for '{eqn.primitive.name}' not implemented")
    invals = [read_primal(v) for v in eqn.invars]
    cts_in = rule(cts_out if eqn.primitive.multiple_results else cts_out[0],
                  *invals, **eqn.params)
    for v, x, ct in zip(eqn.invars, invals, cts_in):
      if is_undefined_primal(x):
        write_ct(v, ct)
  return [ct_env.get(v, Zero(v.aval)) for v in jaxpr.invars]


# ---------------------------------------------------------------------------
# Helpers for writing rules next to primitives

def defjvp(primitive, *tangent_fns):
  """Elementwise-style JVP: ``tangent_fns[i](g_i, *primals, **params)`` is the
  contribution of input i's tangent ``g_i`` (None: input not differentiable)."""

  def rule(primals, tangents, **params):
    out = primitive.bind(*primals, **params)
    total = Zero(tangent_aval(core.get_aval(out)))
    for fn, g in zip(tangent_fns, tangents):
      if fn is not None and type(g) is not Zero:
        total = add_tangents(total, fn(g, *primals, **params))
    return out, total

  primitive.jvp = rule
  return rule


def defjvp_zero(primitive):
  """Non-differentiable primitives (comparisons, integer ops): zero tangents."""

  def rule(primals, tangents, **params):
    out = primitive.bind(*primals, **params)
    if primitive.multiple_results:
      return out, [Zero.from_primal_value(o) for o in out]
    return out, Zero.from_primal_value(out)

  primitive.jvp = rule
  return rule


def deflinear(primitive, transpose_rule):
  """A primitive linear in all its array inputs: its JVP applies it to the
  tangents; ``transpose_rule(ct, *invals, **params)`` gives input cotangents."""

  def rule(primals, tangents, **params):
    out = primitive.bind(*primals, **params)
    tangents = [instantiate(t) for t in tangents]
    return out, primitive.bind(*tangents, **params)

  primitive.jvp = rule
  primitive.transpose = transpose_rule
  primitive.is_linear = True
  return rule


def _add_any_transpose(ct, x, y):
  return [ct, ct]


deflinear(add_any_p, _add_any_transpose)
