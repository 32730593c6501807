"""``custom_jvp``: a function whose JVP rule the user defines.

Under a JVP trace the rule runs in the parent trace in place of
differentiating the function.  Staged (jit, make_jaxpr, vmap), the call is a
``custom_jvp_call`` of the function's jaxpr whose ``jvp_jaxpr_fun`` traces
the rule lazily, once per pattern of nonzero input tangents.
"""
import functools

from purejax._src import core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.custom_derivatives_batching import Axis, BatchedJVP
from purejax._src.custom_derivatives_common import (
    Call, CustomJVPException, Named, SymbolicZero, bind_by_trace, call_prim,
    check_no_closed_over_perturbation, fun_name, lazy_trace, resolve_kwargs, same_type,
    split_nondiff, stop_gradient_tracers, types_text, zero_from_primal)
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.ad import Zero
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr
from purejax._src.pjit import batch_jaxpr


class custom_jvp:
  """A function with a custom JVP rule (``defjvp``), used by every
  differentiation transformation instead of differentiating the function."""

  def __init__(self, fun, nondiff_argnums=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = tuple(nondiff_argnums)
    self.jvp = None
    self.symbolic_zeros = False

  def defjvp(self, jvp, symbolic_zeros=False):
    """Sets the rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out,
    tangent_out)``; returns it, so this works as a decorator."""
    self.jvp = jvp
    self.symbolic_zeros = symbolic_zeros
    return jvp

  def defjvps(self, *jvps):
    """One rule per argument, ``jvp_i(g_i, primal_out, *primals)``; the
    output tangent is their sum (``None``: the argument contributes nothing)."""
    if self.nondiff_argnums:
      raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

    def jvp(primals, tangents):
      primal_out = self(*primals)
      parts = [rule(t, primal_out, *primals)
               for rule, t in zip(jvps, tangents) if rule is not None]
      if not parts:
        return primal_out, zero_from_primal(primal_out)
      return primal_out, tree_util.tree_map(_sum_tangents, *parts)

    self.defjvp(jvp)

  def __call__(self, *args, **kwargs):
    name = fun_name(self.fun)
    if self.jvp is None:
      raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
    args = resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
    if self.nondiff_argnums:
      n = len(args)
      nondiff = {i % n for i in self.nondiff_argnums if -n <= i < n}
      args = tuple(stop_gradient_tracers(x) if i in nondiff else x
                   for i, x in enumerate(args))
    if type(core.current_trace()) is core.EvalTrace:
      return self.fun(*args)      # eagerly there is nothing to differentiate
    static, dyn, rebuild = split_nondiff(args, self.nondiff_argnums)
    leaves, in_tree = tree_util.tree_flatten(dyn)
    call = _JVPCall(self, static, rebuild, in_tree)
    outs, out_tree = bind_by_trace(call, leaves, _custom_jvp_jvp_eager, _stage_custom_jvp)
    return tree_util.tree_unflatten(out_tree, outs)


def _sum_tangents(x, *xs):
  for y in xs:
    x = ad.add_tangents(x, y)
  return x


class _JVPCall(Call):
  def __init__(self, custom, static, rebuild, in_tree):
    super().__init__(custom.fun, static, rebuild, in_tree, custom.symbolic_zeros)
    self.rule = custom.jvp
    self.rule_name = fun_name(custom.jvp)

  def run_rule(self, primals, tangents):
    """Calls the rule on flat primals and tangents (Zero where symbolic);
    returns the leaves and trees of its primal and tangent outputs."""
    if self.symbolic_zeros:
      tangents = [SymbolicZero(t.aval) if type(t) is Zero else t for t in tangents]
    else:
      tangents = [ad.instantiate(t) for t in tangents]
    out = self.rule(*self.static, self.in_tree.unflatten(primals),
                    self.in_tree.unflatten(tangents))
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
      raise TypeError(
          f"Custom JVP rule {self.rule_name} for function {self.name} must produce a "
          "pair (list or tuple of length two) representing primal and tangent outputs, "
          f"but got {out}.")
    p_leaves, p_tree = tree_util.tree_flatten(out[0])
    t_leaves, t_tree = tree_util.tree_flatten(out[1])
    return p_leaves, p_tree, t_leaves, t_tree

  def check_tangents(self, p_tree, t_tree, p_leaves, t_leaves):
    if p_tree != t_tree:
      raise TypeError(
          f"Custom JVP rule {self.rule_name} for function {self.name} must produce "
          "primal and tangent outputs with equal container (pytree) structures, but "
          f"got {p_tree} and {t_tree} respectively.")
    return [_rule_tangent(p, t) for p, t in zip(p_leaves, t_leaves)]

  def check_primals(self, p_tree, p_avals, out_tree, out_avals):
    """Under jit the rule's primal output must match the function's."""
    what = ("of the same container/pytree structure", "container/pytree structure")
    if p_tree == out_tree:
      if all(same_type(a, b) for a, b in zip(p_avals, out_avals)):
        return
      what = ("with leaves of the same shape/dtype", "shapes/dtypes of")
    end = "." if p_tree != out_tree else ""
    raise TypeError(
        f"Custom JVP rule {self.rule_name} for function {self.name} must produce a pair "
        "(list or tuple of length two) where the first element represents the primal "
        "output (equal in value to the output of the custom_jvp-decorated function "
        f"{self.name}, and in particular {what[0]}), but instead the JVP rule output's "
        f"first element had {what[1]}:\n    {types_text(p_tree, p_avals)}\nwhile the "
        f"custom_jvp-decorated function {self.name} had output {what[1]}:\n"
        f"    {types_text(out_tree, out_avals)}{end}")


def _rule_tangent(p, t):
  """A rule's output tangent checked against its primal (Zero if symbolic)."""
  if type(t) is SymbolicZero:
    return Zero(t.aval)
  p_aval, t_aval = core.get_aval(p), core.get_aval(t)
  expected = ad.tangent_aval(p_aval)
  if not same_type(t_aval, expected):
    if expected.dtype == dtypes.float0:
      raise TypeError(
          "Custom JVP rule must produce primal and tangent outputs with corresponding "
          f"shapes and dtypes, but got:\n  primal {p_aval.str_short()} with tangent "
          f"{t_aval.str_short()}, expecting tangent {expected.str_short()}")
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding "
        f"shapes and dtypes. Expected {expected.str_short()} (tangent type of "
        f"{p_aval.str_short()}) but got {t_aval.str_short()}.")
  return Zero(expected) if expected.dtype == dtypes.float0 else t


