"""Shape manipulation: reshape, ravel, transpose, swapaxes, moveaxis, rollaxis,
squeeze, expand_dims, broadcast_to, concatenate, stack, hstack/vstack/dstack,
block, split (and its variants), unstack, atleast_1d/2d/3d, flip,
shape/ndim/size."""
import functools
import operator
import warnings

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, check_no_out


def _foreign(a, name, numpy_fn, *args):
  """Another library's array (a scipy.sparse matrix): NumPy's answer, with
  the warning JAX gives (for ``size``; ``shape`` and ``ndim`` give NumPy's
  without one, as JAX's do)."""
  warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at position 0. "
                "In a future JAX release this will be an error.", DeprecationWarning,
                stacklevel=3)
  return numpy_fn(a, *args)


def _aval_shape(a):
  """The shape of an array-like, or None for another library's array."""
  if isinstance(a, (list, tuple)):
    return np.shape(a)
  try:
    return util.aval_of(a).shape
  except TypeError:
    if not hasattr(a, "shape"):
      raise
    return None


def shape(a):
  """The shape of an array (or of anything NumPy can make an array of)."""
  s = _aval_shape(a)
  return np.shape(a) if s is None else s


def ndim(a):
  s = _aval_shape(a)
  return np.ndim(a) if s is None else len(s)


def size(a, axis=None):
  s = _aval_shape(a)
  if s is None:
    return _foreign(a, "size", np.size, axis)
  if axis is None:
    return int(np.prod(s, dtype=np.int64))
  return s[util.canonicalize_axis(axis, len(s))]


# ---------------------------------------------------------------------------
# Reshaping

def _reshape_target(old_shape, new_shape):
  """new_shape with its one -1 resolved, checked against old_shape's size."""
  total = int(np.prod(old_shape, dtype=np.int64))
  unknown = [i for i, d in enumerate(new_shape) if d == -1]
  shown = new_shape if len(new_shape) != 1 else new_shape[0]
  if len(unknown) > 1:
    raise TypeError(f"can only specify one unknown axis size with a `-1` value, got "
                    f"{new_shape}")
  if any(d < -1 for d in new_shape):
    raise TypeError(f"reshape new_sizes must all be positive, got {new_shape}.")
  known = int(np.prod([d for d in new_shape if d != -1], dtype=np.int64))
  if unknown:
    if known == 0 or total % known:
      raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {total}) "
                      f"into shape {shown} because the product of specified axis sizes "
                      f"({known}) does not evenly divide {total}")
    new_shape = list(new_shape)
    new_shape[unknown[0]] = total // known
    return tuple(new_shape)
  if known != total:
    raise TypeError(f"cannot reshape array of shape {tuple(old_shape)} (size {total}) "
                    f"into shape {shown} (size {known})")
  return tuple(new_shape)


def reshape(a, shape=None, order="C", *, copy=None, out_sharding=None):
  """``a`` with a new shape (one entry may be -1); order 'C' or 'F'."""
  check_arraylike("reshape", a)
  if shape is None:
    raise TypeError("reshape() missing required argument 'shape'")
  if not isinstance(shape, (tuple, list)) and not (
      isinstance(shape, (core.ArrayBase, np.ndarray)) and np.ndim(shape) == 1
      and not isinstance(shape, core.Tracer)):
    shape = [shape]   # JAX shows a single size as a one-element list in errors
  new_shape = util.canonicalize_shape(shape)
  a = util.asarray(a)
  old_shape = util.shape(a)
  new_shape = _reshape_target(old_shape, new_shape)
  if order == "C":
    if new_shape == old_shape and out_sharding is None:
      return a
    return lax.reshape(a, new_shape, out_sharding=out_sharding)
  if out_sharding is not None:
    raise NotImplementedError("purejax: reshape with out_sharding needs order='C'")
  if order == "F":
    dims = tuple(range(len(old_shape)))[::-1]
    out = lax.reshape(a, new_shape[::-1], dims)
    return lax.transpose(out, tuple(range(len(new_shape)))[::-1]) if len(new_shape) > 1 else out
  if order == "A":
    raise NotImplementedError("np.reshape order=A is not implemented.")
  raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C", *, out_sharding=None):
  """``a`` flattened to one dimension."""
  check_arraylike("ravel", a)
  n = size(a)
  if order == "K":
    order = "C"
  return reshape(a, (n,), order=order)


