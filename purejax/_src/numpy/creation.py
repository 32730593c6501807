"""Array creation: array/asarray, zeros/ones/full/empty (and *_like),
arange, linspace, eye, identity.

Concrete data given to ``array`` (Python scalars, nested lists, NumPy arrays)
is a constant, so NumPy may build it; anything traced is assembled with lax.
"""
import functools
import math
import operator
import warnings

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.array import wrap_numpy
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util


# ---------------------------------------------------------------------------
# array / asarray

def _leaves(obj):
  """The leaves of nested lists and tuples."""
  if isinstance(obj, (list, tuple)):
    out = []
    for item in obj:
      out.extend(_leaves(item))
    return out
  return [obj]


def _check_leaf(leaf):
  if leaf is None:
    raise ValueError("None is not a valid value for jnp.array")
  if isinstance(leaf, (str, bytes)):
    dt = np.asarray(leaf).dtype
    raise TypeError(f"Value {leaf!r} with dtype {dt} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")
  if hasattr(leaf, "__jax_array__"):
    return leaf.__jax_array__()
  core.get_aval(leaf)   # rejects other objects and out-of-range Python ints
  return leaf


def _inferred_dtype(leaves):
  if not leaves:
    return dtypes.default_float_dtype()
  return dtypes.result_type(*leaves)


def _copy(x):
  return lax.copy_p.bind(x)


def _stack_traced(obj, dtype):
  """Builds an array from nested lists holding tracers, with lax ops: each
  element is converted and given a leading axis, then they are joined."""
  if not isinstance(obj, (list, tuple)):
    return lax.convert_element_type(obj, dtype, False)
  if not obj:
    raise ValueError("jnp.array cannot build an empty axis around traced values")
  parts = []
  for item in obj:
    part = _stack_traced(item, dtype)
    row = util.shape(part)
    parts.append(lax.broadcast_in_dim(part, (1,) + row, tuple(range(1, len(row) + 1))))
  if len({util.shape(p) for p in parts}) > 1:
    raise ValueError("setting an array element with a sequence. The requested array "
                     "has an inhomogeneous shape.")
  return lax.concatenate(parts, 0)


def array(object, dtype=None, copy=True, order="K", ndmin=0):
  """An array from ``object``: an array, a scalar, or nested lists/tuples."""
  if order not in ("K", "C", "A", None):
    raise NotImplementedError("Only implemented for order='K'")
  requested = dtypes.canonicalize_user_dtype(dtype, "array")
  weak_type = dtype is None and dtypes.is_weakly_typed(object)
  if hasattr(object, "__jax_array__"):
    object = object.__jax_array__()

  if isinstance(object, core.ArrayBase):
    out = _copy(object) if copy else object
    if requested is not None:
      out = lax.convert_element_type(out, requested, False)
  elif isinstance(object, (list, tuple)):
    leaves = [_check_leaf(leaf) for leaf in _leaves(object)]
    out_dtype = requested if requested is not None else _inferred_dtype(leaves)
    if any(isinstance(leaf, core.Tracer) for leaf in leaves):
      out = _stack_traced(object, out_dtype)
    else:
      out = _from_concrete(object, out_dtype, False, requested is not None)
  else:
    _check_leaf(object)
    aval = core.get_aval(object)
    out_dtype = requested if requested is not None else aval.dtype
    out = _from_concrete(object, out_dtype, weak_type, requested is not None)
  return util.expand_to_rank(out, ndmin)


def _from_concrete(obj, dtype, weak_type, requested=False):
  """A new Array holding concrete data (NumPy converts; XLA's rules cast)."""
  if requested and not isinstance(obj, np.ndarray):
    with np.errstate(all="ignore"), warnings.catch_warnings():
      warnings.simplefilter("ignore")
      np.asarray(obj, dtype)   # NumPy's OverflowError: jnp.int8(200) is an error
  value = np.array(obj)   # raises NumPy's error for ragged nesting
  if value.dtype == object:
    raise TypeError(f"JAX only supports number and bool dtypes, got {type(obj)}")
  aval = core.ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)
  x = wrap_numpy(value, aval)
  return lax.convert_element_type(x, dtype, weak_type)


