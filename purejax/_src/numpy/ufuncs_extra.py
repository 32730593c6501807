"""More elementwise functions under NumPy's names: floating-point
manipulation (copysign, signbit, frexp, ldexp, spacing, modf, nan_to_num),
number theory (gcd, lcm), hypot, heaviside, sinc, i0, logaddexp(2) and
bitwise_count.  The ufunc objects (``jnp.add.reduce``...) are in ufunc_api.py.

Out-of-domain inputs give NumPy's results (NaN, inf, -1...) and dtypes are
JAX's.  Bits are read with ``bitcast_convert_type`` only where a value has
no tangent (exponents, sign bits); mantissas are scaled by exact powers of
two, so derivatives come out right.
"""
import functools

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.custom_jvp import custom_jvp
from purejax._src.lax import cumulative as lax_cumulative
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import (
    check_arraylike, check_no_out, promote_args, promote_args_inexact, promote_args_numeric)

_INT_OF_WIDTH = {2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}


def _dtype(x):
  return util.aval_of(x).dtype


def _const(x, value):
  """A constant with x's dtype and weak type."""
  aval = util.aval_of(x)
  return lax.convert_element_type(value, aval.dtype, aval.weak_type)


def _strong(value, dtype):
  return lax.convert_element_type(value, dtype, False)


def _full_bool(x, value):
  return lax.full(util.shape(x), value, np.bool_)


def _all_weak(*args):
  """Whether every argument is weakly typed: then (only) some results are, in JAX."""
  return all(util.aval_of(util.asarray(a)).weak_type for a in args)


def _is_complex(x):
  return dtypes.issubdtype(_dtype(x), np.complexfloating)


def _isnan(x):
  return lax.ne(x, x)


# ---------------------------------------------------------------------------
# Signs and bits

@jit
def signbit(x, /):
  """Whether the sign bit is set (so also for -0.0 and negative NaNs)."""
  x, = promote_args("signbit", x)
  dtype = _dtype(x)
  if dtypes.issubdtype(dtype, np.integer):
    return lax.lt(x, _strong(0, dtype))
  if dtype == np.bool_:
    return _full_bool(x, False)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
  bits = lax.bitcast_convert_type(x, _INT_OF_WIDTH[dtype.itemsize])
  return lax.lt(bits, _strong(0, _dtype(bits)))


@jit
def copysign(x1, x2, /):
  """|x1| with the sign (bit) of x2."""
  x1, x2 = promote_args_inexact("copysign", x1, x2)
  if _is_complex(x1):
    raise TypeError("copysign does not support complex-valued inputs")
  magnitude = lax.abs(x1)
  return ufuncs.where(signbit(x2), lax.neg(magnitude), magnitude)


def _pow2(k, dtype):
  """2.0 ** k (an int32 array in the normal exponent range), built exactly."""
  info = dtypes.finfo(dtype)
  # Bits in an int of the float's width (or wider: float16's fit in int32).
  int_type = _INT_OF_WIDTH[max(np.dtype(dtype).itemsize, 4)]
  biased = lax.convert_element_type(lax.add(k, _strong(1 - info.minexp, np.int32)), int_type,
                                    False)
  bits = lax.shift_left(biased, _strong(info.nmant, int_type))
  bits = lax.convert_element_type(bits, _INT_OF_WIDTH[np.dtype(dtype).itemsize], False)
  return lax.bitcast_convert_type(bits, dtype)


def _exponent(x):
  """The exponent e of x = m * 2**e with 0.5 <= |m| < 1 (int32; 0 for 0,
  inf and NaN).  Subnormals are scaled into the normal range first."""
  dtype = _dtype(x)
  info = dtypes.finfo(dtype)
  tiny = lax.lt(lax.abs(x), _const(x, info.tiny))
  scaled = lax.mul(x, ufuncs.where(tiny, _const(x, 2.0 ** info.nmant), _const(x, 1)))
  int_type = _INT_OF_WIDTH[max(dtype.itemsize, 4)]
  bits = lax.bitcast_convert_type(scaled, _INT_OF_WIDTH[dtype.itemsize])
  field = lax.convert_element_type(bits, int_type, False)
  field = lax.bitwise_and(lax.shift_right_logical(field, _strong(info.nmant, int_type)),
                          _strong((1 << info.nexp) - 1, int_type))
  field = lax.convert_element_type(field, np.int32, False)
  e = lax.sub(field, _strong(-info.minexp, np.int32))
  e = lax.sub(e, ufuncs.where(tiny, _strong(info.nmant, np.int32), _strong(0, np.int32)))
  special = lax.bitwise_or(lax.bitwise_not(lax.is_finite(x)), lax.eq(x, _const(x, 0)))
  return ufuncs.where(special, _strong(0, np.int32), e)


