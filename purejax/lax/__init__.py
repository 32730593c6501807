"""purejax.lax: the primitive operations, with strict dtypes and shapes."""
from purejax._src.lax.api_elementwise import (
    RoundingMethod, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, complex,
    conj, cos, cosh, div, eq, exp, exp2, expm1, floor, ge, gt, imag, integer_pow,
    is_finite, le, log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter,
    pow, real, reciprocal, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, square,
    sub, tan, tanh)
from purejax._src.lax.convert import convert_element_type
