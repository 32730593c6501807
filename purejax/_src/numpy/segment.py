"""``jax.ops.segment_sum/prod/max/min``: reductions over segments of an array.

Each is a scatter (``.at[ids].add/multiply/max/min``) of ``data`` into an
output filled with the operation's identity, so an empty segment gives 0, 1,
the lowest value (-inf, the int's min, False) or the highest value.  As in
JAX, ids outside ``[0, num_segments)`` are dropped by default (negative ids
are not wrapped), and ``bucket_size`` scatters each bucket of ids into its
own row before reducing the rows.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.lax.gather import GatherScatterMode
from purejax._src.numpy import creation
from purejax._src.numpy import reductions
from purejax._src.numpy import util
from purejax._src.numpy.index_update import _IndexUpdateRef


def _identity(op, dtype):
  """The value an empty segment gets (as JAX's ``_get_identity``)."""
  if op == "add":
    return 0
  if op == "multiply":
    return 1
  is_int = dtypes.issubdtype(dtype, np.integer)
  if op == "min":
    if dtype == np.dtype(bool):
      return True
    return dtypes.iinfo(dtype).max if is_int else float("inf")
  if dtype == np.dtype(bool):
    return False
  return dtypes.iinfo(dtype).min if is_int else -float("inf")


def _static_num_segments(num_segments):
  # Like JAX, every op names segment_sum in this message.
  context = "segment_sum() `num_segments` argument."
  return operator.index(util.concrete_or_error(num_segments, context))


def _segment_update(name, data, segment_ids, op, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, reducer, mode):
  util.check_arraylike(name, data, segment_ids)
  mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
  data = util.asarray(data)
  segment_ids = util.asarray(segment_ids)
  dtype = util.aval_of(data).dtype
  if num_segments is None:
    num_segments = reductions.max(segment_ids) + 1
  num_segments = _static_num_segments(num_segments)
  if num_segments < 0:
    raise ValueError("num_segments must be non-negative.")
  kwargs = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                mode=mode, wrap_negative_indices=False)
  identity = _identity(op, dtype)
  rest = util.shape(data)[1:]
  if bucket_size is None:
    out = creation.full((num_segments,) + rest, identity, dtype=dtype)
    return getattr(_IndexUpdateRef(out, segment_ids), op)(data, **kwargs)
  # One row per bucket of ids, reduced afterwards: sums and products of many
  # terms round less when done in pieces.
  size = util.aval_of(segment_ids).size
  num_buckets = -(-size // bucket_size)
  out = creation.full((num_buckets, num_segments) + rest, identity, dtype=dtype)
  length = util.shape(segment_ids)[0]
  buckets = lax.div(lax.iota(np.dtype(np.int32), length), np.int32(bucket_size))
  index = (buckets, lax.expand_dims(segment_ids, (0,)))
  out = getattr(_IndexUpdateRef(out, index), op)(data, **kwargs)
  return lax.convert_element_type(reducer(out, axis=0), dtype, False)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
  """Sums ``data`` over the segments given by ``segment_ids`` (along axis 0).

  The output has shape ``(num_segments,) + data.shape[1:]``; ``num_segments``
  defaults to ``max(segment_ids) + 1`` and must be static under ``jit``.
  Ids out of range are dropped (``mode`` as in ``x.at[]``).  Unlike JAX,
  there is no ``out_sharding`` argument (purejax has one device).
  """
  return _segment_update("segment_sum", data, segment_ids, "add", num_segments,
                         indices_are_sorted, unique_indices, bucket_size,
                         reductions.sum, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
  """Multiplies ``data`` over segments; empty segments give 1.

  Arguments as in ``segment_sum`` (no ``out_sharding``, unlike JAX).
  """
  return _segment_update("segment_prod", data, segment_ids, "multiply", num_segments,
                         indices_are_sorted, unique_indices, bucket_size,
                         reductions.prod, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
  """The maximum of ``data`` over segments; empty segments give -inf
  (integers: the dtype's minimum; bool: False).

  Arguments as in ``segment_sum`` (no ``out_sharding``, unlike JAX).
  """
  return _segment_update("segment_max", data, segment_ids, "max", num_segments,
                         indices_are_sorted, unique_indices, bucket_size,
                         reductions.max, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
  """The minimum of ``data`` over segments; empty segments give +inf
  (integers: the dtype's maximum; bool: True).

  Arguments as in ``segment_sum`` (no ``out_sharding``, unlike JAX).
  """
  return _segment_update("segment_min", data, segment_ids, "min", num_segments,
                         indices_are_sorted, unique_indices, bucket_size,
                         reductions.min, mode)