@jit
def frexp(x, /):
  """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1;
  0, inf and NaN come back unchanged with exponent 0."""
  check_arraylike("frexp", x)
  x, = util.promote_dtypes_inexact(x)
  if _is_complex(x):
    raise TypeError("frexp does not support complex-valued inputs")
  dtype = _dtype(x)
  e = _exponent(x)
  # x * 2**-e as two exact scalings by normal powers of two (subnormals too:
  # scaling them up loses no bits).
  half = lax.div(e, _strong(2, np.int32))
  mantissa = lax.mul(lax.mul(x, _pow2(lax.neg(half), dtype)),
                     _pow2(lax.sub(half, e), dtype))
  special = lax.bitwise_or(lax.bitwise_not(lax.is_finite(x)), lax.eq(x, _const(x, 0)))
  return ufuncs.where(special, x, mantissa), e


def _clipped_int32(n):
  """An integer array as int32, clipped far past any float exponent range."""
  dtype = _dtype(n)
  info = dtypes.iinfo(dtype)
  lo, hi = max(info.min, -(1 << 16)), min(info.max, 1 << 16)
  if (lo, hi) != (info.min, info.max):
    n = lax.clamp(_strong(lo, dtype), n, _strong(hi, dtype))
  return lax.convert_element_type(n, np.int32, False)


@jit
def ldexp(x1, x2, /):
  """x1 * 2**x2 for an integer x2, rounded once (also into subnormals)."""
  check_arraylike("ldexp", x1, x2)
  d1, d2 = _dtype(util.asarray(x1)), _dtype(util.asarray(x2))
  if dtypes.issubdtype(d1, np.complexfloating) or dtypes.issubdtype(d2, np.inexact):
    raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
  x1, = promote_args_inexact("ldexp", x1)
  x2 = util.asarray(x2)
  if d2 == np.bool_:
    x2 = lax.convert_element_type(x2, np.int32, False)
  x1, x2 = util.broadcast_arrays(x1, x2)
  dtype = _dtype(x1)
  info = dtypes.finfo(dtype)
  mantissa, e = frexp(x1)
  total = lax.add(e, _clipped_int32(x2))
  # mantissa * 2**a stays normal and exact; the single rounding is * 2**b.
  a = lax.clamp(_strong(info.minexp + 1, np.int32), total, _strong(info.maxexp - 1, np.int32))
  b = lax.clamp(_strong(info.minexp, np.int32), lax.sub(total, a),
                _strong(info.maxexp - 1, np.int32))
  out = lax.mul(lax.mul(mantissa, _pow2(a, dtype)), _pow2(b, dtype))
  return lax.convert_element_type(out, dtype, False)   # never weak, as in JAX


@jit
def spacing(x, /):
  """Distance from x to the next representable number away from zero."""
  x, = promote_args_inexact("spacing", x)
  if _is_complex(x):
    raise ValueError("jnp.spacing is not defined for complex inputs.")
  inf = _const(x, np.inf)
  x = lax.convert_element_type(x, _dtype(x), False)   # the result is never weak
  if _dtype(x) == np.float16:
    # As JAX: toward +inf for float16.
    return lax.sub(lax.nextafter(x, util.broadcast_to(inf, util.shape(x))), x)
  step = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
  smallest = copysign(_const(x, dtypes.finfo(_dtype(x)).smallest_subnormal), x)
  return ufuncs.where(lax.eq(step, _const(x, 0)), smallest, step)


@jit
def modf(x, /, out=None):
  """(fractional part, integral part) as JAX computes them: x - whole, so the
  fraction of an infinity is NaN and that of -2.0 is +0.0 (NumPy: -0.0)."""
  check_arraylike("modf", x)
  check_no_out("modf", out)
  x, = util.promote_dtypes_inexact(x)
  whole = ufuncs.where(lax.ge(x, _const(x, 0)), ufuncs.floor(x), ufuncs.ceil(x))
  return lax.sub(x, whole), whole


