"""Special functions (digamma ... i1e), complex elementwise functions and
extrema, and half-float erf_inv/nextafter compile to C (no NumPy host
step): values against SciPy/NumPy in float64, the eager (NumPy) impls and
real JAX."""
import numpy as np
import pytest
import scipy.special as sps

import purejax as jax
from purejax import lax
from purejax._src import stages
from purejax._src.backends import tier_numerics
from purejax._src.config import config

from conftest import oracle

RNG = np.random.RandomState(0)


def _compiled(f, *args):
  """f's compiled result (C, no host step)."""
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(*args).compile()
    assert stages.host_steps(compiled) == []
    return np.asarray(compiled(*args))


def _grid(*values):
  return [a.ravel() for a in np.meshgrid(*values, indexing="ij")]


def _assert_ulps(got, want, dtype, ulps, atol=0.):
  """got within ``ulps`` ulps of ``dtype`` (or atol) of want; the same NaNs
  and infinities."""
  got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
  inf = np.isinf(want)
  np.testing.assert_array_equal(got[inf], want[inf])
  fin = np.isfinite(want)
  spacing = np.spacing(np.abs(want[fin]).astype(dtype)).astype(np.float64)
  tol = np.maximum(ulps * np.maximum(spacing, np.finfo(dtype).tiny), atol)
  bad = np.abs(got[fin] - want[fin]) > tol
  assert not bad.any(), (got[fin][bad][:5], want[fin][bad][:5])


# -- (a) special functions ------------------------------------------------------------

EDGE = np.array([np.nan, -np.inf, -3., -2.5, -1., -0., 0., 1e-30, 1e-5, 0.5, 1., 1.5, 2.,
                 3., 9.5, 30., 1e4, np.inf])
POS = np.concatenate([np.geomspace(1e-3, 200, 40), [0.5, 1., 2., 10., 20.]])


def _special_cases():
  x1 = np.concatenate([np.linspace(-20, 40, 601), np.geomspace(1e-8, 1e3, 60), EDGE])
  bessel_x = np.concatenate([np.linspace(-60, 60, 601), [1e3, -1e5, 700.], EDGE])
  gam = _grid(np.concatenate([POS, EDGE]), np.concatenate([POS, EDGE]))
  zeta = _grid(np.concatenate([[1.01, 1.5, 2., 3., 4., 7.5, 20., 60.], EDGE]),
               np.concatenate([np.linspace(-4.5, 30, 36), [1e-3, 0.3, 1e3], EDGE]))
  poly = _grid(np.array([0., 1., 2., 3., 5., 10., -1., 1.5, np.nan, np.inf]),
               np.concatenate([np.linspace(-4.7, 30, 48), [1e-3, 1e3], EDGE]))
  ab = np.concatenate([[0.05, 0.5, 1., 2.5, 10., 60.], [0., np.inf, np.nan, -1.]])
  beta = _grid(ab, ab, np.concatenate([np.linspace(0, 1, 21), [1e-6, 1 - 1e-6, -0.1, 1.1,
                                                                np.nan]]))
  return {
      "digamma": (lax.digamma, sps.psi, [x1]),
      "polygamma": (lax.polygamma, sps.polygamma, poly),
      "zeta": (lax.zeta, sps.zeta, zeta),
      "igamma": (lax.igamma, sps.gammainc, gam),
      "igammac": (lax.igammac, sps.gammaincc, gam),
      "igamma_grad_a": (lax.igamma_grad_a, None, gam),
      "random_gamma_grad": (lax.random_gamma_grad, None, gam),
      "betainc": (lax.betainc, sps.betainc, beta),
      "bessel_i0e": (lax.bessel_i0e, sps.i0e, [bessel_x]),
      "bessel_i1e": (lax.bessel_i1e, sps.i1e, [bessel_x]),
  }


