"""Varying manual axes (vma): ``shard_map(check_vma=True)``'s value types.

Inside a shard_map body each value either varies across the devices of a
manual mesh axis or is the same on all of them (invariant).  JAX types
every value by that set of axes, inserts ``pvary`` (invariant -> varying,
no data moves) where an invariant value meets a varying one and binds
``psum_invariant`` for a psum; their transposes are each other, so a
gradient taken inside or across a shard_map respects replication (psum's
untyped transpose, psum, would count an invariant value once per device).

purejax's ShapedArray has no vma field.  Instead, while a check_vma body
is traced, ``core.Primitive.bind`` goes through ``_hook`` here: it knows
each value's vma (a table by tracer, filled as primitives produce values;
JVP tracers combine their primal's and tangent's), inserts the pvary
equations and picks psum_invariant, exactly where JAX's bind would.

The body jaxpr's variables carry their vma (``Var.vma``), printed as JAX
prints its types (``f32[2]{V:i}``); the equations (pvary, psum_invariant)
are JAX's.  Differs from JAX: a value computed by a
primitive with sub-jaxprs (jit, cond, scan, custom_jvp...) that itself
communicates over the shard_map's axes gets an unknown vma: from there on
the body behaves as with check_vma=False (psum transposes to psum, no
out_specs check), and so do bodies of jit/cond/scan traced inside the body.
"""
import contextlib
import threading

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.partial_eval import (
    DynamicJaxprTrace, DynamicJaxprTracer, PartialEvalTrace)
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr

EMPTY = frozenset()


class _Body:
  """One check_vma body being traced: its trace, manual axes, vma table."""

  def __init__(self, trace, names):
    self.trace = trace
    self.names = tuple(names)          # mesh order
    self.manual = frozenset(names)
    self.table = {}                    # id(tracer) -> (tracer, vma or None)
    self.outer = set()
    t = trace.parent
    while t is not None:
      self.outer.add(id(t))
      t = t.parent

  def ordered(self, axes):
    return tuple(n for n in self.names if n in axes)

  def set(self, x, vma):
    if isinstance(x, core.Tracer):
      self.table[id(x)] = (x, vma)
      if vma and isinstance(x, DynamicJaxprTracer) and x._trace is self.trace:
        x.jaxpr_var.vma = self.ordered(vma)   # the body jaxpr prints it

  def vma_of(self, x):
    """x's vma; None when unknown."""
    if not isinstance(x, core.Tracer):
      return EMPTY
    hit = self.table.get(id(x))
    if hit is not None and hit[0] is x:
      return hit[1]
    if isinstance(x, ad.JVPTracer):
      vma = self.vma_of(x.primal)
      tangent = x.tangent
      if type(tangent) is ad.Zero:
        return vma
      if isinstance(tangent, core.Tracer) and id(tangent) not in self.table:
        self.set(tangent, vma)        # a tangent has its primal's type
      tv = self.vma_of(tangent)
      return None if vma is None or tv is None else vma | tv
    if isinstance(x, batching.BatchTracer):
      return self.vma_of(x.val)
    if id(x._trace) in self.outer:    # closed over from outside the shard_map
      return EMPTY
    return None

  def applies(self, trace):
    """Whether binds on ``trace`` belong to this body (not to a jit/cond/
    scan body traced inside it, nor to an eager evaluation)."""
    while trace is not None:
      if trace is self.trace:
        return True
      if isinstance(trace, DynamicJaxprTrace) and not isinstance(trace, PartialEvalTrace):
        return False
      trace = trace.parent
    return False

  def pvary(self, x, axes):
    from purejax._src.lax.parallel import pvary_p
    return pvary_p.bind(x, axes=self.ordered(axes))


class _State(threading.local):
  def __init__(self):
    self.body = None


_state = _State()


