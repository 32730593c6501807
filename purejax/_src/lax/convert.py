"""convert_element_type: dtype conversion with XLA's semantics.

Float to integer conversion saturates (NaN becomes 0), unlike NumPy's
wrap-around: ``jnp.arange(254., 258.).astype('uint8') == [254, 255, 255, 255]``.
"""
import operator

import numpy as np

from purejax._src import array_namespace
from purejax._src import core
from purejax._src import mesh_context
from purejax._src import dtypes
from purejax._src.array import Array, place_on_mesh, wrap_numpy
from purejax._src.interpreters import ad


def _convert_impl(x, *, new_dtype, weak_type):
  old = x.dtype
  if old == new_dtype:
    return x
  if (dtypes.issubdtype(old, np.complexfloating)
      and not dtypes.issubdtype(new_dtype, np.complexfloating)):
    x = np.real(x)
    old = x.dtype
  if new_dtype == np.bool_:
    return x != 0
  if dtypes.issubdtype(new_dtype, np.integer) and dtypes.issubdtype(old, np.inexact):
    info = np.iinfo(new_dtype)
    with np.errstate(invalid="ignore"):
      # Clip in float64 so that the bounds themselves are representable.
      wide = np.nan_to_num(x.astype(np.float64), nan=0.0)
      out = np.clip(np.trunc(wide), info.min, info.max).astype(new_dtype)
      # 64-bit maxima round up to 2**63 / 2**64 in float64: the clip alone
      # would let those values wrap around.
      return np.where(wide >= 2.0 ** (info.bits - (info.min < 0)), info.max, out)
  if new_dtype == dtypes.float16 and old in (np.float32, np.float64):
    return _to_float16(x)
  with np.errstate(all="ignore"):
    return x.astype(new_dtype)


def _to_float16(x):
  """float32/float64 to float16 as XLA converts: float64 through float32,
  and a NaN quieted, keeping its sign and the payload's top bits (NumPy
  keeps a signaling NaN signaling)."""
  on_host = array_namespace.of(x) is np
  with np.errstate(all="ignore"):
    x = (np.asarray(x) if on_host else x).astype(np.float32)
    out = x.astype(np.float16)
  nan = np.isnan(x)
  if not on_host or nan.any():   # (testing a device array would read it back)
    bits = x.view(np.uint32)
    quiet = ((bits >> 16) & 0x8000) | 0x7e00 | ((bits >> 13) & 0x3ff)
    out = np.where(nan, quiet.astype(np.uint16), out.view(np.uint16)).view(np.float16)
  return out


def _convert_abstract_eval(x, *, new_dtype, weak_type):
  return core.ShapedArray(x.shape, new_dtype, weak_type)


convert_element_type_p = core.Primitive("convert_element_type")
convert_element_type_p.impl = _convert_impl
convert_element_type_p.abstract_eval = _convert_abstract_eval
convert_element_type_p.elementwise = True


@convert_element_type_p.def_jvp
def _convert_jvp(primals, tangents, *, new_dtype, weak_type):
  out = convert_element_type_p.bind(*primals, new_dtype=new_dtype, weak_type=weak_type)
  g, = tangents
  out_tangent = ad.tangent_aval(core.get_aval(out))
  # To or from an integer type the derivative is zero (a float0 one for ints).
  if (type(g) is ad.Zero or out_tangent.dtype == dtypes.float0
      or core.get_aval(g).dtype == dtypes.float0):
    return out, ad.Zero(out_tangent)
  return out, convert_element_type_p.bind(g, new_dtype=new_dtype, weak_type=weak_type)


@convert_element_type_p.def_transpose
def _convert_transpose(ct, operand, *, new_dtype, weak_type):
  old = operand.aval
  if ad.tangent_dtype(old.dtype) == dtypes.float0:
    return [None]   # an integer input has no (nonzero) cotangent
  return [convert_element_type_p.bind(ct, new_dtype=old.dtype, weak_type=old.weak_type)]


convert_element_type_p.is_linear = True


