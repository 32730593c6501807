"""The public lax functions for elementwise primitives (``lax.add`` ...)."""
from purejax._src.lax import utils
from purejax._src.lax import elementwise as ew
from purejax._src.lax.elementwise import RoundingMethod


def _unary(prim, name, doc):
  def fn(x):
    return utils.bind(prim, x)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = doc
  return fn


def _unary_with_accuracy(prim, name, doc):
  # JAX lets backends trade accuracy for speed here; purejax computes every
  # value to its usual accuracy, so ``accuracy`` is accepted and ignored.
  def fn(x, *, accuracy=None):
    return utils.bind(prim, x)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = doc + " (``accuracy`` is accepted and ignored.)"
  return fn


def _binary(prim, name, doc):
  def fn(x, y):
    return utils.bind(prim, x, y)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = doc
  return fn


neg = _unary(ew.neg_p, "neg", "Elementwise negation: -x.")
sign = _unary(ew.sign_p, "sign", "Elementwise sign.")
floor = _unary(ew.floor_p, "floor", "Elementwise floor.")
ceil = _unary(ew.ceil_p, "ceil", "Elementwise ceiling.")
is_finite = _unary(ew.is_finite_p, "is_finite", "Elementwise isfinite.")
exp = _unary_with_accuracy(ew.exp_p, "exp", "Elementwise exponential.")
exp2 = _unary_with_accuracy(ew.exp2_p, "exp2", "Elementwise base-2 exponential.")
log = _unary_with_accuracy(ew.log_p, "log", "Elementwise natural logarithm.")
log1p = _unary_with_accuracy(ew.log1p_p, "log1p", "Elementwise log(1 + x).")
expm1 = _unary_with_accuracy(ew.expm1_p, "expm1", "Elementwise exp(x) - 1.")
tanh = _unary_with_accuracy(ew.tanh_p, "tanh", "Elementwise hyperbolic tangent.")
logistic = _unary_with_accuracy(ew.logistic_p, "logistic", "Elementwise logistic: 1 / (1 + exp(-x)).")
sin = _unary_with_accuracy(ew.sin_p, "sin", "Elementwise sine.")
cos = _unary_with_accuracy(ew.cos_p, "cos", "Elementwise cosine.")
tan = _unary_with_accuracy(ew.tan_p, "tan", "Elementwise tangent.")
asin = _unary(ew.asin_p, "asin", "Elementwise arc sine.")
acos = _unary(ew.acos_p, "acos", "Elementwise arc cosine.")
atan = _unary(ew.atan_p, "atan", "Elementwise arc tangent.")
sinh = _unary(ew.sinh_p, "sinh", "Elementwise hyperbolic sine.")
cosh = _unary(ew.cosh_p, "cosh", "Elementwise hyperbolic cosine.")
asinh = _unary(ew.asinh_p, "asinh", "Elementwise inverse hyperbolic sine.")
acosh = _unary(ew.acosh_p, "acosh", "Elementwise inverse hyperbolic cosine.")
atanh = _unary(ew.atanh_p, "atanh", "Elementwise inverse hyperbolic tangent.")
sqrt = _unary_with_accuracy(ew.sqrt_p, "sqrt", "Elementwise square root.")
rsqrt = _unary_with_accuracy(ew.rsqrt_p, "rsqrt", "Elementwise reciprocal square root.")
cbrt = _unary_with_accuracy(ew.cbrt_p, "cbrt", "Elementwise cube root.")
abs = _unary(ew.abs_p, "abs", "Elementwise absolute value.")
square = _unary(ew.square_p, "square", "Elementwise square: x * x.")
population_count = _unary(ew.population_count_p, "population_count",
                          "Elementwise number of set bits.")
clz = _unary(ew.clz_p, "clz", "Elementwise count of leading zero bits.")
bitwise_not = _unary(ew.not_p, "bitwise_not", "Elementwise NOT (logical for bool).")
real = _unary(ew.real_p, "real", "Real part of a complex array.")
imag = _unary(ew.imag_p, "imag", "Imaginary part of a complex array.")
conj = _unary(ew.conj_p, "conj", "Complex conjugate.")

add = _binary(ew.add_p, "add", "Elementwise addition (no type promotion).")
sub = _binary(ew.sub_p, "sub", "Elementwise subtraction.")
mul = _binary(ew.mul_p, "mul", "Elementwise multiplication.")
div = _binary(ew.div_p, "div", "Elementwise division (integers round toward zero).")
rem = _binary(ew.rem_p, "rem", "Elementwise remainder with the sign of the dividend.")
max = _binary(ew.max_p, "max", "Elementwise maximum (NaN-propagating).")
min = _binary(ew.min_p, "min", "Elementwise minimum (NaN-propagating).")
atan2 = _binary(ew.atan2_p, "atan2", "Elementwise arc tangent of x / y.")
nextafter = _binary(ew.nextafter_p, "nextafter", "Next representable value after x toward y.")
pow = _binary(ew.pow_p, "pow", "Elementwise power x ** y.")
complex = _binary(ew.complex_p, "complex", "x + 1j * y.")
bitwise_and = _binary(ew.and_p, "bitwise_and", "Elementwise AND.")
bitwise_or = _binary(ew.or_p, "bitwise_or", "Elementwise OR.")
bitwise_xor = _binary(ew.xor_p, "bitwise_xor", "Elementwise XOR.")
shift_left = _binary(ew.shift_left_p, "shift_left", "Elementwise left shift.")
shift_right_arithmetic = _binary(ew.shift_right_arithmetic_p, "shift_right_arithmetic",
                                 "Elementwise arithmetic right shift.")
shift_right_logical = _binary(ew.shift_right_logical_p, "shift_right_logical",
                              "Elementwise logical right shift.")
eq = _binary(ew.eq_p, "eq", "Elementwise x == y.")
ne = _binary(ew.ne_p, "ne", "Elementwise x != y.")
lt = _binary(ew.lt_p, "lt", "Elementwise x < y.")
le = _binary(ew.le_p, "le", "Elementwise x <= y.")
gt = _binary(ew.gt_p, "gt", "Elementwise x > y.")
ge = _binary(ew.ge_p, "ge", "Elementwise x >= y.")


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
  """Elementwise rounding; halves round away from zero by default."""
  return utils.bind(ew.round_p, x, rounding_method=RoundingMethod(rounding_method))


def integer_pow(x, y):
  """x ** y for a static Python integer y."""
  return utils.bind(ew.integer_pow_p, x, y=int(y))


def reciprocal(x):
  """1 / x."""
  from purejax._src.lax.convert import convert_element_type
  from purejax._src import core
  one = convert_element_type(1, core.get_aval(x).dtype, weak_type=True)
  return div(one, x)


def select_n(which, *cases):
  """cases[which], elementwise; a bool ``which`` picks cases[1] where True."""
  return utils.bind(ew.select_n_p, which, *cases)


def select(pred, on_true, on_false):
  """on_true where pred else on_false."""
  return utils.bind(ew.select_n_p, pred, on_false, on_true)


def clamp(min, x, max):
  """x clipped to [min, max]."""
  return utils.bind(ew.clamp_p, min, x, max)
