"""Reductions: sum, prod, max, min, all, any, mean, var, std, argmax, argmin,
ptp, count_nonzero and average.

One helper (``_reduce``) does what they share: checks, the axes, the
computation dtype (small ints sum in the default int; float16 sums in
float32; a bool ``dtype`` makes sum an OR and prod an AND), ``where=``
masks, ``initial=`` and ``keepdims``.
"""
import builtins
import functools

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, check_no_out


def _reduction_axes(ndim, axis):
  axis = util.concrete_or_error(axis, "axis argument to a jnp reduction")
  if isinstance(axis, np.ndarray):
    axis = axis.tolist()
    axis = tuple(axis) if isinstance(axis, list) else axis
  return util.canonicalize_axes(axis, ndim)


def check_where(name, where):
  """``where=`` masks must be boolean arrays (JAX's check)."""
  if where is None:
    return None
  check_arraylike(name, where)
  dtype = util.aval_of(where).dtype
  if dtype != np.bool_:
    raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                     f"where.dtype=dtype('{dtype}').")
  return where


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
# On booleans a sum is an OR and a product an AND.
_BOOL_OP = {"sum": "or", "prod": "and", "max": "max", "min": "min"}
_BOOL_COMBINE = {"sum": lax.bitwise_or, "prod": lax.bitwise_and, "max": lax.max,
                 "min": lax.min}
_HAS_IDENTITY = {"sum": True, "prod": True, "max": False, "min": False}


def _reduce(name, op_name, a, axis, dtype, out, keepdims, initial, where,
            promote_integers=True, upcast_f16=True):
  check_arraylike(name, a)
  check_no_out(name, out)
  where = check_where(name, where)
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
  boolean = compute_dtype == np.bool_
  if where is not None:
    identity = _identity(op_name, compute_dtype)
    if boolean:
      identity = identity > 0
    fill = lax.convert_element_type(identity, compute_dtype, False)
    a = ufuncs.where(where, a, fill)
  result = getattr(lax, f"reduce_{_BOOL_OP[op_name] if boolean else op_name}")(a, axes)
  if initial is not None:
    check_arraylike(name, initial)
    init = lax.convert_element_type(initial, compute_dtype, False)
    if util.shape(init) != ():
      raise ValueError(f"initial value must be a scalar. Got array of shape {util.shape(init)}")
    result = (_BOOL_COMBINE if boolean else _COMBINE)[op_name](init, result)
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
  """(computation dtype, result dtype) of mean: integers average as floats;
  a requested dtype (even an integer one) is the result's."""
  result = dtypes.to_inexact_dtype(a_dtype) if dtype is None else dtype
  if dtypes.issubdtype(result, np.inexact):
    return _upcast_f16(result), result
  return result, result


def _var_dtypes(a_dtype, dtype):
  """(computation dtype, result dtype) of var: complex data has a real variance."""
  if dtype is not None:
    if (dtypes.issubdtype(a_dtype, np.complexfloating)
        and not dtypes.issubdtype(dtype, np.complexfloating)):
      raise ValueError(
          "jax.numpy.var does not yet support real dtype parameters when computing the "
          "variance of an array of complex values. The semantics of numpy.var seem "
          "unclear in this case. Please comment on "
          "https://github.com/jax-ml/jax/issues/2283 if this behavior is important to you.")
    return _upcast_f16(dtype), dtype
  if not dtypes.issubdtype(a_dtype, np.inexact):
    result = dtypes.to_inexact_dtype(a_dtype)
    return _upcast_f16(result), result
  if dtypes.issubdtype(a_dtype, np.complexfloating):
    return _upcast_f16(a_dtype), dtypes.to_floating_dtype(a_dtype)
  return _upcast_f16(a_dtype), a_dtype


def _count(shape, axes):
  n = 1
  for d in axes:
    n *= shape[d]
  return n


