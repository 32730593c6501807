"""scipy.signal's short-time Fourier transforms and Welch's spectral
estimates (stft, istft, csd, welch) on purejax.numpy's FFTs, with JAX's
conventions (e.g. nperseg=None means the whole signal, not 256)."""
import operator
import warnings

import numpy as np

import purejax.numpy as jnp
from purejax._src import dtypes
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from purejax._src.scipy.signal_spectral import detrend as _detrend


def _static_int(value, what):
  try:
    return operator.index(value)
  except TypeError:
    return int(value)   # a NumPy or concrete purejax scalar; a tracer raises


def _hann(n):
  if n == 1:
    return jnp.array([1.0])
  return jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window, n):
  if isinstance(window, str) and window == "hann":
    return _hann(n)
  from scipy.signal import get_window
  return get_window(window, n)


def _window_and_length(window, nperseg, length, dtype):
  """(window array, segment length) from a window name / tuple / array and
  nperseg (None: the whole signal for a named window, else its length)."""
  if isinstance(window, (str, tuple)):
    n = length if nperseg is None else int(nperseg)
    if n > length:
      warnings.warn(f"nperseg={n} is greater than input_length={length}, "
                    f"using nperseg={length}")
      n = length
    return jnp.asarray(_named_window(window, n), dtype=dtype), n
  win = jnp.asarray(window, dtype=dtype)
  n = win.size if nperseg is None else int(nperseg)
  if win.ndim != 1:
    raise ValueError("window must be 1-D")
  if length < win.size:
    raise ValueError("window is longer than input signal")
  if n != win.size:
    raise ValueError("value specified for nperseg is different from length of window")
  return win, n


def _pad_last(x, before, after, mode, **kw):
  return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(before, after)], mode, **kw)


def _odd_extension(x, n):
  if n < 1:
    return x
  if n > x.shape[-1] - 1:
    raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                     f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
  left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], -1)
  right = 2 * x[..., -1:] - jnp.flip(x[..., -n - 1:-1], -1)
  return jnp.concatenate([left, x, right], axis=-1)


_EXTENSIONS = {
    "even": lambda x, n: _pad_last(x, n, n, "reflect"),
    "odd": _odd_extension,
    "constant": lambda x, n: _pad_last(x, n, n, "edge"),
    "zeros": lambda x, n: _pad_last(x, n, n, "constant"),
    None: lambda x, n: x,
}


def _detrender(detrend, axis):
  if isinstance(detrend, str):
    return lambda d: _detrend(d, axis=-1, type=detrend)
  if callable(detrend):
    return detrend
  if not detrend:
    return lambda d: d
  raise ValueError(f"Unsupported detrend type: {detrend}")


