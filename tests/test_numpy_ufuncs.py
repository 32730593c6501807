"""The newer jnp elementwise functions (copysign, frexp, ldexp, gcd, hypot,
logaddexp, sinc, i0, ...) against NumPy (special values included) and JAX
(dtypes, weak types, errors), their derivatives, and the ``jnp.ufunc``
objects (reduce/accumulate/outer/at/reduceat, frompyfunc)."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.api import jit
from purejax._src.array import Array
from purejax._src.vmap import vmap
from purejax.test_util import check_grads

SPECIAL = np.array([0., -0., 1.5, -2.5, np.inf, -np.inf, np.nan, 1e-40, -3e-45, 3e38, 0.3,
                    -7., 0.5, 1e-30], np.float32)
OTHER = np.array([1., -1., -0., 2., 3., np.nan, -np.inf, 0., 5., 0.5, -0.3, 7., -0.5, 2.],
                 np.float32)
INTS = np.array([0, -3, 4, 12, -18, 7, 0, 100, 2 ** 20, -5, 9, 1, -128, 64], np.int32)
INTS2 = np.array([0, 6, -6, 8, 27, 7, 5, 75, 2 ** 10, 0, -3, 1, -128, 48], np.int32)


def _np_ldexp(x, n):
  return np.ldexp(x, n)


NUMPY_CASES = [
    ("copysign", lambda m: m.copysign(SPECIAL, OTHER)),
    ("signbit", lambda m: m.signbit(SPECIAL)),
    ("frexp", lambda m: m.frexp(SPECIAL)),
    ("ldexp", lambda m: m.ldexp(SPECIAL, INTS2 // 8)),
    ("ldexp_range", lambda m: m.ldexp(np.float32(0.75), np.arange(-160, 140, 7, dtype=np.int32))),
    ("spacing", lambda m: m.spacing(SPECIAL[SPECIAL != 0])),
    # Not infinities and whole numbers, whose fractions JAX computes as x - whole
    # (NaN, +0.0) where NumPy gives +-0.0 (test_wrong_answers_fuzzed checks JAX's).
    ("modf", lambda m: m.modf(SPECIAL[np.isfinite(SPECIAL) & (SPECIAL != np.trunc(SPECIAL))])),
    ("nan_to_num", lambda m: m.nan_to_num(SPECIAL, nan=-1., posinf=9.)),
    ("hypot", lambda m: m.hypot(SPECIAL, OTHER)),
    ("heaviside", lambda m: m.heaviside(SPECIAL, OTHER)),
    ("logaddexp", lambda m: m.logaddexp(SPECIAL, OTHER)),
    ("logaddexp2", lambda m: m.logaddexp2(SPECIAL, OTHER)),
    ("fmax", lambda m: m.fmax(SPECIAL, OTHER)),
    ("fmin", lambda m: m.fmin(OTHER, SPECIAL)),
    ("sinc", lambda m: m.sinc(SPECIAL[np.isfinite(SPECIAL)])),
    ("i0", lambda m: m.i0(np.array([0., 0.5, -3., 7.9, 8.1, 20., -50., 80.], np.float32))),
    ("gcd", lambda m: m.gcd(INTS, INTS2)),
    ("lcm", lambda m: m.lcm(INTS[:-2], INTS2[:-2])),
    ("gcd_int8_min", lambda m: m.gcd(np.int8([-128, -128, 6]), np.int8([-128, 0, -4]))),
    ("bitwise_count", lambda m: m.bitwise_count(INTS)),
    ("isposinf", lambda m: m.isposinf(SPECIAL)),
    ("isneginf", lambda m: m.isneginf(SPECIAL)),
    ("angle", lambda m: m.angle(OTHER + 1j * SPECIAL[::-1], deg=True)),
]


@pytest.mark.parametrize("name,fun", NUMPY_CASES, ids=[c[0] for c in NUMPY_CASES])
def test_matches_numpy(name, fun):
  with warnings.catch_warnings(), np.errstate(all="ignore"):
    warnings.simplefilter("ignore")
    ours, theirs = fun(jnp), fun(np)
  for a, b in zip(ours if isinstance(ours, tuple) else (ours,),
                  theirs if isinstance(theirs, tuple) else (theirs,)):
    a = np.asarray(a)
    if b.dtype.kind == "f":
      b = b.astype(np.float32)
      np.testing.assert_allclose(a, b, rtol=2e-6, atol=0, equal_nan=True)
      assert np.array_equal(np.signbit(a[a == 0]), np.signbit(b[b == 0]))
    else:
      np.testing.assert_array_equal(a, b.astype(a.dtype))


def test_float64_special_functions(x64):
  x = np.linspace(-30, 30, 61)
  np.testing.assert_allclose(jnp.i0(x), np.i0(x), rtol=1e-13)
  np.testing.assert_allclose(jnp.sinc(x / 7), np.sinc(x / 7), rtol=1e-13, atol=1e-16)
  m, e = jnp.frexp(np.array([1e-310, -3.5, 2.0 ** 1000]))
  np.testing.assert_array_equal(m, [np.frexp(1e-310)[0], -0.875, 0.5])
  np.testing.assert_array_equal(e, [np.frexp(1e-310)[1], 2, 1001])
  np.testing.assert_array_equal(jnp.ldexp(0.75, np.array([-1074, 1024, -1080])),
                                np.ldexp(0.75, [-1074, 1024, -1080]))


ORACLE_CASES = [
    "jnp.copysign(3, -1)", "jnp.copysign(F, I)", "jnp.signbit(I)", "jnp.signbit(B)",
    "jnp.signbit(3.)", "jnp.frexp(I)", "jnp.frexp(H)", "jnp.ldexp(3., 2)", "jnp.ldexp(F, B)",
    "jnp.ldexp(H, I)", "jnp.spacing(3.)", "jnp.spacing(H)", "jnp.modf(I)", "jnp.nan_to_num(I)",
    "jnp.nan_to_num(C)", "jnp.nan_to_num(H)", "jnp.gcd(I, U)", "jnp.lcm(I, 6)", "jnp.gcd(U, U)",
    "jnp.heaviside(I, 0.5)", "jnp.hypot(3, 4)", "jnp.hypot(H, F)", "jnp.logaddexp(I, 1)",
    "jnp.logaddexp(C, C)", "jnp.logaddexp2(F, 2.)", "jnp.fmax(I, F)", "jnp.fmin(I, 3)",
    "jnp.sinc(I)", "jnp.sinc(0.)", "jnp.i0(I)", "jnp.i0(H)", "jnp.isposinf(I)",
    "jnp.isneginf(3.)", "jnp.isreal(C)", "jnp.isreal(3)", "jnp.iscomplex(F)",
    "jnp.isrealobj(C)", "jnp.iscomplexobj(C)", "jnp.iscomplexobj(3)", "jnp.angle(C)",
    "jnp.angle(I, deg=True)", "jnp.angle(3.)", "jnp.bitwise_count(I)", "jnp.bitwise_count(3)",
    "jnp.bitwise_count(U)", "jnp.float_power(I, 2)", "jnp.float_power(H, F)",
]
ERROR_CASES = [
    "jnp.copysign(C, C)", "jnp.frexp(C)", "jnp.ldexp(F, F)", "jnp.ldexp(C, I)",
    "jnp.spacing(C)", "jnp.gcd(F, I)", "jnp.lcm(B, B)", "jnp.hypot(C, C)", "jnp.signbit(C)",
    "jnp.isposinf(C)", "jnp.i0(C)", "jnp.modf(F, out=F)", "jnp.bitwise_count(F)",
]


def _env(module):
  rng = np.random.RandomState(1)
  arrays = dict(F=rng.randn(5).astype(np.float32), I=rng.randint(-9, 9, 5).astype(np.int32),
                U=rng.randint(0, 9, 5).astype(np.uint8), B=rng.rand(5) > 0.5,
                H=rng.randn(5).astype(np.float16),
                C=(rng.randn(5) + 1j * rng.randn(5)).astype(np.complex64))
  env = {k: module.asarray(v) for k, v in arrays.items()}
  env["jnp"] = module
  return env


def _assert_like(ours, theirs):
  if isinstance(theirs, (tuple, list)):
    for a, b in zip(ours, theirs):
      _assert_like(a, b)
    return
  if isinstance(theirs, bool):
    assert ours is theirs
    return
  assert isinstance(ours, Array)
  assert (ours.dtype, ours.weak_type, ours.shape) == (theirs.dtype, theirs.weak_type,
                                                      theirs.shape), (ours, theirs)
  a, b = np.asarray(ours), np.asarray(theirs)
  if a.dtype.kind in "fc":
    np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=2e-3,
                               atol=1e-6, equal_nan=True)
  else:
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("expr", ORACLE_CASES)
def test_matches_jax(expr):
  pytest.importorskip("jax")
  import jax.numpy as jjnp
  _assert_like(eval(expr, _env(jnp)), eval(expr, _env(jjnp)))


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_errors_match_jax(expr):
  pytest.importorskip("jax")
  import jax.numpy as jjnp
  with pytest.raises(Exception) as theirs:
    eval(expr, _env(jjnp))
  with pytest.raises(type(theirs.value)):
    eval(expr, _env(jnp))


GRAD_CASES = [
    ("logaddexp", lambda x: jnp.logaddexp(x, x[::-1] * 2)),
    ("logaddexp2", lambda x: jnp.logaddexp2(x, 1.5)),
    ("hypot", lambda x: jnp.hypot(x, x[::-1] + 1)),
    ("sinc", jnp.sinc), ("i0", jnp.i0),
    ("copysign", lambda x: jnp.copysign(x, x - 1)),
    ("ldexp", lambda x: jnp.ldexp(x, 3)),
    ("frexp", lambda x: jnp.frexp(x * 5)[0]),
    ("modf", lambda x: jnp.modf(x * 3)[0]),
    ("nan_to_num", jnp.nan_to_num),
    ("fmax", lambda x: jnp.fmax(x, 1.0)),
]


@pytest.mark.parametrize("name,fun", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads(x64, name, fun):
  x = np.array([0.3, -1.1, 2.2, 0.7, -3.4])
  check_grads(fun, (x,), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_derivatives_at_special_points():
  # sinc's Maclaurin series: 1 - (pi x)^2 / 6 + ...  JAX's i0 rule zeroes
  # every derivative at exactly 0 (the true second one is 1/2): so does ours.
  derivatives = {jnp.sinc: [0., -np.pi ** 2 / 3, 0.], jnp.i0: [0., 0., 0.]}
  for fun, expected in derivatives.items():
    for value in expected:
      fun = purejax.grad(fun)
      np.testing.assert_allclose(fun(0.), value, rtol=1e-6, atol=1e-6)
  # logaddexp's slope is a sigmoid, also at infinities (as JAX's custom JVP).
  x = np.array([1., -np.inf, np.inf, 0.], np.float32)
  ours = purejax.grad(lambda x: jnp.logaddexp(x, 0.).sum())(x)
  np.testing.assert_allclose(ours, [1 / (1 + np.exp(-1.)), 0., 1., 0.5], rtol=1e-6)


def test_jit_and_vmap():
  xs = np.random.RandomState(2).randn(3, 4).astype(np.float32)
  ints = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
  cases = [(jnp.i0, (xs,)), (lambda x: jnp.frexp(x)[1], (xs,)), (jnp.ldexp, (xs, ints)),
           (jnp.gcd, (ints, ints * 3 + 1)), (jnp.signbit, (xs,)), (jnp.bitwise_count, (ints,)),
           (jnp.spacing, (xs,))]
  for fun, args in cases:
    # Compiled transcendental functions may differ from eager ones by an ulp.
    np.testing.assert_allclose(jit(fun)(*args), fun(*args), rtol=1e-6, atol=0)
    expected = np.stack([np.asarray(fun(*[a[i] for a in args])) for i in range(3)])
    np.testing.assert_allclose(vmap(fun)(*args), expected, rtol=1e-6, atol=0)


# ---------------------------------------------------------------------------
# jnp.ufunc objects

def test_jnp_ufunc_objects():
  x = jnp.arange(6).reshape(2, 3)
  assert isinstance(jnp.add, jnp.ufunc) and repr(jnp.add) == "<jnp.ufunc 'add'>"
  assert (jnp.add.nin, jnp.add.nout, jnp.add.identity) == (2, 1, 0)
  assert jnp.logaddexp.identity == -np.inf and jnp.subtract.identity is None
  assert jnp.add.reduce(x).tolist() == [3, 5, 7]
  assert jnp.multiply.accumulate(x, axis=1).tolist() == [[0, 0, 0], [3, 12, 60]]
  assert jnp.maximum.reduce(x, axis=None, keepdims=True).tolist() == [[5]]
  assert jnp.bitwise_or.reduce(x, axis=1).tolist() == [3, 7]
  assert jnp.logical_xor.reduce(x).tolist() == [True, False, False]
  assert jnp.subtract.outer(x[0], x[1]).tolist() == [[-3, -4, -5], [-2, -3, -4], [-1, -2, -3]]
  idx = jnp.array([0, 0, 2])
  assert jnp.add.at(x[0], idx, 10, inplace=False).tolist() == [20, 1, 12]
  assert jnp.add.reduceat(jnp.arange(8), jnp.array([0, 4, 1, 5])).tolist() == [6, 4, 10, 18]
  np.testing.assert_allclose(jnp.logaddexp.reduce(jnp.arange(3.)),
                             np.log(np.exp(np.arange(3.)).sum()), rtol=1e-6)
  with pytest.raises(NotImplementedError, match="cannot operate inplace"):
    jnp.add.at(x, 0, 1)
  with pytest.raises(ValueError, match="does not have an identity"):
    jnp.maximum.reduce(x, where=x > 1)
  with pytest.raises(ValueError, match="integer argument required"):
    jnp.bitwise_and.reduce(jnp.ones(3))
  assert jit(jnp.add)(x, x).tolist() == (2 * np.arange(6).reshape(2, 3)).tolist()


def test_frompyfunc_generic_methods_match_numpy():
  f = jnp.frompyfunc(lambda a, b: a * b + 1, 2, 1)
  g = np.frompyfunc(lambda a, b: a * b + 1, 2, 1)
  x = np.arange(6, dtype=np.int32).reshape(2, 3)
  np.testing.assert_array_equal(f(x, 2), g(x, 2).astype(np.int32))
  np.testing.assert_array_equal(f.reduce(x), g.reduce(x).astype(np.int32))
  np.testing.assert_array_equal(f.reduce(x, axis=None), g.reduce(x.ravel()))
  np.testing.assert_array_equal(f.accumulate(x, axis=1), g.accumulate(x, axis=1).astype(int))
  np.testing.assert_array_equal(f.outer(x[0], x[1]), g.outer(x[0], x[1]).astype(int))
  expected = x.astype(object)
  g.at(expected, (np.array([0, 0]), np.array([1, 1])), 3)
  np.testing.assert_array_equal(
      f.at(x, (jnp.array([0, 0]), jnp.array([1, 1])), 3, inplace=False), expected.astype(int))
  np.testing.assert_array_equal(f.reduceat(np.arange(8), jnp.array([0, 4, 1, 5])),
                                g.reduceat(np.arange(8), [0, 4, 1, 5]).astype(int))
  h = jnp.frompyfunc(lambda a: (a, -a), 1, 2)
  assert [o.tolist() for o in h(x[0])] == [[0, 1, 2], [0, -1, -2]]
