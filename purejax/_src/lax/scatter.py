"""Scatter: combine update windows into an operand at many start indices
(XLA's Scatter), and its family scatter-add/sub/mul/min/max.

The updates' axes are scatter axes (one per batch axis of the indices) and
window axes (``update_window_dims``, one per operand axis that is neither
in ``inserted_window_dims`` nor a batching axis).  A window that is partly
out of bounds is dropped whole (FILL_OR_DROP, PROMISE_IN_BOUNDS) or moved
inside (CLIP).  Repeated indices combine: adds accumulate, ``scatter``
keeps the last update, ``scatter_apply`` applies its function again.
"""
from typing import NamedTuple, Sequence

import numpy as np

from purejax._src import array_namespace, core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import complex_extremum, utils
from purejax._src.lax.families import check_same_dtypes, standard_primitive
from purejax._src.lax.gather import (
    GatherDimensionNumbers, GatherScatterMode, check_batching_dims, check_disjoint,
    check_index_dtype, check_sorted, check_sorted_in_range, check_unique, clamp_starts,
    full_starts, gather, in_bounds, index_vector_dim, window_positions)


class ScatterDimensionNumbers(NamedTuple):
  """How the axes of a scatter's operand, indices and updates correspond.

  As in JAX, the index vector is always the last axis of ``scatter_indices``.
  """
  update_window_dims: Sequence[int]
  inserted_window_dims: Sequence[int]
  scatter_dims_to_operand_dims: Sequence[int]
  operand_batching_dims: Sequence[int] = ()
  scatter_indices_batching_dims: Sequence[int] = ()


def _canonical_dnums(dnums):
  return ScatterDimensionNumbers(*[tuple(int(d) for d in f) for f in dnums])


def _window_shape(operand_shape, updates_shape, dn):
  """Each operand axis's window size (1 on inserted and batching axes)."""
  sizes, window = [], iter(dn.update_window_dims)
  for d in range(len(operand_shape)):
    if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
      sizes.append(1)
    else:
      sizes.append(updates_shape[next(window)])
  return tuple(sizes)


