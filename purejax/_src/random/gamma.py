"""Gamma sampling: ``gamma`` and ``loggamma``, as JAX draws them.

The sampler is Marsaglia & Tsang's squeeze/rejection method ("A simple
method for generating gamma variables", 2000), run once per element with its
own key (the element keys are ``split(key, a.size)``), with the loop
structure and key use of JAX so that values agree for the same key:

* alpha < 1 is boosted: draw Gamma(alpha + 1) and multiply by
  U^(1/alpha), U = 1 - uniform (the last of the element's first two keys).
  ``loggamma`` does the boost in log space (log U / alpha), so that tiny
  alphas do not underflow to 0.
* each rejection round splits its key in three: one key for an inner loop
  that redraws the normal x until v = (1 + c x)^3 is positive, one for the
  uniform of the acceptance test.

The derivative in ``a`` is the implicit reparameterization gradient
(``random_gamma_grad``), attached with a custom JVP.  ``out_sharding`` is
accepted, as in JAX, and ignored (one device), here and in the other
samplers of the family.
"""
import functools

import numpy as np

from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import api_elementwise as lax_ew
from purejax._src.lax.control_flow.loops import while_loop
from purejax._src.lax.convert import convert_element_type
from purejax._src.random import gamma_keys as _keys
from purejax._src.random import keys as keys_lib
from purejax._src.random.key_primitives import KeyPrimitive
from purejax._src.lax.special import random_gamma_grad
from purejax._src.vmap import vmap
import purejax.numpy as jnp

__all__ = ["gamma", "loggamma"]


def _c(x, value):
  """A rank-0 constant of ``x``'s dtype (lax ops want equal dtypes)."""
  return np.array(value, dtype=x.dtype)


def _gamma_one(key, alpha, log_space):
  """One Gamma(alpha) sample (or its log) from one key; alpha is rank 0."""
  one, zero = _c(alpha, 1), _c(alpha, 0)
  third = _c(alpha, 1 / 3)
  dtype = alpha.dtype
  boost = lax_ew.ge(alpha, one)
  alpha_orig = alpha
  alpha = lax_ew.select(boost, alpha, lax_ew.add(alpha, one))
  d = lax_ew.sub(alpha, third)
  c = lax_ew.div(third, lax_ew.sqrt(d))

  def redraw(state):   # a fresh normal x, and v = 1 + c x
    k = state[0]
    k, sub = _keys.split2(k)
    x = _keys.normal(sub, dtype)
    return k, x, lax_ew.add(one, lax_ew.mul(x, c))

  def propose(state):
    k, x_key, u_key = _keys.split3(state[0])
    _, x, v = while_loop(lambda s: lax_ew.le(s[2], zero), redraw,
                         (x_key, zero, _c(alpha, -1)))
    xx = lax_ew.mul(x, x)
    vvv = lax_ew.mul(lax_ew.mul(v, v), v)
    return k, xx, vvv, _keys.uniform(u_key, dtype)

  def rejected(state):
    _, xx, vvv, u = state
    squeeze = lax_ew.ge(u, lax_ew.sub(one, lax_ew.mul(_c(alpha, 0.0331),
                                                      lax_ew.mul(xx, xx))))
    full = lax_ew.ge(lax_ew.log(u), lax_ew.add(
        lax_ew.mul(xx, _c(alpha, 0.5)),
        lax_ew.mul(d, lax_ew.add(lax_ew.sub(one, vvv), lax_ew.log(vvv)))))
    return lax_ew.bitwise_and(squeeze, full)

  key, boost_key = _keys.split2(key)
  # The initial state fails the test (u = 2), so at least one round runs.
  _, _, vvv, _ = while_loop(rejected, propose, (key, zero, one, _c(alpha, 2)))
  u = _keys.uniform(boost_key, dtype)
  inv_alpha = lax_ew.div(one, alpha_orig)
  if log_space:
    log_u = lax_ew.log1p(lax_ew.neg(u))          # log(1 - u), never log(0)
    log_boost = lax_ew.select(lax_ew.bitwise_or(boost, lax_ew.eq(log_u, zero)),
                              zero, lax_ew.mul(log_u, inv_alpha))
    return lax_ew.add(lax_ew.add(lax_ew.log(d), lax_ew.log(vvv)), log_boost)
  boost_factor = lax_ew.select(boost, one, lax_ew.pow(lax_ew.sub(one, u), inv_alpha))
  return lax_ew.mul(lax_ew.mul(d, vvv), boost_factor)


