"""The checkify transformation: a trace that carries an error value.

``CheckifyTrace`` applies each primitive on its parent trace, then adds the
automatic checks the user enabled (NaN, division by zero, out-of-bounds
indices) to the error it carries; a ``check`` is folded into the error
instead of being applied.  Primitives with sub-jaxprs (jit, cond,
while_loop, scan) get rules that checkify the sub-jaxprs (see
``control_flow.py``), so an error raised inside a loop or a branch comes out
of it as extra outputs.
"""

import numpy as np

from purejax._src import core
from purejax._src import source_info
from purejax._src import tree_util
from purejax._src.checkify import errors
from purejax._src.checkify.check import check_p, debug_check_p


class CheckifyTracer(core.Tracer):
  __slots__ = ("val",)
  _tracer_name = "CheckifyTracer"

  def __init__(self, trace, val):
    self._trace = trace
    self.val = val

  @property
  def aval(self):
    return core.get_aval(self.val)

  def __repr__(self):
    return f"CheckifyTracer({self.aval.str_short()})"


# primitive -> rule(trace, vals, params) -> outs (the rule adds to trace's error)
higher_order_rules = {}


class CheckifyTrace(core.Trace):

  def __init__(self, parent, enabled):
    super().__init__(parent)
    self.enabled = frozenset(enabled)
    self.error = errors.no_error()

  def lift(self, x):
    if isinstance(x, CheckifyTracer) and x._trace is self:
      return x.val
    if isinstance(x, core.Tracer) and not x._trace.valid:
      raise core.escaped_tracer_error(x)
    return x

  def add_error(self, err):
    with core.set_current_trace(self.parent):
      self.error = errors.merge(self.error, err)

  def process_primitive(self, primitive, args, params):
    vals = [self.lift(a) for a in args]
    with core.set_current_trace(self.parent):
      if primitive is check_p or primitive is debug_check_p:
        if errors.FailedCheckError in self.enabled:
          self._add_user_check(vals, params["site"])
        return []
      rule = higher_order_rules.get(primitive)
      if rule is not None:
        outs = rule(self, vals, params)
      else:
        outs = primitive.bind(*vals, **params)
        from purejax._src.checkify import automatic
        automatic.add_checks(self, primitive, vals, outs, params)
    if primitive.multiple_results:
      return [CheckifyTracer(self, o) for o in outs]
    return CheckifyTracer(self, outs)

  def _add_user_check(self, vals, site):
    from purejax import numpy as jnp
    pred, payload = vals[0], vals[1:]
    self.error = errors.merge(self.error, errors.single(jnp.logical_not(pred), site, payload))

  def add_site(self, failed, site, payload):
    """Adds one site's check (called under the parent trace)."""
    self.error = errors.merge(self.error, errors.single(failed, site, payload))


def run_checkified(fun, args, kwargs, enabled):
  """Runs ``fun(*args, **kwargs)`` under a fresh CheckifyTrace in the current
  trace; returns ``(error, out)``."""
  trace = CheckifyTrace(core.current_trace(), enabled)
  leaves, tree = tree_util.tree_flatten((args, kwargs))
  # Arrays are traced; Python scalars pass through as they are (as in JAX).
  wrapped = [CheckifyTracer(trace, x) if isinstance(x, (core.ArrayBase, np.ndarray, np.generic))
             else x for x in leaves]
  args, kwargs = tree_util.tree_unflatten(tree, wrapped)
  try:
    with core.set_current_trace(trace):
      out = fun(*args, **kwargs)
    out = tree_util.tree_map(trace.lift, out)
    return trace.error, out
  finally:
    trace.invalidate()


def checkify(f, errors=errors.user_checks):
  """``f`` functionalized: returns ``(error, f's output)``, the error
  recording the first failure among the enabled ``errors`` categories."""
  enabled = frozenset(errors)

  @source_info.wraps(f)
  def checked(*args, **kwargs):
    return run_checkified(f, args, kwargs, enabled)

  return checked
