"""Splitting, tiling and stacking primitives: split, tile, stack, unstack.

JAX stages these as primitives of their own (``jnp.split``, ``jnp.tile``,
``jnp.stack`` and ``jnp.unstack`` emit them), so a jaxpr prints one equation
where slices or concatenations would print many.  Each is linear: split and
concatenate transpose to each other, stack and unstack too, and tile to a
reshape and a sum.
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax import utils
from purejax._src.lax.families import check_same_dtypes, standard_primitive
from purejax._src.lax.reductions import reduce_sum_p
from purejax._src.lax.structural import concatenate_p, reshape_p


def _shift_past(axis, bdim):
  """Where per-example ``axis`` sits in a value batched at ``bdim``."""
  return axis + (axis >= bdim)


# -- split --------------------------------------------------------------------

def _split_abstract_eval(operand, *, sizes, axis):
  if any(s < 0 for s in sizes):
    raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
  if operand.shape[axis] != sum(int(s) for s in sizes):
    raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} "
                     f"of the operand shape {list(operand.shape)}")
  shape = list(operand.shape)
  outs = []
  for s in sizes:
    shape[axis] = int(s)
    outs.append(operand.update(shape=tuple(shape)))
  return outs


def _split_impl(x, *, sizes, axis):
  bounds = np.cumsum([int(s) for s in sizes])[:-1]
  return np.split(x, bounds, axis=axis)


split_p = standard_primitive("split", _split_abstract_eval, _split_impl,
                             multiple_results=True)
split_p.c_code = None


def _split_c_expansion(x, *, sizes, axis):
  """One slice per piece: views the C backend fuses into their readers."""
  from purejax._src.lax.slicing import slice_p
  shape, start, outs = x.aval.shape, 0, []
  for size in sizes:
    outs.append(slice_p.bind(
        x, start_indices=tuple(start if a == axis else 0 for a in range(len(shape))),
        limit_indices=tuple(start + int(size) if a == axis else d for a, d in enumerate(shape)),
        strides=None))
    start += int(size)
  return outs


split_p.c_expansion = _split_c_expansion
ad.deflinear(split_p, lambda cts, operand, *, sizes, axis: [
    concatenate_p.bind(*cts, dimension=axis)])


@split_p.def_batch
def _split_batch(axis_size, vals, dims, *, sizes, axis):
  (x,), (d,) = vals, dims
  outs = split_p.bind(x, sizes=sizes, axis=_shift_past(axis, d))
  return outs, [d] * len(outs)


def split(operand, sizes, axis=0):
  """``operand`` cut along ``axis`` into pieces of the given ``sizes``
  (which must add up to the axis length)."""
  ndim = utils.aval(operand).ndim
  return utils.bind(split_p, operand, sizes=tuple(sizes),
                    axis=utils.canonicalize_axis(axis, ndim))


# -- tile ---------------------------------------------------------------------

def _tile_abstract_eval(operand, *, reps):
  if operand.ndim != len(reps):
    raise TypeError("reps length must be equal to the ndim of x, got "
                    f"len(reps)={len(reps)} and x.ndim={operand.ndim}.")
  return operand.update(shape=tuple(int(d) * int(r) for d, r in zip(operand.shape, reps)))


tile_p = standard_primitive("tile", _tile_abstract_eval,
                            lambda x, *, reps: np.tile(x, reps) if reps else x)
tile_p.c_code = None


def _tile_c_expansion(x, *, reps):
  """A broadcast to (rep, original) pairs of axes, merged by a reshape:
  views the C backend fuses into their readers."""
  from purejax._src.lax.structural import broadcast_in_dim_p
  shape = x.aval.shape
  pairs = tuple(n for r, d in zip(reps, shape) for n in (int(r), d))
  wide = broadcast_in_dim_p.bind(x, shape=pairs, broadcast_dimensions=tuple(
      range(1, 2 * len(shape), 2)), sharding=None)
  return reshape_p.bind(wide, new_sizes=tuple(int(d) * int(r) for d, r in zip(shape, reps)),
                        dimensions=None, sharding=None)


tile_p.c_expansion = _tile_c_expansion


def _tile_transpose(ct, operand, *, reps):
  # Each output axis is (rep, original) pairs laid out rep-major: split it
  # that way and sum the copies.
  shape = operand.aval.shape
  pairs = tuple(n for r, d in zip(reps, shape) for n in (r, d))
  ct = reshape_p.bind(ct, new_sizes=pairs, dimensions=None, sharding=None)
  axes = tuple(range(0, 2 * len(shape), 2))
  return [reduce_sum_p.bind(ct, axes=axes, out_sharding=None) if axes else ct]


ad.deflinear(tile_p, _tile_transpose)


@tile_p.def_batch
def _tile_batch(axis_size, vals, dims, *, reps):
  (x,), (d,) = vals, dims
  reps = list(reps)
  reps.insert(d, 1)
  return tile_p.bind(x, reps=tuple(reps)), d


def tile(operand, reps):
  """``operand`` repeated ``reps[i]`` times along axis i; ``reps`` has one
  entry per axis."""
  return utils.bind(tile_p, operand, reps=tuple(reps))


# -- stack and unstack --------------------------------------------------------

def _stack_abstract_eval(*operands, axis):
  if not operands:
    raise ValueError("stack expects at least one operand, got 0.")
  shapes = ", ".join(str(o.shape) for o in operands)
  if len({o.ndim for o in operands}) != 1:
    raise ValueError(f"Cannot stack arrays with different numbers of dimensions: got {shapes}.")
  if len({o.shape for o in operands}) != 1:
    raise ValueError(f"All input arrays must have the same shape. Got {shapes}.")
  check_same_dtypes("stack", operands)
  shape = list(operands[0].shape)
  shape.insert(axis, len(operands))
  return core.ShapedArray(tuple(shape), operands[0].dtype,
                          all(o.weak_type for o in operands))


stack_p = standard_primitive("stack", _stack_abstract_eval,
                             lambda *xs, axis: np.stack(xs, axis=axis))
stack_p.c_code = None


def _stack_c_expansion(*xs, axis):
  """Each operand given its new axis (a reshape), then concatenated."""
  shape = list(xs[0].aval.shape)
  shape.insert(axis, 1)
  return concatenate_p.bind(*[reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None,
                                             sharding=None) for x in xs], dimension=axis)


stack_p.c_expansion = _stack_c_expansion


def _stack_transpose(ct, *operands, axis):
  pieces = unstack_p.bind(ct, axis=axis)
  return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, operands)]


ad.deflinear(stack_p, _stack_transpose)


@stack_p.def_batch
def _stack_batch(axis_size, vals, dims, *, axis):
  d = dims[0]
  if d is not not_mapped and all(e == d for e in dims):
    # One shared batch axis stays where it is (shifted past the new axis).
    if axis <= d:
      return stack_p.bind(*vals, axis=axis), d + 1
    return stack_p.bind(*vals, axis=axis + 1), d
  vals = [batching.bdim_at_front(x, e, axis_size) for x, e in zip(vals, dims)]
  return stack_p.bind(*vals, axis=axis + 1), 0


def _unstack_abstract_eval(operand, *, axis):
  if operand.ndim == 0:
    raise ValueError("unstack requires arrays with rank > 0, however a scalar array of "
                     f"shape {operand.shape} was passed.")
  shape = list(operand.shape)
  count = shape.pop(axis)
  return [operand.update(shape=tuple(shape))] * count


def _unstack_impl(x, *, axis):
  return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


unstack_p = standard_primitive("unstack", _unstack_abstract_eval, _unstack_impl,
                               multiple_results=True)
unstack_p.c_code = None


def _unstack_c_expansion(x, *, axis):
  """One slice per index along ``axis``, its axis dropped (a reshape)."""
  from purejax._src.lax.slicing import slice_p
  shape = x.aval.shape
  out_shape = shape[:axis] + shape[axis + 1:]
  return [reshape_p.bind(slice_p.bind(
      x, start_indices=tuple(i if a == axis else 0 for a in range(len(shape))),
      limit_indices=tuple(i + 1 if a == axis else d for a, d in enumerate(shape)),
      strides=None), new_sizes=out_shape, dimensions=None, sharding=None)
      for i in range(shape[axis])]


unstack_p.c_expansion = _unstack_c_expansion
ad.deflinear(unstack_p, lambda cts, operand, *, axis: [stack_p.bind(*cts, axis=axis)])


@unstack_p.def_batch
def _unstack_batch(axis_size, vals, dims, *, axis):
  (x,), (d,) = vals, dims
  if axis < d:
    outs = unstack_p.bind(x, axis=axis)
    return outs, [d - 1] * len(outs)
  outs = unstack_p.bind(x, axis=axis + 1)
  return outs, [d] * len(outs)


def stack(operands, axis=0):
  """Joins equally shaped ``operands`` along a new axis ``axis``."""
  operands = list(operands)
  if not operands:
    # JAX indexes the first operand before anything else.
    raise IndexError("lax.stack needs at least one operand, got an empty sequence")
  axis = utils.canonicalize_axis(axis, utils.aval(operands[0]).ndim + 1)
  return utils.bind(stack_p, *operands, axis=axis)


def unstack(x, axis=0):
  """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``)."""
  axis = utils.canonicalize_axis(axis, utils.aval(x).ndim)
  return tuple(utils.bind(unstack_p, x, axis=axis))
