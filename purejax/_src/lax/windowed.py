"""Windowed reductions: ``lax.reduce_window`` with its primitives
reduce_window_sum / _max / _min and the general ``reduce_window`` (a jaxpr
for the computation), and ``select_and_gather_add`` /
``select_and_scatter_add``, the pair behind max pooling's derivatives.

The NumPy implementations' window folds live in windowed_numpy.py.
"""
import operator

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import utils
from purejax._src.lax.convolution import _dilate_shape, padtype_to_pads
from purejax._src.lax.elementwise import ge_p, le_p
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.reductions import _highest, _lowest
from purejax._src.lax.slicing import slice_p
from purejax._src.lax.structural import _pad_impl, pad_p
from purejax._src.lax.windowed_numpy import (
    _base, _fast_extremum, _fast_gather, _fold, _max, _min, _offset_slices, _selected,
    _where_zero, reduce_window_shape_tuple)


# -- shapes -------------------------------------------------------------------------

def _check_shapelike(fun_name, arg_name, obj, non_zero=False):
  """A static shape-like param: a 1-d sequence of integers (positive ones when
  ``non_zero``), with JAX's messages."""
  if not isinstance(obj, (tuple, list, np.ndarray)):
    raise TypeError(f"{fun_name} {arg_name} must be of type tuple/list/ndarray, "
                    f"got {type(obj)}.")
  if not len(obj):
    return
  if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in obj):
    raise TypeError(f"{fun_name} {arg_name} must have every element be an integer type, "
                    f"got {tuple(map(type, obj))}.")
  lower, words = (1, "strictly positive") if non_zero else (0, "nonnegative")
  if not all(d >= lower for d in obj):
    raise TypeError(f"{fun_name} {arg_name} must have every element be {words}, "
                    f"got {obj}.")


def _window_shape(operand, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation, name="reduce_window"):
  """Checks the window params against ``operand`` (an aval); the output shape."""
  _check_shapelike(name, "window_dimensions", window_dimensions, non_zero=True)
  _check_shapelike(name, "window_strides", window_strides, non_zero=True)
  _check_shapelike(name, "base_dilation", base_dilation)
  _check_shapelike(name, "window_dilation", window_dilation)
  if operand.ndim != len(window_dimensions):
    raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                    f"operand shape {operand.shape} with window_dimensions "
                    f"{window_dimensions}.")
  for arg, value in (("window_strides", window_strides), ("base_dilation", base_dilation),
                     ("window_dilation", window_dilation)):
    if len(value) != len(window_dimensions):
      raise TypeError(f"{name} got inconsistent {arg} and window_dimensions: got {arg} "
                      f"{value} and window_dimensions {window_dimensions}.")
  if len(padding) != len(window_dimensions):
    raise ValueError(f"{name} got {len(padding)} padding pairs for an operand of rank "
                     f"{operand.ndim}: padding={padding}.")
  return reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                   padding, base_dilation, window_dilation)


# -- the monoid primitives -----------------------------------------------------------

def _monoid_primitive(name, op, identity, check=None, fast=None):

  def abstract_eval(operand, **params):
    if check is not None:
      check(operand)
    shape = _window_shape(operand, **params)
    return core.ShapedArray(shape, operand.dtype, operand.weak_type)

  def impl(x, **params):
    if fast is not None:
      out = _fast_extremum(x, fast, **params)
      if out is not None:
        return out
    init = identity(x.dtype)
    out, = _fold([x], [init], lambda accs, xs: [op(accs[0], xs[0])], **params)
    return out

  prim = standard_primitive(name, abstract_eval, impl, impl_on_gpu_arrays=True)
  prim.c_code = None
  return prim


def _check_number(operand):
  if not dtypes.issubdtype(operand.dtype, np.number):
    raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                    f"{core.dtype_name(operand.dtype)}")


reduce_window_sum_p = _monoid_primitive("reduce_window_sum", np.add, lambda d: 0,
                                        _check_number)
reduce_window_max_p = _monoid_primitive("reduce_window_max", _max, _lowest, fast=np.maximum)
reduce_window_min_p = _monoid_primitive("reduce_window_min", _min, _highest, fast=np.minimum)


def _insert(values, dim, value):
  return values[:dim] + (value,) + values[dim:]


