"""The smaller members of jax.lax: optimization_barrier, mulhi, empty, the
total-order comparisons (eq_to, le_to, lt_to), stage, dce_sink, device_put,
sharding_constraint, platform_dependent, composite, and helpers built on
other primitives (batch_matmul, broadcast_like, broadcast_shapes, dtype,
shape_as_value, pswapaxes, pbroadcast, pcast).

purejax runs on one CPU device: shardings, placements and barriers are
identities on values, kept as equations so jaxprs print as JAX's do.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.devices import ArrayCopySemantics
from purejax._src import tree_util
from purejax._src.errors import UnexpectedTracerError
from purejax._src.interpreters import ad
from purejax._src.lax import utils
from purejax._src.lax.families import (
    any_dtypes, binary, int_dtypes, real_dtypes, bool_dtypes, standard_primitive)


def _identity_batch(prim):
  def rule(axis_size, vals, dims, **params):
    out = prim.bind(*vals, **params)
    return out, (list(dims) if prim.multiple_results else dims[0])
  return rule


# -- optimization_barrier ------------------------------------------------------

optimization_barrier_p = standard_primitive(
    "optimization_barrier", lambda *avals: list(avals), lambda *xs: list(xs),
    multiple_results=True, impl_on_gpu_arrays=True)   # (the identity: any arrays)
optimization_barrier_p.c_code = None
optimization_barrier_p.batch = _identity_batch(optimization_barrier_p)


def _is_zero(t):
  return type(t) is ad.Zero or core.get_aval(t).dtype == dtypes.float0


@optimization_barrier_p.def_jvp
def _optimization_barrier_jvp(primals, tangents):
  # The tangents go through a barrier of their own (float0 ones stay symbolic).
  outs = optimization_barrier_p.bind(*primals)
  nonzero = [t for t in tangents if not _is_zero(t)]
  it = iter(optimization_barrier_p.bind(*nonzero) if nonzero else [])
  return outs, [ad.Zero.from_primal_value(p) if _is_zero(t) else next(it)
                for p, t in zip(primals, tangents)]


@optimization_barrier_p.def_transpose
def _optimization_barrier_transpose(cts, *primals):
  outs = optimization_barrier_p.bind(*cts)
  return [o if ad.is_undefined_primal(x) else None for o, x in zip(outs, primals)]


def optimization_barrier(operand, /):
  """Every leaf of the pytree ``operand`` unchanged, behind a barrier that
  XLA would not move computations across (purejax does not reorder)."""
  leaves, tree = tree_util.tree_flatten(operand)
  return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


# -- mulhi ---------------------------------------------------------------------

def _mulhi_impl(x, y):
  dtype = np.result_type(x, y)
  bits = dtype.itemsize * 8
  if bits == 64:   # exact 128-bit products with Python ints
    out = (np.asarray(x).astype(object) * np.asarray(y).astype(object)) >> 64
    return np.asarray(out).astype(dtype)
  wide = np.int64 if dtypes.issubdtype(dtype, np.signedinteger) else np.uint64
  product = np.asarray(x).astype(wide) * np.asarray(y).astype(wide)
  return (product >> wide(bits)).astype(dtype)


mulhi_p = binary("mulhi", int_dtypes, _mulhi_impl)
mulhi_p.c_code = None
ad.defjvp_zero(mulhi_p)


def mulhi(x, y, /):
  """The high half of the double-width product of integers ``x`` and ``y``."""
  return utils.bind(mulhi_p, x, y)


# -- comparisons in XLA's total order ------------------------------------------------

def _total_order_compare(op):
  from purejax._src.lax.sort import _keys_of

  def impl(x, y):
    kx, ky = _keys_of(np.asarray(x), False), _keys_of(np.asarray(y), False)
    if op == "eq":
      return np.logical_and.reduce([a == b for a, b in zip(kx, ky)])
    # Lexicographic over the keys (real then imaginary part for complex).
    less, equal = np.zeros(np.broadcast(kx[0], ky[0]).shape, bool), True
    for a, b in zip(kx, ky):
      less = less | (equal & (a < b))
      equal = equal & (a == b)
    return less | equal if op == "le" else less

  return impl


_bool = lambda dtype: np.dtype(np.bool_)
eq_to_p = binary("eq_to", any_dtypes, _total_order_compare("eq"), result_dtype=_bool)
le_to_p = binary("le_to", real_dtypes + bool_dtypes, _total_order_compare("le"),
                 result_dtype=_bool)
lt_to_p = binary("lt_to", real_dtypes + bool_dtypes, _total_order_compare("lt"),
                 result_dtype=_bool)
for _p in (eq_to_p, le_to_p, lt_to_p):
  _p.c_code = None
  ad.defjvp_zero(_p)


# -- empty ---------------------------------------------------------------------------

def _empty_abstract_eval(*, shape, dtype, out_sharding):
  return core.ShapedArray(shape, dtype)


empty_p = standard_primitive("empty", _empty_abstract_eval,
                             lambda *, shape, dtype, out_sharding: np.zeros(shape, dtype))
empty_p.c_code = None
# No operands: under vmap or jvp it is never batched or differentiated.
empty_p.batch = lambda axis_size, vals, dims, **params: (empty_p.bind(**params), None)
ad.defjvp_zero(empty_p)


def empty(shape, dtype, *, out_sharding=None):
  """An array whose values are unspecified (zeros here, as on JAX's CPU).
  Unlike JAX, a 64-bit ``dtype`` is canonicalized (x64 off gives 32 bits)."""
  return empty_p.bind(shape=utils.canonicalize_shape(shape),
                      dtype=dtypes.canonicalize_dtype(dtype), out_sharding=out_sharding)


# -- dtype, shapes and broadcasting helpers -------------------------------------------

def dtype(x):
  """The canonical dtype of a value, scalar type or dtype specifier (an
  explicit 64-bit request warns when x64 is off, as in JAX)."""
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  if isinstance(x, core.ArrayBase):
    return x.dtype   # an array made under x64 keeps its dtype
  if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and issubclass(x, np.generic)):
    return dtypes.canonicalize_user_dtype(x, "dtype")
  return dtypes.dtype(x, canonicalize=True)


def broadcast_shapes(*shapes):
  """The NumPy broadcast of ``shapes`` (tuples of ints)."""
  if not shapes:
    raise ValueError("broadcast_shapes requires at least one shape")
  shapes = [tuple(s) for s in shapes]
  rank = max(len(s) for s in shapes)
  out = []
  for sizes in zip(*[(1,) * (rank - len(s)) + s for s in shapes]):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
    out.append(big.pop() if big else 1)
  return tuple(out)


def broadcast_like(arr, like_arr):
  """``arr`` broadcast (NumPy rules) to the shape of ``like_arr``."""
  from purejax._src.lax.structural import broadcast_in_dim
  shape, a = utils.aval(like_arr).shape, utils.aval(arr)
  if a.ndim > len(shape):
    raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                     f"arr_shape={a.shape} shape={shape}")
  lead = len(shape) - a.ndim
  if any(d != 1 and d != s for d, s in zip(a.shape, shape[lead:])):
    raise ValueError(f"Incompatible types for broadcasting: input type={a.str_short()} "
                     f"and requested type={a.update(shape=shape).str_short()}")
  if a.shape == shape and isinstance(arr, core.ArrayBase):
    return arr
  return broadcast_in_dim(arr, shape, tuple(range(lead, len(shape))))


def batch_matmul(lhs, rhs, precision=None):
  """Matrix products over the leading (batch) axes of two arrays of one rank."""
  from purejax._src.lax.dot import dot_general
  ln, rn = np.ndim(lhs), np.ndim(rhs)
  if min(ln, rn) < 2:
    raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {ln}, {rn}")
  if ln != rn:
    raise ValueError(f"Arguments to batch_matmul must have same ndim, got {ln}, {rn}")
  batch = tuple(range(ln - 2))
  return dot_general(lhs, rhs, (((ln - 1,), (rn - 2,)), (batch, batch)),
                     precision=precision)


def shape_as_value(shape):
  """A shape as an integer vector (a NumPy array, as JAX gives for static shapes)."""
  from purejax._src.lax.creation import full
  shape = tuple(int(d) for d in shape)
  big = any(abs(d) > np.iinfo(np.int32).max for d in shape)
  dt = dtypes.canonicalize_dtype(np.int64 if big else np.int32)
  if not shape:
    return full((0,), np.array(0, dtype=dt))
  return np.asarray(shape, dtype=dt)


# -- stage and dce_sink ---------------------------------------------------------------

class _StagePrimitive(core.Primitive):
  """Binding lifts the value into the innermost staging trace (a constant
  there) and records no equation, like JAX's ``stage_p``."""

  def bind(self, x):
    from purejax._src.array import wrap_numpy
    from purejax._src.interpreters import partial_eval as pe
    if isinstance(x, core.ArrayBase):
      return x
    trace = core.current_trace()
    while trace is not None:
      if type(trace) is pe.DynamicJaxprTrace:
        return trace.to_tracer(x)
      trace = trace.parent
    aval = core.get_aval(x)
    return wrap_numpy(np.array(x, dtype=aval.dtype), aval)


stage_p = _StagePrimitive("stage")
stage_p.impl = lambda x: x
stage_p.abstract_eval = lambda x: x
stage_p.batch = _identity_batch(stage_p)
ad.deflinear(stage_p, lambda ct, x: [ct])


def stage(x, /):
  """``x`` as a value of the current trace (an Array when nothing is traced)."""
  return stage_p.bind(x)


dce_sink_p = standard_primitive("dce_sink", lambda x, **_: [], lambda x, **_: [],
                                multiple_results=True)
dce_sink_p.c_code = None
dce_sink_p.batch = lambda axis_size, vals, dims, **params: (dce_sink_p.bind(*vals, **params), [])
ad.deflinear(dce_sink_p, lambda cts, x, **_: [None])


def dce_sink(val, *, prevent_mlir_dce=False):
  """Marks every leaf of ``val`` as used (purejax removes no dead code)."""
  tree_util.tree_map(lambda x: dce_sink_p.bind(x, prevent_mlir_dce=prevent_mlir_dce), val)


# -- device_put and sharding_constraint (one device: identities) ------------------------

def _put_avals(avals, devices):
  from purejax._src.sharding_types import put_aval
  return [put_aval(a, d) for a, d in zip(avals, devices)]


device_put_p = standard_primitive(
    "device_put", lambda *avals, devices, **_: _put_avals(avals, devices),
    lambda *xs, **_: [np.copy(x) for x in xs],
    multiple_results=True)
device_put_p.c_code = None
device_put_p.batch = _identity_batch(device_put_p)
def _device_put_transpose(cts, *xs, devices, srcs, copy_semantics):
  # Cotangents go back from where the values were put to where they came from.
  return device_put_p.bind(*cts, devices=srcs, srcs=devices,
                           copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(cts))


ad.deflinear(device_put_p, _device_put_transpose)

sharding_constraint_p = standard_primitive(
    "sharding_constraint", lambda x, **_: x, lambda x, **_: x)
sharding_constraint_p.c_code = None
sharding_constraint_p.batch = _identity_batch(sharding_constraint_p)
ad.deflinear(sharding_constraint_p,
             lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)])

