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
from purejax._src import devices
from purejax._src import host_memory
from purejax._src.api import ShapeDtypeStruct, jit
from purejax._src import mesh_context
from purejax._src.array import place_on_mesh, wrap_numpy
from purejax._src.lax import convert as lax_convert
from purejax._src.vmap import vmap
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
    raise TypeError(f"Value '{leaf}' with dtype {dt} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")
  if hasattr(leaf, "__jax_array__"):
    return leaf.__jax_array__()
  if type(leaf) is not int:   # Python ints are checked against the result dtype
    core.get_aval(leaf)   # rejects other objects
  return leaf


def _check_numpy_dtype(value):
  """JAX's TypeError for a NumPy value no JAX array can hold (object, str,
  float128...); JAX names its internal staging function."""
  try:
    core.get_aval(value)
  except TypeError:
    raise TypeError("Error interpreting argument to stage as a JAX value. The problematic "
                    f"value is of type {type(value)} and was passed to stage at position "
                    "0.\n") from None


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


def _arrays_as_numpy(obj):
  """Nested lists with their Arrays made NumPy arrays, those of ml_dtypes'
  types (bfloat16, float8, int4...) widened exactly to float32 or int32:
  NumPy neither casts them element by element nor promotes them with others."""
  if isinstance(obj, (list, tuple)):
    return [_arrays_as_numpy(x) for x in obj]
  if not isinstance(obj, core.ArrayBase):
    return obj
  value = np.asarray(obj)
  if value.dtype.kind == "V":
    value = value.astype(np.float32 if dtypes.issubdtype(value.dtype, np.floating)
                         else np.int32)
  return value


def array(object, dtype=None, copy=True, order="K", ndmin=0):
  """An array from ``object``: an array, a scalar, or nested lists/tuples."""
  if order not in ("K", "C", "A", None):
    raise NotImplementedError("Only implemented for order='K'")
  requested = dtypes.canonicalize_user_dtype(dtype, "array")
  weak_type = dtype is None and dtypes.is_weakly_typed(object)
  if hasattr(object, "__jax_array__"):
    object = object.__jax_array__()
  if isinstance(object, range):
    object = list(object)   # as JAX: a range is a sequence of Python ints
  object = util.buffer_as_numpy(object)
  if dtypes.is_extended(requested) and not isinstance(object, core.ArrayBase):
    raise TypeError(f"Cannot interpret '{requested}' as a data type")  # as NumPy's message

  if isinstance(object, core.ArrayBase):
    out = _copy(object) if copy else object
    if requested is not None:
      out = lax.convert_element_type(out, requested, False)
  elif isinstance(object, (list, tuple)):
    leaves = [_check_leaf(leaf) for leaf in _leaves(object)]
    out_dtype = requested if requested is not None else _inferred_dtype(leaves)
    util.check_python_int_leaves(leaves, out_dtype)
    if requested is not None and leaves and all(type(v) in (int, bool) for v in leaves):
      object = np.asarray(object, requested)   # exact, and checked above
    if any(isinstance(leaf, core.Tracer) for leaf in leaves):
      out = _stack_traced(object, out_dtype)
    else:
      if any(isinstance(leaf, core.ArrayBase) for leaf in leaves):
        object = _arrays_as_numpy(object)
      out = _from_concrete(object, out_dtype, False, requested is not None)
  else:
    if isinstance(object, (np.ndarray, np.generic)):
      _check_numpy_dtype(object)
    _check_leaf(object)
    if type(object) is int and requested is not None:
      util.check_python_int_leaves([object], requested)
      object = np.asarray(object, requested)
    aval = core.get_aval(object)   # an unrequested Python int must fit the default
    out_dtype = requested if requested is not None else aval.dtype
    out = _from_concrete(object, out_dtype, weak_type, requested is not None)
  return util.expand_to_rank(out, ndmin)


