"""scipy.ndimage.map_coordinates: nearest (order 0) and linear (order 1)
interpolation of an N-d array at given coordinates (JAX's subset).

Each axis contributes one or two (index, weight) taps; the taps' product
over the axes gives the 2**ndim corners that are summed.  Out-of-range
indices are mapped back per mode, as JAX does: 'wrap' has period n, 'mirror'
period 2n - 2, 'reflect' period 2n, and 'constant' replaces each corner
outside the array by cval.
"""
import functools
import itertools
import operator

import purejax.numpy as jnp
from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _mirror_index(index, size):
  if size == 1:
    return jnp.zeros_like(index)
  period = 2 * size - 2
  index = jnp.mod(index, period)
  return jnp.where(index >= size, period - index, index)


def _reflect_index(index, size):
  period = 2 * size
  index = jnp.mod(index, period)
  return jnp.where(index >= size, period - 1 - index, index)


def _in_range(mode, index, size):
  """(index mapped into [0, size), whether the original index was inside)."""
  valid = (index >= 0) & (index < size)
  if mode == "constant":
    return jnp.clip(index, 0, size - 1), valid
  if mode == "nearest":
    return jnp.clip(index, 0, size - 1), None
  if mode == "wrap":
    return jnp.mod(index, size), None
  if mode == "mirror":
    return _mirror_index(index, size), None
  return _reflect_index(index, size), None


def _taps(coordinate, order):
  """The (integer index, weight or None) pairs one axis contributes."""
  if order == 0:
    return [(lax.round(coordinate).astype(jnp.int32), None)]
  lower = jnp.floor(coordinate)
  upper_weight = coordinate - lower
  lower = lower.astype(jnp.int32)
  return [(lower, 1 - upper_weight), (lower + 1, upper_weight)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
  """Values of input at coordinates (one array per axis of input) by
  nearest-neighbour (order=0) or linear (order=1) interpolation."""
  check_arraylike("map_coordinates", input)
  input = jnp.asarray(input)
  coordinates = [jnp.asarray(c) for c in coordinates]
  if len(coordinates) != input.ndim:
    raise ValueError("coordinates must be a sequence of length input.ndim, but "
                     f"{len(coordinates)} != {input.ndim}")
  if mode not in _MODES:
    raise NotImplementedError(
        f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. Currently "
        f"supported modes are {set(_MODES)}.")
  if order > 1:
    raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
  if order < 0:
    raise ValueError("order must be between 0 and 5")
  coordinates = [promote_dtypes_inexact(c)[0] for c in coordinates]
  cval = jnp.asarray(cval, input.dtype)
  is_integer = not dtypes.issubdtype(input.dtype, jnp.inexact)
  weight_dtype = jnp.result_type(*coordinates)

  per_axis = []
  for coordinate, size in zip(coordinates, input.shape):
    per_axis.append([(*_in_range(mode, index, size), weight)
                     for index, weight in _taps(coordinate, order)])

  terms = []
  for corner in itertools.product(*per_axis):
    indices = tuple(index for index, _, _ in corner)
    value = input[indices]
    masks = [valid for _, valid, _ in corner if valid is not None]
    if masks:
      value = jnp.where(functools.reduce(operator.and_, masks), value, cval)
    weights = [weight for _, _, weight in corner if weight is not None]
    if is_integer:
      # Integer inputs are interpolated in the coordinates' float type and rounded back.
      value = value.astype(weight_dtype)
    if weights:
      value = functools.reduce(operator.mul, weights).astype(value.dtype) * value
    terms.append(value)
  result = functools.reduce(operator.add, terms)
  if is_integer:
    result = lax.round(result)
  return result.astype(input.dtype)
