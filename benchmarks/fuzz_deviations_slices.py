"""Deviation (h) of benchmarks/fuzz_deviations.py: XLA merges a
dynamic_slice of a dynamic_slice (also a one-window gather of one, and one
through a broadcast) into one slice of the inner operand, clamping the
starts otherwise than two slices do; a fill-mode gather with a traced
index does not clamp the inner start to the operand's end at all.

So too the window that a scatter of one row (``v.at[jnp.array([i])]``, any
combiner, dropping out-of-bounds rows) reads from a dynamic_slice ``v``:
XLA writes that row at ``i`` clamped into ``v``, combined with the update
where ``i`` is in bounds and as it was read where not (the update is not
dropped, the row is: seed 154's index program 18, with x64; checked
against JAX over 144 starts, rows and axes)."""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.lax.structural import broadcast_in_dim_p as _BROADCAST


def merged(eqn, vals, prods, out, constant):
  """XLA's result of ``eqn`` (operands ``vals``, their producers ``prods``,
  which of them are known at compile time ``constant``) where it merges
  it with the dynamic_slice that made its operand; None elsewhere."""
  name = eqn.primitive.name
  if name.startswith("scatter"):
    return _scatter_of_one_row(eqn, vals, prods)
  if name == "dynamic_slice":
    outer = list(vals[1:]), eqn.params["slice_sizes"]
  elif name == "gather":
    if not constant[1]:
      filled = _fill_gather_of_slice(eqn, vals, prods, out)
      if filled is not None:
        return filled
    outer = _one_window(eqn, vals, constant[1])
  else:
    return None
  if outer is None or not prods[0]:
    return None
  starts, sizes = outer
  if prods[0][0] == "dynamic_slice":   # each axis its own
    inner, axes = prods[0], {d: d for d in range(np.ndim(vals[0]))}
  else:   # ... also through a broadcast (and a reshape that only moves
    # axes of length 1), which XLA first moves after the slice
    spread = _spread_slice(prods[0])
    if spread is None:
      return None
    inner, axes = spread
  # The inner start clamped against the outer window's room in the whole
  # operand, plus the outer start as it is; a start into a dimension of
  # length 1 can only be 0.
  x, inner_starts = _chain(inner)
  window = _result_shape(inner)
  sub_sizes = [sizes[axes[d]] if d in axes else 1 for d in range(len(window))]
  sub_starts = [starts[axes[d]] if d in axes else 0 for d in range(len(window))]
  piece = _slice(x, _merged_starts(x, inner_starts, window, sub_starts, sub_sizes), sub_sizes)
  kept = sorted(axes)
  piece = piece.reshape([sub_sizes[d] for d in kept])
  spread_out = numpy_backend.jit_impl(_BROADCAST)(
      piece, shape=tuple(sizes), broadcast_dimensions=tuple(axes[d] for d in kept),
      sharding=None)
  return spread_out.reshape(out.shape)


def _result_shape(prod):
  """The shape of the dynamic_slice ``prod``'s result."""
  return tuple(prod[1]["slice_sizes"])


def _spread_slice(prod):
  """(the dynamic_slice producer, {its axis of length > 1: the axis it
  becomes}) where ``prod`` broadcasts a dynamic_slice's result (also then
  reshaped, where the reshape only adds or drops axes of length 1); else
  None."""
  reshaped = None
  if prod[0] == "reshape":
    reshaped, prod = prod, prod[3][0]
    if not prod:
      return None
  if prod[0] != "broadcast_in_dim" or not prod[3][0] or prod[3][0][0] != "dynamic_slice":
    return None
  inner, dims = prod[3][0], prod[1]["broadcast_dimensions"]
  axes = {d: dims[d] for d, n in enumerate(_result_shape(inner)) if n > 1}
  if reshaped is not None:
    spread_shape, new_shape = np.shape(reshaped[2][0]), tuple(reshaped[1]["new_sizes"])
    long_before = [a for a, n in enumerate(spread_shape) if n > 1]
    long_after = [a for a, n in enumerate(new_shape) if n > 1]
    if [spread_shape[a] for a in long_before] != [new_shape[a] for a in long_after]:
      return None
    moved = dict(zip(long_before, long_after))
    axes = {d: moved[a] for d, a in axes.items()}
  return inner, axes


def _chain(prod):
  """The operand and starts of the one dynamic_slice XLA makes of the
  dynamic_slice ``prod`` (a producer) and the dynamic_slices under it,
  merged from the innermost out (seed 124's index program 13: three)."""
  x, starts = prod[2][0], prod[2][1:]
  inner = prod[3][0]
  if inner and inner[0] == "dynamic_slice":
    y, inner_starts = _chain(inner)
    return y, _merged_starts(y, inner_starts, np.shape(x), starts, prod[1]["slice_sizes"])
  return x, starts


def _slice(x, starts, sizes):
  from purejax._src.lax.slicing import dynamic_slice_p
  return numpy_backend.jit_impl(dynamic_slice_p)(x, *starts, slice_sizes=tuple(sizes))