@jit
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
  """NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf`` (by default the
  dtype's largest and smallest finite values)."""
  del copy
  check_arraylike("nan_to_num", x)
  x = util.asarray(x)
  dtype = _dtype(x)
  if not dtypes.issubdtype(dtype, np.inexact):
    return x
  if dtypes.issubdtype(dtype, np.complexfloating):
    part = lambda p: nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
    return lax.complex(part(lax.real(x)), part(lax.imag(x)))
  info = dtypes.finfo(dtype)
  posinf = info.max if posinf is None else posinf
  neginf = info.min if neginf is None else neginf
  as_x = lambda v: util.broadcast_to(_strong(v, dtype), util.shape(x))
  out = ufuncs.where(_isnan(x), as_x(nan), x)
  out = ufuncs.where(lax.eq(out, _const(x, np.inf)), as_x(posinf), out)
  return ufuncs.where(lax.eq(out, _const(x, -np.inf)), as_x(neginf), out)


# ---------------------------------------------------------------------------
# Arithmetic

def _gcd_step(pair):
  # Unsigned operands: every step makes progress (|int_min| is no trap).
  a, b = pair
  nonzero = lax.ne(b, _const(b, 0))
  safe_b = ufuncs.where(nonzero, b, _const(b, 1))
  a, b = ufuncs.where(nonzero, b, a), ufuncs.where(nonzero, lax.rem(a, safe_b), b)
  return ufuncs.where(lax.lt(a, b), b, a), ufuncs.where(lax.lt(a, b), a, b)


@jit
def gcd(x1, x2):
  """Greatest common divisor of |x1| and |x2| (Euclid's algorithm)."""
  check_arraylike("gcd", x1, x2)
  x1, x2 = util.promote_dtypes(x1, x2)
  if not dtypes.issubdtype(_dtype(x1), np.integer):
    raise ValueError("Arguments to jax.numpy.gcd must be integers.")
  dtype = _dtype(x1)
  weak = core.get_aval(x1).weak_type   # gcd of Python ints stays weakly typed
  unsigned = np.dtype(f"uint{dtype.itemsize * 8}")
  # |x| as unsigned: |int_min| wraps back to int_min at the end, as in NumPy.
  x1, x2 = (lax.convert_element_type(ufuncs.absolute(x), unsigned, False)
            for x in util.broadcast_arrays(x1, x2))
  pending = lambda pair: reductions.any(lax.ne(pair[1], _const(pair[1], 0)))
  out = lax.while_loop(pending, _gcd_step, (x1, x2))[0]
  return lax.convert_element_type(out, dtype, weak)


@jit
def lcm(x1, x2):
  """Least common multiple of |x1| and |x2| (0 if either is 0)."""
  check_arraylike("lcm", x1, x2)
  x1, x2 = util.promote_dtypes(x1, x2)
  x1, x2 = ufuncs.absolute(x1), ufuncs.absolute(x2)
  if not dtypes.issubdtype(_dtype(x1), np.integer):
    raise ValueError("Arguments to jax.numpy.lcm must be integers.")
  d = gcd(x1, x2)
  zero = lax.eq(d, _const(d, 0))
  safe_d = ufuncs.where(zero, _const(d, 1), d)
  out = ufuncs.where(zero, _const(d, 0), ufuncs.multiply(x1, ufuncs.floor_divide(x2, safe_d)))
  return lax.convert_element_type(out, _dtype(x1), core.get_aval(x1).weak_type)


@jit
def heaviside(x1, x2, /):
  """0 for x1 < 0, 1 for x1 > 0, x2 at 0 (NaN stays NaN)."""
  check_arraylike("heaviside", x1, x2)
  weak = _all_weak(x1, x2)
  x1, x2 = util.promote_dtypes_inexact(x1, x2)
  zero, one = _const(x1, 0), _const(x1, 1)
  at_zero = ufuncs.where(_isnan(x1), x1, x2)
  out = ufuncs.where(lax.lt(x1, zero), zero, ufuncs.where(lax.gt(x1, zero), one, at_zero))
  return lax.convert_element_type(out, _dtype(out), weak)