def _monoid_batch(prim):
  """A window of 1 along the batch axis."""

  def rule(axis_size, vals, dims, *, window_dimensions, window_strides, padding,
           base_dilation, window_dilation):
    (x,), (d,) = vals, dims
    return prim.bind(x, window_dimensions=_insert(window_dimensions, d, 1),
                     window_strides=_insert(window_strides, d, 1),
                     padding=_insert(padding, d, (0, 0)),
                     base_dilation=_insert(base_dilation, d, 1),
                     window_dilation=_insert(window_dilation, d, 1)), d

  return rule


def _sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                   base_dilation, window_dilation):
  # Each input element feeds the outputs whose windows cover it: spread the
  # cotangent out by the strides, pad it, and sum windows again with the
  # base dilation as strides (the window of ones is its own flip).
  if type(ct) is ad.Zero:
    return [ad.Zero(operand.aval)]
  in_shape = operand.aval.shape
  ct_shape = core.get_aval(ct).shape
  span = _dilate_shape(window_dimensions, window_dilation)
  before = [w - lo - 1 for w, (lo, _) in zip(span, padding)]
  after = [n + w - 1 - m - b for n, w, m, b in zip(
      _dilate_shape(in_shape, base_dilation), span, _dilate_shape(ct_shape, window_strides),
      before)]
  config = tuple((np.int64(b), np.int64(a), s - 1)   # np ints, printed as JAX does
                 for b, a, s in zip(before, after, window_strides))
  padded = pad_p.bind(ct, np.zeros((), core.get_aval(ct).dtype), padding_config=config)
  ones = (1,) * len(in_shape)
  return [reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                   window_strides=base_dilation, padding=((0, 0),) * len(ones),
                                   base_dilation=ones, window_dilation=window_dilation)]


ad.deflinear(reduce_window_sum_p, _sum_transpose)
for _prim, _select in ((reduce_window_max_p, ge_p), (reduce_window_min_p, le_p)):
  _prim.batch = _monoid_batch(_prim)
  # The tangent of the element each window picks (the first extremum).
  ad.defjvp(_prim, lambda g, x, _select=_select, **params: select_and_gather_add_p.bind(
      g, x, select_prim=_select, **params))
reduce_window_sum_p.batch = _monoid_batch(reduce_window_sum_p)


# -- the general reduce_window -------------------------------------------------------

def _generic_abstract_eval(*avals, jaxpr, consts, **params):
  n = len(avals) // 2
  operands, inits = avals[:n], avals[n:]
  if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
    raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                    f"got operand dtypes {[o.dtype for o in operands]} and init_value "
                    f"dtypes {[i.dtype for i in inits]}.")
  if any(i.ndim for i in inits):
    raise TypeError("reduce_window expected init_values to be scalars but init_values "
                    f"have shapes {[i.shape for i in inits]}.")
  shape = _window_shape(operands[0], **params)
  return [core.ShapedArray(shape, o.dtype) for o in operands]


def _generic_impl(*args, jaxpr, consts, **params):
  from purejax._src.backends import numpy_backend
  from purejax._src.interpreters.partial_eval import convert_constvars_jaxpr
  run = numpy_backend.compile_jaxpr(convert_constvars_jaxpr(jaxpr))
  n = len(args) // 2
  consts = [np.asarray(c) for c in consts]

  def step(accs, elems):
    outs = run(*consts, *accs, *elems)
    return [np.broadcast_to(np.asarray(o, a.dtype), a.shape) for o, a in zip(outs, accs)]

  return _fold(list(args[:n]), list(args[n:]), step, skip_padding=True, **params)


reduce_window_p = standard_primitive("reduce_window", _generic_abstract_eval, _generic_impl,
                                     multiple_results=True)
reduce_window_p.c_code = None