SPECIAL = _special_cases()


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_compiles_like_eager(name, dtype, x64):
  f, _, args = SPECIAL[name]
  args = [a.astype(dtype) for a in args]
  got = _compiled(f, *args)
  want = np.asarray(f(*args))   # the NumPy impl (float64 values rounded once)
  assert got.dtype == want.dtype
  # Where the function's condition is poor (near zeros of the result,
  # subtractive cancellation of P/Q), float64 intermediates differ a little.
  _assert_ulps(got, want, dtype, 4 if dtype == np.float32 else 1e5,
               atol=2e-12 if dtype == np.float64 else 1e-30)


@pytest.mark.parametrize("name", sorted(n for n in SPECIAL if SPECIAL[n][1] is not None))
def test_special_float64_against_scipy(name, x64):
  f, ref, args = SPECIAL[name]
  finite = np.all([np.isfinite(a) for a in args], axis=0)
  positive = np.all([a > 0 for a in args[:-1]], axis=0) if len(args) > 1 else True
  keep = finite & positive
  args = [a[keep].astype(np.float64) for a in args]
  if name == "betainc":
    keep = (args[2] >= 0) & (args[2] <= 1)
    args = [a[keep] for a in args]
  got = _compiled(f, *args)
  with np.errstate(all="ignore"):
    want = ref(*args)
  ok = np.isfinite(want) & (np.abs(want) > 1e-300)
  np.testing.assert_allclose(got[ok], want[ok], rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_float32_against_jax(name):
  real = oracle()
  f, _, args = SPECIAL[name]
  args = [a.astype(np.float32) for a in args]
  got = _compiled(f, *args)
  want = np.asarray(real.jit(getattr(real.lax, name))(*args)).astype(np.float64)
  eager = np.asarray(f(*args)).astype(np.float64)
  ok = np.isfinite(want) & np.isfinite(got)
  # XLA's float32 series lose digits where ours (in double) do not, and
  # random_gamma_grad/polygamma differ on purpose in places (see lax.special):
  # the compiled values are as close to JAX's as the eager ones, within
  # float32 rounding.
  slack = 4 * np.spacing(np.abs(want[ok]).astype(np.float32)) + 1e-30
  assert np.all(np.abs(got[ok] - want[ok]) <= np.abs(eager[ok] - want[ok]) + slack)
  assert np.mean(np.isnan(got) == np.isnan(want)) > 0.97


def test_special_functions_stay_off_the_numpy_tier():
  # The C and NumPy values may differ in the last bit: compiled before the
  # first call.
  for name in SPECIAL:
    name = "regularized_incomplete_beta" if name == "betainc" else name
    assert name not in tier_numerics.SAME_IN_BOTH
    assert name not in tier_numerics.SAME_IN_BOTH_FLOAT32
  jaxpr = jax.make_jaxpr(lax.digamma)(np.float32(1.5)).jaxpr
  assert not tier_numerics.numpy_tier_exact(jaxpr)


# -- (b) complex elementwise functions and extrema ----------------------------------------

_PARTS = np.array([0., -0., 1., -1., 0.5, 2., -3.5, 1e10, -1e-10, np.inf, -np.inf, np.nan])
with np.errstate(all="ignore"):
  _Z = np.concatenate([(_PARTS[:, None] + 1j * _PARTS[None, :]).ravel(),
                       RNG.randn(300) * 3 + 1j * RNG.randn(300) * 3])
COMPLEX_UNARY = ["tan", "asin", "acos", "atan", "asinh", "acosh", "atanh", "exp2", "rsqrt",
                 "logistic"]
_NUMPY = {"tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
          "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "exp2": np.exp2,
          "rsqrt": lambda z: 1 / np.sqrt(z), "logistic": lambda z: 1 / (1 + np.exp(-z))}


def _same_complex(got, want):
  for part in (np.real, np.imag):
    g, w = part(got), part(want)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    np.testing.assert_array_equal(g[~np.isnan(w)], w[~np.isnan(w)])


def _complex_args(name, dtype):
  z = _Z.astype(dtype)
  return (z, z[::-1].copy()) if name in ("max", "min") else (z,)


@pytest.mark.parametrize("name", COMPLEX_UNARY + ["max", "min"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_compiles_like_numpy(name, dtype, x64):
  args = _complex_args(name, dtype)
  got = _compiled(getattr(lax, name), *args)
  assert got.dtype == dtype
  _same_complex(got, np.asarray(getattr(lax, name)(*args)))   # the NumPy impl, bit for bit
  if name in _NUMPY:   # and NumPy's complex128 values, within float rounding
    with np.errstate(all="ignore"):
      want = _NUMPY[name](args[0].astype(np.complex128))
    # (Large arguments of periodic functions: the float32 rounding of z
    # itself moves the result arbitrarily.)
    ok = np.isfinite(want) & (np.abs(want) < 1e30) & (np.abs(args[0]) < 100)
    tol = 1e-5 if dtype == np.complex64 else 1e-14
    np.testing.assert_allclose(got[ok], want[ok], rtol=tol, atol=tol * 1e-3)


def test_complex_max_min_are_lexicographic(x64):
  a = np.array([1 + 5j, 2 + 0j, 3 + 1j, 3 + 2j, complex(np.nan, 0), 1 + 1j])
  b = np.array([2 + 0j, 1 + 5j, 3 + 2j, 3 + 1j, 1 + 1j, complex(0, np.nan)])
  # XLA's rule: x only where strictly first, so a NaN comparison gives y.
  _same_complex(_compiled(lax.max, a, b),
                np.array([2 + 0j, 2 + 0j, 3 + 2j, 3 + 2j, 1 + 1j, 1 + 1j]))
  _same_complex(_compiled(lax.min, a, b),
                np.array([1 + 5j, 1 + 5j, 3 + 1j, 3 + 1j, 1 + 1j, complex(0, np.nan)]))


@pytest.mark.parametrize("name", COMPLEX_UNARY + ["max", "min"])
def test_complex_against_jax(name):
  real = oracle()
  z = (RNG.randn(300) * 2 + 1j * RNG.randn(300) * 2).astype(np.complex64)
  args = (z, z[::-1].copy()) if name in ("max", "min") else (z,)
  got = _compiled(getattr(lax, name), *args)
  want = np.asarray(real.jit(getattr(real.lax, name))(*args))
  np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)


# -- (c) erf_inv on half floats ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_erf_inv_compiles(dtype):
  import ml_dtypes  # noqa: F401  (bfloat16)
  x = np.concatenate([np.linspace(-1, 1, 801), [0., -0., 1., -1., 1.5, np.nan]]).astype(dtype)
  got = _compiled(lax.erf_inv, x)
  want = np.asarray(lax.erf_inv(x))   # float32 numerics, rounded once
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
  with np.errstate(all="ignore"):
    exact = sps.erfinv(x.astype(np.float64))
  ok = np.isfinite(exact)
  np.testing.assert_allclose(got[ok].astype(np.float64), exact[ok],
                             rtol={"float16": 2 ** -10, "bfloat16": 2 ** -7}[dtype], atol=0)


# -- complex reduce_max / reduce_min: XLA's fold order ------------------------

def _complex_with_specials(shape, rng):
  re = rng.choice([0., -0., 1., -1., 2., np.nan, np.inf, -np.inf], shape).astype(np.float32)
  im = rng.choice([0., -0., 1., -1., np.nan, -np.inf], shape).astype(np.float32)
  out = np.empty(shape, np.complex64)
  out.real, out.imag = re, im
  return out


def _same_bits(got, want):
  g, w = np.atleast_1d(np.asarray(got)), np.atleast_1d(np.asarray(want))
  assert g.dtype == w.dtype and g.shape == w.shape
  part = np.finfo(w.dtype).dtype
  gf, wf = g.view(part), w.view(part)
  nan = np.isnan(wf)
  np.testing.assert_array_equal(np.isnan(gf), nan)
  np.testing.assert_array_equal(np.signbit(gf[~nan]), np.signbit(wf[~nan]))
  np.testing.assert_array_equal(gf[~nan], wf[~nan])


_EXTREMUM_CASES = ([((n,), None) for n in (1, 2, 3, 17, 32, 33, 40, 64, 65, 100, 129)]
                   + [((3, 40), 0), ((3, 40), 1), ((70, 3), 0), ((5, 7, 9), (0, 2)),
                      ((50, 50), None), ((2, 3, 70), (1, 2))])


@pytest.mark.parametrize("name", ["max", "min"])
def test_complex_max_min_reductions_with_nans_match_jax(name):
  real = oracle()
  import jax.numpy as real_jnp
  import purejax.numpy as jnp
  rng = np.random.default_rng(11)
  for shape, axes in _EXTREMUM_CASES:
    for _ in range(4):   # 17 shapes x 4: 68 random cases
      x = _complex_with_specials(shape, rng)
      want = np.asarray(getattr(real_jnp, name)(x, axis=axes))
      _same_bits(getattr(jnp, name)(x, axis=axes), want)
      _same_bits(jax.jit(lambda v: getattr(jnp, name)(v, axis=axes))(x), want)


def test_complex_max_of_one_element_is_that_element():
  import purejax.numpy as jnp
  x = np.array([complex(-np.inf, -1)], np.complex64)   # below max's identity -inf+0j
  _same_bits(jnp.max(x), x[0])
  _same_bits(jnp.max(np.array([complex(-np.inf, -1), complex(-np.inf, -2)], np.complex64)),
             np.complex64(complex(-np.inf, 0)))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_max_min_reductions_compile_bit_for_bit(name, dtype):
  # Reductions XLA folds as one block (each reduced axis <= 32) compile to C,
  # bit for bit the NumPy reference (itself checked against JAX above).
  rng = np.random.default_rng(3)
  reduce = getattr(lax, name)
  for shape, axes in [((1,), (0,)), ((2,), (0,)), ((32,), (0,)), ((7, 5), (1,)), ((7, 5), (0,)),
                      ((4, 6, 3), (0, 2)), ((300, 9), (1,)), ((9, 300), (0,)), ((3, 1), (1,))]:
    x = _complex_with_specials(shape, rng).astype(dtype)
    x[..., 0] = complex(-np.inf, -1) if name == "reduce_max" else complex(np.inf, 1)
    _same_bits(_compiled(lambda v: reduce(v, axes), x), reduce(x, axes))
    with np.errstate(invalid="ignore"):
      _same_bits(_compiled(lambda v: reduce(v * 2 + 1, axes), x), reduce(x * 2 + 1, axes))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_clamp_compiles_as_jax(dtype):
  real = oracle()
  rng = np.random.default_rng(4)
  x = _complex_with_specials((200,), rng).astype(dtype)
  lo, hi = _complex_with_specials((200,), rng).astype(dtype), _complex_with_specials((200,), rng)
  hi = hi.astype(dtype)
  for args in [(lo, x, hi), (dtype(1 + 2j), x, dtype(2 + 1j)), (dtype(complex(np.nan, 0)), x, hi),
               (lo, x, dtype(complex(1, np.nan))), (x, x[::-1].copy(), lo)]:
    want = np.asarray(real.lax.clamp(*args))
    _same_bits(lax.clamp(*args), want)
    _same_bits(_compiled(lax.clamp, *args), want)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_nextafter_compiles_as_jax(dtype):
  import ml_dtypes
  real = oracle()
  fin = ml_dtypes.finfo(dtype)
  specials = np.array([0., -0., 1., -1., np.inf, -np.inf, np.nan, float(fin.max), -float(fin.max),
                       float(fin.tiny), float(fin.smallest_subnormal), 2.5, -3.75], np.float32)
  a, b = _grid(specials, specials)
  rng = np.random.default_rng(6)
  a = np.concatenate([a, rng.standard_normal(300) * 100]).astype(dtype)
  b = np.concatenate([b, rng.standard_normal(300) * 100]).astype(dtype)
  want = np.asarray(real.lax.nextafter(a, b)).view(np.uint16)
  np.testing.assert_array_equal(np.asarray(lax.nextafter(a, b)).view(np.uint16), want)
  np.testing.assert_array_equal(_compiled(lax.nextafter, a, b).view(np.uint16), want)
