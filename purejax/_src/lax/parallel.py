"""Collectives: psum, pmean, pmax, pmin, all_gather, axis_index,
psum_scatter, ppermute (all_to_all: ``parallel_all_to_all``).

A collective communicates across the instances of a mapped axis, named by
``axis_name``.  Under ``vmap(f, axis_name='i')`` all instances run at once
as one batched computation, so a collective over 'i' is an ordinary array
operation on the batch axis: the batching rule is where the communication
happens.  A name bound by an enclosing vmap passes through an inner one (the
rule re-binds the collective one level out).

The primitives know nothing of vmap: their batching rules take the mapping
trace's ``axis_name`` and ``axis_size``, and their shape, JVP and transpose
rules are those of the collective itself, so a pmap interpreter can reuse
them.  ``psum``/``pmax``/``pmin`` also take positional (int) axes, which
reduce like ``reduce_sum``: a named axis turns into one once vmap batches it.
"""
import functools

import numpy as np

from purejax._src import core
from purejax._src import spmd
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax import utils
from purejax._src.lax.api_elementwise import add, mul
from purejax._src.lax.convert import convert_element_type
from purejax._src.lax.creation import full, iota
from purejax._src.lax.elementwise import mul_p
from purejax._src.lax.reductions import (
    _check_axes, reduce_max_p, reduce_min_p, reduce_sum, reduce_sum_p)
from purejax._src.lax.structural import broadcast_in_dim, concatenate, reshape
from purejax._src.lax.slicing import slice_in_dim

_GROUPS_IN_VMAP = ("axis_index_groups not supported in vmap collectives. "
                   "Please open a feature request!")


# -- axis names ---------------------------------------------------------------

def _as_names(axis_name):
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _is_positional(axis):
  return isinstance(axis, int)


def _split_axes(axes):
  """(named axes, positional axes) of a reduction's ``axes``."""
  return (tuple(a for a in axes if not _is_positional(a)),
          tuple(a for a in axes if _is_positional(a)))


def _axis_size(names):
  """The number of instances across ``names`` (the API-level lookup)."""
  env = core.axis_env()
  size = 1
  for name in names:
    if name not in env:
      raise NameError(f"unbound axis name: {name}")
    size *= env[name]
  return size


def _check_bound(names, api_name):
  """Shape rules check their names: tracing a collective needs them bound."""
  env = core.axis_env()
  for name in names:
    if not _is_positional(name) and name not in env:
      raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                      f"{api_name} under `jax.shard_map`.")


def _unbound_impl(name):
  def impl(*args, axis_name, **params):
    raise NameError(f"unbound axis name: {_as_names(axis_name)[0]}")
  impl.__name__ = f"_{name}_impl"
  return impl

def _collective(name, abstract_eval, batch, axis_names, transpose=None):
  """A collective primitive: it has no meaning outside a mapped axis (its
  impl raises), batches over the named axis (the rule needs the trace) and,
  if ``transpose`` is given, is linear."""
  prim = core.Primitive(name)
  prim.impl = _unbound_impl(name)
  prim.abstract_eval = abstract_eval
  batch.needs_trace = True
  prim.batch = batch
  prim.axis_names = axis_names
  if transpose is not None:
    ad.deflinear(prim, transpose)
  return prim



def _canonical_groups(axis_index_groups, names=None):
  """JAX's checks on ``axis_index_groups``; they are accepted here, and
  refused by the vmap rules (with JAX's NotImplementedError)."""
  if axis_index_groups is None:
    return None
  if names is not None and any(_is_positional(a) for a in names):
    raise ValueError("axis_index_groups only supported for sums over just named axes")
  groups = tuple(tuple(g) for g in axis_index_groups)
  if {i for g in groups for i in g} != set(range(sum(map(len, groups)))):
    raise ValueError("axis_index_groups must cover all indices exactly once")
  return groups


def _leaf_aval(x):
  try:
    return core.get_aval(x)
  except TypeError:
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type") from None


def _scale(size, x):
  """``size * x`` with ``size`` a constant of x's dtype (a literal in jaxprs)."""
  return mul_p.bind(np.array(size, _leaf_aval(x).dtype), x)


# -- psum, pmax, pmin ---------------------------------------------------------------

def _allreduce_abstract_eval(operand, *, axes, axis_index_groups):
  named, positional = _split_axes(axes)
  _check_bound(named, "psum")
  if axis_index_groups is not None and positional:
    raise ValueError(f"axis_index_groups can only be used with reductions over "
                     f"named axes, but got: {axes}")
  _check_axes(operand, positional)
  shape = tuple(d for i, d in enumerate(operand.shape) if i not in positional)
  return core.ShapedArray(shape, operand.dtype)


