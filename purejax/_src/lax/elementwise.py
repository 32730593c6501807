"""Elementwise primitives: math, arithmetic, comparisons, bitwise, select.

Each primitive is defined once, with its NumPy implementation; the family
helper supplies the shape/dtype rule.  NumPy's floating-point warnings are
silenced because XLA's semantics (inf, nan) are the intended results.
"""
import enum
import functools

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.lax.families import (
    any_dtypes, binary, bool_dtypes, complex_dtypes, float_dtypes, inexact_dtypes,
    check_same_dtypes, int_dtypes, nary_elementwise, numeric_dtypes, real_dtypes,
    signed_dtypes, unary)


def _quiet(f):
  @functools.wraps(f)
  def quiet(*args, **kwargs):
    with np.errstate(all="ignore"):
      return f(*args, **kwargs)
  return quiet


def _real_dtype(dtype):
  return np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype


def _bool_result(_):
  return np.dtype(bool)


# -- unary math -------------------------------------------------------------

def _sign_impl(x):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    magnitude = np.abs(x)
    return np.where(magnitude == 0, x, x / np.where(magnitude == 0, 1, magnitude))
  if dtypes.issubdtype(x.dtype, np.inexact):
    return np.where(x == 0, x, np.sign(x))   # keeps the sign of -0.0
  return np.sign(x)


neg_p = unary("neg", numeric_dtypes, np.negative)
sign_p = unary("sign", numeric_dtypes, _quiet(_sign_impl))
floor_p = unary("floor", float_dtypes, np.floor)
ceil_p = unary("ceil", float_dtypes, np.ceil)
is_finite_p = unary("is_finite", float_dtypes, np.isfinite, result_dtype=_bool_result)
exp_p = unary("exp", inexact_dtypes, _quiet(np.exp))
exp2_p = unary("exp2", inexact_dtypes, _quiet(np.exp2))
log_p = unary("log", inexact_dtypes, _quiet(np.log))
log1p_p = unary("log1p", inexact_dtypes, _quiet(np.log1p))
expm1_p = unary("expm1", inexact_dtypes, _quiet(np.expm1))
tanh_p = unary("tanh", inexact_dtypes, np.tanh)
logistic_p = unary("logistic", inexact_dtypes, _quiet(lambda x: 1 / (1 + np.exp(-x))))
sin_p = unary("sin", inexact_dtypes, _quiet(np.sin))
cos_p = unary("cos", inexact_dtypes, _quiet(np.cos))
tan_p = unary("tan", inexact_dtypes, _quiet(np.tan))
asin_p = unary("asin", inexact_dtypes, _quiet(np.arcsin))
acos_p = unary("acos", inexact_dtypes, _quiet(np.arccos))
atan_p = unary("atan", inexact_dtypes, _quiet(np.arctan))
sinh_p = unary("sinh", inexact_dtypes, _quiet(np.sinh))
cosh_p = unary("cosh", inexact_dtypes, _quiet(np.cosh))
asinh_p = unary("asinh", inexact_dtypes, _quiet(np.arcsinh))
acosh_p = unary("acosh", inexact_dtypes, _quiet(np.arccosh))
atanh_p = unary("atanh", inexact_dtypes, _quiet(np.arctanh))
sqrt_p = unary("sqrt", inexact_dtypes, _quiet(np.sqrt))
rsqrt_p = unary("rsqrt", inexact_dtypes, _quiet(lambda x: 1 / np.sqrt(x)))
cbrt_p = unary("cbrt", float_dtypes, np.cbrt)
abs_p = unary("abs", float_dtypes + complex_dtypes + signed_dtypes, np.abs,
              result_dtype=_real_dtype)
square_p = unary("square", numeric_dtypes, _quiet(np.square))
not_p = unary("not", int_dtypes + bool_dtypes, np.invert)
real_p = unary("real", complex_dtypes, np.real, result_dtype=_real_dtype)
imag_p = unary("imag", complex_dtypes, np.imag, result_dtype=_real_dtype)
conj_p = unary("conj", ("float32",) + complex_dtypes + ("float64",),
               lambda x: np.conj(x) if np.iscomplexobj(x) else x.astype(
                   np.result_type(x.dtype, np.complex64)),
               result_dtype=lambda d: np.result_type(d, np.complex64))


