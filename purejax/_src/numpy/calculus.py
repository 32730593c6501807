"""Differences, integrals and second-moment statistics: diff, ediff1d,
gradient, trapezoid, unwrap, cov, corrcoef.

All are compositions of slices, elementwise ops and reductions, so they
differentiate and batch like any jnp function.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import cumulative
from purejax._src.numpy import reductions
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def _static_int(value, what):
  return operator.index(util.concrete_or_error(value, what))


def _slice(a, start, stop, axis):
  """``a[start:stop]`` along ``axis`` (Python's rules for None, negatives and
  bounds past the end)."""
  axis = axis % util.ndim(a)
  start, stop, _ = slice(start, stop).indices(util.shape(a)[axis])
  return lax.slice_in_dim(a, start, max(start, stop), 1, axis)


def _edge_shaped(value, arr, axis):
  """A scalar ``prepend``/``append`` becomes a one-thick slab along ``axis``."""
  if util.ndim(value) == 0:
    shape = list(util.shape(arr))
    shape[axis] = 1
    return util.broadcast_to(value, tuple(shape))
  return value


def diff(a, n=1, axis=-1, prepend=None, append=None):
  """The ``n``-th discrete difference along ``axis`` (``!=`` for booleans)."""
  check_arraylike("diff", a)
  arr = util.asarray(a)
  n = _static_int(n, "'n' argument of jnp.diff")
  axis = _static_int(axis, "'axis' argument of jnp.diff")
  if n == 0:
    return arr
  if n < 0:
    raise ValueError(f"order must be non-negative but got {n}")
  if util.ndim(arr) == 0:
    raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
  axis = util.canonicalize_axis(axis, util.ndim(arr))
  parts = [arr]
  if prepend is not None:
    check_arraylike("diff", prepend)
    parts.insert(0, _edge_shaped(prepend, arr, axis))
  if append is not None:
    check_arraylike("diff", append)
    parts.append(_edge_shaped(append, arr, axis))
  if len(parts) > 1:
    arr = shape_ops.concatenate(parts, axis)
  op = lax.ne if util.aval_of(arr).dtype == np.bool_ else lax.sub
  for _ in range(n):
    arr = op(_slice(arr, 1, None, axis), _slice(arr, None, -1, axis))
  return arr


def ediff1d(ary, to_end=None, to_begin=None):
  """Differences of consecutive elements of the flattened array, with optional
  values put before and after (cast to the array's dtype)."""
  check_arraylike("ediff1d", ary)
  arr = shape_ops.ravel(ary)
  result = lax.sub(_slice(arr, 1, None, 0), _slice(arr, None, -1, 0))
  dtype = util.aval_of(arr).dtype
  if to_begin is not None:
    check_arraylike("ediff1d", to_begin)
    begin = shape_ops.ravel(lax.convert_element_type(to_begin, dtype, False))
    result = lax.concatenate([begin, result], 0)
  if to_end is not None:
    check_arraylike("ediff1d", to_end)
    end = shape_ops.ravel(lax.convert_element_type(to_end, dtype, False))
    result = lax.concatenate([result, end], 0)
  return result


# -- gradient -----------------------------------------------------------------------

def _gradient_along_axis(a, h, axis, edge_order):
  s = lambda x, start, stop: _slice(x, start, stop, axis)
  half = lambda x: lax.mul(x, lax.convert_element_type(0.5, util.aval_of(x).dtype, False))
  if util.ndim(h) == 0:
    inner = lax.div(half(lax.sub(s(a, 2, None), s(a, None, -2))), h)
    if edge_order == 1:
      first = lax.div(lax.sub(s(a, 1, 2), s(a, 0, 1)), h)
      last = lax.div(lax.sub(s(a, -1, None), s(a, -2, -1)), h)
    else:
      # Second-order one-sided differences: (-3 f0 + 4 f1 - f2) / 2h, mirrored.
      c = lambda v: lax.convert_element_type(v, util.aval_of(a).dtype, False)
      first = lax.div(lax.add(lax.add(lax.mul(c(-1.5), s(a, 0, 1)), lax.mul(c(2.), s(a, 1, 2))),
                              lax.mul(c(-0.5), s(a, 2, 3))), h)
      last = lax.div(lax.add(lax.add(lax.mul(c(0.5), s(a, -3, -2)), lax.mul(c(-2.), s(a, -2, -1))),
                             lax.mul(c(1.5), s(a, -1, None))), h)
    return lax.concatenate([first, inner, last], axis)
  if util.ndim(h) != 1:
    raise ValueError("Spacing arrays must be 1D arrays or scalars.")
  n = util.shape(a)[axis]
  if util.shape(h)[0] != n:
    raise ValueError("Spacing arrays must have the same length as the dimension along "
                     "which the gradient is calculated.")
  h_shape = [1] * util.ndim(a)
  h_shape[axis] = n
  x = lax.reshape(h, tuple(h_shape))
  # Second-order accurate interior differences on a non-uniform grid.
  dx1 = lax.sub(s(x, 1, -1), s(x, 0, -2))
  dx2 = lax.sub(s(x, 2, None), s(x, 1, -1))
  total = lax.add(dx1, dx2)
  wa = lax.div(lax.neg(dx2), lax.mul(dx1, total))
  wb = lax.div(lax.sub(dx2, dx1), lax.mul(dx1, dx2))
  wc = lax.div(dx1, lax.mul(dx2, total))
  inner = lax.add(lax.add(lax.mul(wa, s(a, 0, -2)), lax.mul(wb, s(a, 1, -1))),
                  lax.mul(wc, s(a, 2, None)))
  if edge_order == 1:
    first = lax.div(lax.sub(s(a, 1, 2), s(a, 0, 1)), lax.sub(s(x, 1, 2), s(x, 0, 1)))
    last = lax.div(lax.sub(s(a, -1, None), s(a, -2, -1)), lax.sub(s(x, -1, None), s(x, -2, -1)))
  else:
    first = _second_order_edge(s(a, 0, 1), s(a, 1, 2), s(a, 2, 3),
                               lax.sub(s(x, 1, 2), s(x, 0, 1)), lax.sub(s(x, 2, 3), s(x, 1, 2)),
                               start=True)
    last = _second_order_edge(s(a, -3, -2), s(a, -2, -1), s(a, -1, None),
                              lax.sub(s(x, -2, -1), s(x, -3, -2)),
                              lax.sub(s(x, -1, None), s(x, -2, -1)), start=False)
  return lax.concatenate([first, inner, last], axis)


def _second_order_edge(f0, f1, f2, dx1, dx2, start):
  """NumPy's one-sided second-order difference at the first (or last) point of
  three samples spaced dx1, dx2."""
  total = lax.add(dx1, dx2)
  if start:
    wa = lax.div(lax.neg(lax.add(lax.add(dx1, dx1), dx2)), lax.mul(dx1, total))
    wb = lax.div(total, lax.mul(dx1, dx2))
    wc = lax.div(lax.neg(dx1), lax.mul(dx2, total))
  else:
    wa = lax.div(dx2, lax.mul(dx1, total))
    wb = lax.div(lax.neg(total), lax.mul(dx1, dx2))
    wc = lax.div(lax.add(lax.add(dx2, dx2), dx1), lax.mul(dx2, total))
  return lax.add(lax.add(lax.mul(wa, f0), lax.mul(wb, f1)), lax.mul(wc, f2))


def gradient(f, *varargs, axis=None, edge_order=None):
  """Gradient by central differences inside and one-sided ones at the edges.

  Differs from JAX: ``edge_order`` 1 (the default) and 2 are supported, as in
  NumPy (JAX refuses any ``edge_order``).
  """
  check_arraylike("gradient", f, *varargs)
  edge_order = 1 if edge_order is None else _static_int(edge_order, "edge_order")
  if edge_order not in (1, 2):
    raise ValueError("'edge_order' greater than 2 not supported")
  a, *spacing = util.promote_dtypes_inexact(f, *varargs)
  nd = util.ndim(a)
  if axis is None:
    axes = tuple(range(nd))
  else:
    axes = tuple(util.canonicalize_axis(i, nd)
                 for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
  if not axes:
    return []
  if min(util.shape(a)[i] for i in axes) < edge_order + 1:
    raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                     f"{edge_order + 1} elements are required.")
  if not spacing:
    spacing = [lax.convert_element_type(1.0, util.aval_of(a).dtype, False)] * len(axes)
  elif len(spacing) == 1:
    spacing = spacing * len(axes)
  elif len(spacing) != len(axes):
    raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
  grads = [_gradient_along_axis(a, h, ax, edge_order) for ax, h in zip(axes, spacing)]
  return grads[0] if len(axes) == 1 else grads


# -- trapezoid / unwrap ---------------------------------------------------------------

def _last(x, axis):
  return shape_ops.moveaxis(x, axis, -1)


def trapezoid(y, x=None, dx=1.0, axis=-1):
  """Integral of ``y`` along ``axis`` by the trapezoidal rule (sample points
  ``x``, or a uniform spacing ``dx``)."""
  if x is None:
    check_arraylike("trapezoid", y)
    y, = util.promote_dtypes_inexact(y)
    dx = util.asarray(dx)
    if util.ndim(dx) > 0:
      dx = _last(util.expand_to_rank(dx, util.ndim(y)), axis)
  else:
    check_arraylike("trapezoid", y, x)
    y, x = util.promote_dtypes_inexact(y, x)
    dx = diff(x) if util.ndim(x) == 1 else _last(diff(x, axis=axis), axis)
  y = _last(y, axis)
  ends = lax.add(_slice(y, 0, 1, -1 % util.ndim(y)), _slice(y, -1, None, -1 % util.ndim(y)))
  if util.ndim(dx) == 0 or util.shape(dx)[-1] == 1:
    # Uniform spacing: dx * (sum(y) - (y[0] + y[-1]) / 2).
    if util.ndim(dx):
      dx = lax.squeeze(dx, (util.ndim(dx) - 1,))
    half_ends = ufuncs.multiply(0.5, lax.squeeze(ends, (util.ndim(ends) - 1,)))
    return ufuncs.multiply(dx, ufuncs.subtract(reductions.sum(y, axis=-1), half_ends))
  pairs = ufuncs.add(_slice(y, 1, None, util.ndim(y) - 1), _slice(y, None, -1, util.ndim(y) - 1))
  return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(dx, pairs), axis=-1))


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
  """``p`` with jumps larger than ``discont`` between neighbours along ``axis``
  replaced by their complement modulo ``period``."""
  check_arraylike("unwrap", p)
  p, period = util.promote_dtypes(p, period)
  if dtypes.issubdtype(util.aval_of(p).dtype, np.complexfloating):
    raise ValueError("jnp.unwrap does not support complex inputs.")
  axis = util.canonicalize_axis(_static_int(axis, "axis argument of jnp.unwrap"),
                                util.ndim(p))
  if util.shape(p)[axis] == 0:
    return p
  integer = dtypes.issubdtype(util.aval_of(p).dtype, np.integer)
  interval = ufuncs.floor_divide(period, 2) if integer else ufuncs.true_divide(period, 2)
  if discont is None:
    discont = ufuncs.true_divide(period, 2)
  dd = diff(p, axis=axis)
  ddmod = ufuncs.subtract(ufuncs.remainder(ufuncs.add(dd, interval), period), interval)
  # Jumps of exactly half a period keep their direction.
  flip_half = ufuncs.logical_and(ufuncs.equal(ddmod, ufuncs.negative(interval)),
                                 ufuncs.greater(dd, 0))
  ddmod = ufuncs.where(flip_half, interval, ddmod)
  correction = ufuncs.where(ufuncs.less(ufuncs.absolute(dd), discont), 0,
                            ufuncs.subtract(ddmod, dd))
  rest = ufuncs.add(_slice(p, 1, None, axis), cumulative.cumsum(correction, axis=axis))
  return shape_ops.concatenate([_slice(p, 0, 1, axis), rest], axis)