def _allreduce_impl(reducer):
  def impl(x, *, axes, axis_index_groups):
    named, positional = _split_axes(axes)
    if named:   # the shape rule refuses these first, when tracing
      raise NameError(f"unbound axis name: {named[0]}")
    return reducer.impl(x, axes=positional)
  return impl


def _allreduce_batch(prim, if_unmapped):
  """A reduction over the trace's axis reduces the batch axis (the result is
  the same in every instance: unbatched).  ``if_unmapped(x, size)`` is the
  reduction of a value that is the same in every instance."""

  def rule(trace, vals, dims, *, axes, axis_index_groups):
    (x,), (d,) = vals, dims
    here = trace.axis_name in axes
    if here and axis_index_groups is not None:
      raise NotImplementedError(_GROUPS_IN_VMAP)
    if d is not_mapped:    # only called when ``here``
      rest = tuple(a for a in axes if a != trace.axis_name)
      if rest:
        x = prim.bind(x, axes=rest, axis_index_groups=None)
      return if_unmapped(x, trace.axis_size), not_mapped
    if not here and not any(map(_is_positional, axes)):
      return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), d
    if axis_index_groups is not None:
      raise NotImplementedError(_GROUPS_IN_VMAP)
    # Batch axis first; positional axes shift past it; our name becomes it.
    x = batching.moveaxis(x, d, 0)
    axes = tuple(a + 1 if _is_positional(a) else 0 if a == trace.axis_name else a
                 for a in axes)
    return prim.bind(x, axes=axes, axis_index_groups=None), (not_mapped if here else 0)

  rule.needs_trace = True
  return rule


def _allreduce(name, reducer, if_unmapped):
  prim = core.Primitive(name)
  prim.impl = _allreduce_impl(reducer)
  prim.abstract_eval = _allreduce_abstract_eval
  prim.batch = _allreduce_batch(prim, if_unmapped)
  prim.axis_names = lambda params: _split_axes(params["axes"])[0]
  return prim


psum_p = _allreduce("psum", reduce_sum_p, lambda x, size: _scale(size, x))
pmax_p = _allreduce("pmax", reduce_max_p, lambda x, size: x)
pmin_p = _allreduce("pmin", reduce_min_p, lambda x, size: x)
# pmax/pmin have no JVP rule, as in JAX.


def _psum_transpose(ct, x, *, axes, axis_index_groups):
  named, positional = _split_axes(axes)
  if positional:
    shape = x.aval.shape
    ct = broadcast_in_dim(ct, shape, tuple(i for i in range(len(shape))
                                           if i not in positional))
  # Each instance's output is the sum of all inputs, so each input's
  # cotangent is the sum of all output cotangents: psum again.
  return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


ad.deflinear(psum_p, _psum_transpose)


# -- pvary and psum_invariant: shard_map(check_vma=True)'s typed pair --------------------
# Inside a check_vma body every value is typed by the mesh axes it varies
# over (vma.py).  pvary casts an invariant value to varying (no data moves)
# and psum_invariant sums a varying value into an invariant one; each is the
# other's transpose, so gradients respect replication.  psum_p keeps its
# untyped meaning (transpose = psum), used where vma is not tracked.

def _pvary_abstract_eval(operand, *, axes):
  _check_bound(axes, "pvary")
  return operand


def _pvary_batch(trace, vals, dims, *, axes):
  (x,), (d,) = vals, dims
  rest = tuple(a for a in axes if a != trace.axis_name)
  return (pvary_p.bind(x, axes=rest) if rest else x), d


def _pvary_transpose(ct, x, *, axes):
  return [psum_invariant_p.bind(ct, axes=axes)]


pvary_p = _collective("pvary", _pvary_abstract_eval, _pvary_batch,
                      lambda params: params["axes"], transpose=_pvary_transpose)


def _psum_invariant_abstract_eval(operand, *, axes):
  _check_bound(axes, "psum")
  return operand


def _psum_invariant_batch(trace, vals, dims, *, axes):
  (x,), (d,) = vals, dims
  if trace.axis_name not in axes:
    return psum_invariant_p.bind(x, axes=axes), d
  y = _scale(trace.axis_size, x) if d is not_mapped else reduce_sum(x, (d,))
  rest = tuple(a for a in axes if a != trace.axis_name)
  return (psum_invariant_p.bind(y, axes=rest) if rest else y), not_mapped


