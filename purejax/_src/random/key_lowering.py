"""Key lowering: typed PRNG keys rewritten to their uint32 key data.

Backends know nothing of key dtypes.  Before a jaxpr runs, ``lower_jaxpr``
re-traces it with every ``key<fry>[*s]`` value replaced by its data, a
``uint32[*s, 2]`` array: a ``random_*`` equation becomes its threefry lax
operations (the primitive's ``physical`` rule), a structural equation on
keys (slice, reshape, gather, select_n...) the same operation on the data
with the trailing key axis kept whole, and control flow (jit, scan, while,
cond, custom derivatives, checkpoint) gets its sub-jaxprs lowered the same
way.  Jaxprs without keys are left as they are, so the C backend compiles
exactly what it compiled before keys had a dtype of their own.

Eager operations on concrete key arrays (``PRNGKeyArray``) use the same
rules on the data directly (``apply_eager``).
"""
import numpy as np

from purejax._src import core
from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, literal_array, sub_jaxprs
from purejax._src.random import keys as keys_lib


def _is_key(aval):
  return type(getattr(aval, "dtype", None)) is keys_lib.KeyTy


def _nkey(aval):
  return len(aval.dtype._impl.key_shape)


def physical_aval(aval):
  """The aval of a value's run-time data (keys: their uint32 key data)."""
  if not _is_key(aval):
    return aval
  return core.ShapedArray(aval.shape + aval.dtype._impl.key_shape, np.uint32)


# ---------------------------------------------------------------------------
# Rules: ``rule(in_avals, out_avals, *data, **params) -> data out`` (a list
# for multiple-result primitives).  ``data`` are the operands' physical values.

rules = {}


def _rule(*prims):
  def register(f):
    for p in prims:
      rules[p] = f
    return f
  return register


def _key_primitive_rule(prim):
  def rule(in_avals, out_avals, *data, **params):
    return prim.physical(*data, **params)
  return rule


