"""Normalizing functions of ``purejax.nn``: softmax, log_softmax,
logsumexp, logmeanexp, standardize and one_hot.

softmax follows JAX's two generations: by default the maximum is held
constant for differentiation (``stop_gradient``); with the flag
``jax_softmax_custom_jvp`` it uses a custom JVP, ``y * (dx - sum(y * dx))``.
"""
import functools
import operator
import warnings

import numpy as np

from purejax import lax
from purejax import numpy as jnp
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.config import config
from purejax._src.custom_derivatives import custom_jvp
from purejax._src.numpy import util
from purejax._src.nn.activations import ensure_arraylike
from purejax._src.scipy.logsumexp import logsumexp

__all__ = ["log_softmax", "logmeanexp", "logsumexp", "one_hot", "softmax",
           "standardize"]

def _static_axis(axis):
  """A hashable axis for jit's static arguments."""
  return tuple(axis) if isinstance(axis, list) else axis


# ---------------------------------------------------------------------------
# softmax and log_softmax

def softmax(x, axis=-1, where=None):
  """``exp(x) / sum(exp(x))`` along ``axis`` (an int, tuple or None).

  Elements outside ``where`` are left out of the sums and give 0.
  """
  if config.jax_softmax_custom_jvp:
    return _softmax(x, _static_axis(axis), where)
  return _softmax_deprecated(x, _static_axis(axis), where)


def _softmax_body(x, axis, where, initial, hold_max):
  x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, initial)
  if hold_max:
    x_max = lax.stop_gradient(x_max)
  unnormalized = jnp.exp(x_safe - x_max)
  result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0)
  return result


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
  return _softmax_body(x, axis, where, initial, hold_max=False)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
  (x, where, initial), (x_dot, _, _) = primals, tangents
  y = _softmax(x, axis, where, initial)
  return y, y * (x_dot - (y * x_dot).sum(axis, where=where, keepdims=True))


def _softmax_deprecated(x, axis=-1, where=None, initial=-np.inf):
  return _softmax_body(x, axis, where, initial, hold_max=True)


@functools.partial(jit, static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
  """``x - logsumexp(x)`` along ``axis``; elements outside ``where`` give -inf."""
  x = ensure_arraylike("log_softmax", x)
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  shifted = x_safe - lax.stop_gradient(x_max)
  shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
  result = shifted - shifted_lse
  if where is not None:
    return jnp.where(where, result, -np.inf)
  return result


# ---------------------------------------------------------------------------
# logmeanexp, standardize

def _count(x, axis, where, keepdims, dtype):
  """How many elements a reduction over ``axis`` sees."""
  x_shape = util.shape(x)
  if where is None:
    axes = util.canonicalize_axes(axis, len(x_shape))
    n = 1
    for d in axes:
      n *= x_shape[d]
    return lax.convert_element_type(n, dtype)
  return jnp.sum(jnp.broadcast_to(where, x_shape), axis, dtype=dtype, keepdims=keepdims)


@functools.partial(jit, static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
  """``log(mean(exp(x)))`` along ``axis``: logsumexp minus log of the count."""
  lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
  count = _count(x, axis, where, keepdims, util.aval_of(lse).dtype)
  return lse - jnp.log(count)


@functools.partial(jit, static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
  """``(x - mean) / sqrt(variance + epsilon)`` along ``axis``.

  ``algorithm="fast"`` computes the variance as ``mean(x**2) - mean(x)**2``
  (clipped at 0), ``"stable"`` as ``mean((x - mean)**2)``.
  """
  util.check_arraylike("standardize", x)
  for arg in (mean, variance, where):
    if arg is not None:
      util.check_arraylike("standardize", arg)
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    if algorithm == "stable":
      variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                          where=where)
    elif algorithm == "fast":
      variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
      variance = jnp.clip(variance, 0)
    else:
      raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
  return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


# ---------------------------------------------------------------------------
# one_hot

@functools.partial(jit, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes, *, dtype, axis):
  ndim = util.ndim(x)
  try:
    out_axis = util.canonicalize_axis(axis, ndim + 1)
  except TypeError:
    # ``axis`` names a vmapped axis: the classes are its positions.
    axis_size = lax.axis_size(axis)
    if num_classes != axis_size:
      raise ValueError(f"Expected num_classes to match the size of axis {axis}, "
                       f"but {num_classes} != {axis_size}") from None
    return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
  axis = operator.index(axis)
  lhs = lax.expand_dims(x, (axis,))
  rhs_shape = [1] * ndim
  rhs_shape.insert(out_axis, num_classes)
  rhs = lax.broadcasted_iota(util.aval_of(x).dtype, rhs_shape, out_axis)
  return (lhs == rhs).astype(dtype)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
  """One-hot encodes integer indices along a new axis ``axis``.

  Indices outside ``[0, num_classes)`` encode as all zeros.  ``axis`` may
  also name a ``vmap`` axis whose size is ``num_classes``.
  """
  num_classes = _concrete_dim(num_classes)
  x = jnp.asarray(x)
  if not dtypes.isdtype(util.aval_of(x).dtype, "integral"):
    warnings.warn(f"jax.nn.one_hot input should be integer-typed; got "
                  f"dtype={util.aval_of(x).dtype}", DeprecationWarning, stacklevel=2)
  dtype = dtypes.default_float_dtype() if dtype is None else dtype
  return _one_hot(x, num_classes, dtype=dtype, axis=axis)


def _concrete_dim(num_classes):
  context = "The error arose in jax.nn.one_hot argument `num_classes`."
  return operator.index(util.concrete_or_error(num_classes, context))
