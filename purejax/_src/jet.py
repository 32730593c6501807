"""Taylor-mode differentiation: the jet interpreter behind ``jax.experimental.jet``.

Each value carries a truncated Taylor series: its primal and ``order`` terms
(coefficients, not derivatives: ``jet`` divides the user's derivative terms
by ``k!`` on the way in and multiplies them back on the way out).  A value
whose terms are all zero carries ``zero_series`` and costs nothing; the
primitives it meets run on the parent trace as they are.  Otherwise the
primitive's rule in ``jet_rules`` maps (primals, series) to (primal out,
series out); the rules live in ``jet_rules.py``.

Calls of custom_jvp / custom_vjp functions are traced through: their
function (not their rule) runs on the jet trace, as JAX's jet means to (JAX
0.10.2 raises UnexpectedTracerError there).  A jitted call has a rule: its
jaxpr gets a jet jaxpr, called in its place.
"""
import importlib

from purejax._src import core
from purejax._src import tree_util
from purejax._src.jaxpr import eval_jaxpr


class ZeroTerm:
  """One Taylor term known to be zero."""

  def __repr__(self):
    return "zero_term"


class ZeroSeries:
  """A whole series known to be zero (the value is constant to the jet)."""

  def __repr__(self):
    return "zero_series"


zero_term = ZeroTerm()
zero_series = ZeroSeries()
# Pytree nodes without children, so that they pass through tree utilities.
tree_util.register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)
tree_util.register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)

# primitive -> rule(primals_in, series_in, **params) -> (primal_out, series_out).
# A rule runs in the parent trace and sees every series instantiated (a list
# of ``order`` arrays); it may return ``zero_series`` for an output.
jet_rules = {}


def fact(n):
  """``n!`` as a float array, through the Gamma function (as JAX computes it)."""
  from purejax import lax
  return lax.exp(lax.lgamma(n + 1.))


class JetTracer(core.Tracer):
  __slots__ = ("primal", "terms", "aval")
  _tracer_name = "JetTracer"

  def __init__(self, trace, primal, terms):
    if not (terms is zero_series or isinstance(terms, (list, tuple))):
      raise TypeError(f"jet terms must be a list or tuple, got {type(terms).__name__}")
    self._trace = trace
    self.primal = primal
    self.terms = terms
    try:
      self.aval = core.get_aval(primal)
    except TypeError:
      raise TypeError(f"Argument '{primal}' of type {type(primal)} is not a valid JAX type") from None

  def __repr__(self):
    return f"JetTracer<{self.aval}>"

  __str__ = __repr__


class JetTrace(core.Trace):

  def __init__(self, parent, order):
    super().__init__(parent)
    self.order = order

  def to_primal_terms_pair(self, x):
    """(primal, terms) of any value seen by this trace."""
    if isinstance(x, JetTracer) and x._trace is self:
      return x.primal, x.terms
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    return x, zero_series

  def process_primitive(self, primitive, args, params):
    primals, series = _unzip(map(self.to_primal_terms_pair, args), 2)
    if all(s is zero_series for s in series):
      with core.set_current_trace(self.parent):
        out = primitive.bind(*primals, **params)
      return _wrap(self, primitive, out, zero_series)
    if primitive in _traced_through_calls():
      # Its function runs on this trace; consts of the call are its leading inputs.
      closed = params["call_jaxpr"]
      return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    with core.set_current_trace(self.parent):
      series = [_instantiate(x, s, self.order) for x, s in zip(primals, series)]
      rule = jet_rules.get(primitive)
      if rule is None:
        raise KeyError(primitive)   # JAX's error for a primitive without a rule
      primal_out, series_out = rule(primals, series, **params)
    return _wrap(self, primitive, primal_out, series_out)


def _wrap(trace, primitive, primal_out, series_out):
  if not primitive.multiple_results:
    return JetTracer(trace, primal_out, series_out)
  if series_out is zero_series:
    series_out = [zero_series] * len(primal_out)
  return [JetTracer(trace, p, s) for p, s in zip(primal_out, series_out)]


def _instantiate(x, terms, order):
  """``terms`` as ``order`` arrays (zeros of ``x``'s shape and dtype where zero)."""
  from purejax import numpy as jnp
  if terms is zero_series:
    terms = [zero_term] * order
  shape = core.get_aval(x).shape
  return [jnp.zeros(shape, dtype=jnp.result_type(x)) if t is zero_term else t for t in terms]


def _unzip(pairs, n):
  pairs = list(pairs)
  return tuple([p[i] for p in pairs] for i in range(n))


_calls = None


def _traced_through_calls():
  global _calls
  if _calls is None:
    from purejax._src.custom_jvp import custom_jvp_call_p
    from purejax._src.custom_vjp import custom_vjp_call_p
    _calls = frozenset([custom_jvp_call_p, custom_vjp_call_p])
  return _calls


# ---------------------------------------------------------------------------
# The transformation

def jet_flat(fun, primals, series, order):
  """Runs ``fun`` on jet tracers (series of ``order`` terms each, unscaled).

  Returns ``(primal outs, series outs, out tree)``: ``fun``'s output
  flattened, each output's series instantiated (zeros where zero).
  """
  from purejax import numpy as jnp
  trace = JetTrace(core.current_trace(), order)
  # As JAX: the shorter of primals and series decides how many arguments fun gets.
  tracers = [JetTracer(trace, p, s if s is zero_series else list(s))
             for p, s in zip(primals, series)]
  try:
    with core.set_current_trace(trace):
      out = fun(*tracers)
    leaves, out_tree = tree_util.tree_flatten(out)
    pairs = [trace.to_primal_terms_pair(x) for x in leaves]
  finally:
    trace.invalidate()
  out_primals = [p for p, _ in pairs]
  out_series = [[jnp.zeros_like(p)] * order if s is zero_series else list(s) for p, s in pairs]
  return out_primals, out_series, out_tree


def jet(fun, primals, series, factorial_scaled=True, **_):
  """Taylor-mode differentiation: ``(fun(*primals), series out)``.

  ``series[i]`` holds the derivative terms of argument ``i`` (``primals[i]``'s
  first, second... derivatives along a curve); the result holds those of the
  output, in ``fun``'s output structure.  With ``factorial_scaled=False`` both
  are Taylor coefficients instead (the k-th derivative divided by ``k!``).
  """
  if not callable(fun):
    raise TypeError("the first argument must be callable")
  try:
    order, = set(map(len, series))
  except ValueError:
    raise ValueError("jet terms have inconsistent lengths for different arguments") from None
  for i, (x, terms) in enumerate(zip(primals, series)):
    if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
      raise ValueError(f"primal value at position {i} is not an array")
    for j, t in enumerate(terms):
      if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
        raise ValueError(f"term {j} for argument {i} is not an array")
  if factorial_scaled:
    series = [[t / fact(k + 1) for k, t in enumerate(terms)] for terms in series]
  out_primals, out_series, out_tree = jet_flat(fun, primals, series, order)
  if factorial_scaled:
    out_series = [[t * fact(k + 1) for k, t in enumerate(terms)] for terms in out_series]
  return (tree_util.tree_unflatten(out_tree, out_primals),
          tree_util.tree_unflatten(out_tree, out_series))


def jet2(fun, primals, series, **kwargs):
  """``jet`` on Taylor coefficients (``factorial_scaled=False``): what rules use."""
  return jet(fun, primals, series, factorial_scaled=False, **kwargs)


# The rules (jet_rules.py) register themselves in ``jet_rules`` as they load.
importlib.import_module("purejax._src.jet_rules")
