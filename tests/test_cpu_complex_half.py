"""float16/bfloat16 and complex64/complex128 in jitted code run as compiled C
(no NumPy host steps between kernels).

Half floats are computed as float32 and rounded back after every operation
(XLA's bits: checked against real JAX where installed), converted by bit
manipulation; their sums and products reduce their float32 values in
``reduction_order``'s order on both tiers.  Complex values use NumPy's
formulas (product, Smith's quotient, reciprocal) and glibc's functions, so
they agree with NumPy within rounding and do not overflow on huge operands.
"""
import numpy as np
import pytest

import ml_dtypes
import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import pjit
from purejax._src.backends import tier_numerics
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.RandomState(0)
BF16, F16 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16)
HALVES = [F16, BF16]


@pytest.fixture(autouse=True)
def _compile_sync():
  with config.override("purejax_compile_sync", True), \
       config.override("purejax_backend", "cpu"):
    yield


def _compiled(f, *args):
  """``jit(f)(*args)`` from the compiled C code, and the executable's plan
  steps that run on NumPy (there must be none)."""
  jf = jax.jit(f)
  out = jf(*args)
  exe = pjit.executable_for(jf.trace(*args).jaxpr)
  assert hasattr(exe, "source"), "the C backend did not compile the program"
  hosts = [s.describe() for s in exe.plan.steps if type(s).__name__ == "HostStep"]
  assert not hosts, hosts
  return out


def _numpy_tier(f, *args):
  with config.override("purejax_backend", "numpy"):
    return jax.jit(f)(*args)


def _bits(x):
  x = np.asarray(x)
  return x.reshape(-1).view(f"uint{min(x.dtype.itemsize, 8) * 8}")


def _same_bits(got, want):
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(_bits(got), _bits(want))


def _half_values(dtype, n=4000):
  """Normal, subnormal and special values of a half type."""
  x = np.concatenate([RNG.standard_normal(n) * 3, RNG.standard_normal(200) * 1e-6,
                      [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 6e-8]])
  with np.errstate(all="ignore"):
    return x.astype(np.float32).astype(dtype)


def _xla_float_to_half(x, dtype):
  """float32 -> half as XLA converts (a NaN quieted: float16 keeps the
  payload's top bits, bfloat16 none), computed here with NumPy."""
  x = np.asarray(x, np.float32)
  with np.errstate(all="ignore"):
    out = x.astype(dtype).view(np.uint16)
  b = x.view(np.uint32)
  sign = ((b >> 16) & 0x8000).astype(np.uint16)
  nan = (0x7e00 | ((b >> 13) & 0x3ff)) if dtype == F16 else np.full(b.shape, 0x7fc0)
  return np.where(np.isnan(x), sign | nan.astype(np.uint16), out).view(dtype)


# -- half floats: conversions ----------------------------------------------------------

@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_every_half_value_widens_exactly(dtype):
  h = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dtype)
  got = _compiled(lambda x: lax.convert_element_type(x, np.float32), h)
  _same_bits(got, h.astype(np.float32))
  back = _compiled(lambda x: lax.convert_element_type(
      lax.convert_element_type(x, np.float32), dtype), h)
  _same_bits(back, _xla_float_to_half(h.astype(np.float32), dtype))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_float32_to_half_rounds_to_nearest_even(dtype):
  bits = np.concatenate([RNG.randint(0, 1 << 32, 200000, dtype=np.uint64).astype(np.uint32),
                         # around the halfway points and the limits
                         np.arange(0x477fe000, 0x47801000, 7, dtype=np.uint32),
                         np.arange(0x387fe000, 0x38801000, 3, dtype=np.uint32),
                         np.arange(0x33000000 - 50, 0x33000000 + 50, dtype=np.uint32),
                         np.array([0x7f800001, 0xffc00001, 0x7fbfffff, 0x7f812345,
                                   0x00000001, 0x80000000, 0x7f7fffff], np.uint32)])
  x = bits.view(np.float32)
  got = _compiled(lambda v: lax.convert_element_type(v, dtype), x)
  _same_bits(got, _xla_float_to_half(x, dtype))
  _same_bits(_numpy_tier(lambda v: lax.convert_element_type(v, dtype), x), got)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_half_conversions_from_integers_and_float64(dtype, x64):
  ints = np.array([0, 1, -1, 2049, 4097, 65519, 65520, (1 << 24) + (1 << 16) + 1,
                   2 ** 31 - 1, -2 ** 31, 33587201], np.int32)
  got = _compiled(lambda v: lax.convert_element_type(v, dtype), ints)
  _same_bits(got, ints.astype(np.float32).astype(dtype))
  # float64 rounds through float32, as XLA does (a double rounding).
  f64 = np.array([1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -11 + 2 ** -40, -3.5, 1e300, 1e-300],
                 np.float64)
  got = _compiled(lambda v: lax.convert_element_type(v, dtype), f64)
  with np.errstate(all="ignore"):
    _same_bits(got, f64.astype(np.float32).astype(dtype))
  _same_bits(_numpy_tier(lambda v: lax.convert_element_type(v, dtype), f64), got)
  # to integers: saturating, NaN -> 0, as float32
  h = np.array([np.inf, -np.inf, np.nan, 65504, -3.7, 300, 2.5], np.float32).astype(dtype)
  for it in (np.int8, np.uint8, np.int32, np.int64):
    got = _compiled(lambda v: lax.convert_element_type(v, it), h)
    want = _numpy_tier(lambda v: lax.convert_element_type(v, it), h)
    _same_bits(got, want)
  _same_bits(_compiled(lambda v: lax.convert_element_type(v, F16 if dtype == BF16 else BF16), h),
             _numpy_tier(lambda v: lax.convert_element_type(v, F16 if dtype == BF16 else BF16), h))


