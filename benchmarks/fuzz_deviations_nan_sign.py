"""Deviation (s) of benchmarks/fuzz_deviations.py: the sign of the NaN that
XLA:CPU's float max and min give when only their second operand is NaN.

IEEE 754 leaves a NaN result's sign unspecified; NumPy and purejax return
the NaN operand as it is.  XLA's ``min(a, b)`` with ``b`` NaN and ``a`` not
returns ``b`` with the sign bit ``signbit(a) | signbit(b)``, its ``max``
with ``signbit(a) & signbit(b)`` (the bit operations that order -0.0 and
+0.0); a NaN ``a`` is returned as it is.  Its cummin and cummax fold each
window in ascending index order from the identity (+inf for min, -inf for
max), the running value first, also in reverse: after ``[-1.0, nan]`` the
NaN is negative, ``jnp.signbit`` reads True (seed 124's big program 7).
Probed on float32 and float64 over every sign of both operands.
"""
import numpy as np

from purejax._src.backends import numpy_backend


def _xla_extremum(name, a, b):
  """XLA's elementwise ``name`` ("min" or "max") of ``a`` and ``b``."""
  a, b = np.asarray(a), np.asarray(b)
  plain = np.minimum(a, b) if name == "min" else np.maximum(a, b)
  # lax's order of -0.0 and +0.0, which XLA also keeps
  both_zero = (a == 0) & (b == 0)
  sign_a, sign_b = np.signbit(a), np.signbit(b)
  zero_sign = sign_a | sign_b if name == "min" else sign_a & sign_b
  plain = np.where(both_zero, np.copysign(np.zeros_like(plain), np.where(zero_sign, -1, 1)),
                   plain)
  nan_b = np.isnan(b) & ~np.isnan(a)
  signed = np.copysign(b, np.where(zero_sign, -1, 1)).astype(plain.dtype)
  return np.where(np.isnan(a), a, np.where(nan_b, signed, plain)).astype(plain.dtype)


def _xla_cumulative(name, x, axis, reverse, plain):
  """XLA's cummin/cummax (``name`` "min"/"max") of ``x`` along ``axis``
  (``plain``: purejax's, which it differs from only in NaN signs)."""
  x = np.moveaxis(np.asarray(x), axis, 0)
  out = np.moveaxis(np.array(plain), axis, 0)
  if not reverse:   # the running value folds each element in
    acc = np.full(x.shape[1:], np.inf if name == "min" else -np.inf, x.dtype)
    for i in range(x.shape[0]):
      out[i] = acc = _xla_extremum(name, acc, x[i])
    return np.moveaxis(out, 0, axis)
  # In reverse, out[i] folds x[i], x[i+1]... from the identity: the first
  # NaN from i, its sign combined with the signs of the elements before it.
  nan = np.full(x.shape[1:], np.nan, x.dtype)
  seen = np.zeros(x.shape[1:], bool)
  for i in range(x.shape[0] - 1, -1, -1):
    here = np.isnan(x[i])
    signs = (np.signbit(nan) | np.signbit(x[i]) if name == "min"
             else np.signbit(nan) & np.signbit(x[i]))
    nan = np.where(here, x[i], np.copysign(nan, np.where(signs, -1, 1)).astype(x.dtype))
    seen |= here
    out[i] = np.where(seen, nan, out[i])
  return np.moveaxis(out, 0, axis)


def nan_signed(eqn, vals, fired):
  """(s) XLA's result of a float max, min, cummax or cummin ``eqn`` of
  operands ``vals`` holding a NaN, where its sign differs; None elsewhere."""
  name = eqn.primitive.name
  if name not in ("min", "max", "cummin", "cummax") or \
      np.dtype(eqn.outvars[0].aval.dtype).kind != "f" or \
      not any(np.isnan(np.asarray(v)).any() for v in vals):
    return None
  plain = numpy_backend.jit_impl(eqn.primitive)(*vals, **eqn.params)
  if name in ("min", "max"):
    a, b = np.broadcast_arrays(*vals)
    xla = _xla_extremum(name, a, b)
  else:
    xla = _xla_cumulative(name[3:], vals[0], eqn.params["axis"], eqn.params["reverse"],
                          plain)
  if np.array_equal(np.signbit(xla), np.signbit(plain)):
    return None
  fired.add("NaN sign of XLA's max or min")
  return xla
