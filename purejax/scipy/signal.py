"""purejax.scipy.signal: N-d convolution and correlation (JAX's subset).

Not provided yet: csd, istft, stft, welch.
"""
from purejax._src.scipy.signal import (
    convolve, convolve2d, correlate, correlate2d, fftconvolve)
from purejax._src.scipy.signal_spectral import detrend

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]