def _segment_spectra(x, win, detrend, nperseg, noverlap, nfft, twosided):
  """The FFT of each windowed, detrended segment: (..., segments, freqs)."""
  length = x.shape[-1]
  if nperseg == 1 and noverlap == 0:
    segments = x[..., None]
  else:
    starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
    segments = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
  segments = detrend(segments)
  if jnp.iscomplexobj(win):
    segments = segments.astype(dtypes.to_complex_dtype(segments.dtype))
  segments = win * segments
  if twosided:
    return jnp.fft.fft(segments, n=nfft)
  return jnp.fft.rfft(segments.real, n=nfft)


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
  """(freqs, times, spectra (frequencies at ``axis``, segments last))."""
  if mode not in ("psd", "stft"):
    raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
  if boundary not in _EXTENSIONS:
    raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                     f"{list(_EXTENSIONS)}")
  if y is None:
    check_arraylike("spectral_helper", x)
    x, = promote_dtypes_inexact(jnp.asarray(x))
    axis = _static_int(axis, "axis") % max(x.ndim, 1)
    outer = x.shape[:axis] + x.shape[axis + 1:]
  else:
    if mode != "psd":
      raise ValueError("two-argument mode is available only when mode=='psd'")
    check_arraylike("spectral_helper", x, y)
    x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
    if x.ndim != y.ndim:
      raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    axis = _static_int(axis, "axis") % max(x.ndim, 1)
    try:
      outer = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                  y.shape[:axis] + y.shape[axis + 1:])
    except ValueError as err:
      raise ValueError("x and y cannot be broadcast together.") from err
  result_dtype = dtypes.to_complex_dtype(x.dtype)
  freq_dtype = np.finfo(result_dtype).dtype
  if nperseg is not None:
    nperseg = _static_int(nperseg, "nperseg")
    if nperseg < 1:
      raise ValueError("nperseg must be a positive integer")
  win, nperseg = _window_and_length(window, nperseg, x.shape[axis], x.dtype)
  noverlap = nperseg // 2 if noverlap is None else _static_int(noverlap, "noverlap")
  nfft = nperseg if nfft is None else _static_int(nfft, "nfft")
  if x.size == 0 or (y is not None and y.size == 0):
    n = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
    shape = outer[:axis] + (n,) + outer[axis:]
    return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype))
  x = jnp.moveaxis(x, axis, -1)
  if y is not None:
    y = jnp.moveaxis(y, axis, -1)
    if x.shape[-1] < y.shape[-1]:
      x = _pad_last(x, 0, y.shape[-1] - x.shape[-1], "constant")
    elif y.shape[-1] < x.shape[-1]:
      y = _pad_last(y, 0, x.shape[-1] - y.shape[-1], "constant")
  if nfft < nperseg:
    raise ValueError("nfft must be greater than or equal to nperseg.")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  step = nperseg - noverlap
  signals = [x] if y is None else [x, y]
  signals = [_EXTENSIONS[boundary](s, nperseg // 2) for s in signals]
  if padded:   # a whole number of segments
    extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
    signals = [_pad_last(s, 0, extra, "constant") for s in signals]
  length = signals[0].shape[-1]
  detrend_fn = _detrender(detrend, axis)
  if scaling == "density":
    scale = 1.0 / (fs * (win * win).sum())
  elif scaling == "spectrum":
    scale = 1.0 / win.sum() ** 2
  else:
    raise ValueError(f"Unknown scaling: {scaling}")
  if mode == "stft":
    scale = jnp.sqrt(scale)
  twosided = not return_onesided
  if return_onesided and any(jnp.iscomplexobj(s) for s in signals):
    twosided = True
    warnings.warn("Input data is complex, switching to return_onesided=False")
  if twosided:
    freqs = jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
  else:
    freqs = jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)
  spectra = [_segment_spectra(s, win, detrend_fn, nperseg, noverlap, nfft, twosided)
             for s in signals]
  if y is not None:
    result = jnp.conj(spectra[0]) * spectra[1]
  elif mode == "psd":
    result = jnp.conj(spectra[0]) * spectra[0]
  else:
    result = spectra[0]
  result = result * scale.astype(dtypes.to_complex_dtype(jnp.asarray(scale).dtype))
  if not twosided and mode == "psd":   # fold the negative frequencies in
    end = result.shape[-1] if nfft % 2 else result.shape[-1] - 1
    result = result.at[..., 1:end].multiply(2)
  times = jnp.arange(nperseg / 2, length - nperseg / 2 + 1, step, dtype=freq_dtype) / fs
  if boundary is not None:
    times = times - (nperseg / 2) / fs
  result = result.astype(result_dtype)
  if y is None and mode != "stft":
    result = result.real
  return freqs, times, jnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
  return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                   "spectrum", axis, "stft", boundary, padded)


