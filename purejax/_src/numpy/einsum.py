"""einsum and einsum_path.

opt_einsum chooses the order of pairwise contractions; each step is then one
``dot_general`` (shared names become batch dimensions, summed ones
contracting dimensions), after summing names only one operand carries and
taking diagonals of repeated names with a mask.
"""
import collections

import numpy as np
import opt_einsum

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import util


class _LeftToRight(opt_einsum.paths.PathOptimizer):
  """The path of ``optimize=False``: contract operands in the given order."""

  def __call__(self, inputs, *args, **kwargs):
    return [(0, 1)] * (len(inputs) - 1)


def _path_type(optimize):
  if optimize is True:
    return "optimal"
  if optimize is False:
    return _LeftToRight()
  return optimize


def einsum_path(subscripts, /, *operands, optimize="auto"):
  """opt_einsum's contraction path and its description (no computation)."""
  if isinstance(optimize, bool):
    optimize = "optimal" if optimize else _LeftToRight()
  return opt_einsum.contract_path(subscripts, *operands, optimize=optimize)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=lax.dot_general, out_sharding=None):
  """Einstein summation over the operands (NumPy's string form, or the
  interleaved ``(array, axes, array, axes, ...)`` form)."""
  operands = (subscripts, *operands)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
  operands = tuple(op.__jax_array__() if hasattr(op, "__jax_array__") else op
                   for op in operands)
  operands, contractions = opt_einsum.contract_path(
      *operands, einsum_call=True, use_blas=True, optimize=_path_type(optimize))
  contractions = tuple((tuple(c[0]), frozenset(c[1]), c[2]) for c in contractions)
  util.check_arraylike("einsum", *operands)
  if preferred_element_type is not None:
    preferred_element_type = dtypes.canonicalize_user_dtype(preferred_element_type, "einsum")
  from purejax._src.out_sharding import compute_with
  return compute_with(out_sharding, lambda *ops: _einsum(
      list(ops), contractions, precision, preferred_element_type, _dot_general), *operands)


def _remove(names, chars):
  return "".join(c for c in names if c not in chars)


def _sum(x, axes, dtype):
  if not axes:
    return x
  if dtypes.result_type(x, dtype) != util.aval_of(x).dtype:
    x = lax.convert_element_type(x, dtype, False)
  axes = tuple(axes)
  return lax.reduce_or(x, axes) if util.aval_of(x).dtype == np.bool_ else lax.reduce_sum(x, axes)


def _sum_uniques(x, names, uniques, dtype):
  """Sums the names that appear once and are contracted away."""
  if uniques:
    x = _sum(x, [names.index(n) for n in uniques], dtype)
    names = _remove(names, uniques)
  return x, names


def _delta(shape, axes):
  """True where the indices along all of ``axes`` are equal."""
  iotas = [lax.broadcasted_iota(np.dtype(np.uint32), shape, ax) for ax in axes]
  out = lax.eq(iotas[0], iotas[1])
  for other in iotas[2:]:
    out = lax.bitwise_and(out, lax.eq(iotas[0], other))
  return out


def _sum_repeats(x, names, counts, keep, dtype):
  """Takes the diagonal of each repeated name (kept once if still needed)."""
  for name, count in counts.items():
    if count > 1:
      axes = [i for i, n in enumerate(names) if n == name]
      mask = _delta(util.shape(x), axes)
      zero = lax.broadcast_in_dim(
          lax.convert_element_type(0, util.aval_of(x).dtype, False), util.shape(x), ())
      x = lax.select(mask, x, zero)
      if name not in keep:
        x = _sum(x, axes, dtype)
        names = names.replace(name, "")
      else:
        x = _sum(x, axes[:-1], dtype)
        names = names.replace(name, "", count - 1)
  return x, names


def _drop_singletons(x, names, other_shape, other_names):
  """Squeezes size-1 axes that the other operand broadcasts against."""
  shape = util.shape(x)
  keep = [shape[i] != 1 or j == -1 or other_shape[j] == 1
          for i, j in enumerate(map(other_names.find, names))]
  squeezed = tuple(i for i, k in enumerate(keep) if not k)
  if squeezed:
    x = lax.squeeze(x, squeezed)
  return x, "".join(n for n, k in zip(names, keep) if k)


