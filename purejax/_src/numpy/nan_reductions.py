"""Reductions that ignore NaNs: nansum, nanprod, nanmax, nanmin, nanmean,
nanvar, nanstd, nanargmax, nanargmin.

NaNs are replaced by the reduction's identity and the ordinary reduction
runs; integer and bool inputs (which hold no NaNs) go straight to it.  As in
JAX, nanmax/nanmin of an all-NaN slice is NaN, and nanargmax/nanargmin of
one is -1 (NumPy raises).
"""
import functools

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.reductions import _static_axis, check_where
from purejax._src.numpy.util import check_arraylike, check_no_out


def _isnan(a):
  return lax.ne(a, a)


def _fill_value(dtype, value):
  """``value`` as ``dtype`` (infinities become the extreme finite values of
  dtypes without them)."""
  if np.isinf(value) and dtypes.issubdtype(dtype, np.floating):
    info = dtypes.finfo(dtype)
    if not np.isinf(np.array(value).astype(dtype)):
      return info.min if value < 0 else info.max
  return value


def _is_inexact(a):
  return dtypes.issubdtype(util.aval_of(a).dtype, np.inexact)


def _nan_reduction(name, reduction, identity, nan_if_all_nan, a, axis, keepdims, where,
                   **kwargs):
  check_arraylike(name, a)
  check_no_out(name, kwargs.pop("out", None))
  where = check_where(name, where)
  a = util.asarray(a)
  if not _is_inexact(a):
    return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
  dtype = util.aval_of(a).dtype
  fill = lax.convert_element_type(_fill_value(dtype, identity), dtype, False)
  out = reduction(ufuncs.where(_isnan(a), fill, a), axis=axis, keepdims=keepdims,
                  where=where, **kwargs)
  if nan_if_all_nan:
    all_nan = reductions.all(_isnan(a), axis=axis, keepdims=keepdims)
    out = ufuncs.where(all_nan, lax.convert_element_type(np.nan, dtype, False), out)
  return out


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _nansum(a, axis, dtype, keepdims, initial, where):
  return _nan_reduction("nansum", reductions.sum, 0, False, a, axis, keepdims, where,
                        dtype=dtype, initial=initial)


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _nanprod(a, axis, dtype, keepdims, initial, where):
  return _nan_reduction("nanprod", reductions.prod, 1, False, a, axis, keepdims, where,
                        dtype=dtype, initial=initial)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _nanmax(a, axis, keepdims, initial, where):
  return _nan_reduction("nanmax", reductions.max, -np.inf, initial is None, a, axis,
                        keepdims, where, initial=initial)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _nanmin(a, axis, keepdims, initial, where):
  return _nan_reduction("nanmin", reductions.min, np.inf, initial is None, a, axis,
                        keepdims, where, initial=initial)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """Sum over ``axis`` treating NaNs as zero."""
  check_arraylike("nansum", a)
  check_no_out("nansum", out)
  dtype = dtypes.canonicalize_user_dtype(dtype, "nansum")
  return _nansum(a, _static_axis(axis), dtype, bool(keepdims), initial,
                 check_where("nansum", where))


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """Product over ``axis`` treating NaNs as one."""
  check_arraylike("nanprod", a)
  check_no_out("nanprod", out)
  dtype = dtypes.canonicalize_user_dtype(dtype, "nanprod")
  return _nanprod(a, _static_axis(axis), dtype, bool(keepdims), initial,
                  check_where("nanprod", where))


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Maximum over ``axis`` ignoring NaNs (NaN where a slice is all NaN)."""
  check_arraylike("nanmax", a)
  check_no_out("nanmax", out)
  return _nanmax(a, _static_axis(axis), bool(keepdims), initial, check_where("nanmax", where))


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Minimum over ``axis`` ignoring NaNs (NaN where a slice is all NaN)."""
  check_arraylike("nanmin", a)
  check_no_out("nanmin", out)
  return _nanmin(a, _static_axis(axis), bool(keepdims), initial, check_where("nanmin", where))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
  """Mean over ``axis`` of the non-NaN elements (NaN where there are none)."""
  check_arraylike("nanmean", a)
  check_no_out("nanmean", out)
  where = check_where("nanmean", where)
  dtype = dtypes.canonicalize_user_dtype(dtype, "nanmean")
  return _nanmean(a, _static_axis(axis), dtype, bool(keepdims), where)


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _nanmean(a, axis, dtype, keepdims, where):
  a = util.asarray(a)
  if not _is_inexact(a):
    return reductions.mean(a, axis, dtype, keepdims=keepdims, where=where)
  if dtype is None:
    dtype = util.aval_of(a).dtype
  present = lax.bitwise_not(_isnan(a))
  count = reductions.sum(present, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
  total = _nansum(a, axis, dtype, keepdims, None, where)
  return lax.div(total, count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """Variance over ``axis`` of the non-NaN elements, dividing by N - ddof."""
  check_arraylike("nanvar", a)
  check_no_out("nanvar", out)
  where = check_where("nanvar", where)
  dtype = dtypes.canonicalize_user_dtype(dtype, "nanvar")
  return _nanvar(a, ddof, _static_axis(axis), dtype, bool(keepdims), where, mean)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """Standard deviation over ``axis`` of the non-NaN elements."""
  check_arraylike("nanstd", a)
  check_no_out("nanstd", out)
  where = check_where("nanstd", where)
  dtype = dtypes.canonicalize_user_dtype(dtype, "nanstd")
  return lax.sqrt(_nanvar(a, ddof, _static_axis(axis), dtype, bool(keepdims), where, mean))


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _nanvar(a, ddof, axis, dtype, keepdims, where, a_mean):
  a = util.asarray(a)
  compute_dtype, result_dtype = reductions._var_dtypes(util.aval_of(a).dtype, dtype)
  a = lax.convert_element_type(a, compute_dtype, False)
  if a_mean is None:
    a_mean = _nanmean(a, axis, compute_dtype, True, where)
  else:
    check_arraylike("nanvar", a_mean)
    a_mean = lax.convert_element_type(a_mean, compute_dtype, False)
  nan = _isnan(a)
  # The NaNs are masked after subtracting so that their gradient is zero too.
  centered = ufuncs.where(nan, lax.convert_element_type(0, compute_dtype, False),
                          ufuncs.subtract(a, a_mean))
  if dtypes.issubdtype(compute_dtype, np.complexfloating):
    centered = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
  else:
    centered = lax.square(centered)
  count = reductions.sum(lax.bitwise_not(nan), axis=axis, keepdims=keepdims, where=where)
  count = lax.sub(count, lax.convert_element_type(ddof, util.aval_of(count).dtype, False))
  empty = lax.le(count, lax.full_like(count, 0))
  total = reductions.sum(centered, axis=axis, keepdims=keepdims, where=where)
  total_dtype = util.aval_of(total).dtype
  total = ufuncs.where(empty, lax.convert_element_type(np.nan, total_dtype, False), total)
  divisor = lax.convert_element_type(ufuncs.where(empty, lax.full_like(count, 1), count),
                                     total_dtype, False)
  return lax.convert_element_type(lax.div(total, divisor), result_dtype, False)


def _nan_arg(name, arg_fn, fill):

  def fn(a, axis=None, out=None, keepdims=None):
    check_arraylike(name, a)
    check_no_out(name, out)
    return _nan_arg_jit(arg_fn, fill, a, _static_axis(axis), bool(keepdims))

  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = (f"Index of the {name[6:]}imum ignoring NaNs; -1 where a slice is all "
                f"NaN (NumPy raises).")
  return fn


@functools.partial(jit, static_argnums=(0, 1), static_argnames=("axis", "keepdims"))
def _nan_arg_jit(arg_fn, fill, a, axis, keepdims):
  a = util.asarray(a)
  if not _is_inexact(a):
    return arg_fn(a, axis=axis, keepdims=keepdims)
  nan = _isnan(a)
  filled = ufuncs.where(nan, lax.convert_element_type(fill, util.aval_of(a).dtype, False), a)
  index = arg_fn(filled, axis=axis, keepdims=keepdims)
  all_nan = reductions.all(nan, axis=axis, keepdims=keepdims)
  return ufuncs.where(all_nan, lax.full_like(index, -1), index)


nanargmax = _nan_arg("nanargmax", reductions.argmax, -np.inf)
nanargmin = _nan_arg("nanargmin", reductions.argmin, np.inf)
