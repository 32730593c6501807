"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin.

One helper (``_reduce``) does what they share: checks, the axes, the
computation dtype (small ints sum in the default int; float16 sums in
float32), ``where=`` masks, ``initial=`` and ``keepdims``.
"""
import builtins
import functools

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, check_no_out


def _reduction_axes(ndim, axis):
  axis = util.concrete_or_error(axis, "axis argument to a jnp reduction")
  if isinstance(axis, np.ndarray):
    axis = tuple(axis.tolist())
  return util.canonicalize_axes(axis, ndim)


def _upcast_f16(dtype):
  """float16 and bfloat16 accumulate in float32, as JAX does on CPU."""
  if dtype in (np.dtype(np.float16), dtypes.bfloat16):
    return np.dtype(np.float32)
  return dtype


def _promoted_integer(dtype):
  """Sums and products of small ints (and bools) use the default int width."""
  if dtype == np.bool_:
    return dtypes.default_int_dtype()
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    default = dtypes.default_uint_dtype()
    return default if dtype.itemsize < default.itemsize else dtype
  if dtypes.issubdtype(dtype, np.integer):
    default = dtypes.default_int_dtype()
    return default if dtype.itemsize < default.itemsize else dtype
  return dtype


def _identity(op_name, dtype):
  """The value a reduction starts from (and masks out elements with)."""
  if op_name == "sum":
    return 0
  if op_name == "prod":
    return 1
  if dtype == np.bool_:
    return op_name == "min"
  if dtypes.issubdtype(dtype, np.integer):
    info = dtypes.iinfo(dtype)
    return info.min if op_name == "max" else info.max
  return -np.inf if op_name == "max" else np.inf


_COMBINE = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}
_HAS_IDENTITY = {"sum": True, "prod": True, "max": False, "min": False}


def _reduce(name, op_name, a, axis, dtype, out, keepdims, initial, where,
            promote_integers=True, upcast_f16=True):
  check_arraylike(name, a)
  check_no_out(name, out)
  requested = dtypes.canonicalize_user_dtype(dtype, name)
  a = util.asarray(a)
  aval = util.aval_of(a)
  axes = _reduction_axes(len(aval.shape), axis)
  has_identity = _HAS_IDENTITY[op_name]
  if initial is None and not has_identity:
    if where is not None:
      raise ValueError(f"reduction operation {name} does not have an identity, so to "
                       "use a where mask one has to specify 'initial'")
    if builtins.any(aval.shape[d] == 0 for d in axes):
      raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
  result_dtype = requested
  if result_dtype is None:
    result_dtype = _promoted_integer(aval.dtype) if promote_integers else aval.dtype
  compute_dtype = result_dtype
  if requested is None and upcast_f16 and dtypes.issubdtype(result_dtype, np.inexact):
    compute_dtype = _upcast_f16(result_dtype)
  if aval.dtype == np.bool_ and op_name in ("sum", "prod"):
    a = lax.convert_element_type(a, dtypes.default_int_dtype(), False)
  a = lax.convert_element_type(a, compute_dtype, False)
  if where is not None:
    fill = lax.convert_element_type(_identity(op_name, compute_dtype), compute_dtype, False)
    a = ufuncs.where(where, a, fill)
  result = getattr(lax, f"reduce_{op_name}")(a, axes)
  if initial is not None:
    init = lax.convert_element_type(initial, compute_dtype, False)
    if util.shape(init) != ():
      raise ValueError(f"initial value must be a scalar. Got array of shape {util.shape(init)}")
    result = _COMBINE[op_name](init, result)
  if keepdims:
    result = util.expand_dims_at(result, axes)
  return lax.convert_element_type(result, result_dtype, False)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
  """Sum of the elements over ``axis`` (bools and small ints sum as int32)."""
  return _reduce("sum", "sum", a, axis, dtype, out, keepdims, initial, where,
                 promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
  """Product of the elements over ``axis``."""
  return _reduce("prod", "prod", a, axis, dtype, out, keepdims, initial, where,
                 promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Largest element over ``axis`` (NaN propagates)."""
  return _reduce("max", "max", a, axis, None, out, keepdims, initial, where,
                 promote_integers=False, upcast_f16=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Smallest element over ``axis`` (NaN propagates)."""
  return _reduce("min", "min", a, axis, None, out, keepdims, initial, where,
                 promote_integers=False, upcast_f16=False)


amax, amin = max, min


def _logical_reduce(name, lax_fn, a, axis, out, keepdims, where):
  check_arraylike(name, a)
  check_no_out(name, out)
  a = util.asarray(a)
  axes = _reduction_axes(util.ndim(a), axis)
  a = lax.convert_element_type(a, np.bool_, False)
  if where is not None:
    a = ufuncs.where(where, a, name == "all")
  result = lax_fn(a, axes)
  return util.expand_dims_at(result, axes) if keepdims else result


def all(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether every element over ``axis`` is true."""
  return _logical_reduce("all", lax.reduce_and, a, axis, out, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether any element over ``axis`` is true."""
  return _logical_reduce("any", lax.reduce_or, a, axis, out, keepdims, where)


# ---------------------------------------------------------------------------
# Statistics

def _mean_dtypes(a_dtype, dtype):
  """(computation dtype, result dtype) of mean and var."""
  if dtype is not None:
    result = dtypes.to_inexact_dtype(dtype)
    return result, result
  if not dtypes.issubdtype(a_dtype, np.inexact):
    result = dtypes.to_inexact_dtype(dtypes.default_float_dtype())
    return result, result
  return _upcast_f16(a_dtype), a_dtype


def _count(shape, axes):
  n = 1
  for d in axes:
    n *= shape[d]
  return n


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """Arithmetic mean over ``axis`` (integers average as floats)."""
  check_arraylike("mean", a)
  check_no_out("mean", out)
  requested = dtypes.canonicalize_user_dtype(dtype, "mean")
  a = util.asarray(a)
  aval = util.aval_of(a)
  axes = _reduction_axes(len(aval.shape), axis)
  compute_dtype, result_dtype = _mean_dtypes(aval.dtype, requested)
  if where is None:
    normalizer = lax.convert_element_type(_count(aval.shape, axes), compute_dtype, False)
  else:
    mask = util.broadcast_to(where, aval.shape)
    normalizer = sum(mask, axis=axes, dtype=compute_dtype, keepdims=keepdims)
  total = sum(a, axis=axes, dtype=compute_dtype, keepdims=keepdims, where=where)
  return lax.convert_element_type(lax.div(total, normalizer), result_dtype, False)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
  """Variance over ``axis``, dividing by N - ddof."""
  check_arraylike("var", a)
  check_no_out("var", out)
  ddof = _ddof(ddof, correction, "var")
  requested = dtypes.canonicalize_user_dtype(dtype, "var")
  return _var(a, ddof, _static_axis(axis), requested, bool(keepdims), where)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
  """Standard deviation over ``axis``: the square root of ``var``."""
  check_arraylike("std", a)
  check_no_out("std", out)
  ddof = _ddof(ddof, correction, "std")
  requested = dtypes.canonicalize_user_dtype(dtype, "std")
  return _std(a, ddof, _static_axis(axis), requested, bool(keepdims), where)


def _ddof(ddof, correction, name):
  if correction is None:
    return ddof
  if ddof != 0:
    raise ValueError(f"ddof and correction can't be provided simultaneously in jnp.{name}.")
  return correction


def _static_axis(axis):
  """A hashable axis for the jitted helpers' static arguments."""
  return tuple(axis) if isinstance(axis, list) else axis


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _var(a, ddof, axis, dtype, keepdims, where):
  a = util.asarray(a)
  aval = util.aval_of(a)
  axes = _reduction_axes(len(aval.shape), axis)
  compute_dtype, result_dtype = _mean_dtypes(aval.dtype, dtype)
  a = lax.convert_element_type(a, compute_dtype, False)
  centered = ufuncs.subtract(a, mean(a, axis=axes, keepdims=True, where=where))
  if dtypes.issubdtype(compute_dtype, np.complexfloating):
    # |x - mean|^2; the variance of complex data is real.
    centered = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
    compute_dtype = dtypes.to_floating_dtype(compute_dtype)
    if dtype is None:
      result_dtype = dtypes.to_floating_dtype(result_dtype)
  else:
    centered = lax.square(centered)
  if where is None:
    count = lax.convert_element_type(_count(aval.shape, axes), compute_dtype, False)
  else:
    mask = util.broadcast_to(where, aval.shape)
    count = sum(mask, axis=axes, dtype=compute_dtype, keepdims=keepdims)
  normalizer = lax.sub(count, lax.convert_element_type(ddof, compute_dtype, False))
  total = sum(centered, axis=axes, dtype=compute_dtype, keepdims=keepdims, where=where)
  result = lax.convert_element_type(lax.div(total, normalizer), result_dtype, False)
  return ufuncs.where(ufuncs.greater(normalizer, 0), result, np.nan)


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _std(a, ddof, axis, dtype, keepdims, where):
  return ufuncs.sqrt(_var(a, ddof, axis, dtype, keepdims, where))


# ---------------------------------------------------------------------------
# Arg reductions

def _arg_reduce(name, lax_fn, a, axis, out, keepdims):
  check_arraylike(name, a)
  check_no_out(name, out)
  a = util.asarray(a)
  shape = util.shape(a)
  if axis is None:
    if 0 in shape:
      raise ValueError(f"attempt to get {name} of an empty sequence")
    flat = lax.reshape(a, (int(np.prod(shape)),)) if len(shape) != 1 else a
    result = lax_fn(flat, 0, dtypes.default_int_dtype())
    return util.expand_dims_at(result, tuple(range(len(shape)))) if keepdims else result
  axis = util.canonicalize_axis(util.concrete_or_error(axis, f"axis argument to jnp.{name}"),
                                len(shape))
  if shape[axis] == 0:
    raise ValueError(f"attempt to get {name} of an empty sequence")
  result = lax_fn(a, axis, dtypes.default_int_dtype())
  return util.expand_dims_at(result, (axis,)) if keepdims else result


def argmax(a, axis=None, out=None, keepdims=None):
  """Index of the largest element (the first one on ties; NaN wins)."""
  return _arg_reduce("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
  """Index of the smallest element (the first one on ties; NaN wins)."""
  return _arg_reduce("argmin", lax.argmin, a, axis, out, keepdims)
