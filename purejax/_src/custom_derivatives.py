"""custom_jvp and custom_vjp: functions whose derivatives the user defines.

Where such a function is called decides what happens:

- eagerly it just runs;
- under a JVP trace (jvp, grad, linearize) ``custom_jvp`` runs the user's JVP
  rule in the parent trace instead of differentiating the function, and
  ``custom_vjp`` runs fwd there and binds ``custom_lin`` on the tangents: a
  linear primitive whose transpose calls bwd, so under linearize it lands in
  the linear jaxpr and the backward pass calls bwd;
- under a partial-evaluation trace, known inputs go to the parent; a call on
  unknown (tangent) values is inlined, since the linear part needs no rule;
- any other trace (jit, make_jaxpr, and vmap when it exists) gets the function
  traced to a jaxpr and staged as a ``custom_jvp_call`` / ``custom_vjp_call``
  primitive.  Their rules work on that jaxpr, and on the user's rule traced
  into a jaxpr the first time a transformation needs it.  (A batching rule is
  one more attribute on these primitives.)
"""
import functools
import inspect

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.ad import Zero
from purejax._src.jaxpr import ClosedJaxpr, eval_jaxpr
from purejax._src.lax.stop_gradient import stop_gradient_p
from purejax._src.pjit import call_transpose, executable_for, trace_closed


class CustomJVPException(Exception):
  def __init__(self):
    super().__init__(
        "Detected differentiation of a custom_jvp function with respect to a "
        "closed-over value. That isn't supported because the custom JVP rule only "
        "specifies how to differentiate the custom_jvp function with respect to "
        "explicit input parameters. Try passing the closed-over value into the "
        "custom_jvp function as an argument, and adapting the custom_jvp rule.")


class CustomVJPException(Exception):
  def __init__(self):
    super().__init__(
        "Detected differentiation of a custom_vjp function with respect to a "
        "closed-over value. That isn't supported because the custom VJP rule only "
        "specifies how to differentiate the custom_vjp function with respect to "
        "explicit input parameters. Try passing the closed-over value into the "
        "custom_vjp function as an argument, and adapting the custom_vjp fwd and "
        "bwd rules.")


# ---------------------------------------------------------------------------
# Values the user's rules see

class SymbolicZero:
  """A zero tangent or cotangent, passed to rules defined with
  ``symbolic_zeros=True`` instead of an array of zeros."""

  def __init__(self, aval):
    self.aval = aval

  def __getattr__(self, name):     # shape, dtype, ndim, size...
    if name.startswith("__") or name == "aval":
      raise AttributeError(name)
    return getattr(self.aval, name)

  def __bool__(self):
    return False

  def __repr__(self):
    return "SymbolicZero"

  def instantiate(self):
    return ad.zeros_like_aval(self.aval)

  @staticmethod
  def from_primal_value(x):
    return SymbolicZero(ad.tangent_aval(core.get_aval(x)))


def zero_from_primal(x, symbolic_zeros=False):
  """Zero tangents for the primal pytree ``x`` (symbolic or instantiated)."""
  def zero(leaf):
    z = SymbolicZero.from_primal_value(leaf)
    return z if symbolic_zeros else z.instantiate()
  return tree_util.tree_map(zero, x)


class CustomVJPPrimal:
  """A primal input as a ``symbolic_zeros=True`` fwd rule sees it: its value,
  and whether it is being differentiated."""
  __slots__ = ("value", "perturbed")

  def __init__(self, value, perturbed):
    self.value = value
    self.perturbed = perturbed

  def __repr__(self):
    return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


# ---------------------------------------------------------------------------
# Helpers shared by both decorators

def _fun_name(f):
  while isinstance(f, functools.partial):
    f = f.func
  return getattr(f, "__name__", "<unknown>")