def _from_concrete(obj, dtype, weak_type, requested=False):
  """A new Array holding concrete data (NumPy converts; XLA's rules cast)."""
  if requested and not isinstance(obj, np.ndarray):
    with np.errstate(all="ignore"), warnings.catch_warnings():
      warnings.simplefilter("ignore")
      np.asarray(obj, dtype)   # NumPy's OverflowError: jnp.int8(200) is an error
  # (np.array raises NumPy's error for ragged nesting.)
  value = host_memory.copy(obj) if isinstance(obj, np.ndarray) else np.array(obj)
  if value.dtype == object:
    raise TypeError(f"JAX only supports number and bool dtypes, got {type(obj)}")
  aval = core.ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)
  x = wrap_numpy(value, aval)
  # Converted on the host, as JAX does, even under a trace: the result is a
  # constant of the requested dtype (a literal if it is a scalar).
  with core.eval_context():
    out = lax.convert_element_type(x, dtype, weak_type)
  if out.shape == () and core.current_trace() is not core.eval_trace:
    python_value = obj if weak_type and type(obj) in (bool, int, float, complex) else None
    lax_convert.mark_folded(out, python_value)
  elif mesh_context.mesh_is_set:
    place_on_mesh(out, per_dimension=False)   # host data put on the mesh: P()
  elif core.current_trace() is core.eval_trace:
    out = devices.on_default_device(out)
  return out


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

def _filled(shape, fill, dtype, weak_type, out_sharding=None):
  """``fill`` (a scalar) converted to dtype and broadcast to shape."""
  if dtypes.is_extended(dtype):   # a key array whose key data all equal ``fill``
    from purejax._src.random.keys import random_wrap
    impl = dtype._impl
    return _typed(random_wrap(_filled(shape + impl.key_shape, fill, np.dtype(np.uint32), False),
                              impl), out_sharding)
  fill = lax.convert_element_type(fill, dtype, weak_type)
  out = lax.broadcast_in_dim(fill, shape, ()) if shape else fill
  return _typed(out, out_sharding)


def _typed(out, out_sharding):
  if out_sharding is None:
    return out
  from purejax._src.out_sharding import canonical, put
  return put(out, canonical(out_sharding, util.shape(out)))


def _creation_dtype(dtype, fun_name):
  dt = dtypes.canonicalize_user_dtype(dtype, fun_name)
  return dtypes.default_float_dtype() if dt is None else dt


def _constant(fun_name, shape, value, dtype, out_sharding):
  shape = util.canonicalize_shape(shape)
  return _filled(shape, value, _creation_dtype(dtype, fun_name), False, out_sharding)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
  """An array of zeros (float32 unless ``dtype`` says otherwise)."""
  return _constant("zeros", shape, 0, dtype, out_sharding)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
  """An array of ones (float32 unless ``dtype`` says otherwise)."""
  return _constant("ones", shape, 1, dtype, out_sharding)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
  """Like ``zeros``: arrays are immutable, so 'uninitialized' means zeros."""
  return _constant("empty", shape, 0, dtype, out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
  """An array of ``shape`` filled with ``fill_value`` (broadcast if an array)."""
  util.check_arraylike("full", fill_value)
  requested = dtypes.canonicalize_user_dtype(dtype, "full")
  shape = util.canonicalize_shape(shape)
  if util.ndim(fill_value) == 0:
    weak_type = requested is None and dtypes.is_weakly_typed(fill_value)
    dt = requested if requested is not None else util.aval_of(fill_value).dtype
    return _filled(shape, fill_value, dt, weak_type, out_sharding)
  return _typed(util.broadcast_to(asarray(fill_value, dtype=requested), shape), out_sharding)


def _is_shape_dtype_struct(a):
  return isinstance(a, ShapeDtypeStruct)


def _like(fun_name, a, fill_value, dtype, shape, out_sharding=None):
  if _is_shape_dtype_struct(a):   # stands in for an array, as in JAX
    aval = a.aval
  else:
    util.check_arraylike(fun_name, a)
    aval = util.aval_of(a)
  requested = dtypes.canonicalize_user_dtype(dtype, fun_name)
  shape = aval.shape if shape is None else util.canonicalize_shape(shape)
  dt = requested if requested is not None else aval.dtype
  if util.ndim(fill_value) == 0:
    return _filled(shape, fill_value, dt, requested is None and aval.weak_type, out_sharding)
  return _typed(util.broadcast_to(asarray(fill_value, dtype=dt), shape), out_sharding)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
  return _like("zeros_like", a, 0, dtype, shape, out_sharding)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
  return _like("ones_like", a, 1, dtype, shape, out_sharding)


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
  return _like("empty_like", prototype, 0, dtype, shape, out_sharding)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
  util.check_arraylike("full_like", *([fill_value] if _is_shape_dtype_struct(a)
                                      else [a, fill_value]))
  return _like("full_like", a, fill_value, dtype, shape, out_sharding)


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
  for x in (start, stop, step):
    if util.is_arraylike(x) and dtypes.issubdtype(util.aval_of(x).dtype, np.complexfloating):
      raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                       "supported starting in JAX v0.10.0.")
  if stop is None and step is None:
    stop_value = _concrete_scalar(start, "stop")
    dt = requested if requested is not None else dtypes.result_type(start)
    return lax.broadcasted_iota(dt, (max(0, math.ceil(stop_value)),), 0,
                                out_sharding=out_sharding)
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
  out = lax.broadcasted_iota(dt, (size,), 0, out_sharding=out_sharding)
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