def _scatter_abstract_eval(operand, indices, updates, *, update_jaxpr, update_consts,
                           dimension_numbers, indices_are_sorted, unique_indices, mode):
  # As in JAX, the shape rule runs before the dtype rule.
  dn = dimension_numbers
  window_dims, inserted = dn.update_window_dims, dn.inserted_window_dims
  obatch, ibatch, to_operand = (dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                                dn.scatter_dims_to_operand_dims)
  rank = operand.ndim
  vector_dim = index_vector_dim("scatter", indices)
  expected = indices.ndim - 1 + len(window_dims)
  if updates.ndim != expected:
    raise TypeError(f"Updates tensor must be of rank {expected}; got {updates.ndim}.")
  check_sorted(window_dims, "scatter", "update_window_dims")
  check_unique(window_dims, "scatter", "update_window_dims")
  check_sorted_in_range(window_dims, updates.ndim, "scatter", "update_window_dims")
  check_sorted(inserted, "scatter", "inserted_window_dims")
  check_unique(inserted, "scatter", "inserted_window_dims")
  check_sorted_in_range(inserted, rank, "scatter", "inserted_window_dims")
  check_sorted(obatch, "scatter", "operand_batching_dims")
  check_unique(obatch, "scatter", "operand_batching_dims")
  check_sorted_in_range(obatch, rank, "scatter", "operand_batching_dims")
  check_disjoint(inserted, obatch, "scatter", "inserted_window_dims", "operand_batching_dims")
  check_disjoint(to_operand, obatch, "scatter", "scatter_dims_to_operand_dims",
                 "operand_batching_dims")
  check_batching_dims("scatter", "scatter_indices_batching_dims", operand, indices, obatch,
                      ibatch, vector_dim)
  scatter_axes = [d for d in range(updates.ndim) if d not in window_dims]
  oshape = tuple(operand.shape[d] for d in obatch)
  ushape = tuple(updates.shape[scatter_axes[d]] for d in ibatch)
  if oshape != ushape:
    raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                    f"dimensions to have the same shape, got {oshape} and {ushape}.")
  size = len(window_dims) + len(inserted) + len(obatch)
  if rank != size:
    raise TypeError(f"Scatter op has window of size {size}; doesn't match operand of "
                    f"rank {rank}.")
  if len(to_operand) != indices.shape[vector_dim]:
    raise TypeError(f"Scatter op has {len(to_operand)} elements in "
                    "scatter_dims_to_operand_dims and the bound of dimension "
                    f"index_vector_dim={vector_dim} of indices is "
                    f"{indices.shape[vector_dim]}. These two numbers must be equal")
  for i, d in enumerate(to_operand):
    if not 0 <= d < rank:
      raise TypeError("Invalid scatter_dims_to_operand_dims mapping; domain is "
                      f"[0, {rank}), got: {i}->{d}.")
  check_unique(to_operand, "scatter", "scatter_dims_to_operand_dims")
  bounds = [n for d, n in enumerate(operand.shape) if d not in inserted and d not in obatch]
  for i, d in enumerate(window_dims):
    if bounds[i] < updates.shape[d]:
      raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                      "bounds of the corresponding dimensions of operand. For dimension "
                      f"{d}, updates bound is {updates.shape[d]}, operand bound is "
                      f"{bounds[i]}.")
  for i, d in zip(range(vector_dim), scatter_axes):
    if updates.shape[d] != indices.shape[i]:
      raise TypeError("Bounds of the scatter dimensions of updates must be the same as the "
                      "bounds of the corresponding dimensions of scatter indices. For "
                      f"scatter dimension {d}, updates bound is {updates.shape[d]}, indices "
                      f"bound is {indices.shape[i]}.")
  if mode == GatherScatterMode.ONE_HOT:
    raise ValueError("scatter does not support mode GatherScatterMode.ONE_HOT")
  check_index_dtype(indices)
  check_same_dtypes("scatter", [operand, updates])
  return core.ShapedArray(operand.shape, operand.dtype, operand.weak_type)


# -- the NumPy implementation ----------------------------------------------------

def marked_positions(operand, indices, updates, dn, mode):
  """(flat positions, update values) of every update, both flat and in
  scatter order; the updates of a dropped window (out of bounds, not CLIP)
  at position -1.  Array operations only: on a GPU's arrays, nothing is
  read back to the host."""
  xp = array_namespace.of(operand, indices, updates)
  shape = operand.shape
  if operand.size == 0:   # nowhere to write (CLIP could not clamp into it)
    return xp.zeros(0, np.int64), updates.reshape(-1)[:0]
  window = _window_shape(shape, updates.shape, dn)
  starts = full_starts(indices, len(shape), dn.scatter_dims_to_operand_dims,
                       dn.operand_batching_dims, dn.scatter_indices_batching_dims)
  scatter_axes = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  values = np.transpose(updates, scatter_axes + list(dn.update_window_dims))
  if mode == GatherScatterMode.CLIP:
    return window_positions(shape, clamp_starts(starts, shape, window), window).reshape(-1), \
        values.reshape(-1)
  keep = in_bounds(starts, shape, window, dn.scatter_dims_to_operand_dims)
  positions = window_positions(shape, xp.where(keep[:, None], starts, 0), window)
  positions = xp.where(keep.reshape((-1,) + (1,) * len(window)), positions, -1)
  return positions.reshape(-1), values.reshape(-1)


def _placed(operand, indices, updates, dn, mode):
  """(flat positions, update values) of the windows that are written, both
  flat and in scatter order."""
  positions, values = marked_positions(operand, indices, updates, dn, mode)
  if mode != GatherScatterMode.CLIP:
    keep = positions >= 0
    if not keep.all():
      positions, values = positions[keep], values[keep]
  return positions, values


