"""``jax.extend.core``: the jaxpr IR and ``Primitive``, for extension authors.

``Primitive`` defines a new operation (``def_impl``, ``def_abstract_eval``;
its differentiation and batching rules go in ``jax.interpreters.ad`` and
``batching``).  ``Jaxpr``, ``ClosedJaxpr``, ``JaxprEqn``, ``Var`` and
``Literal`` are purejax's own IR classes, which custom interpreters walk;
``primitives`` holds JAX's standard primitives by their JAX names.

``Effect`` is the base class of effect types, which libraries subclass
(flax.nnx's ``VariableEffect``); purejax records no effects on equations.

Not here (purejax has no equivalent that behaves the same): tokens and
effect sets (``Token``, ``AbstractToken``, ``Effects``), tracing
internals (``TraceTag``, ``gensym``, ``call_impl``, ``CallPrimitive``,
``DebugInfo``) and the ``unsafe_*_DO_NOT_USE`` helpers.
"""
import contextlib as _contextlib

import numpy as _np

from purejax._src.array import Array as _Array
from purejax._src.core import get_aval as _get_aval
from purejax._src.core import find_top_trace, set_current_trace  # noqa: F401
from purejax._src.errors import (  # noqa: F401
    InconclusiveDimensionOperation, JaxprTypeError)
from purejax._src.interpreters.ad import tangent_dtype as primal_dtype_to_tangent_dtype  # noqa: F401
from purejax._src.jaxpr import (  # noqa: F401
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var, jaxpr_as_fun)
from purejax._src.jaxpr import sub_jaxprs as _sub_jaxprs
from purejax._src.jaxpr_check import check_jaxpr  # noqa: F401
from purejax._src.numpy.util import concrete_or_error as _concrete_or_error
from purejax._src.user_primitives import Primitive  # noqa: F401
from purejax.extend.core import primitives  # noqa: F401

# purejax tracks no effects on equations: every set of effects is empty.
no_effects = frozenset()


@_contextlib.contextmanager
def take_current_trace():
  """Yields the current trace, with the eval trace current inside (so that
  a trace's own rules can run operations eagerly, then restore it)."""
  from purejax._src import core as _core
  trace = _core.current_trace()
  with _core.set_current_trace(_core.eval_trace):
    yield trace


class Effect:
  """The base class of effect types (JAX's): a library's subclass names an
  effect; purejax keeps no effect sets, so it is only ever a marker."""


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects,
                  source_info=None, ctx=None):
  """A ``JaxprEqn`` (``effects`` and ``ctx`` are accepted and ignored)."""
  return JaxprEqn(list(invars), list(outvars), primitive, dict(params), source_info)


def jaxprs_in_params(params):
  """The open jaxprs an equation's params hold, in parameter order."""
  return list(_sub_jaxprs(params))


def subjaxprs(jaxpr):
  """The jaxprs the equations of ``jaxpr`` hold (one level deep)."""
  for eqn in jaxpr.eqns:
    yield from _sub_jaxprs(eqn.params)


def valid_jaxtype(x):
  """Whether ``x`` is a value JAX can trace (an array or a scalar)."""
  try:
    _get_aval(x)
  except TypeError:
    return False
  return True


def concrete_or_error(force, val, context=""):
  """``val``'s concrete value (``force`` applied to it, if given), or a
  ConcretizationTypeError naming ``context`` if it is traced."""
  value = _concrete_or_error(val, context)
  return value if force is None else force(value)


def mapped_aval(size, axis, aval):
  """``aval`` with its mapped axis ``axis`` (of length ``size``) removed."""
  if axis is None:
    return aval
  if aval.shape[axis] != size:
    raise ValueError(f"mapped axis {axis} of {aval.str_short()} has size "
                     f"{aval.shape[axis]}, expected {size}")
  return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
  """``aval`` with a new axis of length ``size`` inserted at ``axis``."""
  if axis is None:
    return aval
  return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


# The concrete types purejax takes as arrays.
array_types = (_Array, _np.ndarray, _np.generic, bool, int, float, complex)


class OpaqueTraceState:
  """The trace current when it was taken, compared by identity (flax uses
  it to tell whether values were made under the same transformation)."""
  __slots__ = ("_trace",)

  def __init__(self, trace):
    self._trace = trace

  def __eq__(self, other):
    return isinstance(other, OpaqueTraceState) and self._trace is other._trace

  def __hash__(self):
    return id(self._trace)


def get_opaque_trace_state(convention=None):
  """The current trace, opaquely (``convention`` names the caller, as JAX's)."""
  del convention
  from purejax._src.core import current_trace
  return OpaqueTraceState(current_trace())
