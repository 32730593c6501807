"""Elementwise functions under NumPy's names, with JAX's type promotion.

Each one checks its arguments, promotes dtypes (and ranks) as JAX does, then
applies lax primitives.  Functions that JAX compiles as a unit (``where``,
``floor_divide``, ``round``...) are wrapped in ``jit`` the same way, so
their jaxprs print as JAX's do.
"""
import functools
import operator

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import eager
from purejax._src.numpy import util
from purejax._src.numpy.util import (check_no_out,
    check_arraylike, promote_args, promote_args_inexact, promote_args_numeric)


def _named(name, fun):
  fun.__name__ = fun.__qualname__ = name
  return fun


def _is_int(x):
  return dtypes.issubdtype(util.aval_of(x).dtype, np.integer)


def _is_bool(x):
  return util.aval_of(x).dtype == np.bool_


def _is_inexact(x):
  return dtypes.issubdtype(util.aval_of(x).dtype, np.inexact)


def _is_complex(x):
  return dtypes.issubdtype(util.aval_of(x).dtype, np.complexfloating)


def _const_like(x, value):
  """A scalar constant with x's dtype and weak type (so that it does not
  change the weak type of what it is combined with)."""
  aval = util.aval_of(x)
  return lax.convert_element_type(value, aval.dtype, aval.weak_type)


def _zero(x):
  return _const_like(x, 0)


def _full(shape, value, dtype, weak_type=False):
  fill = lax.convert_element_type(value, dtype, weak_type)
  return lax.broadcast_in_dim(fill, shape, ()) if shape else fill


def _full_like(x, value):
  aval = util.aval_of(x)
  return _full(aval.shape, value, aval.dtype, aval.weak_type)


# ---------------------------------------------------------------------------
# Unary functions

def _inexact_unary(name, lax_fn, prim=None):
  """Integers and bools are converted to floats first (``sin(1)`` is 0.84...).
  ``prim``: the primitive ``lax_fn`` binds, for the eager fast path."""
  def fn(x, /):
    x, = promote_args_inexact(name, x)
    return lax_fn(x)
  fn = _named(name, fn)
  return fn if prim is None else eager.fast_unary(promote_args_inexact, prim)(fn)


sin = _inexact_unary("sin", lax.sin, lax.sin_p)
cos = _inexact_unary("cos", lax.cos, lax.cos_p)
tan = _inexact_unary("tan", lax.tan, lax.tan_p)
arcsin = _inexact_unary("arcsin", lax.asin, lax.asin_p)
arccos = _inexact_unary("arccos", lax.acos, lax.acos_p)
arctan = _inexact_unary("arctan", lax.atan, lax.atan_p)
sinh = _inexact_unary("sinh", lax.sinh, lax.sinh_p)
cosh = _inexact_unary("cosh", lax.cosh, lax.cosh_p)
tanh = _inexact_unary("tanh", lax.tanh, lax.tanh_p)
arcsinh = _inexact_unary("arcsinh", lax.asinh, lax.asinh_p)
arctanh = _inexact_unary("arctanh", lax.atanh, lax.atanh_p)
arccosh = jit(_inexact_unary("arccosh", lax.acosh))
exp = _inexact_unary("exp", lax.exp, lax.exp_p)
exp2 = _inexact_unary("exp2", lax.exp2, lax.exp2_p)
log = _inexact_unary("log", lax.log, lax.log_p)
log1p = _inexact_unary("log1p", lax.log1p, lax.log1p_p)
expm1 = _inexact_unary("expm1", lax.expm1, lax.expm1_p)
sqrt = _inexact_unary("sqrt", lax.sqrt, lax.sqrt_p)
cbrt = _inexact_unary("cbrt", lax.cbrt, lax.cbrt_p)
fabs = _inexact_unary("fabs", lax.abs, lax.abs_p)
reciprocal = _inexact_unary("reciprocal", lambda x: lax.integer_pow(x, -1))
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def _scaled(name, factor):
  def fn(x, /):
    x, = promote_args_inexact(name, x)
    return lax.mul(x, _const_like(x, factor))
  return _named(name, fn)


def log10(x, /):
  """Base-10 logarithm, as log(x) times 1/log(10)."""
  x, = promote_args_inexact("log10", x)
  scale = lax.convert_element_type(1 / np.log(10), util.aval_of(x).dtype, False)
  return lax.mul(lax.log(x), scale)


def log2(x, /):
  """Base-2 logarithm, as log(x) / log(2)."""
  x, = promote_args_inexact("log2", x)
  two = lax.convert_element_type(2, util.aval_of(x).dtype, False)
  return lax.div(lax.log(x), lax.log(two))


