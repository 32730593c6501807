"""lax.linalg's tridiagonal, ormqr, cholesky_update, symmetric_product and
qdwh against NumPy/SciPy (float64) and JAX (float32, complex64), batched
and under jit; random.random_gamma_p is the gamma sampler's primitive."""
import numpy as np
import pytest

import purejax
import purejax.lax.linalg as pl

from conftest import oracle

RNG = np.random.RandomState(0)


def _hermitian(shape, dtype):
  a = RNG.randn(*shape)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * RNG.randn(*shape)
  return (a + np.conj(np.swapaxes(a, -1, -2))).astype(dtype)


def _tridiagonal_matrix(d, e):
  return np.diag(d) + np.diag(e, 1) + np.diag(e, -1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("lower", [True, False])
def test_tridiagonal_is_similar(dtype, lower, x64):
  s = _hermitian((3, 5, 5), dtype)
  _, d, e, _ = pl.tridiagonal(s, lower=lower)
  assert d.dtype == e.dtype == np.finfo(dtype).dtype and d.shape == (3, 5) and e.shape == (3, 4)
  for k in range(3):
    np.testing.assert_allclose(np.linalg.eigvalsh(_tridiagonal_matrix(d[k], e[k])),
                               np.linalg.eigvalsh(s[k]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_against_q(left, transpose, x64):
  g = RNG.randn(2, 6, 4)
  raw, taus = purejax.numpy.linalg.qr(g, mode="raw")
  a = np.swapaxes(np.asarray(raw), -1, -2)
  q = np.stack([np.linalg.qr(m, mode="complete")[0] for m in g])
  # Q up to the signs of its columns: compare with LAPACK's own full Q.
  full = np.asarray(pl.householder_product(np.concatenate([a, np.zeros((2, 6, 2))], -1),
                                           taus))
  assert np.allclose(np.abs(full), np.abs(q))
  c = RNG.randn(2, 6, 3) if left else RNG.randn(2, 3, 6)
  qq = np.conj(np.swapaxes(full, -1, -2)) if transpose else full
  want = qq @ c if left else c @ qq
  np.testing.assert_allclose(pl.ormqr(a, taus, c, left=left, transpose=transpose), want,
                             rtol=1e-12, atol=1e-12)


def test_cholesky_update_and_symmetric_product(x64):
  x = RNG.randn(4, 4)
  r = np.linalg.cholesky(x @ x.T + 4 * np.eye(4)).T
  w = RNG.randn(4)
  want = np.linalg.cholesky(r.T @ r + np.outer(w, w)).T
  np.testing.assert_allclose(pl.cholesky_update(r, w), want, rtol=1e-12, atol=1e-12)
  np.testing.assert_allclose(purejax.jit(pl.cholesky_update)(r, w), want, rtol=1e-12,
                             atol=1e-12)
  a, c = RNG.randn(2, 4, 3), RNG.randn(2, 4, 4)
  np.testing.assert_allclose(pl.symmetric_product(a, c, alpha=2.0, beta=0.5),
                             2 * a @ np.swapaxes(a, -1, -2) + 0.5 * c, rtol=1e-12)
  np.testing.assert_allclose(purejax.vmap(pl.symmetric_product)(a, c),
                             a @ np.swapaxes(a, -1, -2), rtol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (7, 4), (8, 8)])
def test_qdwh_polar(shape, x64):
  scipy_linalg = pytest.importorskip("scipy.linalg")
  x = RNG.randn(*shape)
  u, h, iterations, converged = pl.qdwh(x)
  want_u, want_h = scipy_linalg.polar(x)
  np.testing.assert_allclose(u, want_u, atol=1e-10)
  np.testing.assert_allclose(h, want_h, atol=1e-10)
  assert bool(converged) and 1 <= int(iterations) <= 10
  u2 = purejax.jit(pl.qdwh)(x)[0]
  np.testing.assert_allclose(u2, want_u, atol=1e-10)
  with pytest.raises(ValueError, match="M >= N"):
    pl.qdwh(x.T if shape[0] > shape[1] else np.ones((2, 3)))


def test_against_jax():
  jax = oracle()
  import jax.lax.linalg as jl
  for dtype in (np.float32, np.complex64):
    s = _hermitian((2, 5, 5), dtype)
    for lower in (True, False):
      for o, t in zip(pl.tridiagonal(s, lower=lower), jl.tridiagonal(s, lower=lower)):
        assert o.dtype == t.dtype and o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)
    g = RNG.randn(6, 4).astype(dtype)
    raw, taus = jax.numpy.linalg.qr(g, mode="raw")
    a, taus = np.asarray(raw).T.copy(), np.asarray(taus)
    for left, c in ((True, RNG.randn(6, 3)), (False, RNG.randn(3, 6))):
      c = c.astype(dtype)
      for transpose in (True, False):
        np.testing.assert_allclose(pl.ormqr(a, taus, c, left=left, transpose=transpose),
                                   jl.ormqr(a, taus, c, left=left, transpose=transpose),
                                   rtol=1e-5, atol=1e-5)
  x = RNG.randn(6, 4).astype(np.float32)
  for o, t in zip(pl.qdwh(x), jl.qdwh(x)):
    assert o.dtype == t.dtype
    np.testing.assert_allclose(o, t, atol=1e-4)
  r = np.triu(RNG.randn(3, 3)).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
  w = RNG.randn(3).astype(np.float32)
  np.testing.assert_allclose(pl.cholesky_update(r, w), jl.cholesky_update(r, w), atol=1e-5)


def test_random_gamma_p():
  from purejax._src.random.gamma import random_gamma_p
  assert purejax.random.random_gamma_p is random_gamma_p
  jaxpr = purejax.make_jaxpr(lambda k: purejax.random.gamma(k, 2.0))(purejax.random.key(0))
  assert "random_gamma" in str(jaxpr)