def _custom_jvp_jvp_eager(parent, call, primals, tangents):
  """Under a JVP trace: the user's rule, run in the parent trace."""
  with core.set_current_trace(parent):
    p_leaves, p_tree, t_leaves, t_tree = call.run_rule(primals, tangents)
  return p_leaves, call.check_tangents(p_tree, t_tree, p_leaves, t_leaves), p_tree


def _stage_custom_jvp(call, args):
  in_avals = [core.get_aval(x) for x in args]
  closed, consts, out_tree = call.trace_fun(in_avals)
  lazy = Named(call.rule_name, _LazyJVP(call, in_avals, out_tree, closed.out_avals))
  outs = custom_jvp_call_p.bind(*consts, *args, call_jaxpr=closed, jvp_jaxpr_fun=lazy,
                                num_consts=len(consts), symbolic_zeros=call.symbolic_zeros)
  return outs, out_tree


class _LazyJVP:
  """The JVP rule of a staged call, traced into a jaxpr per pattern of
  nonzero input tangents: (primals, nonzero tangents) -> (primal outs,
  nonzero tangent outs), plus which output tangents are nonzero."""

  def __init__(self, call, in_avals, out_tree, out_avals):
    self.call = call
    self.in_avals = in_avals
    self.out_tree = out_tree
    self.out_avals = out_avals
    self.cache = {}

  def __call__(self, nonzeros):
    return lazy_trace(self.cache, nonzeros, lambda: self._trace(nonzeros))

  def _trace(self, nonzeros):
    call, n = self.call, len(self.in_avals)
    out_nonzeros = []

    def fun(*args):
      nz = iter(args[n:])
      tangents = [next(nz) if k else Zero(ad.tangent_aval(a))
                  for k, a in zip(nonzeros, self.in_avals)]
      p_leaves, p_tree, t_leaves, t_tree = call.run_rule(args[:n], tangents)
      call.check_primals(p_tree, [core.get_aval(p) for p in p_leaves],
                         self.out_tree, self.out_avals)
      t_out = call.check_tangents(p_tree, t_tree, p_leaves, t_leaves)
      out_nonzeros[:] = [type(t) is not Zero for t in t_out]
      return list(p_leaves) + [t for t in t_out if type(t) is not Zero]

    avals = list(self.in_avals) + [ad.tangent_aval(a) for k, a in
                                   zip(nonzeros, self.in_avals) if k]
    jaxpr, consts = pe.trace_to_jaxpr(fun, avals)
    return ClosedJaxpr(jaxpr, consts), tuple(out_nonzeros)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                         symbolic_zeros):
  check_no_closed_over_perturbation(tangents, num_consts, CustomJVPException)
  args, arg_tangents = primals[num_consts:], tangents[num_consts:]
  if not symbolic_zeros:
    arg_tangents = [ad.instantiate(t) for t in arg_tangents]
  nonzeros = tuple(type(t) is not Zero for t in arg_tangents)
  closed, out_nonzeros = jvp_jaxpr_fun.value(nonzeros)
  outs = eval_jaxpr(closed.jaxpr, closed.consts, *args,
                    *[t for t in arg_tangents if type(t) is not Zero])
  n = len(call_jaxpr.out_avals)
  nz = iter(outs[n:])
  # (Zeros typed by the rule's primal outputs: under vmap those may be batched
  # where the function's are not.)
  return outs[:n], [next(nz) if k else Zero.from_primal_value(p)
                    for k, p in zip(out_nonzeros, outs[:n])]