def _psum_invariant_transpose(ct, x, *, axes):
  return [pvary_p.bind(ct, axes=axes)]


psum_invariant_p = _collective("psum_invariant", _psum_invariant_abstract_eval,
                               _psum_invariant_batch, lambda params: params["axes"],
                               transpose=_psum_invariant_transpose)

_PCAST_TO = ("unreduced", "reduced", "varying")


def pcast(x, axis_name, *, to):
  """Changes the varying-manual-axes type of ``x`` (a pytree) over
  ``axis_name`` inside ``shard_map(check_vma=True)``: ``to='varying'`` binds
  ``pvary`` on an invariant value.  Differs from JAX: purejax has no
  reduced/unreduced types, so those casts return ``x`` unchanged."""
  from purejax._src import vma
  if isinstance(axis_name, (set, frozenset)):
    raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
  axes = _as_names(axis_name)
  if not axes:
    return x
  if to not in _PCAST_TO:
    raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                     f"{set(_PCAST_TO)}")
  if to != "varying":
    return x
  _axis_size(axes)
  return tree_util.tree_map(lambda leaf: vma.pcast_varying(leaf, axes), x)


def _to_int_if_bool(x):
  if _leaf_aval(x).dtype == np.bool_:
    return convert_element_type(x, np.int32)
  return x


def _constant_psum(x, axes, groups):
  """psum of a value that is not traced: the same in every instance."""
  named, positional = _split_axes(axes)
  size = len(groups[0]) if groups is not None else _axis_size(named)
  if positional:
    ndim = _leaf_aval(x).ndim
    x = reduce_sum(x, tuple(utils.canonicalize_axis(a, ndim) for a in positional))
  if type(x) in (int, float, complex):
    return x * size   # Python scalars stay weakly typed Python scalars
  return _scale(size, x)


def psum(x, axis_name, *, axis_index_groups=None):
  """Sums ``x`` (a pytree) over the instances of the mapped axis ``axis_name``
  (a name or a tuple of names)."""
  axes = _as_names(axis_name)
  if not axes:
    return x
  groups = _canonical_groups(axis_index_groups, axes)
  leaves, tree = tree_util.tree_flatten(x)
  leaves = [_to_int_if_bool(leaf) for leaf in leaves]
  if not any(isinstance(leaf, core.Tracer) for leaf in leaves):
    out = [_constant_psum(leaf, axes, groups) for leaf in leaves]
  else:
    out = [psum_p.bind(leaf, axes=axes, axis_index_groups=groups) for leaf in leaves]
  return tree_util.tree_unflatten(tree, out)


def pmean(x, axis_name, *, axis_index_groups=None):
  """The mean of ``x`` over the instances of the mapped axis ``axis_name``."""
  x = psum(x, axis_name, axis_index_groups=axis_index_groups)
  n = psum(1, axis_name, axis_index_groups=axis_index_groups)
  return tree_util.tree_map(lambda v: v / n, x)   # true division, as jnp's


def _bind_reduction(prim, x, axis_name, axis_index_groups):
  axes = _as_names(axis_name)
  groups = _canonical_groups(axis_index_groups, axes)
  return tree_util.tree_map(
      lambda leaf: prim.bind(leaf, axes=axes, axis_index_groups=groups), x)