@reduce_window_p.def_jvp
def _generic_jvp(primals, tangents, *, jaxpr, consts, **params):
  # Reduce (primal, tangent) pairs with the computation's JVP; operands
  # without tangents (integers) stay primal-only.
  from purejax._src.jaxpr import eval_jaxpr
  n = len(primals) // 2
  operands, inits = primals[:n], primals[n:]
  if not all(type(t) is ad.Zero for t in tangents[n:]):
    raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
  avals = [core.get_aval(x) for x in operands]
  live = [dtypes.issubdtype(a.dtype, np.inexact) for a in avals]
  op_tangents = [ad.instantiate(t) for t, keep in zip(tangents[:n], live) if keep]
  init_tangents = [np.zeros((), a.dtype) for a, keep in zip(avals, live) if keep]
  k = len(op_tangents)

  def wrapper(left, right):
    def tangents_of(ts):
      it = iter(ts)
      return [next(it) if keep else ad.Zero(ad.tangent_aval(core.get_aval(p)))
              for p, keep in zip(left[:n], live)]
    outs, out_tangents = ad.jvp_flat(lambda *a: eval_jaxpr(jaxpr, consts, *a),
                                     [*left[:n], *right[:n]],
                                     [*tangents_of(left[n:]), *tangents_of(right[n:])])
    kept = [ad.instantiate(t) for t, keep in zip(out_tangents, live) if keep]
    return [*outs, *kept]

  outs = reduce_window([*operands, *op_tangents], [*inits, *init_tangents], wrapper, **params)
  primal_outs, tangent_outs = outs[:n], iter(outs[n:n + k])
  return primal_outs, [next(tangent_outs) if keep else ad.Zero.from_primal_value(p)
                       for p, keep in zip(primal_outs, live)]


@reduce_window_p.def_batch
def _generic_batch(axis_size, vals, dims, *, jaxpr, consts, window_dimensions,
                   window_strides, padding, base_dilation, window_dilation):
  n = len(vals) // 2
  if any(d is not None for d in dims[n:]):
    raise NotImplementedError("reduce_window batching is not implemented for initial "
                              "values")
  operands = [batching.bdim_at_front(x, d, axis_size) for x, d in zip(vals[:n], dims[:n])]
  outs = reduce_window_p.bind(
      *operands, *vals[n:], jaxpr=jaxpr, consts=consts,
      window_dimensions=(1,) + window_dimensions, window_strides=(1,) + window_strides,
      padding=((0, 0),) + padding, base_dilation=(1,) + base_dilation,
      window_dilation=(1,) + window_dilation)
  return outs, [0] * n


# -- select_and_gather_add / select_and_scatter_add ----------------------------------

def _select_fill(select_prim, dtype):
  """The key that loses every comparison: -inf for ``ge`` (max), +inf for ``le``."""
  return _lowest(dtype) if select_prim is ge_p else _highest(dtype)


def _gather_abstract_eval(tangents, operand, *, select_prim, **params):
  if tangents.shape != operand.shape:
    raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                    f"{tangents.shape} and {operand.shape}.")
  shape = _window_shape(operand, **params)
  return core.ShapedArray(shape, tangents.dtype, tangents.weak_type and operand.weak_type)


def _gather_impl(tangents, operand, *, select_prim, **params):
  # XLA's variadic reduce_window over (key, tangent) pairs from (fill, 0):
  # the accumulator keeps its pair while select(acc, x) holds.
  fill = _select_fill(select_prim, operand.dtype)
  out = _fast_gather(tangents, operand, select_prim, fill, **params)
  if out is not None:
    return out
  select = select_prim.impl

  def step(accs, elems):
    keep = select(accs[0], elems[0])
    return [np.where(keep, a, e) for a, e in zip(accs, elems)]

  _, out = _fold([operand, tangents], [fill, 0], step, skip_padding=True, **params)
  return out


select_and_gather_add_p = standard_primitive(
    "select_and_gather_add", _gather_abstract_eval, _gather_impl, impl_on_gpu_arrays=True)
select_and_gather_add_p.c_code = None
# Linear in the tangents; the operand only chooses.
ad.defjvp(select_and_gather_add_p,
          lambda g, t, x, **params: select_and_gather_add_p.bind(g, x, **params), None)


@select_and_gather_add_p.def_transpose
def _gather_transpose(ct, tangents, operand, *, select_prim, window_dimensions,
                      window_strides, padding, base_dilation, window_dilation):
  if any(d != 1 for d in window_dilation):
    raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with "
                              f"window dilation, got window_dilation={window_dilation}.")
  if type(ct) is ad.Zero:
    return [ad.Zero(tangents.aval), None]
  dilated = any(d != 1 for d in base_dilation)
  if dilated:   # the holes hold the losing key, as in the forward pass
    fill = np.array(_select_fill(select_prim, core.get_aval(operand).dtype),
                    core.get_aval(operand).dtype)
    operand = pad_p.bind(operand, fill, padding_config=tuple((0, 0, d - 1)
                                                             for d in base_dilation))
  out = select_and_scatter_add_p.bind(ct, operand, select_prim=select_prim,
                                      window_dimensions=window_dimensions,
                                      window_strides=window_strides, padding=padding)
  if dilated:
    shape = core.get_aval(out).shape
    out = slice_p.bind(out, start_indices=(0,) * len(shape), limit_indices=shape,
                       strides=base_dilation)
  return [out, None]


