"""Wrong answers found by differential fuzzing against JAX (issue 20, points
11-19): each case runs eagerly, jitted to C and jitted on the NumPy backend,
and is compared with the installed JAX (skipped without it)."""
import contextlib

import ml_dtypes
import numpy as np
import pytest

import purejax
from purejax._src.config import config
from conftest import oracle

bf16 = ml_dtypes.bfloat16
INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]
INTS64 = [np.int64, np.uint64]
FLOATS = [np.float16, bf16, np.float32]

MODES = ("eager", "jit_c", "jit_numpy")


def _purejax_run(make, mode, args):
  fn = make(purejax)
  if mode == "eager":
    return fn(*args)
  with contextlib.ExitStack() as stack:
    if mode == "jit_c":
      stack.enter_context(config.override("purejax_compile_sync", True))
    else:
      stack.enter_context(config.override("purejax_backend", "numpy"))
    return purejax.jit(fn)(*args)


def _jax_run(make, args, x64):
  jax = oracle()
  before = jax.config.jax_enable_x64
  jax.config.update("jax_enable_x64", x64)
  try:
    return jax.tree_util.tree_leaves(make(jax)(*args))
  finally:
    jax.config.update("jax_enable_x64", before)


def _assert_same(ours, theirs, rtol):
  ours = purejax.tree_util.tree_leaves(ours)
  assert len(ours) == len(theirs)
  for a, b in zip(ours, theirs):
    a, b = np.asarray(a), np.asarray(b)
    assert (a.shape, a.dtype) == (b.shape, b.dtype)
    if a.dtype.kind in "iub":
      np.testing.assert_array_equal(a, b)
      continue
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if rtol:
      np.testing.assert_allclose(a64, b64, rtol=rtol, atol=0)
    else:
      np.testing.assert_array_equal(a64, b64)
    numbers = ~np.isnan(b64)   # zeros (and everything else) with JAX's sign
    np.testing.assert_array_equal(np.signbit(a64[numbers]), np.signbit(b64[numbers]))


def _check(make, args, x64=False, rtol=0):
  theirs = _jax_run(make, args, x64)
  with config.override("jax_enable_x64", x64):
    for mode in MODES:
      ours = _purejax_run(make, mode, args)
      try:
        _assert_same(ours, theirs, rtol)
      except AssertionError as err:
        raise AssertionError(f"{mode}: {err}") from None


# -- 11: integer power uses JAX's 6 exponent bits ------------------------------------

@pytest.mark.parametrize("dtype", INTS + INTS64, ids=lambda d: np.dtype(d).name)
def test_integer_power_of_integer_arrays(dtype):
  info = np.iinfo(dtype)
  base = np.array([3, 3, 1, 2, 0, 3, 5, 7, info.max, 3], dtype)
  exponent = np.array([16, 33, 100, 7, 5, 0, 63, 64, 2, info.max], dtype)
  if info.min < 0:
    base = np.concatenate([base, np.array([-1, -1, -2, 2, 0], dtype)])
    exponent = np.concatenate([exponent, np.array([33, info.min, 3, -1, -3], dtype)])
  _check(lambda m: m.numpy.power, (base, exponent), x64=np.dtype(dtype).itemsize == 8)


# -- 12: arithmetic right shift copies the sign bit of unsigned types -----------------

@pytest.mark.parametrize("dtype", INTS + INTS64, ids=lambda d: np.dtype(d).name)
def test_shift_right_arithmetic(dtype):
  bits = np.iinfo(dtype).bits
  top = 1 << (bits - 1)
  xs = [0xE6C3E6C3E6C3E6C3 & ((1 << bits) - 1), 0x66C3 & (top - 1), (1 << bits) - 1, top, 1, 0]
  amounts = [0, 1, bits - 1, bits, bits + 3, (1 << bits) - 1]   # the last: -1 if signed
  x = np.array([v for v in xs for _ in amounts], dtype=np.uint64).astype(dtype)
  y = np.array([a for _ in xs for a in amounts], dtype=np.uint64).astype(dtype)
  _check(lambda m: m.lax.shift_right_arithmetic, (x, y), x64=bits == 64)


def test_shift_right_arithmetic_uint16_example():
  _check(lambda m: m.lax.shift_right_arithmetic,
         (np.array([0xE6C3], np.uint16), np.array([1], np.uint16)))
  got = purejax.lax.shift_right_arithmetic(np.array([0xE6C3], np.uint16), np.array([1], np.uint16))
  assert int(got[0]) == 62305


# -- 13: fmod(int, 0) is 0 -------------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS + INTS64 + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_fmod_of_integers_by_zero(dtype):
  if dtype == np.bool_:
    x, y = np.array([True, False, True]), np.array([False, False, True])
  else:
    x = np.array([5, 0, 7, 100, 1, 9], dtype)
    y = np.array([0, 0, 3, 0, 1, 4], dtype)
    if np.iinfo(dtype).min < 0:
      x = np.concatenate([x, np.array([-5, -7, np.iinfo(dtype).min], dtype)])
      y = np.concatenate([y, np.array([0, 3, -1], dtype)])
  _check(lambda m: m.numpy.fmod, (x, y), x64=np.dtype(dtype).itemsize == 8)


def test_fmod_mixed_bool_and_python_zero():
  _check(lambda m: lambda x: m.numpy.fmod(x, 0), (np.array([True, False]),))


# -- 14: 64-bit and unsigned indices -------------------------------------------------

