"""The C expression of each primitive, per dtype.

Every expression computes exactly what the primitive's NumPy ``impl`` computes:
integers wrap around (arithmetic is done in unsigned types, so there is no
undefined overflow), integer division and remainder follow lax (x / 0 = -1,
x % 0 = x), shifts by the width or more give 0 (or the sign fill), max/min
propagate NaN and order -0.0 below +0.0.  ``OPS[name]`` is a pair
``(supports(in_dtypes, out_dtype, params), emit(ctx, args, in_dtypes,
out_dtype, params))``; ``emit`` returns a C expression over the argument
expressions and may declare temporaries with ``ctx.tmp(ctype, expr)``.
float32 exp, log and erf_inv call the ``pj_`` helpers of ``prelude``; the other
transcendental functions are glibc's (through libmvec where it agrees with
NumPy within 2 ulp).
"""
import numpy as np

from purejax._src.backends.cpu import complex_c, complex_inverse_c, erf_c, special_c

_CTYPES = {
    "bool": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
    "int64": "int64_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
    "uint64": "uint64_t", "float32": "float", "float64": "double",
    "float16": "float", "bfloat16": "float",
    "complex64": "float _Complex", "complex128": "double _Complex",
}
# Half-precision floats are stored as their bits and computed as floats
# (``load``/``store`` convert exactly, ``round_to`` rounds each result).
_HALF = {"float16": ("pj_h2f", "pj_store_f16", "pj_round_f16"),
         "bfloat16": ("pj_bf2f", "pj_store_bf16", "pj_round_bf16")}


def ctype(dtype):
  """The C type of ``dtype``'s values in expressions (float for half floats)."""
  return _CTYPES[np.dtype(dtype).name]


def storage_ctype(dtype):
  """The C type of ``dtype``'s elements in memory."""
  return "uint16_t" if is_half(dtype) else ctype(dtype)


def dtype_supported(dtype):
  return np.dtype(dtype).name in _CTYPES


def is_half(dtype):
  return np.dtype(dtype).name in _HALF


def load(expr, dtype):
  """The value of element ``expr`` (a storage_ctype lvalue) of ``dtype``."""
  return f"{_HALF[np.dtype(dtype).name][0]}({expr})" if is_half(dtype) else expr


def store(expr, dtype):
  """Value ``expr`` of ``dtype`` (a half float's value already rounded to
  it) as its storage_ctype."""
  return f"{_HALF[np.dtype(dtype).name][1]}({expr})" if is_half(dtype) else expr


def round_to(expr, dtype):
  """A float result ``expr`` rounded to ``dtype`` when that is a half float."""
  return f"{_HALF[np.dtype(dtype).name][2]}({expr})" if is_half(dtype) else expr


def dtype_kind(dtype):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return "b"
  return "f" if dtype.name in _HALF else dtype.kind   # b, i, u, f, c


def _bits(dtype):
  return np.dtype(dtype).itemsize * 8


def real_dtype(dtype):
  """The dtype of a complex dtype's parts."""
  return np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else np.float64)


def wide_unsigned(dtype):
  """The unsigned type integer arithmetic on ``dtype`` is done in."""
  return "uint64_t" if _bits(dtype) == 64 else "uint32_t"


def _same_unsigned(dtype):
  return f"uint{_bits(dtype)}_t"


def _same_signed(dtype):
  return f"int{_bits(dtype)}_t"


def float_suffix(dtype):
  """The suffix of C math functions on ``dtype`` (or its real parts)."""
  return "f" if np.dtype(dtype).itemsize <= 4 or np.dtype(dtype) == np.complex64 else ""


def literal(value, dtype):
  """A C literal of ``value`` (a scalar) with type ``dtype``, exactly."""
  dtype = np.dtype(dtype)
  kind, ct = dtype_kind(dtype), ctype(dtype)
  value = np.asarray(value).astype(dtype)[()]
  if kind == "c":
    real = real_dtype(dtype)
    return f"PJ_COMPLEX({literal(value.real, real)}, {literal(value.imag, real)})"
  if is_half(dtype):
    value = np.float32(value)
  if kind == "b":
    return "1" if value else "0"
  if kind == "f":
    if np.isnan(value):
      return f"(({ct})NAN)"
    if np.isinf(value):
      return f"(({ct})INFINITY)" if value > 0 else f"(-({ct})INFINITY)"
    return f"(({ct}){float(value).hex()})"
  if kind == "u":
    return f"(({ct}){int(value)}ULL)"
  v = int(value)
  if v == -(1 << 63):
    return "((int64_t)(-9223372036854775807LL - 1))"
  return f"(({ct}){v}LL)"


