"""Elementwise activation functions of ``purejax.nn`` (relu, gelu, silu...).

Each is the same composition of jnp/lax operations as JAX's, wrapped in
``jit`` the way JAX wraps it, so results, dtypes and printed jaxprs agree.
relu, relu6 and log1mexp carry JAX's custom JVPs (e.g. relu'(0) = 0).
"""
import functools

import numpy as np

from purejax import lax
from purejax import numpy as jnp
from purejax._src.api import jit
from purejax._src.custom_derivatives import custom_jvp
from purejax._src.numpy import util


def ensure_arraylike(fun_name, *args):
  """Checks that every argument is array-like and returns them as arrays."""
  util.check_arraylike(fun_name, *args)
  arrays = [util.asarray(a) for a in args]
  return arrays[0] if len(arrays) == 1 else arrays


@jit
def identity(x):
  """Returns ``x`` unchanged (as an array)."""
  return ensure_arraylike("identity", x)


@custom_jvp
@jit
def relu(x):
  """``max(x, 0)``; its derivative at 0 is taken to be 0."""
  return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit
def relu6(x):
  """``min(max(x, 0), 6)``; its derivative at 0 and at 6 is taken to be 0."""
  return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x:
              lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit
def squareplus(x, b=4):
  """``(x + sqrt(x**2 + b)) / 2``."""
  x, b = ensure_arraylike("squareplus", x, b)
  y = x + jnp.sqrt(jnp.square(x) + b)
  return y / 2


@jit
def softplus(x):
  """``log(1 + exp(x))``, computed as ``logaddexp(x, 0)``."""
  return jnp.logaddexp(x, 0)


@jit
def sparse_plus(x):
  """0 for x <= -1, ``(x + 1)**2 / 4`` on (-1, 1), x for x >= 1."""
  x = ensure_arraylike("sparse_plus", x)
  return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0)**2 / 4))


@jit
def soft_sign(x):
  """``x / (|x| + 1)``."""
  x = ensure_arraylike("soft_sign", x)
  return x / (jnp.abs(x) + 1)


@functools.partial(jit, inline=True)
def sigmoid(x):
  """``1 / (1 + exp(-x))`` (``lax.logistic``)."""
  return lax.logistic(x)


@jit
def sparse_sigmoid(x):
  """0 for x <= -1, ``(x + 1) / 2`` on (-1, 1), 1 for x >= 1."""
  return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit
def silu(x):
  """``x * sigmoid(x)`` (also named ``swish``)."""
  x = ensure_arraylike("silu", x)
  return x * sigmoid(x)


swish = silu


@jit
def mish(x):
  """``x * tanh(softplus(x))``."""
  x = ensure_arraylike("mish", x)
  return x * jnp.tanh(softplus(x))


@jit
def log_sigmoid(x):
  """``log(sigmoid(x)) = -softplus(-x)``."""
  x = ensure_arraylike("log_sigmoid", x)
  return -softplus(-x)


@jit
def elu(x, alpha=1.0):
  """x for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
  x = ensure_arraylike("elu", x)
  # exp only sees non-positive values, so the unused branch never overflows
  # (an inf there would give NaN gradients).
  return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


@jit
def leaky_relu(x, negative_slope=1e-2):
  """x for x >= 0, ``negative_slope * x`` otherwise."""
  x = ensure_arraylike("leaky_relu", x)
  return jnp.where(x >= 0, x, negative_slope * x)


@jit
def hard_tanh(x):
  """x clipped to [-1, 1]."""
  x = ensure_arraylike("hard_tanh", x)
  return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit
def celu(x, alpha=1.0):
  """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
  return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x):
  """``scale * elu(x, alpha)`` with the self-normalizing constants."""
  return _SELU_SCALE * elu(x, _SELU_ALPHA)


def gelu(x, approximate=True):
  """Gaussian error linear unit: ``x * Phi(x)``.

  ``approximate=True`` uses the tanh formula; ``False`` the exact one
  through ``erfc``.
  """
  [x] = util.promote_args_inexact("gelu", x)
  dtype = util.aval_of(x).dtype
  if approximate:
    sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
    cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
    return x * cdf
  sqrt_half = np.sqrt(0.5).astype(dtype)
  return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@functools.partial(jit, static_argnames=("axis",))
def glu(x, axis=-1):
  """Gated linear unit: the first half of ``x`` along ``axis`` times the
  sigmoid of the second half."""
  x = ensure_arraylike("glu", x)
  size = util.shape(x)[axis]
  if size % 2:
    # JAX checks this with an assert: same error class.
    raise AssertionError("axis size must be divisible by 2")
  x1, x2 = jnp.split(x, 2, axis)
  return x1 * sigmoid(x2)


@jit
def hard_sigmoid(x):
  """``relu6(x + 3) / 6``."""
  return relu6(x + 3.) / 6.


@jit
def hard_silu(x):
  """``x * hard_sigmoid(x)`` (also named ``hard_swish``)."""
  x = ensure_arraylike("hard_silu", x)
  return x * hard_sigmoid(x)


hard_swish = hard_silu


@custom_jvp
@jit
def log1mexp(x):
  """``log(1 - exp(-x))`` for x >= 0, accurate near 0 and for large x."""
  x = ensure_arraylike("log1mexp", x)
  c = jnp.log(2.0)
  return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))