def _requested_dtype(new_dtype):
  if isinstance(new_dtype, np.dtype) and dtypes.canonicalize_dtype(new_dtype) == new_dtype:
    return new_dtype   # the common internal case: nothing to check or warn about
  return dtypes.canonicalize_user_dtype(new_dtype, "convert_element_type")


def _python_scalar_value(x):
  """A Python number at full precision (so 2**40 -> float32 is exact-ish)."""
  value = np.asarray(x)
  return value if value.dtype != object else None


def _raw_tangent(x):
  """Whether ``x`` is the JVP of a known value with a tangent that is still
  a Python or NumPy value: JAX converts a tracer of a known value even to
  its own type, which makes that tangent an Array (``jvp(lambda x: x + 1,
  (1.,), (1.,))``).  Other conversions to the same type change nothing."""
  return (type(x) is ad.JVPTracer and not isinstance(x.primal, core.Tracer)
          and not isinstance(x.tangent, core.ArrayBase))


def convert_element_type(operand, new_dtype, weak_type=False):
  """Converts ``operand`` to ``new_dtype`` (canonicalized for x64 mode)."""
  aval = getattr(operand, "aval", None)
  if (aval is not None and isinstance(new_dtype, np.dtype) and aval.dtype == new_dtype
      and aval.weak_type == bool(weak_type) and not _raw_tangent(operand)):
    return operand   # nothing to do: the common case in jnp's promotion
  if dtypes.is_extended(new_dtype) or (aval is not None and dtypes.is_extended(aval.dtype)):
    return _convert_extended(operand, aval, new_dtype)
  new_dtype = _requested_dtype(new_dtype)
  weak_type = bool(weak_type)
  if isinstance(operand, core.Tracer):
    aval = operand.aval
    if aval.dtype == new_dtype and aval.weak_type == weak_type and not _raw_tangent(operand):
      return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
  traced = core.current_trace() is not core.eval_trace
  if traced and _staged_constant(operand, new_dtype, weak_type):
    # Under a transformation, as in JAX, a concrete array is converted in the
    # trace: a staged jaxpr keeps it as a constant of its own dtype.
    if isinstance(operand, np.ndarray):   # a copy: the caller's array stays theirs
      aval = core.get_aval(operand)
      operand = wrap_numpy(np.array(operand), core.ShapedArray(aval.shape, aval.dtype, False))
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
  # Python scalars and NumPy scalars are converted right away (JAX folds
  # them): such a constant stays a literal in a traced jaxpr.
  if not isinstance(operand, (core.ArrayBase, np.ndarray, np.generic, bool, int, float,
                              complex)):
    dtypes.dtype(operand)   # JAX's "Cannot determine dtype of ..." TypeError
  if type(operand) is Array and type(operand._value) is not np.ndarray:   # on a GPU
    if operand.dtype == new_dtype and operand.aval.weak_type == weak_type:
      return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
  value = _python_scalar_value(operand) if type(operand) in (int, float) else None
  if value is None:
    aval = core.get_aval(operand)
    value = core.concrete_numpy_value(operand)
    if (aval.dtype == new_dtype and aval.weak_type == weak_type
        and isinstance(operand, core.ArrayBase)):
      return operand
  converted = _convert_impl(value, new_dtype=new_dtype, weak_type=weak_type)
  if converted is operand:   # a caller's NumPy array: never alias it, nor freeze it
    converted = converted.copy()
  # An array keeps its sharding type (a Python int's aval could overflow: none).
  sharding = getattr(getattr(operand, "aval", None), "explicit_sharding", None)
  out = wrap_numpy(converted, core.ShapedArray(np.shape(value), new_dtype, weak_type, sharding))
  if (weak_type and type(operand) in (bool, int, float, complex)
      and core.python_scalar_aval(operand).dtype == new_dtype):
    out._python_scalar = operand   # unconverted: JAX keeps the Python number
  elif traced and out.aval.shape == ():
    mark_folded(out)
  if mesh_context.mesh_is_set and not getattr(operand, "committed", False):
    place_on_mesh(out, per_dimension=False)   # under a mesh JAX puts the value there: P()
  return out


