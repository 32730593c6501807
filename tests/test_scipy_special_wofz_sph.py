"""scipy.special.wofz and sph_harm_y against SciPy (float64) and JAX
(float32, n_max clipping), gradients, jit."""
import numpy as np
import pytest

import purejax
import purejax.scipy.special as ps

from conftest import oracle

sps = pytest.importorskip("scipy.special")

RNG = np.random.RandomState(0)


def _points(scale, count=400):
  z = (RNG.standard_normal(count) + 1j * RNG.standard_normal(count)) * scale
  return np.concatenate([z, RNG.standard_normal(50) * scale + 0j,
                         1j * RNG.standard_normal(50) * scale,
                         RNG.standard_normal(50) * scale + 1e-3j])


@pytest.mark.parametrize("scale", [0.1, 1., 4., 8., 30., 1e3])
def test_wofz_matches_scipy(x64, scale):
  z = _points(scale)
  want = sps.wofz(z)
  finite = np.isfinite(want)
  got = np.asarray(ps.wofz(z))
  np.testing.assert_allclose(got[finite], want[finite], rtol=2e-12, atol=0)
  np.testing.assert_allclose(np.asarray(purejax.jit(ps.wofz)(z))[finite], got[finite],
                             rtol=2e-12)  # exp(-z^2) of large z: argument reduction


def test_wofz_dtypes_grad_and_jax():
  assert ps.wofz(np.float32(1)).dtype == np.complex64
  assert ps.wofz(np.array([1, 2])).dtype == np.complex64
  np.testing.assert_allclose(ps.wofz(np.array([0., np.inf])), [1, 0], rtol=1e-6)
  # d/dz w(z) = -2 z w(z) + 2i / sqrt(pi)
  want = (-2 * sps.wofz(1.0) + 2j / np.sqrt(np.pi)).real
  np.testing.assert_allclose(purejax.grad(lambda x: ps.wofz(x).real)(1.0), want, rtol=1e-6)
  jax = oracle()
  import jax.scipy.special as js
  z = (_points(3.) ).astype(np.complex64)
  np.testing.assert_allclose(ps.wofz(z), js.wofz(z), rtol=2e-5, atol=1e-6)


def test_sph_harm_y_matches_scipy(x64):
  n = RNG.randint(0, 12, 300)
  m = RNG.randint(-11, 12, 300)
  theta, phi = RNG.uniform(0, np.pi, 300), RNG.uniform(0, 2 * np.pi, 300)
  n_max = 11
  want = sps.sph_harm_y(n, m, theta, phi)
  np.testing.assert_allclose(ps.sph_harm_y(n, m, theta, phi, n_max=n_max), want,
                             rtol=1e-12, atol=1e-13)
  jitted = purejax.jit(ps.sph_harm_y, static_argnames="n_max")
  np.testing.assert_allclose(jitted(n, m, theta, phi, n_max=n_max), want, rtol=1e-12,
                             atol=1e-13)
  np.testing.assert_allclose(ps.sph_harm_y(3, -2, 0.7, 0.3), [sps.sph_harm_y(3, -2, 0.7, 0.3)],
                             rtol=1e-13)
  with pytest.raises(NotImplementedError, match="diff_n"):
    ps.sph_harm_y(n, m, theta, phi, diff_n=1)


def test_sph_harm_y_like_jax():
  jax = oracle()
  import jax.scipy.special as js
  n = RNG.randint(0, 12, 200)
  m = RNG.randint(-12, 13, 200)     # |m| > n_max too: JAX clips the Legendre order
  theta = RNG.uniform(0, np.pi, 200).astype(np.float32)
  phi = RNG.uniform(0, 2 * np.pi, 200).astype(np.float32)
  for n_max in (None, 5):
    ours = ps.sph_harm_y(n, m, theta, phi, n_max=n_max)
    theirs = js.sph_harm_y(n, m, theta, phi, n_max=n_max)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=2e-6)