def _ufunc_impl(ufunc):
  def impl(operand, indices, updates, *, update_jaxpr, update_consts, dimension_numbers,
           indices_are_sorted, unique_indices, mode):
    out = operand.copy()   # C-contiguous (NumPy's and CuPy's): flat views write through
    positions, values = _placed(operand, indices, updates, dimension_numbers, mode)
    if ufunc in (np.maximum, np.minimum) and out.dtype.kind == "c":
      _complex_extremum_at(out.reshape(-1), positions, values, ufunc is np.maximum)
      return out
    with np.errstate(all="ignore"):
      if array_namespace.of(out) is np:
        ufunc.at(out.reshape(-1), positions, values)   # in scatter order
      else:
        _fold_in_rounds(ufunc, out.reshape(-1), positions, values)
    if ufunc in (np.maximum, np.minimum) and out.dtype.kind == "f":
      _order_signed_zeros(out.reshape(-1), operand.reshape(-1), positions, values,
                          ufunc is np.maximum)
    return out
  return impl


def _fold_in_rounds(ufunc, out, positions, values):
  """``ufunc.at(out, positions, values)`` for device arrays, whose ``at``
  (atomics) would fold repeated positions in a varying order: round ``r``
  folds the ``r``-th occurrence of each position, so every position sees
  its updates in scatter order, as NumPy's ``at`` (the same bits)."""
  for at in _rounds(positions):
    where = positions[at]
    out[where] = ufunc(out[where], values[at])


def _complex_extremum_at(out, positions, values, is_max):
  """XLA's complex max/min folds each update into ``out`` in scatter order
  (its rule keeps the new value on ties and NaNs: the order matters), one
  round per occurrence of a position."""
  for at in _rounds(positions):
    out[positions[at]] = complex_extremum.combine(out[positions[at]], values[at], is_max)


def _order_signed_zeros(out, operand, positions, values, is_max):
  """lax.max/min order -0.0 below +0.0 (NumPy's keep either on a tie): a
  zero result of max is +0.0 when any value folded into it was +0.0, of min
  -0.0 when any was -0.0."""
  wanted_sign = not is_max   # the sign bit of the zero that wins
  hit = (operand == 0) & (np.signbit(operand) == wanted_sign)
  hit[positions[(values == 0) & (np.signbit(values) == wanted_sign)]] = True
  fix = hit & (out == 0)
  out[fix] = -0.0 if wanted_sign else 0.0


def _rounds(positions):
  """Masks of ``positions``, round by round: round ``r`` holds each
  position's ``r``-th occurrence (no position twice in a round)."""
  counts = _occurrences(positions)
  for r in range(int(counts.max()) + 1 if counts.size else 0):
    yield counts == r


def _occurrences(positions):
  """For each position, how many earlier entries share it (0, 1, ...)."""
  xp = array_namespace.of(positions)
  order = array_namespace.stable_argsort(positions)
  ranked = positions[order]
  first = xp.ones(ranked.size, bool)
  first[1:] = ranked[1:] != ranked[:-1]
  starts = xp.flatnonzero(first)[xp.cumsum(first) - 1]   # of each entry's run
  counts = xp.empty_like(positions)
  counts[order] = xp.arange(ranked.size) - starts
  return counts


def _apply_jaxpr(jaxpr, consts, old, new):
  """The combiner jaxpr applied elementwise to two flat vectors."""
  from purejax._src.jaxpr import eval_jaxpr
  from purejax._src.vmap import vmap
  fun = vmap(lambda a, b: eval_jaxpr(jaxpr, list(consts), a, b)[0])
  return np.asarray(fun(old, new))


