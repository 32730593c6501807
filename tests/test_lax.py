"""purejax.lax: every primitive against NumPy (a table of op records), XLA's
semantics where they differ from NumPy's, JAX's error messages, and an
oracle section (test_lax_oracle.py) comparing values, dtypes, weak types and
jaxpr text with the installed JAX."""
import collections
import contextlib

import ml_dtypes
import numpy as np
import pytest

from purejax import lax
from purejax._src.api import jit, make_jaxpr
from purejax._src.array import Array
from purejax._src.config import config

bf16 = np.dtype(ml_dtypes.bfloat16)


# ---------------------------------------------------------------------------
# Inputs

def _rand(rng, shape, dtype, domain):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.rand(*shape) > 0.5
  if np.issubdtype(dtype, np.integer):
    lo, hi = {"int": (-9, 10), "nonzero": (1, 10), "shift": (0, 40),
              "small": (0, 5)}.get(domain, (-9, 10))
    if np.issubdtype(dtype, np.unsignedinteger):
      lo = max(lo, 0)
    values = rng.randint(lo, hi, size=shape)
    if domain == "nonzero" and not np.issubdtype(dtype, np.unsignedinteger):
      values = values * rng.choice([-1, 1], size=shape)
    return values.astype(dtype)
  lo, hi = {"pos": (0.1, 5.0), "unit": (-0.9, 0.9), "ge1": (1.1, 5.0),
            "nonzero": (0.5, 4.0), "small": (-2.0, 2.0)}.get(domain, (-4.0, 4.0))
  values = rng.uniform(lo, hi, size=shape)
  if domain == "nonzero":
    values = values * rng.choice([-1, 1], size=shape)
  if np.issubdtype(dtype, np.complexfloating):
    values = values + 1j * rng.uniform(lo, hi, size=shape)
  return values.astype(dtype)


@contextlib.contextmanager
def _x64_if_needed(*dtypes):
  wide = any(np.dtype(d).itemsize == 8 or np.dtype(d) == np.complex128 for d in dtypes)
  with config.override("jax_enable_x64", wide or config.jax_enable_x64):
    yield


# ---------------------------------------------------------------------------
# The op table

Rec = collections.namedtuple("Rec", "name fn ref nargs dtypes domain tol")

F = [np.float32, np.float64]
FC = F + [np.complex64]
FH = F + [np.float16]
I = [np.int32, np.int8, np.uint8, np.int64]
SI = [np.int32, np.int8, np.int64]
N = F + [np.int32, np.uint8]
B = [np.bool_]


def _f64(f):
  """A NumPy reference computed in double precision."""
  def ref(*args):
    wide = [a.astype(np.complex128 if np.iscomplexobj(a) else np.float64) for a in args]
    return f(*wide)
  return ref


def _trunc_div(x, y):
  q = np.trunc(x.astype(np.float64) / y.astype(np.float64))
  return q.astype(x.dtype)


def _round_away(x):
  return np.sign(x) * np.floor(np.abs(x.astype(np.float64)) + 0.5)


def _logistic(x):
  return 1 / (1 + np.exp(-x))


def _shift_right_logical(x, y):
  bits = x.dtype.itemsize * 8
  unsigned = x.astype(f"uint{bits}")
  out = np.where(y < bits, unsigned >> np.minimum(y, bits - 1).astype(unsigned.dtype), 0)
  return out.astype(unsigned.dtype).astype(x.dtype)


def _shift_left(x, y):
  bits = x.dtype.itemsize * 8
  return np.where(y < bits, x << np.minimum(y, bits - 1).astype(x.dtype), 0).astype(x.dtype)


def _shift_right_arithmetic(x, y):
  bits = x.dtype.itemsize * 8
  return (x >> np.minimum(y, bits - 1).astype(x.dtype)).astype(x.dtype)


