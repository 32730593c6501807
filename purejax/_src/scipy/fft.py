"""scipy.fft's discrete cosine transforms (type 2 and its inverse, as in JAX).

dct uses Makhoul's reordering: the even samples followed by the reversed odd
samples, one complex FFT of the same length and a quarter-sample twiddle.
idct undoes each step.  Complex inputs transform their real and imaginary
parts separately, as SciPy does.
"""
import numpy as np

import purejax.numpy as jnp
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def _check(name, type, norm):
  if type != 2:
    raise NotImplementedError("Only DCT type 2 is implemented.")
  if norm is not None and norm not in ("ortho", "backward"):
    raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _resize(x, n, axis):
  """Truncates or zero-pads x to length n along axis."""
  if n is None:
    return x
  if n < 1:
    raise ValueError(f"invalid number of data points ({n}) specified")
  size = x.shape[axis]
  if n <= size:
    return jnp.take(x, jnp.arange(n), axis=axis) if n < size else x
  pad = [(0, 0)] * x.ndim
  pad[axis] = (0, n - size)
  return jnp.pad(x, pad)


def _twiddle(n, dtype, sign):
  k = np.arange(n)
  return jnp.asarray(np.exp(sign * 1j * np.pi * k / (2 * n)), dtype)


def _dct_last(x, ortho):
  """Unnormalized (SciPy 'backward') DCT-II along the last axis of real x."""
  n = x.shape[-1]
  v = jnp.concatenate([x[..., ::2], jnp.flip(x[..., 1::2], -1)], axis=-1)
  spectrum = jnp.fft.fft(v, axis=-1)
  cdtype = spectrum.dtype
  y = 2 * jnp.real(spectrum * _twiddle(n, cdtype, -1))
  if ortho:
    scale = np.full(n, np.sqrt(1 / (2 * n)))
    scale[0] = np.sqrt(1 / (4 * n))
    y = y * jnp.asarray(scale, y.dtype)
  return y


def _idct_last(y, ortho):
  """The inverse of _dct_last along the last axis of real y."""
  n = y.shape[-1]
  if ortho:
    scale = np.full(n, np.sqrt(2 * n))
    scale[0] = np.sqrt(4 * n)
    y = y * jnp.asarray(scale, y.dtype)
  # X[n - k] for k >= 1, with X[n] taken as zero.
  mirrored = jnp.concatenate([jnp.zeros_like(y[..., :1]), jnp.flip(y[..., 1:], -1)], axis=-1)
  z = jnp.asarray(0.5, y.dtype) * (y - 1j * mirrored)
  v = jnp.real(jnp.fft.ifft(z * _twiddle(n, z.dtype, 1), axis=-1))
  half = (n + 1) // 2
  x = jnp.zeros_like(v)
  x = x.at[..., ::2].set(v[..., :half])
  return x.at[..., 1::2].set(jnp.flip(v[..., half:], -1))


def _apply(transform, x, axis, ortho):
  """Applies a real transform along axis, splitting complex inputs."""
  x = jnp.moveaxis(x, axis, -1)
  if jnp.iscomplexobj(x):
    out = transform(jnp.real(x), ortho) + 1j * transform(jnp.imag(x), ortho)
  else:
    out = transform(x, ortho)
  return jnp.moveaxis(out, -1, axis)


def _prepare(name, x, type, norm):
  check_arraylike(name, x)
  _check(name, type, norm)
  x, = promote_dtypes_inexact(x)
  return x


def dct(x, type=2, n=None, axis=-1, norm=None):
  """The discrete cosine transform (type 2) of x along axis (see scipy.fft.dct)."""
  x = _prepare("dct", x, type, norm)
  axis = _canonical_axis(axis, x.ndim)
  return _apply(_dct_last, _resize(x, n, axis), axis, norm == "ortho")


def idct(x, type=2, n=None, axis=-1, norm=None):
  """The inverse of dct (type 2) along axis (see scipy.fft.idct)."""
  x = _prepare("idct", x, type, norm)
  axis = _canonical_axis(axis, x.ndim)
  return _apply(_idct_last, _resize(x, n, axis), axis, norm == "ortho")


def _canonical_axis(axis, ndim):
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


def _nd(name, one_axis, x, type, s, axes, norm):
  x = _prepare(name, x, type, norm)
  if axes is None:
    axes = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
  axes = [_canonical_axis(a, x.ndim) for a in axes]
  if s is not None and len(s) != len(axes):
    raise ValueError("Shape and axes have different lengths.")
  if len(set(axes)) != len(axes):
    raise ValueError("All axes must be different.")
  sizes = [None] * len(axes) if s is None else list(s)
  for axis, size in zip(axes, sizes):
    x = one_axis(x, n=size, axis=axis, norm=norm)
  return x


def dctn(x, type=2, s=None, axes=None, norm=None):
  """The N-d discrete cosine transform (type 2) over axes (see scipy.fft.dctn)."""
  return _nd("dctn", dct, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
  """The inverse of dctn (type 2) over axes (see scipy.fft.idctn)."""
  return _nd("idctn", idct, x, type, s, axes, norm)