def asarray(a, dtype=None, order=None, *, copy=None):
  """Like ``array``, without copying what already is an array."""
  return array(a, dtype=dtype, copy=bool(copy), order=order)


def astype(x, dtype, /, *, copy=False, device=None):
  """``x`` converted to ``dtype`` (float to int conversion saturates)."""
  util.check_arraylike("astype", x)
  requested = dtypes.canonicalize_user_dtype(dtype, "astype")
  if requested is None:
    requested = dtypes.default_float_dtype()
  return lax.convert_element_type(util.asarray(x), requested, False)


# ---------------------------------------------------------------------------
# Filled arrays

def _filled(shape, fill, dtype, weak_type):
  """``fill`` (a scalar) converted to dtype and broadcast to shape."""
  fill = lax.convert_element_type(fill, dtype, weak_type)
  return lax.broadcast_in_dim(fill, shape, ()) if shape else fill


def _creation_dtype(dtype, fun_name):
  dt = dtypes.canonicalize_user_dtype(dtype, fun_name)
  return dtypes.default_float_dtype() if dt is None else dt


def _constant(fun_name, shape, value, dtype):
  shape = util.canonicalize_shape(shape)
  return _filled(shape, value, _creation_dtype(dtype, fun_name), False)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
  """An array of zeros (float32 unless ``dtype`` says otherwise)."""
  return _constant("zeros", shape, 0, dtype)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
  """An array of ones (float32 unless ``dtype`` says otherwise)."""
  return _constant("ones", shape, 1, dtype)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
  """Like ``zeros``: arrays are immutable, so 'uninitialized' means zeros."""
  return _constant("empty", shape, 0, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
  """An array of ``shape`` filled with ``fill_value`` (broadcast if an array)."""
  util.check_arraylike("full", fill_value)
  requested = dtypes.canonicalize_user_dtype(dtype, "full")
  shape = util.canonicalize_shape(shape)
  if util.ndim(fill_value) == 0:
    weak_type = requested is None and dtypes.is_weakly_typed(fill_value)
    dt = requested if requested is not None else util.aval_of(fill_value).dtype
    return _filled(shape, fill_value, dt, weak_type)
  return util.broadcast_to(asarray(fill_value, dtype=requested), shape)


def _like(fun_name, a, fill_value, dtype, shape):
  util.check_arraylike(fun_name, a)
  requested = dtypes.canonicalize_user_dtype(dtype, fun_name)
  aval = util.aval_of(a)
  shape = aval.shape if shape is None else util.canonicalize_shape(shape)
  dt = requested if requested is not None else aval.dtype
  if util.ndim(fill_value) == 0:
    return _filled(shape, fill_value, dt, requested is None and aval.weak_type)
  return util.broadcast_to(asarray(fill_value, dtype=dt), shape)


def zeros_like(a, dtype=None, shape=None, *, device=None):
  return _like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None):
  return _like("ones_like", a, 1, dtype, shape)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
  return _like("empty_like", prototype, 0, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
  util.check_arraylike("full_like", a, fill_value)
  return _like("full_like", a, fill_value, dtype, shape)


# ---------------------------------------------------------------------------
# Ranges

def _concrete_scalar(x, name):
  context = f"It arose in the jnp.arange argument '{name}'"
  value = util.concrete_or_error(x, context)
  return np.asarray(value).item()


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
  """Evenly spaced values in [start, stop), as ``start + step * iota``."""
  requested = dtypes.canonicalize_user_dtype(dtype, "arange")
  util.check_arraylike("arange", start)
  if stop is None and step is None:
    stop_value = _concrete_scalar(start, "stop")
    dt = requested if requested is not None else dtypes.result_type(start)
    return lax.iota(dt, max(0, math.ceil(stop_value)))
  util.check_arraylike("arange", *(x for x in (stop, step) if x is not None))
  start_value = _concrete_scalar(start, "start")
  stop_value = _concrete_scalar(stop, "stop") if stop is not None else None
  step_value = _concrete_scalar(step, "step") if step is not None else None
  if stop_value is None:   # arange(start=..., step=...) counts up from 0
    start_value, stop_value = 0, start_value
  dt = requested if requested is not None else dtypes.result_type(
      *(x for x in (start, stop, step) if x is not None))
  delta = 1 if step_value is None else step_value
  if delta == 0:
    raise ZeroDivisionError("division by zero")
  size = max(0, math.ceil((stop_value - start_value) / delta))
  out = lax.iota(dt, size)
  if step_value is not None:
    out = lax.mul(lax.convert_element_type(step_value, dt), out)
  return lax.add(lax.convert_element_type(start_value, dt), out)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             *, device=None):
  """``num`` evenly spaced samples from ``start`` to ``stop``."""
  num = operator.index(util.concrete_or_error(num, "'num' argument of jnp.linspace"))
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  util.check_arraylike("linspace", start, stop)
  requested = dtypes.canonicalize_user_dtype(dtype, "linspace")
  return _linspace(start, stop, num, bool(endpoint), bool(retstep), requested, int(axis))