OPS = [
    Rec("neg", lax.neg, np.negative, 1, N + SI, "real", 0),
    Rec("sign", lax.sign, np.sign, 1, N, "real", 0),
    Rec("floor", lax.floor, np.floor, 1, FH, "real", 0),
    Rec("ceil", lax.ceil, np.ceil, 1, FH, "real", 0),
    Rec("round", lax.round, _round_away, 1, F, "real", 0),
    Rec("is_finite", lax.is_finite, np.isfinite, 1, F, "real", 0),
    Rec("exp", lax.exp, _f64(np.exp), 1, FC, "real", 1e-6),
    Rec("exp2", lax.exp2, _f64(np.exp2), 1, F, "real", 1e-6),
    Rec("log", lax.log, _f64(np.log), 1, FC, "pos", 1e-6),
    Rec("log1p", lax.log1p, _f64(np.log1p), 1, F, "pos", 1e-6),
    Rec("expm1", lax.expm1, _f64(np.expm1), 1, F, "real", 1e-6),
    Rec("tanh", lax.tanh, _f64(np.tanh), 1, FC, "real", 1e-6),
    Rec("logistic", lax.logistic, _f64(_logistic), 1, F, "real", 1e-6),
    Rec("sin", lax.sin, _f64(np.sin), 1, FC, "real", 1e-6),
    Rec("cos", lax.cos, _f64(np.cos), 1, FC, "real", 1e-6),
    Rec("tan", lax.tan, _f64(np.tan), 1, F, "unit", 1e-6),
    Rec("asin", lax.asin, _f64(np.arcsin), 1, F, "unit", 1e-6),
    Rec("acos", lax.acos, _f64(np.arccos), 1, F, "unit", 1e-6),
    Rec("atan", lax.atan, _f64(np.arctan), 1, F, "real", 1e-6),
    Rec("sinh", lax.sinh, _f64(np.sinh), 1, F, "real", 1e-6),
    Rec("cosh", lax.cosh, _f64(np.cosh), 1, F, "real", 1e-6),
    Rec("asinh", lax.asinh, _f64(np.arcsinh), 1, F, "real", 1e-6),
    Rec("acosh", lax.acosh, _f64(np.arccosh), 1, F, "ge1", 1e-6),
    Rec("atanh", lax.atanh, _f64(np.arctanh), 1, F, "unit", 1e-6),
    Rec("sqrt", lax.sqrt, _f64(np.sqrt), 1, FC, "pos", 1e-6),
    Rec("rsqrt", lax.rsqrt, _f64(lambda x: 1 / np.sqrt(x)), 1, F, "pos", 1e-6),
    Rec("cbrt", lax.cbrt, _f64(np.cbrt), 1, F, "real", 1e-6),
    Rec("abs", lax.abs, np.abs, 1, F + [np.int32, np.int8, np.complex64], "real", 1e-6),
    Rec("square", lax.square, np.square, 1, N, "small", 1e-6),
    Rec("bitwise_not", lax.bitwise_not, np.invert, 1, I + B, "int", 0),
    Rec("real", lax.real, np.real, 1, [np.complex64], "real", 0),
    Rec("imag", lax.imag, np.imag, 1, [np.complex64], "real", 0),
    Rec("conj", lax.conj, np.conj, 1, [np.complex64], "real", 0),
    Rec("add", lax.add, np.add, 2, N + [np.complex64, np.int8], "real", 1e-6),
    Rec("sub", lax.sub, np.subtract, 2, N + [np.complex64], "real", 1e-6),
    Rec("mul", lax.mul, np.multiply, 2, N + [np.complex64], "small", 1e-6),
    Rec("div", lax.div, np.true_divide, 2, F + [np.complex64], "nonzero", 1e-6),
    Rec("div_int", lax.div, _trunc_div, 2, [np.int32, np.int8, np.uint8], "nonzero", 0),
    Rec("rem", lax.rem, np.fmod, 2, F + [np.int32, np.int8], "nonzero", 1e-6),
    Rec("max", lax.max, np.maximum, 2, N + B, "real", 0),
    Rec("min", lax.min, np.minimum, 2, N + B, "real", 0),
    Rec("atan2", lax.atan2, _f64(np.arctan2), 2, F, "nonzero", 1e-6),
    Rec("nextafter", lax.nextafter, np.nextafter, 2, F, "real", 0),
    Rec("pow", lax.pow, _f64(np.power), 2, F, "pos", 2e-6),
    Rec("bitwise_and", lax.bitwise_and, np.bitwise_and, 2, I + B, "int", 0),
    Rec("bitwise_or", lax.bitwise_or, np.bitwise_or, 2, I + B, "int", 0),
    Rec("bitwise_xor", lax.bitwise_xor, np.bitwise_xor, 2, I + B, "int", 0),
    Rec("shift_left", lax.shift_left, _shift_left, 2, [np.int32, np.uint8], "shift", 0),
    Rec("shift_right_arithmetic", lax.shift_right_arithmetic, _shift_right_arithmetic, 2,
        [np.int32, np.int8], "shift", 0),
    Rec("shift_right_logical", lax.shift_right_logical, _shift_right_logical, 2,
        [np.int32, np.int8, np.uint8], "shift", 0),
    Rec("eq", lax.eq, np.equal, 2, N + B, "small", 0),
    Rec("ne", lax.ne, np.not_equal, 2, N + B, "small", 0),
    Rec("lt", lax.lt, np.less, 2, N + B, "small", 0),
    Rec("le", lax.le, np.less_equal, 2, N + B, "small", 0),
    Rec("gt", lax.gt, np.greater, 2, N + B, "small", 0),
    Rec("ge", lax.ge, np.greater_equal, 2, N + B, "small", 0),
]

SHAPES = [(), (5,), (2, 3)]


def _cases():
  for rec in OPS:
    for dtype in rec.dtypes:
      for shape in SHAPES:
        yield pytest.param(rec, np.dtype(dtype), shape,
                           id=f"{rec.name}-{np.dtype(dtype).name}-{shape}")


def _assert_matches(out, expected, dtype, tol):
  assert isinstance(out, Array)
  assert out.dtype == dtype, (out.dtype, dtype)
  assert out.shape == np.shape(expected)
  got = np.asarray(out)
  if tol == 0:
    np.testing.assert_array_equal(got, np.asarray(expected).astype(dtype))
  else:
    np.testing.assert_allclose(got.astype(np.complex128 if np.iscomplexobj(got) else float),
                               np.asarray(expected), rtol=tol * 10, atol=tol)


def _expected_dtype(rec, dtype):
  if rec.name in ("eq", "ne", "lt", "le", "gt", "ge", "is_finite"):
    return np.dtype(bool)
  if rec.name in ("abs", "real", "imag") and np.issubdtype(dtype, np.complexfloating):
    return np.dtype(np.float32)
  return dtype


def assert_same_as_eager(jitted, eager):
  """Bit-equal, except for float results of the C backend (4 ulp)."""
  a, b = np.asarray(jitted), np.asarray(eager)
  if config.purejax_backend == "cpu" and a.dtype.kind in "fc":
    eps = np.finfo(a.dtype).eps
    np.testing.assert_allclose(a, b, rtol=4 * eps, atol=np.finfo(a.dtype).tiny,
                               equal_nan=True)
  else:
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("rec,dtype,shape", list(_cases()))
def test_op_against_numpy(rec, dtype, shape):
  rng = np.random.RandomState(0)
  args = [_rand(rng, shape, dtype, rec.domain) for _ in range(rec.nargs)]
  if rec.domain == "shift":
    args[0] = _rand(rng, shape, dtype, "int")
  with _x64_if_needed(dtype):
    out = rec.fn(*args)
    expected = rec.ref(*args)
    _assert_matches(out, expected, _expected_dtype(rec, dtype), rec.tol)
    # The same op traced and run by jit gives the same values (the C
    # backend's transcendental functions may differ by a few ulp).
    jitted = jit(rec.fn)(*args)
    assert_same_as_eager(jitted, out)


