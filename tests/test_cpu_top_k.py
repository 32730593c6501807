"""``top_k`` compiled to C (backends/cpu/topk.py): indices and raw value bits
against a NumPy reference (a stable argsort of the raw total order) and JAX,
every real dtype (16-bit floats included), NaNs and signed zeros, ties (the
lower index first), every axis, k from 0 to the row length, long rows split
into chunks, bits that do not depend on the thread count, and no host step.
"""
import numpy as np
import pytest

import purejax as jax
from purejax import lax
from purejax._src import dtypes
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

from conftest import oracle

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
RNG = np.random.RandomState(0)
DTYPES = [np.float32, np.float64, np.float16, dtypes.bfloat16, np.int8, np.uint8, np.int16,
          np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]


def _compiled_top_k(x, k, axis=-1, threads=None):
  f = jax.jit(lambda a: lax.top_k(a, k, axis=axis))
  with config.override("purejax_backend", "cpu"), \
       config.override("jax_enable_x64", True), \
       config.override("purejax_compile_sync", True), \
       config.override("purejax_num_threads", config.purejax_num_threads
                       if threads is None else threads):
    values, indices = f(x)
    first_line = f.lower(x).compile().as_text().splitlines()[0]
  assert "top_k" not in first_line, first_line
  return np.asarray(values), np.asarray(indices)


def _ascending_key(x):
  """Unsigned keys increasing in top_k's order: raw bits, sign-magnitude for floats."""
  u = np.ascontiguousarray(x).view(np.dtype(f"u{x.dtype.itemsize}"))
  top = u.dtype.type(1) << u.dtype.type(8 * x.dtype.itemsize - 1)
  if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
    return np.where(u & top, ~u, u | top)
  if x.dtype.kind == "i":
    return u ^ top
  return u


def _reference(x, k, axis):
  keys = np.moveaxis(_ascending_key(x), axis, -1)
  # Largest first; a stable sort of the reversed keys keeps ties in index order.
  order = np.argsort(~keys, axis=-1, kind="stable")[..., :k]
  values = np.take_along_axis(np.moveaxis(x, axis, -1), order, axis=-1)
  return np.moveaxis(values, -1, axis), np.moveaxis(order, -1, axis).astype(np.int32)


def _bits(x):
  x = np.asarray(x)
  return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _values(dtype, shape):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return RNG.rand(*shape) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    return RNG.randint(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)
  return (RNG.randn(*shape) * 10).round().astype(dtype)   # rounded: many ties


def _check(x, k, axis=-1, threads=None):
  values, indices = _compiled_top_k(x, k, axis, threads)
  want_values, want_indices = _reference(x, k, axis % x.ndim)
  np.testing.assert_array_equal(indices, want_indices)
  np.testing.assert_array_equal(_bits(values), _bits(want_values))
  return values, indices


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype_and_k(dtype):
  x = _values(dtype, (5, 64))
  for k in (0, 1, 5, 64):
    _check(x, k)


def test_float_specials_order_raw_bits():
  specials = np.array([0.0, -0.0, np.nan, -np.nan, 1, -np.inf, np.inf, -1, 2, -0.0, 0.0, 1],
                      np.float32)
  for dtype in (np.float32, np.float64, np.float16, dtypes.bfloat16):
    x = specials.astype(dtype)
    _check(x, x.size)
    _check(np.stack([x, x[::-1]]), 5)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_every_axis(axis):
  x = _values(np.float32, (40, 6, 30))
  _check(x, 4, axis)


@pytest.mark.parametrize("k", [1, 10, 500])
def test_long_rows_split_into_chunks(k):
  # Few long rows are searched in parallel chunks, then merged.
  x = _values(np.float32, (2, 1 << 16))
  _check(x, k)
  _check(_values(np.int32, (1 << 17,)), k)


def test_bits_do_not_depend_on_threads():
  x = _values(np.float32, (3, 1 << 16))
  outs = [_compiled_top_k(x, 20, threads=t) for t in (1, 2, 4)]
  for values, indices in outs[1:]:
    np.testing.assert_array_equal(_bits(values), _bits(outs[0][0]))
    np.testing.assert_array_equal(indices, outs[0][1])


def test_gradient_through_compiled_top_k():
  x = RNG.randn(4, 50)
  g = jax.jit(jax.grad(lambda a: (lax.top_k(a, 3)[0] ** 2).sum()))(x)
  want = np.zeros_like(x)
  for r in range(4):
    top = np.argsort(-x[r], kind="stable")[:3]
    want[r, top] = 2 * x[r, top]
  np.testing.assert_allclose(np.asarray(g), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint32])
def test_against_jax(dtype):
  jax_ = oracle()
  x = _values(dtype, (8, 100))
  x[0, :12] = np.array([0.0, -0.0, np.nan, -np.nan, 1, -np.inf, np.inf, -1, 2, -0.0, 0.0, 1],
                       np.float32).astype(dtype) if np.dtype(dtype).kind == "f" else x[0, :12]
  for axis in (0, 1):
    values, indices = _compiled_top_k(x, 6, axis)
    want_values, want_indices = jax_.lax.top_k(x, 6, axis=axis)
    np.testing.assert_array_equal(indices, np.asarray(want_indices))
    np.testing.assert_array_equal(_bits(values), _bits(want_values))