def _scatter_impl(operand, indices, updates, *, update_jaxpr, update_consts,
                  dimension_numbers, indices_are_sorted, unique_indices, mode):
  out = operand.copy()   # C-contiguous (NumPy's and CuPy's): flat views write through
  flat = out.reshape(-1)
  positions, values = _placed(operand, indices, updates, dimension_numbers, mode)
  if update_jaxpr is None:
    if array_namespace.of(out) is np:
      flat[positions] = values    # NumPy keeps the last of repeated positions
    else:   # a device's assignment keeps any of them: the last ones, alone
      last = _occurrences(positions[::-1])[::-1] == 0
      flat[positions[last]] = values[last]
    return out
  # A general combiner is applied once per occurrence, in rounds.
  for at in _rounds(positions):
    where = positions[at]
    flat[where] = _apply_jaxpr(update_jaxpr, update_consts, flat[where], values[at])
  return out


def _on_gpu_arrays(eqn):
  """Whether the implementation runs on a GPU's arrays (``impl_on_gpu_arrays``,
  see dot_general_p): not a general combiner (traced on the host) nor a
  complex max/min."""
  name = eqn.primitive.name
  if name == "scatter":
    return eqn.params["update_jaxpr"] is None
  return not (name in ("scatter-max", "scatter-min")
              and np.dtype(eqn.invars[0].aval.dtype).kind == "c")


def _primitive(name, impl):
  prim = standard_primitive(name, _scatter_abstract_eval, impl,
                            impl_on_gpu_arrays=_on_gpu_arrays)
  prim.c_code = None
  return prim


scatter_p = _primitive("scatter", _scatter_impl)
scatter_add_p = _primitive("scatter-add", _ufunc_impl(np.add))
scatter_sub_p = _primitive("scatter-sub", _ufunc_impl(np.subtract))
scatter_mul_p = _primitive("scatter-mul", _ufunc_impl(np.multiply))
scatter_min_p = _primitive("scatter-min", _ufunc_impl(np.minimum))
scatter_max_p = _primitive("scatter-max", _ufunc_impl(np.maximum))


# -- the combiner jaxprs (params printed as JAX prints them) ----------------------

_combiners = {}


def _trace_combiner(fun, dtype):
  from purejax._src.interpreters import partial_eval as pe
  aval = core.ShapedArray((), dtype)
  jaxpr, consts = pe.trace_to_jaxpr(lambda x, y: [fun(x, y)], [aval, aval])
  if any(isinstance(c, core.Tracer) for c in consts):
    raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                              "open an issue at https://github.com/jax-ml/jax.")
  return jaxpr, tuple(consts)


def _combiner(name, dtype):
  """The cached (jaxpr, consts) of lax.<name>(x, y) on scalars of ``dtype``."""
  key = (name, np.dtype(dtype))
  if key not in _combiners:
    from purejax._src.lax import api_elementwise as ew
    _combiners[key] = _trace_combiner(getattr(ew, name), dtype)
  return _combiners[key]


def _bind(prim, operand, indices, updates, dnums, combiner, indices_are_sorted,
          unique_indices, mode):
  jaxpr, consts = combiner if combiner is not None else (None, ())
  return utils.bind(prim, operand, indices, updates, update_jaxpr=jaxpr,
                    update_consts=consts, dimension_numbers=_canonical_dnums(dnums),
                    indices_are_sorted=bool(indices_are_sorted),
                    unique_indices=bool(unique_indices),
                    mode=GatherScatterMode.from_any(mode))


def _public(prim, combine_name, doc):
  def fun(operand, scatter_indices, updates, dimension_numbers, *,
          indices_are_sorted=False, unique_indices=False, mode=None):
    combiner = _combiner(combine_name, utils.aval(operand).dtype)
    return _bind(prim, operand, scatter_indices, updates, dimension_numbers, combiner,
                 indices_are_sorted, unique_indices, mode)
  fun.__name__ = fun.__qualname__ = prim.name.replace("-", "_")
  fun.__doc__ = doc + "\n\n``mode=None`` drops out-of-bounds windows (FILL_OR_DROP), as in JAX."
  return fun


scatter_add = _public(scatter_add_p, "add",
                      "``operand`` with ``updates`` added at the windows (repeats accumulate).")
