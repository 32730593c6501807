"""The reference backend: runs a jaxpr equation by equation with NumPy.

Each primitive's ``impl`` is its NumPy implementation; compiling a jaxpr
here means making a Python closure that runs those impls in order.
"""
import numpy as np

from purejax._src.jaxpr import Literal


def compile_jaxpr(jaxpr):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running ``jaxpr``."""
  eqns = [(e.primitive, e.params, e.invars, e.outvars) for e in jaxpr.eqns]
  invars, outvars = jaxpr.invars, jaxpr.outvars
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")

  def run(*args):
    # NumPy's floating-point warnings (0 * inf ...) are not JAX's: XLA is silent.
    with np.errstate(all="ignore"):
      return _run(args)

  def _run(args):
    env = dict(zip(invars, args))
    for prim, params, eqn_in, eqn_out in eqns:
      vals = [v.val if type(v) is Literal else env[v] for v in eqn_in]
      out = prim.impl(*vals, **params)
      if prim.multiple_results:
        for var, val in zip(eqn_out, out):
          env[var] = _as_dtype(val, var.aval.dtype)
      else:
        env[eqn_out[0]] = _as_dtype(out, eqn_out[0].aval.dtype)
    return [v.val if type(v) is Literal else env[v] for v in outvars]

  return run


def _as_dtype(value, dtype):
  if type(value) is not np.ndarray or value.dtype != dtype:
    return np.asarray(value, dtype=dtype)
  return value