class _Named:
  """A param value that prints as a name in jaxprs (``jvp=f_jvp``)."""
  __slots__ = ("name", "value")

  def __init__(self, name, value):
    self.name = name
    self.value = value

  def __str__(self):
    return self.name

  __repr__ = __str__


class _Text:
  """Prints as its text inside containers (types in error messages)."""
  __slots__ = ("text",)

  def __init__(self, text):
    self.text = text

  def __repr__(self):
    return self.text

  __str__ = __repr__


def _types_text(tree, avals):
  return str(tree_util.tree_unflatten(tree, [_Text(a.str_short()) for a in avals]))


def _same_type(a, b):
  return a.shape == b.shape and a.dtype == b.dtype


def _resolve_kwargs(fun, args, kwargs, kind):
  """Keyword arguments moved to their positions (defaults filled in):
  custom functions are called with positional arguments only."""
  try:
    sig = inspect.signature(fun)
  except (TypeError, ValueError):
    sig = None
  if sig is None:
    if kwargs:
      raise TypeError(f"keyword arguments could not be resolved to positions: {kwargs}")
    return tuple(args)
  try:
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    leftover = [k for k in bound.kwargs if k in kwargs]
    if leftover:
      raise TypeError("The following keyword arguments could not be resolved to "
                      f"positions: {', '.join(leftover)}")
  except TypeError as err:
    raise TypeError(
        f"The input arguments to the {kind}-decorated function {_fun_name(fun)} could "
        "not be resolved to positional-only arguments. Binding failed with the error:\n"
        f"{err}") from None
  return bound.args


def _split_nondiff(args, nondiff_argnums):
  """(static args in nondiff_argnums order, dynamic args, rebuild(dyn) -> args)."""
  n = len(args)
  nondiff = sorted({i % n for i in nondiff_argnums if -n <= i < n})
  static = [args[i] for i in nondiff_argnums if -n <= i < n]
  dyn = tuple(x for i, x in enumerate(args) if i not in nondiff)

  def rebuild(dyn_args):
    it = iter(dyn_args)
    return tuple(args[i] if i in nondiff else next(it) for i in range(n))

  return static, dyn, rebuild


def _stop_gradient_tracers(x):
  """Non-differentiable arguments of custom_jvp: a tracer in one gets its
  gradient stopped (concrete values have none anyway)."""
  def stop(leaf):
    if isinstance(leaf, core.Tracer) and dtypes.issubdtype(leaf.dtype, np.inexact):
      leaf = stop_gradient_p.bind(leaf)
      # Unperturbed JVP tracers stand for their primals: unwrapped, the rule
      # (run in the parent trace) may use the value.
      while isinstance(leaf, ad.JVPTracer) and type(leaf.tangent) is Zero:
        leaf = leaf.primal
    return leaf
  return tree_util.tree_map(stop, x)


class _Call:
  """One call of a custom function on flat arguments: runs the function (and,
  in subclasses, the rules) on leaves, remembering the trees."""

  def __init__(self, fun, static, rebuild, in_tree, symbolic_zeros):
    self.fun = fun
    self.static = static
    self.rebuild = rebuild
    self.in_tree = in_tree
    self.symbolic_zeros = symbolic_zeros
    self.name = _fun_name(fun)

  def run_fun(self, leaves):
    out = self.fun(*self.rebuild(self.in_tree.unflatten(leaves)))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    return out_leaves, out_tree

  def trace_fun(self, in_avals):
    """The function as a jaxpr; its consts become leading arguments."""
    box = []

    def flat(*leaves):
      out_leaves, out_tree = self.run_fun(leaves)
      box.append(out_tree)
      return out_leaves

    closed, consts = trace_closed(flat, in_avals)
    return closed, consts, box[0]


