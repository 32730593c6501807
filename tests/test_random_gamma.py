"""The gamma family of samplers: gamma, loggamma, beta, dirichlet, chisquare,
f, t, generalized_normal, wald, poisson, binomial; random_gamma_grad.

Values are compared with the installed JAX for the same keys (skipped
without it); the statistical, support, gradient-identity, vmap and jit
checks run without JAX.
"""
import math

import numpy as np
import pytest

import purejax as pj
from purejax._src.random import gamma_derived as gd
from purejax._src.random import gamma as gm
from purejax._src.random import poisson as po
from purejax._src.random import prng
from purejax._src.random import gamma_special as special


@pytest.fixture(scope="module")
def jax():
  return pytest.importorskip("jax")


def _key(seed):
  return prng.PRNGKey(seed)


def _close(ours, theirs, rtol=2e-5, atol=1e-6):
  ours, theirs = np.asarray(ours), np.asarray(theirs)
  assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


# -- values against JAX ---------------------------------------------------------

GAMMA_CASES = [
    (0, 1.0, None), (3, np.float32([0.1, 1, 7, 1e3]), None),
    (4, np.float32([[0.5], [1e-3]]), (2, 5)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("seed,a,shape", GAMMA_CASES)
@pytest.mark.parametrize("name", ["gamma", "loggamma"])
def test_gamma_values_match_jax(jax, name, seed, a, shape):
  ours = getattr(gm, name)(_key(seed), a, shape)
  theirs = getattr(jax.random, name)(jax.random.PRNGKey(seed), a, shape)
  _close(ours, theirs, atol=1e-30 if name == "gamma" else 1e-5)


@pytest.mark.oracle
def test_typed_keys_give_the_same_values(jax):
  ours = gm.gamma(prng.key(7), np.float32([0.4, 3.]))
  theirs = jax.random.gamma(jax.random.key(7), np.float32([0.4, 3.]))
  _close(ours, theirs)


DERIVED_CASES = [
    ("beta", (np.float32([0.1, 1, 5]), np.float32([[2.], [0.3]])), None),
    ("dirichlet", (np.float32([[0.05, 0.05, 2.], [4., 1., 0.5]]),), (3, 2)),
    ("chisquare", (np.float32([1., 3., 30.]),), None),
    ("f", (3.0, np.float32([2., 10.])), None),
    ("t", (np.float32([1., 4., 50.]),), None),
    ("wald", (np.float32([0.5, 1., 3.]),), (2, 3)),
    ("generalized_normal", (0.5,), (2, 2)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,params,shape", DERIVED_CASES,
                         ids=lambda c: c if isinstance(c, str) else None)
def test_derived_values_match_jax(jax, name, params, shape):
  for seed in (0, 11):
    ours = getattr(gd, name)(_key(seed), *params, shape)
    theirs = getattr(jax.random, name)(jax.random.PRNGKey(seed), *params, shape)
    _close(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.oracle
@pytest.mark.parametrize("lam,shape", [
    (np.float32([0.5, 5., 9.9, 10., 25., 1e3, 0., -1., np.nan, np.inf]), None),
    (np.float32([[1.], [60.]]), (2, 8))])
@pytest.mark.parametrize("seed", [0, 3])
def test_poisson_values_match_jax(jax, lam, shape, seed):
  ours = po.poisson(_key(seed), lam, shape)
  theirs = jax.random.poisson(jax.random.PRNGKey(seed), lam, shape)
  np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
  assert np.asarray(ours).dtype == np.asarray(theirs).dtype


@pytest.mark.oracle
@pytest.mark.parametrize("n,p,shape", [
    (np.float32([3., 20., 100., 1000.]), np.float32([0.4, 0.7, 0.5, 0.02]), (2, 4)),
    (np.float32([4., -1., np.nan, np.inf, 3.7]), np.float32([-0.1, .3, .3, .3, 0.9]), None)])
def test_binomial_values_match_jax(jax, n, p, shape):
  for seed in (0, 5):
    ours = po.binomial(_key(seed), n, p, shape)
    theirs = jax.random.binomial(jax.random.PRNGKey(seed), n, p, shape)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype


@pytest.mark.oracle
def test_random_gamma_grad_matches_jax(jax):
  a = np.float32([0.01, 0.3, 1., 1., 2.5, 10., 10., 300., 0.5, 3.])
  x = np.float32([1e-20, 0.2, 0.01, 4., 2.5, 3., 20., 290., 30., 1e-3])
  ours = np.asarray(special.random_gamma_grad(a, x))
  theirs = np.asarray(jax.lax.random_gamma_grad(a, x))
  # XLA sums the series in float32; ours is float64 rounded once.
  np.testing.assert_allclose(ours, theirs, rtol=2e-4)


@pytest.mark.oracle
def test_gamma_gradient_matches_jax(jax):
  a = np.float32([0.2, 1.5, 8.])
  ours = pj.grad(lambda a: gm.gamma(_key(1), a).sum())(a)
  theirs = jax.grad(lambda a: jax.random.gamma(jax.random.PRNGKey(1), a).sum())(a)
  _close(ours, theirs, rtol=2e-4)
  ours = pj.grad(lambda a: gm.loggamma(_key(2), a).sum())(a)
  theirs = jax.grad(lambda a: jax.random.loggamma(jax.random.PRNGKey(2), a).sum())(a)
  _close(ours, theirs, rtol=2e-4)


@pytest.mark.oracle
@pytest.mark.parametrize("call", [
    lambda r, k: r.gamma(k, 1., dtype=np.int32),
    lambda r, k: r.loggamma(k, 1., dtype=np.int32),
    lambda r, k: r.beta(k, 1., 1., dtype=np.int32),
    lambda r, k: r.f(k, 1., 1., dtype=np.int32),
    lambda r, k: r.wald(k, 1., dtype=np.int32),
    lambda r, k: r.generalized_normal(k, 2., dtype=np.int32),
    lambda r, k: r.binomial(k, 5, 0.3, dtype=np.int32),
    lambda r, k: r.gamma(k, np.ones((2, 3)), shape=(3,)),
    lambda r, k: r.beta(k, np.ones(3), np.ones((2, 1)), shape=(3,)),
    lambda r, k: r.dirichlet(k, 1.),
    lambda r, k: r.poisson(k, 1., dtype=np.float32),
])
def test_errors_match_jax(jax, call):
  class Ours:   # our samplers under jax.random's names
    pass
  for mod in (gm, gd, po):
    for name in mod.__all__:
      setattr(Ours, name, staticmethod(getattr(mod, name)))
  with pytest.raises(Exception) as theirs:
    call(jax.random, jax.random.PRNGKey(0))
  with pytest.raises(type(theirs.value)) as ours:
    call(Ours, _key(0))
  assert str(ours.value) == str(theirs.value)


# -- without JAX: errors, dtypes, shapes ----------------------------------------

def test_errors():
  with pytest.raises(ValueError, match="must be a float dtype, got int32"):
    gm.gamma(_key(0), 1., dtype=np.int32)
  with pytest.raises(ValueError, match="dirichlet requires alpha.ndim >= 1"):
    gd.dirichlet(_key(0), 1.)
  with pytest.raises(ValueError, match="gamma accepts a single key"):
    gm.gamma(prng.split(_key(0)), 1.)
  with pytest.raises(ValueError, match="the result of broadcasting"):
    gm.gamma(_key(0), np.ones((2, 3)), (3,))


def test_shapes_and_dtypes(x64):
  k = _key(0)
  assert gm.gamma(k, 1.).dtype == np.float64
  assert gm.gamma(k, 1., dtype=np.float32).dtype == np.float32
  assert gm.gamma(k, np.ones(3), (2, 3)).shape == (2, 3)
  assert gd.beta(k, np.ones(3), np.ones((2, 1))).shape == (2, 3)
  assert gd.dirichlet(k, np.ones((4, 3)), (2, 4)).shape == (2, 4, 3)
  assert po.poisson(k, 2., (3,)).dtype == np.int64
  assert po.poisson(k, 2., (3,), dtype=np.int16).dtype == np.int16
  assert po.binomial(k, 4, 0.5, (2,)).dtype == np.float64
  assert gm.gamma(k, np.ones((0, 2))).shape == (0, 2)


# -- statistics (no JAX) --------------------------------------------------------

N = 100_000


def _check_moments(samples, mean, var, k=6.):
  """Sample mean and variance within k standard errors of the true ones
  (the variance's standard error estimated from the sample's 4th moment)."""
  s = np.asarray(samples, np.float64).ravel()
  n = s.size
  assert abs(s.mean() - mean) <= k * math.sqrt(var / n), (s.mean(), mean)
  m4 = np.mean((s - s.mean()) ** 4)
  assert abs(s.var() - var) <= k * math.sqrt(max(m4 - var ** 2, 0) / n) + 1e-12, (s.var(), var)


@pytest.mark.parametrize("a", [0.3, 1.0, 4.0])
def test_gamma_moments(a):
  x = gm.gamma(_key(10), a, (N,))
  assert np.all(np.asarray(x) >= 0)
  _check_moments(x, a, a)


def test_loggamma_is_log_of_gamma_and_small_alphas():
  k = _key(3)
  a = np.float32([0.5, 2., 9.])
  np.testing.assert_allclose(np.exp(np.asarray(gm.loggamma(k, a, (200, 3)))),
                             np.asarray(gm.gamma(k, a, (200, 3))), rtol=1e-4)
  # E[log X] = digamma(a); tiny alphas have finite logs where X underflows.
  log_x = np.asarray(gm.loggamma(_key(4), 1e-2, (N,)), np.float64)
  assert np.all(np.isfinite(log_x))
  assert abs(log_x.mean() - special.digamma_np(1e-2)) < 6 * log_x.std() / math.sqrt(N)


def test_derived_moments():
  k = _key(21)
  _check_moments(gd.beta(k, 2., 3., (N,)), 0.4, 6 / (25 * 6))
  _check_moments(gd.chisquare(k, 4., (N,)), 4., 8.)
  _check_moments(gd.t(k, 6., (N,)), 0., 6 / 4)
  _check_moments(gd.f(k, 5., 12., (N,)), 12 / 10, 2 * 144 * 15 / (5 * 100 * 8))
  _check_moments(gd.wald(k, 2., (N,)), 2., 8.)
  _check_moments(gd.generalized_normal(k, 2., (N,)), 0., 0.5)   # N(0, 1/2)
  d = np.asarray(gd.dirichlet(k, np.float32([1., 2., 5.]), (N,)))
  assert d.shape == (N, 3) and np.all(d >= 0)
  np.testing.assert_allclose(d.sum(-1), 1., rtol=1e-5)
  _check_moments(d[:, 2], 5 / 8, 5 * 3 / (64 * 9))


@pytest.mark.parametrize("lam", [0.7, 6.0, 15.0, 400.0])
def test_poisson_moments(lam):
  x = po.poisson(_key(8), lam, (N,))
  assert np.asarray(x).dtype == np.int32 and np.all(np.asarray(x) >= 0)
  _check_moments(x, lam, lam)


@pytest.mark.parametrize("n,p", [(10, 0.3), (200, 0.4), (1000, 0.93)])
def test_binomial_moments(n, p):
  x = np.asarray(po.binomial(_key(9), n, p, (N,)))
  assert np.all((x >= 0) & (x <= n)) and np.all(x == np.floor(x))
  _check_moments(x, n * p, n * p * (1 - p))


# -- gradients (no JAX) ---------------------------------------------------------

@pytest.mark.parametrize("a", [0.4, 3.0])
def test_reparameterized_gradient_identities(a):
  # E[x] = a, so E[dx/da] = 1; E[log x] = digamma(a), so E[d log x/da] = trigamma(a).
  n = 30_000
  dx = pj.grad(lambda a: gm.gamma(_key(5), a, (n,)).sum())(np.float32(a)) / n
  assert abs(float(dx) - 1) < 0.03
  dlog = pj.grad(lambda a: gm.loggamma(_key(6), a, (n,)).sum())(np.float32(a)) / n
  trigamma = sum(1 / (a + i) ** 2 for i in range(200000)) + 1 / (a + 200000)
  assert abs(float(dlog) - trigamma) < 0.03 * trigamma


def test_random_gamma_grad_against_finite_differences_of_the_cdf():
  # dx/da = -(dP/da) / p(x), with P(a, x) the regularized lower incomplete gamma.
  scipy_special = pytest.importorskip("scipy.special")
  a = np.array([0.05, 0.7, 1., 3., 30., 500.])
  x = np.array([1e-4, 1.3, 0.2, 6., 25., 510.])
  h = 1e-6 * a
  dp_da = (scipy_special.gammainc(a + h, x) - scipy_special.gammainc(a - h, x)) / (2 * h)
  density = np.exp((a - 1) * np.log(x) - x - scipy_special.gammaln(a))
  np.testing.assert_allclose(special.random_gamma_grad_np(a, x), -dp_da / density, rtol=1e-5)


def test_lgamma_and_digamma():
  xs = [0.1, 0.5, 1., 2.5, 7., 33., 170.5, -0.5, -2.3]
  np.testing.assert_allclose(special.lgamma_np(np.array(xs)), [math.lgamma(x) for x in xs],
                             rtol=1e-13, atol=1e-14)
  h = 1e-6
  num = [(math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h) for x in xs]
  np.testing.assert_allclose(special.digamma_np(np.array(xs)), num, rtol=1e-6)
  assert np.isinf(special.lgamma_np(np.array([0., -3.]))).all()
  g = pj.grad(lambda x: special.lgamma(x))(np.float32(2.5))
  np.testing.assert_allclose(g, special.digamma_np(2.5), rtol=1e-6)


# -- transformations (no JAX) ---------------------------------------------------

def test_jit_matches_eager():
  k, a = _key(12), np.float32([0.3, 2., 11.])
  np.testing.assert_array_equal(np.asarray(pj.jit(gm.gamma)(k, a)), np.asarray(gm.gamma(k, a)))
  f = pj.jit(lambda k, lam: po.poisson(k, lam, (4, 3)))
  lam = np.float32([1., 12., 300.])
  np.testing.assert_array_equal(np.asarray(f(k, lam)), np.asarray(po.poisson(k, lam, (4, 3))))


def test_vmap_over_keys_and_parameters():
  keys = prng.split(_key(13), 3)
  a = np.float32([0.5, 1., 20.])
  # The batched sampling loop is compiled code of its own, whose vectorized
  # math may round differently in the last ulp from the per-example loops'.
  got = pj.vmap(gm.gamma)(keys, a)
  want = [float(gm.gamma(keys[i], a[i])) for i in range(3)]
  np.testing.assert_array_max_ulp(np.asarray(got), np.float32(want), maxulp=2)
  got = pj.vmap(lambda a: gm.gamma(_key(14), a, (2,)))(a)
  want = np.stack([np.asarray(gm.gamma(_key(14), x, (2,))) for x in a])
  np.testing.assert_array_max_ulp(np.asarray(got), want, maxulp=2)
  got = pj.vmap(lambda k: gd.beta(k, 2., 0.5, (2,)))(keys)
  want = np.stack([np.asarray(gd.beta(keys[i], 2., 0.5, (2,))) for i in range(3)])
  np.testing.assert_array_max_ulp(np.asarray(got), want, maxulp=2)


def test_vmap_of_grad():
  a = np.float32([0.5, 4.])
  g = pj.vmap(pj.grad(lambda a: gm.gamma(_key(15), a)))(a)
  want = [float(pj.grad(lambda a: gm.gamma(_key(15), a))(x)) for x in a]
  np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