def transpose(a, axes=None):
  """``a`` with its axes permuted (reversed if ``axes`` is None)."""
  check_arraylike("transpose", a)
  a = util.asarray(a)
  nd = util.ndim(a)
  perm = tuple(range(nd))[::-1] if axes is None else tuple(
      util.canonicalize_axis(ax, nd) for ax in axes)
  if perm == tuple(range(nd)) and axes is None:
    return a
  return lax.transpose(a, perm)


def permute_dims(a, /, axes):
  return transpose(a, axes)


def matrix_transpose(x, /):
  """Swaps the last two axes."""
  check_arraylike("matrix_transpose", x)
  nd = util.ndim(x)
  if nd < 2:
    raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}")
  perm = tuple(range(nd - 2)) + (nd - 1, nd - 2)
  return lax.transpose(util.asarray(x), perm)


def swapaxes(a, axis1, axis2):
  """``a`` with two axes exchanged."""
  check_arraylike("swapaxes", a)
  a = util.asarray(a)
  nd = util.ndim(a)
  perm = list(range(nd))
  try:
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
  except IndexError:
    bad = axis1 if not -nd <= axis1 < nd else axis2
    raise IndexError(f"index {bad} is out of bounds for axis 0 with size {nd}") from None
  return lax.transpose(a, tuple(perm))


def moveaxis(a, source, destination):
  """``a`` with axes moved from ``source`` to ``destination``."""
  check_arraylike("moveaxis", a)
  a = util.asarray(a)
  nd = util.ndim(a)
  source = _axes_list(source, nd)
  destination = _axes_list(destination, nd)
  if len(source) != len(destination):
    raise ValueError("Inconsistent number of elements: {} vs {}"
                     .format(len(source), len(destination)))
  perm = [i for i in range(nd) if i not in source]
  for dest, src in sorted(zip(destination, source)):
    perm.insert(dest, src)
  perm = tuple(perm)
  return a if perm == tuple(range(nd)) else lax.transpose(a, perm)


def rollaxis(a, axis, start=0):
  """``a`` with ``axis`` moved to before position ``start`` (NumPy's older
  spelling of ``moveaxis``)."""
  check_arraylike("rollaxis", a)
  start = operator.index(util.concrete_or_error(start, "'start' argument of jnp.rollaxis()"))
  nd = util.ndim(a)
  axis = util.canonicalize_axis(axis, nd)
  if not -nd <= start <= nd:
    raise ValueError(f"{start=} must satisfy {-nd}<=start<={nd}")
  if start < 0:
    start += nd
  if start > axis:
    start -= 1
  return moveaxis(a, axis, start)


def _axes_list(axes, nd):
  axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
  return [util.canonicalize_axis(ax, nd) for ax in axes]


def squeeze(a, axis=None):
  """``a`` without size-1 axes (all of them, or those in ``axis``)."""
  check_arraylike("squeeze", a)
  a = util.asarray(a)
  s = util.shape(a)
  if axis is None:
    axes = tuple(i for i, d in enumerate(s) if d == 1)
  else:
    axes = util.canonicalize_axes(axis, len(s))
    if any(s[i] != 1 for i in axes):
      raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                       f"one, got shape={s} and dimensions={axes}")
  return lax.squeeze(a, tuple(sorted(axes))) if axes else a


def expand_dims(a, axis):
  """``a`` with size-1 axes inserted at ``axis`` (positions in the result)."""
  check_arraylike("expand_dims", a)
  a = util.asarray(a)
  axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
  rank = util.ndim(a) + len(axis)
  axes = util.canonicalize_axes(axis, rank)
  return util.expand_dims_at(a, axes)


def broadcast_to(array, shape, *, out_sharding=None):
  """``array`` broadcast to ``shape`` (NumPy rules)."""
  check_arraylike("broadcast_to", array)
  return util.broadcast_to(array, util.canonicalize_shape(shape))


def broadcast_arrays(*args):
  check_arraylike("broadcast_arrays", *args)
  return util.broadcast_arrays(*args)


def broadcast_shapes(*shapes):
  return util.broadcast_shapes(*(util.canonicalize_shape(s) for s in shapes))


# ---------------------------------------------------------------------------
# Joining

def _as_sequence(name, arrays):
  if isinstance(arrays, core.ArrayBase) or isinstance(arrays, np.ndarray):
    return [arrays[i] for i in range(util.shape(arrays)[0])]
  if not isinstance(arrays, (list, tuple)):
    raise TypeError(f"{name} requires a sequence of arrays, got {type(arrays)}")
  return list(arrays)


