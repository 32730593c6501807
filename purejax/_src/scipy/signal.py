"""scipy.signal's N-d convolutions: convolve, correlate, convolve2d,
correlate2d (direct, one lax.conv_general_dilated) and fftconvolve.

The direct method convolves the larger input with the flipped smaller one;
'full', 'same' and 'valid' differ only in the padding.  Only
boundary='fill' with fillvalue=0 is supported in the 2-D functions, as in
JAX.
"""
import functools
import operator

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.vmap import vmap
from purejax._src.numpy import util
from purejax._src.numpy.util import check_arraylike, promote_dtypes_inexact

_MODES = ("full", "same", "valid")


def _convolve_nd(in1, in2, mode, *, precision):
  if mode not in _MODES:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 must have the same number of dimensions")
  if in1.size == 0 or in2.size == 0:
    raise ValueError(f"zero-size arrays not supported in convolutions, got shapes "
                     f"{in1.shape} and {in2.shape}.")
  in1, in2 = promote_dtypes_inexact(in1, in2)
  no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
  swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
  if not (no_swap or swap):
    raise ValueError("One input must be smaller than the other in every dimension.")
  # 'same' centres the output on the original second input's shape.
  shape_o = in2.shape
  if swap:
    in1, in2 = in2, in1
  shape = in2.shape
  in2 = jnp.flip(in2)
  if mode == "valid":
    padding = [(0, 0)] * len(shape)
  elif mode == "same":
    padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2)
               for s, s_o in zip(shape, shape_o)]
  else:
    padding = [(s - 1, s - 1) for s in shape]
  result = lax.conv_general_dilated(in1[None, None], in2[None, None], (1,) * len(shape),
                                    padding, precision=precision)
  return result[0, 0]


def _fftconvolve_unbatched(in1, in2, mode):
  full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
  if mode == "valid":
    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
      raise ValueError("For 'valid' mode, One input must be at least as large as the other "
                       "in every dimension.")
    if swap:
      in1, in2 = in2, in1
  if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
    conv = in1 * in2
  else:
    if jnp.iscomplexobj(in1):
      fft, ifft = jnp.fft.fftn, jnp.fft.ifftn
    else:
      fft, ifft = jnp.fft.rfftn, jnp.fft.irfftn
    conv = ifft(fft(in1, full_shape) * fft(in2, full_shape), full_shape)
  if mode == "full":
    out_shape = full_shape
  elif mode == "same":
    out_shape = in1.shape
  else:
    out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))
  start = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
  return lax.dynamic_slice(conv, start, out_shape)


def fftconvolve(in1, in2, mode="full", axes=None):
  """N-d convolution through FFTs; ``axes`` limits it to some axes (the
  others must match and are batch axes)."""
  check_arraylike("fftconvolve", in1, in2)
  in1, in2 = promote_dtypes_inexact(in1, in2)
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 should have the same dimensionality")
  if mode not in _MODES:
    raise ValueError("mode must be one of ['same', 'full', 'valid']")
  fun = functools.partial(_fftconvolve_unbatched, mode=mode)
  if axes is None:
    return fun(in1, in2)
  axes = (axes,) if isinstance(axes, int) else tuple(map(operator.index, axes))
  axes = tuple(util.canonicalize_axis(ax, in1.ndim) for ax in axes)
  mapped = set(range(in1.ndim)) - set(axes)
  if any(in1.shape[i] != in2.shape[i] for i in mapped):
    raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape!r} "
                     f"in2.shape={in2.shape!r} axes={axes!r}")
  for ax in sorted(mapped):
    fun = vmap(fun, in_axes=ax, out_axes=ax)
  return fun(in1, in2)


def convolve(in1, in2, mode="full", method="auto", precision=None):
  """N-d convolution of two arrays of equal rank; method 'auto' and 'direct'
  use lax.conv_general_dilated, 'fft' uses fftconvolve."""
  if method == "fft":
    return fftconvolve(in1, in2, mode=mode)
  if method in ("direct", "auto"):
    check_arraylike("convolve", in1, in2)
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision=precision)
  raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode="full", method="auto", precision=None):
  """N-d cross-correlation: convolution with in2 flipped and conjugated."""
  check_arraylike("correlate", in1, in2)
  in2 = jnp.asarray(in2)
  return convolve(in1, jnp.flip(in2.conj()), mode, precision=precision, method=method)


def _check_2d(name, in1, in2, boundary, fillvalue):
  if boundary != "fill" or fillvalue != 0:
    raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
  if np.ndim(in1) != 2 or np.ndim(in2) != 2:
    raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
  """2-D convolution (zero padding only, as JAX)."""
  check_arraylike("convolve2d", in1, in2)
  _check_2d("convolve2d", in1, in2, boundary, fillvalue)
  return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision=precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
  """2-D cross-correlation (zero padding only, as JAX); flips are arranged
  so that 'same' and 'valid' pick SciPy's window when in1 is the smaller."""
  check_arraylike("correlate2d", in1, in2)
  _check_2d("correlate2d", in1, in2, boundary, fillvalue)
  in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
  swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
  same_shape = in1.shape == in2.shape
  conv = functools.partial(_convolve_nd, mode=mode, precision=precision)
  if mode == "same":
    return jnp.flip(conv(jnp.flip(in1), in2.conj()))
  if mode == "valid":
    if swap and not same_shape:
      return conv(jnp.flip(in2), in1.conj())
    return jnp.flip(conv(jnp.flip(in1), in2.conj()))
  if swap:
    return conv(jnp.flip(in2), in1.conj()).conj()
  return jnp.flip(conv(jnp.flip(in1), in2.conj()))