class RoundingMethod(enum.IntEnum):
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


def _round_impl(x, *, rounding_method):
  if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
    return np.rint(x)
  whole = np.trunc(x)
  # Compare the fractional part exactly instead of adding 0.5, which can
  # round up values just below one half.
  return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)


round_p = unary("round", float_dtypes, _quiet(_round_impl))


def _integer_pow_impl(x, *, y):
  """x**y by repeated squaring, rounding like a chain of multiplications."""
  if y == 0:
    return np.ones_like(x)
  n = abs(y)
  result, base = None, x
  while n:
    if n & 1:
      result = base if result is None else result * base
    n >>= 1
    if n:
      base = base * base
  return np.reciprocal(result) if y < 0 else result


integer_pow_p = unary("integer_pow", numeric_dtypes, _quiet(_integer_pow_impl))
_integer_pow_dtype_rule = integer_pow_p.abstract_eval


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y):
  out = _integer_pow_dtype_rule(x, y=y)
  if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError("Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short()}, {y})")
  return out


# -- binary arithmetic -------------------------------------------------------

def _int_div(x, y):
  """C-style division: rounds toward zero; x / 0 is -1 as on XLA:CPU... for
  signed types, and all ones for unsigned."""
  safe_y = np.where(y == 0, 1, y)
  q = np.floor_divide(x, safe_y)
  if dtypes.issubdtype(x.dtype, np.signedinteger):
    fix = (np.remainder(x, safe_y) != 0) & ((x < 0) != (safe_y < 0))
    q = q + fix.astype(q.dtype)
  return np.where(y == 0, np.array(-1).astype(x.dtype), q)


def _div_impl(x, y):
  if dtypes.issubdtype(np.result_type(x), np.integer):
    return _int_div(x, y)
  return np.true_divide(x, y)


def _rem_impl(x, y):
  if dtypes.issubdtype(np.result_type(x), np.integer):
    safe_y = np.where(y == 0, 1, y)
    return np.where(y == 0, x, np.fmod(x, safe_y))
  return np.fmod(x, y)


def _pow_impl(x, y):
  if dtypes.issubdtype(y.dtype, np.integer):
    y = y.astype(x.dtype)   # an integer exponent, computed in x's precision
  return np.power(x, y)


def _complex_impl(x, y):
  # Set the parts directly: x + 1j * y would mix infs and nans across them.
  out = np.empty(np.broadcast(x, y).shape, np.result_type(x.dtype, np.complex64))
  out.real, out.imag = x, y
  return out


def _atan2_impl(x, y):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    # atan2 for complex values: -i log((y + i x) / sqrt(x^2 + y^2)).
    x, y = x.astype(np.complex128), y.astype(np.complex128)
    return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))
  return np.arctan2(x, y)


add_p = binary("add", numeric_dtypes, np.add, tip_name="add")
sub_p = binary("sub", numeric_dtypes, np.subtract, tip_name="subtract")
mul_p = binary("mul", numeric_dtypes, np.multiply, tip_name="multiply")
div_p = binary("div", numeric_dtypes, _quiet(_div_impl), tip_name="divide")
rem_p = binary("rem", real_dtypes, _quiet(_rem_impl))
max_p = binary("max", any_dtypes, np.maximum, tip_name="maximum")
min_p = binary("min", any_dtypes, np.minimum, tip_name="minimum")
atan2_p = binary("atan2", inexact_dtypes, _quiet(_atan2_impl), tip_name="arctan2")
nextafter_p = binary("nextafter", float_dtypes, np.nextafter, tip_name="nextafter")
pow_p = nary_elementwise("pow", [inexact_dtypes, int_dtypes + inexact_dtypes],
                         _quiet(_pow_impl), same_dtypes=False)
_pow_kinds_rule = pow_p.abstract_eval


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
  out = _pow_kinds_rule(x, y)
  if dtypes.issubdtype(y.dtype, np.inexact) and x.dtype != y.dtype:
    raise TypeError(
        "the first argument to pow must have an inexact dtype (float or complex), and "
        "the second argument must have an inexact or integer dtype, and two inexact "
        f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively.")
  return out


complex_p = binary("complex", ("float32", "float64"), _complex_impl,
                   result_dtype=lambda d: np.result_type(d, np.complex64))

and_p = binary("and", int_dtypes + bool_dtypes, np.bitwise_and)
or_p = binary("or", int_dtypes + bool_dtypes, np.bitwise_or)
xor_p = binary("xor", int_dtypes + bool_dtypes, np.bitwise_xor)


def _shift_amount_ok(x, y):
  bits = np.iinfo(x.dtype).bits
  return (y >= 0) & (y < bits), bits


def _shift_left_impl(x, y):
  ok, _ = _shift_amount_ok(x, y)
  return np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0).astype(x.dtype)