def _bind_by_trace(call, args, jvp_rule, stage):
  """Runs a custom function's call in the way the current trace needs."""
  trace = core.current_trace()
  if type(trace) is core.EvalTrace:
    return call.run_fun(args)
  if isinstance(trace, ad.JVPTrace):
    primals, tangents = zip(*map(trace.lift, args)) if args else ((), ())
    if all(type(t) is Zero for t in tangents):
      with core.set_current_trace(trace.parent):
        return _bind_by_trace(call, list(primals), jvp_rule, stage)
    primals_out, tangents_out, out_tree = jvp_rule(trace.parent, call, primals, tangents)
    outs = [p if type(t) is Zero else ad.JVPTracer(trace, p, t)
            for p, t in zip(primals_out, tangents_out)]
    return outs, out_tree
  if isinstance(trace, pe.PartialEvalTrace):
    if all(trace.is_known(x) for x in args):
      with core.set_current_trace(trace.parent):
        return _bind_by_trace(call, args, jvp_rule, stage)
    return call.run_fun(args)   # a linear use: inline, the rule isn't needed
  return stage(call, args)


def _check_no_closed_over_perturbation(tangents, num_consts, exception):
  if any(type(t) is not Zero for t in tangents[:num_consts]):
    raise exception()   # the rule can't say how the output depends on them


def _inline_partial_eval(trace, args, params):
  """Unknown inputs under linearize: the call is inlined into the linear part."""
  return eval_jaxpr(params["call_jaxpr"].jaxpr, [], *args)


def _call_transpose(cts, *args, call_jaxpr, **params):
  """Transposes the called jaxpr (only reached when a custom function was
  applied to tangents inside a jaxpr that is transposed as a whole)."""
  return call_transpose(cts, *args, jaxpr=call_jaxpr)


def _lazy_trace(cache, key, trace):
  """Traces on first use; keeps the result unless it closes over tracers
  (which belong to the trace that was current at the time)."""
  hit = cache.get(key)
  if hit is None:
    hit = trace()
    if not any(isinstance(c, core.Tracer) for c in hit[0].consts):
      cache[key] = hit
  return hit


def _call_prim(name):
  prim = core.Primitive(name, multiple_results=True)
  prim.call_jaxpr_param = "call_jaxpr"
  prim.call_shares_names = False    # JAX prints the callee with fresh names
  prim.impl = lambda *args, call_jaxpr, **_: executable_for(call_jaxpr)(*args)
  prim.abstract_eval = lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals
  prim.partial_eval = _inline_partial_eval
  prim.transpose = _call_transpose
  return prim


# ---------------------------------------------------------------------------
# custom_jvp

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
    name = _fun_name(self.fun)
    if self.jvp is None:
      raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
    args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
    if self.nondiff_argnums:
      n = len(args)
      nondiff = {i % n for i in self.nondiff_argnums if -n <= i < n}
      args = tuple(_stop_gradient_tracers(x) if i in nondiff else x
                   for i, x in enumerate(args))
    if type(core.current_trace()) is core.EvalTrace:
      return self.fun(*args)      # eagerly there is nothing to differentiate
    static, dyn, rebuild = _split_nondiff(args, self.nondiff_argnums)
    leaves, in_tree = tree_util.tree_flatten(dyn)
    call = _JVPCall(self, static, rebuild, in_tree)
    outs, out_tree = _bind_by_trace(call, leaves, _custom_jvp_jvp_eager, _stage_custom_jvp)
    return tree_util.tree_unflatten(out_tree, outs)


def _sum_tangents(x, *xs):
  for y in xs:
    x = ad.add_tangents(x, y)
  return x


