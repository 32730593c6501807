"""``purejax.nn.initializers``: key-first functions that make parameters.

``init(key, shape, dtype=None, out_sharding=None)`` draws with
``purejax.random`` in the same order and with the same arithmetic as JAX,
so the same key gives the same values (float32 rounding included).
"""
import math
import typing

import numpy as np

from purejax import numpy as jnp
from purejax import random
from purejax._src import dtypes
from purejax._src.numpy import util

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
    "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
    "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"]


@typing.runtime_checkable
class Initializer(typing.Protocol):
  """What the builders here return: ``init(key, shape, dtype, out_sharding)``."""

  def __call__(self, key, shape, dtype=None, out_sharding=None):
    raise NotImplementedError


def _dtype(dtype):
  return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
  """An array of zeros (``key`` is ignored)."""
  return jnp.zeros(shape, _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
  """An array of ones (``key`` is ignored)."""
  return jnp.ones(shape, _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None):
  """Builds an initializer filling arrays with ``value``."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    return jnp.full(shape, value, dtype=_dtype(dtype))
  return init


def uniform(scale=1e-2, dtype=None):
  """Builds an initializer drawing uniformly from ``[0, scale)``."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
  return init


def normal(stddev=1e-2, dtype=None):
  """Builds an initializer drawing from N(0, stddev**2)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
  return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
  """Builds an initializer drawing ``stddev * z`` with z a standard normal
  truncated to ``(lower, upper)`` (no variance correction)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype(dtype)
    return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev, dtype)
  return init


def _size(shape, axis):
  if isinstance(axis, int):
    return shape[axis]
  return math.prod(shape[i] for i in axis)


def compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
  """(fan_in, fan_out) of a weight shape; the axes in none of ``in_axis``,
  ``out_axis``, ``batch_axis`` are a convolution's receptive field."""
  if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
    raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                     "weights tensor with default in_axis. Must be at least 2D or specify "
                     "in_axis explicitly.")
  in_size = _size(shape, in_axis)
  out_size = _size(shape, out_axis)
  batch_size = _size(shape, batch_axis)
  receptive_field = math.prod(shape) / in_size / out_size / batch_size
  return in_size * receptive_field, out_size * receptive_field


def _real_dtype(dtype):
  return np.array(0, dtype).real.dtype


def _complex_uniform(key, shape, dtype):
  """Uniform on the disk of the complex plane with unit variance."""
  key_r, key_theta = random.split(key)
  real = _real_dtype(dtype)
  dtype = dtypes.to_complex_dtype(real)
  r = jnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
  theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
  return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
  """Complex normal (unit variance before truncation) with modulus < upper."""
  key_r, key_theta = random.split(key)
  real = _real_dtype(dtype)
  dtype = dtypes.to_complex_dtype(real)
  t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
       * random.uniform(key_r, shape, real).astype(dtype))
  r = jnp.sqrt(-jnp.log(1 - t))
  theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
  return r * jnp.exp(1j * theta)


# The standard deviation of a unit normal truncated to (-2, 2), real and complex.
_TRUNC_STD_REAL = .87962566103423978
_TRUNC_STD_COMPLEX = .95311164380491208


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
  """Builds an initializer with variance ``scale / n``, n from ``mode``.

  ``mode``: "fan_in", "fan_out", "fan_avg" or "fan_geo_avg";
  ``distribution``: "truncated_normal" (at 2 standard deviations, rescaled to
  the variance), "normal" or "uniform" (a disk for complex dtypes).
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    shape = util.canonicalize_shape(shape)
    dtype = _dtype(dtype)
    fan_in, fan_out = compute_fans(shape, in_axis, out_axis, batch_axis)
    if mode == "fan_in":
      denominator = fan_in
    elif mode == "fan_out":
      denominator = fan_out
    elif mode == "fan_avg":
      denominator = (fan_in + fan_out) / 2
    elif mode == "fan_geo_avg":
      denominator = (fan_in * fan_out) ** 0.5
    else:
      raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    variance = jnp.array(scale / denominator, dtype=dtype)
    is_real = dtypes.issubdtype(dtype, np.floating)
    if distribution == "truncated_normal":
      if is_real:
        stddev = jnp.sqrt(variance) / jnp.array(_TRUNC_STD_REAL, dtype)
        return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
      stddev = jnp.sqrt(variance) / jnp.array(_TRUNC_STD_COMPLEX, dtype)
      return _complex_truncated_normal(key, 2, shape, dtype) * stddev
    if distribution == "normal":
      return random.normal(key, shape, dtype) * jnp.sqrt(variance)
    if distribution == "uniform":
      if is_real:
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
      return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
  return init


def _specialize(name, scale, mode, distribution, doc):
  def builder(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)
  builder.__name__ = builder.__qualname__ = name
  builder.__doc__ = (f"Builds a {doc} initializer: ``variance_scaling({scale}, "
                     f"'{mode}', '{distribution}')``.")
  return builder


glorot_uniform = _specialize("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot uniform")
glorot_normal = _specialize("glorot_normal", 1.0, "fan_avg", "truncated_normal",
                            "Glorot normal")
lecun_uniform = _specialize("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform")
lecun_normal = _specialize("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal")
he_uniform = _specialize("he_uniform", 2.0, "fan_in", "uniform", "He uniform")
he_normal = _specialize("he_normal", 2.0, "fan_in", "truncated_normal", "He normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def _no_sharding(name, out_sharding):
  if out_sharding is not None:
    raise NotImplementedError(f"nn.initializers.{name} does not take out_sharding "
                              "(nor does JAX's).")


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
  """Builds an initializer of (scaled) Haar-random orthogonal matrices:
  orthonormal along ``column_axis`` or across it, whichever is smaller."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    _no_sharding("orthogonal", out_sharding)
    dtype = _dtype(dtype)
    if len(shape) < 2:
      raise ValueError("orthogonal initializer requires at least a 2D shape")
    if any(dim == 0 for dim in shape):
      return jnp.zeros(shape, dtype=dtype)
    n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
    q = random.orthogonal(key, n_rows, (), dtype, n_cols)
    q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
    q = jnp.moveaxis(q, -1, column_axis)
    return jnp.array(scale, dtype) * q
  return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
  """Builds an initializer of delta-orthogonal convolution kernels: zeros
  except an orthogonal matrix at the spatial centre (3D, 4D or 5D shapes)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    _no_sharding("delta_orthogonal", out_sharding)
    dtype = _dtype(dtype)
    if len(shape) not in (3, 4, 5):
      raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
    if shape[-1] < shape[-2]:
      raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
    ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    return jnp.zeros(shape, dtype=dtype).at[centre + (Ellipsis,)].set(ortho)
  return init