@select_and_gather_add_p.def_batch
def _gather_batch(axis_size, vals, dims, *, window_dimensions, window_strides, padding,
                  base_dilation, window_dilation, **params):
  t, x = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
  return select_and_gather_add_p.bind(
      t, x, window_dimensions=(1,) + window_dimensions, window_strides=(1,) + window_strides,
      padding=((0, 0),) + padding, base_dilation=(1,) + base_dilation,
      window_dilation=(1,) + window_dilation, **params), 0


def _scatter_abstract_eval(source, operand, *, select_prim, window_dimensions,
                           window_strides, padding):
  _check_shapelike("select_and_scatter", "window_dimensions", window_dimensions)
  _check_shapelike("select_and_scatter", "window_strides", window_strides)
  if len(window_dimensions) != len(window_strides):
    raise TypeError("select_and_scatter got inconsistent window_strides and "
                    f"window_dimensions: got window_strides {window_strides} and "
                    f"window_dimensions {window_dimensions}.")
  ones = (1,) * operand.ndim
  expected = _window_shape(operand, window_dimensions, window_strides, padding, ones, ones,
                           name="select_and_scatter_add")
  if source.shape != expected:
    raise TypeError(f"select_and_scatter_add source shape {source.shape} does not match "
                    f"the window output shape {expected}.")
  return core.ShapedArray(operand.shape, source.dtype, source.weak_type and operand.weak_type)


def _scatter_impl(source, operand, *, select_prim, window_dimensions, window_strides,
                  padding):
  # As XLA on CPU: pad the operand with the losing key, pick in each window
  # the first element and switch to a later one whenever select(picked, x)
  # fails, then add each source value at its window's pick.
  ones = (1,) * operand.ndim
  fill = _select_fill(select_prim, operand.dtype)
  base = _base(operand, fill, padding, ones)
  slices = list(_offset_slices(source.shape, window_dimensions, window_strides, ones))
  out = array_namespace.of(base).zeros(base.shape, source.dtype)
  if source.size:
    masks = _selected(base, slices, select_prim)
    add = np.logical_or if source.dtype == np.bool_ else np.add
    zero = source.dtype.type(0)
    if all(s >= w for s, w in zip(window_strides, window_dimensions)):
      # Windows do not overlap: each element gets at most one value (0 + v,
      # which turns -0.0 into +0.0 as XLA's sum does).
      value = add(zero, source)
      for mask, sl in zip(masks, slices):
        out[sl] = _where_zero(mask, value)
    else:
      # Reverse window order adds each element's contributions in the order
      # of the windows (row-major), as XLA's loop over the source does.
      for mask, sl in zip(reversed(masks), reversed(slices)):
        out[sl] = add(out[sl], _where_zero(mask, source))
  if not any(lo or hi for lo, hi in padding):
    return out
  unpad = tuple((-lo, -hi, 0) for lo, hi in padding)
  return _pad_impl(out, source.dtype.type(0), padding_config=unpad)


# (impl_on_gpu_arrays: these implementations run on CuPy's arrays too; see dot_general_p)
select_and_scatter_add_p = standard_primitive(
    "select_and_scatter_add", _scatter_abstract_eval, _scatter_impl, impl_on_gpu_arrays=True)
select_and_scatter_add_p.c_code = None
ad.defjvp(select_and_scatter_add_p,
          lambda g, s, x, **params: select_and_scatter_add_p.bind(g, x, **params), None)


@select_and_scatter_add_p.def_transpose
def _scatter_transpose(ct, source, operand, *, select_prim, window_dimensions,
                       window_strides, padding):
  if type(ct) is ad.Zero:
    return [ad.Zero(source.aval), None]
  ones = (1,) * len(window_dimensions)
  return [select_and_gather_add_p.bind(
      ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
      window_strides=window_strides, padding=padding, base_dilation=ones,
      window_dilation=ones), None]


