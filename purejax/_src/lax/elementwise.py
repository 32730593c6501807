"""Elementwise primitives: math, arithmetic, comparisons, bitwise, select.

Each primitive is defined once, with its NumPy implementation and, right
below it, its differentiation rules (a JVP rule; a transpose rule for the
ops linear in some operand); the family helper supplies the shape/dtype
rule.  NumPy's floating-point warnings are silenced because XLA's semantics
(inf, nan) are the intended results.
"""
import enum
import functools

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import math_f32
from purejax._src.lax.ad_util import (
    bcast, const, convert, defjvp_ans, dtype_of, shape_of, unbroadcast, zeros)
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


# Short names for the rules below (the primitives are looked up when a rule
# runs, so a rule may use a primitive defined further down).
def _neg(x): return neg_p.bind(x)
def _add(x, y): return add_p.bind(x, y)
def _sub(x, y): return sub_p.bind(x, y)
def _mul(x, y): return mul_p.bind(x, y)
def _div(x, y): return div_p.bind(x, y)
def _eq(x, y): return eq_p.bind(x, y)
def _ge(x, y): return ge_p.bind(x, y)


def _replace_zero(x):
  """``x`` with zeros replaced by ones (keeps rules finite where x = 0)."""
  return select_n_p.bind(_eq(x, const(x, 0)), x, bcast(const(x, 1), shape_of(x)))


# -- unary math -------------------------------------------------------------

def _sign_impl(x):
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    magnitude = np.abs(x)
    return np.where(magnitude == 0, x, x / np.where(magnitude == 0, 1, magnitude))
  if dtypes.issubdtype(x.dtype, np.inexact):
    return np.where(x == 0, x, np.sign(x))   # keeps the sign of -0.0
  return np.sign(x)


neg_p = unary("neg", numeric_dtypes, np.negative)
ad.deflinear(neg_p, lambda ct, x: [_neg(ct)])

sign_p = unary("sign", numeric_dtypes, _quiet(_sign_impl))
ad.defjvp_zero(sign_p)
floor_p = unary("floor", float_dtypes, np.floor)
ad.defjvp_zero(floor_p)
ceil_p = unary("ceil", float_dtypes, np.ceil)
ad.defjvp_zero(ceil_p)
is_finite_p = unary("is_finite", float_dtypes, np.isfinite, result_dtype=_bool_result)
ad.defjvp_zero(is_finite_p)

exp_p = unary("exp", inexact_dtypes, _quiet(np.exp))
defjvp_ans(exp_p, lambda g, ans, x: _mul(g, ans))
exp2_p = unary("exp2", inexact_dtypes, _quiet(np.exp2))
defjvp_ans(exp2_p, lambda g, ans, x: _mul(g, _mul(ans, const(ans, np.log(2)))))
log_p = unary("log", inexact_dtypes, _quiet(np.log))
ad.defjvp(log_p, lambda g, x: _div(g, x))
log1p_p = unary("log1p", inexact_dtypes, _quiet(np.log1p))
ad.defjvp(log1p_p, lambda g, x: _div(g, _add(x, const(x, 1))))
expm1_p = unary("expm1", inexact_dtypes, _quiet(np.expm1))
defjvp_ans(expm1_p, lambda g, ans, x: _mul(g, _add(ans, const(ans, 1))))
tanh_p = unary("tanh", inexact_dtypes, np.tanh)
# 1 - tanh^2 as (1 + ans)(1 - ans): accurate where ans is near +-1.  Grouped
# as (g + g ans)(1 - ans), as JAX does, so the rounding and residuals agree.
defjvp_ans(tanh_p, lambda g, ans, x: _mul(_add(g, _mul(g, ans)), _sub(const(ans, 1), ans)))
logistic_p = unary("logistic", inexact_dtypes, _quiet(lambda x: 1 / (1 + np.exp(-x))))
defjvp_ans(logistic_p, lambda g, ans, x: _mul(g, _mul(ans, _sub(const(ans, 1), ans))))


def _float32_twin(prim, twin):
  """Jitted code computes float32 ``prim`` with the C backend's helper, on
  the NumPy tier through its NumPy twin (``math_f32``): the same bits."""
  impl = prim.impl

  def jit_impl(x, **params):
    if np.asarray(x).dtype == np.float32:
      return twin(x)
    return impl(x, **params)
  prim.jit_impl = jit_impl


