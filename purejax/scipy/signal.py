"""purejax.scipy.signal: N-d convolution and correlation, detrending, STFTs
and Welch's spectral estimates (JAX's subset)."""
from purejax._src.scipy.signal import (
    convolve, convolve2d, correlate, correlate2d, fftconvolve)
from purejax._src.scipy.signal_spectral import detrend
from purejax._src.scipy.signal_welch import csd, istft, stft, welch

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]