scatter_sub = _public(scatter_sub_p, "sub", "``operand`` with ``updates`` subtracted at the "
                      "windows.")
scatter_mul = _public(scatter_mul_p, "mul", "``operand`` multiplied by ``updates`` at the "
                      "windows.")
scatter_min = _public(scatter_min_p, "min", "The minimum of ``operand`` and ``updates`` at "
                      "the windows.")
scatter_max = _public(scatter_max_p, "max", "The maximum of ``operand`` and ``updates`` at "
                      "the windows.")


def scatter(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted=False, unique_indices=False, mode=None):
  """``operand`` with the windows replaced by ``updates`` (of repeated
  indices, the last update wins, as XLA on CPU does).  ``mode=None`` drops
  out-of-bounds windows."""
  return _bind(scatter_p, operand, scatter_indices, updates, dimension_numbers, None,
               indices_are_sorted, unique_indices, mode)


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
  """``operand`` with the unary ``func`` applied at the windows (once per
  occurrence of an index).  Not differentiable, as in JAX."""
  from purejax._src.lax.creation import full
  dtype = utils.aval(operand).dtype
  placeholder = full(update_shape, 0, dtype)
  combiner = _trace_combiner(lambda x, _: func(x), dtype)
  return _bind(scatter_p, operand, scatter_indices, placeholder, dimension_numbers,
               combiner, indices_are_sorted, unique_indices, mode)


# -- differentiation ----------------------------------------------------------------

