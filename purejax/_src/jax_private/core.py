"""Stand-in for ``jax._src.core``, imported by flax (``flax.linen.fp8_ops``)
when it loads: ``ShapedArray``, purejax's (also ``jax.core.ShapedArray``);
and ``trace_state_clean`` (numpyro: whether no transformation is tracing)."""
from purejax._src import core as _core
from purejax._src.core import ShapedArray


def trace_state_clean():
  """Whether code runs outside every transformation (eagerly)."""
  return _core.current_trace() is _core.eval_trace


__all__ = ["ShapedArray", "trace_state_clean"]
