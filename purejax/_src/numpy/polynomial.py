"""Polynomials as coefficient arrays, highest power first: poly, polyadd,
polysub, polymul, polydiv, polyder, polyint, polyval, polyfit, roots.

Everything but ``roots`` (and ``poly`` of a matrix) is built from lax and
works under jit, grad and vmap.  Those two need eigenvalues of a general
matrix, which purejax computes only on concrete values (with NumPy).
"""
import functools
import operator

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src import errors
from purejax._src.api import jit
from purejax._src.numpy import creation
from purejax._src.numpy import manipulation
from purejax._src.numpy import products
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def _convolve_full(a, b):
  """Full 1-D convolution: the sums of a[i] * b[j] over i + j = k.

  Row i of the outer product, padded to length len(a) + len(b) and read
  back with rows of one less, lands shifted right by i; summing the rows
  gives the convolution (no flip, no conv primitive)."""
  n, m = util.shape(a)[0], util.shape(b)[0]
  outer = lax.mul(lax.broadcast_in_dim(a, (n, m), (0,)), lax.broadcast_in_dim(b, (n, m), (1,)))
  zero = lax.convert_element_type(0, util.aval_of(outer).dtype, False)
  width = n + m
  flat = lax.reshape(lax.pad(outer, zero, ((0, 0, 0), (0, n, 0))), (n * width,))
  skewed = lax.reshape(lax.slice(flat, (0,), (n * (width - 1),)), (n, width - 1))
  return lax.reduce_sum(skewed, (0,))


def _eigvals(matrix, context):
  """Eigenvalues of a concrete square matrix (NumPy's LAPACK, as JAX's CPU
  eigvals), as a complex array."""
  if isinstance(matrix, core.Tracer) and matrix.to_concrete_value() is None:
    raise errors.ConcretizationTypeError(
        matrix, context + " purejax computes eigenvalues of general matrices only on "
        "concrete values (there is no eig primitive yet).")
  value = np.asarray(util.concrete_or_error(matrix, context))
  out_dtype = dtypes.to_complex_dtype(value.dtype)
  if value.size == 0:
    return creation.zeros((0,), dtype=out_dtype)
  return creation.asarray(np.linalg.eigvals(value).astype(out_dtype))


def poly(seq_of_zeros):
  """The coefficients of the monic polynomial with the given roots (or the
  characteristic polynomial of a square matrix, computed eagerly)."""
  check_arraylike("poly", seq_of_zeros)
  zeros_, = util.promote_dtypes_inexact(seq_of_zeros)
  zeros_ = shape_ops.atleast_1d(zeros_)
  shape = util.shape(zeros_)
  if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
    zeros_ = _eigvals(zeros_, "The error occurred in jnp.poly() of a matrix.")
  if util.ndim(zeros_) != 1:
    raise ValueError("input must be 1d or non-empty square 2d array.")
  return _poly(zeros_)


@jit
def _poly(zeros_):
  dt = util.aval_of(zeros_).dtype
  a = creation.ones((1,), dtype=dt)
  if util.shape(zeros_)[0] == 0:
    return creation.ones((), dtype=dt)
  for k in range(util.shape(zeros_)[0]):
    # a * (x - z_k): shift a up one power and subtract z_k times a.
    z = lax.index_in_dim(zeros_, k, keepdims=False)
    zero = creation.zeros((1,), dtype=dt)
    a = lax.sub(lax.concatenate([a, zero], 0), lax.mul(z, lax.concatenate([zero, a], 0)))
  return a


