"""dot_general (tensor contraction) and lax.dot, with lax.Precision.

The output axes are: batch axes, then lhs free axes, then rhs free axes.
Operands may have different dtypes: the result has the "higher precision"
one, as XLA decides (complex > more exponent bits > more mantissa bits >
more bits > signed), unless ``preferred_element_type`` asks for another.
"""
import enum

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.config import config
from purejax._src.interpreters import ad
from purejax._src.lax import utils
from purejax._src.lax.convert import _convert_impl
from purejax._src.lax.families import standard_primitive


class Precision(enum.Enum):
  """How precisely a matrix product is computed (purejax is always exact)."""
  DEFAULT = 0
  HIGH = 1
  HIGHEST = 2

  def __repr__(self):
    return f"Precision.{self.name}"

  def __str__(self):
    return self.name

  @classmethod
  def _missing_(cls, value):
    return _PRECISION_NAMES.get(value) if isinstance(value, str) else None


_PRECISION_NAMES = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
}


def _precision_error(precision):
  names = list(_PRECISION_NAMES) + [None]
  return ValueError(
      "Precision argument must be one of:\n- None,\n"
      f"- a string in {names},\n- a lax.Precision value,\n"
      "- a tuple of two lax.Precision values or strings,\n"
      "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
      f"- a lax.DotAlgorithm value;\nbut got {precision}.")


def _one_precision(p, whole):
  if isinstance(p, Precision):
    return p
  if isinstance(p, str) and p in _PRECISION_NAMES:
    return _PRECISION_NAMES[p]
  raise _precision_error(whole)


# jax_default_matmul_precision's names for a precision (its DotAlgorithmPreset
# names are accepted by the flag but not recorded in jaxprs here).
_DEFAULT_PRECISIONS = {"default": "DEFAULT", "bfloat16": "DEFAULT", "high": "HIGH",
                       "tensorfloat32": "HIGH", "highest": "HIGHEST", "float32": "HIGHEST"}


def canonicalize_precision(precision):
  """None, or a pair of Precision values (lhs, rhs); None takes
  ``jax_default_matmul_precision`` when it is set."""
  if precision is None:
    name = _DEFAULT_PRECISIONS.get(config.jax_default_matmul_precision)
    return None if name is None else (Precision[name], Precision[name])
  if isinstance(precision, (Precision, str)):
    p = _one_precision(precision, precision)
    return (p, p)
  if isinstance(precision, (tuple, list)) and len(precision) == 2:
    return tuple(_one_precision(p, precision) for p in precision)
  raise _precision_error(precision)


# -- dtypes ---------------------------------------------------------------------

def _precision_rank(dtype):
  """What XLA compares to pick the higher-precision of two dtypes."""
  is_complex = dtypes.issubdtype(dtype, np.complexfloating)
  real = np.finfo(dtype).dtype if is_complex else dtype
  if dtypes.issubdtype(real, np.floating):
    info = dtypes.finfo(real)
    exponent, mantissa = info.maxexp, info.nmant
  else:
    exponent = mantissa = -1
  bits = 1 if real == np.bool_ else real.itemsize * 8
  return (is_complex, exponent, mantissa, bits,
          not dtypes.issubdtype(real, np.unsignedinteger))


def _higher(a, b):
  ra, rb = _precision_rank(a), _precision_rank(b)
  if ra == rb and a != b:
    raise TypeError(f"dot_general argument type error: {a}, {b}")
  return a if ra >= rb else b


def _is_integral(dtype):
  return dtype == np.bool_ or dtypes.issubdtype(dtype, np.integer)


def _result_dtype(lhs, rhs, preferred):
  result = _higher(lhs.dtype, rhs.dtype)
  if preferred is None or preferred == result:
    return result
  if (_is_integral(result) and _is_integral(preferred)
      and dtypes.itemsize_bits(preferred) < dtypes.itemsize_bits(result)):
    raise TypeError("`preferred_element_type` must not be narrower than the original "
                    f"type, got preferred_element_type of {core.dtype_name(preferred)} "
                    f"for result type of {core.dtype_name(result)}.")
  return preferred


