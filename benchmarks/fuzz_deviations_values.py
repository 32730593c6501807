"""Deviations (o) and (p) of benchmarks/fuzz_deviations.py: values XLA:CPU
computes wrongly.

(o) float32 cbrt of a subnormal, emulated from the operand before
    subnormals are flushed (which is how XLA gets it wrong).
(p) A max or min reduction of a uint8 negation (``jnp.max(-x)``) over an
    operand of 4096 elements or more is 0 everywhere: XLA:CPU's vectorized
    loop takes ``0 - x`` as a saturating subtraction.  Below 4096 elements,
    for int8, uint16 and uint32, and without the negation, it is right
    (probed over shapes (n,), (k, n) and (n, k) along either axis; seed 96's
    big program 18).
"""
import numpy as np

from purejax._src.backends import numpy_backend

# XLA:CPU's float32 cbrt of any nonzero subnormal (either sign).
CBRT_OF_SUBNORMAL = np.float32(-5.5951735e-16)


def applies(eqn):
  return eqn.primitive.name == "cbrt" and np.dtype(eqn.outvars[0].aval.dtype) == np.float32


def function_value(eqn, vals, raw_vals, fired):
  """XLA's result of ``eqn`` (one ``applies`` takes), or None."""
  raw = np.asarray(raw_vals[0])
  sub = (raw != 0) & (np.abs(raw) < np.finfo(np.float32).tiny)
  if not sub.any():
    return None
  fired.add("cbrt of a subnormal")
  plain = numpy_backend.jit_impl(eqn.primitive)(np.asarray(vals[0]), **eqn.params)
  return np.where(sub, CBRT_OF_SUBNORMAL, plain).astype(np.float32)


NEGATED_UINT8_SIZE = 4096   # (p): the operand size from which XLA gets it wrong


def extremum_of_negated_uint8(name, vals, prods, out, fired):
  """(p) XLA's result of a max/min reduction ``name`` of a uint8 negation
  of at least NEGATED_UINT8_SIZE elements (zeros), or None."""
  if (name in ("reduce_max", "reduce_min") and np.dtype(out.dtype) == np.uint8
          and prods[0] and prods[0][0] == "neg"
          and np.size(vals[0]) >= NEGATED_UINT8_SIZE):
    fired.add("max or min of a uint8 negation")
    return np.zeros(out.shape, np.uint8)
  return None