deg2rad = _scaled("deg2rad", np.pi / 180)
radians = _scaled("radians", np.pi / 180)
rad2deg = _scaled("rad2deg", 180 / np.pi)
degrees = _scaled("degrees", 180 / np.pi)


@eager.fast_unary(promote_args, lax.neg_p)
def negative(x, /):
  x, = promote_args("negative", x)
  return lax.neg(x)


def positive(x, /):
  x, = promote_args("positive", x)
  return x


def sign(x, /):
  x, = promote_args("sign", x)
  return lax.sign(x)


def square(x, /):
  x, = promote_args_numeric("square", x)
  return lax.square(x)


def absolute(x, /):
  x, = promote_args("absolute", x)
  dt = util.aval_of(x).dtype
  if dt == np.bool_ or dtypes.issubdtype(dt, np.unsignedinteger):
    return x
  return lax.abs(x)


abs = _named("abs", lambda x, /: absolute(x))


def floor(x, /):
  x, = promote_args("floor", x)
  return lax.floor(x) if _is_inexact(x) else x


def ceil(x, /):
  x, = promote_args("ceil", x)
  return lax.ceil(x) if _is_inexact(x) else x


@jit
def trunc(x, /):
  """Rounds toward zero."""
  x, = promote_args("trunc", x)
  if not _is_inexact(x):
    return x
  return where(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))



@jit
def rint(x, /):
  """Rounds to the nearest integer, halves to even."""
  x, = promote_args_inexact("rint", x)
  if _is_complex(x):
    return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
  return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@functools.partial(jit, static_argnames=("decimals",))
def round(a, decimals=0, out=None):
  """Rounds to ``decimals`` places; halves round to even, as in NumPy."""
  check_arraylike("round", a)
  check_no_out("round", out)
  decimals = operator.index(decimals)
  a, = util.promote_dtypes(a)
  if not _is_inexact(a):
    if decimals >= 0:
      return a
    a = lax.convert_element_type(a, dtypes.to_inexact_dtype(util.aval_of(a).dtype), False)
    return _round_inexact(a, decimals)
  return _round_inexact(a, decimals)


