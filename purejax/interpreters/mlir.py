"""``jax.interpreters.mlir``: purejax has no XLA or MLIR.

JAX code registers a lowering for a new primitive so that ``jit`` can
compile it; purejax compiles jaxprs to C itself and needs none: under
``jit`` a primitive without a C expression runs its ``impl`` (``def_impl``)
as a NumPy host step between the compiled kernels.  ``register_lowering``
therefore raises, saying so, rather than silently doing nothing.
"""


class LoweringNotSupportedError(NotImplementedError):
  """Raised when JAX code asks for XLA/MLIR machinery purejax does not have."""


def _message(primitive):
  name = getattr(primitive, "name", primitive)
  return (
      f"mlir.register_lowering({name}, ...): purejax has no XLA/MLIR backend, so "
      "there is nothing to lower to. purejax.jit compiles jaxprs to C instead; a "
      f"primitive with no C expression (such as '{name}') needs no lowering: under "
      "jit its impl (Primitive.def_impl) runs as a NumPy host step between the "
      "compiled kernels. For fused C code, write the computation with purejax.lax "
      "operations (e.g. a function instead of a new primitive, or custom_jvp / "
      "custom_vjp for its derivative), or add a C expression for the primitive to "
      "purejax's table purejax/_src/backends/cpu/codegen_ops.py. Remove the "
      "register_lowering call to run on purejax.")


def register_lowering(prim, rule, platform=None, *, inline=True, cacheable=True):
  raise LoweringNotSupportedError(_message(prim))


def lower_fun(fun, multiple_results=True):
  """JAX's lowering of a primitive as a traced Python function: only
  ``register_lowering`` uses it, and that raises."""
  def lowering(*args, **kwargs):
    raise LoweringNotSupportedError(_message("<lower_fun>"))
  lowering.fun = fun
  return lowering