def concatenate(arrays, axis=0, dtype=None):
  """Joins arrays along an existing axis (``axis=None`` flattens them first)."""
  arrays = _as_sequence("concatenate", arrays)
  if not arrays:
    raise ValueError("Need at least one array to concatenate.")
  check_arraylike("concatenate", *arrays)
  requested = dtypes.canonicalize_user_dtype(dtype, "concatenate")
  if axis is None:
    return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
  if util.ndim(arrays[0]) == 0:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  axis = util.canonicalize_axis(axis, util.ndim(arrays[0]))
  if requested is None:
    arrays = util.promote_dtypes(*arrays)
  else:
    arrays = [lax.convert_element_type(a, requested, False) for a in arrays]
  if len(arrays) == 1:
    return util.asarray(arrays[0])
  shapes = [util.shape(a) for a in arrays]
  if len({len(s) for s in shapes}) > 1:
    raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                    f"{', '.join(map(str, shapes))}.")
  return lax.concatenate(arrays, axis)


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
  """Joins arrays along a new axis (JAX's ``stack`` primitive; an array
  argument is stacked along its first axis with a reshape)."""
  check_no_out("stack", out)
  if isinstance(arrays, (core.ArrayBase, np.ndarray)):
    return _stack_array(arrays, axis, dtype)
  arrays = _as_sequence("stack", arrays)
  if not arrays:
    raise ValueError("Need at least one array to stack.")
  check_arraylike("stack", *arrays)
  requested = dtypes.canonicalize_user_dtype(dtype, "stack")
  if requested is None:
    arrays = util.promote_dtypes(*arrays)
  else:
    arrays = [lax.convert_element_type(a, requested, False) for a in arrays]
  return lax.stack(arrays, axis=axis)


def _stack_array(arr, axis, dtype):
  """``stack`` of the slices of one array: move axis 0 into place with a
  reshape (no per-slice equations), as JAX does."""
  if util.ndim(arr) == 0:
    raise TypeError("len() of unsized object")
  if util.shape(arr)[0] == 0:
    raise ValueError("Need at least one array to stack.")
  requested = dtypes.canonicalize_user_dtype(dtype, "stack")
  arr = util.asarray(arr) if requested is None else lax.convert_element_type(arr, requested, False)
  axis = util.canonicalize_axis(axis, util.ndim(arr))
  arr = lax.expand_dims(arr, (axis + 1,))
  shp = util.shape(arr)
  new_shape = shp[1:axis + 1] + (shp[0] * shp[axis + 1],) + shp[axis + 2:]
  dims = (*range(1, axis + 1), 0, *range(axis + 1, len(shp)))
  return lax.reshape(arr, new_shape, dims)


@jit
def atleast_1d(*arys):
  """Each argument with at least one dimension."""
  check_arraylike("atleast_1d", *arys)
  out = [_at_least(a, 1) for a in arys]
  return out[0] if len(out) == 1 else out


def _at_least(a, rank):
  a = util.asarray(a)
  nd = util.ndim(a)
  if nd >= rank:
    return a
  if rank == 3:   # NumPy's rule: (n,) -> (1, n, 1); (m, n) -> (m, n, 1)
    new_shape = {0: (1, 1, 1), 1: (1,) + util.shape(a) + (1,), 2: util.shape(a) + (1,)}[nd]
    dims = {0: (), 1: (1,), 2: (0, 1)}[nd]
    return lax.broadcast_in_dim(a, new_shape, dims)
  return util.expand_to_rank(a, rank)


@jit
def atleast_2d(*arys):
  check_arraylike("atleast_2d", *arys)
  out = [_at_least(a, 2) for a in arys]
  return out[0] if len(out) == 1 else out


@jit
def atleast_3d(*arys):
  check_arraylike("atleast_3d", *arys)
  out = [_at_least(a, 3) for a in arys]
  return out[0] if len(out) == 1 else out


def hstack(tup, dtype=None):
  """Stacks along axis 1 (axis 0 for 1-D inputs)."""
  arrays = [atleast_1d(a) for a in _as_sequence("hstack", tup)]
  axis = 0 if arrays and util.ndim(arrays[0]) == 1 else 1
  return concatenate(arrays, axis=axis, dtype=dtype)


def vstack(tup, dtype=None):
  """Stacks along axis 0, after making inputs at least 2-D."""
  arrays = [atleast_2d(a) for a in _as_sequence("vstack", tup)]
  return concatenate(arrays, axis=0, dtype=dtype)