def _round_inexact(a, decimals):
  dt = util.aval_of(a).dtype
  if dtypes.issubdtype(dt, np.complexfloating):
    return lax.complex(_round_inexact(lax.real(a), decimals),
                       _round_inexact(lax.imag(a), decimals))
  if decimals == 0:
    return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
  factor = _const_like(a, 10.0 ** decimals)
  scaled = lax.round(lax.mul(a, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
  return lax.div(scaled, factor)


around = round
round_ = round


def isnan(x, /):
  x, = promote_args("isnan", x)
  return lax.ne(x, x)


@jit
def isinf(x, /):
  x, = promote_args("isinf", x)
  if _is_complex(x):
    return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
  if not _is_inexact(x):
    return _full(util.shape(x), False, np.dtype(bool))
  inf = lax.convert_element_type(np.inf, util.aval_of(x).dtype, False)
  return lax.eq(lax.abs(x), inf)


def isfinite(x, /):
  x, = promote_args("isfinite", x)
  if _is_complex(x):
    return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
  if not _is_inexact(x):
    return _full(util.shape(x), True, np.dtype(bool))
  return lax.is_finite(x)


def _to_bool(x):
  # Compared with a strong zero: the result is never weakly typed.
  if _is_bool(x):
    return x
  return lax.ne(x, lax.convert_element_type(0, util.aval_of(x).dtype, False))


def logical_not(x, /):
  x, = promote_args("logical_not", x)
  return lax.bitwise_not(_to_bool(x))


def bitwise_not(x, /):
  x, = promote_args("bitwise_not", x)
  return lax.bitwise_not(x)


invert = _named("invert", lambda x, /: bitwise_not(x))
bitwise_invert = invert


def real(val, /):
  val, = promote_args("real", val)
  return lax.real(val) if _is_complex(val) else val


def imag(val, /):
  val, = promote_args("imag", val)
  return lax.imag(val) if _is_complex(val) else _full_like(val, 0)


def conjugate(x, /):
  x, = promote_args("conjugate", x)
  return lax.conj(x) if _is_complex(x) else x


conj = conjugate


# ---------------------------------------------------------------------------
# Binary functions

def _binary(name, lax_fn, promote=promote_args, prim=None):
  """``prim``: the primitive ``lax_fn`` binds, for the eager fast path."""
  def fn(x1, x2, /):
    x1, x2 = promote(name, x1, x2)
    return lax_fn(x1, x2)
  fn = _named(name, fn)
  return fn if prim is None else eager.fast_binary(promote, lambda dtype: prim)(fn)


subtract = _binary("subtract", lax.sub, prim=lax.sub_p)
maximum = _binary("maximum", lax.max, prim=lax.max_p)
minimum = _binary("minimum", lax.min, prim=lax.min_p)
equal = _binary("equal", lax.eq, prim=lax.eq_p)
not_equal = _binary("not_equal", lax.ne, prim=lax.ne_p)


def _lexicographic(compare):
  """``compare`` (lax.lt, ...), ordering complex operands as JAX does: by
  real part, then (where the real parts are equal) by imaginary part."""
  def fn(x1, x2):
    if not dtypes.issubdtype(x1.dtype, np.complexfloating):
      return compare(x1, x2)
    same_real = lax.eq(lax.real(x1), lax.real(x2))
    by_imag = compare(lax.imag(x1), lax.imag(x2))
    return lax.select_n(same_real, compare(lax.real(x1), lax.real(x2)), by_imag)
  return fn


less = _binary("less", _lexicographic(lax.lt), prim=lax.lt_p)
less_equal = _binary("less_equal", _lexicographic(lax.le), prim=lax.le_p)
greater = _binary("greater", _lexicographic(lax.gt), prim=lax.gt_p)
greater_equal = _binary("greater_equal", _lexicographic(lax.ge), prim=lax.ge_p)
bitwise_and = _binary("bitwise_and", lax.bitwise_and, prim=lax.and_p)
bitwise_or = _binary("bitwise_or", lax.bitwise_or, prim=lax.or_p)
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor, prim=lax.xor_p)
left_shift = _binary("left_shift", lax.shift_left, promote_args_numeric, prim=lax.shift_left_p)
bitwise_left_shift = left_shift
true_divide = _binary("true_divide", lax.div, promote_args_inexact, prim=lax.div_p)
divide = true_divide
arctan2 = _binary("arctan2", lax.atan2, promote_args_inexact, prim=lax.atan2_p)
atan2 = arctan2
nextafter = _binary("nextafter", lax.nextafter, promote_args_inexact, prim=lax.nextafter_p)
float_power = _binary("float_power", lax.pow, promote_args_inexact, prim=lax.pow_p)


def _bool_or(bool_prim, prim):
  return lambda dtype: bool_prim if dtype == np.bool_ else prim


@eager.fast_binary(promote_args, _bool_or(lax.or_p, lax.add_p))
def add(x1, x2, /):
  x1, x2 = promote_args("add", x1, x2)
  return lax.bitwise_or(x1, x2) if _is_bool(x1) else lax.add(x1, x2)


@eager.fast_binary(promote_args, _bool_or(lax.and_p, lax.mul_p))
def multiply(x1, x2, /):
  x1, x2 = promote_args("multiply", x1, x2)
  return lax.bitwise_and(x1, x2) if _is_bool(x1) else lax.mul(x1, x2)


def right_shift(x1, x2, /):
  x1, x2 = promote_args_numeric("right_shift", x1, x2)
  if dtypes.issubdtype(util.aval_of(x1).dtype, np.unsignedinteger):
    return lax.shift_right_logical(x1, x2)
  return lax.shift_right_arithmetic(x1, x2)


bitwise_right_shift = right_shift


def _logical(name, lax_fn):
  def fn(x1, x2, /):
    x1, x2 = promote_args(name, x1, x2)
    return lax_fn(_to_bool(x1), _to_bool(x2))
  return _named(name, fn)


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


# -- division with flooring --------------------------------------------------

def _int_floor_divide(x1, x2):
  """Signed integer division rounding toward -inf (lax.div truncates)."""
  quotient = lax.div(x1, x2)
  signs_differ = lax.ne(lax.sign(x1), lax.sign(x2))
  inexact = lax.ne(lax.rem(x1, x2), _zero(x1))
  return where(lax.bitwise_and(signs_differ, inexact), lax.sub(quotient, _const_like(quotient, 1)),
               quotient)


def _float_divmod(x1, x2):
  """(floor(x1 / x2), x1 mod x2) for floats, with NumPy's rounding."""
  mod = lax.rem(x1, x2)
  div = lax.div(where(lax.eq(x2, _zero(x2)), x1, lax.sub(x1, mod)), x2)
  fix = lax.bitwise_and(lax.ne(mod, _zero(mod)), lax.ne(lax.sign(x2), lax.sign(mod)))
  mod = lax.select(fix, lax.add(mod, x2), mod)
  div = lax.select(fix, lax.sub(div, _const_like(div, 1)), div)
  return lax.round(div), mod


@jit
def floor_divide(x1, x2, /):
  """x1 // x2, rounding toward negative infinity."""
  x1, x2 = promote_args_numeric("floor_divide", x1, x2)
  dt = util.aval_of(x1).dtype
  if dtypes.issubdtype(dt, np.unsignedinteger):
    return lax.div(x1, x2)
  if dtypes.issubdtype(dt, np.integer):
    return _int_floor_divide(x1, x2)
  if dtypes.issubdtype(dt, np.complexfloating):
    raise TypeError("floor_divide does not support complex-valued inputs")
  return _float_divmod(x1, x2)[0]


@jit
def remainder(x1, x2, /):
  """x1 % x2 with the sign of x2 (x % 0 gives x for integers)."""
  x1, x2 = promote_args_numeric("remainder", x1, x2)
  zero = _zero(x1)
  if dtypes.issubdtype(util.aval_of(x2).dtype, np.integer):
    x2 = where(lax.eq(x2, zero), _full_like(x2, 1), x2)
  mod = lax.rem(x1, x2)
  nonzero = lax.ne(mod, zero)
  signs_differ = lax.ne(lax.lt(mod, zero), lax.lt(x2, zero))
  return lax.select(lax.bitwise_and(signs_differ, nonzero), lax.add(mod, x2), mod)


mod = remainder


@jit
def fmod(x1, x2, /):
  """C's fmod: the remainder has the sign of x1; an integer x1 mod 0 is 0 (as
  NumPy and JAX; two booleans keep lax.rem's x1)."""
  integer = dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer)
  x1, x2 = promote_args_numeric("fmod", x1, x2)
  if integer:
    x2 = where(lax.eq(x2, _zero(x2)), _full_like(x2, 1), x2)
  return lax.rem(x1, x2)