_NONE_SHARDING = ("One of with_sharding_constraint arguments got sharding None which is "
                  "not allowed. Please only pass `jax.sharding.Sharding` instances.")


def with_sharding_constraint(x, shardings):
  """Every leaf of ``x`` unchanged: with one device there is nothing to lay
  out.  ``shardings`` is one sharding or a pytree of them matching ``x``."""
  leaves, tree = tree_util.tree_flatten(x)
  s_leaves, s_tree = tree_util.tree_flatten(shardings, is_leaf=lambda s: s is None)
  if s_tree == tree:
    per_leaf = s_leaves
  elif tree_util.treedef_is_leaf(s_tree):
    per_leaf = s_leaves * len(leaves)
  else:
    raise ValueError("with_sharding_constraint shardings must be one sharding or a "
                     f"pytree of them matching the argument's structure {tree}, got {s_tree}")
  if any(s is None for s in per_leaf):
    raise ValueError(_NONE_SHARDING)
  from purejax._src.mesh import EMPTY_MESH
  outs = [sharding_constraint_p.bind(leaf, sharding=s, layout=None, context_mesh=EMPTY_MESH,
                                     unconstrained_dims=frozenset())
          for leaf, s in zip(leaves, per_leaf)]
  if not any(isinstance(o, core.Tracer) for o in outs):   # eager: record the layout
    from purejax._src.sharded_array import put
    from purejax._src.devices import Sharding
    outs = [put(o, s) if isinstance(s, Sharding) else o for o, s in zip(outs, per_leaf)]
  return tree_util.tree_unflatten(tree, outs)


