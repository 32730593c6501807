"""Sharding in types (JAX's explicit sharding): an array sharded over
Explicit mesh axes carries its sharding in its ShapedArray
(``float32[8@x,4]``), and every primitive's output sharding follows from
its inputs' by JAX's rules, eagerly and under jit alike.  A conflict
raises ``ShardingTypeError`` as JAX does.

Values never depend on shardings: purejax's devices share one memory, so
this module only computes types.
"""
from purejax._src import core
from purejax._src.mesh import AxisType, NamedSharding, PartitionSpec, _entry_names
from purejax._src.mesh_context import abstract_of


class ShardingTypeError(Exception):
  """Inputs whose shardings no output sharding fits (JAX's error class)."""


# ---------------------------------------------------------------------------
# Types

def type_sharding(mesh, spec, ndim):
  """The ``explicit_sharding`` of an array of rank ``ndim`` put with
  ``spec`` on ``mesh``, or None when no Explicit axis splits it."""
  spec = PartitionSpec(*spec, *[None] * (ndim - len(spec)),
                       unreduced=spec.unreduced, reduced=spec.reduced)
  explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit}
  kept = [_only(entry, explicit) for entry in spec]
  unreduced = spec.unreduced & explicit
  reduced = spec.reduced & explicit
  if all(e is None for e in kept) and not unreduced and not reduced:
    return None
  return NamedSharding(abstract_of(mesh), PartitionSpec(*kept, unreduced=unreduced,
                                                        reduced=reduced))


def _only(entry, names):
  kept = tuple(n for n in _entry_names(entry) if n in names)
  return None if not kept else kept[0] if len(kept) == 1 else kept


def shape_with_spec(shape, spec):
  """``[8@x,4]``: the shape with each split dimension's mesh axes, then
  ``{U:y}`` for unreduced (``{R:y}`` reduced) axes."""
  dims = []
  for i, n in enumerate(shape):
    names = _entry_names(spec[i]) if i < len(spec) else ()
    if not names:
      dims.append(str(n))
    elif len(names) == 1:
      dims.append(f"{n}@{names[0]}")
    else:
      dims.append(f"{n}@({','.join(names)})")
  out = f"[{','.join(dims)}]"
  for mark, axes in (("U", spec.unreduced), ("R", spec.reduced)):
    if axes:
      out += "{" + mark + ":" + ",".join(sorted(axes)) + "}"
  return out


def spec_of(aval):
  """The padded spec entries of ``aval`` (all None when unsharded)."""
  sharding = getattr(aval, "explicit_sharding", None)
  return tuple(sharding.spec) if sharding is not None else (None,) * len(aval.shape)


def without_dim(aval, dim, shape):
  """``aval`` (of shape ``shape``'s with ``dim`` inserted) without axis
  ``dim``, its other splits kept (a value seen inside vmap)."""
  sharding = getattr(aval, "explicit_sharding", None)
  if sharding is None:
    return aval.update(shape=shape)
  entries = list(spec_of(aval))
  del entries[dim]
  return _with_spec(aval.update(shape=shape), sharding.mesh, entries)


def with_dim(aval, dim, shape, entry=None, mesh=None):
  """``aval`` with a new axis at ``dim`` (giving ``shape``), split by
  ``entry`` (on ``mesh``, else ``aval``'s own mesh)."""
  sharding = getattr(aval, "explicit_sharding", None)
  if sharding is None and entry is None:
    return aval.update(shape=shape)
  entries = list(spec_of(aval))
  entries.insert(dim, entry)
  return _with_spec(aval.update(shape=shape), mesh or sharding.mesh, entries)


def _with_spec(aval, mesh, entries):
  if mesh is None or all(e is None for e in entries):
    return aval.update(sharding=None)
  return aval.update(sharding=NamedSharding(mesh, PartitionSpec(*entries)))


def _short(aval):
  return aval.str_short(short_dtypes=True)


def _check_unique(name, in_avals, out_aval, entries):
  seen = set()
  for entry in entries:
    for n in _entry_names(entry):
      if n in seen:
        ins = ", ".join(_short(a) for a in in_avals)
        bad = out_aval.str_short(short_dtypes=True).split("[")[0] + shape_with_spec(
            out_aval.shape, PartitionSpec(*entries))
        raise ShardingTypeError(f"{name} operation with inputs: {ins} produces an illegally "
                                f"sharded result: {bad}")
      seen.add(n)


def _mesh_of(name, avals):
  meshes = {a.explicit_sharding.mesh for a in avals
            if getattr(a, "explicit_sharding", None) is not None}
  if len(meshes) > 1:
    raise ShardingTypeError(f"For primitive {name}, context mesh and the mesh of inputs "
                            f"differ: {sorted(map(repr, meshes))}")
  return meshes.pop() if meshes else None


# ---------------------------------------------------------------------------
# Rules: (primitive, input avals, params, output avals) -> output entries