def copy(a, order=None):
  """A copy of ``a`` (arrays are immutable, so this is rarely needed)."""
  util.check_arraylike("copy", a)
  return array(a, copy=True, order=order)


# ---------------------------------------------------------------------------
# Log and geometric ranges

def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
  """``base ** linspace(start, stop, num)``."""
  num = operator.index(util.concrete_or_error(num, "'num' argument of jnp.logspace"))
  axis = operator.index(util.concrete_or_error(axis, "'axis' argument of jnp.logspace"))
  util.check_arraylike("logspace", start, stop)
  return _logspace(start, stop, num, endpoint, base, dtype, axis)


def _space_dtypes(start, stop, dtype, fun_name):
  if dtype is None:
    dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
  else:
    dtype = dtypes.canonicalize_user_dtype(dtype, fun_name)
  return dtype, dtypes.to_inexact_dtype(dtype)


def _logspace(start, stop, num, endpoint, base, dtype, axis):
  dtype, compute_dtype = _space_dtypes(start, stop, dtype, "logspace")
  start = astype(start, compute_dtype)
  stop = astype(stop, compute_dtype)
  lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
  return lax.convert_element_type(ufuncs.power(base, lin), dtype, False)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
  """Values spaced evenly on a log scale from ``start`` to ``stop`` (the
  sign of ``start`` is kept, so both ends may be negative)."""
  num = operator.index(util.concrete_or_error(num, "'num' argument of jnp.geomspace"))
  axis = operator.index(util.concrete_or_error(axis, "'axis' argument of jnp.geomspace"))
  util.check_arraylike("geomspace", start, stop)
  dtype, compute_dtype = _space_dtypes(start, stop, dtype, "geomspace")
  start = astype(start, compute_dtype)
  stop = astype(stop, compute_dtype)
  sign = ufuncs.sign(start)
  res = ufuncs.multiply(sign, _logspace(
      ufuncs.log10(ufuncs.true_divide(start, sign)),
      ufuncs.log10(ufuncs.true_divide(stop, sign)),
      num, endpoint, 10.0, compute_dtype, 0))
  axis = util.canonicalize_axis(axis, util.ndim(res))
  if axis:
    nd = util.ndim(res)
    res = lax.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, nd)))
  return lax.convert_element_type(res, dtype, False)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
  """Coordinate arrays from 1-D coordinate vectors (``copy=False`` is refused:
  arrays are immutable)."""
  util.check_arraylike("meshgrid", *xi)
  args = [util.asarray(x) for x in xi]
  if not copy:
    raise ValueError("jax.numpy.meshgrid only supports copy=True")
  if indexing not in ("xy", "ij"):
    raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
  if any(util.ndim(a) != 1 for a in args):
    raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                     f"{[util.shape(a) for a in args]}")
  swap = indexing == "xy" and len(args) >= 2
  if swap:
    args[0], args[1] = args[1], args[0]
  sizes = [util.shape(a)[0] for a in args]
  out = []
  for i, a in enumerate(args):
    if sparse:
      shape = [1] * len(args)
      shape[i] = sizes[i]
    else:
      shape = sizes
    out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
  if swap:
    out[0], out[1] = out[1], out[0]
  return out