@pytest.mark.parametrize("rec", [r for r in OPS if r.nargs == 2], ids=lambda r: r.name)
def test_binary_op_broadcasts_scalars_and_size_one_axes(rec):
  rng = np.random.RandomState(1)
  dtype = np.dtype(rec.dtypes[0])
  x = _rand(rng, (2, 3), dtype, rec.domain)
  y = _rand(rng, (), dtype, rec.domain)
  z = _rand(rng, (2, 1), dtype, rec.domain)
  if rec.domain == "shift":
    x = _rand(rng, (2, 3), dtype, "int")
  assert rec.fn(x, y).shape == (2, 3)
  assert rec.fn(x, z).shape == (2, 3)
  _assert_matches(rec.fn(x, z), rec.ref(x, z), _expected_dtype(rec, dtype), rec.tol)


# ---------------------------------------------------------------------------
# XLA semantics that differ from NumPy's

def _i32(*v):
  return np.array(v, np.int32)


def test_integer_division_rounds_toward_zero_and_rem_follows_dividend():
  x, y = _i32(7, -7, 7, -7), _i32(2, 2, -2, -2)
  np.testing.assert_array_equal(lax.div(x, y), [3, -3, -3, 3])
  np.testing.assert_array_equal(lax.rem(x, y), [1, -1, 1, -1])
  np.testing.assert_array_equal(lax.rem(np.float32([-5.5]), np.float32([2])), [-1.5])


def test_integer_division_by_zero_and_overflow():
  np.testing.assert_array_equal(lax.div(_i32(-7, 7, 0), _i32(0, 0, 0)), [-1, -1, -1])
  np.testing.assert_array_equal(lax.div(np.uint8([7]), np.uint8([0])), [255])
  np.testing.assert_array_equal(lax.rem(_i32(-7, 7), _i32(0, 0)), [-7, 7])
  assert int(lax.div(np.int32(-2**31), np.int32(-1))) == -2**31
  assert int(lax.rem(np.int32(-2**31), np.int32(-1))) == 0


def test_float_to_int_conversion_saturates_and_nan_is_zero():
  x = np.array([-5., 300., np.inf, -np.inf, np.nan, 254.7], np.float32)
  np.testing.assert_array_equal(lax.convert_element_type(x, np.uint8), [0, 255, 255, 0, 0, 254])
  big = np.array([3e9, -3e9], np.float32)
  np.testing.assert_array_equal(lax.convert_element_type(big, np.int32), [2**31 - 1, -2**31])
  wrap = lax.convert_element_type(_i32(-1, 256), np.uint8)
  np.testing.assert_array_equal(wrap, [255, 0])
  as_bool = lax.convert_element_type(np.array([0., 0.5, np.nan], np.float32), bool)
  np.testing.assert_array_equal(as_bool, [False, True, True])
  np.testing.assert_array_equal(lax.convert_element_type(np.array([1000], bf16), np.int8), [127])


def test_round_half_away_from_zero_or_to_even():
  x = np.array([0.5, 1.5, -0.5, -2.5, 2.4999998], np.float32)
  np.testing.assert_array_equal(lax.round(x), [1., 2., -1., -3., 2.])
  even = lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
  np.testing.assert_array_equal(even, [0., 2., -0., -2., 2.])


def test_shifts_by_bit_width_or_more():
  one, minus8 = np.int32(1), np.int32(-8)
  assert int(lax.shift_left(one, np.int32(32))) == 0
  assert int(lax.shift_left(one, np.int32(-1))) == 0
  assert int(lax.shift_right_arithmetic(minus8, np.int32(40))) == -1
  assert int(lax.shift_right_arithmetic(minus8, np.int32(1))) == -4
  assert int(lax.shift_right_logical(minus8, np.int32(1))) == 2147483644
  assert int(lax.shift_right_logical(minus8, np.int32(32))) == 0
  assert int(lax.shift_right_logical(np.uint8(200), np.uint8(9))) == 0


def test_signs_nan_and_zero():
  s = np.asarray(lax.sign(np.array([np.nan, -0.0, -3.0], np.float32)))
  assert np.isnan(s[0]) and s[1] == 0 and np.signbit(s[1]) and s[2] == -1
  assert np.isnan(float(lax.max(np.float32(np.nan), np.float32(1))))
  assert np.isnan(float(lax.min(np.float32(1), np.float32(np.nan))))
  np.testing.assert_allclose(lax.sign(np.complex64(3 + 4j)), 0.6 + 0.8j, rtol=1e-6)
  assert int(lax.abs(np.int32(-2**31))) == -2**31


def test_integer_pow_and_pow_with_integer_exponent():
  assert int(lax.integer_pow(np.int32(3), 3)) == 27
  assert float(lax.integer_pow(np.float32(2), -2)) == 0.25
  out = lax.pow(np.array([2., 0.], np.float32), _i32(-1, -1))
  np.testing.assert_array_equal(out, [0.5, np.inf])
  assert out.dtype == np.float32


def test_select_n_and_clamp():
  cases = [np.full(2, v, np.float32) for v in (1, 2, 3)]
  np.testing.assert_array_equal(lax.select_n(np.int32(2), *cases), [3, 3])
  np.testing.assert_array_equal(lax.select_n(np.int32(7), *cases), [3, 3])   # clamped
  np.testing.assert_array_equal(lax.select(np.array([True, False]), cases[0], cases[1]),
                                [1, 2])
  np.testing.assert_array_equal(lax.clamp(np.float32(0), np.float32([-1, .5, 2]),
                                          np.float32(1)), [0, .5, 1])


