"""Eager fast paths of jnp's elementwise functions.

Outside any trace, ``x + y`` on Arrays whose promotion changes nothing needs
none of jnp's argument checks, promotion and lax binding.  The decorators
here wrap a jnp function so that such calls run the primitive's NumPy
implementation at once (``dispatch.eager_binary`` decides once per operand
types whether a call qualifies); every other call, traced ones included,
runs the function itself.
"""
import functools

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.array import Array
from purejax._src.interpreters import dispatch
from purejax._src.numpy import util

_PROMOTED_KIND = {
    util.promote_args: lambda dtype: dtype,
    util.promote_args_inexact: dtypes.to_inexact_dtype,
    util.promote_args_numeric: dtypes.to_numeric_dtype,
}


def fast_binary(promote, prim_for):
  """Decorates a binary jnp function that promotes its operands with
  ``promote`` (one of util's ``promote_args*``) and then applies the
  primitive ``prim_for(promoted dtype)`` to them."""
  def make_plan(x, y):
    plan = promotion_plan(promote, x, y)
    if plan is None:
      return None
    dtype, (conv_x, conv_y) = plan
    return prim_for(dtype), conv_x, conv_y
  fast = dispatch.eager_binary(make_plan)

  def decorate(fn):
    @functools.wraps(fn)
    def wrapped(x1, x2, /):
      if type(x1) is Array or type(x2) is Array:
        out = fast(x1, x2)
        if out is not None:
          return out
      return fn(x1, x2)
    return wrapped
  return decorate


def fast_unary(promote, prim):
  """Decorates a unary jnp function that promotes its operand with
  ``promote`` and then applies ``prim`` to it."""
  fast = dispatch.eager_unary(
      lambda x: None if promotion_plan(promote, x) is None else prim)

  def decorate(fn):
    @functools.wraps(fn)
    def wrapped(x, /):
      if type(x) is Array:
        out = fast(x)
        if out is not None:
          return out
      return fn(x)
    return wrapped
  return decorate


def promotion_plan(promote, *args):
  """What ``promote(name, *args)`` does to eager operands (Arrays or Python
  ints/floats), decided from their types: ``(dtype, converters)``, one
  converter per operand, which turns a Python scalar into its promoted NumPy
  value and is None for an Array left as it is; None if an Array would be
  converted or given new axes (only the general path does that)."""
  to_kind = _PROMOTED_KIND[promote]
  # Python scalars promote by type alone (value checks happen at conversion).
  dtype, weak = dtypes.result_type(*[v if type(v) is Array else type(v) for v in args],
                                   return_weak_type_flag=True)
  dtype = np.dtype(to_kind(dtype))
  ranks = set()
  convs = []
  for v in args:
    if type(v) is Array:
      if v.aval.dtype != dtype or v.aval.weak_type != weak:
        return None
      if v.aval.shape:
        ranks.add(len(v.aval.shape))
      convs.append(None)
    else:
      convs.append(_scalar_converter(dtype, weak))
  if len(ranks) > 1:
    return None
  return dtype, convs


def _scalar_converter(dtype, weak):
  """Converts a Python scalar as the general path's convert_element_type does."""
  info = np.iinfo(dtypes.default_int_dtype())
  impl = lax.convert_element_type_p.impl

  def convert(v):
    out = impl(np.asarray(v), new_dtype=dtype, weak_type=weak)
    return out if type(out) is np.ndarray and out.dtype == dtype else np.asarray(out, dtype)
  return dispatch.ScalarConverter(core.ShapedArray((), dtype, weak), convert,
                                  (info.min, info.max))