# -- shapes ---------------------------------------------------------------------

def _check_side(side, ndim, batch, contract):
  if any(not 0 <= d < ndim for d in batch + contract):
    raise TypeError(f"dot_general requires {side} dimension numbers to be nonnegative "
                    f"and less than the number of axes of the {side} value, got "
                    f"{side}_batch of {batch} and {side}_contracting of {contract} for "
                    f"{side} of rank {ndim}")
  if len(set(batch)) != len(batch):
    raise TypeError(f"dot_general requires {side} batch dimensions to be distinct, got "
                    f"{side}_batch {batch}.")
  if len(set(contract)) != len(contract):
    raise TypeError(f"dot_general requires {side} contracting dimensions to be "
                    f"distinct, got {side}_contracting {contract}.")
  if set(batch) & set(contract):
    raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                    f"contracting dimensions, got {side}_batch {batch} and "
                    f"{side}_contracting {contract}.")


def _free_dims(ndim, batch, contract):
  return [d for d in range(ndim) if d not in batch and d not in contract]


def _dot_general_shape(lhs, rhs, dimension_numbers):
  (lc, rc), (lb, rb) = dimension_numbers
  if len(lb) != len(rb):
    raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                    f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
  _check_side("lhs", lhs.ndim, lb, lc)
  _check_side("rhs", rhs.ndim, rb, rc)
  lb_shape = tuple(lhs.shape[d] for d in lb)
  rb_shape = tuple(rhs.shape[d] for d in rb)
  if lb_shape != rb_shape:
    raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                    f"to have the same shape, got {lb_shape} and {rb_shape}.")
  lc_shape = tuple(lhs.shape[d] for d in lc)
  rc_shape = tuple(rhs.shape[d] for d in rc)
  if lc_shape != rc_shape:
    raise TypeError("dot_general requires contracting dimensions to have the same "
                    f"shape, got {lc_shape} and {rc_shape}.")
  return (lb_shape
          + tuple(lhs.shape[d] for d in _free_dims(lhs.ndim, lb, lc))
          + tuple(rhs.shape[d] for d in _free_dims(rhs.ndim, rb, rc)))


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding):
  shape = _dot_general_shape(lhs, rhs, dimension_numbers)
  dtype = _result_dtype(lhs, rhs, preferred_element_type)
  return core.ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# -- implementation -------------------------------------------------------------

def _compute_dtype(lhs, rhs, preferred):
  """The dtype the products are summed in: the higher-precision of the
  inputs and the requested result, with half floats widened to float32."""
  dtype = _higher(lhs, rhs)
  if preferred is not None and _precision_rank(preferred) > _precision_rank(dtype):
    dtype = preferred
  if dtype == np.bool_:
    return np.dtype(np.int32)
  if dtypes.issubdtype(dtype, np.floating) and dtype.itemsize < 4:
    return np.dtype(np.float32)
  return dtype


def _as_batched_matrices(x, batch, free, contract, contract_last):
  """x transposed and reshaped to (batch, free, contract) or (batch, contract, free)."""
  inner = [free, contract] if contract_last else [contract, free]
  sizes = [utils.prod(x.shape[d] for d in dims) for dims in [batch] + inner]
  order = list(batch) + list(inner[0]) + list(inner[1])
  return np.transpose(x, order).reshape(sizes)