def storage_literal(value, dtype):
  """``literal`` as stored in memory (half floats: their bits)."""
  if is_half(dtype):
    bits = int(np.asarray(value).astype(dtype).reshape(1).view(np.uint16)[0])
    return f"((uint16_t){bits:#06x})"
  return literal(value, dtype)


def lowest(dtype):
  kind = dtype_kind(dtype)
  if kind == "f":
    return literal(-np.inf, dtype)
  if kind == "b":
    return "0"
  return literal(np.iinfo(dtype).min, dtype)


def highest(dtype):
  kind = dtype_kind(dtype)
  if kind == "f":
    return literal(np.inf, dtype)
  if kind == "b":
    return "1"
  return literal(np.iinfo(dtype).max, dtype)


# -- support predicates ----------------------------------------------------------

def _floats(ins, out, params):
  return all(dtype_kind(d) == "f" for d in ins)


def _numeric(ins, out, params):
  return all(dtype_kind(d) in "iuf" for d in ins)


def _number(ins, out, params):
  return all(dtype_kind(d) in "iufc" for d in ins)


def _real(ins, out, params):
  return all(dtype_kind(d) != "c" for d in list(ins) + [out])


def _complex_or(pred):
  """``pred``, or complex operands."""
  def supports(ins, out, params):
    return all(dtype_kind(d) == "c" for d in ins) or pred(ins, out, params)
  return supports


def _any(ins, out, params):
  return True


def _integral(ins, out, params):
  return all(dtype_kind(d) in "iub" for d in ins)


def _ints(ins, out, params):
  return all(dtype_kind(d) in "iu" for d in ins)


# -- unary -------------------------------------------------------------------------

# Complex functions by name: glibc's, or NumPy's formulas (prelude).
_COMPLEX_MATH = {"exp": "cexp", "log": "clog", "sqrt": "csqrt", "sin": "csin", "cos": "ccos",
                 "tanh": "ctanh", "expm1": "pj_cexpm1", "log1p": "pj_clog1p",
                 "tan": "ctan", "asin": "casin", "acos": "cacos", "atan": "catan",
                 "asinh": "casinh", "acosh": "cacosh", "atanh": "catanh", "exp2": "pj_cexp2"}


def _math(name):
  def emit(ctx, args, ins, out, params):
    if dtype_kind(ins[0]) == "c":
      return f"{_COMPLEX_MATH[name]}{float_suffix(ins[0])}({args[0]})"
    if name in ("exp", "log", "tanh") and ctype(ins[0]) == "float":
      return f"pj_{name}f({args[0]})"
    return f"{name}{float_suffix(ins[0])}({args[0]})"
  return (_complex_or(_floats) if name in _COMPLEX_MATH else _floats, emit)


def _neg(ctx, args, ins, out, params):
  a, = args
  if dtype_kind(out) in "fc":
    return f"(-{a})"
  return f"(({ctype(out)})(({wide_unsigned(out)})0 - ({wide_unsigned(out)}){a}))"


def _sign(ctx, args, ins, out, params):
  a, = args
  kind, ct = dtype_kind(out), ctype(out)
  if kind == "c":
    return f"pj_csign{float_suffix(out)}({a})"
  if kind == "f":
    return f"(({a} == 0 || {a} != {a}) ? {a} : ({a} > 0 ? ({ct})1 : ({ct})-1))"
  if kind == "u":
    return f"(({ct})({a} > 0))"
  return f"(({ct})(({a} > 0) - ({a} < 0)))"


def _abs(ctx, args, ins, out, params):
  a, = args
  if dtype_kind(ins[0]) == "c":
    return f"pj_cabs{float_suffix(ins[0])}({a})"
  if dtype_kind(out) == "f":
    return f"fabs{float_suffix(out)}({a})"
  u = wide_unsigned(out)
  return f"(({ctype(out)})({a} < 0 ? ({u})0 - ({u}){a} : ({u}){a}))"


