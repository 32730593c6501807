"""ragged_all_to_all: an all_to_all of variable-length row slices.

Each instance of the mapped axis holds ``operand`` rows to send and an
``output`` buffer.  Its offset and size arrays have K = n * s entries (n
instances, s slices per destination): entry ``i`` sends rows
``operand[input_offsets[i]:][:send_sizes[i]]`` to instance ``i // s``,
where they land at rows ``output_offsets[i]`` onwards of that instance's
result (the result is ``output`` elsewhere).  A receiver takes its slices
in the order of the senders, then of their entries; a later slice
overwrites an earlier one where they overlap.

Under vmap of the named axis the exchange is one gather over all instances
at once (``_receive``); inside an SPMD run (shard_map, pmap) each device
swaps its arrays with the others and computes its own rows the same way.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import parallel
from purejax._src.lax.parallel import _as_names, _check_bound, _collective


def _abstract_eval(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                   *, axis_name, axis_index_groups):
  _check_types(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)
  _check_bound(_as_names(axis_name), "ragged_all_to_all")
  return core.ShapedArray(output.shape, output.dtype)


def _check_types(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes):
  for name, a in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                  ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
    if not dtypes.issubdtype(a.dtype, np.integer):
      raise ValueError(f"ragged_all_to_all {name} must be integer type.")
    if len(a.shape) != 1 or a.shape[0] < 1:
      raise ValueError(f"ragged_all_to_all {name} must be rank 1 with positive dimension "
                       f"size, but got shape {a.shape}")
  if operand.dtype != output.dtype or operand.shape[1:] != output.shape[1:]:
    raise TypeError("ragged_all_to_all operand and output must have the same dtype and "
                    f"trailing dimensions, got {operand.str_short()} and "
                    f"{output.str_short()}")


def _receive(jnp, operands, outputs, input_offsets, send_sizes, output_offsets, receivers):
  """What each receiver in ``receivers`` gets: ``operands`` (n, N, ...) and
  the offsets (n, K) of all n senders, ``outputs`` (r, M, ...) the
  receivers' buffers.  ``jnp`` is purejax.numpy (traced) or NumPy."""
  n, big_k = input_offsets.shape
  per = big_k // n
  rows = outputs.shape[1]

  def mine(a):   # (r, n * per): each receiver's entries, senders in order
    a = a.reshape(n, n, per)[:, receivers, :]
    return jnp.transpose(a, (1, 0, 2)).reshape(len(receivers), n * per)

  src, size, dst = mine(input_offsets), mine(send_sizes), mine(output_offsets)
  p = jnp.arange(rows).reshape(1, 1, rows)
  covers = (dst[:, :, None] <= p) & (p < dst[:, :, None] + size[:, :, None])   # (r, L, M)
  count = covers.shape[1]
  last = count - 1 - jnp.argmax(covers[:, ::-1, :], axis=1)    # the last slice written
  written = jnp.any(covers, axis=1)
  entry = jnp.take_along_axis(src - dst, last, axis=1) + p[0]   # (r, M) row in the sender
  sender = last // per
  limit = operands.shape[1] - 1
  values = operands[sender, jnp.clip(entry, 0, limit)]        # (r, M, ...)
  mask = written.reshape(written.shape + (1,) * (outputs.ndim - 2))
  return jnp.where(mask, values, outputs)


def _batch(trace, vals, dims, *, axis_name, axis_index_groups):
  import purejax.numpy as jnp
  names = _as_names(axis_name)
  if not parallel._single_name_here(trace, names, axis_index_groups):
    if all(d is batching.not_mapped for d in dims):
      return ragged_all_to_all_p.bind(*vals, axis_name=axis_name,
                                      axis_index_groups=axis_index_groups), batching.not_mapped
    raise NotImplementedError("ragged_all_to_all under vmap of another axis than its "
                              "own is not supported. Please open a feature request!")
  n = trace.axis_size
  args = [batching.bdim_at_front(x, d, n) for x, d in zip(vals, dims)]
  operand, output, input_offsets, send_sizes, output_offsets, _ = args
  if input_offsets.shape[1] % n:
    raise ValueError(f"ragged_all_to_all: the offset arrays' length ({input_offsets.shape[1]}) "
                     f"must be divisible by the size of axis {axis_name!r} ({n})")
  return _receive(jnp, operand, output, input_offsets, send_sizes, output_offsets,
                  np.arange(n)), 0