# ---------------------------------------------------------------------------
# Triangles and diagonals

def _static_int(value, what):
  return operator.index(util.concrete_or_error(value, what))


def _tri_mask(n, m, k):
  """Boolean (n, m) mask of j <= i + k, from iotas (a constant under jit)."""
  rows = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 0)
  cols = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 1)
  return lax.ge(lax.add(rows, lax.convert_element_type(k, np.int32)), cols)


def tri(N, M=None, k=0, dtype=None):
  """Ones at and below the k-th diagonal.  As in JAX the default dtype is
  float32 even with x64 enabled."""
  dt = np.dtype(np.float32) if dtype is None else dtypes.canonicalize_user_dtype(dtype, "tri")
  n = _static_int(N, "'N' argument of jnp.tri()")
  m = n if M is None else _static_int(M, "'M' argument of jnp.tri()")
  k = _static_int(k, "'k' argument of jnp.tri()")
  if n < 0 or m < 0:   # a TypeError, as JAX's (from its iota)
    raise TypeError(f"iota shape must have every element be nonnegative, got {(n, m)}.")
  return lax.convert_element_type(_tri_mask(n, m, k), dt, False)


def _triangle(name, m, k, lower):
  util.check_arraylike(name, m)
  if util.ndim(m) < 2:
    raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
  return _masked_triangle(m, _static_int(k, f"'k' argument of jnp.{name}()"), lower)


@functools.partial(jit, static_argnames=("k", "lower"))
def _masked_triangle(m, k, lower):
  shape = util.shape(m)
  mask = _tri_mask(shape[-2], shape[-1], k if lower else k - 1)
  mask = lax.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))
  zeros_ = zeros_like(m)
  return lax.select(mask, m, zeros_) if lower else lax.select(mask, zeros_, m)


def tril(m, k=0):
  """``m`` with the elements above the k-th diagonal zeroed (last two axes)."""
  return _triangle("tril", m, k, True)


def triu(m, k=0):
  """``m`` with the elements below the k-th diagonal zeroed (last two axes)."""
  return _triangle("triu", m, k, False)


def diagonal(a, offset=0, axis1=0, axis2=1):
  """The ``offset`` diagonal of ``a`` over ``axis1`` and ``axis2``, which
  become the last axis.  Read with one strided slice, no gather."""
  util.check_arraylike("diagonal", a)
  if util.ndim(a) < 2:
    raise ValueError("diagonal requires an array of at least two dimensions.")
  offset = _static_int(offset, "'offset' argument of jnp.diagonal()")
  nd = util.ndim(a)
  axis1, axis2 = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
  if axis1 == axis2:   # a TypeError, as JAX's (from its transpose)
    raise TypeError(f"diagonal requires two different axes, got axis1={axis1} and "
                    f"axis2={axis2}")
  return _diagonal(a, offset, axis1, axis2)