def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                      out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  out_dtype = _result_dtype(lhs, rhs, preferred_element_type)
  compute = _compute_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
  lhs = _convert_impl(lhs, new_dtype=compute, weak_type=False)
  rhs = _convert_impl(rhs, new_dtype=compute, weak_type=False)
  lf = _free_dims(lhs.ndim, lb, lc)
  rf = _free_dims(rhs.ndim, rb, rc)
  a = _as_batched_matrices(lhs, lb, lf, lc, contract_last=True)
  b = _as_batched_matrices(rhs, rb, rf, rc, contract_last=False)
  with np.errstate(all="ignore"):
    # BLAS takes 2-D operands in either memory order; stacks of matrices
    # only when contiguous (NumPy otherwise runs a slow loop).
    if a.shape[0] == 1:
      out = np.matmul(a[0], b[0])
    else:
      out = np.matmul(array_namespace.contiguous(a), array_namespace.contiguous(b))
  shape = (tuple(lhs.shape[d] for d in lb) + tuple(lhs.shape[d] for d in lf)
           + tuple(rhs.shape[d] for d in rf))
  return _convert_impl(out.reshape(shape), new_dtype=out_dtype, weak_type=False)


def _dimension_numbers_text(dimension_numbers):
  (lc, rc), (lb, rb) = dimension_numbers
  return f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"


class _Printed:
  """A param value printed as given text."""
  def __init__(self, text):
    self.text = text

  def __str__(self):
    return self.text


def _dot_general_pp(params):
  shown = [("dimension_numbers", _Printed(_dimension_numbers_text(
      params["dimension_numbers"])))]
  for name in ("out_sharding", "precision", "preferred_element_type"):
    if params[name] is not None:
      shown.append((name, params[name]))
  return sorted(shown, key=lambda kv: kv[0])


# impl_on_gpu_arrays: the impl uses only NumPy functions that CuPy arrays
# dispatch to CuPy, so the GPU backend runs it on the device (cuBLAS).
dot_general_p = standard_primitive("dot_general", _dot_general_abstract_eval,
                                   _dot_general_impl, pp_params=_dot_general_pp,
                                   impl_on_gpu_arrays=True)


_HALVES = (np.dtype(np.float16), dtypes.bfloat16)
_BLAS_TYPES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _out_dtype(eqn):
  return np.dtype(eqn.outvars[0].aval.dtype)


def product_needs_expansion(eqn):
  """Whether a product is one BLAS cannot compute as it is: 16-bit floats,
  integers or booleans, or operands of another dtype than the result."""
  out = _out_dtype(eqn)
  return out not in _BLAS_TYPES or any(np.dtype(v.aval.dtype) != out for v in eqn.invars)


def _convert(x, dtype):
  from purejax._src.lax.convert import convert_element_type_p
  if np.dtype(x.aval.dtype) == dtype:
    return x
  return convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=False)


def float_result(eqn):
  out = _out_dtype(eqn)
  return out.kind in "fc" or out == dtypes.bfloat16


def widened_product(primitive, lhs, rhs, params):
  """A float product (``dot_general`` or a convolution) BLAS cannot take as
  it is, as XLA:CPU computes it: the operands converted to the result's
  type (16-bit floats: to float32, the result rounded once) and one
  product of that type."""
  out_dtype = np.dtype(params["preferred_element_type"] or lhs.aval.dtype)
  wide = np.dtype(np.float32) if out_dtype in _HALVES else out_dtype
  operands = [_convert(x, wide) for x in (lhs, rhs)]
  return _convert(primitive.bind(*operands, **dict(params, preferred_element_type=wide)),
                  out_dtype)


def _product_c_expansion(lhs, rhs, **params):
  """The products BLAS cannot take.  Floats: ``widened_product``.
  Float operands and an integer result: the float product, converted (as
  the eager implementation).  Integers: operands converted to the result's type and multiplied
  elementwise, then summed over the contracted axes (wrapping as the type
  does), which compiles to one loop nest.  Booleans: the same in int32,
  then "any"."""
  out_dtype = np.dtype(params["preferred_element_type"] or lhs.aval.dtype)
  if out_dtype.kind in "fc" or out_dtype == dtypes.bfloat16:
    return widened_product(dot_general_p, lhs, rhs, params)
  compute = _compute_dtype(lhs.aval.dtype, rhs.aval.dtype, params["preferred_element_type"])
  if compute.kind in "fc":   # float operands, an integer result: a float product, converted
    return _convert(widened_product(dot_general_p, lhs, rhs,
                                    dict(params, preferred_element_type=compute)), out_dtype)
  acc = np.dtype(np.int32) if out_dtype == np.bool_ else out_dtype
  return _convert(_summed_products(_convert(lhs, acc), _convert(rhs, acc),
                                   params["dimension_numbers"]), out_dtype)


