"""purejax.scipy.cluster.vq.vq against SciPy (float64) and JAX."""
import numpy as np
import pytest

import purejax
from purejax.scipy.cluster.vq import vq

from conftest import oracle

svq = pytest.importorskip("scipy.cluster.vq")

RNG = np.random.RandomState(0)


def test_against_scipy(x64):
  obs, book = RNG.randn(30, 3), RNG.randn(5, 3)
  for o, b in ((obs, book), (obs[:, 0], book[:, 0])):
    codes, dists = vq(o, b)
    want_codes, want_dists = svq.vq(o, b)
    np.testing.assert_array_equal(codes, want_codes)
    np.testing.assert_allclose(dists, want_dists, rtol=1e-13)
  codes, dists = purejax.jit(vq)(obs, book)
  np.testing.assert_array_equal(codes, svq.vq(obs, book)[0])


def test_against_jax_and_vmap():
  oracle()
  from jax.scipy.cluster.vq import vq as jvq
  obs, book = RNG.randn(3, 10, 2).astype(np.float32), RNG.randn(4, 2).astype(np.float32)
  ours, theirs = vq(obs[0], book), jvq(obs[0], book)
  for o, t in zip(ours, theirs):
    assert o.dtype == t.dtype
    np.testing.assert_allclose(o, t, rtol=1e-6)
  batched = purejax.vmap(vq, (0, None))(obs, book)
  for b, o in zip(batched, zip(*[vq(x, book) for x in obs])):
    np.testing.assert_allclose(b, np.stack(o), rtol=1e-6)


def test_errors():
  with pytest.raises(ValueError, match="same rank"):
    vq(np.ones((2, 3)), np.ones(3))
  with pytest.raises(ValueError, match="features"):
    vq(np.ones((2, 3)), np.ones((2, 2)))
