"""purejax.scipy.stats: every distribution function against SciPy (float64)
and JAX (float32, one compilation for all), jit/vmap, gradients, errors and
the public module layout."""
import numpy as np
import pytest

import purejax
import purejax.scipy.stats as pst
from purejax._src.test_util import check_grads

from conftest import oracle

sst = pytest.importorskip("scipy.stats")

_R = np.random.RandomState(1)
X = np.r_[_R.uniform(-4, 4, 5), -20., 15.]
POS = np.r_[_R.uniform(0.1, 6, 5), 0., 30.]
UNIT = np.r_[_R.uniform(0.02, 0.98, 5), 0., 1.]
INNER = _R.uniform(0.05, 0.95, 7)
K = np.array([0., 1., 2., 3., 5., -1., 7.])
LOC, SCALE = 0.5, 2.0

# (distribution, function, arguments); SciPy is called the same way unless noted.
CASES = []


def _add(dist, fns, *args):
  for fn in fns.split():
    CASES.append((dist, fn, args))


_add("norm", "pdf logpdf cdf logcdf sf logsf", X, LOC, SCALE)
_add("norm", "ppf isf", INNER, LOC, SCALE)
_add("uniform", "pdf logpdf cdf", X, -1., 3.)
_add("uniform", "ppf", INNER, -1., 3.)
_add("expon", "pdf logpdf cdf logcdf sf logsf", POS, LOC, SCALE)
_add("expon", "ppf", INNER, LOC, SCALE)
_add("laplace", "pdf logpdf cdf", X, LOC, SCALE)
_add("logistic", "pdf logpdf cdf sf", X, LOC, SCALE)
_add("logistic", "ppf isf", INNER, LOC, SCALE)
_add("cauchy", "pdf logpdf cdf logcdf sf logsf", X, LOC, SCALE)
_add("cauchy", "ppf isf", INNER, LOC, SCALE)
_add("t", "pdf logpdf", X, 3.5, LOC, SCALE)
_add("chi2", "pdf logpdf cdf logcdf sf logsf", POS[:5], 3., LOC, SCALE)
_add("gamma", "pdf logpdf cdf logcdf sf logsf", POS[:5], 2.5, LOC, SCALE)
_add("beta", "pdf logpdf cdf logcdf sf logsf", INNER, 2., 3.5)
_add("pareto", "pdf logpdf cdf logcdf sf logsf", POS + 1.5, 2.5, 0., 1.2)
_add("pareto", "ppf", INNER, 2.5, 0., 1.2)
_add("gumbel_r", "pdf logpdf cdf logcdf sf logsf", X, LOC, SCALE)
_add("gumbel_r", "ppf", INNER, LOC, SCALE)
_add("gumbel_l", "pdf logpdf cdf logcdf sf logsf", X, LOC, SCALE)
_add("gumbel_l", "ppf", INNER, LOC, SCALE)
_add("gennorm", "pdf logpdf cdf", X, 1.5)
_add("vonmises", "pdf logpdf", X[:5], 2.)
_add("wrapcauchy", "pdf logpdf", POS[:5], 0.4)
_add("truncnorm", "pdf logpdf cdf logcdf sf logsf", X[:5] / 2, -1., 1.5)
_add("bernoulli", "pmf logpmf", np.array([0., 1., 2., -1.]), 0.3)
_add("bernoulli", "cdf", np.array([-1., 0., 0.5, 1., 3.]), 0.3)
_add("bernoulli", "ppf", INNER, 0.3)
_add("poisson", "pmf logpmf cdf", K, 2.5)
_add("poisson", "entropy", np.array([0., 0.5, 5., 50.]))
_add("binom", "pmf logpmf", K, 6., 0.35)
_add("geom", "pmf logpmf", K + 1, 0.35)
_add("nbinom", "pmf logpmf", K[:5], 4., 0.35)
_add("betabinom", "pmf", K, 6., 2., 3.)

IDS = [f"{d}.{f}" for d, f, _ in CASES]
SCIPY_NAME = {"gumbel_r": "gumbel_r", "gumbel_l": "gumbel_l"}


def _scipy(dist, fn, args):
  return getattr(getattr(sst, SCIPY_NAME.get(dist, dist)), fn)(*args)


def _ours(dist, fn):
  return getattr(getattr(pst, dist), fn)


@pytest.mark.parametrize("dist,fn,args", CASES, ids=IDS)
def test_float64_matches_scipy(dist, fn, args, x64):
  ours = np.asarray(_ours(dist, fn)(*args))
  with np.errstate(all="ignore"):
    theirs = np.asarray(_scipy(dist, fn, args), np.float64)
  assert ours.dtype == np.float64 and ours.shape == theirs.shape
  # betaln's large-b series; the entropy's asymptotic expansion.
  rtol = 1e-5 if dist == "betabinom" or fn == "entropy" else 1e-6
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-12)


