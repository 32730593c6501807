"""``x.at[idx]``: functional indexed updates and reads with a mode.

Every update is a lax scatter over the gather geometry of the index (as in
JAX): ``set`` is ``scatter``, ``add`` ``scatter_add``, ``multiply``
``scatter_mul``, ``divide`` and ``power`` divide/raise by a scatter_mul of
ones, ``apply`` is ``scatter_apply``.  Repeated indices accumulate (add,
multiply, min, max) or the last one wins (set).  By default out-of-bounds
updates are dropped; ``mode='clip'`` clamps them.  The update is promoted
with ``x``, scattered, and the result cast back to ``x``'s dtype.
"""
import warnings

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.config import config
from purejax._src.lax import scatter as lax_scatter
from purejax._src.lax.scatter import ScatterDimensionNumbers
from purejax._src.numpy import indexing
from purejax._src.numpy import util


class _IndexUpdateHelper:
  """The ``.at`` property: ``x.at[idx]`` gives an ``_IndexUpdateRef``."""
  __slots__ = ("array",)

  def __init__(self, array):
    self.array = array

  def __getitem__(self, index):
    return _IndexUpdateRef(self.array, index)

  def __repr__(self):
    return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
  """``x.at[idx]``: call ``.set(y)``, ``.add(y)``, ``.get()``... on it.

  ``get(out_sharding=...)`` types the result; the updates take and ignore it."""
  __slots__ = ("array", "index")

  def __init__(self, array, index):
    self.array = array
    self.index = index

  def __repr__(self):
    return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

  def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
          fill_value=None, out_sharding=None, wrap_negative_indices=True):
    """``x[idx]``; with ``mode='fill'`` out-of-bounds reads give ``fill_value``."""
    from purejax._src.out_sharding import compute_with
    return compute_with(out_sharding, lambda array: indexing.rewriting_take(
        array, self.index, indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices, mode=mode, fill_value=fill_value,
        normalize_indices=wrap_negative_indices), self.array)

  def _update(self, values, op, indices_are_sorted, unique_indices, mode,
              wrap_negative_indices):
    return scatter_update(self.array, self.index, values, op,
                          indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode,
                          normalize_indices=wrap_negative_indices)

  def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x`` with ``x[idx]`` replaced by ``values``."""
    return self._update(values, lax_scatter.scatter, indices_are_sorted, unique_indices,
                        mode, wrap_negative_indices)

  def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
    """``x`` with the unary ``func`` applied at ``idx`` (again for each repeat)."""
    def apply_op(x, indices, y, dnums, **kwargs):
      return lax_scatter.scatter_apply(x, indices, func, dnums,
                                       update_shape=util.shape(y), **kwargs)
    return self._update(lax.full((), 0, util.aval_of(util.asarray(self.array)).dtype),
                        apply_op, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x`` with ``values`` added at ``idx`` (repeated indices accumulate)."""
    return self._update(values, lax_scatter.scatter_add, indices_are_sorted,
                        unique_indices, mode, wrap_negative_indices)

  def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x`` with ``values`` subtracted at ``idx``."""
    return self._update(values, lax_scatter.scatter_sub, indices_are_sorted,
                        unique_indices, mode, wrap_negative_indices)

  def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x`` multiplied by ``values`` at ``idx``."""
    return self._update(values, lax_scatter.scatter_mul, indices_are_sorted,
                        unique_indices, mode, wrap_negative_indices)

  mul = multiply

  def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
             out_sharding=None, wrap_negative_indices=True):
    """``x / factors``, the factors being ``values`` at ``idx`` and 1 elsewhere."""
    from purejax._src.numpy import creation, ufuncs
    ones = creation.ones_like(self.array)
    factors = scatter_update(ones, self.index, values, lax_scatter.scatter_mul,
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode,
                             normalize_indices=wrap_negative_indices)
    return ufuncs.divide(self.array, factors)

  def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
    """``x ** exponents``, the exponents being ``values`` at ``idx`` and 1 elsewhere."""
    from purejax._src.numpy import creation, ufuncs
    ones = creation.ones_like(self.array)
    exponents = scatter_update(ones, self.index, values, lax_scatter.scatter_mul,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode,
                               normalize_indices=wrap_negative_indices)
    return ufuncs.power(self.array, exponents)

  def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x`` with ``x[idx]`` replaced by ``minimum(x[idx], values)``."""
    return self._update(values, lax_scatter.scatter_min, indices_are_sorted,
                        unique_indices, mode, wrap_negative_indices)

  def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x`` with ``x[idx]`` replaced by ``maximum(x[idx], values)``."""
    return self._update(values, lax_scatter.scatter_max, indices_are_sorted,
                        unique_indices, mode, wrap_negative_indices)


def _check_cast(y, dtype):
  if not dtypes.safe_to_cast(y, dtype):
    warnings.warn(
        "scatter inputs have incompatible types: cannot safely cast value from "
        f"dtype={dtypes.result_type(y)} to dtype={dtype} with "
        f"jax_numpy_dtype_promotion={config.jax_numpy_dtype_promotion}. In future JAX "
        "releases this will result in an error.", FutureWarning, stacklevel=5)


def scatter_update(x, idx, y, scatter_op, *, indices_are_sorted=False,
                   unique_indices=False, mode=None, normalize_indices=True):
  """``x`` with ``scatter_op`` combining ``y`` into ``x[idx]``."""
  util.check_arraylike("at", x)
  x = util.asarray(x)
  aval = util.aval_of(x)
  if (isinstance(y, int) and dtypes.issubdtype(aval.dtype, np.integer)
      and dtypes.iinfo(aval.dtype).min <= y <= dtypes.iinfo(aval.dtype).max):
    y = lax.convert_element_type(y, aval.dtype, False)
  else:
    from purejax._src.numpy import creation
    y = creation.asarray(y)   # lists too, as in JAX
  shape = util.shape(x)
  entries = indexing.expand_bool_indices(indexing.parse(idx, shape), shape)
  x_sharding = aval.explicit_sharding
  g = indexing.to_gather(shape, entries, normalize_indices,
                         x_sharding.spec if x_sharding is not None else None)
  _check_cast(y, aval.dtype)
  if 0 in g.slice_shape:
    return x
  x, y = util.promote_dtypes(x, y)
  if x_sharding is not None or util.aval_of(y).explicit_sharding is not None:
    y = util.broadcast_to(y, g.slice_shape, out_spec=g.slice_spec)
  else:
    y = util.broadcast_to(y, g.slice_shape)
  if g.newaxis_dims:
    y = lax.squeeze(y, g.newaxis_dims)
  if g.reversed_y_dims:
    y = lax.rev(y, g.reversed_y_dims)
  if g.scalar_bool_dims:
    x = lax.expand_dims(x, g.scalar_bool_dims)
  dnums = ScatterDimensionNumbers(
      update_window_dims=g.dnums.offset_dims, inserted_window_dims=g.dnums.collapsed_slice_dims,
      scatter_dims_to_operand_dims=g.dnums.start_index_map)
  out = scatter_op(x, g.indices, y, dnums,
                   indices_are_sorted=g.indices_are_sorted or indices_are_sorted,
                   unique_indices=g.unique_indices or unique_indices, mode=mode)
  if g.scalar_bool_dims:
    out = lax.squeeze(out, g.scalar_bool_dims)
  return lax.convert_element_type(out, aval.dtype, aval.weak_type)