@jit
def polyadd(a1, a2):
  """The sum of two polynomials (the shorter one is aligned at the end)."""
  check_arraylike("polyadd", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  n1, n2 = util.shape(a1)[0], util.shape(a2)[0]
  if n2 > n1:
    a1, a2, n1, n2 = a2, a1, n2, n1
  zero = lax.convert_element_type(0, util.aval_of(a2).dtype, False)
  return lax.add(a1, lax.pad(a2, zero, ((n1 - n2, 0, 0),)))


@jit
def polysub(a1, a2):
  """The difference of two polynomials."""
  check_arraylike("polysub", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  return polyadd(a1, ufuncs.negative(a2))


def polymul(a1, a2, *, trim_leading_zeros=False):
  """The product of two polynomials.  ``trim_leading_zeros`` needs concrete
  inputs (the output length depends on the values)."""
  check_arraylike("polymul", a1, a2)
  a1, a2 = util.promote_dtypes_inexact(a1, a2)
  if trim_leading_zeros and (util.shape(a1)[0] > 1 or util.shape(a2)[0] > 1):
    a1 = manipulation.trim_zeros(a1, trim="f")
    a2 = manipulation.trim_zeros(a2, trim="f")
  if util.shape(a1)[0] == 0:
    a1 = creation.zeros(1, dtype=util.aval_of(a2).dtype)
  if util.shape(a2)[0] == 0:
    a2 = creation.zeros(1, dtype=util.aval_of(a1).dtype)
  return _convolve_full(a1, a2)


def polydiv(u, v, *, trim_leading_zeros=False):
  """(quotient, remainder) of polynomial long division.  As in JAX the
  remainder keeps u's length unless ``trim_leading_zeros`` (which needs
  concrete values) drops its leading near-zeros."""
  check_arraylike("polydiv", u, v)
  u, v = util.promote_dtypes_inexact(u, v)
  m, n = util.shape(u)[0] - 1, util.shape(v)[0] - 1
  scale = ufuncs.true_divide(1., lax.index_in_dim(v, 0, keepdims=False))
  q = []
  for k in range(m - n + 1):
    d = ufuncs.multiply(scale, lax.index_in_dim(u, k, keepdims=False))
    q.append(d)
    window = lax.slice_in_dim(u, k, k + n + 1)
    u = lax.concatenate([lax.slice_in_dim(u, 0, k),
                         ufuncs.subtract(window, ufuncs.multiply(d, v)),
                         lax.slice_in_dim(u, k + n + 1, m + 1)], 0)
  dt = util.aval_of(u).dtype
  quotient = shape_ops.stack(q).astype(dt) if q else creation.zeros(1, dtype=dt)
  if trim_leading_zeros:
    u = _trim_leading_small(u, np.sqrt(float(dtypes.finfo(dt).eps)))
  return quotient, u


def _trim_leading_small(p, tol):
  value = np.asarray(util.concrete_or_error(
      p, "The error occurred in jnp.polydiv(..., trim_leading_zeros=True)."))
  big = np.flatnonzero(np.abs(value) >= tol)
  start = int(big[0]) if big.size else len(value)
  return lax.slice_in_dim(p, start, len(value))


def polyder(p, m=1):
  """The m-th derivative of a polynomial."""
  check_arraylike("polyder", p)
  m = operator.index(util.concrete_or_error(m, "'m' argument of jnp.polyder"))
  return _polyder(p, m)


@functools.partial(jit, static_argnames=("m",))
def _polyder(p, m):
  p, = util.promote_dtypes_inexact(p)
  if m < 0:
    raise ValueError("Order of derivative must be positive")
  if m == 0:
    return p
  n = util.shape(p)[0]
  dt = util.aval_of(p).dtype
  # Coefficient of x^j (j >= m) gains the factor j (j-1) ... (j-m+1).
  powers = np.arange(n - 1, m - 1, -1)
  factors = np.prod(powers[None, :] - np.arange(m)[:, None], axis=0)
  return ufuncs.multiply(lax.slice_in_dim(p, 0, max(n - m, 0)), factors.astype(dt))


def polyint(p, m=1, k=None):
  """The m-th antiderivative, with integration constants ``k``."""
  m = operator.index(util.concrete_or_error(m, "'m' argument of jnp.polyint"))
  k = 0 if k is None else k
  check_arraylike("polyint", p, k)
  return _polyint(p, k, m)


@functools.partial(jit, static_argnames=("m",))
def _polyint(p, k, m):
  p, k = util.promote_dtypes_inexact(p, k)
  if m < 0:
    raise ValueError("Order of integral must be positive (see polyder)")
  k = shape_ops.atleast_1d(k)
  if util.shape(k)[0] == 1:
    k = util.broadcast_to(k, (m,))
  if util.shape(k) != (m,):
    raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
  if m == 0:
    return p
  n = util.shape(p)[0]
  dt = util.aval_of(p).dtype
  grid = np.arange(n + m)[None, :] - np.arange(m)[:, None]
  divisors = np.maximum(1, grid).prod(0)[::-1]
  return ufuncs.true_divide(lax.concatenate([p, k], 0), divisors.astype(dt))


def polyval(p, x, *, unroll=16):
  """p evaluated at x by Horner's rule (a scan over the coefficients, with
  ``unroll`` as in lax.scan)."""
  check_arraylike("polyval", p, x)
  return _polyval(p, x, unroll)


@functools.partial(jit, static_argnames=("unroll",))
def _polyval(p, x, unroll):
  p, x = util.promote_dtypes(p, x)
  shape = util.broadcast_shapes(util.shape(p)[1:], util.shape(x))
  y = creation.zeros(shape, dtype=util.aval_of(x).dtype)
  y, _ = lax.scan(lambda y, c: (ufuncs.add(ufuncs.multiply(y, x), c), None), y, p,
                  unroll=unroll)
  return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
  """Least-squares polynomial fit of degree ``deg`` (through an SVD, as
  JAX's lstsq).  ``full`` adds (residuals, rank, singular values, rcond);
  ``cov`` adds the covariance of the coefficients."""
  check_arraylike("polyfit", x, y, *(() if w is None else (w,)))
  deg = int(util.concrete_or_error(deg, "deg must be int"))
  if rcond is not None:
    rcond = float(util.concrete_or_error(rcond, "rcond must be float"))
  return _polyfit(x, y, w, deg, rcond, bool(full), cov)


@functools.partial(jit, static_argnames=("deg", "rcond", "full", "cov"))
def _polyfit(x, y, w, deg, rcond, full, cov):
  x, y = util.asarray(x), util.asarray(y)
  order = deg + 1
  if deg < 0:
    raise ValueError("expected deg >= 0")
  if util.ndim(x) != 1:
    raise TypeError("expected 1D vector for x")
  if util.shape(x)[0] == 0:
    raise TypeError("expected non-empty vector for x")
  if util.ndim(y) < 1 or util.ndim(y) > 2:
    raise TypeError("expected 1D or 2D array for y")
  if util.shape(x)[0] != util.shape(y)[0]:
    raise TypeError("expected x and y to have same length")
  n = util.shape(x)[0]
  if rcond is None:
    rcond = n * float(dtypes.finfo(util.aval_of(x).dtype).eps)
  lhs, rhs = creation.vander(x, order), y
  if w is not None:
    w, = util.promote_dtypes_inexact(w)
    if util.ndim(w) != 1:
      raise TypeError("expected a 1-d array for weights")
    if util.shape(w)[0] != util.shape(y)[0]:
      raise TypeError("expected w and y to have the same length")
    lhs = ufuncs.multiply(lhs, w[:, None])
    rhs = ufuncs.multiply(rhs, w[:, None] if util.ndim(rhs) == 2 else w)
  # Scaling the columns improves the conditioning.
  scale = ufuncs.sqrt(reductions.sum(ufuncs.multiply(lhs, lhs), axis=0))
  lhs = ufuncs.true_divide(lhs, scale[None, :])
  c, resids, rank, s, vt = _lstsq(lhs, rhs, rcond)
  c = ufuncs.true_divide(c, scale[:, None] if util.ndim(c) > 1 else scale)
  if full:
    return c, resids, rank, s, creation.asarray(rcond)
  if not cov:
    return c
  # inv(lhs^T lhs) = V diag(1 / s^2) V^T from the same SVD.
  v = ufuncs.conj(shape_ops.matrix_transpose(vt))
  base = products.matmul(ufuncs.true_divide(v, ufuncs.square(s)[None, :]),
                         shape_ops.matrix_transpose(v))
  base = ufuncs.true_divide(base, products.outer(scale, scale))
  if cov == "unscaled":
    fac = creation.array(1.0)
  else:
    if n <= order:
      raise ValueError("the number of data points must exceed order to scale the "
                       "covariance matrix")
    fac = ufuncs.true_divide(resids, n - order)
  if util.ndim(y) == 1:
    return c, ufuncs.multiply(base, shape_ops.atleast_1d(fac)[None])
  return c, ufuncs.multiply(base[:, :, None], shape_ops.atleast_1d(fac)[None, None, :])


def _lstsq(a, b, rcond):
  """JAX's lstsq through the SVD, returning (x, residuals, rank, s, vt);
  residuals are always the full sums of squares."""
  a, b = util.promote_dtypes_inexact(a, b)
  one_rhs = util.ndim(b) == 1
  if one_rhs:
    b = b[:, None]
  dt = util.aval_of(a).dtype
  u, s, vt = lax.linalg.svd(a, full_matrices=False)
  first = lax.slice_in_dim(s, 0, 1)
  mask = ufuncs.logical_and(ufuncs.greater(s, 0),
                            ufuncs.greater_equal(s, ufuncs.multiply(
                                creation.array(rcond, dtype=util.aval_of(s).dtype), first)))
  rank = reductions.sum(mask)
  safe = creation.astype(ufuncs.where(mask, s, 1), dt)
  s_inv = ufuncs.where(mask, ufuncs.true_divide(1, safe), 0)[:, None]
  highest = lax.Precision.HIGHEST
  utb = products.matmul(ufuncs.conj(shape_ops.matrix_transpose(u)), b, precision=highest)
  x = products.matmul(ufuncs.conj(shape_ops.matrix_transpose(vt)),
                      ufuncs.multiply(s_inv, utb), precision=highest)
  err = ufuncs.subtract(b, products.matmul(a, x, precision=highest))
  resid = reductions.sum(ufuncs.real(ufuncs.multiply(ufuncs.conj(err), err)), axis=0)
  if one_rhs:
    x = shape_ops.ravel(x)
  return x, resid, rank, s, vt


def roots(p, *, strip_zeros=True):
  """The roots of a polynomial: eigenvalues of its companion matrix.

  Differs from JAX: computed eagerly with NumPy (LAPACK, as JAX on CPU), so
  ``p`` must be concrete even with ``strip_zeros=False``."""
  check_arraylike("roots", p)
  p, = util.promote_dtypes_inexact(p)
  p = shape_ops.atleast_1d(p)
  if util.ndim(p) != 1:
    raise ValueError("Input must be a rank-1 array.")
  dt = util.aval_of(p).dtype
  if util.shape(p)[0] < 2:
    return creation.zeros((0,), dtype=dtypes.to_complex_dtype(dt))
  context = ("The error occurred in the jnp.roots() function. To use this within a "
             "JIT-compiled context, pass strip_zeros=False, but be aware that leading "
             "zeros will result in some returned roots being set to NaN.")
  if not strip_zeros:
    context = "The error occurred in the jnp.roots() function."
  if isinstance(p, core.Tracer) and p.to_concrete_value() is None:
    raise errors.ConcretizationTypeError(p, context)
  value = np.asarray(util.concrete_or_error(p, context))
  nonzero = np.flatnonzero(value != 0)
  leading = int(nonzero[0]) if nonzero.size else len(value)
  if strip_zeros:
    return _companion_roots(value[leading:], dt)
  if leading == len(value):
    value = np.ones_like(value)
  out = _companion_roots(np.roll(value, -leading), dt)
  order = np.argsort(np.asarray(out) == 0, kind="stable")
  out = np.asarray(out)[order]
  nan = np.array(complex(np.nan, np.nan), out.dtype)
  out = np.where(np.arange(out.size) < out.size - leading, out, nan)
  return creation.asarray(out)


def _companion_roots(p, dt):
  out_dtype = dtypes.to_complex_dtype(dt)
  if p.size < 2:
    return creation.zeros((0,), dtype=out_dtype)
  companion = np.diag(np.ones(p.size - 2, p.dtype), -1)
  companion[0, :] = -p[1:] / p[0]
  return creation.asarray(np.linalg.eigvals(companion).astype(out_dtype))