@functools.partial(jit, static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
  if dtype is None:
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
  compute_dtype = dtypes.to_inexact_dtype(dtype)
  start = lax.convert_element_type(start, compute_dtype, False)
  stop = lax.convert_element_type(stop, compute_dtype, False)
  bounds = util.broadcast_shapes(util.shape(start), util.shape(stop))
  start_b = util.broadcast_to(start, bounds)
  stop_b = util.broadcast_to(stop, bounds)
  axis = len(bounds) + axis + 1 if axis < 0 else axis
  out_bounds = list(bounds)
  out_bounds.insert(axis, 1)
  div = num - 1 if endpoint else num
  step = None
  if num > 1:
    delta = ufuncs.subtract(stop, start)
    step = ufuncs.true_divide(delta, div)
    frac_shape = [1] * len(out_bounds)
    frac_shape[axis] = div
    frac = _reshape(lax.iota(compute_dtype, div), frac_shape)
    frac = ufuncs.true_divide(frac, div)
    lo = ufuncs.multiply(_reshape(start_b, out_bounds), ufuncs.subtract(1, frac))
    out = ufuncs.add(lo, ufuncs.multiply(_reshape(stop_b, out_bounds), frac))
    if endpoint:
      end = lax.broadcast_in_dim(stop_b, tuple(out_bounds),
                                 tuple(d for d in range(len(out_bounds)) if d != axis))
      out = lax.concatenate([out, end], axis)
  elif num == 1:
    out = _reshape(start_b, out_bounds)
  else:
    empty_shape = list(out_bounds)
    empty_shape[axis] = 0
    out = _filled(tuple(empty_shape), 0, compute_dtype, False)
  if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(compute_dtype, np.integer):
    out = lax.floor(out)
  out = lax.convert_element_type(out, dtype, False)
  if not retstep:
    return out
  if step is None:
    step = lax.convert_element_type(np.nan, compute_dtype, False)
  return out, step


def _reshape(x, new_shape):
  new_shape = tuple(new_shape)
  return x if util.shape(x) == new_shape else lax.reshape(x, new_shape)


def eye(N, M=None, k=0, dtype=None, *, device=None):
  """A 2-D array with ones on the k-th diagonal."""
  requested = _creation_dtype(dtype, "eye")
  n = operator.index(util.concrete_or_error(N, "'N' argument of jnp.eye()"))
  m = n if M is None else operator.index(util.concrete_or_error(M, "'M' argument of jnp.eye()"))
  if n < 0 or m < 0:
    raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
  k = operator.index(util.concrete_or_error(k, "'k' argument of jnp.eye()"))
  rows = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 0)
  cols = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 1)
  on_diagonal = lax.eq(lax.add(rows, lax.convert_element_type(k, np.int32)), cols)
  return lax.convert_element_type(on_diagonal, requested, False)


def identity(n, dtype=None):
  """The n x n identity matrix."""
  dtypes.check_user_dtype_supported(dtype, "identity")
  return eye(n, dtype=dtype)

