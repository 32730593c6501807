"""Cumulative reductions: cumsum, cumprod, nancumsum, nancumprod and the
array-API cumulative_sum / cumulative_prod, on lax's cumulative primitives.

Dtypes follow JAX: the result keeps the input dtype (bools count as the
default int); cumulative_sum promotes small integers as ``jnp.sum`` does.
"""
import functools

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import util
from purejax._src.numpy.reductions import _promoted_integer
from purejax._src.numpy.util import check_arraylike, check_no_out


def _cumulative(name, lax_fn, a, axis, dtype, out=None, nan_fill=None,
                promote_integers=False):
  check_arraylike(name, a)
  check_no_out(name, out)
  a = util.asarray(a)
  shape = util.shape(a)
  if axis is None or not shape:
    a = lax.reshape(a, (int(np.prod(shape)),))
  if axis is None:
    axis = 0
  axis = util.canonicalize_axis(axis, util.ndim(a))
  a_dtype = util.aval_of(a).dtype
  if nan_fill is not None and dtypes.issubdtype(a_dtype, np.inexact):
    a = lax.select(lax.ne(a, a), lax.full_like(a, nan_fill), a)
  dtype = dtypes.canonicalize_user_dtype(dtype, name)
  if dtype is None:
    result_dtype = a_dtype
    if promote_integers or a_dtype == np.bool_:
      result_dtype = _promoted_integer(a_dtype)
    compute_dtype = result_dtype
  elif dtype == np.bool_:
    # A boolean running sum: "has any nonzero appeared" (for cumsum).
    result_dtype = np.dtype(np.bool_)
    if a_dtype != np.bool_:
      a = lax.ne(a, lax.full_like(a, 0))
    compute_dtype = _promoted_integer(result_dtype)
  else:
    result_dtype = compute_dtype = dtype
  a = lax.convert_element_type(a, compute_dtype, False)
  return lax.convert_element_type(lax_fn(a, axis), result_dtype, False)


@functools.partial(jit, static_argnames=("axis", "dtype"))
def cumsum(a, axis=None, dtype=None, out=None):
  """Cumulative sum along ``axis`` (the flattened array when None)."""
  return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out)


@functools.partial(jit, static_argnames=("axis", "dtype"))
def cumprod(a, axis=None, dtype=None, out=None):
  """Cumulative product along ``axis`` (the flattened array when None)."""
  return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out)


@functools.partial(jit, static_argnames=("axis", "dtype"))
def nancumsum(a, axis=None, dtype=None, out=None):
  """Cumulative sum treating NaNs as zero."""
  return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, out, nan_fill=0)


@functools.partial(jit, static_argnames=("axis", "dtype"))
def nancumprod(a, axis=None, dtype=None, out=None):
  """Cumulative product treating NaNs as one."""
  return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, out, nan_fill=1)


def _array_api_cumulative(name, what, lax_fn, identity, x, axis, dtype, include_initial,
                          promote_integers):
  check_arraylike(name, x)
  x = util.asarray(x)
  ndim = util.ndim(x)
  if ndim == 0:
    raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however "
                     "a scalar value or scalar array was given.")
  if axis is None:
    if ndim > 1:
      raise ValueError(f"The input array has rank {ndim}, however axis was not set to an "
                       "explicit value. The axis argument is only optional for "
                       "one-dimensional arrays.")
    axis = 0
  axis = util.canonicalize_axis(axis, ndim)
  out = _cumulative(name, lax_fn, x, axis, dtype, promote_integers=promote_integers)
  if include_initial:
    start_shape = list(util.shape(x))
    start_shape[axis] = 1
    start = lax.full(tuple(start_shape), identity, util.aval_of(out).dtype)
    out = lax.concatenate([start, out], axis)
  return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
  """Cumulative sum (array API); ``include_initial`` prepends a zero."""
  return _array_api_cumulative("cumulative_sum", "sum", lax.cumsum, 0, x, axis, dtype,
                               include_initial, promote_integers=True)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
  """Cumulative product (array API); ``include_initial`` prepends a one."""
  return _array_api_cumulative("cumulative_prod", "product", lax.cumprod, 1, x, axis,
                               dtype, include_initial, promote_integers=False)
