"""purejax.numpy: NumPy's API on purejax arrays (``import purejax.numpy as jnp``).

Every function is built from ``purejax.lax``, so it works under ``jit``,
``grad`` and ``vmap``.  Importing this module gives arrays and tracers their
operators and methods.
"""
import numpy as _np

from purejax._src.array import Array as ndarray
from purejax._src.numpy import array_methods as _array_methods
from purejax._src.numpy.scalar_types import *  # noqa: F401,F403  (jnp.float32, ...)

from purejax._src.numpy.creation import (
    arange, array, asarray, astype, empty, empty_like, eye, full, full_like, identity,
    linspace, ones, ones_like, zeros, zeros_like)
from purejax._src.numpy.ufuncs import (
    abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_invert,
    bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor, cbrt,
    ceil, clip, conj, conjugate, cos, cosh, deg2rad, degrees, divide, divmod, equal, exp,
    exp2, expm1, fabs, float_power, floor, floor_divide, fmod, greater, greater_equal,
    imag, invert, isfinite, isinf, isnan, left_shift, less, less_equal, log, log10, log1p,
    log2, logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod,
    multiply, negative, nextafter, not_equal, positive, pow, power, rad2deg, radians, real,
    reciprocal, remainder, right_shift, rint, round, sign, sin, sinh, sqrt, square,
    subtract, tan, tanh, true_divide, trunc, where)
from purejax._src.numpy.reductions import (
    all, amax, amin, any, argmax, argmin, max, mean, min, prod, std, sum, var)
from purejax._src.numpy.shape_ops import (
    atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, broadcast_shapes, broadcast_to,
    column_stack, concat, concatenate, dstack, expand_dims, flip, fliplr, flipud, hstack,
    matrix_transpose, moveaxis, ndim, permute_dims, ravel, reshape, row_stack, shape, size,
    squeeze, stack, swapaxes, transpose, vstack)
from purejax._src.numpy.products import dot, inner, matmul, outer, tensordot, vdot
from purejax._src.numpy.predicates import (
    allclose, alltrue, array_equal, can_cast, isclose, isscalar, sometrue)

# Names added by area (each area edits only its own block).
# [indexing area]
# [end indexing area]
# [sorting area]
# [end sorting area]
# [reductions/ufuncs area]
# [end reductions/ufuncs area]
# [manipulation area]
# [end manipulation area]
# [signal area]
from purejax._src.numpy.signal import convolve, correlate
# [end signal area]

# Dtype utilities, as in JAX: promotion follows JAX's lattice.
from purejax._src.dtypes import (
    finfo, iinfo, isdtype, issubdtype, promote_types, result_type)

dtype = _np.dtype

pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None

_array_methods.install()
