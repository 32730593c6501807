"""Index helpers: grids (indices, mgrid, ogrid, ix_), index expressions
(s_, index_exp, r_, c_), the diagonal and triangle indices, and conversions
between flat and multi-dimensional indices.

Shapes and counts are static (Python ints), as in JAX; the index arrays
themselves are built with lax ops.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import creation
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util

s_ = np.s_
index_exp = np.index_exp


def _static_int(x, context):
  return operator.index(util.concrete_or_error(x, context))


def indices(dimensions, dtype=None, sparse=False):
  """A grid of the index along each axis of ``dimensions``: stacked (shape
  ``(len(dimensions),) + dimensions``) or, ``sparse``, a tuple of arrays
  that broadcast against each other."""
  dtype = dtypes.canonicalize_user_dtype(int if dtype is None else dtype, "indices")
  dims = tuple(_static_int(d, "dimensions argument of jnp.indices") for d in dimensions)
  out = []
  for i, n in enumerate(dims):
    shape = (1,) * i + (n,) + (1,) * (len(dims) - i - 1) if sparse else dims
    out.append(lax.broadcast_in_dim(lax.iota(dtype, n), shape, (i,)))
  if sparse:
    return tuple(out)
  return shape_ops.stack(out, 0) if out else creation.array([], dtype=dtype)


def ix_(*args):
  """Open-mesh index arrays from 1-D integer sequences: ``x[ix_(a, b)]`` is
  the sub-array of rows ``a`` and columns ``b``."""
  util.check_arraylike("ix", *args)
  args = [util.asarray(a) for a in args]
  out = []
  for i, a in enumerate(args):
    if util.ndim(a) != 1:
      raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                       f"{util.shape(a)}")
    if util.aval_of(a).dtype == np.bool_:
      raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    shape = [1] * len(args)
    shape[i] = util.shape(a)[0]
    if shape[i] == 0:
      out.append(lax.full(shape, 0, dtypes.canonicalize_dtype(np.intp)))
    else:
      out.append(lax.broadcast_in_dim(a, tuple(shape), (i,)))
  return tuple(out)


def _grid_1d(s, name):
  """The values a slice describes in mgrid/r_: arange, or linspace for a
  complex (imaginary) step giving the number of points."""
  start = util.concrete_or_error(s.start, f"slice start of jnp.{name}") or 0
  stop = util.concrete_or_error(s.stop, f"slice stop of jnp.{name}")
  step = util.concrete_or_error(s.step, f"slice step of jnp.{name}") or 1
  if np.iscomplex(step):
    return creation.linspace(start, stop, int(abs(step)))
  return creation.arange(start, stop, step)


def _grids(key, name, sparse):
  if isinstance(key, slice):
    return _grid_1d(key, name)
  lines = util.promote_dtypes(*[_grid_1d(k, name) for k in key])
  n = len(lines)
  sizes = tuple(util.shape(x)[0] for x in lines)
  out = []
  for i, x in enumerate(lines):
    shape = tuple(s if d == i else 1 for d, s in enumerate(sizes)) if sparse else sizes
    out.append(lax.broadcast_in_dim(x, shape, (i,)))
  if sparse:
    return out
  return shape_ops.stack(out, 0) if n else creation.arange(0)


class _Mgrid:
  """``mgrid[0:3, 0:4]``: a dense mesh grid (slices with an imaginary step
  ``5j`` give that many points, endpoints included)."""

  def __getitem__(self, key):
    return _grids(key, "mgrid", sparse=False)


class _Ogrid:
  """``ogrid[0:3, 0:4]``: an open mesh grid (a list of broadcastable arrays)."""

  def __getitem__(self, key):
    return _grids(key, "ogrid", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
  """``r_[...]``/``c_[...]``: concatenation by index syntax, with NumPy's
  string directives ('r', 'c', 'axis,ndmin,trans1d')."""
  axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"

  def __getitem__(self, key):
    items = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
    if items and isinstance(items[0], str):
      directive, items = items[0], items[1:]
      if directive == "r":
        matrix = 0
      elif directive == "c":
        matrix = 1
      else:
        parts = directive.split(",")
        defaults = [axis, ndmin, trans1d, matrix]
        parts = parts + defaults[len(parts):] if len(parts) < 4 else parts[:3] + [matrix]
        try:
          axis, ndmin, trans1d, matrix = map(int, parts)
        except ValueError as err:
          raise ValueError(f"could not understand directive {directive!r}") from err
    pieces = []
    for item in items:
      if isinstance(item, slice):
        piece, item_ndim = _grid_1d(item, self.op_name), 0
      elif isinstance(item, str):
        raise ValueError("string directive must be placed at the beginning")
      else:
        piece = creation.array(item, copy=False)
        item_ndim = util.ndim(piece)
      piece = creation.array(piece, copy=False, ndmin=ndmin)
      if trans1d != -1 and ndmin - item_ndim > 0:
        order = tuple(range(ndmin))
        shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
        piece = shape_ops.transpose(piece, order[shift:] + order[:shift])
      pieces.append(piece)
    out = shape_ops.concatenate(tuple(pieces), axis=axis)
    if matrix != -1 and util.ndim(out) == 1:
      out = shape_ops.expand_dims(out, matrix)
    return out

  def __len__(self):
    return 0


class RClass(_AxisConcat):
  """``r_``: concatenate along the first axis."""
  axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
  """``c_``: stack 1-D pieces as columns (concatenate along the last axis)."""
  axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


r_ = RClass()
c_ = CClass()


# ---------------------------------------------------------------------------
# Diagonals and triangles

def diag_indices(n, ndim=2):
  """The indices of the main diagonal of an ``(n,) * ndim`` array."""
  n = _static_int(n, "'n' argument of jnp.diag_indices()")
  ndim = _static_int(ndim, "'ndim' argument of jnp.diag_indices()")
  if n < 0:
    raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
  if ndim < 0:
    raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
  dtype = dtypes.default_int_dtype() if n < 2 ** 31 else dtypes.canonicalize_dtype(np.int64)
  return (lax.iota(dtype, n),) * ndim


def diag_indices_from(arr):
  """diag_indices for the (square) shape of ``arr``."""
  util.check_arraylike("diag_indices_from", arr)
  shape = util.shape(arr)
  if len(shape) < 2:
    raise ValueError("input array must be at least 2-d")
  if len(set(shape)) != 1:
    raise ValueError("All dimensions of input must be of equal length")
  return diag_indices(shape[0], ndim=len(shape))


def _triangle(n, k, m, lower, name):
  n = _static_int(n, f"n argument of jnp.{name}")
  k = _static_int(k, f"k argument of jnp.{name}")
  m = n if m is None else _static_int(m, f"m argument of jnp.{name}")
  rows, cols = (np.tril_indices if lower else np.triu_indices)(n, k, m)
  dtype = dtypes.default_int_dtype()
  return creation.asarray(rows.astype(dtype)), creation.asarray(cols.astype(dtype))


def tril_indices(n, k=0, m=None):
  """Row and column indices of the lower triangle (diagonal ``k`` and below)
  of an ``(n, m)`` array, in row-major order."""
  return _triangle(n, k, m, True, "tril_indices")


def triu_indices(n, k=0, m=None):
  """Row and column indices of the upper triangle (diagonal ``k`` and above)."""
  return _triangle(n, k, m, False, "triu_indices")


def _shape_2d(arr):
  shape = arr.shape if hasattr(arr, "shape") else util.shape(util.asarray(arr))
  if len(shape) != 2:
    raise ValueError("Only 2-D inputs are accepted")
  return shape


def tril_indices_from(arr, k=0):
  """tril_indices for the shape of the 2-D ``arr``."""
  n, m = _shape_2d(arr)
  return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
  """triu_indices for the shape of the 2-D ``arr``."""
  n, m = _shape_2d(arr)
  return triu_indices(n, k=k, m=m)


def mask_indices(n, mask_func, k=0, *, size=None):
  """The indices where ``mask_func(ones((n, n)), k)`` is nonzero."""
  from purejax._src.numpy.take_put import nonzero
  i, j = nonzero(mask_func(creation.ones((n, n)), k), size=size)
  return i, j


# ---------------------------------------------------------------------------
# Flat <-> multi-dimensional indices

def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
  """Flat indices (``order`` 'C' or 'F') of the coordinates ``multi_index``
  in an array of shape ``dims``; ``mode`` 'raise' needs concrete indices."""
  if len(multi_index) != len(dims):
    raise AssertionError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
  dims = tuple(_static_int(d, "in `dims` argument of ravel_multi_index().") for d in dims)
  util.check_arraylike("ravel_multi_index", *multi_index)
  index = [util.asarray(i) for i in multi_index]
  if dtype is None:
    dtype = dtypes.result_type(int, *index)
  else:
    dtype = dtypes.canonicalize_user_dtype(dtype, "ravel_multi_index")
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype={dtype} is not an integer type.")
  if int(np.prod(dims)) - 1 > dtypes.iinfo(dtype).max:
    raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                     f"flattened index for dims={dims}. Use the dtype argument to pass a "
                     "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
  for i in index:
    if mode == "raise":
      util.concrete_or_error(i, "The error occurred because ravel_multi_index was "
                             "jit-compiled with mode='raise'. Use mode='wrap' or "
                             "mode='clip' instead.")
    if not dtypes.issubdtype(util.aval_of(i).dtype, np.integer):
      raise TypeError("only int indices permitted")
  if mode == "raise":
    if any(np.any((np.asarray(util.concrete_or_error(i, "")) < 0)
                  | (np.asarray(util.concrete_or_error(i, "")) >= d))
           for i, d in zip(index, dims)):
      raise ValueError("invalid entry in coordinates array")
  elif mode == "clip":
    index = [ufuncs.clip(i, 0, d - 1) for i, d in zip(index, dims)]
  elif mode == "wrap":
    index = [ufuncs.mod(i, d) for i, d in zip(index, dims)]
  elif mode != "ignore":
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
  if order == "F":
    strides = np.cumprod((1,) + dims[:-1])
  elif order == "C":
    strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
  else:
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
  result = creation.array(0, dtype=dtype)
  for i, s in zip(index, strides):
    result = ufuncs.add(result, ufuncs.multiply(creation.astype(i, dtype), int(s)))
  return result


def unravel_index(indices, shape):
  """The coordinates of flat ``indices`` in an array of ``shape``;
  out-of-bounds indices clamp to the first or last element (as in JAX)."""
  util.check_arraylike("unravel_index", indices)
  flat = util.asarray(indices)
  try:
    shape = list(shape)
  except TypeError:
    shape = [shape]
  if any(np.ndim(s) != 0 for s in shape):
    raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
  coords = [0] * len(shape)
  for i in reversed(range(len(shape))):
    flat, coords[i] = ufuncs.divmod(flat, shape[i])
  above = ufuncs.greater(flat, 0)
  if dtypes.issubdtype(util.aval_of(flat).dtype, np.unsignedinteger):
    below = creation.asarray(False)
  else:
    below = ufuncs.less(flat, -1)
  return tuple(ufuncs.where(above, s - 1, ufuncs.where(below, 0, c))
               for s, c in zip(shape, coords))


__all__ = ["c_", "diag_indices", "diag_indices_from", "index_exp", "indices", "ix_",
           "mask_indices", "mgrid", "ogrid", "r_", "ravel_multi_index", "s_", "tril_indices",
           "tril_indices_from", "triu_indices", "triu_indices_from", "unravel_index"]