def _wrap_binary(op):
  """An arithmetic op: floats directly, integers wrapping in unsigned types."""
  def emit(ctx, args, ins, out, params):
    a, b = args
    if dtype_kind(out) == "c" and op == "*":   # NumPy's product (C's recovers infinities)
      return f"pj_cmul{float_suffix(out)}({a}, {b})"
    if dtype_kind(out) in "fc":
      return f"({a} {op} {b})"
    u = wide_unsigned(out)
    return f"(({ctype(out)})(({u}){a} {op} ({u}){b}))"
  return emit


def _square(ctx, args, ins, out, params):
  return _wrap_binary("*")(ctx, [args[0], args[0]], ins, out, params)


def _not(ctx, args, ins, out, params):
  a, = args
  if dtype_kind(out) == "b":
    return f"({a} ^ 1)"
  return f"(({ctype(out)})~{a})"


def _population_count(ctx, args, ins, out, params):
  a, = args
  if _bits(out) == 64:
    return f"(({ctype(out)})__builtin_popcountll((uint64_t){a}))"
  return f"(({ctype(out)})__builtin_popcount((uint32_t)({_same_unsigned(out)}){a}))"


def _clz(ctx, args, ins, out, params):
  a, = args
  bits, ct = _bits(out), ctype(out)
  if bits == 64:
    return f"({a} == 0 ? ({ct})64 : ({ct})__builtin_clzll((uint64_t){a}))"
  u = f"(uint32_t)({_same_unsigned(out)}){a}"
  return f"({a} == 0 ? ({ct}){bits} : ({ct})(__builtin_clz({u}) - {32 - bits}))"


def _round(ctx, args, ins, out, params):
  a, = args
  f, ct = float_suffix(out), ctype(out)
  if int(params["rounding_method"]) == 1:   # to nearest even
    return f"rint{f}({a})"
  # As the NumPy impl: trunc(x) plus sign(x) where the fraction is >= 1/2,
  # with x's sign (-0.3 -> -0.0).
  w = ctx.tmp(ct, f"trunc{f}({a})")
  step = f"({a} > 0 ? ({ct})1 : ({ct})-1)"
  return (f"copysign{f}({w} + ((fabs{f}({a} - {w}) >= ({ct})0.5) ? {step} : ({ct})0), "
          f"{a})")


def _logistic(ctx, args, ins, out, params):
  a, = args
  ct = ctype(out)
  if dtype_kind(out) == "c":   # 1 / (1 + exp(-x)), NumPy's quotient
    f = float_suffix(out)
    return f"pj_cdiv{f}(({ct})1, ({ct})1 + cexp{f}(-{a}))"
  exp = "pj_expf" if ct == "float" else "exp"
  return f"(({ct})1 / (({ct})1 + {exp}(-{a})))"


def _rsqrt(ctx, args, ins, out, params):
  if dtype_kind(out) == "c":   # 1 / sqrt(x), NumPy's quotient
    f = float_suffix(out)
    return f"pj_cdiv{f}(({ctype(out)})1, csqrt{f}({args[0]}))"
  return f"(({ctype(out)})1 / sqrt{float_suffix(out)}({args[0]}))"


def _integer_pow(ctx, args, ins, out, params):
  """Repeated squaring in the order of the NumPy impl (same roundings)."""
  x, = args
  y = int(params["y"])
  ct = ctype(out)
  if y == 0:
    return literal(1, out)

  def mul(a, b):   # each product rounded (half floats), as a chain of mul
    return ctx.tmp(ct, round_to(_wrap_binary("*")(ctx, [a, b], ins, out, {}), out))

  n, result, base = abs(y), None, x
  while n:
    if n & 1:
      result = base if result is None else mul(result, base)
    n >>= 1
    if n:
      base = mul(base, base)
  if y > 0:
    return result
  if dtype_kind(out) == "c":
    return f"pj_crecip{float_suffix(out)}({result})"
  return round_to(f"(({ct})1 / {result})", out)


# -- binary ------------------------------------------------------------------------