def _custom_jvp_call_batch(trace, vals, dims, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                           symbolic_zeros):
  """Batches the function's jaxpr now and the JVP rule when it is traced;
  the batched call stays a custom_jvp_call, so grad of vmap uses the rule."""
  batched, consts, out_dims = batch_jaxpr(call_jaxpr, trace, dims)
  lazy = BatchedJVP(jvp_jaxpr_fun.value, Axis(trace), dims[num_consts:], out_dims)
  outs = custom_jvp_call_p.bind(
      *consts, *vals, call_jaxpr=batched, jvp_jaxpr_fun=Named(jvp_jaxpr_fun.name, lazy),
      num_consts=len(consts) + num_consts, symbolic_zeros=symbolic_zeros)
  return outs, lazy.out_dims.settle()


_custom_jvp_call_batch.needs_trace = True


class _JVPSubfun:
  """The call's JVP rule as JAX's ``get_bind_params`` hands it out:
  ``(*primals, *tangents) -> [*primal outs, *tangent outs]``, consts leading
  both halves, ``SymbolicZero`` for a zero tangent in or out."""

  def __init__(self, eqn_params):
    self.eqn_params = eqn_params

  def __call__(self, *xs):
    n, odd = divmod(len(xs), 2)
    if odd:
      raise TypeError("the jvp of a custom_jvp_call takes primals and tangents in "
                      f"equal numbers, got {len(xs)} arguments")
    k = self.eqn_params["num_consts"]
    primals, tangents = xs[k:n], xs[n + k:]
    nonzeros = tuple(type(t) is not SymbolicZero for t in tangents)
    closed, out_nonzeros = self.eqn_params["jvp_jaxpr_fun"].value(nonzeros)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *primals,
                      *[t for t, nz in zip(tangents, nonzeros) if nz])
    m = len(out_nonzeros)
    nz = iter(outs[m:])
    return outs[:m] + [next(nz) if k else SymbolicZero(ad.tangent_aval(core.get_aval(p)))
                       for k, p in zip(out_nonzeros, outs[:m])]


custom_jvp_call_p = call_prim("custom_jvp_call")
custom_jvp_call_p.jvp = _custom_jvp_call_jvp
custom_jvp_call_p.batch = _custom_jvp_call_batch
custom_jvp_call_p.rule_subfuns = lambda params: [_JVPSubfun(params)]


def _custom_jvp_call_pp(params):
  pairs = [("name", params["jvp_jaxpr_fun"].value.call.name),
           ("call_jaxpr", params["call_jaxpr"]), ("jvp", params["jvp_jaxpr_fun"])]
  if params["num_consts"]:
    pairs.append(("num_consts", params["num_consts"]))
  return pairs + [("symbolic_zeros", params["symbolic_zeros"])]


custom_jvp_call_p.pp_params = _custom_jvp_call_pp