# -- cov / corrcoef ------------------------------------------------------------------

def _weights(name, w, n):
  check_arraylike("cov", w)
  if util.ndim(w) > 1:
    raise RuntimeError(f"cannot handle multidimensional {name}")
  if util.shape(w)[0] != n:
    raise RuntimeError(f"incompatible numbers of samples and {name}")
  return ufuncs.absolute(w)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
  """Covariance matrix of the variables in the rows (``rowvar``) or columns of
  ``m`` (and ``y``), with optional frequency and analytic weights."""
  if y is not None:
    m, y = util.promote_args_inexact("cov", m, y)
    if util.ndim(y) > 2:
      raise ValueError("y has more than 2 dimensions")
  else:
    m, = util.promote_args_inexact("cov", m)
  if util.ndim(m) > 2:
    raise ValueError("m has more than 2 dimensions")
  dtype = dtypes.canonicalize_user_dtype(dtype, "cov")
  if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
    raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
  X = shape_ops.atleast_2d(m)
  if not rowvar and util.ndim(m) != 1:
    X = lax.transpose(X, (1, 0))
  if util.shape(X)[0] == 0:
    return lax.full((0, 0), 0, util.aval_of(X).dtype)
  if y is not None:
    Y = shape_ops.atleast_2d(y)
    if not rowvar and util.shape(Y)[0] != 1:
      Y = lax.transpose(Y, (1, 0))
    X = shape_ops.concatenate([X, Y], axis=0)
  nvars, nobs = util.shape(X)
  if nobs == 0:
    return lax.full(() if nvars == 1 else (nvars, nvars), np.nan, util.aval_of(X).dtype)
  if ddof is None:
    ddof = 0 if bias else 1
  w = None
  if fweights is not None:
    fweights = _weights("fweights", fweights, nobs)
    if not dtypes.issubdtype(util.aval_of(fweights).dtype, np.integer):
      raise TypeError("fweights must be integer.")
    w = fweights
  if aweights is not None:
    aweights = _weights("aweights", aweights, nobs)
    w = aweights if w is None else ufuncs.multiply(w, aweights)
  if dtype is not None:
    X = lax.convert_element_type(X, dtype, False)
    w = None if w is None else lax.convert_element_type(w, dtype, False)
  avg, w_sum = reductions.average(X, axis=1, weights=w, returned=True)
  w_sum = lax.index_in_dim(w_sum, 0, 0, keepdims=False)
  if w is None:
    normalizer = nobs - ddof
  elif ddof == 0:
    normalizer = w_sum
  elif aweights is None:
    normalizer = ufuncs.subtract(w_sum, ddof)
  else:
    spread = ufuncs.true_divide(reductions.sum(ufuncs.multiply(w, aweights)), w_sum)
    normalizer = ufuncs.subtract(w_sum, ufuncs.multiply(ddof, spread))
  X = ufuncs.subtract(X, util.expand_dims_at(avg, (1,)))
  X_w = X if w is None else ufuncs.multiply(X, util.expand_dims_at(w, (0,)))
  from purejax._src.numpy import products
  product = products.dot(X, lax.transpose(ufuncs.conjugate(X_w), (1, 0)))
  out = ufuncs.true_divide(product, normalizer)
  return shape_ops.squeeze(out)