def _const_fold(operand, *, new_dtype, weak_type):
  """Staging folds a conversion of a literal (JAX's constant folding): the
  converted value, or None to stage the conversion."""
  from purejax._src.jaxpr import literal_value
  if isinstance(operand, core.Tracer) or literal_value(operand) is None:
    return None
  value = _convert_impl(np.asarray(core.concrete_numpy_value(operand)),
                        new_dtype=new_dtype, weak_type=weak_type)
  python_value = value.item()
  if weak_type and core.python_scalar_aval(python_value).dtype != new_dtype:
    return None
  out = wrap_numpy(value, core.ShapedArray((), new_dtype, weak_type))
  return mark_folded(out, python_value if weak_type else None)


convert_element_type_p.const_fold = _const_fold


def _convert_extended(operand, aval, new_dtype):
  """Key arrays convert only to their own dtype (a no-op), as in JAX."""
  if aval is not None and aval.dtype == new_dtype:
    return operand
  src = aval.dtype if aval is not None else dtypes.dtype(operand)
  dst = new_dtype if dtypes.is_extended(new_dtype) else np.dtype(new_dtype)
  raise ValueError(f"Cannot convert_element_type from {src} to {dst}")


def mark_folded(out, python_value=None):
  """Marks the scalar Array ``out``, a constant folded under a trace, to be
  a literal in the jaxpr (printed as ``python_value``, or its value)."""
  if getattr(out, "_python_scalar", None) is None:
    out._python_scalar = out._value.item() if python_value is None else python_value
  return out


def _staged_constant(operand, new_dtype, weak_type):
  """Whether converting the concrete ``operand`` under a trace is staged.

  JAX folds conversions of Python and NumPy scalars (they stay literals);
  arrays, and scalar Arrays made outside the trace, are constants whose
  conversion is an equation of the jaxpr.
  """
  if isinstance(operand, core.ArrayBase):
    if operand.aval.dtype == new_dtype and operand.aval.weak_type == weak_type:
      return False
    return operand.aval.shape != () or getattr(operand, "_python_scalar", None) is None
  return (isinstance(operand, np.ndarray) and operand.shape != ()
          and (dtypes.canonicalize_dtype(operand.dtype) != new_dtype or weak_type))


# -- bitcast_convert_type ---------------------------------------------------------------