def _jvp(primals, tangents, **params):
  operand, output, *rest = primals
  d_operand, d_output = tangents[:2]
  out = ragged_all_to_all_p.bind(operand, output, *rest, **params)
  if type(d_operand) is ad.Zero and type(d_output) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  d_out = ragged_all_to_all_p.bind(ad.instantiate(d_operand), ad.instantiate(d_output),
                                   *rest, **params)
  return out, d_out


def _transpose(ct, operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
               *, axis_name, axis_index_groups):
  """The rows sent come back along the same slices; the rows of ``output``
  that received something get no cotangent."""
  import purejax.numpy as jnp
  if type(ct) is ad.Zero:
    return [ad.Zero(operand.aval) if ad.is_undefined_primal(operand) else None,
            ad.Zero(output.aval) if ad.is_undefined_primal(output) else None, None, None,
            None, None]
  ct = ad.instantiate(ct)
  landed = parallel.all_to_all(output_offsets, axis_name, 0, 0, tiled=True)
  taken = parallel.all_to_all(input_offsets, axis_name, 0, 0, tiled=True)
  operand_aval = operand.aval if ad.is_undefined_primal(operand) else core.get_aval(operand)
  operand_ct = ragged_all_to_all_p.bind(
      ct, jnp.zeros(operand_aval.shape, operand_aval.dtype), landed, recv_sizes, taken,
      send_sizes, axis_name=axis_name, axis_index_groups=axis_index_groups)
  rows = jnp.arange(ct.shape[0])[:, None]
  received = jnp.any((landed[None, :] <= rows) & (rows < landed[None, :] + recv_sizes[None, :]),
                     axis=1)
  received = received.reshape(received.shape + (1,) * (ct.ndim - 1))
  output_ct = jnp.where(received, jnp.zeros_like(ct), ct)
  return [operand_ct if ad.is_undefined_primal(operand) else None,
          output_ct if ad.is_undefined_primal(output) else None, None, None, None, None]


ragged_all_to_all_p = _collective("ragged_all_to_all", _abstract_eval, _batch,
                                  lambda params: _as_names(params["axis_name"]))
ragged_all_to_all_p.jvp = _jvp
ragged_all_to_all_p.transpose = _transpose


@ragged_all_to_all_p.def_impl
def _spmd_impl(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
               *, axis_name, axis_index_groups):
  names = _as_names(axis_name)
  mine = np.empty(4, object)   # one exchange for the four arrays
  for j, a in enumerate((operand, input_offsets, send_sizes, output_offsets)):
    mine[j] = np.asarray(a)
  values, k = parallel._gather_values(mine, names, axis_index_groups)
  operands, ins, sizes, outs = (np.stack([v[j] for v in values]) for j in range(4))
  got = _receive(np, operands, np.asarray(output)[None], ins, sizes, outs, np.array([k]))
  return np.ascontiguousarray(got[0])


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
  """Sends row slices of ``operand`` to the instances of ``axis_name`` (see
  the module docstring for which rows go where); returns ``output`` with
  the rows received written in."""
  groups = parallel._canonical_groups(axis_index_groups)
  _check_types(*(parallel._leaf_aval(a) for a in (
      operand, output, input_offsets, send_sizes, output_offsets, recv_sizes)))
  return ragged_all_to_all_p.bind(operand, output, input_offsets, send_sizes, output_offsets,
                                  recv_sizes, axis_name=_as_names(axis_name),
                                  axis_index_groups=groups)
