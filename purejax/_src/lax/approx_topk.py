"""approx_max_k / approx_min_k: the ``approx_top_k`` primitive.

JAX's CPU backend computes these exactly (XLA's fallback is a sort), and so
does purejax: the values, in order, and their indices, ties going to the
lower index.  With ``aggregate_to_topk=False`` the output keeps as many
candidates as XLA's TPU reduction would (``_reduction_output_size``, the
same formula), again sorted, as on JAX's CPU.  NaNs count as the largest
values for max and are never picked before numbers for min (XLA's CPU
ordering of NaNs is not specified).
"""
import math

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.lax import sort
from purejax._src.lax.families import standard_primitive

_CHUNK_TILING = 1024   # XLA's TPU tilings, which decide the candidate count
_LANE_TILING = 128


def _log2_floor(n):
  return n.bit_length() - 1


def _log2_ceil(n):
  return (n - 1).bit_length()


def _reduction_output_size(input_size, rank, k, recall_target, input_size_override):
  """How many candidates survive XLA's approximate reduction (aggregate_to_topk
  off): the reduction is by a power of two, the output a multiple of the tiling."""
  tiling = _CHUNK_TILING if rank == 1 else _LANE_TILING
  if input_size <= tiling:
    return input_size
  if input_size_override >= 0 and input_size > input_size_override:
    raise ValueError(f"reduction_input_size_override: {input_size_override} should be "
                     f"greater equals to operands[reduction_dim]: {input_size}")
  logical = input_size_override if input_size_override >= 0 else input_size
  round_up = lambda n: -(-n // tiling) * tiling
  if k == 1:
    log2 = _log2_ceil(-(-logical // tiling))
    return round_up(-(-input_size // (1 << log2)))
  recall = float(np.float32(recall_target))
  if recall == 1.0:
    return input_size
  if not 0.0 < recall <= 1.0:
    raise ValueError(f"recall_target should be in (0, 1], but got {recall_target}")
  # The number of windows m keeps the expected recall: recall ~ exp((1 - k) / m).
  m = min(max(int((1.0 - k) / math.log(recall)), tiling), logical)
  log2 = _log2_floor(logical // m)
  if log2 == 0:
    return input_size
  log2 = min(log2, _log2_ceil(input_size // tiling))
  return round_up(-(-input_size // (1 << log2)))


def _approx_top_k_abstract_eval(operand, *, k, reduction_dimension, recall_target,
                                is_max_k, reduction_input_size_override, aggregate_to_topk):
  if k <= 0:
    raise ValueError(f"k must be positive, got {k}")
  if operand.ndim == 0:
    raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
  dims = list(operand.shape)
  if not -len(dims) <= reduction_dimension < len(dims):
    raise IndexError(f"reduction_dimension {reduction_dimension} is out of range for an "
                     f"operand of rank {len(dims)}")
  if dims[reduction_dimension] < k:
    raise ValueError(f"k must be smaller than the size of reduction_dim "
                     f"{dims[reduction_dimension]}, got {k}")
  if not dtypes.issubdtype(operand.dtype, np.floating):
    raise ValueError("operand must be a floating type")
  if aggregate_to_topk:
    dims[reduction_dimension] = k
  else:
    dims[reduction_dimension] = _reduction_output_size(
        dims[reduction_dimension], len(dims), k, recall_target,
        reduction_input_size_override)
  return [operand.update(shape=tuple(dims)),
          core.ShapedArray(tuple(dims), np.dtype(np.int32))]


def _approx_top_k_impl(x, *, k, reduction_dimension, recall_target, is_max_k,
                       reduction_input_size_override, aggregate_to_topk):
  axis = reduction_dimension % x.ndim
  out = _approx_top_k_abstract_eval(
      core.ShapedArray(x.shape, x.dtype), k=k, reduction_dimension=reduction_dimension,
      recall_target=recall_target, is_max_k=is_max_k,
      reduction_input_size_override=reduction_input_size_override,
      aggregate_to_topk=aggregate_to_topk)[0]
  n = out.shape[axis]
  if n > x.shape[axis]:
    raise ValueError(f"approx_top_k: the candidate count {n} exceeds the size "
                     f"{x.shape[axis]} of the reduction dimension")
  wide = x.astype(np.float64)   # exact for every floating input dtype
  nan = np.isnan(wide)
  # Sort on (NaN placement, value), stably: equal values keep index order.
  value = np.where(nan, 0.0, -wide if is_max_k else wide)
  placement = (~nan if is_max_k else nan).astype(np.uint8)
  order = sort.stable_order([placement, value], axis)[(slice(None),) * axis + (slice(0, n),)]
  return [np.take_along_axis(x, order, axis=axis), order.astype(np.int32)]


# (impl_on_gpu_arrays: a stable sort on a GPU's arrays, see sort_p)
approx_top_k_p = standard_primitive("approx_top_k", _approx_top_k_abstract_eval,
                                    _approx_top_k_impl, multiple_results=True,
                                    impl_on_gpu_arrays=True)
approx_top_k_p.c_code = None


@approx_top_k_p.def_jvp
def _approx_top_k_jvp(primals, tangents, **params):
  from purejax._src.lax.sort import take_along
  from purejax._src.lax.structural import expand_dims
  (operand,), (g,) = primals, tangents
  values, idx = approx_top_k_p.bind(operand, **params)
  if type(g) is ad.Zero:
    return [values, idx], [ad.Zero.from_primal_value(values), ad.Zero.from_primal_value(idx)]
  ndim = core.get_aval(idx).ndim
  axis = params["reduction_dimension"] % ndim
  g_out = take_along(g, expand_dims(idx, (ndim,)), axis)
  return [values, idx], [g_out, ad.Zero.from_primal_value(idx)]


@approx_top_k_p.def_batch
def _approx_top_k_batch(axis_size, vals, dims, *, reduction_dimension, **params):
  (x,), (d,) = vals, dims
  ndim = core.get_aval(x).ndim
  kept = [i for i in range(ndim) if i != d]
  outs = approx_top_k_p.bind(x, reduction_dimension=kept[reduction_dimension], **params)
  return outs, [d, d]


def _bind(operand, k, reduction_dimension, recall_target, is_max_k,
          reduction_input_size_override, aggregate_to_topk):
  return approx_top_k_p.bind(
      operand, k=k, reduction_dimension=reduction_dimension, recall_target=recall_target,
      is_max_k=is_max_k, reduction_input_size_override=reduction_input_size_override,
      aggregate_to_topk=aggregate_to_topk)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` largest values along ``reduction_dimension`` and their int32
  indices.  Computed exactly, as JAX does on the CPU."""
  return _bind(operand, k, reduction_dimension, recall_target, True,
               reduction_input_size_override, aggregate_to_topk)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` smallest values along ``reduction_dimension`` and their int32
  indices.  Computed exactly, as JAX does on the CPU."""
  return _bind(operand, k, reduction_dimension, recall_target, False,
               reduction_input_size_override, aggregate_to_topk)
