"""``jax.core``: the public names of JAX 0.10.2's ``jax.core`` that purejax has.

Exported: AbstractValue, Atom, ParamDict, ShapedArray, Trace, Tracer, Value,
ensure_compile_time_eval, eval_context, eval_jaxpr, max_dim, min_dim.

Deprecated in JAX 0.10 (a ``DeprecationWarning`` on access, as in JAX):
DropVar, InconclusiveDimensionOperation, JaxprTypeError, check_jaxpr,
pytype_aval_mappings (the registry of types whose values are arrays:
type -> aval function, consulted for types purejax does not know), and
(the objects of ``purejax.extend.core``) concrete_or_error, find_top_trace,
jaxprs_in_params, new_jaxpr_eqn, no_effects, primal_dtype_to_tangent_dtype,
valid_jaxtype.

Removed in JAX 0.10 (``AttributeError`` with JAX's message): get_aval,
mapped_aval, unmapped_aval, set_current_trace, take_current_trace,
traverse_jaxpr_params, TraceTag, call_impl, subjaxprs, AbstractToken.

Skipped (in ``jax.core`` as deprecated aliases, but purejax has no
equivalent that behaves the same): CallPrimitive, DebugInfo, Effect, Effects,
gensym, get_opaque_trace_state,
nonempty_axis_env_DO_NOT_USE, the unsafe_*_DO_NOT_USE helpers, JaxprPpContext, JaxprPpSettings, OutputType, abstract_token,
aval_mapping_handlers, call, concretization_function_error,
custom_typechecks, is_concrete, is_constant_dim, is_constant_shape,
literalable_types, no_axis_name, trace_ctx.

Jaxpr, ClosedJaxpr, JaxprEqn, Var, Literal and Primitive are not in JAX
0.10.2's ``jax.core`` (JAX moved them to ``jax.extend.core``), so, as in
JAX, ``purejax.core.Jaxpr`` is an AttributeError.
"""
import typing as _typing
import warnings as _warnings

from purejax._src.core import (
    AbstractValue, ShapedArray, Trace, Tracer, eval_context, max_dim, min_dim)
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.naming import ensure_compile_time_eval
from purejax._src import core as _src_core
from purejax._src import errors as _errors
from purejax._src import jaxpr as _jaxpr
from purejax._src import jaxpr_check as _jaxpr_check

__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer",
           "Value", "ensure_compile_time_eval", "eval_context", "eval_jaxpr",
           "max_dim", "min_dim"]

# Type aliases, as in JAX.
Atom = _typing.Union[_jaxpr.Var, _jaxpr.Literal]
ParamDict = dict[str, _typing.Any]
Value = _typing.Any

_REMOVED = {
    "get_aval": "jax.core.get_aval was deprecated in JAX v0.8.2 and removed in "
                "JAX v0.10.0; use jax.typeof instead.",
    "traverse_jaxpr_params": "jax.core.traverse_jaxpr_params was deprecated in "
                             "JAX v0.8.2 and removed in JAX v0.10.0.",
}
for _name in ("mapped_aval", "unmapped_aval", "set_current_trace",
              "take_current_trace", "TraceTag", "call_impl", "subjaxprs",
              "AbstractToken"):
  _REMOVED[_name] = (f"jax.core.{_name} was deprecated in JAX v0.8.2 and removed "
                     f"in JAX v0.10.0. Use jax.extend.core.{_name}.")
del _name

# name -> (message, value): still there, with a DeprecationWarning.
_DEPRECATED = {
    "DropVar": ("jax.core.DropVar is deprecated. Use jax.extend.core.DropVar.",
                _jaxpr.DropVar),
    "InconclusiveDimensionOperation": (
        "jax.core.InconclusiveDimensionOperation is deprecated. Use "
        "jax.errors.InconclusiveDimensionOperation.",
        _errors.InconclusiveDimensionOperation),
    "JaxprTypeError": ("jax.core.JaxprTypeError is deprecated. Use "
                       "jax.errors.JaxprTypeError.", _errors.JaxprTypeError),
    "check_jaxpr": ("jax.core.check_jaxpr is deprecated. Use "
                    "jax.extend.core.check_jaxpr.", _jaxpr_check.check_jaxpr),
    "pytype_aval_mappings": ("jax.core.pytype_aval_mappings is deprecated.",
                             _src_core.pytype_aval_mappings),
}
for _name in ("concrete_or_error", "find_top_trace", "jaxprs_in_params", "new_jaxpr_eqn",
              "no_effects", "primal_dtype_to_tangent_dtype", "valid_jaxtype"):
  _DEPRECATED[_name] = (f"jax.core.{_name} is deprecated. Use jax.extend.core.{_name}.",
                        None)   # looked up in purejax.extend.core on access
del _name


def __getattr__(name):
  if name in _REMOVED:
    raise AttributeError(_REMOVED[name])
  if name in _DEPRECATED:
    message, value = _DEPRECATED[name]
    if value is None:
      from purejax.extend import core as _extend_core
      value = getattr(_extend_core, name)
    _warnings.warn(message, DeprecationWarning, stacklevel=2)
    return value
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