@functools.partial(jit, static_argnames=("offset", "axis1", "axis2"))
def _diagonal(a, offset, axis1, axis2):
  shape = util.shape(a)
  n, m = shape[axis1], shape[axis2]
  kept = [d for d in range(len(shape)) if d not in (axis1, axis2)]
  a = lax.transpose(a, (*kept, axis1, axis2))
  batch = tuple(shape[d] for d in kept)
  size = max(0, min(n + min(offset, 0), m - max(offset, 0)))
  flat = lax.reshape(a, batch + (n * m,))
  # Element (i, i + offset) sits at i * (m + 1) + offset in the flat matrix.
  start = 0 if size == 0 else (offset if offset >= 0 else -offset * m)
  limit = start + (size - 1) * (m + 1) + 1 if size else 0
  nb = len(batch)
  return lax.slice(flat, (0,) * nb + (start,), batch + (limit,), (1,) * nb + (m + 1,))


def diag(v, k=0):
  """The k-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on
  its k-th diagonal."""
  util.check_arraylike("diag", v)
  return _diag(v, operator.index(k))


@functools.partial(jit, static_argnames=("k",))
def _diag(v, k):
  shape = util.shape(v)
  if len(shape) == 2:
    return diagonal(v, offset=k)
  if len(shape) != 1:
    raise ValueError("diag input must be 1d or 2d")
  n = shape[0] + abs(k)
  zero = lax.convert_element_type(0, util.aval_of(v).dtype, False)
  v = lax.pad(v, zero, ((max(0, -k), max(0, k), 0),))
  on_diagonal = lax.eq(lax.sub(lax.broadcasted_iota(np.dtype(np.int32), (n, n), 1),
                               lax.broadcasted_iota(np.dtype(np.int32), (n, n), 0)),
                       lax.convert_element_type(k, np.int32))
  rows = lax.broadcast_in_dim(v, (n, n), (0,))
  return lax.select(on_diagonal, rows, lax.broadcast_in_dim(zero, (n, n), ()))


def diagflat(v, k=0):
  """A 2-D array with the flattened ``v`` on its k-th diagonal."""
  util.check_arraylike("diagflat", v)
  v = util.asarray(v)
  flat = lax.reshape(v, (int(np.prod(util.shape(v), dtype=np.int64)),))
  return _diag(flat, operator.index(k))


def vander(x, N=None, increasing=False):
  """The Vandermonde matrix: columns are powers of ``x`` (decreasing unless
  ``increasing``)."""
  util.check_arraylike("vander", x)
  if util.ndim(x) != 1:
    raise ValueError("x must be a one-dimensional array")
  n = util.shape(x)[0] if N is None else _static_int(N, "'N' argument of jnp.vander()")
  if n < 0:
    raise ValueError("N must be nonnegative")
  return _vander(x, n, bool(increasing))


@functools.partial(jit, static_argnames=("n", "increasing"))
def _vander(x, n, increasing):
  dt = util.aval_of(x).dtype
  powers = lax.iota(dt, n)
  if not increasing:
    powers = lax.sub(lax.convert_element_type(n - 1, dt, False), powers)
  return ufuncs.power(lax.broadcast_in_dim(x, util.shape(x) + (1,), (0,)),
                      lax.broadcast_in_dim(powers, (1, n), (1,)))


# ---------------------------------------------------------------------------
# From functions and comparisons

def fromfunction(function, shape, *, dtype=float, **kwargs):
  """``function`` called (under vmap) on the coordinate arrays of ``shape``."""
  shape = util.canonicalize_shape(shape)
  for i in range(len(shape)):
    in_axes = tuple(0 if j == i else None for j in range(len(shape)))
    function = vmap(function, in_axes=in_axes[::-1])
  return function(*(arange(s, dtype=dtype) for s in shape), **kwargs)


def array_equiv(a1, a2):
  """Whether ``a1`` and ``a2`` broadcast together and are equal everywhere.
  Shapes that do not broadcast give False, as in NumPy (JAX raises a
  TypeError when the ranks are equal)."""
  a1, a2 = asarray(a1), asarray(a2)
  try:
    util.broadcast_shapes(util.shape(a1), util.shape(a2))
  except ValueError:
    return array(False)
  eq = ufuncs.equal(a1, a2)
  return lax.reduce_and(eq, tuple(range(util.ndim(eq))))


iterable = np.iterable