def _einsum(operands, contractions, precision, preferred_element_type, dot_general):
  """Runs the contractions (not under a jit of its own: JAX inlines it)."""
  if preferred_element_type is None:
    dtype, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
  else:
    dtype, weak = preferred_element_type, False
  operands = [util.asarray(op) for op in operands]
  for indices, contracted, spec in contractions:
    contracted = sorted(contracted)
    inputs, result = spec.split("->")
    input_names = inputs.split(",")
    if len(indices) == 1:
      x = operands.pop(indices[0])
      names, = input_names
      counts = collections.Counter(names)
      x, names = _sum_uniques(x, names, [n for n in contracted if counts[n] == 1], dtype)
      x, names = _sum_repeats(x, names, counts, result, dtype)
    elif len(indices) == 2:
      lhs, rhs = map(operands.pop, indices)
      x, names = _contract_pair(lhs, rhs, *input_names, result, contracted, precision,
                                dtype, dot_general)
    else:
      raise NotImplementedError(
          "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
          "operands. Typically this means you've passed an unsupported path to the "
          "einsum optimize parameter.")
    if names != result:
      x = lax.transpose(x, tuple(names.index(n) for n in result))
    operands.append(x)
  return lax.convert_element_type(operands[0], dtype, weak)


def _contract_pair(lhs, rhs, lhs_names, rhs_names, result, contracted, precision, dtype,
                   dot_general):
  """One dot_general for a pairwise step; returns (array, its names)."""
  lhs, lhs_names = _drop_singletons(lhs, lhs_names, util.shape(rhs), rhs_names)
  rhs, rhs_names = _drop_singletons(rhs, rhs_names, util.shape(lhs), lhs_names)
  lhs_counts = collections.Counter(lhs_names)
  rhs_counts = collections.Counter(rhs_names)
  lhs, lhs_names = _sum_uniques(
      lhs, lhs_names, [n for n in contracted if lhs_counts[n] == 1 and not rhs_counts[n]],
      dtype)
  rhs, rhs_names = _sum_uniques(
      rhs, rhs_names, [n for n in contracted if rhs_counts[n] == 1 and not lhs_counts[n]],
      dtype)
  lhs, lhs_names = _sum_repeats(lhs, lhs_names, lhs_counts, result + rhs_names, dtype)
  rhs, rhs_names = _sum_repeats(rhs, rhs_names, rhs_counts, result + lhs_names, dtype)

  present = set(lhs_names) | set(rhs_names)
  contracted = [n for n in contracted if n in present]
  shared = set(lhs_names) & set(rhs_names)
  batch = "".join(n for n in result if n in shared)
  lhs_batch = tuple(lhs_names.find(n) for n in batch)
  rhs_batch = tuple(rhs_names.find(n) for n in batch)
  for n in contracted:
    if util.shape(lhs)[lhs_names.index(n)] != util.shape(rhs)[rhs_names.index(n)]:
      raise ValueError(f"Incompatible reduction dimensions: lhs.shape={util.shape(lhs)} "
                       f"lhs_names={lhs_names} rhs.shape={util.shape(rhs)} "
                       f"rhs_names={rhs_names}")
  lhs_cont = tuple(lhs_names.index(n) for n in contracted)
  rhs_cont = tuple(rhs_names.index(n) for n in contracted)
  dropped = batch + "".join(contracted)
  lhs_rest, rhs_rest = _remove(lhs_names, dropped), _remove(rhs_names, dropped)
  # Put rhs first when that already gives the result's order.
  if batch + rhs_rest + lhs_rest == result:
    out = dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)), precision,
                      preferred_element_type=dtype)
    return out, batch + rhs_rest + lhs_rest
  out = dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)), precision,
                    preferred_element_type=dtype)
  return out, batch + lhs_rest + rhs_rest