def test_half_bitcast():
  h = _half_values(F16)
  _same_bits(_compiled(lambda v: lax.bitcast_convert_type(v, np.int16), h), h.view(np.int16))
  i = np.arange(-32768, 32768, 7, dtype=np.int16)
  _same_bits(_compiled(lambda v: lax.bitcast_convert_type(v, BF16), i), i.view(BF16))


# -- half floats: arithmetic ------------------------------------------------------------

def _exact_ops(lax):
  """Half-float operations XLA rounds once each, written against ``lax``
  (purejax's or JAX's)."""
  return {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / y, "chain": lambda x, y: x * y + x - y / (x + 1),
    "sqrt": lambda x, y: lax.sqrt(x), "square": lambda x, y: lax.square(x),
    "neg": lambda x, y: -x, "abs": lambda x, y: lax.abs(x),
    "max": lambda x, y: lax.max(x, y), "min": lambda x, y: lax.min(x, y),
    "sign": lambda x, y: lax.sign(x), "floor": lambda x, y: lax.floor(x),
    "round": lambda x, y: lax.round(x), "pow3": lambda x, y: lax.integer_pow(x, 3),
    "pow-2": lambda x, y: lax.integer_pow(x, -2), "rem": lambda x, y: lax.rem(x, y),
    "select": lambda x, y: lax.select(x < y, x, y * 2),
    "clamp": lambda x, y: lax.clamp(np.float32(-1).astype(x.dtype), x, y),
  }


_EXACT_OPS = _exact_ops(lax)


def _per_op_numpy(name, x, y):
  """The op in NumPy's half arithmetic (each operation rounded)."""
  with np.errstate(all="ignore"):
    return np.asarray(_EXACT_OPS[name](jnp.asarray(x), jnp.asarray(y)))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("name", sorted(_EXACT_OPS))
def test_half_ops_round_after_each_operation(name, dtype):
  x, y = _half_values(dtype), _half_values(dtype)[::-1].copy()
  f = _EXACT_OPS[name]
  got = _compiled(f, x, y)
  # eager (the NumPy impls: float32 then one rounding per op) and the
  # jit's NumPy tier give the same bits
  _same_bits(got, _per_op_numpy(name, x, y))
  _same_bits(got, _numpy_tier(f, x, y))
  assert tier_numerics.numpy_tier_exact(jax.make_jaxpr(f)(x, y).jaxpr)


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_half_comparisons(dtype):
  x = _half_values(dtype)
  y = np.concatenate([x[1:], x[:1]])
  for f in (lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge):
    got = _compiled(f, x, y)
    want = f(x.astype(np.float32), y.astype(np.float32))
    _same_bits(got, np.asarray(want))
  _same_bits(_compiled(lax.is_finite, x), np.isfinite(x.astype(np.float32)))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sin", "logistic", "rsqrt", "expm1"])
