"""Primitives users define through ``jax.extend.core.Primitive``.

purejax's own primitives take and return NumPy arrays in their ``impl``; a
JAX user's ``def_impl`` function expects what JAX passes it, Arrays, and may
return Arrays (it often calls ``jnp``).  ``Primitive.def_impl`` here adapts
the one convention to the other, so the same impl serves eager dispatch and,
under ``jit``, the NumPy host step the C backend runs for a primitive that
has no C expression.  Every other rule is purejax's own attribute.
"""
import numpy as np

from purejax._src import core
from purejax._src.array import wrap_numpy


def _as_array(x):
  """An Array of the NumPy value ``x``, without freezing the caller's buffer."""
  value = np.asarray(x)
  return wrap_numpy(value.view() if value.base is None else value[...],
                    core.get_aval(value))


def _as_numpy(x):
  if isinstance(x, core.ArrayBase):
    return core.concrete_numpy_value(x)
  return np.asarray(x)


class _PrimitiveType(type):
  # Every purejax primitive is a ``jax.extend.core.Primitive``, as in JAX
  # (``isinstance(lax.add_p, Primitive)``), not only the user-defined ones.
  def __instancecheck__(cls, obj):
    return isinstance(obj, core.Primitive)

  def __subclasscheck__(cls, sub):
    return issubclass(sub, core.Primitive)


class Primitive(core.Primitive, metaclass=_PrimitiveType):
  """A primitive defined with JAX's extension API.

  ``def_impl(f)``: ``f`` receives Arrays and returns array-likes, as in JAX;
  it runs eagerly, and under ``jit`` as a host step between compiled kernels.
  ``prim.impl`` called with Arrays or tracers is ``f`` itself.
  """

  def def_impl(self, f):
    def numpy_impl(*values, **params):
      if any(isinstance(v, core.ArrayBase) for v in values):
        # Called with JAX values (a library's jaxpr interpreter calling
        # ``prim.impl``): it is the user's function, traceable as in JAX.
        return f(*values, **params)
      with core.eval_context():
        out = f(*map(_as_array, values), **params)
      if self.multiple_results:   # read now: it may be set after def_impl
        return [_as_numpy(o) for o in out]
      return _as_numpy(out)

    numpy_impl.user_impl = f
    self.impl = numpy_impl
    return f

  def def_effectful_abstract_eval(self, f):
    """JAX's variant returning ``(avals, effects)``: purejax tracks no
    effects for user primitives, so the effects are dropped."""
    self.abstract_eval = lambda *avals, **params: f(*avals, **params)[0]
    return f

  def bind_with_trace(self, trace, args, params):
    with core.set_current_trace(trace):
      return self.bind(*args, **params)