# -- platform_dependent -------------------------------------------------------------

def _platform_index_impl(*, platforms):
  for i, names in enumerate(platforms):
    if names is None or "cpu" in names:
      return np.array(i, np.int32)
  raise NotImplementedError(f"MLIR translation rule for primitive 'platform_index("
                            f"platforms={platforms})' not found for platform cpu")


platform_index_p = standard_primitive(
    "platform_index", lambda *, platforms: core.ShapedArray((), np.dtype(np.int32)),
    _platform_index_impl)
platform_index_p.c_code = None
platform_index_p.batch = lambda axis_size, vals, dims, **params: (
    platform_index_p.bind(**params), None)
ad.defjvp_zero(platform_index_p)


def platform_dependent(*args, default=None, **per_platform):
  """``per_platform["cpu"](*args)`` (purejax runs on the CPU), else
  ``default(*args)``.  Traced, every branch is staged into a ``cond`` on a
  ``platform_index`` (JAX's cond also records ``branches_platforms``)."""
  from purejax._src.lax.control_flow import cond as cond_lib
  groups = []   # [names, branch]: identical branches share one slot
  for name, branch in per_platform.items():
    if not callable(branch):
      raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
    if name == "gpu":
      raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    for group in groups:
      if group[1] == branch:
        group[0].append(name)
        break
    else:
      groups.append([[name], branch])
  platforms = tuple(tuple(names) for names, _ in groups)
  branches = tuple(b for _, b in groups)
  if default is not None:
    if not callable(default):
      raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    platforms, branches = platforms + (None,), branches + (default,)
  index = platform_index_p.bind(platforms=platforms)
  if not isinstance(index, core.Tracer):
    return branches[int(index)](*args)
  names = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
  jaxprs, consts, leaves, out_tree = cond_lib._trace_branches(
      "platform_dependent", names, list(branches), args)
  outs = cond_lib._bind_forwarding(index, [*consts, *leaves], jaxprs)
  return tree_util.tree_unflatten(out_tree, outs)