def _xla_extremum(a, b, is_max):
  """XLA's max/min of two floats: NaN propagates, -0.0 orders below +0.0."""
  if a != a or b != b:
    return float("nan")
  if a == b == 0:   # zeros of either sign
    negative = np.signbit(a) and np.signbit(b) if is_max else np.signbit(a) or np.signbit(b)
    return -0.0 if negative else 0.0
  return max(a, b) if is_max else min(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_clamp_orders_signed_zeros_as_max_then_min(dtype):
  """clamp(lo, x, hi) is min(max(x, lo), hi) with lax's max and min
  (seed 123's mixed program 4: clamp(-0.0, -7.5, 0.0) is -0.0, its
  reciprocal -inf), eagerly and in jit on both backends."""
  vals = [-0.0, 0.0, -1.0, 1.0, float("nan")]
  lo, x, hi = (np.array(a.ravel(), dtype) for a in np.meshgrid(vals, vals, vals, indexing="ij"))
  want = np.array([_xla_extremum(_xla_extremum(float(b), float(a), True), float(c), False)
                   for a, b, c in zip(lo, x, hi)], dtype)
  with config.override("jax_enable_x64", dtype == "float64"):
    results = {"eager": lax.clamp(lo, x, hi)}
    for backend in ("numpy", "cpu"):
      with config.override("purejax_backend", backend), \
           config.override("purejax_compile_sync", True):
        results[backend] = jit(lax.clamp)(lo, x, hi)
  for name, got in results.items():
    got = np.asarray(got).astype(np.float64)
    w = want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(w), err_msg=name)
    np.testing.assert_array_equal(got[~np.isnan(w)], w[~np.isnan(w)], err_msg=name)
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(w)]), np.signbit(w[~np.isnan(w)]),
                                  err_msg=name)


def test_weak_types_propagate():
  w = lax.full((2,), 2.0)
  assert w.weak_type and w.dtype == np.float32
  assert lax.add(w, w).weak_type
  assert not lax.add(w, np.ones(2, np.float32)).weak_type
  assert lax.sin(1.0).weak_type
  assert lax.reshape(w, (2, 1)).weak_type and lax.reduce_max(w, (0,)).weak_type
  assert not lax.argmax(w, 0, np.int32).weak_type
  assert not lax.full((2,), 2.0, np.float32).weak_type
  assert not lax.dynamic_update_slice(w, w, (0,)).weak_type
  assert lax.dynamic_slice(w, (0,), (1,)).weak_type
  assert not lax.concatenate([w, np.ones(2, np.float32)], 0).weak_type


# ---------------------------------------------------------------------------
# Structural ops, reductions and dot_general against NumPy

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _np_pad(x, value, config):
  out = x
  for axis, (lo, hi, interior) in enumerate(config):
    if interior:
      n = out.shape[axis]
      idx = np.repeat(np.arange(1, n), interior) if n else np.array([], int)
      out = np.insert(out, idx, value, axis=axis)
    widths = [(0, 0)] * out.ndim
    widths[axis] = (max(lo, 0), max(hi, 0))
    out = np.pad(out, widths, constant_values=value)
    cut = [slice(None)] * out.ndim
    cut[axis] = slice(-min(lo, 0), out.shape[axis] + min(hi, 0))
    out = out[tuple(cut)]
  return out