def _merge(name, specs):
  out = []
  for entries in zip(*specs):
    named = {e for e in entries if e is not None}
    if len(named) > 1:
      shown = ", ".join(str(tuple(s)) for s in specs)
      raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: {shown}.")
    out.append(named.pop() if named else None)
  return out


def _elementwise(prim, avals, params, outs):
  ranked = [a for a in avals if len(a.shape) == len(outs[0].shape)]
  entries = _merge(prim.name, [spec_of(a) for a in ranked])
  return [entries] * len(outs)


def _select_n(prim, avals, params, outs):
  cases = avals[1:]
  if len({a.explicit_sharding for a in cases}) > 1:
    from purejax._src.mesh_context import get_abstract_mesh
    shown = [a.explicit_sharding or NamedSharding(get_abstract_mesh(),
                                                   PartitionSpec(*[None] * len(a.shape)))
             for a in cases]
    raise ShardingTypeError(f"select cases must have the same shardings, got {shown}.")
  return [list(spec_of(cases[0]))]


def _reduction(prim, avals, params, outs):
  axes = set(params["axes"])
  entries = [e for i, e in enumerate(spec_of(avals[0])) if i not in axes]
  return [entries] * len(outs)


def _same_as_operand(prim, avals, params, outs):
  return [list(spec_of(avals[0]))] * len(outs)


def _concatenate(prim, avals, params, outs):
  """All operands must have one sharding; the result keeps it (even along
  the joined dimension)."""
  specs = [spec_of(a) for a in avals]
  if len(set(specs)) > 1:
    mesh = _mesh_of(prim.name, avals)
    shown = ", ".join(str(NamedSharding(mesh, PartitionSpec(*s))) for s in specs)
    raise ShardingTypeError(f"All operands should have the same sharding. Got shardings {shown}")
  return [list(specs[0])]


def _leading_of_operand(prim, avals, params, outs):
  """The operand's leading splits; the axes the primitive adds or drops at
  the end (key data, random bits) unsplit."""
  ndim = len(outs[0].shape)
  entries = list(spec_of(avals[0]))[:ndim]
  return [entries + [None] * (ndim - len(entries))] * len(outs)


def _transpose(prim, avals, params, outs):
  spec = spec_of(avals[0])
  return [[spec[i] for i in params["permutation"]]]


def _broadcast_in_dim(prim, avals, params, outs):
  spec = spec_of(avals[0])
  entries = [None] * len(params["shape"])
  for i, d in enumerate(params["broadcast_dimensions"]):
    if avals[0].shape[i] == params["shape"][d]:
      entries[d] = spec[i]
  return [entries]


def _squeeze(prim, avals, params, outs):
  dropped = {d % len(avals[0].shape) for d in params["dimensions"]}
  return [[e for i, e in enumerate(spec_of(avals[0])) if i not in dropped]]


def _reshape(prim, avals, params, outs):
  """Splits and merges of dimensions keep a split on the major dimension
  of each group (as JAX does); anything else must be resharded first."""
  in_shape, out_shape = avals[0].shape, outs[0].shape
  spec = spec_of(avals[0])
  entries = [None] * len(out_shape)
  i = j = 0
  while i < len(in_shape) or j < len(out_shape):
    gi, gj = [i], [j]   # grow a group of input and output dims with equal products
    pi = in_shape[i] if i < len(in_shape) else 1
    pj = out_shape[j] if j < len(out_shape) else 1
    while pi != pj:
      if pi < pj:
        i += 1
        gi.append(i)
        pi *= in_shape[i]
      else:
        j += 1
        gj.append(j)
        pj *= out_shape[j]
    named = [k for k in gi if k < len(in_shape) and spec[k] is not None]
    if named:
      if named != [gi[0]] or gj[0] >= len(out_shape) or out_shape[gj[0]] % _splits(
          avals[0], spec[gi[0]]):
        raise ShardingTypeError(
            "This reshape is not supported. Please specify the sharding of the output via "
            "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{avals[0].str_short()}, new sizes: {tuple(out_shape)}")
      entries[gj[0]] = spec[gi[0]]
    i, j = gi[-1] + 1, gj[-1] + 1
  return [entries]


def _splits(aval, entry):
  mesh = aval.explicit_sharding.mesh
  out = 1
  for n in _entry_names(entry):
    out *= mesh.shape[n]
  return out