def _div(ctx, args, ins, out, params):
  a, b = args
  kind, ct = dtype_kind(out), ctype(out)
  if kind == "c":
    return f"pj_cdiv{float_suffix(out)}({a}, {b})"
  if kind == "f":
    return f"({a} / {b})"
  if kind == "u":
    return f"({b} == 0 ? ({ct})-1 : ({ct})({a} / {b}))"
  neg = _neg(ctx, [a], ins, out, params)   # x / -1 without the overflow trap
  return f"({b} == 0 ? ({ct})-1 : {b} == -1 ? {neg} : ({ct})({a} / {b}))"


def _rem(ctx, args, ins, out, params):
  a, b = args
  kind, ct = dtype_kind(out), ctype(out)
  if kind == "f":
    return f"fmod{float_suffix(out)}({a}, {b})"
  if kind == "u":
    return f"({b} == 0 ? {a} : ({ct})({a} % {b}))"
  return f"({b} == 0 ? {a} : {b} == -1 ? ({ct})0 : ({ct})({a} % {b}))"


def _extremum(which):
  def emit(ctx, args, ins, out, params):
    a, b = args
    if dtype_kind(out) in "fc":   # complex: lexicographic, XLA's NaN rule
      return f"pj_{'c' if dtype_kind(out) == 'c' else ''}{which}{float_suffix(out)}({a}, {b})"
    op = ">" if which == "max" else "<"
    return f"({a} {op} {b} ? {a} : {b})"
  return emit


def _pow_supports(ins, out, params):
  return dtype_kind(ins[0]) in "fc" and dtype_kind(ins[1]) in "iu" + dtype_kind(ins[0])


def _pow(ctx, args, ins, out, params):
  a, b = args
  if dtype_kind(ins[1]) != dtype_kind(out):
    b = f"(({ctype(out)}){b})"   # an integer exponent, in x's precision
  if dtype_kind(out) == "c":
    return f"pj_cpow{float_suffix(out)}({a}, {b})"
  if dtype_kind(ins[1]) != "f":
    return f"pow{float_suffix(out)}({a}, {b})"
  # gcc may compute pow(x, 0.5) as sqrt(x), wrong at -0.0 and -inf: the
  # IEEE values (+0.0, +inf) are chosen explicitly.
  ct = ctype(out)
  return (f"(({b}) == ({ct})0.5 && (({a}) == 0 || ({a}) == -({ct})INFINITY) ? "
          f"(({a}) == 0 ? ({ct})0 : ({ct})INFINITY) : pow{float_suffix(out)}({a}, {b}))")


def _math2(name):
  def emit(ctx, args, ins, out, params):
    return f"{name}{float_suffix(out)}({args[0]}, {args[1]})"
  return (_floats, emit)


def _nextafter(ctx, args, ins, out, params):
  a, b = args
  if not is_half(out):
    return f"nextafter{float_suffix(out)}({a}, {b})"
  # A half float's neighbour: step its 16 bits (the value is exact in float).
  load, store_bits, _ = _HALF[np.dtype(out).name]
  ua, ub = ctx.tmp("uint16_t", f"{store_bits}({a})"), ctx.tmp("uint16_t", f"{store_bits}({b})")
  step = (f"(uint16_t)({a} == 0 ? (({ub}) & 0x8000u) | 1u : "
          f"(({a} < {b}) == ({a} > 0) ? {ua} + 1u : {ua} - 1u))")
  stepped = ctx.tmp("float", f"{load}({step})")
  if np.dtype(out).name == "bfloat16":   # as the NumPy impl: onto zero toward a zero gives b
    stepped = f"({stepped} == 0 && {b} == 0 ? {b} : {stepped})"
  return f"(({a} != {a} || {b} != {b}) ? NAN : {a} == {b} ? {b} : {stepped})"


def _bitwise(op):
  def emit(ctx, args, ins, out, params):
    return f"(({ctype(out)})({args[0]} {op} {args[1]}))"
  return (_integral, emit)


def _shift_ok(b, dtype):
  bits = _bits(dtype)
  return f"({b} < {bits})" if dtype_kind(dtype) == "u" else f"({b} >= 0 && {b} < {bits})"


def _shift_left(ctx, args, ins, out, params):
  a, b = args
  return (f"({_shift_ok(b, out)} ? ({ctype(out)})(({wide_unsigned(out)}){a} << {b})"
          f" : ({ctype(out)})0)")