def test_half_transcendentals_within_rounding(name, dtype):
  f = getattr(lax, name)
  x = np.abs(_half_values(dtype)) if name in ("log", "rsqrt") else _half_values(dtype)
  got = np.asarray(_compiled(f, x)).astype(np.float64)
  ref64 = {"logistic": lambda v: 1 / (1 + np.exp(-v)), "rsqrt": lambda v: 1 / np.sqrt(v)}
  ref64 = ref64[name] if name in ref64 else getattr(np, name)
  with np.errstate(all="ignore"):
    want = ref64(x.astype(np.float64))
    want_h = want.astype(np.float32).astype(dtype).astype(np.float64)
  ok = np.isfinite(want_h)
  # within one unit of the half type's last place of the float64 value
  eps = float(ml_dtypes.finfo(dtype).eps)
  tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
  np.testing.assert_array_less(np.abs(got[ok] - want[ok]),
                               eps * np.abs(want[ok]) + 2 * tiny)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want_h))
  np.testing.assert_array_equal(got[~ok & ~np.isnan(want_h)], want_h[~ok & ~np.isnan(want_h)])


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_half_reductions(dtype):
  x = (RNG.standard_normal((37, 300)) * 0.3).astype(np.float32).astype(dtype)
  for axis in (0, 1, None):
    f = lambda v: (jnp.sum(v, axis=axis), lax.reduce_sum_p.bind(
        v, axes=(0, 1) if axis is None else (axis,), out_sharding=None),
        jnp.max(v, axis=axis), jnp.min(v, axis=axis), jnp.prod(v[:, :12], axis=axis))
    got = _compiled(f, x)
    want = _numpy_tier(f, x)
    for g, w in zip(got, want):
      _same_bits(g, w)   # both tiers: the same bits
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(np.asarray(got[1]).astype(np.float64), x64.sum(axis=axis),
                               rtol=float(ml_dtypes.finfo(dtype).eps), atol=1e-2)
    _same_bits(got[2], x.max(axis=axis))
  # float32 accumulation: 2048 + 1 + 1 is 2050 (a float16 accumulator: 2048)
  s = _compiled(lambda v: lax.reduce_sum_p.bind(v, axes=(0,), out_sharding=None),
                np.array([2048, 1, 1], dtype))
  assert float(s) == float(np.float32(2050).astype(dtype))
  i = _compiled(lambda v: jnp.argmax(v, axis=1), x)
  np.testing.assert_array_equal(i, np.argmax(x.astype(np.float32), axis=1))


@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_jit_matches_eager_on_half(dtype):
  x = _half_values(dtype)[:500]

  def f(v):
    w = v * np.float32(0.5).astype(dtype) + 1
    return lax.max(w, -w) / (jnp.abs(v) + 2), (w > 0).astype(np.int32), w.astype(np.float32)

  with np.errstate(all="ignore"):
    eager = f(jnp.asarray(x))
  for g, e in zip(_compiled(f, x), eager):
    _same_bits(g, e)


def test_half_tier_check():
  x = np.ones(4, F16)
  jx = jax.make_jaxpr
  assert tier_numerics.numpy_tier_exact(jx(lambda v: v * v + 1)(x).jaxpr)
  assert tier_numerics.numpy_tier_exact(jx(lambda v: jnp.sum(v))(x).jaxpr)
  assert not tier_numerics.numpy_tier_exact(jx(lax.rsqrt)(x).jaxpr)
  assert not tier_numerics.numpy_tier_exact(jx(lax.exp)(x).jaxpr)
  c = np.ones(4, np.complex64)
  assert not tier_numerics.numpy_tier_exact(jx(lambda v: v * v)(c).jaxpr)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", HALVES, ids=str)
def test_half_against_jax(dtype):
  real_jax = pytest.importorskip("jax")
  ops = _exact_ops(real_jax.lax)
  x, y = _half_values(dtype), _half_values(dtype)[::-1].copy()
  # (not round: purejax's round(-0.3) is +0.0 on every dtype, JAX's -0.0)
  for name in ("add", "mul", "div", "chain", "sqrt", "max", "pow3", "pow-2", "select", "rem",
               "square", "floor", "clamp", "sign"):
    want = np.asarray(real_jax.jit(ops[name])(x, y))
    _same_bits(_compiled(_EXACT_OPS[name], x, y), want)
  for conv in (np.float32, np.int32, np.uint8, F16 if dtype == BF16 else BF16):
    f = lambda v: lax.convert_element_type(v, conv)
    g = lambda v: real_jax.lax.convert_element_type(v, conv)
    _same_bits(_compiled(f, x), np.asarray(real_jax.jit(g)(x)))
  # float32 -> half (NaN payloads included), as XLA converts
  bits = np.concatenate([RNG.randint(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32),
                         np.array([0x7f800001, 0xffc00001, 0x7f812345], np.uint32)])
  f32 = bits.view(np.float32)
  f = lambda v: lax.convert_element_type(v, dtype)
  g = lambda v: real_jax.lax.convert_element_type(v, dtype)
  _same_bits(_compiled(f, f32), np.asarray(real_jax.jit(g)(f32)))
  for name in ("exp", "tanh", "log"):   # within one half ulp of XLA's
    v = np.abs(x) if name == "log" else x
    got = np.asarray(_compiled(getattr(lax, name), v)).astype(np.float32)
    want = np.asarray(real_jax.jit(getattr(real_jax.lax, name))(v)).astype(np.float32)
    both = np.isfinite(want)
    np.testing.assert_allclose(got[both], want[both], rtol=float(ml_dtypes.finfo(dtype).eps))