@contextlib.contextmanager
def checking(names, inputs, in_vmas):
  """Tracks vma while a shard_map body is traced on the current trace;
  ``inputs`` are its input tracers, of types ``in_vmas``."""
  body = _Body(core.current_trace(), names)
  for x, v in zip(inputs, in_vmas):
    body.set(x, frozenset(v))
  prev_body, prev_hook = _state.body, core._ctx.bind_hook
  _state.body, core._ctx.bind_hook = body, _hook
  try:
    yield body
  finally:
    _state.body, core._ctx.bind_hook = prev_body, prev_hook


def current():
  return _state.body


# -- the bind hook --------------------------------------------------------------------------

def _hook(prim, args, params):
  body, trace = _state.body, core.current_trace()
  if not body.applies(trace):
    return trace.process_primitive(prim, args, params)
  vmas = [body.vma_of(x) for x in args]
  rule = _rules().get(prim)
  if rule is None:
    rule = _sub_jaxpr_rule if _has_sub_jaxpr(params) else _standard_rule
  prim, args, params, out_vma = rule(body, prim, list(args), vmas, params)
  outs = trace.process_primitive(prim, args, params)
  for out in (outs if prim.multiple_results else [outs]):
    body.set(out, out_vma)
  return outs


def _has_sub_jaxpr(params):
  for value in params.values():
    for v in value if isinstance(value, (tuple, list)) else (value,):
      if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return True
  return False


def _is_array(x):
  return isinstance(x, core.Tracer) or core.is_array_like(x)


def _standard_rule(body, prim, args, vmas, params):
  """All operands vary over the union of their axes (pvary where needed)."""
  if any(v is None for v in vmas):
    return prim, args, params, None
  out = frozenset().union(*vmas)
  args = [body.pvary(x, out - v) if out - v and _is_array(x) else x
          for x, v in zip(args, vmas)]
  return prim, args, params, out


def _sub_jaxpr_rule(body, prim, args, vmas, params):
  if batching.axis_names(prim, params) & body.manual:
    return prim, args, params, None    # see the module docstring
  return _standard_rule(body, prim, args, vmas, params)


def _varying_over(body, x, v, axes):
  """x, pvary'd so that it varies over the manual ones of ``axes``."""
  missing = (frozenset(axes) & body.manual) - v
  return (body.pvary(x, missing) if missing else x), v | missing


def _collective_rule(names_of, reduces):
  """A collective over ``names_of(params)``: its operand must vary over
  them (pvary inserted, as JAX's API does); a reduction makes the result
  invariant over them."""
  def rule(body, prim, args, vmas, params):
    (x,), (v,) = args, vmas
    if v is None:
      return prim, args, params, None
    names = tuple(n for n in names_of(params) if not isinstance(n, int))
    x, v = _varying_over(body, x, v, names)
    return prim, [x], params, (v - frozenset(names) if reduces else v)
  return rule


def _psum_rule(body, prim, args, vmas, params):
  """psum of a value of known type binds psum_invariant (JAX's check_vma
  psum); positional axes, axis_index_groups or a non-mesh axis keep psum."""
  from purejax._src.lax.parallel import psum_invariant_p
  (x,), (v,) = args, vmas
  axes, groups = params["axes"], params["axis_index_groups"]
  if (v is None or groups is not None or any(isinstance(a, int) for a in axes)
      or not frozenset(axes) & body.manual):
    return _collective_rule(lambda p: p["axes"], True)(body, prim, args, vmas, params)
  x, v = _varying_over(body, x, v, axes)
  return psum_invariant_p, [x], dict(axes=tuple(axes)), v - frozenset(axes)


def _pvary_rule(body, prim, args, vmas, params):
  (x,), (v,) = args, vmas
  if v is None:
    return prim, args, params, None
  axes = frozenset(params["axes"])
  if axes & v:
    raise ValueError(
        "pvary is a invariant->variant collective. This means that the axis names "
        "mentioned in `axes` passed to `pvary` must not be present in "
        f"`jax.typeof(inp).mat.varying`. Got axes={params['axes']} and "
        f"jax.typeof(inp)={core.get_aval(x).str_short(short_dtypes=True)}")
  return prim, args, params, v | axes


