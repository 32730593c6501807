"""purejax.scipy.stats.gaussian_kde against SciPy (float64) and JAX
(float32, resample's random bits), as a pytree under jit."""
import numpy as np
import pytest

import purejax
import purejax.scipy.stats as ps

from conftest import oracle

ss = pytest.importorskip("scipy.stats")

RNG = np.random.RandomState(0)


def _data(d=2, n=30):
  return RNG.randn(d, n), RNG.uniform(0.5, 2, n), RNG.randn(d, 5)


@pytest.mark.parametrize("bw_method", [None, "scott", "silverman", 0.4])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_against_scipy(bw_method, weighted, d, x64):
  data, w, pts = _data(d)
  w = w if weighted else None
  ours, theirs = ps.gaussian_kde(data, bw_method, w), ss.gaussian_kde(data, bw_method, w)
  for name in ("neff", "covariance", "inv_cov", "weights"):
    np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12)
  for name in ("evaluate", "pdf", "logpdf"):
    np.testing.assert_allclose(getattr(ours, name)(pts), getattr(theirs, name)(pts),
                               rtol=1e-12)
  mean, cov = RNG.randn(d), np.eye(d) * 0.7
  np.testing.assert_allclose(ours.integrate_gaussian(mean, cov),
                             theirs.integrate_gaussian(mean, cov), rtol=1e-12)
  other = ps.gaussian_kde(data[:, :7] + 1)
  np.testing.assert_allclose(ours.integrate_kde(other),
                             theirs.integrate_kde(ss.gaussian_kde(data[:, :7] + 1)), rtol=1e-12)
  if d == 1:
    np.testing.assert_allclose(ours.integrate_box_1d(-0.5, 1.2),
                               theirs.integrate_box_1d(-0.5, 1.2), rtol=1e-12)
    np.testing.assert_allclose(ours(pts[0]), theirs(pts[0]), rtol=1e-12)


def test_callable_bandwidth(x64):
  data, _, pts = _data()
  ours = ps.gaussian_kde(data, lambda k: k.neff ** -0.3)
  theirs = ss.gaussian_kde(data, lambda k: k.neff ** -0.3)
  np.testing.assert_allclose(ours.evaluate(pts), theirs.evaluate(pts), rtol=1e-12)


def test_against_jax():
  jax = oracle()
  import jax.scipy.stats as js
  data, w, pts = (x.astype(np.float32) for x in _data())
  ours, theirs = ps.gaussian_kde(data, weights=w), js.gaussian_kde(data, weights=w)
  np.testing.assert_allclose(ours.evaluate(pts), theirs.evaluate(pts), rtol=2e-5)
  # (JAX 0.10.2 fails for shapes of more than one dimension.)
  assert ours.resample(purejax.random.key(3), (2, 3)).shape == (2, 2, 3)
  for shape in ((), (4,)):
    o = ours.resample(purejax.random.key(3), shape)
    t = theirs.resample(jax.random.key(3), shape)
    assert o.shape == t.shape and o.dtype == t.dtype
    np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_resample_statistics(x64):
  data, w, _ = _data(1, 50)
  kde = ps.gaussian_kde(data, weights=w)
  draws = np.asarray(kde.resample(purejax.random.key(0), (20000,)))[0]
  mean = np.sum(w * data[0]) / np.sum(w)
  assert abs(draws.mean() - mean) < 0.05


def test_errors():
  kde = ps.gaussian_kde(RNG.randn(2, 10))
  with pytest.raises(NotImplementedError, match="integrate_box_1d"):
    kde.integrate_box(np.zeros(2), np.ones(2))
  with pytest.raises(NotImplementedError, match="bandwidth"):
    kde.set_bandwidth("scott")
  with pytest.raises(ValueError, match="1D"):
    kde.integrate_box_1d(0., 1.)
  with pytest.raises(ValueError, match="multiple elements"):
    ps.gaussian_kde(np.ones(1))


def test_pytree_jit(x64):
  data, w, pts = _data()
  kde = ps.gaussian_kde(data, weights=w)
  np.testing.assert_allclose(purejax.jit(lambda k, p: k.logpdf(p))(kde, pts),
                             ss.gaussian_kde(data, weights=w).logpdf(pts), rtol=1e-12)
  leaves = purejax.tree_util.tree_leaves(kde)
  assert len(leaves) == 5