def _bitcast_abstract_eval(x, *, new_dtype):
  old_bits, new_bits = x.dtype.itemsize * 8, np.dtype(new_dtype).itemsize * 8
  if old_bits == new_bits:
    shape = x.shape
  elif old_bits > new_bits:   # each element becomes a trailing axis of pieces
    shape = x.shape + (old_bits // new_bits,)
  else:                       # the trailing axis holds the pieces of one element
    size = x.shape[-1] if x.shape else 1
    if size * old_bits != new_bits:
      raise ValueError(f"Attempting to convert array of shape {x.shape} from "
                       f"{core.dtype_name(x.dtype)} of size {old_bits} bits to "
                       f"{core.dtype_name(new_dtype)} of size {new_bits}, bits but "
                       f"{size} * {old_bits} != {new_bits}")
    shape = x.shape[:-1]
  special = (np.bool_, np.complexfloating)
  if x.dtype != new_dtype and any(dtypes.issubdtype(d, k) for d in (x.dtype, new_dtype)
                                  for k in special):
    raise TypeError("lax.bitcast_convert_type does not support bool or complex values "
                    "unless the operand and destination types match. Got operand "
                    f"dtype={core.dtype_name(x.dtype)}, new_dtype={np.dtype(new_dtype)!r}. "
                    "Consider using the arr.view() method instead.")
  return core.ShapedArray(shape, np.dtype(new_dtype), False)


def _bitcast_impl(x, *, new_dtype):
  # XLA's (little-endian) byte order is NumPy's on the hosts we run on.
  x = x if x.flags.c_contiguous else x.copy()
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  if old > new:
    return x.reshape(x.shape + (1,)).view(new_dtype)
  return x.view(new_dtype).reshape(x.shape[:-1] if old < new else x.shape)


bitcast_convert_type_p = core.Primitive("bitcast_convert_type")
bitcast_convert_type_p.impl = _bitcast_impl
bitcast_convert_type_p.abstract_eval = _bitcast_abstract_eval
bitcast_convert_type_p.c_code = None
ad.defjvp_zero(bitcast_convert_type_p)   # reinterpreting bits has no derivative


@bitcast_convert_type_p.def_batch
def _bitcast_batch(axis_size, vals, dims, *, new_dtype):
  (x,), (d,) = vals, dims
  if d == len(x.shape) - 1 and x.dtype.itemsize < np.dtype(new_dtype).itemsize:
    from purejax._src.interpreters import batching
    x, d = batching.moveaxis(x, d, 0), 0   # the last axis is consumed
  return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


def bitcast_convert_type(operand, new_dtype):
  """Reinterprets the bits of ``operand`` as ``new_dtype``: a narrower type adds
  a trailing axis of pieces, a wider one consumes the trailing axis."""
  new_dtype = dtypes.canonicalize_user_dtype(new_dtype, "bitcast_convert_type")
  from purejax._src.lax import utils
  return utils.bind(bitcast_convert_type_p, operand, new_dtype=new_dtype)


# -- reduce_precision ---------------------------------------------------------------------

def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
  if exponent_bits < 1:
    raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
  if mantissa_bits < 0:
    raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                     f"{mantissa_bits}")
  if not dtypes.issubdtype(x.dtype, np.floating):
    raise TypeError(f"reduce_precision does not accept dtype {core.dtype_name(x.dtype)}. "
                    "Accepted dtypes are subtypes of floating.")
  return core.ShapedArray(x.shape, x.dtype, x.weak_type)


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
  # XLA's ReducePrecision on the bits: round the mantissa to nearest even,
  # then send exponents out of the narrower range to signed inf / zero.
  info = dtypes.finfo(x.dtype)
  nbits = x.dtype.itemsize * 8
  man, exp = info.nmant, nbits - 1 - info.nmant
  utype = np.dtype(f"u{x.dtype.itemsize}")
  bits = (x if x.flags.c_contiguous else x.copy()).view(utype).astype(np.uint64)
  one = np.uint64(1)
  if mantissa_bits < man:
    shift = np.uint64(man - mantissa_bits)
    last = one << shift
    odd = (bits & last) >> shift
    keep = ~(last - one) & np.uint64((1 << nbits) - 1)
    bits = (bits + odd + (last >> one) - one) & keep
  if exponent_bits < exp:
    sign = bits & (one << np.uint64(nbits - 1))
    exp_mask = np.uint64(((1 << exp) - 1) << man)
    bias, new_bias = (1 << (exp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    exponent = bits & exp_mask
    bits = np.where(exponent > np.uint64((bias + new_bias) << man), sign | exp_mask,
                    np.where(exponent <= np.uint64((bias - new_bias) << man), sign, bits))
  out = bits.astype(utype).view(x.dtype)
  with np.errstate(invalid="ignore"):
    return np.where(np.isnan(x), x, out)   # NaN stays NaN


reduce_precision_p = core.Primitive("reduce_precision")
reduce_precision_p.impl = _reduce_precision_impl
reduce_precision_p.abstract_eval = _reduce_precision_abstract_eval
reduce_precision_p.elementwise = True
reduce_precision_p.c_code = None
reduce_precision_p.impl_on_gpu_arrays = True   # bit operations CuPy's arrays take too
ad.deflinear(reduce_precision_p,
             lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])


def reduce_precision(operand, exponent_bits, mantissa_bits):
  """Rounds ``operand`` to a float format with ``exponent_bits`` and
  ``mantissa_bits`` (staying in its dtype), as XLA's ReducePrecision."""
  from purejax._src.lax import utils
  # Static params: a traced value raises JAX's TracerIntegerConversionError.
  exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
  return utils.bind(reduce_precision_p, operand, exponent_bits=exponent_bits,
                    mantissa_bits=mantissa_bits)