def _axis_index_rule(body, prim, args, vmas, params):
  return prim, args, params, frozenset({params["axis_name"]}) & body.manual


_RULES = None


def _rules():
  global _RULES
  if _RULES is None:
    from purejax._src.lax import parallel as par
    from purejax._src.lax.parallel_all_to_all import all_to_all_p
    from purejax._src.shard_map import shard_map_p
    axis_name = lambda p: par._as_names(p["axis_name"])
    _RULES = {
        par.psum_p: _psum_rule,
        par.psum_invariant_p: _collective_rule(lambda p: p["axes"], True),
        par.pmax_p: _collective_rule(lambda p: p["axes"], True),
        par.pmin_p: _collective_rule(lambda p: p["axes"], True),
        par.pvary_p: _pvary_rule,
        par.axis_index_p: _axis_index_rule,
        par.all_gather_p: _collective_rule(axis_name, False),
        par.reduce_scatter_p: _collective_rule(axis_name, False),
        par.ppermute_p: _collective_rule(axis_name, False),
        all_to_all_p: _collective_rule(axis_name, False),
        shard_map_p: lambda body, prim, args, vmas, params: (prim, args, params, None),
    }
  return _RULES


# -- the public cast ------------------------------------------------------------------------

def pcast_varying(x, axes):
  """``pcast(x, axes, to='varying')``: pvary, where vma is tracked."""
  body = _state.body
  if body is None or not body.applies(core.current_trace()):
    return x          # untyped (check_vma=False, vmap): a no-op, as JAX's
  v = body.vma_of(x)
  if v is None:
    return x
  axes = frozenset(axes) & body.manual
  if axes and axes <= v:
    raise ValueError("Unsupported pcast from=varying, to='varying'")
  if axes & v:
    raise ValueError(
        "jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
        "unreduced, reduced or invarying state of the input. Got input type: "
        f"{core.get_aval(x).str_short(short_dtypes=True)}, axes: {tuple(axes)}")
  return body.pvary(x, axes) if axes else x


# -- out_specs: outputs must be invariant along the axes their spec omits ------------------

def check_out_specs(fun_name, mesh, out_specs, out_vmas, paths):
  """JAX's error when an output may vary over a mesh axis its out_spec
  does not mention (unknown types are not checked)."""
  from purejax._src.shard_map import _spec_names
  msgs = []
  for spec, vma, path in zip(out_specs, out_vmas, paths):
    if vma is None:
      continue
    mentioned = {n for ns in _spec_names(spec, len(spec)) for n in ns}
    unmentioned = [n for n in mesh.axis_names if n not in mentioned]
    if not set(unmentioned) & vma:
      continue
    where = f"out_specs{path}"
    if len(unmentioned) > 1:
      order = lambda names: ",".join(str(n) for n in mesh.axis_names if n in names)
      msgs.append(
          f"* {where} is {spec} which implies that the corresponding output value is "
          f"only varying across mesh axes {{{order(mentioned)}}} and not "
          f"{{{order(set(unmentioned) & vma)}}}, but it was inferred to be possibly "
          f"varying over {{{order(vma)}}}")
    else:
      msgs.append(
          f"* {where} is {spec} which implies that the corresponding output value is "
          f"replicated across mesh axis '{unmentioned[0]}', but could not infer "
          "replication over any axes")
  if not msgs:
    return
  if len(msgs) == 1:
    msgs = [msgs[0][2:]]
  raise ValueError(
      f"shard_map applied to the function '{fun_name}' was given out_specs which "
      "require replication which can't be statically inferred given the mesh:\n\n"
      f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis "
      f"names {mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
      "Check if these output values are meant to be replicated over those mesh axes. "
      "If not, consider revising the corresponding out_specs entries. If so, consider "
      "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