# -- composite ----------------------------------------------------------------------

composite_p = core.Primitive("composite", multiple_results=True)
composite_p.c_code = None


@composite_p.def_impl
def _composite_impl(*args, name, attributes, version, jaxpr):
  from purejax._src.pjit import executable_for
  return executable_for(jaxpr)(*args)


composite_p.abstract_eval = lambda *avals, jaxpr, **_: list(jaxpr.out_avals)


@composite_p.def_jvp
def _composite_jvp(primals, tangents, **params):
  raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` "
                   "to add support. See "
                   "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


@composite_p.def_transpose
def _composite_transpose(cts, *args, **params):
  raise ValueError("Transpose rule for composite not implemented. You can use"
                   "`jax.custom_jvp` or `jax.custom_vjp` to add support. See "
                   "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_batch(trace, vals, dims, *, jaxpr, **params):
  # JAX has no rule here; batching the decomposition keeps the semantics.
  from purejax._src.pjit import batch_jaxpr
  batched, consts, out_dims = batch_jaxpr(jaxpr, trace, dims)
  return composite_p.bind(*consts, *vals, jaxpr=batched, **params), out_dims


_composite_batch.needs_trace = True
composite_p.batch = _composite_batch


def composite(decomposition, name, version=0):
  """``decomposition`` wrapped as one ``composite`` equation named ``name``;
  keyword arguments become static attributes.  Not differentiable (as in
  JAX); unlike JAX, it can be vmapped."""
  from purejax._src.lax.control_flow import common

  def wrapped(*args, **kwargs):
    if any(isinstance(v, core.Tracer) for v in kwargs.values()):
      raise UnexpectedTracerError(
          "Found a JAX Tracer as an attribute in the decomposition for the composite "
          f"op '{name}'. This means that the decomposition function closes over a "
          "value that is involved in a JAX transformation. Any values that aren't "
          "explicitly known at compile time must be explicitly passed as arguments "
          "to the composite.\n\nNote: If you are passing jax arrays as attributes, "
          "use numpy arrays instead.")
    leaves, in_tree = tree_util.tree_flatten(args)
    fun = lambda *a: decomposition(*a, **kwargs)
    closed, consts, out_tree = common.trace_fun(fun, in_tree, common.flat_avals(leaves),
                                                "composite")
    attributes = []
    for key, value in kwargs.items():
      vals, vtree = tree_util.tree_flatten(value)
      attributes.append((key, tuple(vals), vtree))
    outs = composite_p.bind(*consts, *leaves, name=name, attributes=tuple(attributes),
                            version=version, jaxpr=closed)
    return tree_util.tree_unflatten(out_tree, outs)

  wrapped.__name__ = getattr(decomposition, "__name__", "composite")
  wrapped.__doc__ = getattr(decomposition, "__doc__", None)
  return wrapped


# -- collectives built from others --------------------------------------------------

def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
  """Swaps the mapped axis ``axis_name`` with the array axis ``axis``:
  ``all_to_all(x, axis_name, axis, axis)``."""
  from purejax._src.lax.parallel_all_to_all import all_to_all
  return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x, axis_name, source):
  """Every instance of ``axis_name`` gets instance ``source``'s ``x``.
  Built from ``all_gather`` (JAX has a ``pbroadcast`` primitive)."""
  from purejax._src.lax.parallel import all_gather
  from purejax._src.lax.slicing import index_in_dim

  def one(leaf):
    return index_in_dim(all_gather(leaf, axis_name), source, 0, keepdims=False)
  return tree_util.tree_map(one, x)


def pcast(x, axis_name, *, to):
  """See purejax/_src/lax/parallel.py (shard_map's varying-axes types)."""
  from purejax._src.lax.parallel import pcast as _pcast
  return _pcast(x, axis_name, to=to)

del _p