def _merged_starts(x, starts, window, outer_starts, sizes):
  """(h) The starts in ``x`` of the dynamic_slice of ``sizes`` at
  ``outer_starts`` of the slice of ``x`` at ``starts`` (of shape
  ``window``), merged as XLA merges them: the inner start clamped in its
  own type (the bound converted to it), then converted to the outer start's
  type and added there, both wrapping (seed 92's index program 17: uint8
  starts 11 + 251 are 6)."""
  starts_merged = []
  with np.errstate(over="ignore"):
    for a, b, n, w, s in zip(starts, outer_starts, np.shape(x), window, sizes):
      a, b = np.asarray(a), np.asarray(b)
      bound = np.asarray(n - s).astype(a.dtype)
      first = np.minimum(np.maximum(a, np.zeros((), a.dtype)), bound)
      if w == n:   # a window of the whole axis: its start is dropped first (seed 175's
        first = np.zeros((), a.dtype)   # index program 8: inner start 4 of 5, window 5)
      # An outer slice as wide as the window starts at 0 there: XLA drops
      # its start (seed 96's index program 10).
      starts_merged.append(first if w in (1, s) else first.astype(b.dtype) + b)
  return starts_merged


def _one_window(eqn, vals, known_index):
  """(starts, sizes) over the operand's axes of a gather of one window,
  which XLA makes a dynamic_slice (seed 87's index program 9, with x64);
  in fill mode only for an index known at compile time and in bounds
  (seed 98's index program 15); None for other gathers."""
  from purejax._src.lax.gather import GatherScatterMode
  p, idx = eqn.params, np.asarray(vals[1])
  dn = p["dimension_numbers"]
  fill = p["mode"] == GatherScatterMode.FILL_OR_DROP and known_index
  if dn.operand_batching_dims or idx.size != len(dn.start_index_map) or not fill and p[
      "mode"] not in (GatherScatterMode.CLIP, GatherScatterMode.PROMISE_IN_BOUNDS):
    return None
  outer = [0] * np.ndim(vals[0])
  for k, d in enumerate(dn.start_index_map):
    outer[d] = idx.reshape(-1)[k]
    if fill and not 0 <= int(outer[d]) <= np.shape(vals[0])[d] - p["slice_sizes"][d]:
      return None
  return outer, p["slice_sizes"]


def _fill_gather_of_slice(eqn, vals, prods, out):
  """A fill-mode gather of one window (``jnp.take(v, j, mode='fill')``), its
  index traced, from the dynamic_slice ``v = x[s:s + w]``: where the index
  is in bounds, XLA reads ``x`` at ``max(s, 0) + j``, clamped into ``x``:
  the start is not clamped to ``len(x) - w`` first (seed 166's index
  program 18, with x64: ``s = 2`` into 8 elements, ``w = 7``, ``j = 1``
  reads ``x[3]``, not ``x[2]``; the model matched JAX over 864 starts and
  indices, int8 and int32, with and without x64).  None elsewhere."""
  from purejax._src.lax.gather import GatherScatterMode
  p, idx, inner = eqn.params, np.asarray(vals[1]), prods[0]
  dn = p["dimension_numbers"]
  if (p["mode"] != GatherScatterMode.FILL_OR_DROP or not inner or inner[0] != "dynamic_slice"
      or dn.operand_batching_dims or idx.size != len(dn.start_index_map)):
    return None
  x, starts, window = inner[2][0], inner[2][1:], inner[1]["slice_sizes"]
  n, sizes = np.shape(x), p["slice_sizes"]
  if any(d not in dn.start_index_map and window[d] != n[d] for d in range(len(n))):
    return None
  where = [0] * len(n)
  for k, d in enumerate(dn.start_index_map):
    j = int(idx.reshape(-1)[k])
    if not 0 <= j <= window[d] - sizes[d]:
      return None   # filled, as the program says
    where[d] = min(max(max(int(np.asarray(starts[d])), 0) + j, 0), n[d] - sizes[d])
  return _slice(x, [np.int64(w) for w in where], sizes).reshape(out.shape)


def _scatter_of_one_row(eqn, vals, prods):
  """XLA's result of a scatter of one row (indices of shape (1, 1), the
  rest of the operand's axes whole) into the result of a dynamic_slice;
  None for other scatters."""
  from purejax._src.lax.gather import GatherScatterMode
  p, (operand, indices, updates) = eqn.params, (np.asarray(v) for v in vals)
  dn = p["dimension_numbers"]
  if (not prods[0] or prods[0][0] != "dynamic_slice" or indices.shape != (1, 1)
      or p["mode"] != GatherScatterMode.FILL_OR_DROP or dn.operand_batching_dims
      or tuple(dn.inserted_window_dims) != tuple(dn.scatter_dims_to_operand_dims)
      or updates.shape[1:] != tuple(n for d, n in enumerate(operand.shape)
                                    if d not in dn.inserted_window_dims)):
    return None
  axis, index = dn.scatter_dims_to_operand_dims[0], indices[0, 0]
  sizes = list(operand.shape)
  sizes[axis] = 1
  outer_starts = [np.zeros((), index.dtype)] * operand.ndim
  outer_starts[axis] = index
  x, inner_starts = _chain(prods[0])
  row = _slice(x, _merged_starts(x, inner_starts, operand.shape, outer_starts, sizes), sizes)
  at = int(min(max(int(index), 0), operand.shape[axis] - 1))
  place = tuple(slice(at, at + 1) if d == axis else slice(None) for d in range(operand.ndim))
  result = operand.copy()
  result[place] = row
  if at != int(index):   # out of bounds: the row as read
    return result
  return numpy_backend.jit_impl(eqn.primitive)(result, indices, updates, **p)
