"""purejax.scipy.signal: N-d convolution and correlation (JAX's subset).

Not provided yet: csd, detrend, istft, stft, welch.
"""
from purejax._src.scipy.signal import (
    convolve, convolve2d, correlate, correlate2d, fftconvolve)

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "fftconvolve"]