def test_take_clip_with_uint64_indices_past_int64():
  idx = np.array([2**64 - 1, 2**63, 2**63 - 1, 1, 5, 2**32 - 1, 2**32 + 1], np.uint64)
  x = np.arange(5.0)
  _check(lambda m: lambda x, i: m.numpy.take(x, i, mode="clip"), (x, idx), x64=True)
  _check(lambda m: lambda x, i: m.numpy.asarray(x).at[i].add(10.0, mode="clip"), (x, idx), x64=True)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", INTS + INTS64, ids=lambda d: np.dtype(d).name)
def test_take_along_axis_converts_indices_to_int32(dtype, x64):
  if np.dtype(dtype).itemsize == 8 and not x64:
    pytest.skip("64-bit indices need x64")
  info = np.iinfo(dtype)
  idx = np.array([info.max, 1, 5, info.max // 2 + 1, info.max // 2, 0], np.uint64)
  if np.dtype(dtype).itemsize == 8:
    idx = np.concatenate([idx, np.array([2**32 - 1, 2**32 + 1, 2**40], np.uint64)])
  idx = idx.astype(dtype)
  x = np.arange(5.0, dtype=np.float32)
  for mode in (None, "clip", "fill"):
    _check(lambda m: lambda x, i: m.numpy.take_along_axis(x, i, axis=0, mode=mode),
           (x, idx), x64=x64)


# -- 16: erf and erfc of huge arguments ----------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_of_huge_arguments(name, dtype):
  big = 1e300 if dtype == np.float64 else 3e38
  x = np.array([1e155, -1e155, big, -big, 1e20, -1e20, 27.5, -27.5, 3.0, 0.5, np.inf,
                -np.inf, np.nan], np.float64).astype(dtype)
  _check(lambda m: getattr(m.scipy.special, name), (x,), x64=dtype == np.float64, rtol=1e-6)


# -- 17: signed zeros of floor_divide and round; modf of infinities -------------------

@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + [np.float64], ids=lambda d: np.dtype(d).name)
def test_floor_divide_signed_zero(dtype, x64):
  if dtype == np.float64 and not x64:
    pytest.skip("float64 needs x64")
  x = np.array([0.0, -0.0, 0.0, 3.0, -3.0, 1.0, -1.0, 7.5], dtype)
  y = np.array([-5.0, 5.0, 5.0, -5.0, 5.0, -np.inf, np.inf, -2.0], dtype)
  _check(lambda m: m.numpy.floor_divide, (x, y), x64=x64)
  _check(lambda m: lambda a: m.numpy.asarray(a) // -5.0, (np.array([0.0], dtype),), x64=x64)
  _check(lambda m: lambda: m.numpy.float32(0.0) // -5.0, (), x64=x64)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + [np.float64], ids=lambda d: np.dtype(d).name)
def test_modf_of_infinities_and_signed_zeros(dtype, x64):
  if dtype == np.float64 and not x64:
    pytest.skip("float64 needs x64")
  x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, -2.0, 2.5, -2.5, 1e-3, -1e-3],
               dtype)
  _check(lambda m: m.numpy.modf, (x,), x64=x64)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", FLOATS + [np.float64], ids=lambda d: np.dtype(d).name)
def test_round_keeps_the_sign_of_zero(dtype, x64):
  if dtype == np.float64 and not x64:
    pytest.skip("float64 needs x64")
  x = np.array([-0.3, 0.3, -0.0, 0.0, -0.5, 0.5, -0.7, -2.5, 2.5, -1e-30, np.nan], dtype)
  _check(lambda m: m.numpy.round, (x,), x64=x64)
  for method in (0, 1):
    _check(lambda m: lambda a: m.lax.round(a, method), (x,), x64=x64)
  _check(lambda m: lambda: m.numpy.round(-0.3), ())


# -- 19: ldexp broadcasting; scatter into an operand with no elements ---------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=lambda d: np.dtype(d).name)
def test_ldexp_broadcasts_different_ranks(dtype):
  _check(lambda m: m.numpy.ldexp, (np.ones((2, 3), dtype), np.array([1, 2, -30], np.int32)))
  _check(lambda m: m.numpy.ldexp, (np.array([1.5, 3.0], dtype), np.array([[1], [-3]], np.int8)))
  _check(lambda m: m.numpy.ldexp, (np.array([[1.5], [3.0]], dtype), np.int32(4)))


@pytest.mark.parametrize("shape", [(0, 3), (0,), (2, 0), (0, 0)], ids=str)
@pytest.mark.parametrize("op", ["add", "set", "mul", "min", "max"])
@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter_into_an_empty_operand(shape, op, mode):
  for dtype in (np.float32, np.int32):
    _check(lambda m: lambda x, i: getattr(m.numpy.asarray(x).at[i], op)(2, mode=mode),
           (np.zeros(shape, dtype), np.array([0, 1], np.int32)))


# -- 18: subnormals are kept (README "Differences from JAX") ---------------------------

@pytest.mark.parametrize("mode", MODES)
def test_subnormals_are_kept_in_every_backend(mode, x64):
  """XLA:CPU flushes subnormals (1e-45 * inf is NaN in JAX); purejax keeps
  IEEE gradual underflow, as documented, compared with NumPy here."""
  for dtype, tiny in ((np.float32, 1e-45), (np.float64, 5e-324)):
    a = np.array([tiny, np.finfo(dtype).tiny, tiny], dtype)
    b = np.array([np.inf, 0.01, 1.0], dtype)
    want = a * b
    got = np.asarray(_purejax_run(lambda m: lambda a, b: a * b, mode, (a, b)))
    np.testing.assert_array_equal(got, want)
    assert got[0] == np.inf and 0 < got[1] < np.finfo(dtype).tiny and got[2] == tiny