# -- complex --------------------------------------------------------------------------

def _complex_values(dtype, n=2000):
  z = RNG.standard_normal(n) * 2 + 1j * RNG.standard_normal(n) * 2
  return z.astype(dtype)


def _rtol(dtype):
  return 4e-7 if np.dtype(dtype) == np.complex64 else 1e-15


def _complex_ops(lax, jnp):
  """(operation written against ``lax``/``jnp``, its NumPy reference)."""
  return {
    "add": (lambda x, y: x + y, np.add), "sub": (lambda x, y: x - y, np.subtract),
    "mul": (lambda x, y: x * y, np.multiply), "div": (lambda x, y: x / y, np.divide),
    "neg": (lambda x, y: -x, lambda x, y: -x),
    "conj": (lambda x, y: lax.conj(x), lambda x, y: np.conj(x)),
    "real": (lambda x, y: lax.real(x), lambda x, y: x.real),
    "imag": (lambda x, y: lax.imag(x), lambda x, y: x.imag),
    "abs": (lambda x, y: lax.abs(x), lambda x, y: np.abs(x)),
    "exp": (lambda x, y: lax.exp(x), lambda x, y: np.exp(x)),
    "log": (lambda x, y: lax.log(x), lambda x, y: np.log(x)),
    "sqrt": (lambda x, y: lax.sqrt(x), lambda x, y: np.sqrt(x)),
    "sin": (lambda x, y: lax.sin(x), lambda x, y: np.sin(x)),
    "cos": (lambda x, y: lax.cos(x), lambda x, y: np.cos(x)),
    "tanh": (lambda x, y: lax.tanh(x), lambda x, y: np.tanh(x)),
    "expm1": (lambda x, y: lax.expm1(x), lambda x, y: np.expm1(x)),
    "log1p": (lambda x, y: lax.log1p(x), lambda x, y: np.log1p(x)),
    "sign": (lambda x, y: lax.sign(x), lambda x, y: x / np.abs(x)),
    "square": (lambda x, y: lax.square(x), lambda x, y: x * x),
    "pow3": (lambda x, y: lax.integer_pow(x, 3), lambda x, y: x ** 3),
    "pow-2": (lambda x, y: lax.integer_pow(x, -2), lambda x, y: x ** -2.0),
    "eq": (lambda x, y: x == jnp.where(jnp.abs(x) > 1, x, y), lambda x, y: np.abs(x) > 1),
    "select": (lambda x, y: jnp.where(jnp.real(x) > 0, x, y),
               lambda x, y: np.where(x.real > 0, x, y)),
    "complex": (lambda x, y: lax.complex(lax.real(x), lax.imag(y)),
                lambda x, y: x.real + 1j * y.imag),
    "to_real": (lambda x, y: lax.convert_element_type(x, np.float32),
                lambda x, y: x.real.astype(np.float32)),
    "from_real": (lambda x, y: lax.convert_element_type(lax.imag(x), x.dtype) + 1j,
                  lambda x, y: x.imag + 1j),
    "from_int": (lambda x, y: lax.convert_element_type(
        lax.convert_element_type(lax.real(x) * 10, np.int32), x.dtype),
        lambda x, y: np.trunc((x.real * 10).astype(np.float32)) + 0j),
  }