for _p, _twin in ((exp_p, math_f32.expf), (log_p, math_f32.logf),
                  (tanh_p, math_f32.tanhf), (logistic_p, math_f32.logistic)):
  _float32_twin(_p, _twin)

sin_p = unary("sin", inexact_dtypes, _quiet(np.sin))
ad.defjvp(sin_p, lambda g, x: _mul(g, cos_p.bind(x)))
cos_p = unary("cos", inexact_dtypes, _quiet(np.cos))
ad.defjvp(cos_p, lambda g, x: _neg(_mul(g, sin_p.bind(x))))
tan_p = unary("tan", inexact_dtypes, _quiet(np.tan))
defjvp_ans(tan_p, lambda g, ans, x: _mul(g, _add(const(ans, 1), _mul(ans, ans))))
asin_p = unary("asin", inexact_dtypes, _quiet(np.arcsin))
ad.defjvp(asin_p, lambda g, x: _mul(g, rsqrt_p.bind(_sub(const(x, 1), _mul(x, x)))))
acos_p = unary("acos", inexact_dtypes, _quiet(np.arccos))
ad.defjvp(acos_p, lambda g, x: _neg(_mul(g, rsqrt_p.bind(_sub(const(x, 1), _mul(x, x))))))
atan_p = unary("atan", inexact_dtypes, _quiet(np.arctan))
ad.defjvp(atan_p, lambda g, x: _div(g, _add(const(x, 1), _mul(x, x))))
sinh_p = unary("sinh", inexact_dtypes, _quiet(np.sinh))
ad.defjvp(sinh_p, lambda g, x: _mul(g, cosh_p.bind(x)))
cosh_p = unary("cosh", inexact_dtypes, _quiet(np.cosh))
ad.defjvp(cosh_p, lambda g, x: _mul(g, sinh_p.bind(x)))
asinh_p = unary("asinh", inexact_dtypes, _quiet(np.arcsinh))
ad.defjvp(asinh_p, lambda g, x: _mul(g, rsqrt_p.bind(_add(_mul(x, x), const(x, 1)))))
acosh_p = unary("acosh", inexact_dtypes, _quiet(np.arccosh))
# (x - 1)(x + 1) rather than x^2 - 1: no cancellation near x = 1.
ad.defjvp(acosh_p, lambda g, x: _mul(g, rsqrt_p.bind(_mul(_sub(x, const(x, 1)),
                                                          _add(x, const(x, 1))))))
atanh_p = unary("atanh", inexact_dtypes, _quiet(np.arctanh))
ad.defjvp(atanh_p, lambda g, x: _div(_div(g, _add(const(x, 1), x)), _sub(const(x, 1), x)))

sqrt_p = unary("sqrt", inexact_dtypes, _quiet(np.sqrt))
defjvp_ans(sqrt_p, lambda g, ans, x: _div(g, _mul(const(ans, 2), ans)))
rsqrt_p = unary("rsqrt", inexact_dtypes, _quiet(lambda x: 1 / np.sqrt(x)))
defjvp_ans(rsqrt_p, lambda g, ans, x: _mul(g, _div(_mul(const(ans, -0.5), ans), x)))
cbrt_p = unary("cbrt", float_dtypes, np.cbrt)
defjvp_ans(cbrt_p, lambda g, ans, x: _mul(g, _mul(const(ans, 1 / 3),
                                                  integer_pow_p.bind(ans, y=-2))))


def _abs_jvp(g, ans, x):
  if not dtypes.issubdtype(dtype_of(x), np.complexfloating):
    return select_n_p.bind(_ge(x, const(x, 0)), _neg(g), g)   # d|x|/dx = 1 at 0, as JAX
  # d|z| = Re(conj(z) dz) / |z|, taken as 0 at z = 0.
  magnitude = convert(ans, dtype_of(x))
  return real_p.bind(_mul(g, _div(conj_p.bind(x), _replace_zero(magnitude))))


abs_p = unary("abs", float_dtypes + complex_dtypes + signed_dtypes, np.abs,
              result_dtype=_real_dtype)
defjvp_ans(abs_p, _abs_jvp)
square_p = unary("square", numeric_dtypes, _quiet(np.square))
ad.defjvp(square_p, lambda g, x: _mul(g, _mul(const(x, 2), x)))
not_p = unary("not", int_dtypes + bool_dtypes, np.invert)
ad.defjvp_zero(not_p)


def _contiguous(x):
  # np.ascontiguousarray would turn a 0-d array into a 1-d one.
  x = np.asarray(x)
  return x if x.flags.c_contiguous else x.copy()


