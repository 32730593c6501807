"""Names for parts of a program (``named_call``, ``named_scope``) and
``ensure_compile_time_eval``."""
import contextlib
import contextvars

from purejax._src import core
from purejax._src import source_info

# The names of the enclosing named_scope / named_call blocks, outermost first.
_name_stack = contextvars.ContextVar("purejax_name_stack", default=())


def current_name_stack():
  """The enclosing scope names, outermost first (e.g. ``("outer", "inner")``)."""
  return _name_stack.get()


def _name_stack_text():
  return "/".join(current_name_stack())


@contextlib.contextmanager
def named_scope(name):
  """Names the operations traced inside the block, for profilers and debugging.

  As in JAX, the names do not change results nor the default printing of
  jaxprs; ``purejax._src.naming.current_name_stack()`` reads them.
  """
  if not isinstance(name, str):
    raise TypeError("named_scope name argument must be a string.")
  token = _name_stack.set(current_name_stack() + (name,))
  try:
    yield
  finally:
    _name_stack.reset(token)


def named_call(fun, *, name=None):
  """``fun`` running inside ``named_scope(name)`` (default: its ``__name__``).

  JAX no longer stages a separate call for it; neither does purejax, so the
  jaxpr is the one of ``fun``.
  """
  if name is None:
    name = getattr(fun, "__name__", type(fun).__name__)

  @source_info.wraps(fun)
  def named(*args, **kwargs):
    with named_scope(name):
      return fun(*args, **kwargs)
  return named


class _CompileTimeEvalTrace(core.Trace):
  """Runs primitives whose inputs are all concrete eagerly (their results are
  constants of the trace being built); hands the rest to the trace that was
  current when the block began."""

  def __init__(self, parent):
    super().__init__(parent)

  def process_primitive(self, primitive, args, params):
    if not any(isinstance(x, core.Tracer) for x in args):
      with core.set_current_trace(core.eval_trace):
        return core.eval_trace.process_primitive(primitive, args, params)
    with core.set_current_trace(self.parent):
      return self.parent.process_primitive(primitive, args, params)

  def describe_dependence(self, tracer):
    return self.parent.describe_dependence(tracer)


@contextlib.contextmanager
def ensure_compile_time_eval():
  """Inside the block, operations on concrete values run eagerly even under
  ``jit`` (and give concrete Arrays), as in JAX; operations on traced values
  are traced as usual."""
  trace = core.current_trace()
  if trace is core.eval_trace or isinstance(trace, _CompileTimeEvalTrace):
    yield   # already eager
    return
  with core.set_current_trace(_CompileTimeEvalTrace(trace)):
    yield