STRUCTURAL = [
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (5, 2, 3, 4), (1, 2, 3)),
     lambda x: np.broadcast_to(x, (5, 2, 3, 4))),
    ("broadcast_in_dim_size1", lambda x: lax.broadcast_in_dim(x[:1], (2, 3, 4), (0, 1, 2)),
     lambda x: np.broadcast_to(x[:1], (2, 3, 4))),
    ("broadcast_in_dim_permuted", lambda x: lax.broadcast_in_dim(x[0], (4, 3), (1, 0)),
     lambda x: x[0].T),
    ("broadcast", lambda x: lax.broadcast(x, (2,)), lambda x: np.broadcast_to(x, (2, 2, 3, 4))),
    ("broadcast_to_rank", lambda x: lax.broadcast_to_rank(x, 5), lambda x: x[None, None]),
    ("reshape", lambda x: lax.reshape(x, (6, 4)), lambda x: x.reshape(6, 4)),
    ("reshape_dims", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)),
     lambda x: x.transpose(2, 0, 1).reshape(4, 6)),
    ("collapse", lambda x: lax.collapse(x, 1, 3), lambda x: x.reshape(2, 12)),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), lambda x: x.transpose(2, 0, 1)),
    ("squeeze", lambda x: lax.squeeze(x[:, :1], (1,)), lambda x: x[:, 0]),
    ("squeeze_neg", lambda x: lax.squeeze(x[:, :, :1], (-1,)), lambda x: x[:, :, 0]),
    ("expand_dims", lambda x: lax.expand_dims(x, (0, 3)), lambda x: x[None, :, :, None]),
    ("expand_dims_neg", lambda x: lax.expand_dims(x, (-1,)), lambda x: x[..., None]),
    ("rev", lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1]),
    ("slice", lambda x: lax.slice(x, (0, 1, 1), (2, 3, 4)), lambda x: x[0:2, 1:3, 1:4]),
    ("slice_strided", lambda x: lax.slice(x, (0, 0, 1), (2, 3, 4), (1, 2, 2)),
     lambda x: x[:, 0:3:2, 1:4:2]),
    ("slice_in_dim", lambda x: lax.slice_in_dim(x, -3, None, 2, axis=2), lambda x: x[:, :, 1::2]),
    ("index_in_dim", lambda x: lax.index_in_dim(x, -1, axis=1), lambda x: x[:, -1:]),
    ("index_in_dim_squeezed", lambda x: lax.index_in_dim(x, 1, 2, False), lambda x: x[:, :, 1]),
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 0, 2), (1, 2, 2)),
     lambda x: x[1:2, 0:2, 2:4]),
    ("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, (5, -10, 3), (1, 2, 2)),
     lambda x: x[1:2, 0:2, 2:4]),
    ("dynamic_slice_negative", lambda x: lax.dynamic_slice(x, (-1, -2, -2), (1, 2, 2)),
     lambda x: x[1:2, 1:3, 2:4]),
    ("dynamic_slice_in_dim", lambda x: lax.dynamic_slice_in_dim(x, np.int32(3), 2, axis=2),
     lambda x: x[:, :, 2:4]),
    ("dynamic_index_in_dim", lambda x: lax.dynamic_index_in_dim(x, -1, 1, False),
     lambda x: x[:, 2]),
    ("dynamic_update_slice", lambda x: lax.dynamic_update_slice(
        x, np.zeros((1, 2, 2), np.float32), (1, 5, -1)),
     lambda x: _set(x, (slice(1, 2), slice(1, 3), slice(2, 4)), 0)),
    ("dynamic_update_slice_in_dim", lambda x: lax.dynamic_update_slice_in_dim(
        x, np.zeros((2, 1, 4), np.float32), 9, axis=1),
     lambda x: _set(x, (slice(None), slice(2, 3)), 0)),
    ("dynamic_update_index_in_dim", lambda x: lax.dynamic_update_index_in_dim(
        x, np.zeros((2, 4), np.float32), 0, 1),
     lambda x: _set(x, (slice(None), 0), 0)),
    ("concatenate", lambda x: lax.concatenate([x, x[:, :1], x], 1),
     lambda x: np.concatenate([x, x[:, :1], x], 1)),
    ("pad", lambda x: lax.pad(x, np.float32(-1), ((1, 2, 1), (-1, 0, 0), (0, -2, 2))),
     lambda x: _np_pad(x, -1, ((1, 2, 1), (-1, 0, 0), (0, -2, 2)))),
    ("pad_negative_interior_mix", lambda x: lax.pad(x[0, 0], np.float32(0), ((-2, -1, 1),)),
     lambda x: _np_pad(x[0, 0], 0, ((-2, -1, 1),))),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), lambda x: x.sum((0, 2))),
    ("reduce_prod", lambda x: lax.reduce_prod(x[:, :, :2] / 10, (1,)),
     lambda x: (x[:, :, :2] / 10).prod(1)),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), lambda x: x.max(1)),
    ("reduce_min", lambda x: lax.reduce_min(x, (0, 1, 2)), lambda x: x.min()),
    ("argmax", lambda x: lax.argmax(x, 1, np.int32), lambda x: x.argmax(1).astype(np.int32)),
    ("argmin", lambda x: lax.argmin(x, 2, np.int8), lambda x: x.argmin(2).astype(np.int8)),
    ("reduce_monoid", lambda x: lax.reduce(x, np.float32(-np.inf), lax.max, (2,)),
     lambda x: x.max(2)),
    ("reduce_general", lambda x: lax.reduce(x, np.float32(1), lax.add, (0,)),
     lambda x: x.sum(0) + 1),
    ("dot_general", lambda x: lax.dot_general(x, x, (([2], [2]), ([0], [0]))),
     lambda x: np.einsum("bik,bjk->bij", x, x)),
    ("dot_general_outer", lambda x: lax.dot_general(x[0, 0], x[1, 1], (([], []), ([], []))),
     lambda x: np.outer(x[0, 0], x[1, 1])),
    ("dot_general_mid_batch", lambda x: lax.dot_general(x, x, (([0], [0]), ([2], [2]))),
     lambda x: np.einsum("kib,kjb->bij", x, x)),
    ("dot", lambda x: lax.dot(x[0], x[1].T), lambda x: x[0] @ x[1].T),
    ("dot_matvec", lambda x: lax.dot(x[0], x[1, 0]), lambda x: x[0] @ x[1, 0]),
    ("iota", lambda x: lax.iota(np.int32, 5), lambda x: np.arange(5, dtype=np.int32)),
    ("broadcasted_iota", lambda x: lax.broadcasted_iota(np.float32, (2, 3), 1),
     lambda x: np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3))),
    ("full", lambda x: lax.full((2, 2), 3, np.float32), lambda x: np.full((2, 2), 3, np.float32)),
    ("full_like", lambda x: lax.full_like(x, 7), lambda x: np.full_like(x, 7)),
]


def _set(x, idx, value):
  out = x.copy()
  out[idx] = value
  return out


@pytest.mark.parametrize("name,fn,ref", STRUCTURAL, ids=[s[0] for s in STRUCTURAL])
def test_structural_against_numpy(name, fn, ref):
  expected = ref(X)
  out = fn(X)
  assert out.shape == expected.shape and out.dtype == expected.dtype
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)
  # Under jit the same function gives the same result.
  np.testing.assert_allclose(np.asarray(jit(fn)(X)), expected, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.float16, bf16, np.bool_])
def test_reductions_in_other_dtypes(dtype):
  x = _rand(np.random.RandomState(2), (4, 5), dtype, "small")
  if dtype != np.bool_:
    s = lax.reduce_sum(x, (0,))
    assert s.dtype == dtype
    np.testing.assert_allclose(np.asarray(s, np.float64),
                               x.astype(np.float64).sum(0).astype(dtype).astype(np.float64),
                               rtol=1e-2)
  assert lax.reduce_max(x, (1,)).dtype == dtype
  np.testing.assert_array_equal(lax.reduce_max(x, (1,)), x.max(1))
  np.testing.assert_array_equal(lax.reduce_min(x, (0, 1)), x.min())


def test_reduction_identities_nans_and_signed_zeros():
  empty = np.zeros((0, 3), np.float32)
  np.testing.assert_array_equal(lax.reduce_max(empty, (0,)), [-np.inf] * 3)
  np.testing.assert_array_equal(lax.reduce_min(np.zeros((0,), np.int32), (0,)), 2**31 - 1)
  assert int(lax.reduce_max(np.zeros((0,), np.uint8), (0,))) == 0
  assert int(lax.reduce_prod(np.zeros((0,), np.int32), (0,))) == 1
  assert int(lax.reduce_and(np.zeros((0,), np.int32), (0,))) == -1
  assert np.isnan(float(lax.reduce_max(np.float32([1, np.nan, 3]), (0,))))
  top = float(lax.reduce_max(np.float32([-0.0, 0.0]), (0,)))
  low = float(lax.reduce_min(np.float32([0.0, -0.0]), (0,)))
  assert not np.signbit(top) and np.signbit(low)
  assert int(lax.reduce_sum(np.int8([100, 100, 100]), (0,))) == 44     # wraps
  assert float(lax.reduce_sum(np.full(4096, 1, np.float16), (0,))) == 4096