def _summed_products(lhs, rhs, dimension_numbers):
  from purejax._src.lax.elementwise import mul_p
  from purejax._src.lax.reductions import reduce_sum_p
  from purejax._src.lax.structural import broadcast_in_dim_p, transpose_p
  (lc, rc), (lb, rb) = dimension_numbers
  lf = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
  rf = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
  nb, nl, nk = len(lb), len(lf), len(lc)
  # Both operands broadcast to (batch, lhs free, contracted, rhs free): the
  # sum over the middle axes runs along rows of the right operand, which
  # vectorizes over its free axes.
  shape = tuple([lhs.aval.shape[d] for d in list(lb) + lf + list(lc)]
                + [rhs.aval.shape[d] for d in rf])
  batch, left = list(range(nb)), list(range(nb, nb + nl))
  contracted, right = list(range(nb + nl, nb + nl + nk)), list(range(nb + nl + nk, len(shape)))

  def spread(x, order, dims):
    x = transpose_p.bind(x, permutation=tuple(order)) if list(order) != sorted(order) else x
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=tuple(dims),
                                   sharding=None)
  terms = mul_p.bind(spread(lhs, list(lb) + lf + list(lc), batch + left + contracted),
                     spread(rhs, list(rb) + rf + list(rc), batch + right + contracted))
  if not nk:
    return terms
  return reduce_sum_p.bind(terms, axes=tuple(contracted), out_sharding=None)


dot_general_p.c_expansion = _product_c_expansion
dot_general_p.c_expansion_applies = product_needs_expansion

# Bilinear: the JVP is the product rule, and each operand's transpose is
# another contraction, of the cotangent with the other operand.
ad.defjvp(dot_general_p,
          lambda g, lhs, rhs, **params: dot_general_p.bind(g, rhs, **params),
          lambda g, lhs, rhs, **params: dot_general_p.bind(lhs, g, **params))


def _dot_transpose_one(ct, x_aval, other, dimension_numbers, precision, x_is_rhs,
                       preferred_element_type=None):
  """The cotangent of operand x (lhs, or rhs when ``x_is_rhs``)."""
  (lc, rc), (lb, rb) = dimension_numbers
  (xc, yc), (xb, yb) = ((rc, lc), (rb, lb)) if x_is_rhs else ((lc, rc), (lb, rb))
  x_free = _free_dims(x_aval.ndim, xb, xc)
  y_free = _free_dims(core.get_aval(other).ndim, yb, yc)
  # ct's axes: batch, lhs free, rhs free.  Contract its y-free axes with y's.
  nb = len(xb)
  first = nb if x_is_rhs else nb + len(x_free)
  ct_y_free = tuple(range(first, first + len(y_free)))
  dims = ((ct_y_free, tuple(y_free)), (tuple(range(nb)), tuple(yb)))
  if x_is_rhs and precision is not None:
    precision = precision[::-1]
  out = dot_general_p.bind(ct, other, dimension_numbers=dims, precision=precision,
                           preferred_element_type=preferred_element_type, out_sharding=None)
  # out's axes: batch, x's free axes, then y's contracting axes in increasing
  # order, which stand for the x axes they were contracted with.
  x_axes = list(xb) + x_free + [xc[list(yc).index(j)] for j in sorted(yc)]
  perm = tuple(int(i) for i in np.argsort(x_axes))
  if perm != tuple(range(len(perm))):
    from purejax._src.lax.structural import transpose_p
    out = transpose_p.bind(out, permutation=perm)
  if core.get_aval(out).dtype != x_aval.dtype:
    from purejax._src.lax.convert import convert_element_type_p
    out = convert_element_type_p.bind(out, new_dtype=x_aval.dtype, weak_type=False)
  return out