def _bit_width(x):
  return np.dtype(x.dtype).itemsize * 8


def _population_count_impl(x):
  # Count set bits byte by byte on the unsigned view (works for every width).
  x = _contiguous(x)
  as_bytes = x.reshape(-1).view(np.uint8).reshape(x.shape + (x.dtype.itemsize,))
  counts = np.unpackbits(as_bytes, axis=-1).sum(axis=-1)
  return counts.astype(x.dtype)


def _clz_impl(x):
  # Leading zeros = width - bit length of the unsigned value.
  x = _contiguous(x)
  width = _bit_width(x)
  u = x.view(np.dtype(f"uint{width}")).astype(np.uint64)
  length = np.zeros(x.shape, np.int64)
  for shift in (32, 16, 8, 4, 2, 1):
    big = u >= (np.uint64(1) << np.uint64(shift))
    length = np.where(big, length + shift, length)
    u = np.where(big, u >> np.uint64(shift), u)
  length = length + (u > 0)
  return (width - length).astype(x.dtype)


population_count_p = unary("population_count", int_dtypes, _population_count_impl)
ad.defjvp_zero(population_count_p)
clz_p = unary("clz", int_dtypes, _clz_impl)
ad.defjvp_zero(clz_p)

# The complex parts are linear; their transposes map back into the complex
# plane (transposes, not adjoints: no conjugation, as in JAX).
real_p = unary("real", complex_dtypes, np.real, result_dtype=_real_dtype)
ad.deflinear(real_p, lambda ct, x: [complex_p.bind(ct, const(ct, 0))])
imag_p = unary("imag", complex_dtypes, np.imag, result_dtype=_real_dtype)
ad.deflinear(imag_p, lambda ct, x: [complex_p.bind(const(ct, 0), _neg(ct))])
conj_p = unary("conj", ("float32",) + complex_dtypes + ("float64",),
               lambda x: np.conj(x) if np.iscomplexobj(x) else x.astype(
                   np.result_type(x.dtype, np.complex64)),
               result_dtype=lambda d: np.result_type(d, np.complex64))


def _conj_transpose(ct, x):
  if dtypes.issubdtype(x.aval.dtype, np.complexfloating):
    return [conj_p.bind(ct)]
  return [real_p.bind(ct)]   # conj of a real input only widened it


ad.deflinear(conj_p, _conj_transpose)


class RoundingMethod(enum.IntEnum):
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


def _round_impl(x, *, rounding_method):
  if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
    return np.rint(x)
  whole = np.trunc(x)
  # Compare the fractional part exactly instead of adding 0.5, which can
  # round up values just below one half; copysign keeps -0.3 -> -0.0.
  step = np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)
  return np.copysign(whole + step, x)


round_p = unary("round", float_dtypes, _quiet(_round_impl))
ad.defjvp_zero(round_p)


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


