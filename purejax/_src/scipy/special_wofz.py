"""scipy.special.wofz, the Faddeeva function w(z) = exp(-z^2) erfc(-i z).

In the upper half plane: Weideman's rational approximation (SIAM J. Numer.
Anal. 31, 1994) in the variable (L + i z) / (L - i z), whose coefficients
are the FFT of a smooth function computed once with NumPy; far out, the
Laplace continued fraction.  Below the real axis, w(z) = 2 exp(-z^2) - w(-z).
"""
import functools

import numpy as np

import purejax.numpy as jnp
from purejax._src import dtypes
from purejax._src.custom_jvp import custom_jvp
from purejax._src.numpy.util import promote_args_inexact

_N = 40                                # terms of the rational approximation
_L = np.sqrt(_N / np.sqrt(2))
_FAR = 8.0                             # |z| beyond which the continued fraction runs
_FRACTION_TERMS = 24


@functools.lru_cache(maxsize=None)
def _weideman_coefficients():
  m = 2 * _N
  k = np.arange(-m + 1, m)
  t = _L * np.tan(k * np.pi / m / 2)
  f = np.concatenate([[0.0], np.exp(-t * t) * (_L * _L + t * t)])
  a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
  return a[1:_N + 1][::-1]            # highest power first (Horner)


def _upper_rational(z):
  denom = _L - 1j * z
  Z = (_L + 1j * z) / denom
  p = jnp.zeros_like(z)
  for coef in _weideman_coefficients():
    p = p * Z + coef
  return 2 * p / (denom * denom) + (1 / np.sqrt(np.pi)) / denom


def _upper_fraction(z):
  # w(z) = (i / sqrt(pi)) / (z - (1/2) / (z - 1 / (z - (3/2) / (z - ...))))
  tail = z
  for k in range(_FRACTION_TERMS, 0, -1):
    tail = z - (k / 2) / tail
  return (1j / np.sqrt(np.pi)) / tail


def _upper(z):
  far = jnp.abs(z) > _FAR
  near = _upper_rational(jnp.where(far, 0, z))
  out = _upper_fraction(jnp.where(far, z, _FAR * 2))
  return jnp.where(far, out, near)


@custom_jvp
def _wofz(z):
  below = z.imag < 0
  w = _upper(jnp.where(below, -z, z))
  return jnp.where(below, 2 * jnp.exp(-z * z) - w, w)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
  (z,), (dz,) = primals, tangents
  w = _wofz(z)
  return w, (-2 * z * w + 2j / np.sqrt(np.pi)) * dz


def wofz(z):
  z, = promote_args_inexact("wofz", z)
  z = jnp.asarray(z)
  return _wofz(z.astype(dtypes.to_complex_dtype(z.dtype)))