@dot_general_p.def_transpose
def _dot_general_transpose(ct, lhs, rhs, *, dimension_numbers, precision,
                           preferred_element_type, out_sharding):
  if ad.is_undefined_primal(lhs) and ad.is_undefined_primal(rhs):
    raise ValueError("dot_general is linear in one operand at a time")
  if ad.is_undefined_primal(lhs):
    return [_dot_transpose_one(ct, lhs.aval, rhs, dimension_numbers, precision, False,
                               preferred_element_type), None]
  return [None, _dot_transpose_one(ct, rhs.aval, lhs, dimension_numbers, precision, True,
                                   preferred_element_type)]


@dot_general_p.def_batch
def _dot_general_batch(axis_size, vals, dims, *, dimension_numbers, **params):
  # Never moves an operand.  Batched on both sides, the batch axes become one
  # more (leading) dot batch dimension; batched on one side only, the batch
  # axis is just one more free axis of that side, so a matrix times a batch
  # of vectors stays one matrix product.
  (lhs, rhs), (ld, rd) = vals, dims
  (lc, rc), (lb, rb) = dimension_numbers
  shift = lambda axes, d: tuple(a + (d is not None and a >= d) for a in axes)
  lc, lb, rc, rb = shift(lc, ld), shift(lb, ld), shift(rc, rd), shift(rb, rd)
  if ld is not None and rd is not None:
    lb, rb, out_dim = (ld,) + lb, (rd,) + rb, 0
  elif ld is not None:
    lhs_free = _free_dims(core.get_aval(lhs).ndim, lb, lc)
    out_dim = len(lb) + lhs_free.index(ld)
  else:
    lhs_ndim = core.get_aval(lhs).ndim
    rhs_free = _free_dims(core.get_aval(rhs).ndim, rb, rc)
    out_dim = len(lb) + (lhs_ndim - len(lb) - len(lc)) + rhs_free.index(rd)
  out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)), **params)
  return out, out_dim


# -- public functions -------------------------------------------------------------

def _canonicalize_dimension_numbers(dimension_numbers):
  (lc, rc), (lb, rb) = dimension_numbers
  return ((utils.int_tuple(_as_seq(lc)), utils.int_tuple(_as_seq(rc))),
          (utils.int_tuple(_as_seq(lb)), utils.int_tuple(_as_seq(rb))))


def _as_seq(x):
  return (x,) if isinstance(x, (int, np.integer)) else x


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):
  """Contracts ``lhs`` and ``rhs``: ``dimension_numbers`` is
  ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``."""
  dims = _canonicalize_dimension_numbers(dimension_numbers)
  preferred = dtypes.canonicalize_user_dtype(preferred_element_type, "dot")
  if out_sharding is not None:
    from purejax._src.out_sharding import canonical
    out_sharding = canonical(out_sharding, _dot_general_shape(
        core.get_aval(lhs), core.get_aval(rhs), dims))
  return utils.bind(dot_general_p, lhs, rhs, dimension_numbers=dims,
                    precision=canonicalize_precision(precision),
                    preferred_element_type=preferred, out_sharding=out_sharding)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
  """Vector/matrix products (or ``dot_general`` when ``dimension_numbers`` is given)."""
  if dimension_numbers is None:
    lshape, rshape = np.shape(lhs), np.shape(rhs)
    if not (1 <= len(lshape) <= 2 and 1 <= len(rshape) <= 2
            and lshape[-1] == rshape[0]):
      raise ValueError(
          "jax.lax.dot: dimension_numbers must be specified when not performing simple "
          "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
          f"lhs_shape={lshape} rhs_shape={rshape}")
    dimension_numbers = (((len(lshape) - 1,), (0,)), ((), ()))
  return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                     out_sharding=out_sharding)