row_stack = vstack


def dstack(tup, dtype=None):
  """Stacks along axis 2, after making inputs at least 3-D."""
  arrays = [atleast_3d(a) for a in _as_sequence("dstack", tup)]
  return concatenate(arrays, axis=2, dtype=dtype)


def column_stack(tup):
  """1-D inputs become columns; others stack along axis 1."""
  arrays = []
  for a in _as_sequence("column_stack", tup):
    if util.ndim(a) < 2:
      a = lax.transpose(atleast_2d(a), (1, 0))
    arrays.append(a)
  return concatenate(arrays, axis=1)


@functools.partial(jit, static_argnames=("axis",))
def _flip(m, axis):
  nd = util.ndim(m)
  axes = tuple(range(nd)) if axis is None else util.canonicalize_axes(axis, nd)
  return lax.rev(m, axes) if axes else m


def flip(m, axis=None):
  """``m`` with the order of elements reversed along ``axis``."""
  check_arraylike("flip", m)
  return _flip(m, tuple(axis) if isinstance(axis, list) else axis)


def fliplr(m):
  return flip(m, 1)


def flipud(m):
  return flip(m, 0)


# ---------------------------------------------------------------------------
# Splitting

def _split_sizes(op, size, indices_or_sections):
  """The part sizes for ``split``-style arguments (indices or a count)."""
  if isinstance(indices_or_sections, (tuple, list)) or (
      isinstance(indices_or_sections, (np.ndarray, core.ArrayBase))
      and np.ndim(indices_or_sections) > 0):
    bounds = [0] + [operator.index(util.concrete_or_error(i, f"in jax.numpy.{op} argument 1"))
                    for i in indices_or_sections] + [size]
    return [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:])]
  count = int(util.concrete_or_error(indices_or_sections, f"in jax.numpy.{op} argument 1"))
  part, rest = divmod(size, count)
  if rest == 0:
    return [part] * count
  if op == "array_split":
    return [part + 1] * rest + [part] * (count - rest)
  raise ValueError(f"array split does not result in an equal division: rest is {rest}")


def _split(op, ary, indices_or_sections, axis):
  check_arraylike(op, ary)
  ary = util.asarray(ary)
  axis = operator.index(util.concrete_or_error(axis, f"in jax.numpy.{op} argument `axis`"))
  sizes = _split_sizes(op, util.shape(ary)[axis], indices_or_sections)
  # JAX's split params hold NumPy int64 sizes (they print as np.int64(n)).
  return list(lax.split(ary, [np.int64(s) for s in sizes], axis=axis))


def split(ary, indices_or_sections, axis=0):
  """``ary`` cut along ``axis`` into equal parts or at the given indices
  (which must be static)."""
  return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
  """Like ``split``, but a count need not divide the axis evenly."""
  return _split("array_split", ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
  """``split`` along axis 1 (axis 0 for 1-D arrays)."""
  check_arraylike("hsplit", ary)
  return _split("hsplit", ary, indices_or_sections, 0 if util.ndim(ary) == 1 else 1)


def vsplit(ary, indices_or_sections):
  """``split`` along axis 0."""
  return _split("vsplit", ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
  """``split`` along axis 2."""
  return _split("dsplit", ary, indices_or_sections, 2)


def unstack(x, /, *, axis=0):
  """The slices of ``x`` along ``axis``, as a tuple (one ``unstack`` equation)."""
  check_arraylike("unstack", x)
  return lax.unstack(util.asarray(x), axis=axis)


# ---------------------------------------------------------------------------
# Blocks

def _block(xs):
  """(joined array, nesting depth) of a nested list of arrays."""
  if isinstance(xs, tuple):
    raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
  if isinstance(xs, list):
    if not xs:
      raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts, depths = zip(*(_block(x) for x in xs))
    if any(d != depths[0] for d in depths[1:]):
      raise ValueError("Mismatched list depths in jax.numpy.block")
    rank = max(depths[0], max(util.ndim(p) for p in parts))
    parts = [util.expand_to_rank(p, rank) for p in parts]
    return concatenate(parts, axis=-depths[0]), depths[0] + 1
  return util.asarray(xs), 1


@jit
def _block_jit(arrays):
  return _block(arrays)[0]


def block(arrays):
  """An array assembled from nested lists of blocks: the innermost lists
  join along the last axis, the next ones along the one before, ..."""
  return _block_jit(arrays)
