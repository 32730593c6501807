"""scaled_dot: a dot product of operands multiplied by block scales (as for
the MX narrow-float formats), ``(lhs * lhs_scale) @ (rhs * rhs_scale)``.

A scale has the operand's shape except along contracting axes, where each
scale entry covers a block of consecutive operand entries.  As in JAX's
reference implementation, operands and scales are rounded to bfloat16, the
products formed in bfloat16, then contracted into ``preferred_element_type``
(bfloat16 by default).  Not differentiable, as in JAX.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import batching
from purejax._src.lax import utils
from purejax._src.lax.convert import _convert_impl
from purejax._src.lax.dot import _dot_general_impl
from purejax._src.lax.families import standard_primitive


def _check_scale(side, operand, scale, contracting):
  for i, size in enumerate(operand.shape):
    if i in contracting:
      if size % scale.shape[i]:
        raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                        f"by its scale's dim size {scale.shape[i]}.")
      if size // scale.shape[i] < 2:
        raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                        f"size ({size // scale.shape[i]}) must be at least 2.")
    elif scale.shape[i] != size:
      raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                      f"{scale.shape[i]}.")


def _abstract_eval(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                   preferred_element_type):
  (lc, rc), (lb, rb) = dimension_numbers
  ranks = {lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim}
  if len(ranks) != 1:
    raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} "
                    f"rhs rank: {rhs.ndim} lhs_scale rank: {lhs_scale.ndim} rhs_scale "
                    f"rank: {rhs_scale.ndim}.")
  if len(lb) != len(rb):
    raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                    f"{len(lb)} and {len(rb)}.")
  if len(lc) != len(rc):
    raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                    f"got {len(lc)} and {len(rc)}.")
  for i, j in zip(lb, rb):
    if len({lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}) != 1:
      raise TypeError("All input tensors must have the same batch dimension size for "
                      f"batch dims ({i}, {j}).")
  for i, j in zip(lc, rc):
    if lhs.shape[i] != rhs.shape[j]:
      raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match RHS "
                      f"contracting dim {j} of size {rhs.shape[j]}.")
  _check_scale("LHS", lhs, lhs_scale, lc)
  _check_scale("RHS", rhs, rhs_scale, rc)
  kept = lambda a, c, b: [a.shape[i] for i in range(a.ndim) if i not in c and i not in b]
  shape = tuple([lhs.shape[i] for i in lb] + kept(lhs, lc, lb) + kept(rhs, rc, rb))
  dtype = dtypes.bfloat16 if preferred_element_type is None else preferred_element_type
  return core.ShapedArray(shape, np.dtype(dtype))


def _scaled(x, scale, contracting):
  for i in contracting:   # each scale entry covers a block along axis i
    scale = np.repeat(scale, x.shape[i] // scale.shape[i], axis=i)
  bf16 = dtypes.bfloat16
  as_bf16 = lambda v: _convert_impl(v, new_dtype=bf16, weak_type=False)
  return (as_bf16(x) * as_bf16(scale)).astype(bf16)


def _impl(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
  (lc, rc), _ = dimension_numbers
  return _dot_general_impl(_scaled(lhs, lhs_scale, lc), _scaled(rhs, rhs_scale, rc),
                           dimension_numbers=dimension_numbers, precision=None,
                           preferred_element_type=preferred_element_type, out_sharding=None)


scaled_dot_p = standard_primitive("scaled_dot", _abstract_eval, _impl)
scaled_dot_p.c_code = None


@scaled_dot_p.def_batch
def _batch(axis_size, vals, dims, *, dimension_numbers, preferred_element_type):
  # Every operand gets the batch axis first: one more leading dot batch axis.
  vals = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
  (lc, rc), (lb, rb) = dimension_numbers
  up = lambda ds: tuple(d + 1 for d in ds)
  dn = ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb)))
  return scaled_dot_p.bind(*vals, dimension_numbers=dn,
                           preferred_element_type=preferred_element_type), 0


def _unit_scale(operand, contracting):
  from purejax._src.lax.convert import convert_element_type
  from purejax._src.lax.creation import full
  shape = [1 if i in contracting else d for i, d in enumerate(utils.aval(operand).shape)]
  return convert_element_type(full(shape, 1.0, dtypes.bfloat16), dtypes.float8_e8m0fnu)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
  """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` with block scales along
  the contracting axes (missing scales are ones); by default the last axis of
  ``lhs`` meets the next-to-last of ``rhs``, leading axes being batch axes."""
  if dimension_numbers is None:
    n = utils.aval(lhs).ndim
    if n < 2:
      raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
  (lc, rc), _ = dimension_numbers
  if lhs_scale is None:
    lhs_scale = _unit_scale(lhs, lc)
  if rhs_scale is None:
    rhs_scale = _unit_scale(rhs, rc)
  out = dtypes.canonicalize_user_dtype(
      dtypes.bfloat16 if preferred_element_type is None else preferred_element_type,
      "scaled_dot")
  return utils.bind(scaled_dot_p, lhs, rhs, lhs_scale, rhs_scale,
                    dimension_numbers=dimension_numbers, preferred_element_type=out)
