"""Cumulative reductions of complex and 16-bit float operands compile to C
(no NumPy host step): the same bits as the NumPy tier, close to a float64
(complex128) reference and to real JAX.

Half floats scan as float (sums, products, log-sum-exps accumulated in
double in scan_order's block order, rounded once through float32); complex
sums and products accumulate in complex128; complex cummax/cummin follow
XLA's elementwise rule sequentially.  JAX's scans are tree ordered, so its
bits agree only where the order cannot matter (extrema without NaN).
"""
import numpy as np
import pytest

import ml_dtypes
import purejax as jax
from purejax import lax
from purejax._src.backends.cpu import toolchain

from tests.tier_pair import c_and_numpy_tier

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
SCANS = ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")
# (shape, axis): lanes along an inner axis, a last axis, several blocks of
# scan_order (one pass and recursive), a short row.
CASES = [((5, 300), 1), ((700, 3), 0), ((2, 70000), 1), ((3,), 0)]


def bits(x):
  x = np.ascontiguousarray(x)
  return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[x.dtype.itemsize])


def same_bits_or_nan(got, want):
  assert got.dtype == want.dtype and got.shape == want.shape
  if got.dtype.kind == "c":   # NaN parts may differ in sign
    np.testing.assert_array_equal(got, want)
  else:
    np.testing.assert_array_equal(bits(got), bits(want))


def operand(dtype, shape, scale=1.0):
  x = RNG.standard_normal(shape) * scale
  if np.dtype(dtype).kind == "c":
    x = x + 1j * RNG.standard_normal(shape) * scale
  return x.astype(dtype)


def reference(name, x, axis):
  """The scan in float64/complex128, sequentially."""
  x = x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)
  if name == "cumlogsumexp":
    return np.logaddexp.accumulate(x, axis=axis)
  if name in ("cummax", "cummin") and x.dtype.kind == "c":
    return None
  return {"cumsum": np.cumsum, "cumprod": np.cumprod, "cummax": np.maximum.accumulate,
          "cummin": np.minimum.accumulate}[name](x, axis=axis)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, F16, BF16], ids=str)
@pytest.mark.parametrize("shape,axis", CASES)
def test_scans_compile_with_the_numpy_tiers_bits(dtype, shape, axis):
  with jax.enable_x64(dtype == np.complex128):
    _check_scans(dtype, shape, axis)


def _check_scans(dtype, shape, axis):
  # Products of values near 1 stay finite over 70000 steps.
  for name in SCANS:
    if name == "cumlogsumexp" and np.dtype(dtype).kind == "c":
      continue
    x = operand(dtype, shape, 0.01 if name == "cumprod" else 1.0)
    if name == "cumprod":
      x = (x + 1).astype(dtype)
    for reverse in (False, True):
      f = lambda v: getattr(lax, name)(v * 1, axis=axis, reverse=reverse)
      got, want = c_and_numpy_tier(f, x)
      if name == "cumprod" and np.dtype(dtype) == np.complex128:
        # gcc's vectorized complex product at a block's first element may
        # round one part differently (one ulp of complex128).
        np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)
      else:
        same_bits_or_nan(got, want)
      ref = reference(name, np.flip(x, axis) if reverse else x, axis)
      if ref is not None:
        ref = np.flip(ref, axis) if reverse else ref
        scale = np.abs(ref).max(axis=axis, keepdims=True)
        # One rounding of each result (double accumulation in block order);
        # complex128 accumulates in its own precision.
        eps = {2: 2.0 ** -7, 8: 2.0 ** -23, 16: 1e-13}[np.dtype(dtype).itemsize]
        np.testing.assert_allclose(got, ref, rtol=eps, atol=4 * eps * scale.min())


@pytest.mark.parametrize("dtype", [F16, BF16], ids=str)
def test_half_specials_and_extrema_keep_bits(dtype):
  x = np.array([1.0, np.nan, -0.0, 0.0, -np.inf, 3.0, np.inf, -2.0], np.float32).astype(dtype)
  for name in SCANS:
    got, want = c_and_numpy_tier(lambda v: getattr(lax, name)(v, axis=0), x)
    same_bits_or_nan(got, want)


def test_complex_extrema_xla_rule():
  # The later element unless the running value comes strictly first (ties
  # and NaNs give the later one), computed by hand.
  nan = np.nan
  x = np.array([1 + 2j, 1 + 1j, complex(nan, 0), 2 + 0j, complex(0, nan), 3 + 0j, 1 + 5j],
               np.complex64)
  got, want = c_and_numpy_tier(lambda v: lax.cummax(v, axis=0), x)
  same_bits_or_nan(got, want)
  expected = [1 + 2j, 1 + 2j, complex(nan, 0), 2 + 0j, 2 + 0j, 3 + 0j, 3 + 0j]
  np.testing.assert_array_equal(got, np.array(expected, np.complex64))
  got, _ = c_and_numpy_tier(lambda v: lax.cummin(v, axis=0), x)
  expected = [1 + 2j, 1 + 1j, complex(nan, 0), 2 + 0j, complex(0, nan), complex(0, nan), complex(0, nan)]
  np.testing.assert_array_equal(got, np.array(expected, np.complex64))


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.complex64, F16, BF16], ids=str)
def test_against_jax(dtype):
  real_jax = pytest.importorskip("jax")
  x = operand(dtype, (4, 200))
  for name in SCANS:
    if name == "cumlogsumexp" and np.dtype(dtype).kind == "c":
      continue
    v = (operand(dtype, (4, 200), 0.01) + 1).astype(dtype) if name == "cumprod" else x
    got, _ = c_and_numpy_tier(lambda a: getattr(lax, name)(a, axis=1), v)
    want = np.asarray(real_jax.jit(lambda a: getattr(real_jax.lax, name)(a, axis=1))(v))
    if name in ("cummax", "cummin"):   # no NaN: exact in any order
      same_bits_or_nan(got, want)
      continue
    ref = reference(name, v, 1)
    scale = np.abs(ref).max(axis=1, keepdims=True)
    # JAX's tree order rounds each half step: a few half ulps of the scale.
    eps = 2.0 ** -6 if np.dtype(dtype).itemsize == 2 else 1e-5
    np.testing.assert_allclose(got.astype(ref.dtype), want.astype(ref.dtype),
                               rtol=eps, atol=4 * eps * scale.min())