def _f32(args):
  return [np.asarray(a, np.float32) if np.ndim(a) else a for a in args]


# JAX takes seconds to compile these (incomplete gamma/beta, truncnorm's
# masses); they are checked in float32 against SciPy, their primitives
# against JAX in test_lax_special.
_SLOW_IN_JAX = {"truncnorm", "betabinom", "chi2.cdf", "chi2.logcdf", "chi2.sf", "chi2.logsf",
                "gamma.cdf", "gamma.logcdf", "gamma.sf", "gamma.logsf", "beta.cdf",
                "beta.logcdf", "beta.sf", "beta.logsf", "poisson.cdf", "gennorm.cdf"}
# pdf and pmf are exp(logpdf), exp(logpmf) in both, so only the logs go to JAX.
JAX_CASES = [i for i, name in enumerate(IDS)
             if name not in _SLOW_IN_JAX and CASES[i][0] not in _SLOW_IN_JAX
             and CASES[i][1] not in ("pdf", "pmf")]


@pytest.fixture(scope="module")
def jax_values():
  """The cases through JAX in one jitted function (one compilation)."""
  jax = oracle()
  import jax.scipy.stats as jst

  def all_cases(arrays):
    return {i: getattr(getattr(jst, CASES[i][0]), CASES[i][1])(*arrays[i]) for i in arrays}

  arrays = {i: [np.asarray(a, np.float32) for a in _f32(CASES[i][2])] for i in JAX_CASES}
  return {i: np.asarray(v) for i, v in jax.jit(all_cases)(arrays).items()}


@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_float32(i, request):
  dist, fn, args = CASES[i]
  ours = np.asarray(_ours(dist, fn)(*_f32(args)))
  if i in JAX_CASES:
    theirs = request.getfixturevalue("jax_values")[i]
    assert theirs.dtype == np.float32
    rtol = 2e-5
  else:
    with np.errstate(all="ignore"):
      theirs = np.asarray(_scipy(dist, fn, args), np.float32)
    rtol = 2e-4
  assert ours.dtype == np.float32 and ours.shape == theirs.shape
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-6)


def test_multivariate_normal():
  rng = np.random.RandomState(0)
  a = rng.randn(3, 3)
  cov = a @ a.T + np.eye(3)
  mean = rng.randn(3)
  x = rng.randn(4, 3)
  with purejax.enable_x64():
    np.testing.assert_allclose(pst.multivariate_normal.logpdf(x, mean, cov),
                               sst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-10)
    np.testing.assert_allclose(pst.multivariate_normal.pdf(x, mean, 2.0),
                               sst.multivariate_normal.pdf(x, mean, 2.0), rtol=1e-10)
    np.testing.assert_allclose(pst.multivariate_normal.logpdf(x[:, 0], 0.5, 2.0),
                               sst.multivariate_normal.logpdf(x[:, 0], 0.5, 2.0), rtol=1e-10)
    check_grads(lambda x, m, c: pst.multivariate_normal.logpdf(x, m, c), (x, mean, cov), 1,
                modes=("fwd", "rev"))
  out = pst.multivariate_normal.logpdf(x.astype(np.float32), mean, cov)
  assert out.dtype == np.float32 and out.shape == (4,)
  with pytest.raises(ValueError, match="incompatible shapes"):
    pst.multivariate_normal.logpdf(x, mean, np.eye(2))
  with pytest.raises(NotImplementedError, match="allow_singular"):
    pst.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def test_dirichlet_and_multinomial(x64):
  alpha = np.array([1.5, 2., 3.])
  x = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
  np.testing.assert_allclose(pst.dirichlet.logpdf(x, alpha), sst.dirichlet.logpdf(x, alpha),
                             rtol=1e-10)
  np.testing.assert_allclose(pst.dirichlet.pdf(x[:2], alpha), sst.dirichlet.pdf(x, alpha),
                             rtol=1e-10)   # the last category is implied
  assert pst.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), alpha) == -np.inf
  with pytest.raises(ValueError, match="one-dimensional"):
    pst.dirichlet.logpdf(x, alpha[None])
  counts, p = np.array([1, 2, 3]), np.array([0.2, 0.3, 0.5])
  np.testing.assert_allclose(pst.multinomial.logpmf(counts, 6, p),
                             sst.multinomial.logpmf(counts, 6, p), rtol=1e-10)
  assert pst.multinomial.pmf(counts, 5, p) == 0.
  with pytest.raises(ValueError, match="integer type"):
    pst.multinomial.logpmf(counts * 1., 6, p)