@jit
def divmod(x1, x2, /):
  """(x1 // x2, x1 % x2)."""
  x1, x2 = promote_args_numeric("divmod", x1, x2)
  if dtypes.issubdtype(util.aval_of(x1).dtype, np.integer):
    return floor_divide(x1, x2), remainder(x1, x2)
  return _float_divmod(x1, x2)


# -- power -----------------------------------------------------------------

def _static_int(x):
  """x as a Python int if it is a concrete integer scalar, else None."""
  if isinstance(x, core.Tracer) or isinstance(x, (bool, np.bool_)):
    return None
  if isinstance(x, (int, np.integer)):
    return int(x)
  if isinstance(x, core.ArrayBase) and x.shape == () and _is_int(x):
    return int(core.concrete_numpy_value(x))
  return None


def power(x1, x2, /):
  """x1 ** x2; a concrete integer exponent becomes lax.integer_pow."""
  check_arraylike("power", x1, x2)
  exponent = _static_int(x2)
  if exponent is not None:
    x1, = util.promote_dtypes_numeric(x1)
    return lax.integer_pow(x1, exponent)
  int_exponent = dtypes.issubdtype(util.aval_of(x2).dtype, np.integer)
  x1, x2 = promote_args_numeric("power", x1, x2)
  if _is_int(x1):
    return _integer_power(x1, x2)
  if int_exponent:   # an integer exponent array never makes the result weak
    x2 = lax.convert_element_type(x2, util.aval_of(x2).dtype, False)
  return lax.pow(x1, x2)


pow = power


def _integer_power(base, exponent):
  """Integer ** integer array, by squaring over the exponent's bits."""
  dt = util.aval_of(base).dtype
  zero = lax.convert_element_type(0, dt, False)
  one = lax.convert_element_type(1, dt, False)
  # 0 ** n is 0 for n != 0; everything else starts from 1.
  acc = where(lax.bitwise_and(lax.eq(base, zero), lax.ne(exponent, zero)), zero, one)
  # As JAX, the exponent's low 6 bits on every dtype (larger exponents
  # overflow for |base| > 1).
  for _ in range(6):
    acc = where(lax.bitwise_and(exponent, one), lax.mul(acc, base), acc)
    base = lax.mul(base, base)
    exponent = lax.shift_right_logical(exponent, one)
  return acc


# ---------------------------------------------------------------------------
# where

def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
  """x where condition is true, else y; with the condition alone it is
  ``jnp.nonzero(condition, size=size, fill_value=fill_value)``."""
  if x is None and y is None:
    from purejax._src.numpy.take_put import nonzero
    return nonzero(condition, size=size, fill_value=fill_value)
  if size is not None or fill_value is not None:
    raise ValueError("size and fill_value arguments cannot be used in three-term where "
                     "function.")
  return _where(condition, x, y)