def _shift_right_arithmetic(ctx, args, ins, out, params):
  # The sign bit is copied for unsigned types too (as JAX): shift the bits as signed.
  a, b = args
  return (f"(({ctype(out)})(({_same_signed(out)}){a} >> "
          f"({_shift_ok(b, out)} ? {b} : {_bits(out) - 1})))")


def _shift_right_logical(ctx, args, ins, out, params):
  a, b = args
  return (f"({_shift_ok(b, out)} ? ({ctype(out)})(({_same_unsigned(out)}){a} >> {b})"
          f" : ({ctype(out)})0)")


def _compare(op):
  def emit(ctx, args, ins, out, params):
    return f"({args[0]} {op} {args[1]})"
  return (_any, emit)


# -- select, clamp, convert ----------------------------------------------------------

def _select_n(ctx, args, ins, out, params):
  which, *cases = args
  if len(cases) == 1:
    return cases[0]
  if dtype_kind(ins[0]) == "b":
    return f"({which} ? {cases[1]} : {cases[0]})"
  expr = cases[-1]   # out-of-range indices clip, as np.choose(mode="clip")
  for i in range(len(cases) - 2, -1, -1):
    expr = f"({which} < {i + 1} ? {cases[i]} : {expr})"
  return expr


def _clamp(ctx, args, ins, out, params):
  # min(max(x, lo), hi) with lax's max and min: NaN propagates, -0.0 orders
  # below +0.0.
  lo, x, hi = args
  ct = ctype(out)
  if dtype_kind(out) == "c":   # XLA's: by real parts alone, as the NumPy impl
    t = ctx.tmp(ct, f"(PJ_REAL({lo}) >= PJ_REAL({x}) ? {lo} : {x})")
    return f"(PJ_REAL({t}) <= PJ_REAL({hi}) ? {t} : {hi})"
  t = ctx.tmp(ct, _extremum("max")(ctx, (x, lo), ins, out, params))
  return _extremum("min")(ctx, (t, hi), ins, out, params)


def _convert(ctx, args, ins, out, params):
  a, = args
  src, dst = np.dtype(ins[0]), np.dtype(out)
  ct = ctype(dst)
  if src == dst:
    return a
  if dtype_kind(src) == "c":
    if dtype_kind(dst) == "c":
      return f"(({ct}){a})"   # each part converted
    a, src = f"PJ_REAL({a})", real_dtype(src)   # the imaginary part is dropped
  if dtype_kind(dst) == "c":
    real = real_dtype(dst)
    re = _convert(ctx, [a], [src], real, params)
    return f"PJ_COMPLEX({re}, ({ctype(real)})0)"
  if is_half(src):   # its value is a float, exactly
    src = np.dtype(np.float32)
  if is_half(dst):   # through float32 (XLA's double rounding from float64)
    return round_to(_convert(ctx, [a], [src], np.float32, params), dst)
  if src == dst:
    return a
  if dtype_kind(dst) == "b":
    return f"({a} != 0)"
  if dtype_kind(src) == "f" and dtype_kind(dst) in "iu":
    # Saturating, NaN -> 0; the bounds are powers of two (exact in floats).
    info = np.iinfo(dst)
    lo_bound = "-1" if dtype_kind(dst) == "u" else f"-{float(2 ** (_bits(dst) - 1)).hex()}"
    hi_bound = float(int(info.max) + 1).hex()
    sc = ctype(src)
    return (f"({a} != {a} ? ({ct})0 : {a} <= ({sc}){lo_bound} ? {literal(info.min, dst)} : "
            f"{a} >= ({sc}){hi_bound} ? {literal(info.max, dst)} : ({ct}){a})")
  if dtype_kind(dst) == "f" and dtype_kind(src) in "iub":
    # gcc folds (float)(int)x into truncf(x) under -fno-trapping-math, which
    # keeps the sign of -0.0 where the conversions give +0.0: an opaque zero
    # hides where the integer came from.
    return f"(({ct})({a} ^ pj_opaque_zero))"
  return f"(({ct}){a})"


def _identity(ctx, args, ins, out, params):
  return args[0]