_COMPLEX_OPS = _complex_ops(lax, jnp)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
@pytest.mark.parametrize("name", sorted(_COMPLEX_OPS))
def test_complex_ops_against_numpy(name, dtype, x64):
  f, ref = _COMPLEX_OPS[name]
  x, y = _complex_values(dtype), _complex_values(dtype)[::-1].copy()
  got = np.asarray(_compiled(f, x, y))
  with np.errstate(all="ignore"):
    want = np.asarray(ref(x.astype(np.complex128), y.astype(np.complex128)))
  with np.errstate(all="ignore"):
    eager = np.asarray(f(jnp.asarray(x), jnp.asarray(y)))
  assert got.dtype == eager.dtype and got.shape == eager.shape
  if want.dtype.kind == "b":
    np.testing.assert_array_equal(got, want)
    return
  rtol = _rtol(dtype) * (8 if name in ("pow3", "pow-2", "tanh", "expm1") else 2)
  # (sin, cos, expm1 and log1p lose digits to cancellation, in NumPy too)
  scale = np.abs(want) + (np.abs(x) if name in ("sin", "cos", "expm1") else 0) + (
      1 if name == "log1p" else 0)
  assert np.all(np.abs(got - want) <= rtol * scale + 1e-30), name
  np.testing.assert_allclose(got, eager, rtol=rtol, atol=1e-30)


def _product_unfused(a, b):
  """NumPy's complex product formula, each product rounded (NumPy's scalar
  loop; its AVX-512 array loop fuses them into multiply-adds)."""
  a, b = np.asarray(a), np.asarray(b)
  out = np.empty(np.broadcast(a, b).shape, a.dtype)
  with np.errstate(all="ignore"):
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
  return out


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_numpy_formulas_bitwise(dtype, x64):
  """Product (NumPy's formula, unfused), quotient, exp/log/sqrt: NumPy's
  own bits."""
  x, y = _complex_values(dtype), _complex_values(dtype)[::-1].copy()
  _same_bits(_compiled(lambda a, b: a * b, x, y), _product_unfused(x, y))
  for f in (lambda a, b: a / b, lambda a, b: a + b,
            lambda a, b: lax.exp(a), lambda a, b: lax.log(a), lambda a, b: lax.sqrt(a)):
    with np.errstate(all="ignore"):
      _same_bits(_compiled(f, x, y), f(jnp.asarray(x), jnp.asarray(y)))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_complex_products_do_not_depend_on_the_thread_count(threads):
  """Each element's product is the unfused formula wherever a thread's
  share of the loop starts (vectorized loops made it a fused
  multiply-add in the vector body only)."""
  rng = np.random.RandomState(1)
  n = 200003
  x = (rng.randn(n) + 1j * rng.randn(n)).astype(np.complex64)
  y = (rng.randn(n) + 1j * rng.randn(n)).astype(np.complex64)
  with config.override("purejax_num_threads", threads):
    got = _compiled(lambda a, b: a * b, x, y)
  _same_bits(got, _product_unfused(x, y))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_edge_values(dtype, x64):
  big = 2e38 if dtype == np.complex64 else 1e308
  tiny = 1e-38 if dtype == np.complex64 else 1e-307
  inf, nan = np.inf, np.nan
  a = np.array([1 + 1j, big + big * 1j, tiny + tiny * 1j, 1 + 0j, inf + 0j, 5 + 3j,
                big + 1j, -0.0 - 0j, nan + 0j, inf + inf * 1j], dtype)
  b = np.array([0j, big + big * 1j, tiny + tiny * 1j, inf + 0j, 1 + 1j, 2 - 7j,
                1 + big * 1j, 1 + 0j, 1 + 1j, 1 + 1j], dtype)
  with np.errstate(all="ignore"):
    _same_bits(_compiled(lambda u, v: u * v, a, b), _product_unfused(a, b))
    for f in (lambda u, v: u / v, lambda u, v: lax.abs(u),
              lambda u, v: lax.exp(u), lambda u, v: lax.sqrt(u), lambda u, v: lax.log(u),
              lambda u, v: lax.sign(v), lambda u, v: lax.integer_pow(v, -1)):
      got, want = np.asarray(_compiled(f, a, b)), np.asarray(f(jnp.asarray(a), jnp.asarray(b)))
      np.testing.assert_allclose(got, want, rtol=_rtol(dtype) * 2)
    # Smith's quotient and hypot: no overflow or underflow on huge/tiny operands
    q = np.asarray(_compiled(lambda u, v: u / v, a, b))
    np.testing.assert_allclose(q[2], 1, rtol=_rtol(dtype))
    np.testing.assert_allclose(q[6], -1j, atol=1e-7)
    m = np.asarray(_compiled(lambda u: lax.abs(u), a))
    np.testing.assert_allclose(m[1:3], [big * np.sqrt(2), tiny * np.sqrt(2)], rtol=_rtol(dtype))
    assert m[4] == np.inf and np.isinf(m[9])
    assert np.signbit(np.asarray(_compiled(lambda u: -u, a))[7].real) == 0


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_reductions(dtype, x64):
  x = _complex_values(dtype, 600).reshape(20, 30)
  for axis in (0, 1, None):
    got = _compiled(lambda v: (jnp.sum(v, axis=axis), jnp.prod(v[:, :6] * 0.5, axis=axis)), x)
    x128 = x.astype(np.complex128)
    np.testing.assert_allclose(got[0], x128.sum(axis=axis), rtol=_rtol(dtype) * 4,
                               atol=_rtol(dtype) * 30)
    np.testing.assert_allclose(got[1], (x128[:, :6] * 0.5).prod(axis=axis),
                               rtol=_rtol(dtype) * 40, atol=1e-30)
  # the same bits for every thread count and call
  with config.override("purejax_num_threads", 1):
    one = _compiled(lambda v: jnp.sum(v * v, axis=0), x)
  _same_bits(_compiled(lambda v: jnp.sum(v * v, axis=0), x), one)