def _shift_right_arithmetic_impl(x, y):
  ok, bits = _shift_amount_ok(x, y)
  return np.right_shift(x, np.where(ok, y, bits - 1)).astype(x.dtype)


def _shift_right_logical_impl(x, y):
  ok, _ = _shift_amount_ok(x, y)
  unsigned = np.dtype(f"uint{np.iinfo(x.dtype).bits}")
  shifted = np.right_shift(x.view(unsigned) if x.ndim else x.astype(unsigned),
                           np.where(ok, y, 0).astype(unsigned))
  return np.where(ok, shifted, 0).astype(unsigned).astype(x.dtype)


shift_left_p = binary("shift_left", int_dtypes, _shift_left_impl, tip_name="left_shift")
shift_right_arithmetic_p = binary("shift_right_arithmetic", int_dtypes,
                                  _shift_right_arithmetic_impl, tip_name="right_shift")
shift_right_logical_p = binary("shift_right_logical", int_dtypes,
                               _shift_right_logical_impl, tip_name="right_shift")


# -- comparisons -------------------------------------------------------------

eq_p = binary("eq", any_dtypes, np.equal, result_dtype=_bool_result, tip_name="equal")
ne_p = binary("ne", any_dtypes, np.not_equal, result_dtype=_bool_result, tip_name="not_equal")
lt_p = binary("lt", real_dtypes + bool_dtypes, np.less, result_dtype=_bool_result)
le_p = binary("le", real_dtypes + bool_dtypes, np.less_equal, result_dtype=_bool_result)
gt_p = binary("gt", real_dtypes + bool_dtypes, np.greater, result_dtype=_bool_result)
ge_p = binary("ge", real_dtypes + bool_dtypes, np.greater_equal, result_dtype=_bool_result)


# -- select and clamp --------------------------------------------------------

def _select_n_abstract_eval(which, *cases):
  if not cases:
    raise ValueError("select_n() must have at least one case")
  first = cases[0]
  if any(c.shape != first.shape for c in cases[1:]):
    raise TypeError("select cases must have the same shapes, got "
                    f"[{', '.join(str(c.shape) for c in cases)}].")
  if which.shape and which.shape != first.shape:
    raise TypeError("select `which` must be scalar or have the same shape as cases, "
                    f"got `which` shape {which.shape} but case shape {first.shape}.")
  if which.dtype != np.bool_ and not dtypes.issubdtype(which.dtype, np.integer):
    raise TypeError("select `which` must be boolean or integer type, got "
                    f"{core.dtype_name(which.dtype)}.")
  if which.dtype == np.bool_ and len(cases) > 2:
    raise TypeError("select with boolean `which` cannot have > 2 cases.")
  check_same_dtypes("select", cases, "where")
  return core.ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
  if len(cases) == 1:
    return cases[0]
  if which.dtype == np.bool_:
    return np.where(which, cases[1], cases[0])
  return np.choose(np.broadcast_to(which, cases[0].shape), cases, mode="clip")


select_n_p = core.Primitive("select_n")
select_n_p.abstract_eval = _select_n_abstract_eval
select_n_p.impl = _select_n_impl
select_n_p.elementwise = True


def _clamp_abstract_eval(lo, x, hi):
  for name, bound in (("min", lo), ("max", hi)):
    if bound.shape and bound.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == "
                      f"(), got {name}.shape={bound.shape}, operand.shape={x.shape}.")
  check_same_dtypes("clamp", (lo, x, hi))
  weak = lo.weak_type and x.weak_type and hi.weak_type
  return core.ShapedArray(x.shape, x.dtype, weak)


clamp_p = core.Primitive("clamp")
clamp_p.abstract_eval = _clamp_abstract_eval
clamp_p.impl = lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)
clamp_p.elementwise = True