def _diagonal(c):
  """The diagonal of a square matrix: every (n+1)-th element, flattened."""
  n = util.shape(c)[0]
  return lax.slice(lax.reshape(c, (n * n,)), (0,), (n * n,), (n + 1,))


def corrcoef(x, y=None, rowvar=True, dtype=None):
  """Pearson correlation coefficients (``cov`` normalised by the standard
  deviations, clipped to [-1, 1])."""
  check_arraylike("corrcoef", x)
  dtype = dtypes.canonicalize_user_dtype(dtype, "corrcoef")
  if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
    raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                     f"dtype={dtype}")
  c = cov(x, y, rowvar, dtype=dtype)
  if util.ndim(c) == 0:
    return ufuncs.true_divide(c, c)
  c_dtype = util.aval_of(c).dtype
  stddev = lax.convert_element_type(ufuncs.sqrt(ufuncs.real(_diagonal(c))), c_dtype, False)
  c = ufuncs.true_divide(ufuncs.true_divide(c, util.expand_dims_at(stddev, (1,))),
                         util.expand_dims_at(stddev, (0,)))
  real = ufuncs.clip(ufuncs.real(c), -1, 1)
  if dtypes.issubdtype(c_dtype, np.complexfloating):
    return lax.complex(real, ufuncs.clip(ufuncs.imag(c), -1, 1))
  return real
