"""logsumexp: log(sum(b * exp(a))) computed without overflow.

Shared by ``purejax.scipy.special`` and ``purejax.nn``.  The maximum is
subtracted before exponentiating; it is held constant for differentiation
(``stop_gradient``), so gradients are the softmax weights.
"""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import reductions
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util


def _is_complex(x):
  return dtypes.issubdtype(util.aval_of(x).dtype, np.complexfloating)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
  """Log of the sum of exponentials of ``a`` over ``axis``, as SciPy's.

  ``b`` scales each exponential; with negative sums the result is NaN unless
  ``return_sign=True``, which returns ``(log|sum|, sign(sum))``.  ``where``
  selects the elements taking part.  Rows that are all ``-inf`` give
  ``-inf`` (the shift is then 0, never ``-inf``).
  """
  if where is not None:
    a = ufuncs.where(where, a, 0)
  if b is not None:
    a, b = util.promote_args_inexact("logsumexp", a, b)
    a = ufuncs.where(ufuncs.not_equal(b, 0), a, -np.inf)
  else:
    a, = util.promote_args_inexact("logsumexp", a)
  axes = reductions._reduction_axes(util.ndim(a), axis)
  amax = reductions.max(ufuncs.real(a), axis=axes, keepdims=keepdims, where=where,
                        initial=-np.inf)
  # A non-finite maximum (all -inf, or an inf) would turn exp(a - amax) into NaN.
  amax = lax.stop_gradient(lax.select(lax.is_finite(amax), amax, lax.full_like(amax, 0)))
  amax_kept = amax if keepdims else util.expand_dims_at(amax, axes)
  dtype = util.aval_of(a).dtype
  exp_a = lax.exp(lax.sub(a, lax.convert_element_type(amax_kept, dtype, False)))
  if b is not None:
    exp_a = lax.mul(exp_a, b)
  sumexp = reductions.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
  sign = lax.sign(sumexp)
  if return_sign or not _is_complex(sumexp):
    sumexp = lax.abs(sumexp)
  out_dtype = util.aval_of(sumexp).dtype
  out = lax.add(lax.log(sumexp), lax.convert_element_type(amax, out_dtype, False))
  if return_sign:
    return out, sign
  if b is not None and not _is_complex(out):
    nan = lax.convert_element_type(np.nan, out_dtype, False)
    out = ufuncs.where(lax.lt(sign, lax.full_like(sign, 0)), nan, out)
  return out