def _install_rules():
  from purejax import lax
  from purejax._src.lax import gather as gather_mod
  from purejax._src.lax import scatter as scatter_mod
  from purejax._src.lax import elementwise, slicing, split_tile, structural
  from purejax._src.pjit import pjit_p
  from purejax._src.lax.control_flow.cond import cond_p
  from purejax._src.lax.control_flow.loops import while_p
  from purejax._src.lax.control_flow.scan import scan_p
  from purejax._src.random import key_primitives as kp

  for p in kp.KEY_PRIMITIVES:
    rules[p] = _key_primitive_rule(p)

  def trailing(aval):   # the key data axes after a key array's own axes
    return aval.dtype._impl.key_shape if _is_key(aval) else ()

  @_rule(structural.reshape_p)
  def _reshape(ins, outs, x, *, new_sizes, dimensions, sharding):
    if dimensions is not None:
      x = lax.transpose(x, tuple(dimensions) + tuple(range(ins[0].ndim, x.ndim)))
    return lax.reshape(x, tuple(new_sizes) + trailing(ins[0]))

  @_rule(structural.broadcast_in_dim_p)
  def _broadcast_in_dim(ins, outs, x, *dyn, shape, broadcast_dimensions, sharding):
    tail = trailing(ins[0])
    n = len(shape)
    return lax.broadcast_in_dim(x, tuple(shape) + tail, tuple(broadcast_dimensions)
                                + tuple(range(n, n + len(tail))))

  @_rule(structural.squeeze_p)
  def _squeeze(ins, outs, x, *, dimensions):
    return lax.squeeze(x, dimensions)

  @_rule(structural.rev_p)
  def _rev(ins, outs, x, *, dimensions):
    return lax.rev(x, dimensions)

  @_rule(structural.transpose_p)
  def _transpose(ins, outs, x, *, permutation):
    n = len(permutation)
    return lax.transpose(x, tuple(permutation) + tuple(range(n, x.ndim)))

  @_rule(structural.concatenate_p)
  def _concatenate(ins, outs, *xs, dimension):
    return lax.concatenate(list(xs), dimension)

  @_rule(split_tile.stack_p)
  def _stack(ins, outs, *xs, axis):
    return split_tile.stack_p.bind(*xs, axis=axis)

  @_rule(split_tile.unstack_p)
  def _unstack(ins, outs, x, *, axis):
    return split_tile.unstack_p.bind(x, axis=axis)

  @_rule(split_tile.split_p)
  def _split(ins, outs, x, *, sizes, axis):
    return split_tile.split_p.bind(x, sizes=sizes, axis=axis)

  @_rule(split_tile.tile_p)
  def _tile(ins, outs, x, *, reps):
    return split_tile.tile_p.bind(x, reps=tuple(reps) + (1,) * len(trailing(ins[0])))

  @_rule(structural.copy_p)
  def _copy(ins, outs, x):
    return x

  @_rule(slicing.slice_p)
  def _slice(ins, outs, x, *, start_indices, limit_indices, strides):
    tail = trailing(ins[0])
    return lax.slice(x, tuple(start_indices) + (0,) * len(tail),
                     tuple(limit_indices) + tail,
                     None if strides is None else tuple(strides) + (1,) * len(tail))

  @_rule(slicing.dynamic_slice_p)
  def _dynamic_slice(ins, outs, x, *idx, slice_sizes):
    tail = trailing(ins[0])
    zero = np.zeros((), core.get_aval(idx[0]).dtype) if idx else np.int32(0)
    return slicing.dynamic_slice_p.bind(x, *idx, *[zero] * len(tail),
                                        slice_sizes=tuple(slice_sizes) + tail)

  @_rule(slicing.dynamic_update_slice_p)
  def _dynamic_update_slice(ins, outs, x, update, *idx):
    tail = trailing(ins[0])
    zero = np.zeros((), core.get_aval(idx[0]).dtype) if idx else np.int32(0)
    return slicing.dynamic_update_slice_p.bind(x, update, *idx, *[zero] * len(tail))

  def compare(ins, outs, a, b, prim, combine):
    """eq or ne of two key arrays: of all their key data words."""
    tail = trailing(ins[0])
    shape = outs[0].shape
    a, b = (x if aval.shape == shape else
            lax.broadcast_in_dim(x, shape + tail, tuple(range(len(shape), len(shape) + len(tail))))
            for x, aval in zip((a, b), ins))
    words = prim.bind(a, b)
    return combine(words, tuple(range(len(shape), len(shape) + len(tail))))

  @_rule(elementwise.eq_p)
  def _eq(ins, outs, a, b):
    return compare(ins, outs, a, b, elementwise.eq_p, lax.reduce_and)

  @_rule(elementwise.ne_p)
  def _ne(ins, outs, a, b):
    return compare(ins, outs, a, b, elementwise.ne_p, lax.reduce_or)

  @_rule(elementwise.select_n_p)
  def _select_n(ins, outs, which, *cases):
    tail = trailing(ins[1])
    if ins[0].shape:   # a per-element choice: the same for all of a key's words
      n = ins[0].ndim
      which = lax.broadcast_in_dim(which, ins[0].shape + tail, tuple(range(n)))
    return elementwise.select_n_p.bind(which, *cases)

  @_rule(gather_mod.gather_p)
  def _gather(ins, outs, x, indices, *, dimension_numbers, slice_sizes, **params):
    tail = trailing(ins[0])
    dn = dimension_numbers
    out_rank = outs[0].ndim
    offset = tuple(dn.offset_dims) + tuple(range(out_rank, out_rank + len(tail)))
    dn = dn._replace(offset_dims=offset)
    return gather_mod.gather_p.bind(x, indices, dimension_numbers=dn,
                                    slice_sizes=tuple(slice_sizes) + tail, **params)

  @_rule(scatter_mod.scatter_p)
  def _scatter(ins, outs, x, indices, updates, *, dimension_numbers, **params):
    tail = trailing(ins[0])
    dn = dimension_numbers
    rank = ins[2].ndim
    window = tuple(dn.update_window_dims) + tuple(range(rank, rank + len(tail)))
    return scatter_mod.scatter_p.bind(x, indices, updates,
                                      dimension_numbers=dn._replace(update_window_dims=window),
                                      **params)

  # -- primitives with sub-jaxprs ------------------------------------------------

  @_rule(pjit_p)
  def _pjit(ins, outs, *args, jaxpr, **params):
    lowered, consts = lower_closed(jaxpr)
    return pjit_p.bind(*consts, *args, jaxpr=ClosedJaxpr(lowered, []), **params)

  @_rule(scan_p)
  def _scan(ins, outs, *args, jaxpr, num_consts, **params):
    lowered, consts = lower_closed(jaxpr)
    return scan_p.bind(*consts, *args, jaxpr=ClosedJaxpr(lowered, []),
                       num_consts=num_consts + len(consts), **params)

  @_rule(while_p)
  def _while(ins, outs, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond, cconsts = lower_closed(cond_jaxpr)
    body, bconsts = lower_closed(body_jaxpr)
    args = list(args)
    return while_p.bind(*cconsts, *args[:cond_nconsts], *bconsts, *args[cond_nconsts:],
                        cond_jaxpr=ClosedJaxpr(cond, []), body_jaxpr=ClosedJaxpr(body, []),
                        cond_nconsts=cond_nconsts + len(cconsts),
                        body_nconsts=body_nconsts + len(bconsts))

  @_rule(cond_p)
  def _cond(ins, outs, index, *ops, branches, **params):
    lowered = [lower_closed(b) for b in branches]
    all_consts = [c for _, consts in lowered for c in consts]
    joined, before = [], 0
    for jaxpr, consts in lowered:
      # Every branch takes every branch's constants; it reads its own.
      other = [Var(core.get_aval(c)) for c in all_consts]
      mine = other[:before] + jaxpr.invars[:len(consts)] + other[before + len(consts):]
      before += len(consts)
      joined.append(ClosedJaxpr(Jaxpr([], mine + jaxpr.invars[len(consts):],
                                      jaxpr.outvars, jaxpr.eqns), []))
    return cond_p.bind(index, *all_consts, *ops, branches=tuple(joined), **params)


_installed = False


def _rule_for(prim):
  global _installed
  if not _installed:
    _installed = True
    _install_rules()
  rule = rules.get(prim)
  if rule is None:
    param = getattr(prim, "call_jaxpr_param", None)
    if param is not None:   # custom_jvp/vjp calls, checkpoint: run the body inline
      return lambda ins, outs, *args, **params: eval_physical(
          _as_closed(params[param]), args)
    return _generic_sub_jaxpr_rule(prim)
  return rule


def _generic_sub_jaxpr_rule(prim):
  """Other primitives with sub-jaxprs (shard_map, pmap's body...): their
  sub-jaxprs lowered in place, where that needs no new constants."""
  def rule(ins, outs, *args, **params):
    new = {}
    for name, value in params.items():
      many = isinstance(value, (tuple, list))
      lowered = []
      for v in value if many else (value,):
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
          jaxpr, consts = lower_closed(v)
          if consts:   # the lowered body would need new inputs, which prim cannot take
            raise NotImplementedError(
                f"purejax: {prim.name} over a body using PRNG keys whose lowering to key "
                "data needs constants is not supported; pass the keys' data in "
                "(jax.random.key_data) and wrap it inside the body")
          v = ClosedJaxpr(jaxpr, []) if isinstance(v, ClosedJaxpr) else jaxpr
        lowered.append(v)
      new[name] = type(value)(lowered) if many else lowered[0]
    return prim.bind(*args, **new)
  return rule


def _as_closed(jaxpr):
  return jaxpr if isinstance(jaxpr, ClosedJaxpr) else ClosedJaxpr(jaxpr, [])


# ---------------------------------------------------------------------------
# Finding keys

def has_keys(jaxpr, _seen=None):
  """Whether any value of ``jaxpr`` (or of a jaxpr inside it) is a key."""
  seen = {} if _seen is None else _seen
  if id(jaxpr) in seen:
    return seen[id(jaxpr)]
  seen[id(jaxpr)] = False
  found = any(_is_key(v.aval) for v in jaxpr.constvars + jaxpr.invars + jaxpr.outvars)
  if not found:
    for eqn in jaxpr.eqns:
      if (any(_is_key(v.aval) for v in eqn.outvars)
          or any(has_keys(j, seen) for j in sub_jaxprs(eqn.params))):
        found = True
        break
  seen[id(jaxpr)] = found
  return found


def _eqn_has_keys(eqn):
  return (any(_is_key(v.aval) for v in eqn.invars)
          or any(_is_key(v.aval) for v in eqn.outvars)
          or any(has_keys(j) for j in sub_jaxprs(eqn.params)))


# ---------------------------------------------------------------------------
# The pass

def _data(x):
  """The physical value of an operand (a concrete key array: its data)."""
  return x._base if isinstance(x, keys_lib.PRNGKeyArray) else x


def eval_physical(closed, args):
  """Evaluates ``closed`` on physical ``args`` in the current trace, keys
  replaced by their data; returns the physical outputs."""
  jaxpr = closed.jaxpr
  env = {}

  def read(v):
    return literal_array(v) if type(v) is Literal else env[v]

  for v, x in zip(jaxpr.constvars, closed.consts):
    env[v] = _data(x)
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  for eqn in jaxpr.eqns:
    ins = [read(v) for v in eqn.invars]
    if _eqn_has_keys(eqn):
      rule = _rule_for(eqn.primitive)
      if rule is None:
        raise NotImplementedError(
            f"purejax: {eqn.primitive.name} is not supported on PRNG key arrays")
      outs = rule([v.aval for v in eqn.invars], [v.aval for v in eqn.outvars],
                  *ins, **eqn.params)
    else:
      outs = eqn.primitive.bind(*ins, **eqn.params)
    if not eqn.primitive.multiple_results:
      outs = (outs,)
    for v, x in zip(eqn.outvars, outs):
      env[v] = x
  return [read(v) for v in jaxpr.outvars]


def lower_closed(closed):
  """``(jaxpr, consts)``: ``closed`` on key data, its constants turned into
  leading inputs (whose values are ``consts``)."""
  from purejax._src.interpreters import partial_eval as pe
  closed = _as_closed(closed)
  if not has_keys(closed.jaxpr) and not closed.consts:
    return closed.jaxpr, []
  in_avals = [physical_aval(a) for a in closed.in_avals]
  with core.eval_context():
    jaxpr, consts = pe.trace_to_jaxpr(lambda *xs: eval_physical(closed, xs), in_avals)
  return pe.convert_constvars_jaxpr(jaxpr), consts


def lower_jaxpr(jaxpr):
  """A const-free ``jaxpr`` for a backend: ``(jaxpr, consts)`` with the
  keys replaced by their data and new constants as leading inputs, or
  None when it has no keys."""
  if not has_keys(jaxpr):
    return None
  lowered, consts = lower_closed(ClosedJaxpr(jaxpr, []))
  return lowered, [core.concrete_numpy_value(c) for c in consts]


# ---------------------------------------------------------------------------
# Eager operations on concrete key arrays

def wrap_outputs(outs, out_avals):
  """Physical outputs as values: key-typed ones as PRNGKeyArrays."""
  return [keys_lib.PRNGKeyArray(a.dtype._impl, o) if _is_key(a) else o
          for o, a in zip(outs, out_avals)]


def apply_eager(prim, args, params):
  """``prim`` applied to concrete operands, some of them key arrays."""
  avals = [core.get_aval(x) for x in args]
  out_avals = prim.typed_abstract_eval(avals, params)
  rule = _rule_for(prim)
  if rule is None:
    raise NotImplementedError(f"purejax: {prim.name} is not supported on PRNG key arrays")
  with core.eval_context():
    outs = rule(avals, out_avals if prim.multiple_results else [out_avals],
                *[_data(x) for x in args], **params)
  if prim.multiple_results:
    return wrap_outputs([_typed(o, a) for o, a in zip(outs, out_avals)], out_avals)
  return wrap_outputs([_typed(outs, out_avals)], [out_avals])[0]


def _typed(out, aval):
  """A physical output given the sharding type its key-typed op has."""
  from purejax._src.array import Array, _new
  sharding = getattr(aval, "explicit_sharding", None)
  if type(out) is not Array or sharding is None or out.aval.explicit_sharding == sharding:
    return out
  typed = _new(Array)
  typed._v = out._v
  typed.aval = out.aval.update(sharding=sharding)
  return typed