def _gather_dnums(dn):
  """The gather that reads what a scatter writes."""
  return GatherDimensionNumbers(
      offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
      start_index_map=dn.scatter_dims_to_operand_dims,
      operand_batching_dims=dn.operand_batching_dims,
      start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _shape(x):
  return x.aval.shape if ad.is_undefined_primal(x) else utils.aval(x).shape


def _read_back(x, indices, dn, operand_shape, updates_shape, **kwargs):
  """The windows of ``x`` a scatter with these numbers writes (updates' shape)."""
  return gather(x, indices, _gather_dnums(dn),
                _window_shape(operand_shape, updates_shape, dn), **kwargs)


def _zero_tangent(out):
  return ad.Zero(ad.tangent_aval(core.get_aval(out)))


def _addsub_jvp(prim):
  def rule(primals, tangents, **params):
    operand, indices, updates = primals
    out = prim.bind(operand, indices, updates, **params)
    g_operand, _, g_updates = tangents
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
      return out, _zero_tangent(out)
    return out, prim.bind(ad.instantiate(g_operand), indices, ad.instantiate(g_updates),
                          **params)
  return rule


def _addsub_transpose(prim):
  def rule(ct, operand, indices, updates, *, dimension_numbers, mode, **params):
    from purejax import lax
    ct_operand = ct_updates = None
    if ad.is_undefined_primal(operand):
      ct_operand = ad.Zero(operand.aval) if type(ct) is ad.Zero else ct
    if ad.is_undefined_primal(updates):
      if type(ct) is ad.Zero:
        ct_updates = ad.Zero(updates.aval)
      else:
        ct_updates = _read_back(ct, indices, dimension_numbers, _shape(operand),
                                _shape(updates), mode=mode, fill_value=0)
        if prim is scatter_sub_p:
          ct_updates = lax.neg(ct_updates)
    return [ct_operand, None, ct_updates]
  return rule


for _p in (scatter_add_p, scatter_sub_p):
  _p.jvp = _addsub_jvp(_p)
  _p.transpose = _addsub_transpose(_p)
  _p.is_linear = True


def _check_unique_for_mul(unique_indices):
  if not unique_indices:
    raise NotImplementedError(
        "scatter_mul gradients are only implemented if `unique_indices=True`")


@scatter_mul_p.def_jvp
def _scatter_mul_jvp(primals, tangents, **params):
  from purejax import lax
  operand, indices, updates = primals
  out = scatter_mul_p.bind(operand, indices, updates, **params)
  g_operand, _, g_updates = tangents
  total = _zero_tangent(out)
  if type(g_operand) is not ad.Zero:
    total = scatter_mul_p.bind(g_operand, indices, updates, **params)
  if type(g_updates) is not ad.Zero:
    _check_unique_for_mul(params["unique_indices"])
    spread = scatter_add(lax.full_like(operand, 0), indices, g_updates,
                         params["dimension_numbers"],
                         indices_are_sorted=params["indices_are_sorted"],
                         unique_indices=True, mode=params["mode"])
    total = ad.add_tangents(total, lax.mul(operand, spread))
  return out, total


@scatter_mul_p.def_transpose
def _scatter_mul_transpose(ct, operand, indices, updates, *, dimension_numbers, mode,
                           indices_are_sorted, unique_indices, **params):
  from purejax import lax
  ct_operand = ct_updates = None
  if ad.is_undefined_primal(operand):
    ct_operand = scatter_mul(ct, indices, updates, dimension_numbers,
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)
  if ad.is_undefined_primal(updates):
    _check_unique_for_mul(unique_indices)
    ct_updates = _read_back(lax.mul(ct, operand), indices, dimension_numbers,
                            _shape(operand), _shape(updates), mode=mode, fill_value=0)
  return [ct_operand, None, ct_updates]


def _extremum_jvp(prim):
  """min/max: the tangent of the winning value; ties (among updates and the
  operand) share it equally, as in JAX."""

  def rule(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices,
           mode, **params):
    from purejax import lax
    operand, indices, updates = primals
    dn = dimension_numbers
    out = prim.bind(operand, indices, updates, dimension_numbers=dn, mode=mode,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                    **params)
    g_operand, _, g_updates = tangents
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
      return out, _zero_tangent(out)
    g_operand, g_updates = ad.instantiate(g_operand), ad.instantiate(g_updates)
    shapes = (utils.aval(operand).shape, utils.aval(updates).shape)
    read = lambda x: _read_back(x, indices, dn, *shapes)   # noqa: E731
    ones, zeros = lax.full_like(updates, 1), lax.full_like(updates, 0)
    won = lax.eq(updates, read(out))
    kept = lax.eq(read(operand), read(out))
    count = lambda u: read(scatter_add(lax.full_like(operand, 0), indices, u, dn))  # noqa
    n_won, n_refs = count(lax.select(won, ones, zeros)), count(ones)
    # Dividing by a count of 0 happens only where the quotient is unused
    # (losing or dropped updates): 1 there avoids the division by zero.
    n_refs = lax.max(n_refs, ones)
    share = lax.select(kept, lax.div(ones, lax.add(n_won, ones)),
                       lax.div(ones, lax.max(n_won, ones)))
    update_coef = lax.select(won, share, zeros)
    operand_share = lax.select(kept, lax.div(ones, lax.add(n_won, ones)), zeros)
    operand_coef = lax.div(lax.sub(operand_share, ones), n_refs)
    moved = lax.add(lax.mul(read(g_operand), operand_coef), lax.mul(g_updates, update_coef))
    tangent = scatter_add(g_operand, indices, moved, dn, indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode)
    return out, tangent

  return rule


scatter_min_p.jvp = _extremum_jvp(scatter_min_p)
scatter_max_p.jvp = _extremum_jvp(scatter_max_p)


def _id_dtype(n):
  return np.dtype(np.uint32) if n < 2 ** 32 else np.dtype(np.uint64)


@scatter_p.def_jvp
def _scatter_jvp(primals, tangents, *, update_jaxpr, update_consts, dimension_numbers,
                 indices_are_sorted, unique_indices, mode):
  from purejax import lax
  if update_jaxpr is not None:
    raise NotImplementedError("scatter_apply JVP not implemented")
  operand, indices, updates = primals
  dn = dimension_numbers
  kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
  g_operand, _, g_updates = tangents
  g_operand, g_updates = ad.instantiate(g_operand), ad.instantiate(g_updates)
  if unique_indices:
    return (scatter(operand, indices, updates, dn, **kw),
            scatter(g_operand, indices, g_updates, dn, **kw))
  # With repeated indices one update wins: tag each update with an id, scatter
  # the ids, and keep the updates (and operand entries) whose id survived.
  # Primal and tangent then are plain scatter-adds.
  ushape = utils.aval(updates).shape
  ids_shape = tuple(1 if d in dn.update_window_dims else n for d, n in enumerate(ushape))
  n_ids = int(np.prod(ids_shape, dtype=np.int64))
  dtype = _id_dtype(n_ids)
  ids = lax.add(lax.reshape(lax.iota(dtype, n_ids), ids_shape), np.array(1, dtype))
  ids = lax.broadcast_in_dim(ids, ushape, tuple(range(len(ushape))))
  scattered = scatter(lax.full(utils.aval(operand).shape, 0, dtype), indices, ids, dn, **kw)
  survived = lax.eq(ids, _read_back(scattered, indices, dn, utils.aval(operand).shape, ushape))
  untouched = lax.eq(scattered, lax.full_like(scattered, 0))
  keep_operand = lambda x: lax.select(untouched, x, lax.full_like(x, 0))   # noqa: E731
  keep_updates = lambda u: lax.select(survived, u, lax.full_like(u, 0))   # noqa: E731
  out = scatter_add(keep_operand(operand), indices, keep_updates(updates), dn, **kw)
  tangent = scatter_add(keep_operand(g_operand), indices, keep_updates(g_updates), dn, **kw)
  return out, tangent


@scatter_p.def_transpose
def _scatter_transpose(ct, operand, indices, updates, *, update_jaxpr, update_consts,
                       dimension_numbers, indices_are_sorted, unique_indices, mode):
  from purejax import lax
  if not unique_indices:
    raise NotImplementedError("scatter transpose is only implemented where "
                              "unique_indices=True")
  dn = dimension_numbers
  ct_operand = ct_updates = None
  if ad.is_undefined_primal(operand):
    # The overwritten entries get nothing back.
    zeros = lax.full(_shape(updates), 0, utils.aval(ct).dtype)
    ct_operand = scatter(ct, indices, zeros, dn, indices_are_sorted=indices_are_sorted,
                         unique_indices=True, mode=mode)
  if ad.is_undefined_primal(updates):
    ct_updates = _read_back(ct, indices, dn, _shape(operand), _shape(updates), mode=mode,
                            fill_value=0)
  return [ct_operand, None, ct_updates]


scatter_p.is_linear = True


# -- batching -------------------------------------------------------------------------

def _shift(dims):
  return tuple(d + 1 for d in dims)


def _scatter_batch(prim):
  def rule(axis_size, vals, dims, *, dimension_numbers, **params):
    operand, indices, updates = vals
    od, idim, ud = dims
    dn = dimension_numbers
    operand = batching.bdim_at_front(operand, od, axis_size)
    updates = batching.bdim_at_front(updates, ud, axis_size)
    if idim is None:
      # The batch axis is one more window axis.
      new = ScatterDimensionNumbers(
          update_window_dims=(0,) + _shift(dn.update_window_dims),
          inserted_window_dims=_shift(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=_shift(dn.operand_batching_dims),
          scatter_indices_batching_dims=tuple(dn.scatter_indices_batching_dims))
    else:
      # Pair the batch axes of operand and indices as batching dims.
      indices = batching.bdim_at_front(indices, idim, axis_size)
      new = ScatterDimensionNumbers(
          update_window_dims=_shift(dn.update_window_dims),
          inserted_window_dims=_shift(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
          scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims))
    return prim.bind(operand, indices, updates, dimension_numbers=new, **params), 0
  return rule


for _p in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
           scatter_max_p):
  _p.batch = _scatter_batch(_p)