def _integer_pow_jvp(g, x, *, y):
  if y == 0:
    return ad.Zero(ad.tangent_aval(core.get_aval(g)))
  if y == 1:
    return g
  return _mul(g, _mul(const(x, y), integer_pow_p.bind(x, y=y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


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
  out = np.power(x, y)
  if out.dtype.kind == "f":
    # NumPy computes x ** 0.5 as sqrt(x): -0.0 and -inf at x = -0.0, -inf,
    # where pow (and JAX) give +0.0 and +inf.
    special = (y == 0.5) & ((x == 0) | (x == -np.inf))
    if special.any():
      out = np.where(special, np.where(x == 0, 0, np.inf).astype(out.dtype), out)
  return out


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


def _is_zero(t):
  return type(t) is ad.Zero


def _linear_binary_jvp(prim, on_y_only):
  """JVP of add/sub: the op on the tangents; a lone tangent is broadcast to
  the output (and negated by ``on_y_only`` for sub)."""

  def rule(primals, tangents):
    x, y = primals
    gx, gy = tangents
    out = prim.bind(x, y)
    if _is_zero(gy):
      return out, bcast(gx, shape_of(out))
    if _is_zero(gx):
      return out, bcast(on_y_only(gy), shape_of(out))
    return out, prim.bind(gx, gy)

  return rule


def _undefined_ct(x, ct):
  """The cotangent for input ``x`` if it is a linear input, else None."""
  return unbroadcast(ct, x.aval) if ad.is_undefined_primal(x) else None


add_p = binary("add", numeric_dtypes, np.add, tip_name="add")
add_p.jvp = _linear_binary_jvp(add_p, lambda gy: gy)
add_p.transpose = lambda ct, x, y: [_undefined_ct(x, ct), _undefined_ct(y, ct)]
add_p.is_linear = True

sub_p = binary("sub", numeric_dtypes, np.subtract, tip_name="subtract")
sub_p.jvp = _linear_binary_jvp(sub_p, _neg)
sub_p.transpose = lambda ct, x, y: [_undefined_ct(x, ct), _undefined_ct(y, _neg(ct))]
sub_p.is_linear = True


def _mul_transpose(ct, x, y):
  # Linear in one operand when the other is known.
  if ad.is_undefined_primal(x):
    return [unbroadcast(_mul(ct, y), x.aval), None]
  return [None, unbroadcast(_mul(x, ct), y.aval)]


mul_p = binary("mul", numeric_dtypes, np.multiply, tip_name="multiply")
ad.defjvp(mul_p, lambda g, x, y: _mul(g, y), lambda g, x, y: _mul(x, g))
mul_p.transpose = _mul_transpose


def _div_transpose(ct, x, y):
  if ad.is_undefined_primal(y):
    raise ValueError("div is linear only in its numerator")
  return [unbroadcast(_div(ct, y), x.aval), None]


div_p = binary("div", numeric_dtypes, _quiet(_div_impl), tip_name="divide")
ad.defjvp(div_p, lambda g, x, y: _div(g, y),
          lambda g, x, y: _mul(_mul(_neg(g), x), integer_pow_p.bind(y, y=-2)))
div_p.transpose = _div_transpose


def _rem_jvp_y(g, x, y):
  # x - y * trunc(x / y): d/dy = -trunc(x / y).
  quotient = _div(x, y)
  return _mul(_neg(g), _mul(sign_p.bind(quotient), floor_p.bind(abs_p.bind(quotient))))


rem_p = binary("rem", real_dtypes, _quiet(_rem_impl))
defjvp_ans(rem_p, lambda g, ans, x, y: bcast(g, shape_of(ans)),
           lambda g, ans, x, y: _rem_jvp_y(g, x, y))


def _balanced_eq(x, ans, y):
  """1 where x alone attains ``ans``, 1/2 where x and y both do, else 0: at a
  tie max/min split the derivative evenly between their operands (as JAX)."""
  one, two = bcast(const(ans, 1), shape_of(ans)), bcast(const(ans, 2), shape_of(ans))
  zero = bcast(const(ans, 0), shape_of(ans))
  hit = select_n_p.bind(_eq(x, ans), zero, one)
  return _div(hit, select_n_p.bind(_eq(y, ans), one, two))


def _complex_pick(x, y, first_wins):
  """max/min of complex values as XLA computes them: ``x`` where it comes
  strictly first by (real, imaginary) under ``first_wins`` (np.greater for
  max), else ``y``: equal operands and NaNs give ``y``."""
  xr, yr = np.real(x), np.real(y)
  wins = np.where(xr == yr, first_wins(np.imag(x), np.imag(y)), first_wins(xr, yr))
  return np.where(wins, x, y)


def _signed_zero_aware(np_fun, negative_if, first_wins):
  """max/min ordering -0.0 below +0.0 (XLA's rule; NumPy returns the first
  zero): equal operands take the sign ``negative_if`` gives for the pair."""
  def impl(x, y):
    with np.errstate(invalid="ignore"):
      if np.result_type(x, y).kind == "c":
        return _complex_pick(x, y, first_wins)
      out = np_fun(x, y)
      if out.dtype.kind != "f" and out.dtype.name != "bfloat16":
        return out
      neg = negative_if(np.signbit(x), np.signbit(y))
      signed = np.copysign(out, np.where(neg, -1, 1).astype(out.dtype))
      return np.where(np.equal(x, y), signed, out).astype(out.dtype)
  return impl


max_p = binary("max", any_dtypes, _signed_zero_aware(np.maximum, np.logical_and, np.greater),
               tip_name="maximum")
defjvp_ans(max_p, lambda g, ans, x, y: _mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: _mul(g, _balanced_eq(y, ans, x)))
min_p = binary("min", any_dtypes, _signed_zero_aware(np.minimum, np.logical_or, np.less),
               tip_name="minimum")
defjvp_ans(min_p, lambda g, ans, x, y: _mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: _mul(g, _balanced_eq(y, ans, x)))


def _atan2_denominator(x, y):
  return _add(_mul(x, x), _mul(y, y))


atan2_p = binary("atan2", inexact_dtypes, _quiet(_atan2_impl), tip_name="arctan2")
ad.defjvp(atan2_p, lambda g, x, y: _mul(g, _div(y, _atan2_denominator(x, y))),
          lambda g, x, y: _mul(g, _div(_neg(x), _atan2_denominator(x, y))))

# No derivative rule, as in JAX (differentiating it raises NotImplementedError).
def _nextafter_impl(x, y):
  # Equal operands give y (C's rule; NumPy's float16 loop gives x: 0 vs -0).
  out = np.nextafter(x, y)
  toward_y = np.equal(x, y)
  if out.dtype.name == "bfloat16":   # XLA: a step onto zero toward a zero gives y's zero
    toward_y |= (out == 0) & (np.asarray(y) == 0)
  return np.where(toward_y, y, out).astype(out.dtype)


nextafter_p = binary("nextafter", float_dtypes, _quiet(_nextafter_impl), tip_name="nextafter")

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


def _pow_jvp_x(g, ans, x, y):
  if dtypes.issubdtype(dtype_of(y), np.inexact):
    return _mul(g, _mul(y, pow_p.bind(x, _sub(y, const(y, 1)))))
  # An integer exponent: d(x^0)/dx is 0 everywhere (even at x = 0).
  x, y = bcast(x, shape_of(ans)), bcast(convert(y, dtype_of(x)), shape_of(ans))
  jac = _mul(y, pow_p.bind(x, _sub(y, const(y, 1))))
  return _mul(g, select_n_p.bind(_eq(y, const(y, 0)), jac, zeros(core.get_aval(jac))))


def _pow_jvp_y(g, ans, x, y):
  if not dtypes.issubdtype(dtype_of(y), np.inexact):
    return ad.Zero(ad.tangent_aval(core.get_aval(ans)))
  # x^y log x, with log x taken as 0 at x = 0 (as JAX).
  return _mul(g, _mul(log_p.bind(_replace_zero(x)), ans))


defjvp_ans(pow_p, _pow_jvp_x, _pow_jvp_y)

complex_p = binary("complex", ("float32", "float64"), _complex_impl,
                   result_dtype=lambda d: np.result_type(d, np.complex64))
ad.deflinear(complex_p, lambda ct, x, y: [_undefined_ct(x, real_p.bind(ct)),
                                           _undefined_ct(y, _neg(imag_p.bind(ct)))])

and_p = binary("and", int_dtypes + bool_dtypes, np.bitwise_and)
or_p = binary("or", int_dtypes + bool_dtypes, np.bitwise_or)
xor_p = binary("xor", int_dtypes + bool_dtypes, np.bitwise_xor)
for _p in (and_p, or_p, xor_p):
  ad.defjvp_zero(_p)


def _shift_amount_ok(x, y):
  bits = np.iinfo(x.dtype).bits
  return (y >= 0) & (y < bits), bits


def _shift_left_impl(x, y):
  ok, _ = _shift_amount_ok(x, y)
  return np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0).astype(x.dtype)


def _shift_right_arithmetic_impl(x, y):
  # The sign bit is copied for unsigned types too (as JAX): shift the bits as signed.
  ok, bits = _shift_amount_ok(x, y)
  signed = np.dtype(f"int{bits}")
  amount = np.where(ok, y, bits - 1).astype(signed)
  return np.right_shift(x.astype(signed), amount).astype(x.dtype)


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
for _p in (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p):
  ad.defjvp_zero(_p)


# -- comparisons -------------------------------------------------------------

# (typed keys compare equal where all their key data does: key_lowering's rule)
eq_p = binary("eq", any_dtypes + ("prng_key",), np.equal, result_dtype=_bool_result,
              tip_name="equal")
ne_p = binary("ne", any_dtypes + ("prng_key",), np.not_equal, result_dtype=_bool_result,
              tip_name="not_equal")
lt_p = binary("lt", real_dtypes + bool_dtypes, np.less, result_dtype=_bool_result)
le_p = binary("le", real_dtypes + bool_dtypes, np.less_equal, result_dtype=_bool_result)
gt_p = binary("gt", real_dtypes + bool_dtypes, np.greater, result_dtype=_bool_result)
ge_p = binary("ge", real_dtypes + bool_dtypes, np.greater_equal, result_dtype=_bool_result)
for _p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
  ad.defjvp_zero(_p)


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


@select_n_p.def_jvp
def _select_n_jvp(primals, tangents):
  which, *cases = primals
  out = select_n_p.bind(which, *cases)
  case_tangents = tangents[1:]
  if all(_is_zero(t) for t in case_tangents):
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  return out, select_n_p.bind(which, *map(ad.instantiate, case_tangents))


@select_n_p.def_transpose
def _select_n_transpose(ct, which, *cases):
  # Linear in the cases (never in ``which``): each case gets ct where chosen.
  if ad.is_undefined_primal(which):
    raise ValueError("select_n is not linear in its predicate")
  zero = ad.zeros_like_aval(core.get_aval(ct))   # keeps ct's weak type, as JAX does
  return [None] + [
      select_n_p.bind(which, *[ct if j == i else zero for j in range(len(cases))])
      if ad.is_undefined_primal(case) else None
      for i, case in enumerate(cases)]


def _batch_to_front(x, d, axis_size, full_shape):
  """``x`` batched at axis 0 with ``full_shape`` (its example shape after
  the batch axis), broadcasting an unbatched value or a per-example scalar."""
  from purejax._src.lax.structural import broadcast_in_dim_p
  x = batching.bdim_at_front(x, d, axis_size)
  if core.get_aval(x).shape[1:] == tuple(full_shape):
    return x
  return broadcast_in_dim_p.bind(x, shape=(axis_size,) + tuple(full_shape),
                                 broadcast_dimensions=(0,), sharding=None)


def _example_shape(x, d):
  shape = core.get_aval(x).shape
  return shape if d is None else shape[:d] + shape[d + 1:]


@select_n_p.def_batch
def _select_n_batch(axis_size, vals, dims):
  # The cases need one shape, and ``which`` is a scalar or has it too: an
  # unbatched scalar ``which`` stays one, anything else gets the cases' shape.
  (which, *cases), (wd, *cds) = vals, dims
  case_shape = _example_shape(cases[0], cds[0])
  if wd is None and not core.get_aval(which).shape and len(set(cds)) == 1:
    return select_n_p.bind(which, *cases), cds[0]   # all cases batched alike
  cases = [_batch_to_front(c, d, axis_size, case_shape) for c, d in zip(cases, cds)]
  if wd is not None or core.get_aval(which).shape:
    which = _batch_to_front(which, wd, axis_size, case_shape)
  return select_n_p.bind(which, *cases), 0


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
def _clamp_impl(lo, x, hi):
  if np.result_type(lo, x, hi).kind == "c":
    # XLA clamps complex values by their real parts alone: t = lo if
    # re(lo) >= re(x) else x, then t if re(t) <= re(hi) else hi (NaN: the
    # second operand).
    with np.errstate(invalid="ignore"):
      t = np.where(np.real(lo) >= np.real(x), lo, x)
      return np.where(np.real(t) <= np.real(hi), t, hi).astype(x.dtype)
  # lax's max then min: a NaN propagates, -0.0 orders below +0.0
  # (clamp(-0.0, -3.0, 0.0) is -0.0, as in XLA; NumPy's clip gives +0.0).
  return min_p.impl(max_p.impl(x, lo), hi)


clamp_p.impl = _clamp_impl
clamp_p.elementwise = True


@clamp_p.def_batch
def _clamp_batch(axis_size, vals, dims):
  # Bounds are scalars or shaped like the operand: an unbatched scalar bound
  # stays one, anything else gets the operand's (batched) shape.
  (lo, x, hi), (lod, xd, hid) = vals, dims
  shape = _example_shape(x, xd)
  x = _batch_to_front(x, xd, axis_size, shape)
  lo, hi = [b if d is None and not core.get_aval(b).shape
            else _batch_to_front(b, d, axis_size, shape) for b, d in ((lo, lod), (hi, hid))]
  return clamp_p.bind(lo, x, hi), 0


def _where(pred, g, like):
  """g (broadcast to ``like``'s shape) where pred holds, else 0."""
  g = bcast(g, shape_of(like))
  return select_n_p.bind(pred, zeros(core.get_aval(g)), g)


# As JAX: the operand's derivative is 1 strictly inside (lo, hi), and a bound's
# is 1 where it alone decides the result.
ad.defjvp(clamp_p,
          lambda g, lo, x, hi: _where(and_p.bind(gt_p.bind(lo, x), lt_p.bind(lo, hi)), g, x),
          lambda g, lo, x, hi: _where(and_p.bind(gt_p.bind(x, lo), lt_p.bind(x, hi)), g, x),
          lambda g, lo, x, hi: _where(lt_p.bind(hi, x), g, x))
