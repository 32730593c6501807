"""Deviation (o) of benchmarks/fuzz_deviations.py: function values XLA:CPU
computes wrongly, emulated from the operands before subnormals are flushed
(which is how XLA gets them wrong)."""
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