class _JVPCall(_Call):
  def __init__(self, custom, static, rebuild, in_tree):
    super().__init__(custom.fun, static, rebuild, in_tree, custom.symbolic_zeros)
    self.rule = custom.jvp
    self.rule_name = _fun_name(custom.jvp)

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
      if all(_same_type(a, b) for a, b in zip(p_avals, out_avals)):
        return
      what = ("with leaves of the same shape/dtype", "shapes/dtypes of")
    end = "." if p_tree != out_tree else ""
    raise TypeError(
        f"Custom JVP rule {self.rule_name} for function {self.name} must produce a pair "
        "(list or tuple of length two) where the first element represents the primal "
        "output (equal in value to the output of the custom_jvp-decorated function "
        f"{self.name}, and in particular {what[0]}), but instead the JVP rule output's "
        f"first element had {what[1]}:\n    {_types_text(p_tree, p_avals)}\nwhile the "
        f"custom_jvp-decorated function {self.name} had output {what[1]}:\n"
        f"    {_types_text(out_tree, out_avals)}{end}")


def _rule_tangent(p, t):
  """A rule's output tangent checked against its primal (Zero if symbolic)."""
  if type(t) is SymbolicZero:
    return Zero(t.aval)
  p_aval, t_aval = core.get_aval(p), core.get_aval(t)
  expected = ad.tangent_aval(p_aval)
  if not _same_type(t_aval, expected):
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
  lazy = _Named(call.rule_name, _LazyJVP(call, in_avals, out_tree, closed.out_avals))
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
    return _lazy_trace(self.cache, nonzeros, lambda: self._trace(nonzeros))

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
  _check_no_closed_over_perturbation(tangents, num_consts, CustomJVPException)
  args, arg_tangents = primals[num_consts:], tangents[num_consts:]
  if not symbolic_zeros:
    arg_tangents = [ad.instantiate(t) for t in arg_tangents]
  nonzeros = tuple(type(t) is not Zero for t in arg_tangents)
  closed, out_nonzeros = jvp_jaxpr_fun.value(nonzeros)
  outs = eval_jaxpr(closed.jaxpr, closed.consts, *args,
                    *[t for t in arg_tangents if type(t) is not Zero])
  n = len(call_jaxpr.out_avals)
  nz = iter(outs[n:])
  return outs[:n], [next(nz) if k else Zero(ad.tangent_aval(a))
                    for k, a in zip(out_nonzeros, call_jaxpr.out_avals)]


custom_jvp_call_p = _call_prim("custom_jvp_call")
custom_jvp_call_p.jvp = _custom_jvp_call_jvp


def _custom_jvp_call_pp(params):
  pairs = [("name", params["jvp_jaxpr_fun"].value.call.name),
           ("call_jaxpr", params["call_jaxpr"]), ("jvp", params["jvp_jaxpr_fun"])]
  if params["num_consts"]:
    pairs.append(("num_consts", params["num_consts"]))
  return pairs + [("symbolic_zeros", params["symbolic_zeros"])]


custom_jvp_call_p.pp_params = _custom_jvp_call_pp


# ---------------------------------------------------------------------------
# custom_vjp

