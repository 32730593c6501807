"""scipy.interpolate.RegularGridInterpolator: linear and nearest-neighbour
interpolation on a rectilinear grid (JAX's subset: no bounds errors, which
a traced function could not raise).

Each query point finds its cell per axis with searchsorted; 'linear' sums the
cell's 2**ndim corners weighted by the products of the fractional
distances, 'nearest' rounds each distance (a tie goes to the lower point, as
in SciPy).
"""
import itertools

import numpy as np

import purejax.numpy as jnp
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from purejax._src.tree_util import register_pytree_node_class

_METHODS = ("linear", "nearest")


def _stack_points(xi):
  """Query points as one array with the coordinates on the last axis; a
  tuple holds one (broadcast) array per coordinate, as in SciPy."""
  if isinstance(xi, tuple):
    return jnp.stack(jnp.broadcast_arrays(*xi), axis=-1)
  return jnp.asarray(xi)


@register_pytree_node_class
class RegularGridInterpolator:
  """Interpolates ``values`` given on the grid ``points`` (one increasing
  1-d array per axis); points outside the grid give ``fill_value``, or are
  extrapolated when it is None."""

  def __init__(self, points, values, method="linear", bounds_error=False,
               fill_value=np.nan):
    if method not in _METHODS:
      raise ValueError(f"method {method!r} is not defined")
    self.method = method
    self.bounds_error = bounds_error
    if self.bounds_error:
      raise NotImplementedError("`bounds_error` takes no effect under JIT")
    check_arraylike("RegularGridInterpolator", values)
    if len(points) > np.ndim(values):
      raise ValueError(f"there are {len(points)} point arrays, but values has "
                       f"{np.ndim(values)} dimensions")
    values, = promote_dtypes_inexact(values)
    if fill_value is not None:
      check_arraylike("RegularGridInterpolator", fill_value)
      fill_value = jnp.asarray(fill_value)
      if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
        raise ValueError("fill_value must be either 'None' or of a type compatible "
                         "with values")
    self.fill_value = fill_value
    self.grid = tuple(jnp.asarray(p) for p in points)
    self.values = values

  def __call__(self, xi, method=None):
    method = self.method if method is None else method
    if method not in _METHODS:
      raise ValueError(f"method {method!r} is not defined")
    ndim = len(self.grid)
    xi = _stack_points(xi)
    if xi.ndim == 1:
      xi = xi[None]  # one point, as in SciPy
    if xi.shape[-1] != ndim:
      raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, "
                       f"but this RegularGridInterpolator has dimension {ndim}")
    out_shape = xi.shape[:-1]
    xi = xi.reshape(-1, ndim)
    cells, fractions, outside = self._find_cells(xi.T)
    if method == "linear":
      result = self._linear(cells, fractions)
    else:
      result = self._nearest(cells, fractions)
    if self.fill_value is not None:
      outside = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
      result = jnp.where(outside, self.fill_value, result)
    return result.reshape(out_shape + self.values.shape[ndim:])

  def _find_cells(self, xi):
    cells, fractions = [], []
    outside = jnp.zeros(xi.shape[1:], dtype=bool)
    for grid, x in zip(self.grid, xi):
      cell = jnp.clip(jnp.searchsorted(grid, x) - 1, 0, grid.shape[0] - 2)
      cells.append(cell)
      fractions.append((x - grid[cell]) / (grid[cell + 1] - grid[cell]))
      outside = outside | (x < grid[0]) | (x > grid[-1])
    return cells, fractions, outside

  def _linear(self, cells, fractions):
    trailing = (1,) * (self.values.ndim - len(cells))
    result = None
    for corner in itertools.product((0, 1), repeat=len(cells)):
      weight = None
      for step, y in zip(corner, fractions):
        w = y if step else 1 - y
        weight = w if weight is None else weight * w
      value = self.values[tuple(c + s for c, s in zip(cells, corner))]
      term = value * weight.reshape(weight.shape + trailing)
      result = term if result is None else result + term
    return result

  def _nearest(self, cells, fractions):
    nearest = tuple(jnp.where(y <= 0.5, c, c + 1) for c, y in zip(cells, fractions))
    return self.values[nearest]

  def tree_flatten(self):
    return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

  @classmethod
  def tree_unflatten(cls, aux, children):
    grid, values, fill_value = children
    method, bounds_error = aux
    obj = object.__new__(cls)
    obj.method, obj.bounds_error = method, bounds_error
    obj.grid, obj.values, obj.fill_value = grid, values, fill_value
    return obj
