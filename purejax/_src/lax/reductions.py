"""Reductions: reduce_sum/prod/max/min/and/or/xor, argmax/argmin, and the
general ``lax.reduce`` (which uses a monoid primitive when it recognises one).

Half-precision floats are accumulated in float32, as XLA does on CPU;
integers wrap around in their own dtype.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import complex_extremum, reduction_order, utils
from purejax._src.lax.families import check_dtype, standard_primitive


# -- the monoid reductions ------------------------------------------------------

def _check_axes(operand, axes):
  if len(set(axes)) != len(axes):
    raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
  if any(not 0 <= a < operand.ndim for a in axes):
    raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                     f"{operand.str_short()}.")


def _reduced_shape(shape, axes):
  return tuple(d for i, d in enumerate(shape) if i not in axes)


def _batch_axes(axes, bdim):
  """Reduced axes of a value batched at ``bdim``, and its batch axis after."""
  axes = tuple(a + (a >= bdim) for a in axes)
  return axes, bdim - sum(a < bdim for a in axes)


def _axes_batch_rule(prim):
  """Reductions over an ``axes`` param: reduce the shifted axes."""

  def rule(axis_size, vals, dims, *, axes, **params):
    (x,), (d,) = vals, dims
    axes, out_dim = _batch_axes(axes, d)
    return prim.bind(x, axes=axes, **params), out_dim

  return rule


def _reduction(name, kinds, impl, extra_params=()):
  """A reduction primitive over the ``axes`` param (plus ``extra_params``)."""

  def abstract_eval(operand, *, axes, **params):
    if kinds is None:
      if not (operand.dtype == np.bool_ or dtypes.issubdtype(operand.dtype, np.integer)):
        raise TypeError("logical reduction requires operand dtype bool or int, got "
                        f"{core.dtype_name(operand.dtype)}.")
    else:
      check_dtype(name, operand.dtype, kinds)
    _check_axes(operand, axes)
    return core.ShapedArray(_reduced_shape(operand.shape, axes), operand.dtype,
                            operand.weak_type)

  def impl_with_params(x, *, axes, **params):
    return impl(x, axes)

  prim = standard_primitive(name, abstract_eval, impl_with_params)
  prim.batch = _axes_batch_rule(prim)
  return prim


def _accumulator(dtype):
  if dtype.itemsize < 4 and dtypes.issubdtype(dtype, np.floating):
    return np.dtype(np.float32)
  return dtype


# Eager sums and products are NumPy's own (fast; they may differ from a
# jitted result in the last ulp, as in JAX).  Jitted code on either backend
# uses ``jit_impl``: reduction_order's fixed order, so that the NumPy tier and
# the compiled C code of one jitted function agree bit for bit.

def _sum_impl(x, axes):
  return np.sum(x, axis=axes, dtype=_accumulator(x.dtype)).astype(x.dtype)


def _prod_impl(x, axes):
  with np.errstate(over="ignore", under="ignore", invalid="ignore"):
    return np.prod(x, axis=axes, dtype=_accumulator(x.dtype)).astype(x.dtype)


def _ordered(op, eager):
  def jit_impl(x, *, axes, **params):
    if x.dtype not in reduction_order.ORDERED_DTYPES:
      return eager(x, axes)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
      return reduction_order.ordered_reduce(x, axes, op)
  return jit_impl


def _lowest(dtype):
  if dtype == np.bool_:
    return False
  if dtypes.issubdtype(dtype, np.integer):
    return dtypes.iinfo(dtype).min
  return -np.inf


def _highest(dtype):
  if dtype == np.bool_:
    return True
  if dtypes.issubdtype(dtype, np.integer):
    return dtypes.iinfo(dtype).max
  return np.inf


def _extremum_impl(np_reduce, identity, zero_sign):
  def impl(x, axes):
    if x.size == 0:
      return np.full(_reduced_shape(x.shape, axes), identity(x.dtype), x.dtype)
    if x.dtype.kind == "c":   # the order of the fold decides NaNs and zeros
      return complex_extremum.reduce(x, _kept_axes(x.ndim, axes), sorted(axes),
                                     is_max=not zero_sign)
    out = np_reduce(x, axis=axes)
    if dtypes.issubdtype(x.dtype, np.floating):
      out = _fix_zero_sign(x, axes, out, zero_sign)
    return out
  return impl


def _fix_zero_sign(x, axes, out, negative):
  """XLA orders -0.0 below +0.0; NumPy keeps whichever zero came first."""
  zero = out == 0
  if not np.any(zero):
    return out
  wanted = np.any((x == 0) & (np.signbit(x) == negative), axis=axes)
  signed = np.where(wanted == negative, -0.0, 0.0).astype(x.dtype)
  return np.where(zero, signed, out)


def _bitwise_impl(ufunc):
  def impl(x, axes):
    return ufunc.reduce(x, axis=axes, dtype=x.dtype)
  return impl


reduce_sum_p = _reduction("reduce_sum", ("number",), _sum_impl)
reduce_prod_p = _reduction("reduce_prod", ("number",), _prod_impl)
reduce_sum_p.jit_impl = _ordered("+", _sum_impl)
reduce_prod_p.jit_impl = _ordered("*", _prod_impl)
reduce_max_p = _reduction("reduce_max", ("bool", "number"),
                          _extremum_impl(np.max, _lowest, zero_sign=False))
reduce_min_p = _reduction("reduce_min", ("bool", "number"),
                          _extremum_impl(np.min, _highest, zero_sign=True))
reduce_and_p = _reduction("reduce_and", None, _bitwise_impl(np.bitwise_and))
reduce_or_p = _reduction("reduce_or", None, _bitwise_impl(np.bitwise_or))
reduce_xor_p = _reduction("reduce_xor", None, _bitwise_impl(np.bitwise_xor))
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
  ad.defjvp_zero(_p)


def _kept_axes(ndim, axes):
  return tuple(i for i in range(ndim) if i not in axes)


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
  from purejax._src.lax.structural import broadcast_in_dim_p
  shape = operand.aval.shape
  return [broadcast_in_dim_p.bind(ct, shape=shape, sharding=None,
                                  broadcast_dimensions=_kept_axes(len(shape), axes))]


ad.deflinear(reduce_sum_p, _reduce_sum_transpose)


def _as_rows(x, axes):
  """``x`` with the reduced axes moved last and merged: shape kept + (n,)."""
  from purejax._src.lax.structural import reshape_p, transpose_p
  shape = core.get_aval(x).shape
  kept = _kept_axes(len(shape), axes)
  order = kept + tuple(axes)
  if order != tuple(range(len(shape))):
    x = transpose_p.bind(x, permutation=order)
  n = utils.prod(shape[a] for a in axes)
  return reshape_p.bind(x, new_sizes=tuple(shape[a] for a in kept) + (n,), dimensions=None,
                        sharding=None)


def _last_axis_slice(x, start, stop):
  from purejax._src.lax.slicing import slice_p
  shape = core.get_aval(x).shape
  return slice_p.bind(x, start_indices=(0,) * (len(shape) - 1) + (start,),
                      limit_indices=shape[:-1] + (stop,), strides=None)


def _tree_reduce(combine, rows):
  """Reduces the last axis of each array in ``rows`` by combining halves
  pairwise (an odd last element is carried along): log n steps of lax ops,
  which the JVP machinery can differentiate."""
  from purejax._src.lax.structural import concatenate_p, reshape_p
  while core.get_aval(rows[0]).shape[-1] > 1:
    n = core.get_aval(rows[0]).shape[-1]
    half = n // 2
    pairs = combine([_last_axis_slice(r, 0, half) for r in rows],
                    [_last_axis_slice(r, half, 2 * half) for r in rows])
    if n % 2:
      pairs = [concatenate_p.bind(p, _last_axis_slice(r, 2 * half, n),
                                  dimension=len(core.get_aval(r).shape) - 1)
               for p, r in zip(pairs, rows)]
    rows = pairs
  return [reshape_p.bind(r, new_sizes=core.get_aval(r).shape[:-1], dimensions=None,
                         sharding=None) for r in rows]


def _reduce_prod_jvp(primals, tangents, *, axes):
  from purejax._src.lax import ad_util
  from purejax._src.lax.elementwise import mul_p
  x, = primals
  out = reduce_prod_p.bind(x, axes=axes)
  if any(core.get_aval(x).shape[a] == 0 for a in axes):
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))   # empty: constant ones
  # Differentiate a product tree (right where some factors are zero, unlike
  # the sum of out / x_i).
  tree = lambda x: _tree_reduce(lambda a, b: [mul_p.bind(a[0], b[0])], [_as_rows(x, axes)])
  _, (tangent,) = ad_util.jvp_of(tree, [x], tangents)
  return out, tangent


reduce_prod_p.jvp = _reduce_prod_jvp


def _chooser_jvp(prim):
  """max/min: the tangent at the chosen element; ties share it equally."""

  def rule(primals, tangents, *, axes):
    from purejax._src.lax import ad_util
    from purejax._src.lax.elementwise import div_p, eq_p, mul_p
    from purejax._src.lax.structural import broadcast_in_dim_p
    x, = primals
    g, = tangents
    ans = prim.bind(x, axes=axes)
    if type(g) is ad.Zero:
      return ans, ad.Zero(ad.tangent_aval(core.get_aval(ans)))
    shape = core.get_aval(x).shape
    spread = broadcast_in_dim_p.bind(ans, shape=shape, sharding=None,
                                     broadcast_dimensions=_kept_axes(len(shape), axes))
    hits = ad_util.convert(eq_p.bind(x, spread), core.get_aval(g).dtype)
    counts = reduce_sum_p.bind(hits, axes=axes, out_sharding=None)
    picked = reduce_sum_p.bind(mul_p.bind(g, hits), axes=axes, out_sharding=None)
    return ans, div_p.bind(picked, counts)

  return rule


reduce_max_p.jvp = _chooser_jvp(reduce_max_p)
reduce_min_p.jvp = _chooser_jvp(reduce_min_p)


def _axes(axes):
  return utils.int_tuple(axes)


def reduce_sum(operand, axes, *, out_sharding=None):
  """Sum over ``axes``."""
  return utils.bind(reduce_sum_p, operand, axes=_axes(axes), out_sharding=out_sharding)


def reduce_prod(operand, axes):
  """Product over ``axes``."""
  return utils.bind(reduce_prod_p, operand, axes=_axes(axes))


def reduce_max(operand, axes):
  """Maximum over ``axes`` (NaN-propagating)."""
  return utils.bind(reduce_max_p, operand, axes=_axes(axes))


def reduce_min(operand, axes):
  """Minimum over ``axes`` (NaN-propagating)."""
  return utils.bind(reduce_min_p, operand, axes=_axes(axes))


def reduce_and(operand, axes):
  """Bitwise (logical for bool) AND over ``axes``."""
  return utils.bind(reduce_and_p, operand, axes=_axes(axes))


def reduce_or(operand, axes):
  """Bitwise (logical for bool) OR over ``axes``."""
  return utils.bind(reduce_or_p, operand, axes=_axes(axes))


def reduce_xor(operand, axes):
  """Bitwise (logical for bool) XOR over ``axes``."""
  return utils.bind(reduce_xor_p, operand, axes=_axes(axes))


# -- argmax / argmin --------------------------------------------------------------

def _arg_reduction(name, compare_name, np_arg):

  def abstract_eval(operand, *, axes, index_dtype):
    axis, = axes
    if not dtypes.issubdtype(index_dtype, np.integer):
      raise TypeError(f"index_dtype must be an integer type, but got "
                      f"{core.dtype_name(index_dtype)}")
    if not 0 <= axis < operand.ndim:
      raise ValueError(f"Invalid axis {axis} for operand shape {operand.shape}")
    if operand.shape[axis] == 0:
      raise ValueError("argmin and argmax require non-empty reduced dimension. "
                       f"operand.shape={operand.shape} axis={axis}")
    if dtypes.issubdtype(operand.dtype, np.complexfloating):
      raise TypeError(f"{compare_name} does not accept dtype "
                      f"{core.dtype_name(operand.dtype)} at position 0. Accepted dtypes "
                      "at position 0 are subtypes of integer, floating, bool.")
    return core.ShapedArray(_reduced_shape(operand.shape, axes), index_dtype, False)

  def impl(x, *, axes, index_dtype):
    # NumPy, like XLA, returns the first NaN's index, else the first extremum's.
    return np_arg(x, axis=axes[0]).astype(index_dtype)

  prim = standard_primitive(name, abstract_eval, impl)
  prim.batch = _axes_batch_rule(prim)
  return prim


argmax_p = _arg_reduction("argmax", "gt", np.argmax)
argmin_p = _arg_reduction("argmin", "lt", np.argmin)
ad.defjvp_zero(argmax_p)
ad.defjvp_zero(argmin_p)


def argmax(operand, axis, index_dtype):
  """Index of the maximum along ``axis`` (the first one; NaN counts as max)."""
  index_dtype = dtypes.canonicalize_user_dtype(index_dtype, "argmax")
  return utils.bind(argmax_p, operand, axes=(axis,), index_dtype=index_dtype)


def argmin(operand, axis, index_dtype):
  """Index of the minimum along ``axis`` (the first one; NaN counts as min)."""
  index_dtype = dtypes.canonicalize_user_dtype(index_dtype, "argmin")
  return utils.bind(argmin_p, operand, axes=(axis,), index_dtype=index_dtype)


# -- lax.reduce -------------------------------------------------------------------

class _Computation:
  """A reduce computation as a param: hashable, printed without its address
  (as JAX prints it, so jaxprs are reproducible)."""
  __slots__ = ("fun",)

  def __init__(self, fun):
    self.fun = fun

  def __eq__(self, other):
    return type(other) is _Computation and other.fun is self.fun

  def __hash__(self):
    return hash(id(self.fun))

  def __repr__(self):
    name = getattr(self.fun, "__qualname__", type(self.fun).__name__)
    return f"<function {name} at 0xXXXXXXXXXXXX>"

  __str__ = __repr__


def _reduce_abstract_eval(*avals, computation, jaxpr, dimensions):
  n = len(avals) // 2
  operands, inits = avals[:n], avals[n:]
  if any(i.ndim for i in inits):
    raise ValueError(f"reduce found non-scalar initial value: {[i.shape for i in inits]}")
  if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
    raise TypeError("reduce operand dtypes should match corresponding initial value "
                    f"dtypes, got operands={list(operands)} and initial_values={list(inits)}")
  if len({o.shape for o in operands}) != 1:
    raise ValueError("reduce operands must all have the same shape, got "
                     f"{[o.shape for o in operands]}")
  _check_axes(operands[0], dimensions)
  shape = _reduced_shape(operands[0].shape, dimensions)
  return [core.ShapedArray(shape, out.dtype, o.weak_type and i.weak_type)
          for out, o, i in zip(jaxpr.out_avals, operands, inits)]


def _reduce_impl(*args, computation, jaxpr, dimensions):
  # Combine halves pairwise (log n vectorized steps; like XLA, this assumes
  # the computation is associative).  The computation's primitives are
  # elementwise, so each step runs on whole arrays.
  from purejax._src.backends import numpy_backend
  step = numpy_backend.compile_jaxpr(jaxpr)
  n = len(args) // 2
  operands, inits = args[:n], args[n:]
  kept = [i for i in range(operands[0].ndim) if i not in dimensions]
  out_shape = _reduced_shape(operands[0].shape, dimensions)
  vals = []
  for x, init in zip(operands, inits):
    flat = np.transpose(x, kept + list(dimensions)).reshape(out_shape + (-1,))
    start = np.full(out_shape + (1,), init, dtype=x.dtype)
    vals.append(np.concatenate([start, flat], axis=-1))
  while vals[0].shape[-1] > 1:
    half = vals[0].shape[-1] // 2
    pairs = step(*[v[..., :half] for v in vals], *[v[..., half:2 * half] for v in vals])
    vals = [np.concatenate([np.asarray(p, v.dtype), v[..., 2 * half:]], axis=-1)
            for p, v in zip(pairs, vals)]
  return [v[..., 0] for v in vals]


reduce_p = standard_primitive("reduce", _reduce_abstract_eval, _reduce_impl,
                              multiple_results=True)


def _reduce_tree(jaxpr, dimensions, n):
  """``reduce`` as the pairwise combination its implementation performs
  (init values first), with the computation's jaxpr evaluated on halves.
  Inits may be scalars or, batched, of shape (B,) against operands batched
  at axis 0."""
  from purejax._src.jaxpr import eval_jaxpr
  from purejax._src.lax.structural import broadcast_in_dim_p, concatenate_p

  def tree(*args):
    operands, inits = args[:n], args[n:]
    rows = [_as_rows(x, dimensions) for x in operands]
    shape = core.get_aval(rows[0]).shape
    starts = [broadcast_in_dim_p.bind(i, shape=shape[:-1] + (1,), sharding=None,
                                      broadcast_dimensions=tuple(range(core.get_aval(i).ndim)))
              for i in inits]
    rows = [concatenate_p.bind(s, r, dimension=len(shape) - 1) for s, r in zip(starts, rows)]
    return _tree_reduce(lambda a, b: eval_jaxpr(jaxpr, [], *a, *b), rows)

  return tree


@reduce_p.def_jvp
def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
  # Differentiate the same pairwise combination the implementation performs.
  from purejax._src.lax import ad_util
  return ad_util.jvp_of(_reduce_tree(jaxpr, dimensions, len(primals) // 2),
                        primals, tangents)


@reduce_p.def_batch
def _reduce_batch(axis_size, vals, dims, *, computation, jaxpr, dimensions):
  # Operands must share one shape: all get the batch axis first.
  n = len(vals) // 2
  operands = [batching.bdim_at_front(x, d, axis_size) for x, d in zip(vals[:n], dims[:n])]
  dimensions = tuple(a + 1 for a in dimensions)
  inits, init_dims = vals[n:], dims[n:]
  if all(d is None for d in init_dims):
    outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                         dimensions=dimensions)
  else:
    # Init values must be scalars: with one per example, spell the reduction
    # out (JAX raises NotImplementedError here).
    inits = [batching.bdim_at_front(i, d, axis_size) for i, d in zip(inits, init_dims)]
    outs = _reduce_tree(jaxpr, dimensions, n)(*operands, *inits)
    outs = [utils.with_weak_type(out, core.get_aval(x).weak_type and core.get_aval(i).weak_type)
            for out, x, i in zip(outs, operands, inits)]
  return outs, [0] * n


def _monoid_primitive(computation, init, dtype):
  """The reduction primitive equivalent to ``computation`` from ``init``, if any."""
  from purejax._src.lax import api_elementwise as ew
  if isinstance(init, core.Tracer):
    return None
  try:
    value = np.asarray(init)
  except TypeError:
    return None
  if value.shape:
    return None
  table = [
      (ew.add, reduce_sum_p, lambda: 0),
      (ew.mul, reduce_prod_p, lambda: 1),
      (ew.max, reduce_max_p, lambda: _lowest(dtype)),
      (ew.min, reduce_min_p, lambda: _highest(dtype)),
      (ew.bitwise_or, reduce_or_p, lambda: 0),
      (ew.bitwise_and, reduce_and_p, lambda: -1 if dtype != np.bool_ else True),
      (ew.bitwise_xor, reduce_xor_p, lambda: 0),
  ]
  for fun, prim, identity in table:
    if computation is fun:
      return prim if value == identity() else None
  return None


def _reduce_jaxpr(computation, tree, avals):
  from purejax._src import tree_util
  from purejax._src.interpreters import partial_eval as pe

  def flat_fun(*args):
    n = len(args) // 2
    x, y = tree.unflatten(args[:n]), tree.unflatten(args[n:])
    outs, out_tree = tree_util.tree_flatten(computation(x, y))
    if out_tree != tree:
      raise TypeError("reduction computation output must have the same tree structure "
                      f"as the operands: got {out_tree} and {tree}")
    return outs

  jaxpr, consts = pe.trace_to_jaxpr(flat_fun, avals + avals)
  if consts:
    raise TypeError("reduction computations can't close over Tracers or arrays; "
                    "pass them as operands instead")
  return jaxpr


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
  """Reduces ``operands`` over ``dimensions`` with the binary ``computation``
  starting from ``init_values`` (pytrees of the same structure)."""
  from purejax._src import tree_util
  flat_operands, tree = tree_util.tree_flatten(operands)
  flat_inits, init_tree = tree_util.tree_flatten(init_values)
  if tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{tree} vs. {init_tree}")
  dims = utils.int_tuple(dimensions)
  if len(flat_operands) == 1:
    dtype = utils.aval(flat_operands[0]).dtype
    prim = _monoid_primitive(computation, flat_inits[0], dtype)
    if prim is not None:
      params = {"out_sharding": out_sharding} if prim is reduce_sum_p else {}
      return tree.unflatten([prim.bind(flat_operands[0], axes=dims, **params)])
  avals = [core.ShapedArray((), utils.aval(x).dtype) for x in flat_operands]
  jaxpr = _reduce_jaxpr(computation, tree, avals)
  outs = utils.bind(reduce_p, *flat_operands, *flat_inits,
                    computation=_Computation(computation), jaxpr=jaxpr, dimensions=dims)
  return tree.unflatten(outs)
