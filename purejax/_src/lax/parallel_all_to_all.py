"""all_to_all: each instance of a mapped axis splits its value into one
block per instance and sends block j to instance j.

The primitive is the tiled form (the split axis divided by the axis size,
the concat axis multiplied); the untiled API adds and removes a size-1 axis.
Under vmap of the named axis the exchange is a transpose of the batch axis
with the split blocks; inside an SPMD run (shard_map, pmap) each device
swaps its blocks with the others through the run's communicator.
"""
import numpy as np

from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import batching
from purejax._src.lax.parallel import (
    _as_names, _axis_size, _canonical_groups, _check_bound, _collective, _fold,
    _gather_values, _leaf_aval, _single_name_here, _split)
from purejax._src.lax.structural import expand_dims, squeeze, transpose

def _all_to_all_abstract_eval(operand, *, axis_name, split_axis, concat_axis,
                              axis_index_groups, tiled):
  names = _as_names(axis_name)
  _check_bound(names, "all_to_all")
  size = len(axis_index_groups[0]) if axis_index_groups is not None else _axis_size(names)
  shape = list(operand.shape)
  if shape[split_axis] % size:
    raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to "
                     f"be divisible by the size of the named axis {axis_name} ({size})")
  shape[split_axis] //= size
  shape[concat_axis] *= size
  return core.ShapedArray(tuple(shape), operand.dtype)


def _all_to_all_batch(trace, vals, dims, *, axis_name, split_axis, concat_axis,
                      axis_index_groups, tiled):
  (x,), (d,) = vals, dims
  names = _as_names(axis_name)
  if not _single_name_here(trace, names, axis_index_groups):
    return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + (d <= split_axis),
                             concat_axis=concat_axis + (d <= concat_axis),
                             axis_index_groups=axis_index_groups, tiled=tiled), d
  n = trace.axis_size
  x = batching.bdim_at_front(x, d, n)      # [source j, *per-instance axes]
  ndim = core.get_aval(x).ndim - 1
  # Block b of the split axis goes to instance b: it becomes the batch axis.
  x = _split(x, 1 + split_axis, n)          # [j, ..., b, block, ...]
  rest = [1 + i for i in range(ndim + 1) if i != split_axis]   # per-instance axes
  # The sources j, in order, become the major part of the concat axis.
  perm = [1 + split_axis] + rest[:concat_axis] + [0] + rest[concat_axis:]
  if perm != sorted(perm):
    x = transpose(x, tuple(perm))
  return _fold(x, 1 + concat_axis), 0



def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis,
                          axis_index_groups, tiled):
  return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                            concat_axis=split_axis, axis_index_groups=axis_index_groups,
                            tiled=tiled)]


all_to_all_p = _collective("all_to_all", _all_to_all_abstract_eval, _all_to_all_batch, lambda params: _as_names(params["axis_name"]),
                        transpose=_all_to_all_transpose)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
  """Instance k splits ``x`` along ``split_axis`` into one block per
  instance and sends block j to instance j; the blocks it receives are
  stacked (concatenated if ``tiled``) along ``concat_axis``."""
  groups = _canonical_groups(axis_index_groups)

  def bind(leaf, split_axis=split_axis, concat_axis=concat_axis):
    size = len(groups[0]) if groups is not None else _axis_size(_as_names(axis_name))
    shape = _leaf_aval(leaf).shape
    if tiled:
      if shape[split_axis] % size:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has "
                         f"to be divisible by the size of the named axis {axis_name} "
                         f"({size})")
    else:
      if shape[split_axis] != size:
        raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                         "equal x.shape[split_axis], but they are "
                         f"{size} and {shape[split_axis]} respectively.")
      # A size-1 axis at concat_axis receives the blocks; the split axis,
      # divided down to size 1, is then dropped.
      if split_axis < concat_axis:
        concat_axis += 1
        leaf = expand_dims(leaf, (concat_axis,))
      elif concat_axis < split_axis:
        leaf = expand_dims(leaf, (concat_axis,))
        split_axis += 1
    out = all_to_all_p.bind(leaf, axis_name=axis_name, split_axis=split_axis,
                            concat_axis=concat_axis, axis_index_groups=groups,
                            tiled=tiled)
    if not tiled and split_axis != concat_axis:
      out = squeeze(out, (split_axis,))
    return out

  return tree_util.tree_map(bind, x)


@all_to_all_p.def_impl
def _all_to_all_impl(x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled):
  values, k = _gather_values(x, _as_names(axis_name), axis_index_groups)
  n = len(values)
  return np.concatenate([np.split(v, n, axis=split_axis)[k] for v in values],
                        axis=concat_axis)
