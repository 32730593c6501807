"""1-D convolution and correlation (jnp.convolve, jnp.correlate), as one
``conv_general_dilated`` each.

As in NumPy, ``convolve`` flips the shorter input and ``correlate``
conjugates its second input; inputs are promoted to an inexact dtype unless
``preferred_element_type`` is given.
"""
import functools

from purejax import lax
from purejax._src.api import jit
from purejax._src.numpy import util
from purejax._src.numpy.shape_ops import flip
from purejax._src.numpy.ufuncs import conj

_MODES = ("full", "same", "valid")


def _as_conv_operand(x):
  """x (n,) as (batch 1, feature 1, n)."""
  return lax.broadcast_in_dim(x, (1, 1) + util.shape(x), (2,))


@functools.partial(jit, static_argnames=("mode", "op", "precision",
                                         "preferred_element_type"))
def _conv(x, y, mode, op, precision, preferred_element_type=None):
  if util.ndim(x) != 1 or util.ndim(y) != 1:
    raise ValueError(f"{op}() only support 1-dimensional inputs.")
  if preferred_element_type is None:
    x, y = util.promote_dtypes_inexact(x, y)
  else:
    x, y = util.promote_dtypes(x, y)
  nx, ny = util.shape(x)[0], util.shape(y)[0]
  if nx == 0 or ny == 0:
    raise ValueError(f"{op}: inputs cannot be empty, got shapes {util.shape(x)} and "
                     f"{util.shape(y)}.")
  reverse = False
  if op == "correlate":
    y = conj(y)
    if nx < ny:
      # Correlating the other way round gives the result reversed.
      x, y, reverse = y, x, True
  else:
    if nx < ny:
      x, y = y, x
    y = flip(y)
  k = util.shape(y)[0]
  if mode == "valid":
    padding = [(0, 0)]
  elif mode == "same":
    padding = [(k // 2, k - k // 2 - 1)]
  elif mode == "full":
    padding = [(k - 1, k - 1)]
  else:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  out = lax.conv_general_dilated(_as_conv_operand(x), _as_conv_operand(y), (1,), padding,
                                 precision=precision,
                                 preferred_element_type=preferred_element_type)
  if reverse:
    out = lax.rev(out, (2,))
  return lax.squeeze(out, (0, 1))


@functools.partial(jit, static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
  """Discrete linear convolution of two 1-D arrays: ``c[k] = sum_j a[k-j] v[j]``.

  ``mode`` is "full" (every overlap), "same" (the size of the longer input)
  or "valid" (complete overlaps only)."""
  util.check_arraylike("convolve", a, v)
  return _conv(a, v, mode=mode, op="convolve", precision=precision,
               preferred_element_type=preferred_element_type)


@functools.partial(jit, static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
  """Cross-correlation of two 1-D arrays: ``c[k] = sum_n a[n+k] conj(v[n])``.

  ``mode`` is "valid" (complete overlaps only, the default), "same" or "full"."""
  util.check_arraylike("correlate", a, v)
  return _conv(a, v, mode=mode, op="correlate", precision=precision,
               preferred_element_type=preferred_element_type)
