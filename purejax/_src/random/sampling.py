"""Samplers that pick or reorder: permutation, shuffle, choice, categorical.

A shuffle sorts by random 32-bit keys (stably), enough rounds that ties are
unlikely (JAX's rule: ceil(3 ln n / ln(2**32 - 1)) rounds).  Sampling without
replacement takes the top k of Gumbel-perturbed log-probabilities.
"""
import functools
import math
import warnings
from collections.abc import Sequence

import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.api import jit
from purejax._src.lax.utils import canonicalize_shape
from purejax._src.random import keys as keys_lib
from purejax._src.random.basic import _split_typed, check_shape, randint, uniform
from purejax._src.random.distributions import _gumbel
from purejax._src.random.prng import random_bits


def _concrete_int(x, what):
  if isinstance(x, core.Tracer):
    value = x.to_concrete_value()
    if value is None:
      from purejax._src.errors import ConcretizationTypeError
      raise ConcretizationTypeError(x, f"The error occurred in {what}")
    x = value
  return int(x)


def _axis(axis, ndim):
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


@functools.partial(jit, static_argnums=(2,))
def _shuffle(typed, x, axis):
  from purejax import lax
  rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
  for _ in range(rounds):
    typed, sub = _split_typed(typed)
    sort_keys = random_bits(sub, 32, x.shape)
    _, x = lax.sort_key_val(sort_keys, x, axis)
  return x


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
  """A random permutation of ``range(x)`` (int ``x``) or of ``x`` along ``axis``."""
  from purejax import numpy as jnp
  typed, _ = keys_lib.check_prng_key("permutation", key)
  ndim = np.ndim(x)
  axis = _axis(axis, ndim or 1)
  if not ndim:
    if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
      raise TypeError("x must be an integer or at least 1-dimensional")
    n = _concrete_int(x, "argument x of jax.random.permutation()")
    return _shuffle(typed, jnp.arange(n), axis)
  if independent or ndim == 1:
    return _shuffle(typed, x, axis)
  order = _shuffle(typed, jnp.arange(np.shape(x)[axis]), 0)
  return jnp.take(jnp.asarray(x), order, axis, unique_indices=True)


def shuffle(key, x, axis=0):
  """Deprecated (removed from current JAX): permutation(..., independent=True)."""
  warnings.warn("jax.random.shuffle is deprecated and will be removed in a future release. "
                "Use jax.random.permutation with independent=True.", DeprecationWarning,
                stacklevel=2)
  typed, _ = keys_lib.check_prng_key("shuffle", key)
  from purejax import numpy as jnp
  return _shuffle(typed, jnp.asarray(x), _axis(axis, max(np.ndim(x), 1)))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
  """Random draws from ``a`` (or ``range(a)``), with optional probabilities."""
  from purejax import lax
  from purejax import numpy as jnp
  typed, _ = keys_lib.check_prng_key("choice", key)
  if not isinstance(shape, Sequence):
    raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
  arr = jnp.asarray(a)
  if arr.ndim == 0:
    n_inputs = _concrete_int(a, "jax.random.choice()")
  else:
    axis = _axis(axis, arr.ndim)
    n_inputs = arr.shape[axis]
  n_draws = math.prod(shape)
  if n_draws == 0:
    return jnp.zeros(shape, dtype=arr.dtype)
  if n_inputs <= 0:
    raise ValueError("a must be greater than 0 unless no samples are taken")
  if not replace and n_draws > n_inputs:
    raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                     f"(size {n_inputs}) when 'replace=False'")
  if p is None:
    if replace:
      ind = randint(typed, shape, 0, n_inputs)
      result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    else:
      perm = permutation(typed, n_inputs if arr.ndim == 0 else arr, axis)
      result = perm[(slice(None),) * axis + (slice(n_draws),)]
  else:
    p_arr = jnp.asarray(p)
    if not dtypes.issubdtype(p_arr.dtype, np.inexact):
      p_arr = p_arr.astype(dtypes.default_float_dtype())
    if p_arr.shape != (n_inputs,):
      raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                       f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
    if replace:
      p_cuml = jnp.cumsum(p_arr)
      r = p_cuml[-1] * (1 - uniform(typed, tuple(shape), p_cuml.dtype, 0., 1.))
      ind = jnp.searchsorted(p_cuml, r).astype(int)
    else:
      g = _gumbel(typed, (n_inputs,), p_arr.dtype, mode or "low") + jnp.log(p_arr)
      ind = lax.top_k(g, k=n_draws)[1].astype(int)
    result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
  out_shape = tuple(shape) if arr.ndim == 0 else (
      arr.shape[:axis] + tuple(shape) + arr.shape[axis + 1:])
  return result.reshape(out_shape)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *,
                out_sharding=None):
  """Category indices drawn from unnormalized log-probabilities ``logits``
  (the Gumbel-max trick; without replacement, Gumbel top-k)."""
  from purejax import lax
  from purejax import numpy as jnp
  typed, _ = keys_lib.check_prng_key("categorical", key)
  logits = jnp.asarray(logits)
  batch_shape = tuple(int(d) for d in np.delete(logits.shape, axis))
  if shape is None:
    shape = batch_shape
  else:
    shape = canonicalize_shape(shape)
    check_shape("categorical", shape, batch_shape)
  prefix = shape[:len(shape) - len(batch_shape)]
  mode = mode or "low"
  if replace:
    if axis >= 0:
      axis -= logits.ndim
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % logits.ndim, logits.shape[axis])
    g = _gumbel(typed, (*prefix, *logits_shape), logits.dtype, mode)
    return jnp.argmax(g + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
  logits = logits + _gumbel(typed, logits.shape, logits.dtype, mode)
  k = math.prod(prefix)
  if k > logits.shape[axis]:
    raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                     f"of categories ({logits.shape[axis]}).")
  _, indices = lax.top_k(jnp.moveaxis(logits, axis, -1), k)
  # (*batch, k) -> (k, *batch) -> shape
  indices = jnp.moveaxis(indices, -1, 0)
  return lax.reshape(indices, tuple(shape))