def _bitcast_supports(ins, out, params):
  # Same width only: the others change the shape (a trailing axis of pieces).
  return (np.dtype(ins[0]).itemsize == np.dtype(out).itemsize
          and dtype_kind(ins[0]) in "iuf" and dtype_kind(out) in "iuf")


def _bitcast(ctx, args, ins, out, params):
  a, = args
  if is_half(ins[0]) or is_half(out):   # through the 16 bits
    bits = store(a, ins[0]) if is_half(ins[0]) else f"(uint16_t){a}"
    return load(bits, out) if is_half(out) else f"(({ctype(out)}){bits})"
  src, dst = ctype(ins[0]), ctype(out)
  if src == dst:
    return a
  # Through the prelude's bit helpers (C and CUDA C++ alike; an integer
  # cast between same-width integers keeps the bits).
  if src == "float":
    a = f"pj_bitsf({a})"
  elif src == "double":
    a = f"pj_bits({a})"
  if dst == "float":
    return f"pj_f_from_bits((uint32_t)({a}))"
  if dst == "double":
    return f"pj_from_bits((uint64_t)({a}))"
  return f"(({dst})({a}))"


def _complex_in(ins, out, params):
  return dtype_kind(ins[0]) == "c"


def _real_part(ctx, args, ins, out, params):
  return f"PJ_REAL({args[0]})"


def _imag_part(ctx, args, ins, out, params):
  return f"PJ_IMAG({args[0]})"


def _conj(ctx, args, ins, out, params):
  a, = args
  if dtype_kind(ins[0]) != "c":   # a real input, widened
    return _convert(ctx, args, ins, out, params)
  return f"PJ_COMPLEX(PJ_REAL({a}), -PJ_IMAG({a}))"


def _complex(ctx, args, ins, out, params):
  return f"PJ_COMPLEX({args[0]}, {args[1]})"


def _erf_inv_supports(ins, out, params):
  # float32 and float64 (half floats through float32, rounded once)
  return np.dtype(ins[0]) in (np.float32, np.float64) or is_half(ins[0])


def _lgamma(ctx, args, ins, out, params):
  # lgamma_r: plain lgamma writes the global signgam from every thread.
  return f"pj_lgamma{float_suffix(ins[0])}({args[0]})"


def _erf_inv(ctx, args, ins, out, params):
  return f"pj_erf_inv({args[0]})" if np.dtype(ins[0]) == np.float64 else \
      f"pj_erf_invf({args[0]})"


OPS = {
    "neg": (_number, _neg),
    "sign": (_number, _sign),
    "floor": _math("floor"),
    "ceil": _math("ceil"),
    "round": (_floats, _round),
    "is_finite": (_floats, lambda ctx, args, ins, out, params: f"(isfinite({args[0]}) != 0)"),
    "exp": _math("exp"), "exp2": _math("exp2"), "expm1": _math("expm1"),
    "log": _math("log"), "log1p": _math("log1p"),
    "sin": _math("sin"), "cos": _math("cos"), "tan": _math("tan"),
    "asin": _math("asin"), "acos": _math("acos"), "atan": _math("atan"),
    "sinh": _math("sinh"), "cosh": _math("cosh"), "tanh": _math("tanh"),
    "asinh": _math("asinh"), "acosh": _math("acosh"), "atanh": _math("atanh"),
    "sqrt": _math("sqrt"), "cbrt": _math("cbrt"),
    "erf": (_floats, erf_c.emit("erf")), "erfc": (_floats, erf_c.emit("erfc")),
    "lgamma": (_floats, _lgamma),
    "rsqrt": (_complex_or(_floats), _rsqrt),
    "logistic": (_complex_or(_floats), _logistic),
    "abs": (_number, _abs),
    "square": (_number, _square),
    "integer_pow": (_number, _integer_pow),
    "not": (_integral, _not),
    "population_count": (_ints, _population_count),
    "clz": (_ints, _clz),
    "add": (_number, _wrap_binary("+")),
    "add_any": (_number, _wrap_binary("+")),
    "sub": (_number, _wrap_binary("-")),
    "mul": (_number, _wrap_binary("*")),
    "div": (_number, _div),
    "rem": (_numeric, _rem),
    "max": (_number, _extremum("max")),
    "min": (_number, _extremum("min")),
    "pow": (_pow_supports, _pow),
    "atan2": _math2("atan2"),
    "nextafter": (_floats, _nextafter),
    "and": _bitwise("&"), "or": _bitwise("|"), "xor": _bitwise("^"),
    "shift_left": (_ints, _shift_left),
    "shift_right_arithmetic": (_ints, _shift_right_arithmetic),
    "shift_right_logical": (_ints, _shift_right_logical),
    "eq": _compare("=="), "ne": _compare("!="), "lt": _compare("<"),
    "le": _compare("<="), "gt": _compare(">"), "ge": _compare(">="),
    "select_n": (_any, _select_n),
    "clamp": (_any, _clamp),
    "convert_element_type": (_any, _convert),
    "stop_gradient": (_any, _identity),
    "bitcast_convert_type": (_bitcast_supports, _bitcast),
    "erf_inv": (_erf_inv_supports, _erf_inv),
    "copy": (_any, _identity),
    "name": (_any, _identity),
    "real": (_complex_in, _real_part),
    "imag": (_complex_in, _imag_part),
    "conj": (_any, _conj),
    "complex": (_floats, _complex),
}
OPS.update(special_c.OPS)

