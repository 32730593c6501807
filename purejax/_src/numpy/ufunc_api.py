"""``jnp.ufunc``, NumPy's ufunc object (``reduce``, ``accumulate``, ``outer``,
``at``, ``reduceat``), ``frompyfunc``, and the ufunc objects jax.numpy
exports (``jnp.add``, ``jnp.multiply``, ... with dedicated reductions)."""
import functools

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.ufuncs_extra import (
    _const, _dtype, _is_complex, _logaddexp, _logaddexp2_call, _strong)
from purejax._src.numpy.util import check_arraylike, check_no_out

# ---------------------------------------------------------------------------
# jnp.ufunc: NumPy's ufunc object

_AT_INPLACE_MESSAGE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like "
    "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.\n"
    ">>> arr = jnp.add.at(arr, ind, val, inplace=False)\n")


def _ravel(x):
  return lax.reshape(x, (int(np.prod(util.shape(x))),))


def _result_dtype(func, *args):
  """The dtype ``func`` gives for scalars of the arguments' dtypes."""
  from purejax._src.api import eval_shape
  ones = [lax.full((), 1, _dtype(util.asarray(a))) for a in args]
  return np.dtype(eval_shape(func, *ones).dtype)


class ufunc:
  """A NumPy-style universal function: call it elementwise (with
  broadcasting), or use ``reduce``, ``accumulate``, ``outer``, ``at`` and
  ``reduceat``.  Methods without a dedicated implementation loop over the
  axis with ``fori_loop``/``scan``, as JAX's do."""

  def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None,
               reduce=None, accumulate=None, at=None, reduceat=None):
    self.__doc__ = func.__doc__
    self.__name__ = name or func.__name__
    self._func = func
    self.nin, self.nout = int(nin), int(nout)
    self.nargs = int(nargs or nin)
    self.identity = identity
    self._impls = dict(call=call, reduce=reduce, accumulate=accumulate, at=at,
                       reduceat=reduceat)

  def _key(self):
    return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

  def __hash__(self):
    return hash(self._key())

  def __eq__(self, other):
    return isinstance(other, ufunc) and self._key() == other._key()

  def __repr__(self):
    return f"<jnp.ufunc '{self.__name__}'>"

  def __call__(self, *args, out=None, where=None):
    check_arraylike(self.__name__, *args)
    if out is not None:
      raise NotImplementedError(f"out argument of {self}")
    if where is not None:
      raise NotImplementedError(f"where argument of {self}")
    return (self._impls["call"] or self._call_vectorized)(*args)

  def _call_vectorized(self, *args):
    # Elementwise: vmap over the flattened broadcast operands.
    from purejax._src.vmap import vmap
    args = util.broadcast_arrays(*args)
    shape = util.shape(args[0]) if args else ()
    flat = vmap(self._func)(*[_ravel(a) for a in args])
    from purejax._src import tree_util
    return tree_util.tree_map(lambda y: lax.reshape(y, shape + util.shape(y)[1:]), flat)

  def _binary_only(self, method):
    if self.nin != 2:
      raise ValueError(f"{method} only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError(f"{method} only supported for functions returning a single value")

  def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Reduces ``a`` over ``axis`` by repeatedly applying this binary ufunc."""
    check_arraylike(f"{self.__name__}.reduce", a)
    self._binary_only("reduce")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
    if initial is not None:
      check_arraylike(f"{self.__name__}.reduce", initial)
    if where is not None:
      check_arraylike(f"{self.__name__}.reduce", where)
      if self.identity is None and initial is None:
        raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                         "so to use a where mask one has to specify 'initial'.")
      if _dtype(where) != np.bool_:
        raise ValueError(f"where argument must have dtype=bool; got dtype={_dtype(where)}")
    impl = self._impls["reduce"] or self._reduce_via_loop
    return impl(a, axis=reductions._static_axis(axis), dtype=dtype, keepdims=keepdims,
                initial=initial, where=where)

  def _reduce_via_loop(self, a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    a = util.asarray(a)
    dtype = dtypes.canonicalize_user_dtype(dtype, f"{self.__name__}.reduce")
    dtype = _result_dtype(self._func, a, a) if dtype is None else dtype
    if isinstance(axis, tuple):
      raise NotImplementedError(f"{self.__name__}.reduce over a tuple of axes")
    if where is not None:
      where = util.broadcast_to(where, util.shape(a))
    if axis is None:
      final_shape = (1,) * util.ndim(a) if keepdims else ()
      a, where = _ravel(a), None if where is None else _ravel(where)
      axis = 0
    else:
      axis = util.canonicalize_axis(axis, util.ndim(a))
      shape = list(util.shape(a))
      final_shape = tuple(shape[:axis] + ([1] if keepdims else []) + shape[axis + 1:])
      from purejax._src.numpy.shape_ops import moveaxis
      a = moveaxis(a, axis, 0)
      where = None if where is None else moveaxis(where, axis, 0)
    n = util.shape(a)[0]
    start = self.identity if initial is None else initial
    if n == 0:
      if start is None:
        raise ValueError(f"zero-size array to reduction operation {self.__name__} which has "
                         "no identity")
      return lax.full(final_shape, start, dtype)
    row = lambda i: lax.convert_element_type(lax.dynamic_index_in_dim(a, i, 0, False), dtype,
                                             False)

    def body(i, acc):
      new = self(acc, row(i))
      return new if where is None else ufuncs.where(
          lax.dynamic_index_in_dim(where, i, 0, False), new, acc)

    if start is None:
      first, acc = 1, row(0)
    else:
      first = 0
      acc = util.broadcast_to(lax.convert_element_type(start, dtype, False), util.shape(a)[1:])
    result = lax.fori_loop(first, n, body, acc)
    return lax.reshape(result, final_shape) if keepdims else result

  def accumulate(self, a, axis=0, dtype=None, out=None):
    """Running reduction of ``a`` along ``axis`` (``cumsum`` for add)."""
    self._binary_only("accumulate")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
    check_arraylike(f"{self.__name__}.accumulate", a)
    impl = self._impls["accumulate"] or self._accumulate_via_scan
    return impl(a, axis=axis, dtype=dtype)

  def _accumulate_via_scan(self, a, axis=0, dtype=None):
    a = util.asarray(a)
    dtype = dtypes.canonicalize_user_dtype(dtype, f"{self.__name__}.accumulate")
    dtype = _result_dtype(self._func, a, a) if dtype is None else dtype
    if axis is None or isinstance(axis, tuple):
      raise ValueError("accumulate does not allow multiple axes")
    axis = util.canonicalize_axis(axis, util.ndim(a))
    if 0 in util.shape(a):
      return lax.full(util.shape(a), 0, dtype)
    from purejax._src.numpy.shape_ops import moveaxis
    rows = lax.convert_element_type(moveaxis(a, axis, 0), dtype, False)
    first = lax.index_in_dim(rows, 0, 0, keepdims=False)
    step = lambda acc, x: (lambda y: (y, y))(lax.convert_element_type(self(acc, x), dtype,
                                                                      False))
    _, rest = lax.scan(step, first, lax.slice_in_dim(rows, 1, None, 1, 0))
    return moveaxis(lax.concatenate([util.expand_dims_at(first, (0,)), rest], 0), 0, axis)

  def outer(self, A, B, /):
    """``self(a, b)`` for every pair of elements: shape A.shape + B.shape."""
    self._binary_only("outer")
    check_arraylike(f"{self.__name__}.outer", A, B)
    from purejax._src.vmap import vmap
    A, B = util.asarray(A), util.asarray(B)
    result = vmap(vmap(self, (None, 0)), (0, None))(_ravel(A), _ravel(B))
    return lax.reshape(result, util.shape(A) + util.shape(B))

  def at(self, a, indices, b=None, /, *, inplace=True):
    """``a`` with this ufunc applied at ``indices`` (repeated indices apply
    repeatedly).  ``inplace=False`` is required: arrays are immutable."""
    if inplace:
      raise NotImplementedError(_AT_INPLACE_MESSAGE)
    impl = self._impls["at"] or self._at_via_scan
    return impl(a, indices) if b is None else impl(a, indices, b)

  def _at_via_scan(self, a, indices, *args):
    check_arraylike(f"{self.__name__}.at", a, *args)
    dtype = _result_dtype(self._func, a, *args)
    a = lax.convert_element_type(util.asarray(a), dtype, False)
    args = [lax.convert_element_type(util.asarray(x), dtype, False) for x in args]
    indices = indices if isinstance(indices, tuple) else (indices,)
    arrays = [i for i in indices if not isinstance(i, slice) and i is not None
              and i is not Ellipsis]
    shape = util.broadcast_shapes(*[util.shape(util.asarray(i)) for i in arrays]) if arrays else ()
    if not shape:
      return a.at[indices].set(self(a.at[indices].get(), *args))
    count = int(np.prod(shape))
    flat = [i if isinstance(i, slice) or i is None or i is Ellipsis
            else _ravel(util.broadcast_to(i, shape)) for i in indices]
    if args:
      value = args[0]
      value = util.broadcast_to(value, shape + util.shape(value)[len(shape):])
      args = [lax.reshape(value, (count,) + util.shape(value)[len(shape):])]

    def step(acc, k):
      idx = tuple(i if isinstance(i, slice) or i is None or i is Ellipsis else i[k]
                  for i in flat)
      return acc.at[idx].set(self(acc.at[idx].get(), *[x[k] for x in args])), None

    return lax.scan(step, a, lax.iota(np.int32, count))[0]

  def reduceat(self, a, indices, axis=0, dtype=None, out=None):
    """Reductions of ``a`` over the slices [indices[i], indices[i+1]) along
    ``axis`` (just a[indices[i]] where indices[i+1] <= indices[i])."""
    self._binary_only("reduceat")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
    impl = self._impls["reduceat"] or self._reduceat_via_loop
    return impl(a, indices, axis=axis, dtype=dtype)

  def _reduceat_via_loop(self, a, indices, axis=0, dtype=None):
    check_arraylike(f"{self.__name__}.reduceat", a, indices)
    a, indices = util.asarray(a), util.asarray(indices)
    if util.ndim(a) == 0:
      raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={util.shape(a)}")
    if util.ndim(indices) != 1:
      raise ValueError("reduceat: indices must be one-dimensional, got "
                       f"indices.shape={util.shape(indices)}")
    if axis is None or isinstance(axis, (tuple, list)):
      raise ValueError("reduceat requires a single integer axis.")
    axis = util.canonicalize_axis(axis, util.ndim(a))
    if dtype is not None:
      a = lax.convert_element_type(a, dtypes.canonicalize_user_dtype(dtype), False)
    from purejax._src.numpy.shape_ops import moveaxis
    rows = moveaxis(a, axis, 0)
    n = util.shape(rows)[0]
    out = rows[indices]
    ends = lax.concatenate([lax.slice_in_dim(indices, 1, None, 1, 0),
                            lax.full((1,), n, _dtype(indices))], 0)
    starts = lax.broadcast_in_dim(indices, util.shape(out), (0,))
    ends = lax.broadcast_in_dim(ends, util.shape(out), (0,))

    def body(i, acc):
      i = lax.convert_element_type(i, _dtype(indices), False)
      inside = lax.bitwise_and(lax.gt(i, starts), lax.lt(i, ends))
      row = lax.dynamic_index_in_dim(rows, i, 0, True)
      return ufuncs.where(inside, self(acc, row), acc)

    out = lax.fori_loop(0, n, body, out)
    return moveaxis(out, 0, axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
  """A ``jnp.ufunc`` from a function of scalars (built from jnp/lax ops)."""
  return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------
# The ufunc objects of jax.numpy, with their dedicated methods

def _monoid_reduction(name, lax_reduce, combine, identity, logical):
  """``ufunc.reduce`` for the bitwise (integers only) and logical ufuncs."""

  def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    check_arraylike(name, a)
    check_no_out(name, out)
    where = reductions.check_where(name, where)
    a = util.asarray(a)
    if logical:
      if _is_complex(a):
        a = lax.real(a)
      a = lax.convert_element_type(a, np.bool_, False)
    elif not (_dtype(a) == np.bool_ or dtypes.issubdtype(_dtype(a), np.integer)):
      raise ValueError(f"integer argument required; got dtype={_dtype(a)}")
    dtype = dtypes.canonicalize_user_dtype(dtype, name) or _dtype(a)
    a = lax.convert_element_type(a, dtype, False)
    axes = reductions._reduction_axes(util.ndim(a), axis)
    if where is not None:
      fill = _strong(np.array(identity).astype(dtype), dtype)
      a = ufuncs.where(where, a, fill)
    result = lax_reduce(a, axes)
    if initial is not None:
      result = combine(_strong(initial, dtype), result)
    return util.expand_dims_at(result, axes) if keepdims else result

  return reduce


def _logsumexp(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
               base2=False):
  """log(sum(exp(a))) over ``axis``, shifted by the maximum so nothing overflows."""
  name = "logaddexp2.reduce" if base2 else "logaddexp.reduce"
  check_arraylike(name, a)
  check_no_out(name, out)
  dtypes.canonicalize_user_dtype(dtype, name)   # checked, but unused (as in JAX)
  where = reductions.check_where(name, where)
  a, = util.promote_dtypes_inexact(a)
  if base2:
    a = ufuncs.multiply(a, float(np.log(2)))
    initial = None if initial is None else ufuncs.multiply(initial, float(np.log(2)))
  axes = reductions._reduction_axes(util.ndim(a), axis)
  amax = reductions.max(ufuncs.real(a), axis=axes, keepdims=True, where=where,
                        initial=-np.inf)
  amax = lax.stop_gradient(ufuncs.where(lax.is_finite(amax), amax, _const(amax, 0)))
  shifted = lax.exp(lax.sub(a, lax.convert_element_type(amax, _dtype(a), False)))
  total = reductions.sum(shifted, axis=axes, keepdims=keepdims, where=where)
  amax = amax if keepdims else lax.reshape(amax, util.shape(total))
  out = lax.add(lax.log(total), lax.convert_element_type(amax, _dtype(total), False))
  if initial is not None:
    out = logaddexp(initial, out)
  return ufuncs.true_divide(out, float(np.log(2))) if base2 else out


def _at_with(method, bool_as_int=False):
  def at(a, indices, b):
    a = util.asarray(a)
    if bool_as_int and _dtype(a) == np.bool_:
      b = lax.convert_element_type(lax.convert_element_type(b, np.bool_, False), np.int32, False)
      a = lax.convert_element_type(a, np.int32, False)
      return lax.convert_element_type(getattr(a.at[indices], method)(b), np.bool_, False)
    return getattr(a.at[indices], method)(b)
  return at


def _binary_ufunc(func, identity=None, **methods):
  return ufunc(func, 2, 1, name=func.__name__, identity=identity, call=func, **methods)


def _cumulative(fn_name):
  def accumulate(a, axis=0, dtype=None):
    from purejax._src.numpy import cumulative
    return getattr(cumulative, fn_name)(a, axis=axis, dtype=dtype)
  return accumulate


negative = ufunc(ufuncs.negative, 1, 1, name="negative", call=ufuncs.negative)
add = _binary_ufunc(ufuncs.add, 0, reduce=reductions.sum, accumulate=_cumulative("cumsum"),
                    at=_at_with("add", bool_as_int=True))
multiply = _binary_ufunc(ufuncs.multiply, 1, reduce=reductions.prod,
                         accumulate=_cumulative("cumprod"),
                         at=_at_with("multiply", bool_as_int=True))
subtract = _binary_ufunc(ufuncs.subtract, at=_at_with("subtract"))
def _extremum_reduction(reduction):
  def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if dtype is not None:
      a = lax.convert_element_type(a, dtypes.canonicalize_user_dtype(dtype), False)
    return reduction(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)
  return reduce


maximum = _binary_ufunc(ufuncs.maximum, reduce=_extremum_reduction(reductions.max))
minimum = _binary_ufunc(ufuncs.minimum, reduce=_extremum_reduction(reductions.min))
bitwise_and = _binary_ufunc(ufuncs.bitwise_and, -1, reduce=_monoid_reduction(
    "reduce_bitwise_and", lax.reduce_and, lax.bitwise_and, -1, logical=False))
bitwise_or = _binary_ufunc(ufuncs.bitwise_or, 0, reduce=_monoid_reduction(
    "reduce_bitwise_or", lax.reduce_or, lax.bitwise_or, 0, logical=False))
bitwise_xor = _binary_ufunc(ufuncs.bitwise_xor, 0, reduce=_monoid_reduction(
    "reduce_bitwise_xor", lax.reduce_xor, lax.bitwise_xor, 0, logical=False))
logical_and = _binary_ufunc(ufuncs.logical_and, True, reduce=_monoid_reduction(
    "reduce_logical_and", lax.reduce_and, lax.bitwise_and, True, logical=True))
logical_or = _binary_ufunc(ufuncs.logical_or, False, reduce=_monoid_reduction(
    "reduce_logical_or", lax.reduce_or, lax.bitwise_or, False, logical=True))
logical_xor = _binary_ufunc(ufuncs.logical_xor, False, reduce=_monoid_reduction(
    "reduce_logical_xor", lax.reduce_xor, lax.bitwise_xor, False, logical=True))
logaddexp = ufunc(_logaddexp, 2, 1, name="logaddexp", identity=-np.inf, call=_logaddexp,
                  reduce=_logsumexp)
logaddexp2 = ufunc(_logaddexp2_call, 2, 1, name="logaddexp2", identity=-np.inf,
                   call=_logaddexp2_call, reduce=functools.partial(_logsumexp, base2=True))