def test_jit_and_vmap():
  f = lambda x, loc: pst.norm.logcdf(x, loc, 2.)
  x = np.linspace(-30, 5, 6, dtype=np.float32)
  locs = np.array([0., 1., -2.], np.float32)
  np.testing.assert_allclose(purejax.jit(f)(x, 1.), f(x, 1.), rtol=1e-6)
  batched = purejax.vmap(f, in_axes=(None, 0))(x, locs)
  np.testing.assert_allclose(batched, np.stack([f(x, l) for l in locs]), rtol=1e-6)
  g = lambda k, mu: pst.poisson.logpmf(k, mu)
  np.testing.assert_allclose(purejax.vmap(g)(K.astype(np.float32), np.full(7, 2., np.float32)),
                             g(K.astype(np.float32), 2.), rtol=1e-6)
  h = purejax.jit(pst.truncnorm.logpdf)
  np.testing.assert_allclose(h(0.3, -1., 2.), pst.truncnorm.logpdf(0.3, -1., 2.), rtol=1e-6)


GRADS = [
    ("norm.logpdf", lambda x, m, s: pst.norm.logpdf(x, m, s), (X[:3], 0.3, 1.7)),
    ("norm.logcdf", lambda x: pst.norm.logcdf(x), (np.array([-25., -2., 1.]),)),
    ("norm.ppf", lambda q: pst.norm.ppf(q), (INNER[:3],)),
    ("t.logpdf", lambda x, df: pst.t.logpdf(x, df), (X[:3], 4.)),
    ("gamma.logpdf", lambda x, a: pst.gamma.logpdf(x, a), (POS[:3], 2.5)),
    ("beta.logpdf", lambda x, a, b: pst.beta.logpdf(x, a, b), (INNER[:3], 2., 3.)),
    ("beta.cdf", lambda x: pst.beta.cdf(x, 2., 3.), (INNER[:3],)),
    ("poisson.logpmf", lambda mu: pst.poisson.logpmf(K[:4], mu), (2.5,)),
    ("binom.logpmf", lambda p: pst.binom.logpmf(K[:4], 6., p), (0.3,)),
    ("logistic.logpdf", lambda x: pst.logistic.logpdf(x, 0.2, 1.5), (X[:3],)),
    ("gumbel_r.logsf", lambda x: pst.gumbel_r.logsf(x), (X[:3],)),
    ("truncnorm.logpdf", lambda x: pst.truncnorm.logpdf(x, -1., 2.), (INNER[:3],)),
]


@pytest.mark.parametrize("name,f,args", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, f, args, x64):
  check_grads(f, args, 1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_dtypes_and_edge_values():
  assert pst.norm.pdf(1).dtype == np.float32                 # ints promote
  assert pst.norm.ppf(np.float32(0.3)).dtype == np.float32
  with purejax.enable_x64():
    # ppf returns the default float type (as JAX): float64 under x64.
    assert pst.norm.ppf(np.float32(0.3)).dtype == np.float64
  assert pst.uniform.pdf(np.float16(0.5)).dtype == np.float16
  assert np.isnan(pst.expon.ppf(1.5)) and np.isnan(pst.uniform.ppf(-0.1))
  assert pst.poisson.logpmf(2.5, 1.) == -np.inf               # non-integer k
  # binom and geom accept non-integer k through gammaln (as JAX; SciPy gives 0).
  assert pst.binom.pmf(2.5, 6., 0.35) > 0 and pst.geom.pmf(2.5, 0.35) > 0
  np.testing.assert_allclose(pst.betabinom.pmf(2.5, 6., 2., 3.),
                             sst.betabinom.pmf(2, 6, 2, 3), rtol=1e-5)   # k is floored
  assert np.isnan(pst.beta.logpdf(0.5, -1., 2.))
  assert np.isnan(pst.gumbel_r.logpdf(0.5, 0., -1.))
  assert pst.binom.pmf(0., 0., 0.5) == 1.


def test_public_modules():
  import purejax.scipy as jsp
  assert jsp.stats.norm is pst.norm
  from purejax.scipy.stats import norm
  assert set(norm.__all__) == {"pdf", "logpdf", "cdf", "logcdf", "ppf", "sf", "logsf", "isf"}
  with pytest.raises(AttributeError):
    jsp.nonexistent   # noqa: B018


def test_function_lists_match_jax():
  oracle()
  import inspect
  import jax.scipy.stats as jst
  for name in pst.__all__:
    if not inspect.ismodule(getattr(pst, name)):   # gaussian_kde, mode, rankdata, sem
      assert (list(inspect.signature(getattr(pst, name)).parameters) ==
              list(inspect.signature(getattr(jst, name)).parameters)), name
      continue
    theirs = {n for n in dir(getattr(jst, name)) if not n.startswith("_")
              and callable(getattr(getattr(jst, name), n))}
    ours = set(getattr(pst, name).__all__)
    assert ours == theirs, name
    for fn in ours:
      jparams = list(inspect.signature(getattr(getattr(jst, name), fn)).parameters)
      assert list(inspect.signature(getattr(getattr(pst, name), fn)).parameters) == jparams