def _gamma_impl(key, a, log_space):
  """Samples of shape ``a.shape``; ``key``'s shape is a prefix of it (vmap
  batches keys): each key is split into one key per element it covers."""
  shape = a.shape
  size = int(np.prod(shape, dtype=np.int64))
  if size == 0:
    return jnp.zeros(shape, a.dtype)
  per_key = int(np.prod(shape[key.ndim:], dtype=np.int64))
  if key.ndim == 0:
    element_keys = _keys.split_n(key, per_key)
  else:
    flat_keys = jnp.reshape(key, (size // per_key,))
    element_keys = vmap(lambda k: _keys.split_n(k, per_key))(flat_keys)
    element_keys = jnp.reshape(element_keys, (size,))
  flat = jnp.reshape(a, (size,))
  samples = vmap(functools.partial(_gamma_one, log_space=log_space))(element_keys, flat)
  return jnp.reshape(samples, shape)


# -- the random_gamma primitive ------------------------------------------------
# ``random_gamma[log_space] key a``: one sample per element of ``a`` (JAX's
# primitive, so that jaxprs print as JAX's).  Backends see it through the key
# lowering pass, which replaces it by ``_gamma_impl`` traced on the key data.

def _gamma_abstract_eval(key, a, *, log_space):
  if not keys_lib.is_key_dtype(key.dtype):
    raise TypeError(f"random_gamma takes a key array, got {key.str_short()}")
  if tuple(a.shape[:len(key.shape)]) != tuple(key.shape):
    raise TypeError(f"random_gamma: key shape {key.shape} is not a prefix of "
                    f"the shape {a.shape} of a")
  return core.ShapedArray(a.shape, a.dtype)


_traced_impls = {}


def _gamma_lowering(in_avals, out_avals, key_data, a, *, log_space):
  from purejax._src.interpreters import partial_eval as pe
  from purejax._src.jaxpr import ClosedJaxpr
  from purejax._src.random import key_lowering
  cache_key = (tuple(in_avals), log_space)
  closed = _traced_impls.get(cache_key)
  if closed is None:
    with core.eval_context():
      jaxpr, consts = pe.trace_to_jaxpr(
          lambda k, x: [_gamma_impl(k, x, log_space)], list(in_avals))
    closed = _traced_impls[cache_key] = ClosedJaxpr(jaxpr, consts)
  return key_lowering.eval_physical(closed, [key_data, a])[0]


def _gamma_grad(sample, a, log_space):
  if log_space:
    # d log x = dx / x; x = exp(sample) may underflow, so floor it at tiny.
    x = lax_ew.exp(sample)
    tiny = jnp.full_like(x, np.finfo(x.dtype).tiny)
    x = lax_ew.select(lax_ew.eq(x, _c(x, 0)), tiny, x)
    return lax_ew.div(random_gamma_grad(a, x), x)
  return random_gamma_grad(a, sample)


def _gamma_jvp(primals, tangents, *, log_space):
  key, a = primals
  a_dot = tangents[1]
  ans = random_gamma_p.bind(key, a, log_space=log_space)
  if type(a_dot) is ad.Zero:
    return ans, ad.Zero.from_primal_value(ans)
  return ans, lax_ew.mul(_gamma_grad(ans, a, log_space), a_dot)


def _gamma_batch(axis_size, vals, dims, *, log_space):
  key, a = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
  return random_gamma_p.bind(key, a, log_space=log_space), 0


def _gamma_numpy_impl(key_data, a, *, log_space):
  # Never reached: the key lowering pass replaces random_gamma by its sampling
  # loop before any backend runs a jaxpr, and eager calls take key_lowering's path.
  raise AssertionError("purejax internal error: random_gamma reached a backend "
                       "before the key lowering pass")


random_gamma_p = KeyPrimitive("random_gamma")
random_gamma_p.abstract_eval = _gamma_abstract_eval
random_gamma_p.impl = _gamma_numpy_impl
random_gamma_p.jvp = _gamma_jvp
random_gamma_p.batch = _gamma_batch


def _register_lowering():
  from purejax._src.random import key_lowering
  key_lowering.rules[random_gamma_p] = _gamma_lowering


_register_lowering()


def check_shape(name, shape, *param_shapes):
  """JAX's rule: the parameters broadcast to exactly ``shape``."""
  if param_shapes:
    result = jnp.broadcast_shapes(shape, *param_shapes)
    if result != shape:
      raise ValueError(
          f"{name} parameter shapes must be broadcast-compatible with shape "
          "argument, and the result of broadcasting the shapes must equal the "
          f"shape argument, but got result {result} for shape argument {shape}.")


def default_dtype(dtype, kind=float):
  """``dtype`` (None: the default float/int dtype), checked and canonical."""
  if dtype is None:
    dtype = kind
  dtypes.check_user_dtype_supported(dtype, None)
  return dtypes.canonicalize_dtype(dtype)


def check_float_dtype(name, dtype):
  """The user's dtype, checked to be floating and made canonical."""
  if dtype is None:
    dtype = float
  dtypes.check_user_dtype_supported(dtype, name)
  dtype = dtypes.canonicalize_dtype(dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
  return dtype


def canonical_shape(shape):
  from purejax._src.lax.utils import canonicalize_shape
  return None if shape is None else canonicalize_shape(shape)


@functools.partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
  if shape is None:
    shape = jnp.shape(a)
  else:
    check_shape("gamma", shape, jnp.shape(a))
  a = convert_element_type(a, dtype)
  if jnp.shape(a) != shape:
    a = jnp.broadcast_to(a, shape)
  return random_gamma_p.bind(key, a, log_space=log_space)


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """Gamma(a, 1) samples (shape ``shape``, default ``a``'s shape).

  Differentiable in ``a`` by implicit reparameterization.
  """
  key = _keys.check_key("gamma", key)
  dtype = check_float_dtype("gamma", dtype)
  return _gamma(key, a, canonical_shape(shape), dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """log of Gamma(a, 1) samples, accurate for small ``a`` where the samples
  themselves underflow to 0."""
  key = _keys.check_key("loggamma", key)
  dtype = check_float_dtype("gamma", dtype)   # JAX names gamma here
  return _gamma(key, a, canonical_shape(shape), dtype, log_space=True)
