"""Special-function primitives (erf family, gamma family, Bessel, betainc),
reduce_precision and bitcast_convert_type: values against JAX (float32) and
SciPy (float64), edge cases, derivatives, jit/vmap, errors, printing."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.test_util import check_grads

from conftest import oracle

EDGES = np.array([0., -0., 1., -1., 2., -2.5, 0.5, 1e-30, 30., 1e10, np.inf, -np.inf, np.nan],
                 np.float32)


def _pairs(values):
  a, b = np.meshgrid(values, values, indexing="ij")
  return a.ravel(), b.ravel()


def _uniform(lo, hi, n=400, seed=0):
  return np.random.RandomState(seed).uniform(lo, hi, n).astype(np.float32)


def _assert_close(ours, theirs, rtol, atol=0.):
  ours, theirs = np.asarray(ours), np.asarray(theirs)
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
  np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


# (name, arity, sample domain per argument, float32 rtol, atol) against JAX.
CASES = [
    ("erf", 1, [(-5, 5)], 0, 0),
    ("erfc", 1, [(-10, 10)], 3e-7, 0),
    ("erf_inv", 1, [(-1, 1)], 3e-7, 0),
    ("lgamma", 1, [(-20, 40)], 2e-5, 2e-6),
    ("digamma", 1, [(-20, 40)], 1e-5, 1e-5),
    ("bessel_i0e", 1, [(-50, 50)], 1e-6, 0),
    ("bessel_i1e", 1, [(-50, 50)], 2e-6, 0),
    ("igamma", 2, [(0.01, 30), (0, 40)], 5e-5, 1e-6),
    ("igammac", 2, [(0.01, 30), (0, 40)], 5e-5, 1e-6),
    ("igamma_grad_a", 2, [(0.05, 30), (0.01, 40)], 5e-5, 1e-6),
    ("random_gamma_grad", 2, [(0.5, 30), (0.5, 40)], 1e-4, 1e-6),
    ("zeta", 2, [(1.01, 20), (0.01, 20)], 2e-6, 0),
    ("polygamma", 2, [(0, 6), (0.01, 20)], 1e-5, 1e-6),
    ("betainc", 3, [(0.05, 20), (0.05, 20), (0, 1)], 3e-4, 1e-6),
]


_GRID = np.array([np.nan, -np.inf, -2., -1.5, -1., -0., 0., 1e-30, 0.5, 1., 1.5, 2., 3., 30.,
                  np.inf], np.float32)


@pytest.mark.parametrize("name,arity,domain,rtol,atol", CASES, ids=[c[0] for c in CASES])
def test_float32_matches_jax(name, arity, domain, rtol, atol):
  jax = oracle()
  args = [_uniform(lo, hi, seed=i) for i, (lo, hi) in enumerate(domain)]
  if name == "polygamma":
    args[0] = np.floor(args[0])
  edges = _pairs(_GRID) if arity == 2 else ()
  args = [np.concatenate([a, e]) for a, e in zip(args, edges)] if edges else args
  ours, theirs = getattr(lax, name)(*args), getattr(jax.lax, name)(*args)
  if name == "erf":   # XLA's float32 rational approximation, bit for bit
    np.testing.assert_array_equal(np.asarray(ours).view(np.int32),
                                  np.asarray(theirs).view(np.int32))
  if arity == 2:
    # On the edge grid: the same nan pattern; values where JAX's float32
    # series do not give up (tiny a, large a with x < 1, tiny results),
    # where ours are the accurate ones.
    a, x = args
    theirs = np.asarray(theirs)
    np.testing.assert_array_equal(np.isnan(np.asarray(ours)), np.isnan(theirs))
    keep = ~((np.abs(a) < 1e-20) | ((a >= 30) & (x < 1)) | (np.abs(theirs) < 1e-20))
    ours, theirs = np.asarray(ours)[keep], theirs[keep]
  _assert_close(ours, theirs, rtol, atol)


@pytest.mark.parametrize("name", ["erf", "erfc", "erf_inv", "lgamma", "digamma",
                                  "bessel_i0e", "bessel_i1e"])
def test_unary_edge_cases_match_jax(name):
  jax = oracle()
  x = EDGES if name != "erf_inv" else np.array([0., -0., 1., -1., 0.5, 2., np.nan], np.float32)
  ours, theirs = getattr(lax, name)(x), getattr(jax.lax, name)(x)
  _assert_close(ours, theirs, 2e-6, 1e-6)
  finite = np.isfinite(np.asarray(theirs))
  np.testing.assert_array_equal(np.signbit(np.asarray(ours)[finite]),
                                np.signbit(np.asarray(theirs)[finite]))


def test_betainc_edge_cases_match_jax():
  jax = oracle()
  values = np.array([np.nan, -1., 0., 0.5, 1., 2., np.inf], np.float32)
  a, b, x = (g.ravel() for g in np.meshgrid(values, values, np.array(
      [np.nan, -0.1, 0., 0.3, 1., 1.1], np.float32), indexing="ij"))
  _assert_close(lax.betainc(a, b, x), jax.lax.betainc(a, b, x), 1e-5, 1e-6)


def test_float64_against_scipy(x64):
  special = pytest.importorskip("scipy.special")
  rng = np.random.RandomState(0)
  u = lambda lo, hi: rng.uniform(lo, hi, 300)
  checks = [
      (lax.erf, special.erf, [u(-6, 6)], 1e-15),
      (lax.erfc, special.erfc, [u(-6, 26)], 1e-14),
      (lax.erf_inv, special.erfinv, [u(-1, 1)], 1e-14),
      (lax.lgamma, special.gammaln, [u(0.01, 100)], 1e-13),
      (lax.digamma, special.digamma, [u(0.01, 100)], 1e-13),
      (lax.bessel_i0e, special.i0e, [u(-100, 100)], 1e-14),
      (lax.bessel_i1e, special.i1e, [u(-100, 100)], 1e-14),
      (lax.igamma, special.gammainc, [u(0.01, 50), u(0, 60)], 1e-13),
      (lax.igammac, special.gammaincc, [u(0.01, 50), u(0, 60)], 1e-13),
      (lax.zeta, special.zeta, [u(1.01, 30), u(0.01, 30)], 1e-13),
      (lax.polygamma, special.polygamma, [np.floor(u(0, 8)), u(0.01, 30)], 1e-12),
      (lax.betainc, special.betainc, [u(0.05, 30), u(0.05, 30), u(0, 1)], 1e-12),
  ]
  for ours, ref, args, rtol in checks:
    out = ours(*args)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, ref(*args), rtol=rtol, atol=1e-300, err_msg=str(ours))
  # zeta at a negative non-integer q (integer s) and polygamma there.
  np.testing.assert_allclose(lax.zeta(np.array([2., 3.]), np.array([-1.5, -7.25])),
                             special.zeta([2., 3.], [-1.5, -7.25]), rtol=1e-12)


def test_igamma_grad_a_against_finite_differences(x64):
  special = pytest.importorskip("scipy.special")
  a = np.array([0.05, 0.7, 1., 3., 30., 200.])
  x = np.array([1e-4, 1.3, 0.2, 6., 25., 210.])
  h = 1e-6 * a
  num = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
  np.testing.assert_allclose(lax.igamma_grad_a(a, x), num, rtol=1e-6)


def test_half_precision_goes_through_float32():
  jax = oracle()
  x = _uniform(-4, 4).astype(np.float16)
  for name in ("erf", "erfc", "lgamma"):
    ours = getattr(lax, name)(x)
    assert ours.dtype == np.float16
    np.testing.assert_allclose(np.asarray(ours, np.float32),
                               np.asarray(getattr(jax.lax, name)(x), np.float32), rtol=1e-3,
                               atol=1e-3)


UNARY_GRADS = [("erf", (-2, 2)), ("erfc", (-2, 2)), ("erf_inv", (-0.9, 0.9)),
               ("lgamma", (0.5, 5)), ("digamma", (0.5, 5)), ("bessel_i0e", (0.2, 5)),
               ("bessel_i1e", (0.2, 5))]


@pytest.mark.parametrize("name,domain", UNARY_GRADS, ids=[c[0] for c in UNARY_GRADS])
def test_unary_gradients(name, domain, x64):
  x = np.random.RandomState(0).uniform(*domain, 4)
  check_grads(getattr(lax, name), (x,), order=2 if name != "digamma" else 1,
              modes=("fwd", "rev"))


def test_binary_gradients(x64):
  rng = np.random.RandomState(1)
  a, x = rng.uniform(0.5, 4, 4), rng.uniform(0.5, 4, 4)
  check_grads(lax.igamma, (a, x), order=1, modes=("fwd", "rev"), rtol=1e-5)
  check_grads(lax.igammac, (a, x), order=1, modes=("fwd", "rev"), rtol=1e-5)
  check_grads(lambda x: lax.polygamma(np.full(4, 2.), x), (x,), order=1, modes=("fwd", "rev"))
  check_grads(lambda x: lax.betainc(a, a + 1, x / 5), (x,), order=1, modes=("fwd", "rev"))


def test_bessel_i1e_gradient_at_zero():
  np.testing.assert_allclose(purejax.grad(lax.bessel_i1e)(0.), 0.5)
  np.testing.assert_allclose(purejax.grad(lax.bessel_i0e)(0.), 0.)


def test_gradients_that_are_not_supported():
  with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
    purejax.grad(lambda m: lax.polygamma(m, 2.))(1.)
  with pytest.raises(ValueError, match="Betainc gradient with respect to a and b"):
    purejax.grad(lambda a: lax.betainc(a, 2., .5))(1.)
  for name in ("igamma_grad_a", "zeta", "random_gamma_grad"):
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}'"):
      purejax.grad(lambda x: getattr(lax, name)(x, 2.))(3.)


@pytest.mark.parametrize("name,arity", [("erf", 1), ("lgamma", 1), ("igamma", 2),
                                        ("betainc", 3), ("bessel_i1e", 1)])
def test_jit_vmap_dtype_and_weak_type(name, arity):
  f = getattr(lax, name)
  args = [jnp.asarray(_uniform(0.1, 0.9, 6, seed=i).reshape(2, 3)) for i in range(arity)]
  out = f(*args)
  assert out.dtype == np.float32 and out.shape == (2, 3) and not out.weak_type
  # Compiled erf/lgamma are glibc's: within 2 ulp of the eager (SciPy) values.
  np.testing.assert_allclose(purejax.jit(f)(*args), out, rtol=2.5e-7, atol=0)
  np.testing.assert_array_equal(purejax.vmap(f)(*args), jnp.stack([f(*a) for a in zip(*args)]))
  np.testing.assert_array_equal(purejax.vmap(f, in_axes=(1,) + (None,) * (arity - 1))(
      args[0], *[a[:, 0] for a in args[1:]]),
      jnp.stack([f(args[0][:, i], *[a[:, 0] for a in args[1:]]) for i in range(3)]))
  assert f(*([0.5] * arity)).weak_type


@pytest.mark.parametrize("call,err,msg", [
    (lambda: lax.erf(1), TypeError, "erf does not accept dtype int32"),
    (lambda: lax.igamma(1., 2), TypeError, "igamma does not accept dtype int32 at position 1"),
    (lambda: lax.igamma(jnp.float32(1), jnp.float16(2)), TypeError,
     "igamma requires arguments to have the same dtypes"),
    (lambda: lax.lgamma(jnp.ones(2, jnp.complex64)), TypeError, "lgamma does not accept"),
    (lambda: lax.zeta(jnp.ones(2), jnp.ones(3)), TypeError, "incompatible shapes"),
])
def test_errors(call, err, msg):
  with pytest.raises(err, match=msg):
    call()


def test_printed_jaxprs_match_jax():
  jax = oracle()
  x = np.float32(0.5)
  for name, arity in (("igamma", 2), ("betainc", 3), ("polygamma", 2), ("zeta", 2)):
    args = (x,) * arity
    assert (str(purejax.make_jaxpr(getattr(lax, name))(*args))
            == str(jax.make_jaxpr(getattr(jax.lax, name))(*args)))
  for name in ("erf", "erf_inv", "lgamma", "digamma", "bessel_i0e"):
    ours = purejax.make_jaxpr(purejax.grad(getattr(lax, name)))(x)
    theirs = jax.make_jaxpr(jax.grad(getattr(jax.lax, name)))(x)
    assert str(ours) == str(theirs), name


# -- reduce_precision -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_reduce_precision_matches_jax_bits(dtype):
  jax = oracle()
  import ml_dtypes
  from purejax._src.config import config
  dtype = np.dtype(getattr(ml_dtypes, dtype, None) or dtype)
  utype = np.dtype(f"u{dtype.itemsize}")
  bits = np.random.RandomState(0).randint(0, 2 ** min(8 * dtype.itemsize, 31), 600)
  x = np.concatenate([bits.astype(utype).view(dtype),
                      np.array([0, -0., 1, 1.5, np.inf, -np.inf, np.nan, 65504], dtype)])
  wide = dtype.itemsize == 8
  for e, m in [(5, 10), (8, 7), (8, 23), (11, 52), (4, 3), (2, 0), (1, 0), (15, 60)]:
    with jax.enable_x64(wide):
      theirs = np.asarray(jax.lax.reduce_precision(x, e, m))
    with config.override("jax_enable_x64", wide):
      ours = np.asarray(lax.reduce_precision(x, e, m))
    assert ours.dtype == theirs.dtype == dtype
    with np.errstate(invalid="ignore"):
      nan = np.isnan(theirs.astype(np.float64))
      np.testing.assert_array_equal(np.isnan(ours.astype(np.float64)), nan)
    np.testing.assert_array_equal(ours.view(utype)[~nan], theirs.view(utype)[~nan])


def test_reduce_precision_rules():
  x = jnp.array([1.1, 2.5e-3, 70000., -3.3])
  np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10),
                                x.astype(jnp.float16).astype(jnp.float32))
  assert purejax.grad(lambda x: lax.reduce_precision(x, 5, 10))(1.1) == np.float32(
      np.float16(1.0))
  np.testing.assert_array_equal(purejax.vmap(lambda x: lax.reduce_precision(x, 8, 7))(x),
                                lax.reduce_precision(x, 8, 7))
  assert str(purejax.make_jaxpr(lambda x: lax.reduce_precision(x, 5, 10))(1.)).count(
      "reduce_precision[exponent_bits=5 mantissa_bits=10]") == 1
  with pytest.raises(ValueError, match="exponent_bits must be positive"):
    lax.reduce_precision(x, 0, 3)
  with pytest.raises(ValueError, match="mantissa_bits must be non-negative"):
    lax.reduce_precision(x, 3, -1)
  with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
    lax.reduce_precision(jnp.arange(3), 3, 1)


# -- bitcast_convert_type ---------------------------------------------------------------

@pytest.mark.parametrize("src,dst,shape,out_shape", [
    ("float32", "int32", (2, 3), (2, 3)), ("float32", "uint8", (2, 3), (2, 3, 4)),
    ("float32", "uint8", (), (4,)), ("uint8", "float32", (3, 4), (3,)),
    ("int16", "float32", (2,), ()), ("float16", "int16", (5,), (5,)),
    ("uint32", "bfloat16", (2,), (2, 2))])
def test_bitcast_convert_type(src, dst, shape, out_shape):
  import ml_dtypes
  src, dst = (np.dtype(getattr(ml_dtypes, d, None) or d) for d in (src, dst))
  x = np.random.RandomState(0).randint(0, 120, shape).astype(src)
  out = lax.bitcast_convert_type(jnp.asarray(x), dst)
  assert out.dtype == dst and out.shape == out_shape and not out.weak_type
  np.testing.assert_array_equal(np.asarray(out).reshape(-1).view(np.uint8),
                                np.ascontiguousarray(x).reshape(-1).view(np.uint8))
  np.testing.assert_array_equal(purejax.jit(lambda x: lax.bitcast_convert_type(x, dst))(x), out)


def test_bitcast_vmap_jvp_printing_and_errors():
  x = jnp.arange(12, dtype=jnp.int16).reshape(3, 4)
  f = lambda x: lax.bitcast_convert_type(x, jnp.float32)
  for axis in (0, 1):
    np.testing.assert_array_equal(
        purejax.vmap(f, in_axes=axis)(jnp.moveaxis(x.reshape(3, 2, 2), 0, axis)),
        jnp.stack([f(r) for r in x.reshape(3, 2, 2)]))
  _, t = purejax.jvp(lambda y: lax.bitcast_convert_type(y, jnp.int32), (1.,), (1.,))
  assert t.dtype == purejax.dtypes.float0
  assert "bitcast_convert_type[new_dtype=uint8]" in str(
      purejax.make_jaxpr(lambda x: lax.bitcast_convert_type(x, jnp.uint8))(1.))
  with pytest.raises(TypeError, match="does not support bool or complex"):
    lax.bitcast_convert_type(jnp.ones(3), jnp.bool_)
  with pytest.raises(ValueError, match=r"but 3 \* 16 != 32"):
    lax.bitcast_convert_type(jnp.ones(3, jnp.int16), jnp.float32)