@jit
def _where(condition, x, y):
  check_arraylike("where", condition, x, y)
  if not _is_bool(condition):
    condition = lax.ne(condition, _zero(condition))
  x, y = util.promote_dtypes(x, y)
  if util.shape(condition) == ():
    x, y = util.broadcast_arrays(x, y)
  else:
    condition, x, y = util.broadcast_arrays(condition, x, y)
  if 0 in util.shape(x):
    return x
  return lax.select(condition, x, y)


@jit
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
  """``arr`` limited to [min, max] (either bound may be None)."""
  if a is not None or a_min is not None or a_max is not None:
    import warnings
    warnings.warn("Passing arguments 'a', 'a_min' or 'a_max' to jax.numpy.clip is "
                  "deprecated. Please use 'arr', 'min' or 'max' respectively instead.",
                  DeprecationWarning, stacklevel=2)
    arr = a if arr is None else arr
    min = a_min if min is None else min
    max = a_max if max is None else max
  check_arraylike("clip", arr)
  if any(v is not None and dtypes.issubdtype(dtypes.dtype(v), np.complexfloating)
         for v in (arr, min, max)):
    raise ValueError(
        "Clip received a complex value either through the input or the min/max keywords. "
        "Complex values have no ordering and cannot be clipped. Please convert to a real "
        "value or array by taking the real or imaginary components via "
        "jax.numpy.real/imag respectively.")
  if min is not None:
    arr = maximum(min, arr)
  if max is not None:
    arr = minimum(max, arr)
  return util.asarray(arr)


# ---------------------------------------------------------------------------
# NaN-ignoring extrema, angle and the is* predicates

def fmax(x1, x2):
  """Elementwise maximum ignoring NaNs (NaN only where both are)."""
  check_arraylike("fmax", x1, x2)
  return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2):
  """Elementwise minimum ignoring NaNs (NaN only where both are)."""
  check_arraylike("fmin", x1, x2)
  return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


@functools.partial(jit, static_argnames=("deg",))
def angle(z, deg=False):
  """The argument of complex z (in degrees with ``deg``)."""
  check_arraylike("angle", z)
  z = util.asarray(z)
  re, im = real(z), imag(z)
  dtype = util.aval_of(re).dtype
  if not dtypes.issubdtype(dtype, np.inexact) or (
      dtypes.issubdtype(util.aval_of(z).dtype, np.floating) and util.ndim(z) == 0):
    dtype = dtypes.default_float_dtype()
    re = lax.convert_element_type(re, dtype, False)
    im = lax.convert_element_type(im, dtype, False)
  out = lax.atan2(im, re)
  return degrees(out) if deg else out


def _isposneginf(name, infinity, x, out):
  check_arraylike(name, x)
  check_no_out(name, out)
  x = util.asarray(x)
  dtype = util.aval_of(x).dtype
  if dtypes.issubdtype(dtype, np.floating):
    return lax.eq(x, lax.convert_element_type(infinity, dtype, False))
  if dtypes.issubdtype(dtype, np.complexfloating):
    raise ValueError("isposinf/isneginf are not well defined for complex types")
  return _full(util.shape(x), False, np.dtype(bool))


def isposinf(x, /, out=None):
  """Whether x is +inf (False for integers)."""
  return _isposneginf("isposinf", np.inf, x, out)


def isneginf(x, /, out=None):
  """Whether x is -inf (False for integers)."""
  return _isposneginf("isneginf", -np.inf, x, out)


@jit
def isreal(x):
  """Whether the imaginary part is zero (True for real dtypes)."""
  im = imag(x)
  return lax.eq(im, _zero(im))


@jit
def iscomplex(x):
  """Whether the imaginary part is nonzero."""
  im = imag(x)
  return lax.ne(im, _zero(im))


def iscomplexobj(x):
  """Whether x has a complex dtype (a Python bool, decided by type only)."""
  if isinstance(x, (complex, np.complexfloating)):
    return True
  if x is None or isinstance(x, (bool, int, float, str, np.generic)):
    return False
  dtype = getattr(x, "dtype", None)
  if dtype is None:
    dtype = np.asarray(x).dtype
  return dtypes.issubdtype(dtype, np.complexfloating)


def isrealobj(x):
  """Whether x has a non-complex dtype (a Python bool, decided by type only)."""
  return not iscomplexobj(x)
