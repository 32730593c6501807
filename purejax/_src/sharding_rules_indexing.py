"""Explicit sharding's output rules for indexing and windowed primitives:
slices, dynamic slices and updates, gather, scatter and convolution (JAX's
rules; see sharding_types.py for the rest).  Each rule gives the output's
spec entries, or raises ShardingTypeError where JAX asks for an
``out_sharding`` (a result that would need communication)."""
from purejax._src.mesh import _entry_names
from purejax._src.sharding_types import (ShardingTypeError, _RULES, _short, _splits, spec_of)


def _entry_str(entry):
  return str(entry) if isinstance(entry, str) else str(tuple(entry))


def _kept_where_divisible(name, aval, out_shape):
  """A dimension keeps its split when the result's size along it still
  divides among the split's devices (JAX: even sharding only)."""
  spec = spec_of(aval)
  for n, m, entry in zip(aval.shape, out_shape, spec):
    if n != m and entry is not None and m % _splits(aval, entry):
      raise ShardingTypeError(
          f"{name} on sharded dims where out dim ({m}) is not divisible by mesh axes "
          f"({_splits(aval, entry)}) with spec ({_entry_str(entry)}) is not implemented. "
          f"Got input type={_short(aval)} and output shape={tuple(out_shape)}")
  return list(spec)


def _slice(prim, avals, params, outs):
  return [_kept_where_divisible("slicing", avals[0], outs[0].shape)]


def _dynamic_slice(prim, avals, params, outs):
  return [_kept_where_divisible("dynamic_slice", avals[0], outs[0].shape)]


def _with_axis_types(aval):
  """``float32[8@x,4]({Explicit: ('x', 'y')})``: the type and its mesh's axes by type."""
  from purejax._src.mesh_context import get_abstract_mesh
  sharding = getattr(aval, "explicit_sharding", None)
  mesh = sharding.mesh if sharding is not None else get_abstract_mesh()
  groups = {}
  for n, t in zip(mesh.axis_names, mesh.axis_types):
    groups.setdefault(t.name, []).append(n)
  types = ", ".join(f"{t}: {tuple(ns)}" for t, ns in groups.items())
  return f"{aval.str_short()}({{{types}}})"


def _dynamic_update_slice(prim, avals, params, outs):
  operand, update = avals[0], avals[1]
  if operand.explicit_sharding != update.explicit_sharding:
    raise ShardingTypeError(
        "dynamic_update_slice operand sharding must be equal to update sharding, got "
        f"operand sharding {_with_axis_types(operand)} and update sharding "
        f"{_with_axis_types(update)}.")
  return [list(spec_of(operand))]


def _gather(prim, avals, params, outs):
  """Operand dimensions indexed into must be whole or unsplit; the index
  vector and the indices' query dimensions unsplit (except batching ones,
  which must agree with the operand's)."""
  operand, indices = avals[0], avals[1]
  dn, sizes = params["dimension_numbers"], params["slice_sizes"]
  op, ix = spec_of(operand), list(spec_of(indices))
  ok = (all(sizes[d] == operand.shape[d] or op[d] is None for d in dn.start_index_map)
        and all(None in (ix[i], op[o]) or ix[i] == op[o]
                for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
        and all(e is None for i, e in enumerate(ix)
                if i not in dn.start_indices_batching_dims))
  if not ok:
    raise ShardingTypeError(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")
  for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
    ix[i] = ix[i] or op[o]
  window = iter(d for d in range(len(operand.shape))
                if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims)
  queries = iter(ix)
  return [[op[next(window)] if i in dn.offset_dims else next(queries)
           for i in range(len(outs[0].shape))]]


def _one_name(*entries):
  return len({e for e in entries if e is not None}) <= 1


def _scatter(prim, avals, params, outs):
  """The gather rule read backwards: the updates' windows must match the
  operand's dimensions (whole and alike, or both unsplit), and every
  dimension where several queries may write the same place unsplit."""
  operand, indices, updates = avals[:3]
  dn = params["dimension_numbers"]
  op, ix, up = spec_of(operand), spec_of(indices), spec_of(updates)
  vector_dim = len(indices.shape) - 1
  query_dims = [d for d in range(len(updates.shape)) if d not in dn.update_window_dims]
  up_batch = [query_dims[i] for i in dn.scatter_indices_batching_dims]
  op_window = [d for d in range(len(operand.shape))
               if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
  ok = (all(_one_name(op[o], ix[i], up[u]) for o, i, u in
            zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, up_batch))
        and all((updates.shape[u] == operand.shape[o] and up[u] == op[o])
                or (up[u] is None and op[o] is None)
                for u, o in zip(dn.update_window_dims, op_window))
        and all(op[d] is None for d in dn.inserted_window_dims)
        and all(e is None for d, e in enumerate(up)
                if d not in up_batch and d not in dn.update_window_dims)
        and all(e is None for d, e in enumerate(ix[:vector_dim])
                if d not in dn.scatter_indices_batching_dims)
        and ix[vector_dim] is None)
  if not ok:
    raise ShardingTypeError(
        "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
        "the scatter update as out sharding could not be resolved unambiguously (or would "
        f"require collectives on inputs). Got operand={operand!r}, indices={indices!r}, "
        f"updates={updates!r}")
  out = list(op)
  for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, up_batch):
    out[o] = out[o] or ix[i] or up[u]
  for u, o in zip(dn.update_window_dims, op_window):
    out[o] = out[o] or up[u]
  return [out] * len(outs)


def _conv(prim, avals, params, outs):
  """Only an unsplit kernel and an unsplit input feature dimension: the
  result keeps the input's batch and spatial splits (where they divide)."""
  lhs, rhs = avals[0], avals[1]
  feature = params["dimension_numbers"].lhs_spec[1]
  if any(e is not None for e in spec_of(rhs)) or spec_of(lhs)[feature] is not None:
    raise ShardingTypeError("Please specify the output sharding via `out_sharding` "
                            "parameter of `conv_general_dilated`")
  return [_kept_where_divisible("conv_general_dilated", lhs, outs[0].shape)]


_RULES.update({
    "slice": _slice,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "gather": _gather,
    "conv_general_dilated": _conv,
    **{name: _scatter for name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul",
                                   "scatter-min", "scatter-max")},
})
