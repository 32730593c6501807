"""``jax.interpreters.mlir``: purejax has no XLA or MLIR.

JAX code registers a lowering for a new primitive so that ``jit`` can
compile it; purejax compiles jaxprs to C (and CUDA) itself:

- ``register_lowering(p, mlir.lower_fun(fun))`` (a lowering written as a
  function of lax operations, as equinox's are) is used: under ``jit``
  each equation of ``p`` is replaced by ``fun``'s trace (the primitive's
  ``c_expansion``), which fuses into the compiled kernels;
- any other lowering rule builds MLIR, which purejax cannot use: it is
  recorded and not called; under ``jit`` the primitive's ``impl``
  (``def_impl``) runs as a NumPy host step between the compiled kernels
  (``jit(f).lower(x).compile().as_text()`` names it).
"""


class LoweringNotSupportedError(NotImplementedError):
  """Raised when JAX code asks for XLA/MLIR machinery purejax does not have."""


class _LoweredFun:
  """``lower_fun(fun, multiple_results)``: a lowering as a traced function."""

  def __init__(self, fun, multiple_results):
    self.fun = fun
    self.multiple_results = multiple_results

  def __call__(self, *args, **kwargs):
    raise LoweringNotSupportedError(
        "purejax has no MLIR: a lowering made by mlir.lower_fun is used by "
        "register_lowering (as the primitive's expansion under jit), not called")


def lower_fun(fun, multiple_results=True):
  """A lowering that computes the primitive as ``fun(*operands, **params)``
  with lax operations (``multiple_results``: ``fun`` returns a sequence)."""
  return _LoweredFun(fun, multiple_results)


def _expansion(primitive, lowered):
  fun, listed = lowered.fun, lowered.multiple_results

  def expand(*args, **params):
    out = fun(*args, **params)
    if primitive.multiple_results:
      return list(out) if listed else [out]
    return out[0] if listed else out
  return expand


def register_lowering(prim, rule, platform=None, *, inline=True, cacheable=True):
  """Uses a ``lower_fun`` lowering as ``prim``'s expansion under ``jit`` (for
  every platform); records any other rule without using it (module docstring)."""
  if isinstance(rule, _LoweredFun):
    prim.c_expansion = _expansion(prim, rule)
  else:
    lowerings = getattr(prim, "mlir_lowerings", None)
    if lowerings is None:
      lowerings = prim.mlir_lowerings = {}
    lowerings[platform] = rule
  return rule