def _median_bias(n):
  """The median of n periodograms over their mean (Allen et al. 2012, B)."""
  even = 2 * np.arange(1, (n - 1) // 2 + 1)
  return 1 + np.sum(1.0 / (even + 1) - 1.0 / even)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
  freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling, axis, "psd")
  if y is not None:
    pxy = pxy + 0j
  if pxy.ndim >= 2 and pxy.size > 0:
    if pxy.shape[-1] > 1:
      if average == "median":
        bias = jnp.asarray(_median_bias(pxy.shape[-1])).astype(pxy.dtype)
        if jnp.iscomplexobj(pxy):
          pxy = jnp.median(pxy.real, axis=-1) + 1j * jnp.median(pxy.imag, axis=-1)
        else:
          pxy = jnp.median(pxy, axis=-1)
        pxy = pxy / bias
      elif average == "mean":
        pxy = pxy.mean(axis=-1)
      else:
        raise ValueError(f'average must be "median" or "mean", got {average}')
    else:
      pxy = pxy.reshape(pxy.shape[:-1])
  return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
  freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                   nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                   scaling=scaling, axis=axis, average=average)
  return freqs, pxx.real


def _overlap_add(frames, step):
  """Frames (..., count, size) added at offsets 0, step, 2 step, ...: each
  frame cut into ceil(size / step) chunks of ``step``; chunk k of every frame
  laid end to end and shifted by k steps (a fixed order of additions)."""
  *batch, count, size = frames.shape
  chunks = -(-size // step)
  out_len = step * (count - 1) + size
  frames = _pad_last(frames, 0, chunks * step - size, "constant")
  frames = frames.reshape(tuple(batch) + (count, chunks, step))
  total = None
  for k in range(chunks):
    row = frames[..., k, :].reshape(tuple(batch) + (count * step,))
    row = _pad_last(row, k * step, (chunks - 1 - k) * step, "constant")
    total = row if total is None else total + row
  return total[..., :out_len]


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
  check_arraylike("istft", Zxx)
  Zxx = jnp.asarray(Zxx)
  if Zxx.ndim < 2:
    raise ValueError("Input stft must be at least 2d!")
  freq_axis = _static_int(freq_axis, "freq_axis") % Zxx.ndim
  time_axis = _static_int(time_axis, "time_axis") % Zxx.ndim
  if freq_axis == time_axis:
    raise ValueError("Must specify differing time and frequency axes!")
  Zxx = Zxx.astype(dtypes.to_complex_dtype(Zxx.dtype))
  default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
  nperseg = _static_int(nperseg or default, "nperseg")
  if nperseg < 1:
    raise ValueError("nperseg must be a positive integer")
  if nfft is None:
    length = default + 1 if (input_onesided and nperseg == default + 1) else default
  else:
    length = nfft = _static_int(nfft, "nfft")
  if length < nperseg:
    raise ValueError(f"FFT length ({length}) must be longer than nperseg ({nperseg}).")
  noverlap = _static_int(noverlap or nperseg // 2, "noverlap")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  step = nperseg - noverlap
  if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
    rest = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
    Zxx = jnp.transpose(Zxx, rest + (freq_axis, time_axis))
  inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
  # The inverse has the caller's nfft, else its default length (as JAX).
  segments = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
  if isinstance(window, (str, tuple)):
    win = jnp.asarray(_named_window(window, nperseg)).astype(segments.dtype)
  else:
    win = jnp.asarray(window)
    if win.ndim != 1:
      raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
      raise ValueError(f"window must have length of {nperseg}")
  segments = segments * win.sum()       # undoes stft's 'spectrum' scaling
  col = win.reshape((1,) * (segments.ndim - 2) + (nperseg, 1))
  x = _overlap_add(jnp.swapaxes(segments * col, -2, -1), step)
  squares = jnp.broadcast_to(col * col, col.shape[:-1] + (segments.shape[-1],))
  norm = _overlap_add(jnp.swapaxes(squares, -2, -1), step)
  if boundary:
    x = x[..., nperseg // 2:-(nperseg // 2)]
    norm = norm[..., nperseg // 2:-(nperseg // 2)]
  x = x / jnp.where(norm > 1e-10, norm, 1.0)
  if x.ndim > 1 and time_axis != Zxx.ndim - 1:
    x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
  times = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
  return times, x
