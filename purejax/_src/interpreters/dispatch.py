"""Eager execution: applying one primitive to concrete values.

This is the hot path of op-by-op mode, so it avoids everything it can: the
abstract-eval rule is cached per (avals, params), the NumPy result is
wrapped without copying, and the flags it reads are cached until a flag
changes.  ``eager_binary`` / ``eager_unary`` go further for jnp's
elementwise functions: per operand types they decide once whether
promotion is a no-op, and if so run the primitive's NumPy implementation
directly.
"""
import math

import numpy as np

from purejax._src import core, debug_nans, devices, dtypes, fp_errors
from purejax._src import mesh_context
from purejax._src.array import Array, place_on_mesh, wrap_numpy
from purejax._src.config import config
from purejax._src.random.keys import PRNGKeyArray

_ctx = core._ctx
_eval_trace = core.eval_trace

# Caches that depend on flags (promotion mode, x64, debug_nans...); emptied
# whenever a flag changes.
_flag_caches = []
_debug_special = False


# JAX_PLATFORMS names a GPU, or jax.default_device is set: the default
# device may be a GPU (or a platform absent here, which raises).
_default_may_be_off_host = False


# Either of the above, or jax.no_execution set: eager operations check which.
_eager_special = False


def _on_config_change():
  global _debug_special, _default_may_be_off_host, _eager_special
  _debug_special = bool(config.jax_debug_nans or config.jax_debug_infs)
  _default_may_be_off_host = devices.platforms_name_gpu() or config.jax_default_device is not None
  _eager_special = _default_may_be_off_host or config.jax_no_execution
  for cache in _flag_caches:
    cache.clear()


_on_config_change()
config.add_watcher(_on_config_change)


def refuse_execution(name):
  """JAX's error for running anything under ``jax.no_execution``."""
  raise RuntimeError(f"JAX tried to execute function jit({name}), but the no_execution config "
                     "option is set")


def _concrete_arg(primitive, position, x):
  """(numpy value, aval) of an eager argument that is not an Array."""
  aval = eager_aval(primitive, position, x)
  return np.asarray(x, dtype=aval.dtype), aval


def eager_aval(primitive, position, x):
  """The aval of an eager argument that is not an Array; JAX's TypeError
  for a value that is no JAX type."""
  if isinstance(x, core.Tracer):
    raise core.escaped_tracer_error(x)
  try:
    return core.get_aval(x)
  except TypeError:
    raise TypeError(
        f"Error interpreting argument to {primitive.name} as a JAX value. The problematic "
        f"value is of type {type(x)} and was passed to {primitive.name} at position "
        f"{position}.\n") from None


def unaliased(out, foreign, multiple_results):
  """``out`` (one array or a list), with every array sharing memory with
  one of the caller's NumPy arrays ``foreign`` copied: an Array never
  aliases (nor freezes) memory the caller may write."""
  def copy_if_shared(o):
    # A fresh result owns its memory (base None): the common case, no check.
    if isinstance(o, np.ndarray) and any(
        o is f or (o.base is not None and np.may_share_memory(o, f)) for f in foreign):
      return o.copy()
    return o
  if multiple_results:
    return [copy_if_shared(o) for o in out]
  return copy_if_shared(out)


def _apply_to_keys(primitive, args, params):
  from purejax._src.random.key_lowering import apply_eager
  return apply_eager(primitive, args, params)


def apply_primitive(primitive, args, params):
  """``primitive`` applied to concrete arguments (the eval trace's rule)."""
  if _eager_special:
    if config.jax_no_execution:
      refuse_execution(primitive.name)
    if _default_may_be_off_host and devices.gpu_is_default():   # everything runs on the GPU
      from purejax._src import gpu_dispatch
      return gpu_dispatch.apply_primitive(primitive, args, params)
  vals, avals = [], []
  foreign = None   # the caller's NumPy arrays among the arguments
  for i, x in enumerate(args):
    if type(x) is Array:
      v = x._value
      if type(v) is not np.ndarray:   # on a GPU: run there
        from purejax._src import gpu_dispatch
        return gpu_dispatch.apply_primitive(primitive, args, params)
      vals.append(v)
      avals.append(x.aval)
    else:
      if type(x) is PRNGKeyArray:   # typed keys: their own path (key_lowering)
        return _apply_to_keys(primitive, args, params)
      val, aval = _concrete_arg(primitive, i, x)
      vals.append(val)
      avals.append(aval)
      if isinstance(x, np.ndarray):
        foreign = (foreign or []) + [x]
  out_avals = primitive.eval_avals(tuple(avals), params)
  token = fp_errors.ignore()
  try:
    out = primitive.impl(*vals, **params)
  finally:
    fp_errors.restore(token)
  if foreign:
    out = unaliased(out, foreign, primitive.multiple_results)
  try:
    if primitive.multiple_results:
      results = [wrap_numpy(o, a) for o, a in zip(out, out_avals)]
    else:
      results = wrap_numpy(out, out_avals)
  except TypeError:   # a key dtype output (a call returning keys) holds key data
    if not any(dtypes.is_extended(a.dtype) for a in
               (out_avals if primitive.multiple_results else [out_avals])):
      raise
    from purejax._src.random.key_lowering import wrap_outputs
    if not primitive.multiple_results:
      return wrap_outputs([out], [out_avals])[0]
    return wrap_outputs([o if dtypes.is_extended(a.dtype) else wrap_numpy(o, a)
                         for o, a in zip(out, out_avals)], out_avals)
  if _debug_special:
    check_special(primitive.name, results if primitive.multiple_results else [results],
                  vals, primitive, params)
  if mesh_context.mesh_is_set and primitive.name in _PUT_LIKE and not args[0].committed:
    place_on_mesh(results, per_dimension=False)   # JAX moves the value there: P()
  return results