class custom_vjp:
  """A function with a custom VJP: ``fwd`` computes the output and residuals,
  ``bwd`` maps residuals and output cotangents to input cotangents."""

  def __init__(self, fun, nondiff_argnums=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = tuple(nondiff_argnums)
    self.fwd = None
    self.bwd = None
    self.symbolic_zeros = False
    self.optimize_remat = False

  def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
    """``fwd(*args) -> (out, residuals)``; ``bwd(*nondiff_args, residuals,
    out_cotangent) -> tuple of input cotangents`` (``None`` for zeros)."""
    self.fwd = fwd
    self.bwd = bwd
    self.symbolic_zeros = symbolic_zeros
    self.optimize_remat = optimize_remat   # accepted; residuals are always saved

  def __call__(self, *args, **kwargs):
    name = _fun_name(self.fun)
    if self.fwd is None:
      raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
    args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
    n = len(args)
    for i in self.nondiff_argnums:
      if -n <= i < n and any(isinstance(x, core.Tracer)
                             for x in tree_util.tree_leaves(args[i])):
        raise errors.UnexpectedTracerError(
            "Found a JAX Tracer object passed as an argument to a custom_vjp function "
            "in a position indicated by nondiff_argnums as non-differentiable. Tracers "
            "cannot be passed as non-differentiable arguments to custom_vjp functions; "
            "instead, nondiff_argnums should only be used for arguments that can't be "
            "or contain JAX tracers, e.g. function-valued arguments. In particular, "
            "array-valued arguments should typically not be indicated as nondiff_argnums.")
    if type(core.current_trace()) is core.EvalTrace:
      return self.fun(*args)
    static, dyn, rebuild = _split_nondiff(args, self.nondiff_argnums)
    leaves, in_tree = tree_util.tree_flatten(dyn)
    call = _VJPCall(self, static, rebuild, in_tree, leaves)
    outs, out_tree = _bind_by_trace(call, leaves, _custom_vjp_jvp_eager, _stage_custom_vjp)
    return tree_util.tree_unflatten(out_tree, outs)


class _VJPCall(_Call):
  def __init__(self, custom, static, rebuild, in_tree, leaves):
    super().__init__(custom.fun, static, rebuild, in_tree, custom.symbolic_zeros)
    self.fwd, self.bwd = custom.fwd, custom.bwd
    self.fwd_name, self.bwd_name = _fun_name(custom.fwd), _fun_name(custom.bwd)
    self.in_avals = [core.get_aval(x) for x in leaves]
    self.num_args = len(in_tree.children())

  def run_fwd(self, primals, in_zeros):
    """fwd on flat primals: (primal out leaves, primal tree, residual leaves,
    residual tree)."""
    if self.symbolic_zeros:
      primals = [CustomVJPPrimal(p, not z) for p, z in zip(primals, in_zeros)]
    out = self.fwd(*self.rebuild(self.in_tree.unflatten(primals)))
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
      raise TypeError(
          f"Custom VJP fwd rule {self.fwd_name} for function {self.name} must produce a "
          "pair (list or tuple of length two) where the first element represents the "
          f"primal output (equal to those of the custom_vjp-decorated function "
          f"{self.name}) and the second element represents residuals (i.e. values "
          "stored from the forward pass for use on the backward pass), but instead of "
          f"a pair the fwd rule {self.fwd_name} produced {out}.")
    p_leaves, p_tree = tree_util.tree_flatten(out[0])
    res_leaves, res_tree = tree_util.tree_flatten(out[1])
    return p_leaves, p_tree, res_leaves, res_tree

  def check_primals(self, p_tree, p_avals, out_tree, out_avals):
    what = "container/pytree structure"
    if p_tree == out_tree:
      if all(_same_type(a, b) for a, b in zip(p_avals, out_avals)):
        return
      what = "shapes/dtypes of"
    end = "." if p_tree != out_tree else ""
    raise TypeError(
        f"Custom VJP fwd rule {self.fwd_name} for function {self.name} must produce a "
        "pair (list or tuple of length two) where the first element represents the "
        "primal output (equal to the output of the custom_vjp-decorated function "
        f"{self.name}) and the second element represents residuals (i.e. values stored "
        "from the forward pass for use on the backward pass), but instead the fwd rule "
        f"output's first element had {what}:\n    {_types_text(p_tree, p_avals)}\n"
        f"while the custom_vjp-decorated function {self.name} had output {what}:\n"
        f"    {_types_text(out_tree, out_avals)}{end}")

  def run_bwd(self, res, cts):
    """bwd on a residual pytree and output cotangents; returns one cotangent
    per flat input (Zero where bwd said None, or the input is an integer)."""
    out = self.bwd(*self.static, res, cts)
    if isinstance(out, list) and len(out) == self.num_args:
      out = tuple(out)
    dummy = self.in_tree.unflatten(range(self.in_tree.num_leaves))
    primal_paths = [p for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    matched = _match_cotangents(out, primal_paths) if isinstance(out, tuple) else None
    if matched is None or len(out) != self.num_args:
      raise TypeError(
          "Custom VJP bwd rule must produce an output with the same container (pytree) "
          "structure as the args tuple of the primal function, and in particular must "
          "produce a tuple of length equal to the number of arguments to the primal "
          f"function, but got bwd output structure {tree_util.tree_structure(out)} for "
          f"primal input structure {self.in_tree}.")
    results = []
    for path, ct, aval in zip(primal_paths, matched, self.in_avals):
      t_aval = ad.tangent_aval(aval)
      if ct is None or t_aval.dtype == dtypes.float0 or type(ct) is SymbolicZero:
        results.append(Zero(t_aval))
        continue
      ct_aval = core.get_aval(ct)
      if ct_aval.shape != aval.shape:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args "
            f"tuple of the primal function, but at output{tree_util.keystr(path)} the "
            f"bwd rule produced an output of type {ct_aval.str_short()} corresponding "
            f"to an input of type {aval.str_short()}, so the shapes do not match")
      results.append(ct)
    return results


def _match_cotangents(out, primal_paths):
  """bwd's output leaf for each primal leaf path, where a ``None`` stands for
  a whole subtree of zeros; None if the structures don't match."""
  items = tree_util.tree_flatten_with_path(out, is_leaf=lambda x: x is None)[0]
  matched, i = [], 0
  for path, leaf in items:
    if leaf is None:
      while i < len(primal_paths) and primal_paths[i][:len(path)] == path:
        matched.append(None)
        i += 1
    elif i < len(primal_paths) and primal_paths[i] == path:
      matched.append(leaf)
      i += 1
    else:
      return None
  return matched if i == len(primal_paths) else None


class _Bwd:
  """The ``bwd`` param of custom_lin: bwd on flat residuals and cotangents."""

  def __init__(self, call, res_tree, out_tree):
    self.call = call
    self.res_tree = res_tree
    self.out_tree = out_tree

  def __call__(self, res, cts):
    return self.call.run_bwd(self.res_tree.unflatten(res), self.out_tree.unflatten(cts))

  def __str__(self):
    return self.call.bwd_name

  __repr__ = __str__


def _bind_custom_lin(call, primals_out, res, res_tree, out_tree, tangents):
  """The output tangents of a custom_vjp call: ``custom_lin`` of the input
  tangents, which can only be transposed (its transpose runs bwd)."""
  in_zeros = tuple(type(t) is Zero for t in tangents)
  out_avals = tuple(ad.tangent_aval(core.get_aval(p)) for p in primals_out)
  outs = custom_lin_p.bind(*res, *[t for t in tangents if type(t) is not Zero],
                           num_res=len(res), bwd=_Bwd(call, res_tree, out_tree),
                           out_avals=out_avals, symbolic_zeros=call.symbolic_zeros,
                           in_zeros=in_zeros)
  return [Zero(a) if a.dtype == dtypes.float0 else t for t, a in zip(outs, out_avals)]


def _custom_vjp_jvp_eager(parent, call, primals, tangents):
  """Under a JVP trace: fwd runs in the parent trace; custom_lin stands for
  the tangents."""
  in_zeros = [type(t) is Zero for t in tangents]
  with core.set_current_trace(parent):
    p_leaves, p_tree, res, res_tree = call.run_fwd(primals, in_zeros)
    t_out = _bind_custom_lin(call, p_leaves, res, res_tree, p_tree, tangents)
  return p_leaves, t_out, p_tree


def _stage_custom_vjp(call, args):
  in_avals = [core.get_aval(x) for x in args]
  closed, consts, out_tree = call.trace_fun(in_avals)
  fwd = _Named(call.fwd_name, _LazyFwd(call, in_avals, out_tree, closed.out_avals))
  outs = custom_vjp_call_p.bind(
      *consts, *args, call_jaxpr=closed, fwd_jaxpr_thunk=fwd, num_consts=len(consts),
      bwd=_Named(call.bwd_name, call), out_trees=out_tree,
      symbolic_zeros=call.symbolic_zeros)
  return outs, out_tree


class _LazyFwd:
  """fwd of a staged call traced into a jaxpr (per pattern of zero input
  tangents, which a symbolic-zeros fwd sees): primals -> (primal outs,
  residuals), plus the residuals' tree."""

  def __init__(self, call, in_avals, out_tree, out_avals):
    self.call = call
    self.in_avals = in_avals
    self.out_tree = out_tree
    self.out_avals = out_avals
    self.cache = {}

  def __call__(self, in_zeros):
    key = in_zeros if self.call.symbolic_zeros else None
    return _lazy_trace(self.cache, key, lambda: self._trace(in_zeros))

  def _trace(self, in_zeros):
    call, res_tree = self.call, []

    def fun(*primals):
      p_leaves, p_tree, res, tree = call.run_fwd(primals, in_zeros)
      call.check_primals(p_tree, [core.get_aval(p) for p in p_leaves],
                         self.out_tree, self.out_avals)
      res_tree[:] = [tree]
      return list(p_leaves) + list(res)

    jaxpr, consts = pe.trace_to_jaxpr(fun, self.in_avals)
    return ClosedJaxpr(jaxpr, consts), res_tree[0]


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr_thunk, num_consts,
                         bwd, out_trees, symbolic_zeros):
  _check_no_closed_over_perturbation(tangents, num_consts, CustomVJPException)
  args, arg_tangents = primals[num_consts:], tangents[num_consts:]
  in_zeros = tuple(type(t) is Zero for t in arg_tangents)
  closed, res_tree = fwd_jaxpr_thunk.value(in_zeros)
  outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
  n = len(call_jaxpr.out_avals)
  t_out = _bind_custom_lin(bwd.value, outs[:n], outs[n:], res_tree, out_trees, arg_tangents)
  return outs[:n], t_out