def test_logical_reductions():
  b = np.array([[True, False], [True, True]])
  np.testing.assert_array_equal(lax.reduce_and(b, (0,)), [True, False])
  np.testing.assert_array_equal(lax.reduce_or(b, (1,)), [True, True])
  np.testing.assert_array_equal(lax.reduce_xor(b, (0,)), [False, True])
  assert int(lax.reduce_or(_i32(3, 5), (0,))) == 7
  assert int(lax.reduce_xor(_i32(3, 5), (0,))) == 6


def test_argmax_returns_first_nan_and_first_tie():
  x = np.float32([1, np.nan, 3, np.nan])
  assert int(lax.argmax(x, 0, np.int32)) == 1 and int(lax.argmin(x, 0, np.int32)) == 1
  assert int(lax.argmax(np.float32([3, 1, 3]), 0, np.int32)) == 0
  assert int(lax.argmax(np.array([False, True, True]), 0, np.int32)) == 1
  assert lax.argmax(X, 0, np.uint8).dtype == np.uint8


def test_dot_general_dtypes_and_preferred_element_type():
  a = np.arange(6).reshape(2, 3)
  dn = (([1], [1]), ([], []))
  i8 = (a * 40).astype(np.int8)
  assert lax.dot_general(i8, a.astype(np.int8), dn).dtype == np.int8     # wraps
  wide = lax.dot_general(i8, a.astype(np.int8), dn, preferred_element_type=np.int32)
  np.testing.assert_array_equal(wide, i8.astype(np.int32) @ a.T)
  assert lax.dot_general(a.astype(np.float32), a.astype(np.int32), dn).dtype == np.float32
  assert lax.dot_general(a.astype(np.uint8), a.astype(np.int8), dn).dtype == np.int8
  assert lax.dot_general(a.astype(bf16), a.astype(np.float16), dn).dtype == bf16
  frac = np.float32([[1.5, 1.5]])
  assert int(lax.dot_general(frac, frac, dn, preferred_element_type=np.int32)[0, 0]) == 4
  ones = np.ones((1, 4096), np.float16)
  assert float(lax.dot_general(ones, ones, dn)[0, 0]) == 4096     # accumulates in f32
  bools = lax.dot_general(np.array([[True, False]]), np.array([[True, True]]), dn)
  assert bools.dtype == np.bool_ and bool(bools[0, 0])
  prec = lax.dot(frac, frac.T, precision=lax.Precision.HIGHEST)
  assert float(prec[0, 0]) == 4.5
  assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
  assert lax.Precision("highest") is lax.Precision.HIGHEST


def test_float_product_with_an_integer_result_under_jit():
  """Float operands, preferred_element_type=int32: the float product
  converted (as JAX, eager and jitted), not a product of truncated operands."""
  dn = (([1], [1]), ([], []))
  a, b = np.float32([[1.5, 2.7, -1.5]]), np.float32([[3.5, 1.2, 2.2]])
  want = np.trunc(a.astype(np.float64) @ b.T.astype(np.float64)).astype(np.int32)   # 5
  f = lambda x, y: lax.dot_general(x, y, dn, preferred_element_type=np.int32)
  with config.override("purejax_compile_sync", True):
    for backend in ("cpu", "numpy"):
      with config.override("purejax_backend", backend):
        np.testing.assert_array_equal(jit(f)(a, b), want)
  np.testing.assert_array_equal(f(a, b), want)


def test_dynamic_slice_with_traced_indices_is_clamped():
  f = jit(lambda x, i, j: lax.dynamic_slice(x, (i, j, 0), (1, 2, 4)))
  np.testing.assert_array_equal(f(X, 1, 1), X[1:2, 1:3])
  np.testing.assert_array_equal(f(X, 7, 9), X[1:2, 1:3])      # clamped
  np.testing.assert_array_equal(f(X, -1, -2), X[1:2, 1:3])    # counted from the end
  np.testing.assert_array_equal(f(X, -9, -9), X[0:1, 0:2])
  g = jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i, i)))
  out = g(X, np.zeros((1, 1, 2), np.float32), 100)
  np.testing.assert_array_equal(out, _set(X, (1, 2, slice(2, 4)), 0))
  h = jit(lambda x, i: lax.dynamic_index_in_dim(x, i, 2, keepdims=False))
  np.testing.assert_array_equal(h(X, np.int32(-1)), X[:, :, 3])


def test_general_reduce_with_pytrees():
  x = X[0]
  out = lax.reduce((x, x), (np.float32(0), np.float32(1)),
                   lambda a, b: (lax.add(a[0], b[0]), lax.mul(a[1], b[1])), (1,))
  np.testing.assert_allclose(out[0], x.sum(1))
  np.testing.assert_allclose(out[1], x.prod(1))
  empty = lax.reduce(np.zeros((0, 3), np.float32), np.float32(5), lax.add, (0,))
  np.testing.assert_array_equal(empty, [5, 5, 5])
  with pytest.raises(ValueError, match="same tree structure"):
    lax.reduce((x, x), np.float32(0), lax.add, (0,))


# ---------------------------------------------------------------------------
# Errors: JAX's classes and messages.  Each case is (function of the lax
# module, error class, message); the oracle section checks them against JAX.

x23 = np.ones((2, 3), np.float32)
TIP = " is a similar function that does automatic type promotion on inputs)."

