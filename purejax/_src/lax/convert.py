"""convert_element_type: dtype conversion with XLA's semantics.

Float to integer conversion saturates (NaN becomes 0), unlike NumPy's
wrap-around: ``jnp.arange(254., 258.).astype('uint8') == [254, 255, 255, 255]``.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.array import wrap_numpy
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
      return np.clip(np.trunc(wide), info.min, info.max).astype(new_dtype)
  with np.errstate(all="ignore"):
    return x.astype(new_dtype)


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


def convert_element_type(operand, new_dtype, weak_type=False):
  """Converts ``operand`` to ``new_dtype`` (canonicalized for x64 mode)."""
  aval = getattr(operand, "aval", None)
  if (aval is not None and isinstance(new_dtype, np.dtype) and aval.dtype == new_dtype
      and aval.weak_type == bool(weak_type)):
    return operand   # nothing to do: the common case in jnp's promotion
  new_dtype = _requested_dtype(new_dtype)
  weak_type = bool(weak_type)
  if isinstance(operand, core.Tracer):
    aval = operand.aval
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
      return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type)
  # Concrete operands are converted right away, never staged: a constant
  # stays a constant (a literal) in a traced jaxpr.
  if not isinstance(operand, (core.ArrayBase, np.ndarray, np.generic, bool, int, float,
                              complex)):
    dtypes.dtype(operand)   # JAX's "Cannot determine dtype of ..." TypeError
  value = _python_scalar_value(operand) if type(operand) in (int, float) else None
  if value is None:
    aval = core.get_aval(operand)
    value = core.concrete_numpy_value(operand)
    if (aval.dtype == new_dtype and aval.weak_type == weak_type
        and isinstance(operand, core.ArrayBase)):
      return operand
  return wrap_numpy(_convert_impl(value, new_dtype=new_dtype, weak_type=weak_type),
                    core.ShapedArray(np.shape(value), new_dtype, weak_type))