custom_vjp_call_p = _call_prim("custom_vjp_call")
custom_vjp_call_p.jvp = _custom_vjp_call_jvp


def _custom_vjp_call_pp(params):
  pairs = [("name", params["bwd"].value.name), ("bwd", params["bwd"]),
           ("call_jaxpr", params["call_jaxpr"]), ("fwd", params["fwd_jaxpr_thunk"])]
  if params["num_consts"]:
    pairs.append(("num_consts", params["num_consts"]))
  return pairs + [("symbolic_zeros", params["symbolic_zeros"])]


custom_vjp_call_p.pp_params = _custom_vjp_call_pp


# ---------------------------------------------------------------------------
# custom_lin: the linear stand-in for a custom_vjp function's tangents

def _custom_lin_error(*args, **params):
  raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_abstract_eval(*avals, out_avals, **params):
  return list(out_avals)


def _custom_lin_transpose(cts, *invals, num_res, bwd, out_avals, symbolic_zeros, in_zeros):
  res = list(invals[:num_res])
  if symbolic_zeros:
    cts = [SymbolicZero(ct.aval) if type(ct) is Zero else ct for ct in cts]
  else:
    cts = [ad.instantiate(ct) for ct in cts]
  cts_in = bwd(res, cts)
  return [None] * num_res + [ct for ct, z in zip(cts_in, in_zeros) if not z]


custom_lin_p = core.Primitive("custom_lin", multiple_results=True)
custom_lin_p.impl = _custom_lin_error      # only transposing it has a meaning
custom_lin_p.abstract_eval = _custom_lin_abstract_eval
custom_lin_p.jvp = _custom_lin_error
custom_lin_p.transpose = _custom_lin_transpose
custom_lin_p.is_linear = True
custom_lin_p.pp_params = lambda params: [
    ("bwd", params["bwd"]), ("in_zeros", list(params["in_zeros"])),
    ("num_res", params["num_res"]), ("symbolic_zeros", params["symbolic_zeros"])]
