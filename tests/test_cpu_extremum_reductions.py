"""Max and min reductions of the C backend on arrays large enough for its
threaded paths (whole-array reductions on all cores, column reductions
read as row chunks): NaN propagates, -0.0 orders below +0.0, the bits do
not depend on the thread count, and argmax keeps NumPy's first index."""
import numpy as np
import pytest

import purejax
from purejax import lax
from purejax._src.backends.cpu import toolchain

if not toolchain.compiler_available():
  pytest.skip("no C compiler", allow_module_level=True)

from purejax._src.backends.cpu import executable  # noqa: E402
from tests.tier_pair import trace  # noqa: E402

SHAPE = (700, 96)   # 67200 elements: past the threaded-loop threshold


def _edge_values(dtype, seed):
  """Random values with NaNs, infinities and zeros of both signs, some
  columns and rows holding only zeros (of mixed signs) or only -0.0."""
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(SHAPE) * 100
  kinds = rng.integers(0, 12, SHAPE)
  x = np.where(kinds == 0, -0.0, np.where(kinds == 1, 0.0, x))
  x = np.where(kinds == 2, np.inf, np.where(kinds == 3, -np.inf, x))
  x[:, 5] = np.where(kinds[:, 5] % 2 == 0, 0.0, -0.0)
  x[:, 6] = -0.0
  x[7, :] = -0.0
  x[11, :] = np.where(np.arange(SHAPE[1]) % 3 == 0, 0.0, -0.0)
  x[rng.integers(0, SHAPE[0], 40), rng.integers(0, SHAPE[1], 40)] = np.nan
  x[:, 9] = np.nan
  x[13, :] = np.nan
  return x.astype(dtype)


def _reference(x, axis, is_max):
  """lax's max/min: NaN wins, and the zero of the favoured sign wins."""
  w = x.astype(np.float64)
  out = np.max(w, axis) if is_max else np.min(w, axis)
  favoured = ~np.signbit(w) if is_max else np.signbit(w)
  has = np.any((w == 0) & favoured, axis)
  zero = np.where(has, 0.0, -0.0) if is_max else np.where(has, -0.0, 0.0)
  out = np.where(out == 0, zero, out)
  return np.asarray(out).astype(x.dtype)


def _same_bits(got, want):
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  nan = np.isnan(want.astype(np.float64))
  np.testing.assert_array_equal(np.isnan(got.astype(np.float64)), nan)
  np.testing.assert_array_equal(np.signbit(got[~nan]), np.signbit(want[~nan]))
  np.testing.assert_array_equal(got[~nan], want[~nan])


def _compiled(f, x, threads):
  jaxpr, consts = trace(f, x)
  compiled = executable.compile_jaxpr(jaxpr, threads)
  assert hasattr(compiled, "source"), "nothing was compiled"
  return compiled, compiled(*consts, x)


def _reductions(x):
  return [lax.reduce_max(x, (0,)), lax.reduce_min(x, (0,)), lax.reduce_max(x, (1,)),
          lax.reduce_min(x, (1,)), lax.reduce_max(x, (0, 1)), lax.reduce_min(x, (0, 1))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_float_max_min_edge_values(dtype):
  dtype = np.dtype(purejax.numpy.dtype(dtype))
  x = _edge_values(dtype, seed=1)
  with purejax.enable_x64(True):
    compiled, got = _compiled(_reductions, x, 2)
  assert "#pragma omp critical" in compiled.source   # the row-chunk column path
  assert "parallel for simd reduction(max:" in compiled.source   # the whole-array path
  wants = [_reference(x, a, m) for a in (0, 1, None) for m in (True, False)]
  for g, w in zip(got, wants):
    _same_bits(g, w)


def test_only_negative_zeros_and_nan_rows():
  x = np.full(SHAPE, -0.0, np.float32)
  x[3, 4] = np.nan
  _, (mx0, mn0, mx1, mn1, mx, mn) = _compiled(_reductions, x, 2)
  assert np.isnan(mx0[4]) and np.isnan(mn1[3]) and np.isnan(mx) and np.isnan(mn)
  assert np.all(np.signbit(np.delete(mx0, 4))) and np.all(np.signbit(np.delete(mn1, 3)))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64"])
def test_integer_max_min_and_sum(dtype):
  rng = np.random.default_rng(2)
  info = np.iinfo(dtype)
  x = rng.integers(info.min, info.max, SHAPE, dtype=dtype, endpoint=True)

  def f(x):
    return _reductions(x) + [lax.reduce_sum(x, (0,)), lax.reduce_sum(x, (0, 1))]

  with purejax.enable_x64(True):
    _, got = _compiled(f, x, 2)
  wants = [r(x, axis=a) for a in (0, 1, None) for r in (np.max, np.min)]
  wants += [np.sum(x, axis=0, dtype=dtype), np.sum(x, dtype=dtype)]
  for g, w in zip(got, wants):
    np.testing.assert_array_equal(g, w)


def test_bits_do_not_depend_on_the_thread_count():
  x = _edge_values(np.float32, seed=3)
  results = [_compiled(_reductions, x, t)[1] for t in (1, 2, 4, 7)]
  for other in results[1:]:
    for g, w in zip(other, results[0]):
      _same_bits(g, w)


def test_argmax_takes_the_first_zero_and_first_nan():
  x = np.zeros(SHAPE, np.float32)
  x[::2] = -0.0
  x[50:, 1] = np.nan
  x[30:, 2] = 0.0

  def f(x):
    return [lax.argmax(x, 0, np.int32), lax.argmin(x, 0, np.int32), lax.argmax(x, 1, np.int32)]

  _, (amax, amin, amax1) = _compiled(f, x, 2)
  np.testing.assert_array_equal(amax, np.argmax(x, 0))
  np.testing.assert_array_equal(amin, np.argmin(x, 0))
  np.testing.assert_array_equal(amax1, np.argmax(x, 1))
  assert amax[1] == 50 and amax[0] == 0


def test_against_jax():
  # Without NaNs: XLA's vectorized CPU reductions drop them on large arrays
  # (jnp.max of a 700x96 array with a NaN row is not NaN), against lax's
  # definition, which purejax follows (the tests above).
  jax = pytest.importorskip("jax")
  x = _edge_values(np.float32, seed=4)
  x[np.isnan(x)] = 1.5
  want = [np.asarray(r) for r in jax.jit(
      lambda x: [x.max(0), x.min(0), x.max(1), x.min(1), x.max(), x.min()])(x)]
  got = purejax.jit(lambda x: [x.max(0), x.min(0), x.max(1), x.min(1), x.max(), x.min()])(x)
  for g, w in zip(got, want):
    _same_bits(g, w)