# Operations whose results on half floats need no rounding: exact, or
# rounded by their emitter.
_EXACT_ON_HALF = frozenset(("neg", "sign", "floor", "ceil", "round", "is_finite", "abs",
                            "max", "min", "rem", "select_n", "clamp", "convert_element_type",
                            "stop_gradient", "copy", "name", "bitcast_convert_type", "integer_pow",
                            "eq", "ne", "lt", "le", "gt", "ge", "real", "imag"))


def supported(name, ins, out, params):
  """Whether C computes primitive ``name`` on these dtypes."""
  return OPS[name][0](ins, out, params)


def emit(ctx, name, args, ins, out, params):
  """The C expression of primitive ``name`` (half-float results rounded to
  their type after every operation, as XLA computes them)."""
  expr = OPS[name][1](ctx, args, ins, out, params)
  return expr if name in _EXACT_ON_HALF else round_to(expr, out)


# -- CUDA ---------------------------------------------------------------------------------
# The CUDA backend's kernels are built from this same table (CUDA C is C).
# Where CUDA names a function the expressions (or the portable prelude and
# the special functions) call differently, ``for_cuda`` renames it; complex
# values (``complex_c``'s neutral spelling) become the device prelude's
# structs, and the C library's complex functions its Annex G versions.
CUDA_FUNCTIONS = {
    "__builtin_popcount": "__popc", "__builtin_popcountll": "__popcll",
    "__builtin_clz": "__clz", "__builtin_clzll": "__clzll",
    "__builtin_fmaf": "fmaf", "__builtin_rintf": "rintf",
    "pj_lgammaf": "lgammaf", "pj_lgamma": "lgamma",   # thread-safe on the device
}
CUDA_FUNCTIONS.update({f"{name}{s}": f"pj_c99_{name}{s}"
                       for name in complex_c.ON_DEVICE + complex_inverse_c.ON_DEVICE
                       for s in ("f", "")})
CUDA_TYPES = {"float _Complex": "pj_c64", "double _Complex": "pj_c128"}
_CUDA_NAME = None


def for_cuda(text):
  """C text with the functions CUDA names differently renamed."""
  global _CUDA_NAME
  if _CUDA_NAME is None:
    import re
    _CUDA_NAME = (re.compile(r"\b(" + "|".join(sorted(CUDA_FUNCTIONS, key=len, reverse=True))
                             + r")\b(?=\s*\()"),
                  re.compile(r"\b(" + "|".join(CUDA_TYPES) + r")\b"))
  functions, types = _CUDA_NAME
  text = functions.sub(lambda m: CUDA_FUNCTIONS[m.group(1)], text)
  return types.sub(lambda m: CUDA_TYPES[m.group(1)], text)


def cuda_supported(name, ins, out):
  """Whether the CUDA kernels compute primitive ``name`` on these dtypes
  (given that C does): all but complex functions with no device code
  (every C library function the table calls has a port now)."""
  function = _COMPLEX_MATH.get(name, "") if any(dtype_kind(d) == "c" for d in ins) else ""
  return not function.startswith("c") or function in CUDA_FUNCTIONS
