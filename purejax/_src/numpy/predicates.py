"""Comparisons of whole arrays and questions about values and dtypes:
isclose, allclose, array_equal, isscalar, can_cast, alltrue/sometrue."""
import functools
import warnings

import numpy as np

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util


@functools.partial(jit, static_argnames=("equal_nan",))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
  """|a - b| <= atol + rtol * |b|, elementwise (infinities must match)."""
  a, b = util.promote_args("isclose", a, b)
  dtype = util.aval_of(a).dtype
  if not dtypes.issubdtype(dtype, np.inexact):
    return lax.eq(a, b)
  rtol = lax.convert_element_type(rtol, dtypes.to_floating_dtype(dtype), False)
  atol = lax.convert_element_type(atol, dtypes.to_floating_dtype(dtype), False)
  both_nan = lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))
  finite = ufuncs.isfinite(b)
  close = lax.le(ufuncs.absolute(lax.sub(a, b)),
                 lax.add(atol, lax.mul(rtol, ufuncs.absolute(b))))
  out = lax.bitwise_or(lax.eq(a, b), lax.bitwise_and(finite, close))
  return lax.bitwise_or(out, both_nan) if equal_nan else out


@functools.partial(jit, static_argnames=("equal_nan",))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
  """Whether every element of a is close to b (see isclose)."""
  return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
  """Whether a1 and a2 have one shape and equal elements."""
  a1, a2 = util.asarray(a1), util.asarray(a2)
  if util.shape(a1) != util.shape(a2):
    return util.asarray(False)
  equal = ufuncs.equal(a1, a2)
  if equal_nan:
    equal = lax.bitwise_or(equal, lax.bitwise_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
  return reductions.all(equal)


def isscalar(element):
  """Python and NumPy scalars, and 0-d arrays, are scalars."""
  if hasattr(element, "__jax_array__"):
    element = element.__jax_array__()
  if isinstance(element, core.ArrayBase):
    return element.ndim == 0
  return dtypes.is_python_scalar(element) or np.isscalar(element)


def can_cast(from_, to, casting="safe"):
  """NumPy's casting rule between two dtypes."""
  from_dtype = dtypes.dtype(from_)
  return bool(np.can_cast(from_dtype, dtypes.dtype(to), casting=casting))


def alltrue(a, axis=None, out=None, keepdims=False, *, where=None):
  """Deprecated alias of ``all`` (removed from NumPy 2)."""
  warnings.warn("jnp.alltrue is deprecated: use jnp.all instead.", DeprecationWarning,
                stacklevel=2)
  return reductions.all(a, axis=axis, out=out, keepdims=keepdims, where=where)


def sometrue(a, axis=None, out=None, keepdims=False, *, where=None):
  """Deprecated alias of ``any`` (removed from NumPy 2)."""
  warnings.warn("jnp.sometrue is deprecated: use jnp.any instead.", DeprecationWarning,
                stacklevel=2)
  return reductions.any(a, axis=axis, out=out, keepdims=keepdims, where=where)
