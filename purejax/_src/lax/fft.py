"""Fast Fourier transforms: lax.fft and its primitive fft_p.

``fft_p`` transforms the trailing ``len(fft_lengths)`` axes with SciPy's
multi-threaded pocketfft (a GPU's arrays with CuPy's cuFFT), in single
precision for float32/complex64 as XLA does (NumPy's own FFT is
single-threaded).  The transform is linear: its
transpose is another transform (for RFFT/IRFFT with a mask for the
Hermitian-redundant half, as in JAX).
"""
import enum
import functools
import math

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.config import thread_count
from purejax._src.api import jit
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax.families import standard_primitive


class FftType(enum.IntEnum):
  """Which FFT to compute."""
  FFT = 0     # complex -> complex, forward
  IFFT = 1    # complex -> complex, inverse
  RFFT = 2    # real -> complex (the non-negative frequencies)
  IRFFT = 3   # complex (non-negative frequencies) -> real


_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
          "irfft": FftType.IRFFT}


def _fft_type(value):
  if isinstance(value, FftType):
    return value
  if isinstance(value, str):
    key = value.lower() if value.isupper() else value
    if key not in _NAMES:
      raise ValueError(f"Unknown FFT type '{value}'")
    return _NAMES[key]
  raise TypeError(f"Unknown FFT type value '{value}'")


def _complex_of(dtype):
  return np.result_type(dtype, np.complex64)


def _real_of(dtype):
  return np.finfo(dtype).dtype


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
  n = len(fft_lengths)
  if n > x.ndim:
    raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                     f"dimensions as fft_lengths {fft_lengths}.")
  minor = x.shape[x.ndim - n:]
  if fft_type == FftType.RFFT:
    if x.dtype not in (np.float32, np.float64):
      raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
    if minor != fft_lengths:
      raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                       f"fft_lengths {fft_lengths}")
    shape = x.shape[:x.ndim - n] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    return core.ShapedArray(shape, _complex_of(x.dtype))
  if not dtypes.issubdtype(x.dtype, np.complexfloating):
    kind = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
    raise ValueError(f"{kind} input must be complex64 or complex128, got {x.dtype}")
  if fft_type == FftType.IRFFT:
    if minor[:-1] != fft_lengths[:-1]:
      raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                       f"all except the last fft_length, got fft_lengths={fft_lengths}")
    return core.ShapedArray(x.shape[:x.ndim - n] + fft_lengths, _real_of(x.dtype))
  if minor != fft_lengths:
    raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                     f"fft_lengths {fft_lengths}")
  return core.ShapedArray(x.shape, x.dtype)


_FUNCTIONS = {FftType.FFT: "fftn", FftType.IFFT: "ifftn", FftType.RFFT: "rfftn",
              FftType.IRFFT: "irfftn"}


def _fft_impl(x, *, fft_type, fft_lengths):
  """One call of SciPy's pocketfft, eagerly and as a jitted function's host
  step alike, or of CuPy's (cuFFT) on a GPU's array.  It keeps single
  precision (float32 -> complex64), as XLA does; SciPy runs on
  ``purejax_num_threads`` workers, which share out whole 1-D transforms:
  the bits do not depend on their count."""
  axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
  if fft_type == FftType.RFFT:
    dtype = _complex_of(x.dtype)
  elif fft_type == FftType.IRFFT:
    dtype = _real_of(x.dtype)
  else:
    dtype = x.dtype
  kwargs = {"s": fft_lengths} if fft_type == FftType.IRFFT else {}
  xp = array_namespace.of(x)
  if xp is not np:
    out = getattr(xp.fft, _FUNCTIONS[fft_type])(x, axes=axes, **kwargs)
    return out if out.dtype == dtype else out.astype(dtype)
  import scipy.fft
  out = getattr(scipy.fft, _FUNCTIONS[fft_type])(x, axes=axes, workers=thread_count(), **kwargs)
  return np.asarray(out, dtype)


# impl_on_gpu_arrays: a GPU's arrays are transformed there (see dot_general_p)
fft_p = standard_primitive("fft", _fft_abstract_eval, _fft_impl, impl_on_gpu_arrays=True)
fft_p.c_code = None
fft_p.library_call = "pocketfft"


def _bind(x, fft_type, fft_lengths):
  return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)


def _hermitian_mask(n_out, length, dtype):
  """Weights of the half spectrum: 1 for the DC (and even-length Nyquist)
  term, 2 for the others, whose mirror images were dropped."""
  mask = np.full((n_out,), 2, dtype)
  mask[0] = 1
  if length % 2 == 0:
    mask[-1] = 1
  return mask


def _fft_transpose(t, operand, *, fft_type, fft_lengths):
  from purejax import lax
  if type(t) is ad.Zero:
    return [ad.Zero(operand.aval)]
  size = math.prod(fft_lengths)
  t_aval = core.get_aval(t)
  if fft_type == FftType.RFFT:
    mask = _hermitian_mask(t_aval.shape[-1], fft_lengths[-1], t_aval.dtype)
    out = _bind(lax.conj(t) / mask, FftType.IRFFT, fft_lengths)
    return [out * np.array(size, _real_of(t_aval.dtype))]
  if fft_type == FftType.IRFFT:
    x = _bind(t, FftType.RFFT, fft_lengths)
    x_dtype = core.get_aval(x).dtype
    mask = _hermitian_mask(core.get_aval(x).shape[-1], fft_lengths[-1], x_dtype)
    return [lax.conj(x * (mask / np.array(size, x_dtype)))]
  return [_bind(t, fft_type, fft_lengths)]


ad.deflinear(fft_p, _fft_transpose)


@fft_p.def_batch
def _fft_batch(axis_size, vals, dims, *, fft_type, fft_lengths):
  (x,), (d,) = vals, dims
  return _bind(batching.moveaxis(x, d, 0), fft_type, fft_lengths), 0


@functools.partial(jit, static_argnums=(1, 2))
def fft(x, fft_type, fft_lengths):
  """The FFT of ``fft_type`` (an FftType or its name) over x's trailing
  ``len(fft_lengths)`` axes; x becomes complex (real for RFFT) first."""
  from purejax import lax
  typ = _fft_type(fft_type)
  x_dtype = core.get_aval(x).dtype
  if typ == FftType.RFFT:
    if dtypes.issubdtype(x_dtype, np.complexfloating):
      raise ValueError("only real valued inputs supported for rfft")
    x = lax.convert_element_type(x, dtypes.to_inexact_dtype(x_dtype))
  else:
    x = lax.convert_element_type(x, dtypes.to_complex_dtype(x_dtype))
  if len(fft_lengths) == 0:
    return x    # nothing to transform (XLA refuses rank-0 FFTs)
  return _bind(x, typ, tuple(int(n) for n in fft_lengths))
