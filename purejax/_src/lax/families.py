"""Helpers that define a primitive of a common family in one call.

``unary``/``binary``/``nary_elementwise`` fill in the shape and dtype rule
(lax is strict: no dtype promotion, only rank-0 operands broadcast), mark the
primitive elementwise (the batching interpreter handles those generically)
and attach the NumPy implementation and any other rules passed in.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes

# Dtype classes, as named in JAX's error messages.
_BOOL = ("bool",)
_SIGNED = ("signedinteger",)
_UNSIGNED = ("unsignedinteger",)
_INT = ("integer",)
_FLOAT = ("floating",)
_COMPLEX = ("complexfloating",)

bool_dtypes = _BOOL
int_dtypes = _INT
signed_dtypes = _SIGNED
float_dtypes = _FLOAT
complex_dtypes = _COMPLEX
inexact_dtypes = _FLOAT + _COMPLEX
numeric_dtypes = _INT + _FLOAT + _COMPLEX
integral_dtypes = _BOOL + _INT
any_dtypes = _BOOL + _INT + _FLOAT + _COMPLEX
real_dtypes = _INT + _FLOAT


def _kind_matches(dtype, kind):
  if kind == "bool":
    return dtype == np.bool_
  if kind == "prng_key":   # typed PRNG keys (key<fry>), which eq and ne compare
    return dtypes.issubdtype(dtype, dtypes.prng_key)
  return dtypes.issubdtype(dtype, getattr(np, kind))


def dtype_accepted(dtype, kinds):
  return any(_kind_matches(dtype, k) for k in kinds)


def check_dtype(name, dtype, kinds, position=None):
  if dtype_accepted(dtype, kinds):
    return
  if dtype == dtypes.float0:   # a gradient of an integer: JAX's explanation
    what = "a float0 array" if position is None else f"a float0 at position {position}"
    raise TypeError(
        f"Called {name} with {what}. float0s do not support any operations by "
        "design, because they are not compatible with non-trivial vector spaces. "
        "No implicit dtype conversion is done. You can use np.zeros_like(arr, "
        "dtype=np.float) to cast a float0 array to a regular zeros array. \n"
        "If you didn't expect to get a float0 you might have accidentally taken a "
        "gradient with respect to an integer argument.")
  where = "" if position is None else f" at position {position}"
  raise TypeError(
      f"{name} does not accept dtype {core.dtype_name(dtype)}{where}. Accepted "
      f"dtypes{where} are subtypes of {', '.join(kinds)}.")


def check_same_dtypes(name, avals, tip_name=None):
  """lax's strictness: operands of an n-ary op share one dtype."""
  first = avals[0].dtype
  if all(a.dtype == first for a in avals[1:]):
    return
  tip = (f" (Tip: jnp.{tip_name} is a similar function that does automatic "
         "type promotion on inputs).") if tip_name else ""
  got = ", ".join(core.dtype_name(a.dtype) for a in avals)
  raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}.{tip}")


def broadcasting_shape(name, avals):
  """Rank-0 operands broadcast; the others must have one rank, and each axis
  one size, except that size-1 axes stretch to match."""
  shapes = [a.shape for a in avals if a.shape]
  if not shapes:
    return ()
  ranks = {len(s) for s in shapes}
  if len(ranks) > 1:
    raise TypeError(f"{name}: arrays must have the same number of dimensions, got "
                    f"{{{', '.join(map(str, sorted(ranks)))}}}")
  first = shapes[0]
  if all(s == first for s in shapes[1:]):
    return first
  out = []
  for sizes in zip(*shapes):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                      f"{', '.join(map(str, shapes))}.")
    out.append(big.pop() if big else 1)
  return tuple(out)


def _weak(avals):
  return all(a.weak_type for a in avals)


def _elementwise_primitive(name, impl, rules):
  prim = core.Primitive(name)
  prim.impl = impl
  prim.elementwise = True
  for rule_name, rule in rules.items():
    setattr(prim, rule_name, rule)
  return prim


def unary(name, kinds, impl, result_dtype=None, **rules):
  """An elementwise primitive of one operand."""

  def abstract_eval(x, **params):
    check_dtype(name, x.dtype, kinds)
    dtype = result_dtype(x.dtype) if result_dtype else x.dtype
    return core.ShapedArray(x.shape, dtype, x.weak_type)

  prim = _elementwise_primitive(name, impl, rules)
  prim.abstract_eval = abstract_eval
  return prim


def binary(name, kinds, impl, result_dtype=None, tip_name=None, same_dtypes=True,
           **rules):
  """An elementwise primitive of two operands of the same dtype."""
  return nary_elementwise(name, [kinds, kinds], impl, result_dtype, tip_name,
                          same_dtypes, **rules)


def nary_elementwise(name, kinds_per_operand, impl, result_dtype=None, tip_name=None,
                     same_dtypes=True, **rules):

  def abstract_eval(*avals, **params):
    several = len({k for k in kinds_per_operand}) > 1 or len(avals) > 1
    for i, (a, kinds) in enumerate(zip(avals, kinds_per_operand)):
      check_dtype(name, a.dtype, kinds, position=i if several else None)
    if same_dtypes:
      check_same_dtypes(name, avals, tip_name)
    shape = broadcasting_shape(name, avals)
    dtype = result_dtype(avals[0].dtype) if result_dtype else avals[0].dtype
    return core.ShapedArray(shape, dtype, _weak(avals))

  prim = _elementwise_primitive(name, impl, rules)
  prim.abstract_eval = abstract_eval
  return prim


def standard_primitive(name, abstract_eval, impl, multiple_results=False, **rules):
  """Any other primitive: its shape rule and NumPy implementation."""
  prim = core.Primitive(name, multiple_results)
  prim.abstract_eval = abstract_eval
  prim.impl = impl
  for rule_name, rule in rules.items():
    setattr(prim, rule_name, rule)
  return prim
