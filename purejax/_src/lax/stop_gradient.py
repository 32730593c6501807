"""stop_gradient: the identity whose derivative is zero."""
from purejax._src import core
from purejax._src import tree_util
from purejax._src.interpreters import ad

stop_gradient_p = core.Primitive("stop_gradient")
stop_gradient_p.impl = lambda x: x
stop_gradient_p.abstract_eval = lambda x: x
stop_gradient_p.elementwise = True


def _stop_gradient_jvp(primals, tangents):
  x, = primals
  return stop_gradient_p.bind(x), ad.Zero.from_primal_value(x)


stop_gradient_p.jvp = _stop_gradient_jvp


def stop_gradient(x):
  """Returns ``x`` unchanged, but blocks gradients flowing through it.

  Applies to every leaf of a pytree; integer and boolean leaves (which have
  no gradient anyway) are returned as they are.
  """
  def stop(leaf):
    aval = core.get_aval(leaf)
    if not ad.tangent_dtype(aval.dtype) == aval.dtype:
      return leaf
    return stop_gradient_p.bind(leaf)
  return tree_util.tree_map(stop, x)