def _dot_general(prim, avals, params, outs):
  (lc, rc), (lb, rb) = params["dimension_numbers"]
  lhs, rhs = spec_of(avals[0]), spec_of(avals[1])
  lcs, rcs = [lhs[d] for d in lc], [rhs[d] for d in rc]
  if any(a is not None and b is not None for a, b in zip(lcs, rcs)):
    raise ShardingTypeError(
        "Contracting dimensions are sharded and it is ambiguous how the output should be "
        "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
        f"lhs_contracting_spec={tuple(lcs)} and rhs_contracting_spec={tuple(rcs)}")
  batch = _merge(prim.name, [[lhs[d] for d in lb], [rhs[d] for d in rb]])
  lfree = [lhs[d] for d in range(len(lhs)) if d not in lc and d not in lb]
  rfree = [rhs[d] for d in range(len(rhs)) if d not in rc and d not in rb]
  return [batch + lfree + rfree]


# Primitives whose output avals come from their own jaxprs (already typed).
_FROM_JAXPR = {"jit", "cond", "while", "scan", "custom_jvp_call", "custom_vjp_call",
               "remat2", "custom_lin", "custom_linear_solve", "custom_vmap_call",
               "shard_map", "reshard", "device_put", "sharding_constraint", "composite",
               "optimization_barrier", "debug_callback", "debug_print", "dce_sink"}

_RULES = {
    **{name: _reduction for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod",
                                      "reduce_and", "reduce_or", "reduce_xor", "argmax",
                                      "argmin")},
    **{name: _same_as_operand for name in ("copy", "rev", "cumsum", "cumprod", "cummax",
                                            "cummin", "cumlogsumexp", "sort")},
    "transpose": _transpose,
    "threefry2x32": _elementwise,
    **{name: _leading_of_operand for name in ("random_seed", "random_split", "random_fold_in",
                                               "random_bits", "random_wrap", "random_unwrap",
                                               "bitcast_convert_type")},
    "concatenate": _concatenate,
    "pad": _same_as_operand,   # padding keeps the operand's splits (JAX's rule)
    "broadcast_in_dim": _broadcast_in_dim,
    "squeeze": _squeeze,
    "reshape": _reshape,
    "dot_general": _dot_general,
    "select_n": _select_n,
}


def apply_rule(primitive, avals, params, out):
  """``out`` (abstract_eval's result) with the output shardings JAX's rule
  for ``primitive`` gives (some input of it has an explicit sharding)."""
  if primitive.name in _FROM_JAXPR:
    return out
  forced = params.get("out_sharding", params.get("sharding"))
  if isinstance(forced, PartitionSpec) and not primitive.multiple_results:
    from purejax._src.out_sharding import canonical   # a spec on the current mesh
    forced = canonical(forced, out.shape)
  if isinstance(forced, NamedSharding) and not primitive.multiple_results:
    from purejax._src.out_sharding import typed   # the type asked for, as given
    return typed(out, forced)
  if not any(getattr(a, "explicit_sharding", None) is not None for a in avals):
    return out
  outs = list(out) if primitive.multiple_results else [out]
  rule = _RULES.get(primitive.name) or (_elementwise if primitive.elementwise else None)
  if rule is None:
    ins = ", ".join(_short(a) for a in avals)
    raise NotImplementedError(
        f"purejax has no sharding rule for `{primitive.name}` on explicitly sharded inputs "
        f"({ins}); reshard them to P() first (jax.sharding.reshard) or use Auto axes")
  mesh = _mesh_of(primitive.name, avals)
  typed = []
  for aval, entries in zip(outs, rule(primitive, avals, params, outs)):
    _check_unique(primitive.name, avals, aval, entries)
    typed.append(_with_spec(aval, mesh, entries))
  return typed if primitive.multiple_results else typed[0]


core.sharding_rule = apply_rule

from purejax._src import sharding_rules_indexing  # noqa: E402,F401  (registers its rules)


# ---------------------------------------------------------------------------
# Concrete arrays: device_put's type, an Array's sharding

_concrete_meshes = {}   # AbstractMesh -> the last Mesh seen with it


def put_aval(aval, target):
  """The aval of ``aval``'s value put on ``target`` (a Device or Sharding):
  typed by a NamedSharding over Explicit axes, else untyped."""
  if not isinstance(target, NamedSharding) or not hasattr(target.mesh, "devices"):
    return aval.update(sharding=None) if getattr(aval, "explicit_sharding", None) else aval
  _concrete_meshes[abstract_of(target.mesh)] = target.mesh
  return aval.update(sharding=type_sharding(target.mesh, target.spec, len(aval.shape)))


def concrete_sharding(aval):
  """The NamedSharding on a concrete Mesh of an array typed ``aval``."""
  sharding = aval.explicit_sharding
  mesh = _concrete_meshes.get(sharding.mesh)
  if mesh is None:
    return sharding
  return NamedSharding(mesh, sharding.spec)


def resolve_target(target):
  """A PartitionSpec target means a NamedSharding on the current mesh."""
  if not isinstance(target, PartitionSpec):
    return target
  from purejax._src.mesh_context import concrete_mesh
  mesh = concrete_mesh()
  if mesh is None:
    raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is passed "
                     f"to device_put (got {target})")
  return NamedSharding(mesh, target)
