"""What custom_jvp and custom_vjp share.

The values their rules see (``SymbolicZero``, ``CustomVJPPrimal``), their
errors, the handling of a call's arguments, and ``bind_by_trace``, which
decides what a call does under the current trace:

- eagerly it just runs;
- under a JVP trace (jvp, grad, linearize) the custom rule runs in the parent
  trace instead of differentiating the function (see custom_jvp.py and
  custom_vjp.py for what each rule does there);
- under a partial-evaluation trace, known inputs go to the parent; a call on
  unknown (tangent) values is inlined, since the linear part needs no rule;
- any other trace (jit, make_jaxpr, vmap) gets the function traced to a jaxpr
  and staged as a ``custom_jvp_call`` / ``custom_vjp_call`` primitive.  Their
  rules work on that jaxpr, and on the user's rule traced into a jaxpr the
  first time a transformation needs it.
"""
import functools
import inspect

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src import linear_util as lu
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import partial_eval as pe
from purejax._src.interpreters.ad import Zero
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.lax.stop_gradient import stop_gradient_p
from purejax._src.pjit import call_transpose, executable_for, has_unstaged, trace_closed


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

def fun_name(f):
  while isinstance(f, functools.partial):
    f = f.func
  return getattr(f, "__name__", "<unknown>")


class Named:
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


def types_text(tree, avals):
  return str(tree_util.tree_unflatten(tree, [_Text(a.str_short()) for a in avals]))


def same_type(a, b):
  return a.shape == b.shape and a.dtype == b.dtype


def resolve_kwargs(fun, args, kwargs, kind):
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
        f"The input arguments to the {kind}-decorated function {fun_name(fun)} could "
        "not be resolved to positional-only arguments. Binding failed with the error:\n"
        f"{err}") from None
  return bound.args


def split_nondiff(args, nondiff_argnums):
  """(static args in nondiff_argnums order, dynamic args, rebuild(dyn) -> args)."""
  n = len(args)
  nondiff = sorted({i % n for i in nondiff_argnums if -n <= i < n})
  static = [args[i] for i in nondiff_argnums if -n <= i < n]
  dyn = tuple(x for i, x in enumerate(args) if i not in nondiff)

  def rebuild(dyn_args):
    it = iter(dyn_args)
    return tuple(args[i] if i in nondiff else next(it) for i in range(n))

  return static, dyn, rebuild


def stop_gradient_tracers(x):
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


class Call:
  """One call of a custom function on flat arguments: runs the function (and,
  in subclasses, the rules) on leaves, remembering the trees."""

  def __init__(self, fun, static, rebuild, in_tree, symbolic_zeros):
    self.fun = fun
    self.static = static
    self.rebuild = rebuild
    self.in_tree = in_tree
    self.symbolic_zeros = symbolic_zeros
    self.name = fun_name(fun)

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


def bind_by_trace(call, args, jvp_rule, stage):
  """Runs a custom function's call in the way the current trace needs."""
  trace = core.current_trace()
  if type(trace) is core.EvalTrace:
    return call.run_fun(args)
  if isinstance(trace, ad.JVPTrace):
    primals, tangents = zip(*map(trace.lift, args)) if args else ((), ())
    if all(type(t) is Zero for t in tangents):
      with core.set_current_trace(trace.parent):
        return bind_by_trace(call, list(primals), jvp_rule, stage)
    primals_out, tangents_out, out_tree = jvp_rule(trace.parent, call, primals, tangents)
    outs = [p if type(t) is Zero else ad.JVPTracer(trace, p, t)
            for p, t in zip(primals_out, tangents_out)]
    return outs, out_tree
  if isinstance(trace, pe.PartialEvalTrace):
    if all(trace.is_known(x) for x in args):
      with core.set_current_trace(trace.parent):
        return bind_by_trace(call, args, jvp_rule, stage)
    return call.run_fun(args)   # a linear use: inline, the rule isn't needed
  return stage(call, args)


def check_no_closed_over_perturbation(tangents, num_consts, exception):
  if any(type(t) is not Zero for t in tangents[:num_consts]):
    raise exception()   # the rule can't say how the output depends on them


def _inline_partial_eval(trace, args, params):
  """Unknown inputs under linearize: the call is inlined into the linear part."""
  return eval_jaxpr(params["call_jaxpr"].jaxpr, [], *args)


def _call_transpose(cts, *args, call_jaxpr, **params):
  """Transposes the called jaxpr (only reached when a custom function was
  applied to tangents inside a jaxpr that is transposed as a whole)."""
  return call_transpose(cts, *args, jaxpr=call_jaxpr)


def lazy_trace(cache, key, trace):
  """Traces on first use; keeps the result unless it closes over tracers
  (which belong to the trace that was current at the time)."""
  hit = cache.get(key)
  if hit is None:
    hit = trace()
    if not any(isinstance(c, core.Tracer) for c in hit[0].consts):
      cache[key] = hit
  return hit


def _call_impl(*args, call_jaxpr, **_):
  # A custom_jvp/custom_vjp function run eagerly runs as its Python would:
  # a check in it raises if it fails (compiling it would refuse the check).
  if has_unstaged(call_jaxpr):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)
  return executable_for(call_jaxpr)(*args)


class CallPrimitive(core.Primitive):
  """``custom_jvp_call`` / ``custom_vjp_call``.  Jaxpr interpreters written
  against JAX's API re-bind an equation as ``prim.bind(*args,
  **prim.get_bind_params(eqn.params))``: as in JAX, the callee and the
  rules then travel as ``subfuns`` (``linear_util`` functions), and
  ``bind`` takes them back."""

  rule_subfuns = None   # params -> the rules as callables (custom_jvp.py, custom_vjp.py)

  def get_bind_params(self, params):
    funs = [_Callee(params)] + list(self.rule_subfuns(params))
    kept = {k: params[k] for k in ("out_trees", "symbolic_zeros") if k in params}
    return dict(kept, subfuns=tuple(lu.wrap_init(f) for f in funs))

  def bind(self, *args, subfuns=None, **params):
    if subfuns is not None:
      origins = {id(getattr(getattr(f, "f", None), "eqn_params", None)) for f in subfuns}
      callee = getattr(subfuns[0], "f", None)
      if type(callee) is not _Callee or len(origins) != 1:
        raise NotImplementedError(
            f"{self.name}.bind with subfuns other than those its get_bind_params "
            "returned: purejax stages custom derivative calls only from "
            "custom_jvp/custom_vjp functions")
      params = dict(callee.eqn_params, **params)
    return super().bind(*args, **params)


class _Callee:
  """The function a custom_jvp/custom_vjp call calls: its jaxpr, run on the
  call's arguments (its consts first)."""

  def __init__(self, eqn_params):
    self.eqn_params = eqn_params

  def __call__(self, *args):
    closed = self.eqn_params["call_jaxpr"]
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def call_prim(name):
  prim = CallPrimitive(name, multiple_results=True)
  prim.call_jaxpr_param = "call_jaxpr"
  prim.call_shares_names = False    # JAX prints the callee with fresh names
  prim.impl = _call_impl
  prim.abstract_eval = lambda *avals, call_jaxpr, **_: call_jaxpr.out_avals
  prim.partial_eval = _inline_partial_eval
  prim.transpose = _call_transpose
  return prim