@pytest.mark.oracle
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_against_jax(dtype, x64):
  real_jax = pytest.importorskip("jax")
  with real_jax.enable_x64(True):   # restored after: other tests compare in 32 bits
    _complex_against(real_jax, dtype)


def _complex_against(real_jax, dtype):
  ops = _complex_ops(real_jax.lax, real_jax.numpy)
  x, y = _complex_values(dtype), _complex_values(dtype)[::-1].copy()
  for name in ("add", "mul", "div", "abs", "exp", "log", "sqrt", "conj", "real", "sin",
               "tanh", "sign", "pow3", "square"):
    got = np.asarray(_compiled(_COMPLEX_OPS[name][0], x, y))
    want = np.asarray(real_jax.jit(ops[name][0])(x, y))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=_rtol(dtype) * 8, atol=1e-30, err_msg=name)
  np.testing.assert_allclose(_compiled(lambda v: jnp.sum(v, axis=0), x),
                             real_jax.jit(lambda v: real_jax.numpy.sum(v, axis=0))(x),
                             rtol=_rtol(dtype) * 50)


@pytest.mark.parametrize("dtype", [F16, BF16, np.dtype(np.complex64)], ids=str)
def test_data_movement_and_loops(dtype):
  """Gathers, dynamic slices, concatenation and scan bodies on these dtypes
  compile (native steps) and give the NumPy backend's bits."""
  x = RNG.standard_normal((64, 32)).astype(np.float32).astype(dtype)
  idx = np.array([3, 1, 60], np.int32)

  def f(v, i):
    carry, _ = lax.scan(lambda c, r: (c * 0.5 + r, c), v[0], v)
    return (v[i] * 2, lax.dynamic_slice(v, (i[0], 2), (4, 4)) + 1,
            jnp.concatenate([v, v * 2]), carry, v.at[i].set(1))

  for g, w in zip(_compiled(f, x, idx), _numpy_tier(f, x, idx)):
    _same_bits(g, w)


# Native steps written for C's own types must leave these dtypes to NumPy
# (complex orders lexicographically; 16-bit floats are stored as bits).
_NATIVE_ON_NUMPY = {
    "sort": lambda x: jnp.sort(x, axis=1),
    "cumsum": lambda x: jnp.cumsum(x, axis=0),
    "window_sum": lambda x: jax.lax.reduce_window(x, jnp.zeros((), x.dtype), jax.lax.add,
                                                  (2, 2), (1, 1), "VALID"),
}


@pytest.mark.parametrize("name", sorted(_NATIVE_ON_NUMPY))
@pytest.mark.parametrize("dtype", [F16, BF16, np.dtype(np.complex64)], ids=str)
def test_native_steps_give_the_numpy_backends_bits(name, dtype):
  re = RNG.standard_normal((6, 5)) * 3
  x = (re + 1j * np.round(RNG.standard_normal((6, 5)))).astype(dtype) if dtype.kind == "c" \
      else re.astype(np.float32).astype(dtype)
  x[0, :2] = x[0, 2]   # ties (complex: equal real parts too)
  f = _NATIVE_ON_NUMPY[name]
  got = jax.jit(f)(x)
  with config.override("purejax_backend", "numpy"):
    want = jax.jit(f)(x)
  _same_bits(got, want)
