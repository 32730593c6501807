"""Eager execution: applying one primitive to concrete values.

This is the hot path of op-by-op mode, so it avoids everything it can: the
abstract-eval rule is cached per (avals, params) and the NumPy result is
wrapped without copying.
"""
import numpy as np

from purejax._src import core
from purejax._src.array import Array, wrap_numpy
from purejax._src.config import config


def _concrete_arg(x):
  """(numpy value, aval) of an eager argument."""
  if type(x) is Array:
    return x._value, x.aval
  if isinstance(x, core.Tracer):
    raise core.escaped_tracer_error(x)
  aval = core.get_aval(x)
  return np.asarray(x, dtype=aval.dtype), aval


def apply_primitive(primitive, args, params):
  vals, avals = [], []
  for x in args:
    val, aval = _concrete_arg(x)
    vals.append(val)
    avals.append(aval)
  out_avals = primitive.eval_avals(tuple(avals), params)
  out = primitive.impl(*vals, **params)
  if primitive.multiple_results:
    results = [wrap_numpy(o, a) for o, a in zip(out, out_avals)]
  else:
    results = wrap_numpy(out, out_avals)
  if config.jax_debug_nans or config.jax_debug_infs:
    check_special(primitive.name, results if primitive.multiple_results else [results])
  return results


def check_special(name, arrays):
  """``jax_debug_nans`` / ``jax_debug_infs``: fail on the op that made one."""
  for x in arrays:
    value = x._value
    if not np.issubdtype(value.dtype, np.inexact):
      continue
    if config.jax_debug_nans and np.isnan(value).any():
      raise FloatingPointError(f"invalid value (nan) encountered in {name}")
    if config.jax_debug_infs and np.isinf(value).any():
      raise FloatingPointError(f"invalid value (inf) encountered in {name}")