ERRORS = [
    (lambda L: L.add(1, 1.0), TypeError,
     "lax.add requires arguments to have the same dtypes, got int32, float32. "
     "(Tip: jnp.add" + TIP),
    (lambda L: L.mul(np.int8(1), 2), TypeError,
     "lax.mul requires arguments to have the same dtypes, got int8, int32. "
     "(Tip: jnp.multiply" + TIP),
    (lambda L: L.shift_left(np.int32(1), np.uint32(1)), TypeError,
     "lax.shift_left requires arguments to have the same dtypes, got int32, uint32. "
     "(Tip: jnp.left_shift" + TIP),
    (lambda L: L.lt(np.int32(1), np.uint8(1)), TypeError,
     "lax.lt requires arguments to have the same dtypes, got int32, uint8."),
    (lambda L: L.sin(1), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, "
     "complexfloating."),
    (lambda L: L.mul(np.bool_(1), np.bool_(1)), TypeError,
     "mul does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, complexfloating."),
    (lambda L: L.abs(np.uint8(1)), TypeError,
     "abs does not accept dtype uint8. Accepted dtypes are subtypes of floating, "
     "complexfloating, signedinteger."),
    (lambda L: L.bitwise_not(np.float32(1)), TypeError,
     "not does not accept dtype float32. Accepted dtypes are subtypes of integer, bool."),
    (lambda L: L.pow(np.float32(1), np.float16(1)), TypeError,
     "the first argument to pow must have an inexact dtype (float or complex), and the "
     "second argument must have an inexact or integer dtype, and two inexact dtypes must "
     "match, but got float32 and float16 respectively."),
    (lambda L: L.integer_pow(np.int32(3), -1), TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(int32[], -1)"),
    (lambda L: L.add(np.ones(3, np.float32), np.ones(4, np.float32)), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    (lambda L: L.add(x23, np.ones(3, np.float32)), TypeError,
     "add: arrays must have the same number of dimensions, got {1, 2}"),
    (lambda L: L.add([1, 2], 1), TypeError,
     "Error interpreting argument to add as a JAX value. The problematic value is of "
     "type <class 'list'> and was passed to add at position 0.\n"),
    (lambda L: L.select_n(np.float32(1), x23, x23), TypeError,
     "select `which` must be boolean or integer type, got float32."),
    (lambda L: L.select_n(True, x23, x23[0]), TypeError,
     "select cases must have the same shapes, got [(2, 3), (3,)]."),
    (lambda L: L.clamp(np.ones(2, np.float32), x23, np.float32(1)), TypeError,
     "clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(2,), "
     "operand.shape=(2, 3)."),
    (lambda L: L.broadcast_in_dim(x23, (4, 2, 4), (1, 2)), TypeError,
     "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
     "corresponding dimensions in the target broadcast shape; got operand of shape "
     "(2, 3), target broadcast shape (4, 2, 4), broadcast_dimensions (1, 2) "),
    (lambda L: L.broadcast_in_dim(x23, (4, 2, 3), (1,)), TypeError,
     "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
     "broadcast_dimensions (1,) for operand ndim 2."),
    (lambda L: L.broadcast(x23, (-1,)), TypeError,
     "broadcast_in_dim shape must have every element be nonnegative, got (-1, 2, 3)."),
    (lambda L: L.reshape(x23, (-1, 2)), TypeError,
     "reshape new_sizes must all be positive, got (-1, 2)."),
    (lambda L: L.reshape(x23, (2.0, 3)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got (2.0, 3)."),
    (lambda L: L.transpose(x23, (0, 0)), TypeError,
     "transpose permutation isn't a permutation of operand dimensions, got permutation "
     "(0, 0) for operand shape (2, 3)."),
    (lambda L: L.squeeze(x23, (0,)), ValueError,
     "cannot select an axis to squeeze out which has size not equal to one, got "
     "shape=(2, 3) and dimensions=(0,)"),
    (lambda L: L.squeeze(x23, (2,)), ValueError,
     "axis 2 is out of bounds for array of dimension 2"),
    (lambda L: L.expand_dims(x23, (0, 0)), ValueError,
     "repeated axis in lax.expand_dims: (0, 0)"),
    (lambda L: L.rev(x23, (0, 0)), TypeError, "rev dimensions must be unique, got (0, 0)."),
    (lambda L: L.slice(x23, (0, 0), (3, 3)), TypeError,
     "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
     "(np.int64(3), np.int64(3)) for operand shape (2, 3)."),
    (lambda L: L.slice(x23, (0, 0), (2, 3), (-1, 1)), TypeError,
     "slice strides must have every element be nonnegative, got (-1, 1)."),
    (lambda L: L.slice_in_dim(x23, 2, 1, 1, 1), TypeError,
     "slice limit_indices must be greater than or equal to start_indices, got "
     "start_indices (0, 2) and limit_indices (2, 1)."),
    (lambda L: L.index_in_dim(x23, 3, axis=1), IndexError,
     "index 3 is out of bounds for axis 1 with size 3"),
    (lambda L: L.dynamic_slice(x23, (0.0, 0), (1, 2)), TypeError,
     "index arguments to dynamic_slice must be integers of the same type, got: float32, "
     "int32"),
    (lambda L: L.dynamic_slice(x23, (0, 0), (3, 2)), TypeError,
     "slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
     "(3, 2) for operand shape (2, 3)."),
    (lambda L: L.dynamic_slice(x23, (0,), (1, 2)), ValueError,
     "Length of slice indices must match number of operand dimensions (1 vs (2, 3))"),
    (lambda L: L.dynamic_update_slice(x23, np.ones((1, 2), np.int32), (0, 0)), TypeError,
     "lax.dynamic_update_slice requires arguments to have the same dtypes, got float32, "
     "int32."),
    (lambda L: L.dynamic_update_slice(x23, np.ones((3, 2), np.float32), (0, 0)), TypeError,
     "dynamic_update_slice update shape must be smaller than operand shape, got update "
     "shape (3, 2) for operand shape (2, 3)."),
    (lambda L: L.concatenate([x23, x23.astype(np.int32)], 0), TypeError,
     "lax.concatenate requires arguments to have the same dtypes, got float32, int32. "
     "(Tip: jnp.concatenate" + TIP),
    (lambda L: L.concatenate([x23, x23[:, :2]], 0), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than the one "
     "being concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 2)."),
    (lambda L: L.concatenate([x23, x23], 2), TypeError,
     "concatenate dimension out of bounds: dimension 2 for shapes (2, 3), (2, 3)."),
    (lambda L: L.concatenate([], 0), ValueError,
     "concatenate requires a non-empty sequences of arrays"),
    (lambda L: L.pad(x23, 0, ((1, 2, 1), (0, 0, 0))), TypeError,
     "pad operand and padding_value must be same dtype: got float32 and int32."),
    (lambda L: L.pad(x23, np.float32(0), ((-3, 0, 0), (0, 0, 0))), ValueError,
     "Dimension size after padding is not at least 0, got result shape (-1, 3), for "
     "padding_config ((-3, 0, 0), (0, 0, 0)) and operand shape (2, 3)"),
    (lambda L: L.pad(x23, np.float32(0), ((1, 2, -1), (0, 0, 0))), ValueError,
     "interior padding in padding_config must be nonnegative, got padding_config "
     "((1, 2, -1), (0, 0, 0))"),
    (lambda L: L.iota(np.bool_, 3), TypeError,
     "iota does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, "
     "complexfloating."),
    (lambda L: L.broadcasted_iota(np.int32, (2, 3), 2), ValueError,
     "iota dimension must be between 0 and len(shape), got dimension=2 for shape=(2, 3)"),
    (lambda L: L.full((2,), np.ones(2)), TypeError,
     "full must be called with scalar fill_value, got fill_value.shape (2,)."),
    (lambda L: L.reduce_sum(x23 > 1, (0,)), TypeError,
     "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of number."),
    (lambda L: L.reduce_sum(x23, (0, 0)), ValueError,
     "duplicate value in 'axes' of reduction: (0, 0)"),
    (lambda L: L.reduce_max(x23, (2,)), ValueError,
     "reduction axes (2,) contains out-of-bounds indices for float32[2,3]."),
    (lambda L: L.reduce_and(x23, (0,)), TypeError,
     "logical reduction requires operand dtype bool or int, got float32."),
    (lambda L: L.argmax(x23, 0, np.float32), TypeError,
     "index_dtype must be an integer type, but got float32"),
    (lambda L: L.argmax(x23, -1, np.int32), ValueError,
     "Invalid axis -1 for operand shape (2, 3)"),
    (lambda L: L.argmin(np.zeros((0, 3), np.float32), 0, np.int32), ValueError,
     "argmin and argmax require non-empty reduced dimension. operand.shape=(0, 3) axis=0"),
    (lambda L: L.reduce(x23, np.int32(1), L.add, (0,)), TypeError,
     "reduce operand dtypes should match corresponding initial value dtypes, got "
     "operands=[ShapedArray(float32[2,3])] and initial_values=[ShapedArray(int32[])]"),
    (lambda L: L.dot_general(x23, x23, (([1], [0]), ([], []))), TypeError,
     "dot_general requires contracting dimensions to have the same shape, got (3,) and "
     "(2,)."),
    (lambda L: L.dot_general(x23, x23, (([1], [1]), ([1], [1]))), TypeError,
     "dot_general requires lhs batch dimensions to be disjoint from contracting "
     "dimensions, got lhs_batch (1,) and lhs_contracting (1,)."),
    (lambda L: L.dot_general(x23, x23, (([2], [1]), ([], []))), TypeError,
     "dot_general requires lhs dimension numbers to be nonnegative and less than the "
     "number of axes of the lhs value, got lhs_batch of () and lhs_contracting of (2,) "
     "for lhs of rank 2"),
    (lambda L: L.dot_general(x23.astype(np.int32), x23.astype(np.int32),
                             (([1], [1]), ([], [])), preferred_element_type=np.int8),
     TypeError, "`preferred_element_type` must not be narrower than the original type, "
     "got preferred_element_type of int8 for result type of int32."),
    (lambda L: L.dot(x23, x23), ValueError,
     "jax.lax.dot: dimension_numbers must be specified when not performing simple "
     "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
     "lhs_shape=(2, 3) rhs_shape=(2, 3)"),
]


def _error_id(case):
  return case[2][:40]


@pytest.mark.parametrize("fn,error,message", ERRORS, ids=[_error_id(c) for c in ERRORS])
def test_errors_match_jax_messages(fn, error, message):
  with pytest.raises(error) as info:
    fn(lax)
  assert str(info.value) == message


def test_errors_under_jit_too():
  with pytest.raises(TypeError, match="lax.add requires arguments to have the same"):
    jit(lambda x: lax.add(x, 1.0))(np.int32(1))
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values") as e:
    jit(lambda n: lax.iota(np.int32, n))(3)
  assert "static_argnums" in str(e.value)


def test_dtype_requests_warn_when_x64_is_off():
  with pytest.warns(UserWarning, match="float64 requested in broadcasted_iota"):
    assert lax.iota(np.float64, 2).dtype == np.float32
  with pytest.warns(UserWarning, match="int64 requested in argmax"):
    assert lax.argmax(x23, 0, np.int64).dtype == np.int32
  with pytest.warns(UserWarning, match="float64 requested in dot"):
    lax.dot(x23, x23.T, preferred_element_type=np.float64)
  with pytest.warns(UserWarning, match="requested in convert_element_type"):
    lax.convert_element_type(x23, np.float64)


def test_fresh_constants_get_their_own_literals():
  # Temporary NumPy scalars may reuse a freed object's id while tracing;
  # each must still become its own literal.
  jaxpr = make_jaxpr(lambda x: [lax.add(x, np.float32(i)) for i in range(4)])(np.float32(1))
  text = str(jaxpr)
  assert all(f"add a {i}.0:f32[]" in text for i in range(4)), text