@jit
def hypot(x1, x2, /):
  """sqrt(x1**2 + x2**2) without overflow or underflow (inf beats NaN)."""
  check_arraylike("hypot", x1, x2)
  weak = _all_weak(x1, x2)
  x1, x2 = promote_args_inexact("hypot", x1, x2)
  if _is_complex(x1):
    raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                     "convert to real values first, such as by using abs(x)")
  x1, x2 = lax.abs(x1), lax.abs(x2)
  inf = _const(x1, np.inf)
  any_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
  big, small = ufuncs.maximum(x1, x2), ufuncs.minimum(x1, x2)
  zero = lax.eq(big, _const(big, 0))
  ratio = lax.div(small, ufuncs.where(zero, _const(big, 1), big))
  out = ufuncs.where(zero, big, lax.mul(big, lax.sqrt(lax.add(_const(ratio, 1),
                                                               lax.square(ratio)))))
  out = ufuncs.where(any_inf, _const(out, np.inf), out)
  return lax.convert_element_type(out, _dtype(out), weak)


@jit
def bitwise_count(x, /):
  """Number of set bits of |x|, as uint8."""
  x, = promote_args_numeric("bitwise_count", x)
  count = lax.population_count(ufuncs.absolute(x))
  return lax.convert_element_type(count, np.uint8, False)


# ---------------------------------------------------------------------------
# logaddexp, logaddexp2, sinc, i0

def _logaddexp(x1, x2, /):
  """log(exp(x1) + exp(x2)) without overflow (a custom JVP keeps gradients
  finite at infinities)."""
  x1, x2 = promote_args_inexact("logaddexp", x1, x2)
  return lax_cumulative.logaddexp(x1, x2)


@custom_jvp
def _logaddexp2(x1, x2):
  return lax_cumulative.log_add(x1, x2, lax.exp2, log1p_scale=1 / np.log(2),
                                half_period=np.pi / np.log(2))


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
  x1, x2 = primals
  t1, t2 = tangents
  out = _logaddexp2(x1, x2)
  fix = lax_cumulative.replace_posinf
  w1 = lax.exp2(lax.sub(fix(x1), fix(out)))
  w2 = lax.exp2(lax.sub(fix(x2), fix(out)))
  return out, lax.add(lax.mul(t1, w1), lax.mul(t2, w2))


_logaddexp2.__name__ = "logaddexp2"


def _logaddexp2_call(x1, x2, /):
  """log2(2**x1 + 2**x2) without overflow."""
  x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
  return _logaddexp2(x1, x2)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k, x):
  """The k-th derivative of sin(y)/y at y = 0, shaped like x; its JVP is the
  next derivative, so every derivative of sinc at 0 is finite."""
  coefficient = 0.0 if k % 2 else (-1) ** (k // 2) / (k + 1)
  return lax.add(lax.mul(x, _const(x, 0)), _const(x, coefficient))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
  (x,), (t,) = primals, tangents
  return _sinc_maclaurin(k, x), lax.mul(t, _sinc_maclaurin(k + 1, x))


@jit
def sinc(x, /):
  """sin(pi x) / (pi x), with sinc(0) = 1 (and smooth there)."""
  check_arraylike("sinc", x)
  x, = util.promote_dtypes_inexact(x)
  at_zero = lax.eq(x, _const(x, 0))
  pi_x = lax.mul(_const(x, np.pi), x)
  safe = ufuncs.where(at_zero, _const(x, 1), pi_x)
  return ufuncs.where(at_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe), safe))


@custom_jvp
def _i0(x):
  abs_x = lax.abs(x)
  return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


@_i0.defjvp
def _i0_jvp(primals, tangents):
  from purejax._src import ad_api
  out, tangent = ad_api.jvp(_i0.fun, primals, tangents)
  x, = primals
  # I0 is even and smooth: its slope at 0 is exactly 0.
  return out, ufuncs.where(lax.eq(x, _const(x, 0)), _const(tangent, 0), tangent)


@jit
def i0(x):
  """The modified Bessel function of the first kind, order 0 (its slope at
  0 is exactly 0)."""
  x, = promote_args_inexact("i0", x)
  dtype = _dtype(x)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtype}")
  if dtype.itemsize < 4:   # half floats: evaluate the series in float32
    wide = lax.convert_element_type(x, np.float32, util.aval_of(x).weak_type)
    return lax.convert_element_type(_i0(wide), dtype, util.aval_of(x).weak_type)
  return _i0(x)