def pmax(x, axis_name, *, axis_index_groups=None):
  """The maximum of ``x`` over the instances of the mapped axis ``axis_name``."""
  return _bind_reduction(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
  """The minimum of ``x`` over the instances of the mapped axis ``axis_name``."""
  return _bind_reduction(pmin_p, x, axis_name, axis_index_groups)


def axis_size(axis_name):
  """The number of instances of the mapped axis (or axes) ``axis_name``."""
  return psum(1, axis_name)


# -- the vmap rules of the other collectives: shared checks -----------------------------

def _single_name_here(trace, axis_name, axis_index_groups, axis_size=None):
  """Whether the rule's trace maps one of ``axis_name`` (then it must be the
  only one: several names at once are not supported under vmap)."""
  if trace.axis_name not in axis_name:
    return False
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups not supported in vmap")
  if len(axis_name) > 1:
    raise NotImplementedError(
        f"a collective over several axis names {axis_name} is not supported "
        "under vmap. Please open a feature request!")
  if axis_size is not None and axis_size != trace.axis_size:
    raise ValueError(f"collective over axis {trace.axis_name!r} of size "
                     f"{trace.axis_size} was traced for size {axis_size}")
  return True


def _fold(x, axis):
  """Merges axes ``axis`` and ``axis + 1``."""
  shape = list(core.get_aval(x).shape)
  shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
  return reshape(x, tuple(shape))


def _split(x, axis, factor):
  """Splits axis ``axis`` into (factor, size // factor)."""
  shape = list(core.get_aval(x).shape)
  shape[axis:axis + 1] = [factor, shape[axis] // factor]
  return reshape(x, tuple(shape))


# -- all_gather and psum_scatter (each other's transpose) ------------------------------

def _all_gather_abstract_eval(operand, *, all_gather_dimension, axis_name,
                              axis_index_groups, axis_size, tiled):
  _check_bound(axis_name, "all_gather")
  shape = list(operand.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return core.ShapedArray(tuple(shape), operand.dtype, operand.weak_type)


def _all_gather_batch(trace, vals, dims, *, all_gather_dimension, axis_name,
                      axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  dim = all_gather_dimension
  if not _single_name_here(trace, axis_name, axis_index_groups, axis_size):
    # Another axis's gather: shift around our batch axis.
    if d <= dim:
      dim += 1
    elif not tiled:
      d += 1
    return all_gather_p.bind(x, all_gather_dimension=dim, axis_name=axis_name,
                             axis_index_groups=axis_index_groups,
                             axis_size=axis_size, tiled=tiled), d
  # Every instance gets the whole batch, with the batch axis at ``dim``.
  if d is not_mapped:
    y = batching.broadcast(x, trace.axis_size, dim)
  else:
    y = batching.moveaxis(x, d, dim)
  return (_fold(y, dim) if tiled else y), not_mapped



def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name,
                          axis_index_groups, axis_size, tiled):
  return [reduce_scatter_p.bind(ct, scatter_dimension=all_gather_dimension,
                                axis_name=axis_name, axis_index_groups=axis_index_groups,
                                axis_size=axis_size, tiled=tiled)]


all_gather_p = _collective("all_gather", _all_gather_abstract_eval, _all_gather_batch, lambda params: params["axis_name"],
                        transpose=_all_gather_transpose)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
  """Every instance gets the values of ``x`` from all instances of
  ``axis_name``, stacked along a new axis ``axis`` (or concatenated along
  ``axis`` if ``tiled``)."""
  names = _as_names(axis_name)
  if not names:
    return x
  groups = _canonical_groups(axis_index_groups)
  size = len(groups[0]) if groups is not None else _axis_size(names)

  def bind(leaf):
    ndim = _leaf_aval(leaf).ndim
    return all_gather_p.bind(
        leaf, all_gather_dimension=utils.canonicalize_axis(axis, ndim if tiled else ndim + 1),
        axis_name=names, axis_index_groups=groups, axis_size=size, tiled=tiled)

  return tree_util.tree_map(bind, x)


def _reduce_scatter_abstract_eval(operand, *, scatter_dimension, axis_name,
                                  axis_index_groups, axis_size, tiled):
  _check_bound(axis_name, "reduce_scatter")
  shape = _reduce_scatter_shape(operand.shape, scatter_dimension, axis_size, tiled)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _reduce_scatter_shape(shape, dim, axis_size, tiled):
  shape, size = list(shape), shape[dim]
  if tiled:
    if size % axis_size:
      raise ValueError(f"tiled reduce_scatter operand scatter dimension size {size} "
                       f"must be divisible by shard_count {axis_size}")
    shape[dim] = size // axis_size
  else:
    if size != axis_size:
      raise ValueError(f"reduce_scatter operand scatter dimension size {size} must "
                       f"match shard count {axis_size}")
    del shape[dim]
  return tuple(shape)


def _reduce_scatter_batch(trace, vals, dims, *, scatter_dimension, axis_name,
                          axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  dim = scatter_dimension
  if not _single_name_here(trace, axis_name, axis_index_groups, axis_size):
    if d <= dim:
      dim += 1
    elif not tiled:
      d -= 1    # the scattered axis before it goes away
    return reduce_scatter_p.bind(x, scatter_dimension=dim, axis_name=axis_name,
                                 axis_index_groups=axis_index_groups,
                                 axis_size=axis_size, tiled=tiled), d
  # Sum over the instances; instance k keeps block k of axis ``dim``, so
  # that axis (split into blocks if tiled) becomes the batch axis.
  if d is not_mapped:
    y = _scale(trace.axis_size, x)
  else:
    y = reduce_sum(x, (d,))
  return (_split(y, dim, trace.axis_size) if tiled else y), dim



def _reduce_scatter_transpose(ct, x, *, scatter_dimension, axis_name,
                              axis_index_groups, axis_size, tiled):
  return [all_gather_p.bind(ct, all_gather_dimension=scatter_dimension,
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)]


reduce_scatter_p = _collective("reduce_scatter", _reduce_scatter_abstract_eval, _reduce_scatter_batch, lambda params: params["axis_name"],
                        transpose=_reduce_scatter_transpose)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
  """psum, but instance k keeps only block k of axis ``scatter_dimension``
  (that axis has one entry per instance, or is split into equal blocks if
  ``tiled``)."""
  names = _as_names(axis_name)
  if not names:
    return x
  groups = _canonical_groups(axis_index_groups)
  size = len(groups[0]) if groups is not None else _axis_size(names)

  def bind(leaf):
    aval = _leaf_aval(leaf)
    dim = utils.canonicalize_axis(scatter_dimension, aval.ndim)
    _reduce_scatter_shape(aval.shape, dim, size, tiled)   # vmap's rule won't check
    return reduce_scatter_p.bind(leaf, scatter_dimension=dim, axis_name=names,
                                 axis_index_groups=groups, axis_size=size, tiled=tiled)

  return tree_util.tree_map(bind, x)


# -- axis_index -------------------------------------------------------------------------

def _axis_index_abstract_eval(*, axis_name):
  _check_bound((axis_name,), "axis_index")
  return core.ShapedArray((), np.dtype(np.int32))


def _axis_index_batch(trace, vals, dims, *, axis_name):
  if trace.axis_name != axis_name:
    return axis_index_p.bind(axis_name=axis_name), not_mapped
  return iota(np.int32, trace.axis_size), 0


axis_index_p = _collective("axis_index", _axis_index_abstract_eval, _axis_index_batch, lambda params: (params["axis_name"],))
# No operands, so nothing to differentiate.


def axis_index(axis_name):
  """This instance's index along the mapped axis ``axis_name`` (int32); for a
  tuple of names, the index into their product, the last name minor."""
  if not isinstance(axis_name, (tuple, list)):
    return axis_index_p.bind(axis_name=axis_name)
  index, stride = np.int32(0), 1
  for name in reversed(axis_name):
    index = add(index, mul(axis_index(name), np.int32(stride)))
    stride *= axis_size(name)
  return index


# -- ppermute ---------------------------------------------------------------------------

def _ppermute_abstract_eval(operand, *, axis_name, perm):
  _check_bound(axis_name, "ppermute")
  return operand


def _permute_axis(x, d, perm, size):
  """Entry ``dst`` of axis ``d`` is entry ``src`` of ``x``, for (src, dst) in
  ``perm``; zeros where no source is given.  Built from slices of runs of
  consecutive sources (a cyclic shift is two slices)."""
  source = dict((dst, src) for src, dst in perm)
  pieces, dst = [], 0
  while dst < size:
    src, run = source.get(dst), 1
    while dst + run < size and source.get(dst + run) == (None if src is None else src + run):
      run += 1
    if src is None:
      shape = list(core.get_aval(x).shape)
      shape[d] = run
      pieces.append(full(tuple(shape), 0, core.get_aval(x).dtype))
    else:
      pieces.append(slice_in_dim(x, src, src + run, axis=d))
    dst += run
  return pieces[0] if len(pieces) == 1 else concatenate(pieces, d)


def _ppermute_batch(trace, vals, dims, *, axis_name, perm):
  (x,), (d,) = vals, dims
  if not _single_name_here(trace, axis_name, None):
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
  _check_perm(perm, trace.axis_size)
  if d is not_mapped:
    if len(perm) == trace.axis_size:
      return x, not_mapped          # a permutation of equal values
    x, d = batching.broadcast(x, trace.axis_size, 0), 0
  return _permute_axis(x, d, perm, trace.axis_size), d



def _check_perm(perm, size):
  srcs, dsts = [p[0] for p in perm], [p[1] for p in perm]
  if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
    raise ValueError(f"ppermute sources and destinations must be unique, got {perm}")
  if any(not 0 <= i < size for i in srcs + dsts):
    raise ValueError(f"ppermute permutation {perm} has indices outside the axis "
                     f"of size {size}")


def _ppermute_transpose(ct, x, *, axis_name, perm):
  return [ppermute_p.bind(ct, axis_name=axis_name,
                          perm=tuple((dst, src) for src, dst in perm))]


ppermute_p = _collective("ppermute", _ppermute_abstract_eval, _ppermute_batch, lambda params: params["axis_name"],
                        transpose=_ppermute_transpose)


def ppermute(x, axis_name, perm):
  """Instance ``dst`` receives ``x`` from instance ``src`` for each pair
  (src, dst) in ``perm``; instances that receive nothing get zeros."""
  names = _as_names(axis_name)
  perm = tuple(tuple(int(i) for i in pair) for pair in perm)
  return tree_util.tree_map(
      lambda leaf: ppermute_p.bind(leaf, axis_name=names, perm=perm), x)


def pshuffle(x, axis_name, perm):
  """Instance ``i`` receives ``x`` from instance ``perm[i]``."""
  if set(perm) != set(range(len(perm))):
    raise ValueError(f"`perm` does not represent a permutation: {perm}")
  return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# -- SPMD execution: the impls ----------------------------------------------------------
# Inside an SPMD run (pmap, shard_map) each device thread runs the per-device
# program; a collective's impl exchanges NumPy values with the other devices
# of its group through the run's Communicator (spmd.py).  Outside a run the
# names are unbound: NameError, as before.

def _bound(names):
  ctx = spmd.bound(names)
  if ctx is None:
    raise NameError(f"unbound axis name: {names[0]}")
  return ctx


def _subgroup(k, groups):
  """(members, index of ``k`` among them) of ``axis_index_groups``."""
  if groups is None:
    return None, k
  for g in groups:
    if k in g:
      return list(g), list(g).index(k)
  raise ValueError(f"axis index {k} is in no group of {groups}")


def _gather_values(x, names, groups):
  """The values of this device's (sub)group along ``names`` and its index there."""
  comm, pos = _bound(names)
  values = comm.exchange(pos, np.asarray(x), names)
  members, k = _subgroup(comm.axis_index(pos, names), groups)
  if members is not None:
    values = [values[i] for i in members]
  return values, k


def _allreduce_spmd_impl(reducer, combine):
  def impl(x, *, axes, axis_index_groups):
    named, positional = _split_axes(axes)
    x = np.asarray(reducer.impl(x, axes=positional) if positional else x)
    if not named:
      return x
    if combine is None and axis_index_groups is None:   # psum: a parallel sum
      comm, pos = _bound(named)
      return comm.all_sum(pos, x, named)   # shared by the group: read-only
    values, _ = _gather_values(x, named, axis_index_groups)
    if combine is None:
      return functools.reduce(np.add, values).astype(x.dtype, copy=False)
    return functools.reduce(combine, values)
  return impl


psum_p.impl = _allreduce_spmd_impl(reduce_sum_p, None)
pmax_p.impl = _allreduce_spmd_impl(reduce_max_p, np.maximum)
pmin_p.impl = _allreduce_spmd_impl(reduce_min_p, np.minimum)


@all_gather_p.def_impl
def _all_gather_impl(x, *, all_gather_dimension, axis_name, axis_index_groups,
                     axis_size, tiled):
  values, _ = _gather_values(x, axis_name, axis_index_groups)
  join = np.concatenate if tiled else np.stack
  return join(values, axis=all_gather_dimension)


@reduce_scatter_p.def_impl
def _reduce_scatter_impl(x, *, scatter_dimension, axis_name, axis_index_groups,
                         axis_size, tiled):
  values, k = _gather_values(x, axis_name, axis_index_groups)
  total = functools.reduce(np.add, values).astype(np.asarray(x).dtype, copy=False)
  if tiled:
    block = total.shape[scatter_dimension] // axis_size
    return np.ascontiguousarray(
        np.take(total, np.arange(k * block, (k + 1) * block), axis=scatter_dimension))
  return np.ascontiguousarray(np.take(total, k, axis=scatter_dimension))


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name):
  comm, pos = _bound((axis_name,))
  return np.int32(comm.axis_index(pos, (axis_name,)))


@ppermute_p.def_impl
def _ppermute_impl(x, *, axis_name, perm):
  values, k = _gather_values(x, axis_name, None)
  _check_perm(perm, len(values))
  source = {dst: src for src, dst in perm}
  if k not in source:
    return np.zeros_like(np.asarray(x))
  return np.array(values[source[k]])


def _psum_invariant_impl(x, *, axes):
  comm, pos = _bound(axes)
  return comm.all_sum(pos, np.asarray(x), axes)


psum_invariant_p.impl = _psum_invariant_impl
pvary_p.impl = lambda x, *, axes: np.asarray(x)   # a change of type only
