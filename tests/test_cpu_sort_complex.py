"""Sorts with complex keys compile to C (no NumPy host step): lexicographic
by (real, imaginary), each part ordered as lax orders floats (-0.0 equals
0.0, NaNs of either sign equal and last), stable.  The NumPy tier's bits, a
reference order built with np.lexsort, and real JAX's."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

from tests.tier_pair import c_and_numpy_tier

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
PARTS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5])
# (shape, axis): short rows along a last and an inner axis, long rows (one
# at a time with parallel passes), a row of one.
CASES = [((7, 300), 1), ((300, 5), 0), ((2, 70000), 1), ((4, 1), 1)]


def _operand(dtype, shape):
  """Parts drawn from a few values (many ties, NaNs, infinities, zeros) and
  random ones."""
  x = np.empty(shape, dtype)
  for part in ("real", "imag"):
    vals = np.where(RNG.rand(*shape) < 0.5, RNG.choice(PARTS, shape),
                    RNG.standard_normal(shape))
    setattr(x, part, vals)
  return x


def _order(x, axis):
  """The stable lexicographic order along ``axis``, by np.lexsort."""
  x = np.moveaxis(x, axis, -1)
  out = np.empty(x.shape, np.int64)
  for idx in np.ndindex(x.shape[:-1]):
    row = x[idx]
    re, im = row.real, row.imag
    # lexsort: the last key is the primary one; NaN parts are one value, last.
    out[idx] = np.lexsort((np.where(np.isnan(im), 0, im), np.isnan(im),
                           np.where(np.isnan(re), 0, re), np.isnan(re)))
  return np.moveaxis(out, -1, axis)


def _same_bits(got, want):
  assert got.dtype == want.dtype and got.shape == want.shape
  view = {8: np.uint32, 16: np.uint64}.get(got.dtype.itemsize, got.dtype)
  np.testing.assert_array_equal(np.ascontiguousarray(got).view(view),
                                np.ascontiguousarray(want).view(view))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("shape,axis", CASES)
def test_complex_sort_compiles_in_lexicographic_order(dtype, shape, axis):
  with jax.enable_x64(dtype == np.complex128):
    x = _operand(dtype, shape)
    order = _order(x, axis)
    # sort (keys only), argsort, and a complex key carrying a value.
    (got, idx), (want, want_idx) = c_and_numpy_tier(
        lambda v: (lax.sort(v, dimension=axis), jnp.argsort(v, axis=axis, stable=True)), x)
    _same_bits(got, want)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(idx, order)
    _same_bits(got, np.take_along_axis(x, order, axis))
    values = RNG.randint(0, 1000, shape).astype(np.int32)
    (k, v), (wk, wv) = c_and_numpy_tier(
        lambda a, b: lax.sort((a, b), dimension=axis, num_keys=1), x, values)
    _same_bits(k, wk)
    np.testing.assert_array_equal(v, wv)
    np.testing.assert_array_equal(v, np.take_along_axis(values, order, axis))


def test_complex_key_after_a_real_key():
  # num_keys=2: an integer key first, then the complex one.
  x = _operand(np.complex64, (3, 500))
  k = RNG.randint(0, 4, (3, 500)).astype(np.int32)
  (gk, gx), (wk, wx) = c_and_numpy_tier(lambda a, b: lax.sort((a, b), dimension=1, num_keys=2), k, x)
  np.testing.assert_array_equal(gk, wk)
  _same_bits(gx, wx)
  for r in range(3):
    order = np.lexsort((_order(x[r], 0).argsort(), k[r]))
    np.testing.assert_array_equal(gk[r], k[r][order])
    _same_bits(gx[r], x[r][order])


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.complex64], ids=str)
def test_complex_sort_against_jax(dtype):
  real_jax = pytest.importorskip("jax")
  x = _operand(dtype, (5, 400))
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda v: jnp.argsort(v, axis=1, stable=True))(x))
    got_sorted = np.asarray(jax.jit(lambda v: lax.sort(v, dimension=1))(x))
  want = np.asarray(real_jax.jit(lambda v: real_jax.numpy.argsort(v, axis=1, stable=True))(x))
  want_sorted = np.asarray(real_jax.jit(lambda v: real_jax.lax.sort(v, dimension=1))(x))
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(got_sorted, want_sorted)   # NaNs equal in any sign
