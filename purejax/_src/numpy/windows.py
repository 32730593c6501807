"""Window functions for signal processing: bartlett, blackman, hamming,
hanning, kaiser (NumPy's formulas, in the default float dtype)."""
import numpy as np

from purejax import lax
from purejax._src import dtypes
from purejax._src.numpy import ufuncs
from purejax._src.numpy import util
from purejax._src.numpy.ufuncs_extra import i0


def _window(name, M, formula):
  """``formula(n, M)`` on n = 0 .. M-1; windows of length 0 or 1 are ones."""
  M = int(util.concrete_or_error(M, f"M argument of jnp.{name}"))
  dtype = dtypes.default_float_dtype()
  if M <= 1:
    return lax.full((max(M, 0),), 1, dtype)
  return formula(lax.iota(dtype, M), M)


def bartlett(M):
  """The triangular (Bartlett) window of length M."""
  return _window("bartlett", M, lambda n, M: ufuncs.subtract(
      1, ufuncs.true_divide(ufuncs.abs(ufuncs.subtract(ufuncs.add(
          ufuncs.multiply(2, n), 1), M)), M - 1)))


def _cosines(n, M, weights):
  """sum_k weights[k] * cos(2 pi k n / (M - 1))."""
  out = weights[0]
  for k, w in enumerate(weights[1:], 1):
    out = ufuncs.add(out, ufuncs.multiply(w, ufuncs.cos(
        ufuncs.true_divide(ufuncs.multiply(2 * k * np.pi, n), M - 1))))
  return out


def blackman(M):
  """The Blackman window of length M."""
  return _window("blackman", M, lambda n, M: _cosines(n, M, (0.42, -0.5, 0.08)))


def hamming(M):
  """The Hamming window of length M."""
  return _window("hamming", M, lambda n, M: _cosines(n, M, (0.54, -0.46)))


def hanning(M):
  """The Hann window of length M."""
  return _window("hanning", M, lambda n, M: ufuncs.multiply(
      0.5, ufuncs.subtract(1, ufuncs.cos(ufuncs.true_divide(
          ufuncs.multiply(2 * np.pi, n), M - 1)))))


def kaiser(M, beta):
  """The Kaiser window of length M and shape ``beta``."""
  util.check_arraylike("kaiser", beta)

  def formula(n, M):
    alpha = 0.5 * (M - 1)
    ratio = ufuncs.true_divide(ufuncs.subtract(n, alpha), alpha)
    arg = ufuncs.multiply(beta, ufuncs.sqrt(ufuncs.subtract(1, ufuncs.square(ratio))))
    return ufuncs.true_divide(i0(arg), i0(beta))

  return _window("kaiser", M, formula)
