"""purejax.numpy: NumPy's API on purejax arrays (``import purejax.numpy as jnp``).

Every function is built from ``purejax.lax``, so it works under ``jit``,
``grad`` and ``vmap``.  Importing this module gives arrays and tracers their
operators and methods.
"""
import numpy as _np

from purejax._src.basearray import Array as ndarray
from purejax._src.numpy import array_methods as _array_methods
from purejax._src.numpy.scalar_types import *  # noqa: F401,F403  (jnp.float32, ...)

from purejax._src.numpy.creation import (
    arange, array, array_equiv, asarray, astype, copy, diag, diagflat, diagonal, empty,
    empty_like, eye, fromfunction, full, full_like, geomspace, identity, iterable,
    linspace, logspace, meshgrid, ones, ones_like, tri, tril, triu, vander, zeros,
    zeros_like)
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
    array_split, atleast_1d, atleast_2d, atleast_3d, block, broadcast_arrays,
    broadcast_shapes, broadcast_to, column_stack, concat, concatenate, dsplit, dstack,
    expand_dims, flip, fliplr, flipud, hsplit, hstack, matrix_transpose, moveaxis, ndim,
    permute_dims, ravel, reshape, rollaxis, row_stack, shape, size, split, squeeze, stack,
    swapaxes, transpose, unstack, vsplit, vstack)
from purejax._src.numpy.products import (
    cross, dot, inner, kron, matmul, matvec, outer, tensordot, trace, vdot, vecdot, vecmat)
from purejax._src.numpy.predicates import (
    allclose, alltrue, array_equal, can_cast, isclose, isscalar, sometrue)

# Names added by area (each area edits only its own block).
# [indexing area]
from purejax._src.numpy.take_put import (
    argwhere, choose, compress, extract, fill_diagonal, flatnonzero, nonzero, place, put,
    put_along_axis, select, take, take_along_axis)
from purejax._src.numpy.index_tricks import (
    c_, diag_indices, diag_indices_from, index_exp, indices, ix_, mask_indices, mgrid, ogrid,
    r_, ravel_multi_index, s_, tril_indices, tril_indices_from, triu_indices,
    triu_indices_from, unravel_index)
# [end indexing area]
# [sorting area]
from purejax._src.numpy.sorting import (
    argpartition, argsort, lexsort, partition, searchsorted, sort, sort_complex)
from purejax._src.numpy.setops import (
    intersect1d, isin, setdiff1d, setxor1d, union1d, unique, unique_all, unique_counts,
    unique_inverse, unique_values)
from purejax._src.numpy.quantiles import (
    median, nanmedian, nanpercentile, nanquantile, percentile, quantile)
from purejax._src.numpy.histograms import (
    bincount, digitize, histogram, histogram2d, histogram_bin_edges, histogramdd)
# [end sorting area]
# [reductions/ufuncs area]
from purejax._src.numpy.cumulative import (
    cumprod, cumsum, cumulative_prod, cumulative_sum, nancumprod, nancumsum)
from purejax._src.numpy.nan_reductions import (
    nanargmax, nanargmin, nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar)
from purejax._src.numpy.reductions import average, count_nonzero, ptp
from purejax._src.numpy.calculus import (
    corrcoef, cov, diff, ediff1d, gradient, trapezoid, unwrap)
from purejax._src.numpy.ufuncs import (
    angle, fmax, fmin, iscomplex, iscomplexobj, isneginf, isposinf, isreal, isrealobj)
from purejax._src.numpy.ufuncs_extra import (
    bitwise_count, copysign, frexp, gcd, heaviside, hypot, i0, lcm, ldexp, modf, nan_to_num,
    signbit, sinc, spacing)
from purejax._src.numpy.ufunc_api import frompyfunc, ufunc
# jnp.ufunc objects (with .reduce/.accumulate/.outer/.at/.reduceat), as in JAX; they
# replace the plain functions of the same names imported above.
from purejax._src.numpy.ufunc_api import (
    add, bitwise_and, bitwise_or, bitwise_xor, logaddexp, logaddexp2, logical_and,
    logical_or, logical_xor, maximum, minimum, multiply, negative, subtract)
# [end reductions/ufuncs area]
# [manipulation area]
from purejax._src.numpy.manipulation import (
    append, delete, insert, repeat, resize, roll, rot90, tile, trim_zeros)
from purejax._src.numpy.padding import pad
from purejax._src.numpy.functional import (
    apply_along_axis, apply_over_axes, piecewise, vectorize)
from purejax._src.numpy.einsum import einsum, einsum_path
from purejax._src.numpy.polynomial import (
    poly, polyadd, polyder, polydiv, polyfit, polyint, polymul, polysub, polyval, roots)
from purejax._src.numpy.windows import bartlett, blackman, hamming, hanning, kaiser
from purejax._src.numpy.io_print import (
    array_repr, array_str, from_dlpack, frombuffer, fromfile, fromiter, fromstring,
    get_printoptions, load, printoptions, save, savez, set_printoptions)
# [end manipulation area]
from purejax._src.numpy.interpolation import interp
from purejax._src.numpy.bit_packing import packbits, unpackbits
from numpy.exceptions import ComplexWarning
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

from purejax.numpy import fft  # noqa: E402  (submodules need the names above)
from purejax.numpy import linalg  # noqa: E402
