"""jnp.fft: NumPy's FFT API on lax.fft.

The transformed axes are moved last (lax.fft works on trailing axes),
cropped or zero-padded to the requested lengths, transformed by one
``fft`` primitive, scaled for ``norm`` and moved back.  Single precision
stays single (float32 -> complex64), as in JAX.
"""
import operator

import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.lax.fft import FftType
from purejax._src.lax.fft import fft as lax_fft
from purejax._src.numpy import creation
from purejax._src.numpy import manipulation
from purejax._src.numpy import shape_ops
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike


def _norm_factor(s, func_name, norm, dtype):
  """The constant the transform is multiplied by (None: no scaling)."""
  if norm is None or norm == "backward":
    return None
  size = np.prod(np.array(s, dtype))
  inverse = func_name.startswith("i")
  if norm == "ortho":
    return np.sqrt(size) if inverse else 1 / np.sqrt(size)
  if norm == "forward":
    return size if inverse else 1 / size
  raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                   '"forward".')


def _resize(arr, in_s):
  """Crops each axis to ``in_s`` and zero-pads the short ones."""
  shape = util.shape(arr)
  if any(n < d for n, d in zip(in_s, shape)):
    arr = lax.slice(arr, (0,) * len(shape), tuple(min(n, d) for n, d in zip(in_s, shape)))
    shape = util.shape(arr)
  if any(n > d for n, d in zip(in_s, shape)):
    zero = np.zeros((), util.aval_of(arr).dtype)
    arr = lax.pad(arr, zero, [(0, n - d, 0) for n, d in zip(in_s, shape)])
  return arr


def _fft_core(func_name, fft_type, a, s, axes, norm):
  full_name = f"jax.numpy.fft.{func_name}"
  check_arraylike(full_name, a)
  arr = util.asarray(a)
  ndim = util.ndim(arr)
  if s is not None:
    s = tuple(map(operator.index, s))
    if any(n <= 0 for n in s):
      raise ValueError("Shape should be positive.")
  if s is not None and axes is not None and len(s) != len(axes):
    raise ValueError("Shape and axes have different lengths.")
  orig_axes = axes
  if axes is None:
    axes = range(ndim) if s is None else range(ndim - len(s), ndim)
  axes = tuple(operator.index(ax) for ax in axes)
  if len(axes) != len(set(axes)):
    raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
  if orig_axes is not None:
    # lax.fft transforms trailing axes: move the requested ones there.
    axes_last = tuple(range(ndim - len(axes), ndim))
    arr = shape_ops.moveaxis(arr, axes, axes_last)
    axes = axes_last
  if s is not None:
    in_s = list(util.shape(arr))
    for axis, n in zip(axes, s):
      in_s[axis] = n
    if fft_type == FftType.IRFFT:
      in_s[-1] = in_s[-1] // 2 + 1
    arr = _resize(arr, in_s)
  else:
    shape = util.shape(arr)
    if fft_type == FftType.IRFFT:
      s = [shape[axis] for axis in axes[:-1]]
      if axes:
        s += [max(0, 2 * (shape[axes[-1]] - 1))]
    else:
      s = [shape[axis] for axis in axes]
  out = lax_fft(arr, fft_type, tuple(s))
  factor = _norm_factor(s, func_name, norm, util.aval_of(out).dtype)
  if factor is not None:
    out = out * np.asarray(factor, util.aval_of(out).dtype)
  if orig_axes is not None:
    out = shape_ops.moveaxis(out, axes, orig_axes)
  return out


def fftn(a, s=None, axes=None, norm=None):
  """N-dimensional FFT over ``axes`` (default: all, or the last len(s))."""
  return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
  """N-dimensional inverse FFT."""
  return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
  """N-dimensional FFT of real input (the last axis keeps n//2 + 1 terms)."""
  return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
  """Inverse of rfftn: real output, the last axis of length s[-1]
  (default 2 * (n - 1))."""
  return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _axis_check_1d(func_name, axis):
  if isinstance(axis, (list, tuple)):
    full_name = f"jax.numpy.fft.{func_name}"
    raise ValueError(f"{full_name} does not support multiple axes. Please use "
                     f"{full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
  _axis_check_1d(func_name, axis)
  axes = None if axis is None else [axis]
  s = None if n is None else [n]
  return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
  """One-dimensional FFT along ``axis``, cropped or zero-padded to ``n``."""
  return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
  """One-dimensional inverse FFT."""
  return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
  """One-dimensional FFT of real input: the n//2 + 1 non-negative frequencies."""
  return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
  """Inverse of rfft: ``n`` (default 2 * (len - 1)) real values."""
  return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
  """FFT of a Hermitian-symmetric signal given by its first half: real output."""
  check_arraylike("jax.numpy.fft.hfft", a)
  conj_a = ufuncs.conj(a)
  _axis_check_1d("hfft", axis)
  nn = (util.shape(conj_a)[axis] - 1) * 2 if n is None else n
  return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
  """Inverse of hfft: the conjugate half spectrum of real input."""
  _axis_check_1d("ihfft", axis)
  check_arraylike("jax.numpy.fft.ihfft", a)
  arr = util.asarray(a)
  nn = util.shape(arr)[axis] if n is None else n
  out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
  return ufuncs.conj(out) * (1 / nn)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
  if len(axes) != 2:
    raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. "
                     f"Got axes = {axes!r}.")
  return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
  """Two-dimensional FFT."""
  return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
  """Two-dimensional inverse FFT."""
  return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
  """Two-dimensional FFT of real input."""
  return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
  """Inverse of rfft2."""
  return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name, n, d):
  if isinstance(n, (list, tuple)):
    raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                     f"Got n = {list(n)}.")
  if isinstance(d, (list, tuple)):
    raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single "
                     f"value. Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
  """Sample frequencies of an n-point FFT with sample spacing ``d``."""
  dtype = dtype or dtypes.default_float_dtype()
  _check_freq_args("fftfreq", n, d)
  out_dtype = dtype
  dtype = dtypes.finfo(dtypes.to_inexact_dtype(dtypes.canonicalize_dtype(dtype))).dtype
  i = creation.arange(n, dtype=dtype)
  k = ((i + n // 2) % n - n // 2)
  result = k.astype(dtype) / creation.array(d * n, dtype=dtype)
  return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
  """Sample frequencies of rfft: the n//2 + 1 non-negative ones."""
  dtype = dtype or dtypes.default_float_dtype()
  _check_freq_args("rfftfreq", n, d)
  k = creation.arange(0, n // 2 + 1 if n % 2 == 0 else (n - 1) // 2 + 1, dtype=dtype)
  return k / creation.array(d * n, dtype=dtype)


def _shifts(x, axes, sign):
  shape = util.shape(x)
  if axes is None:
    axes = tuple(range(len(shape)))
    return [sign * (dim // 2) for dim in shape], axes
  if isinstance(axes, int):
    return sign * (shape[axes] // 2), axes
  return [sign * (shape[ax] // 2) for ax in axes], axes


def fftshift(x, axes=None):
  """Rolls the zero frequency to the centre of ``axes`` (default: all)."""
  check_arraylike("fftshift", x)
  x = util.asarray(x)
  shift, axes = _shifts(x, axes, 1)
  return manipulation.roll(x, shift, axes)


def ifftshift(x, axes=None):
  """Inverse of fftshift."""
  check_arraylike("ifftshift", x)
  x = util.asarray(x)
  shift, axes = _shifts(x, axes, -1)
  return manipulation.roll(x, shift, axes)
