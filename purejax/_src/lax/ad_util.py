"""Small helpers for the differentiation rules written next to lax's primitives.

lax binary ops let rank-0 and size-1 operands broadcast, so a tangent of
such an operand must be broadcast to the output's shape (tangents are added
with ``add_any``, which wants equal shapes), and a cotangent flowing back to
it must be summed down to the operand's shape.
"""
import numpy as np

from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.lax.convert import convert_element_type_p
from purejax._src.lax.reductions import reduce_sum_p
from purejax._src.lax.structural import broadcast_in_dim_p, reshape_p


def shape_of(x):
  return core.get_aval(x).shape


def dtype_of(x):
  return core.get_aval(x).dtype


def const(x, value):
  """A rank-0 constant with ``x``'s dtype (lax ops want matching dtypes)."""
  return np.array(value, dtype=dtype_of(x))


def bcast(x, out_shape):
  """``x`` (rank 0, or with size-1 axes) broadcast to ``out_shape``."""
  in_shape = shape_of(x)
  if in_shape == tuple(out_shape):
    return x
  dims = tuple(range(len(out_shape))) if in_shape else ()
  return broadcast_in_dim_p.bind(x, shape=tuple(out_shape), broadcast_dimensions=dims,
                                 sharding=None)


def unbroadcast(ct, aval):
  """Sums the cotangent ``ct`` of a broadcasting op down to ``aval``'s shape."""
  ct_shape = shape_of(ct)
  if ct_shape == aval.shape:
    return ct
  if not aval.shape:
    return reduce_sum_p.bind(ct, axes=tuple(range(len(ct_shape))), out_sharding=None)
  axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_shape)) if a == 1 and c != 1)
  summed = reduce_sum_p.bind(ct, axes=axes, out_sharding=None)
  return reshape_p.bind(summed, new_sizes=aval.shape, dimensions=None, sharding=None)


def convert(x, new_dtype, weak_type=False):
  if dtype_of(x) == new_dtype and core.get_aval(x).weak_type == weak_type:
    return x
  return convert_element_type_p.bind(x, new_dtype=np.dtype(new_dtype), weak_type=weak_type)


def zeros(aval):
  return ad.zeros_like_aval(core.ShapedArray(aval.shape, aval.dtype))


def defjvp_ans(primitive, *tangent_fns):
  """Like ``ad.defjvp``, but each ``tangent_fns[i](g_i, ans, *primals, **params)``
  also gets the primal output, so rules like exp's reuse it."""

  def rule(primals, tangents, **params):
    ans = primitive.bind(*primals, **params)
    total = ad.Zero(ad.tangent_aval(core.get_aval(ans)))
    for fn, g in zip(tangent_fns, tangents):
      if fn is not None and type(g) is not ad.Zero:
        total = ad.add_tangents(total, fn(g, ans, *primals, **params))
    return ans, total

  primitive.jvp = rule
  return rule


def jvp_of(fun, primals, tangents):
  """The JVP of ``fun`` (lax ops in, a list of outputs out) at ``primals``:
  for primitives whose derivative is easiest to get by differentiating an
  equivalent composition of other primitives (products, general reductions)."""
  return ad.jvp_flat(fun, list(primals), list(tangents))