def _normalizer(shape, axes, keepdims, where, dtype):
  """The number of elements reduced: all of them, or those ``where`` selects."""
  if where is None:
    return lax.convert_element_type(_count(shape, axes), dtype, False)
  mask = util.broadcast_to(where, shape)
  return sum(mask, axis=axes, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """Arithmetic mean over ``axis`` (integers average as floats)."""
  check_arraylike("mean", a)
  check_no_out("mean", out)
  where = check_where("mean", where)
  requested = dtypes.canonicalize_user_dtype(dtype, "mean")
  a = util.asarray(a)
  aval = util.aval_of(a)
  axes = _reduction_axes(len(aval.shape), axis)
  compute_dtype, result_dtype = _mean_dtypes(aval.dtype, requested)
  normalizer = _normalizer(aval.shape, axes, keepdims, where, compute_dtype)
  total = sum(a, axis=axes, dtype=compute_dtype, keepdims=keepdims, where=where)
  return lax.convert_element_type(lax.div(total, normalizer), result_dtype, False)


_mean = mean   # var and std have an argument named ``mean``


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """Variance over ``axis``, dividing by N - ddof (``correction`` is the array
  API's name for ddof; ``mean`` may pass a precomputed mean, keepdims-shaped)."""
  check_arraylike("var", a)
  check_no_out("var", out)
  where = check_where("var", where)
  ddof = _ddof(ddof, correction)
  requested = dtypes.canonicalize_user_dtype(dtype, "var")
  if mean is not None:
    check_arraylike("var", mean)
  return _var(a, ddof, _static_axis(axis), requested, bool(keepdims), where, mean)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """Standard deviation over ``axis``: the square root of ``var``."""
  check_arraylike("std", a)
  check_no_out("std", out)
  where = check_where("std", where)
  ddof = _ddof(ddof, correction)
  requested = dtypes.canonicalize_user_dtype(dtype, "std")
  if requested is not None and not dtypes.issubdtype(requested, np.inexact):
    raise ValueError(f"dtype argument to jnp.std must be inexact; got {requested}")
  if mean is not None:
    check_arraylike("std", mean)
  return _std(a, ddof, _static_axis(axis), requested, bool(keepdims), where, mean)


def _ddof(ddof, correction):
  if correction is None:
    return ddof
  if ddof != 0:
    raise ValueError("ddof and correction can't be provided simultaneously.")
  return correction


def _static_axis(axis):
  """A hashable axis for the jitted helpers' static arguments."""
  if isinstance(axis, (np.ndarray, core.ArrayBase)):
    axis = np.asarray(util.concrete_or_error(axis, "axis argument to a jnp reduction")).tolist()
  return tuple(axis) if isinstance(axis, list) else axis


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _var(a, ddof, axis, dtype, keepdims, where, a_mean):
  a = util.asarray(a)
  aval = util.aval_of(a)
  axes = _reduction_axes(len(aval.shape), axis)
  compute_dtype, result_dtype = _var_dtypes(aval.dtype, dtype)
  a = lax.convert_element_type(a, compute_dtype, False)
  if a_mean is None:
    a_mean = _mean(a, axis=axes, dtype=compute_dtype, keepdims=True, where=where)
  else:
    a_mean = lax.convert_element_type(a_mean, compute_dtype, False)
  centered = ufuncs.subtract(a, a_mean)
  if dtypes.issubdtype(compute_dtype, np.complexfloating):
    # |x - mean|^2; the variance of complex data is real.
    centered = lax.add(lax.square(lax.real(centered)), lax.square(lax.imag(centered)))
    compute_dtype = dtypes.to_floating_dtype(compute_dtype)
  else:
    centered = lax.square(centered)
  count = _normalizer(aval.shape, axes, keepdims, where, compute_dtype)
  normalizer = lax.sub(count, lax.convert_element_type(ddof, compute_dtype, False))
  total = sum(centered, axis=axes, dtype=compute_dtype, keepdims=keepdims, where=where)
  result = lax.convert_element_type(lax.div(total, normalizer), result_dtype, False)
  return ufuncs.where(ufuncs.greater(normalizer, 0), result, np.nan)


@functools.partial(jit, static_argnames=("axis", "dtype", "keepdims"))
def _std(a, ddof, axis, dtype, keepdims, where, a_mean):
  return ufuncs.sqrt(_var(a, ddof, axis, dtype, keepdims, where, a_mean))


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _ptp(a, axis, keepdims):
  return lax.sub(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def ptp(a, axis=None, out=None, keepdims=False):
  """Range of values (maximum - minimum) over ``axis``."""
  check_arraylike("ptp", a)
  check_no_out("ptp", out)
  return _ptp(a, _static_axis(axis), bool(keepdims))


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def _count_nonzero(a, axis, keepdims):
  a = util.asarray(a)
  nonzero = lax.ne(a, lax.convert_element_type(0, util.aval_of(a).dtype, False))
  return sum(nonzero, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def count_nonzero(a, axis=None, keepdims=False):
  """Number of nonzero elements over ``axis`` (in the default int dtype)."""
  check_arraylike("count_nonzero", a)
  return _count_nonzero(a, _static_axis(axis), bool(keepdims))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
  """Weighted average over ``axis``; with ``returned`` also the sum of weights."""
  check_arraylike("average", a)
  if weights is not None:
    check_arraylike("average", weights)
  return _average(a, _static_axis(axis), weights, bool(returned), bool(keepdims))


@functools.partial(jit, static_argnames=("axis", "returned", "keepdims"))
def _average(a, axis, weights, returned, keepdims):
  ndim = util.ndim(a)
  axes = _reduction_axes(ndim, axis)
  if weights is None:
    check_arraylike("average", a)
    a, = util.promote_dtypes_inexact(a)
    avg = _mean(a, axis=axis, keepdims=keepdims)
    weights_sum = lax.full((), _count(util.shape(a), axes), util.aval_of(avg).dtype)
  else:
    check_arraylike("average", a, weights)
    a, weights = util.promote_dtypes_inexact(a, weights)
    a_shape, w_shape = util.shape(a), util.shape(weights)
    if a_shape != w_shape:
      if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
      if w_shape != tuple(a_shape[d] for d in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along "
                         "specified axis.")
      # Lay the weights along the reduced axes, in the order the axes were given.
      order = tuple(int(i) for i in np.argsort(axes))
      kept_shape = tuple(d if i in axes else 1 for i, d in enumerate(a_shape))
      weights = lax.reshape(weights, kept_shape, order)
    weights_sum = sum(weights, axis=axis, keepdims=keepdims)
    avg = lax.div(sum(ufuncs.multiply(a, weights), axis=axis, keepdims=keepdims), weights_sum)
  if returned:
    if util.shape(avg) != util.shape(weights_sum):
      weights_sum = util.broadcast_to(weights_sum, util.shape(avg))
    return avg, weights_sum
  return avg


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