# A conversion or copy of an uncommitted array, under a mesh, is a put.
_PUT_LIKE = frozenset({"convert_element_type", "copy", "copy_p"})


def check_special(name, arrays, operands=(), primitive=None, params=None):
  """``jax_debug_nans`` / ``jax_debug_infs``: fail on the op that made one
  (``operands``: its NumPy inputs, named in the message)."""
  debug_nans.check_eager(name, operands, [x._value for x in arrays], primitive, params)


# ---------------------------------------------------------------------------
# The eager fast path of jnp's elementwise functions

_MAX_PLANS = 1024
_ignore, _restore = fp_errors.ignore, fp_errors.restore


def eager_binary(make_plan):
  """``fast(x, y)``: the eager result of a binary jnp function, or None when
  the general path must run (a trace is active, an operand needs promotion,
  an error is to be raised...).

  ``make_plan(x, y)`` is asked once per (type or aval of x, of y) with
  operands that are Arrays or Python ints/floats; it returns
  ``(primitive, x_converter, y_converter)`` when the general path would apply
  ``primitive`` to the operands, converting a Python scalar with its
  ``ScalarConverter`` (None for an Array, which is used as it is), or None.
  """
  plans = {}
  _flag_caches.append(plans)

  def fast(x, y):
    if _ctx.trace is not _eval_trace or _eager_special:
      return None
    tx, ty = type(x), type(y)
    key = (x.aval if tx is Array else tx, y.aval if ty is Array else ty)
    plan = plans.get(key)
    if plan is None:
      if len(plans) >= _MAX_PLANS:
        plans.clear()
      plan = plans[key] = _binary_plan(make_plan, x, y)
    if plan is False:
      return None
    impl, out_aval, name, conv_x, conv_y = plan
    xv = x._value if conv_x is None else conv_x(x)
    yv = y._value if conv_y is None else conv_y(y)
    if type(xv) is not np.ndarray or type(yv) is not np.ndarray:   # None, or on a GPU
      return None
    token = _ignore()
    try:
      out = wrap_numpy(impl(xv, yv), out_aval)
    finally:
      _restore(token)
    if _debug_special:
      check_special(name, [out], (xv, yv))
    return out

  return fast


def _binary_plan(make_plan, x, y):
  for v in (x, y):
    if type(v) is not Array and type(v) is not int and type(v) is not float:
      return False
  try:
    plan = make_plan(x, y)
  except Exception:   # noqa: BLE001  (the general path raises it properly)
    return False
  if plan is None:
    return False
  prim, conv_x, conv_y = plan
  avals = tuple(v.aval if conv is None else conv.aval
                for v, conv in ((x, conv_x), (y, conv_y)))
  out_aval = _out_aval(prim, avals)
  return False if out_aval is None else (prim.impl, out_aval, prim.name, conv_x, conv_y)


def eager_unary(make_plan):
  """``fast(x)`` for an Array ``x``: the eager result of a unary jnp
  function, or None when the general path must run.  ``make_plan(x)``,
  asked once per aval, gives the primitive the general path would apply to
  ``x`` as it is, or None."""
  plans = {}
  _flag_caches.append(plans)

  def fast(x):
    if _ctx.trace is not _eval_trace or _eager_special:
      return None
    plan = plans.get(x.aval)
    if plan is None:
      if len(plans) >= _MAX_PLANS:
        plans.clear()
      plan = plans[x.aval] = _unary_plan(make_plan, x)
    if plan is False:
      return None
    impl, out_aval, name = plan
    xv = x._value
    if type(xv) is not np.ndarray:   # on a GPU
      return None
    token = _ignore()
    try:
      out = wrap_numpy(impl(xv), out_aval)
    finally:
      _restore(token)
    if _debug_special:
      check_special(name, [out], (xv,))
    return out

  return fast


def _unary_plan(make_plan, x):
  try:
    prim = make_plan(x)
  except Exception:   # noqa: BLE001
    return False
  out_aval = None if prim is None else _out_aval(prim, (x.aval,))
  return False if out_aval is None else (prim.impl, out_aval, prim.name)


def _out_aval(prim, avals):
  """The primitive's output aval, or None where it raises (then the general
  path raises the error)."""
  if prim.multiple_results:
    return None
  try:
    return prim.eval_avals(avals, {})
  except Exception:   # noqa: BLE001
    return None


class ScalarConverter:
  """Converts a Python scalar operand to ``aval`` (0-d, read-only) as
  ``convert_element_type`` would; gives None (take the general path, which
  reports it) for an int outside the default integer range.  Recent values
  are remembered: code uses the same few constants over and over."""
  __slots__ = ("aval", "_convert", "_lo", "_hi", "_memo")

  def __init__(self, aval, convert, int_range):
    self.aval = aval
    self._convert = convert
    self._lo, self._hi = int_range
    self._memo = {}

  def __call__(self, v):
    key = v
    if not v and type(v) is float:   # 0.0 == -0.0 as keys: keep them apart
      key = "+0.0" if math.copysign(1.0, v) > 0 else "-0.0"
    hit = self._memo.get(key)
    if hit is not None:
      return hit
    if type(v) is int and not self._lo <= v <= self._hi:
      return None
    out = self._convert(v)
    out.setflags(write=False)
    if v == v:   # not NaNs: never equal to each other, they would pile up
      if len(self._memo) >= 256:
        self._memo.clear()
      self._memo[key] = out
    return out
