"""NumPy numerics of the exponentially scaled modified Bessel functions
i0e(x) = exp(-|x|) I0(x) and i1e(x) = exp(-|x|) I1(x), from SciPy in float64
(rounded once to the operand's dtype).  i1e is odd, down to its zeros:
i1e(-0.) = -0. and i1e(-inf) = -0., as in JAX."""
import numpy as np

from purejax._src.lax.special_gamma import _scipy_special, _wide


def i0e_np(x):
  return _scipy_special("bessel_i0e").i0e(_wide(x))


def i1e_np(x):
  x = _wide(x)
  out = _scipy_special("bessel_i1e").i1e(np.abs(x))
  return np.where(np.signbit(x), -out, out)