@select_and_scatter_add_p.def_batch
def _scatter_batch(axis_size, vals, dims, *, window_dimensions, window_strides, padding,
                   **params):
  s, x = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
  return select_and_scatter_add_p.bind(
      s, x, window_dimensions=(1,) + window_dimensions, window_strides=(1,) + window_strides,
      padding=((0, 0),) + padding, **params), 0


# -- the public function -------------------------------------------------------------

def _ints(name, values):
  try:
    return tuple(operator.index(v) for v in values)
  except TypeError:
    raise TypeError(f"reduce_window {name} must have every element be an integer type, "
                    f"got {tuple(map(type, values))}.") from None


def _window_params(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
  window_dimensions = _ints("window_dimensions", window_dimensions)
  rank = len(window_dimensions)
  if isinstance(padding, str):
    dilated = (window_dimensions if window_dilation is None
               else _dilate_shape(window_dimensions, _ints("window_dilation", window_dilation)))
    if window_strides is None and padding.upper() != "VALID":
      raise ValueError(f"reduce_window with padding {padding!r} needs window_strides.")
    padding = padtype_to_pads(operand_shape, dilated, window_strides or [1] * rank, padding)
  padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
  ones = (1,) * rank
  return dict(
      window_dimensions=window_dimensions,
      window_strides=ones if window_strides is None else _ints("window_strides",
                                                                window_strides),
      padding=padding,
      base_dilation=ones if base_dilation is None else _ints("base_dilation", base_dilation),
      window_dilation=(ones if window_dilation is None
                       else _ints("window_dilation", window_dilation)))


def _monoid_reducer(computation, inits):
  """The monoid primitive ``computation`` from ``inits`` amounts to, if any."""
  from purejax._src.lax import api_elementwise as ew
  if len(inits) != 1 or isinstance(inits[0], core.Tracer):
    return None
  try:
    aval = core.get_aval(inits[0])
  except TypeError:
    return None
  if aval.shape:
    return None
  value = core.concrete_numpy_value(inits[0])
  table = ((ew.add, reduce_window_sum_p, lambda d: 0), (ew.max, reduce_window_max_p, _lowest),
           (ew.min, reduce_window_min_p, _highest))
  for fun, prim, identity in table:
    if computation is fun:
      return prim if value == identity(aval.dtype) else None
  return None


def _computation_jaxpr(computation, tree, init_avals):
  from purejax._src.interpreters import partial_eval as pe
  n = len(init_avals)

  def flat_fun(*args):
    outs, out_tree = tree_util.tree_flatten(
        computation(tree.unflatten(args[:n]), tree.unflatten(args[n:])))
    if out_tree != tree:
      raise ValueError("reduce_window output must have the same tree structure as the "
                       f"operands {tree} vs. {out_tree}")
    return outs

  jaxpr, consts = pe.trace_to_jaxpr(flat_fun, list(init_avals) * 2)
  if any(isinstance(c, core.Tracer) for c in consts):
    raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                              "open an issue at https://github.com/jax-ml/jax.")
  return jaxpr, tuple(consts)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
  """Reduces each window of ``operand`` (an array or a pytree of arrays) with
  ``computation`` from ``init_value``, as XLA's ReduceWindow.

  ``lax.add`` from 0 and ``lax.max``/``lax.min`` from their identities become
  reduce_window_sum/max/min; anything else (``lax.mul``, argmax-style pairs)
  a general reduce_window folding windows in row-major order."""
  flat_operands, tree = tree_util.tree_flatten(operand)
  flat_inits, init_tree = tree_util.tree_flatten(init_value)
  if tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{tree} vs. {init_tree}")
  if not flat_operands:
    raise ValueError("reduce_window must have at least one operand.")
  shape = utils.aval(flat_operands[0]).shape
  params = _window_params(shape, window_dimensions, window_strides, padding, base_dilation,
                          window_dilation)
  prim = _monoid_reducer(computation, flat_inits)
  if prim is not None:
    return tree.unflatten([utils.bind(prim, flat_operands[0], **params)])
  init_avals = [core.get_aval(i) for i in flat_inits]
  jaxpr, consts = _computation_jaxpr(computation, tree, init_avals)
  outs = utils.bind(reduce_window_p, *flat_operands, *flat_inits, jaxpr=jaxpr,
                    consts=consts, **params)
  return tree.unflatten(outs)
