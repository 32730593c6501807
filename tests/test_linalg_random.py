"""lax.linalg decompositions (values, vmap, derivatives) and the random
samplers built on them (orthogonal, multivariate_normal)."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import random
from purejax.lax import linalg
from purejax._src.config import config
from purejax.test_util import check_grads

RNG = np.random.RandomState(0)
A = RNG.randn(5, 3).astype(np.float32)
SQ = RNG.randn(4, 4).astype(np.float32)
SPD = (SQ @ SQ.T + 4 * np.eye(4)).astype(np.float32)


def test_cholesky_reconstructs():
  L = np.asarray(linalg.cholesky(SPD))
  np.testing.assert_allclose(L, np.tril(L))
  np.testing.assert_allclose(L @ L.T, SPD, rtol=1e-5, atol=1e-5)


def test_cholesky_not_positive_definite_gives_nans():
  L = np.asarray(linalg.cholesky(-np.eye(2, dtype=np.float32)))
  assert np.isnan(L[1, 0]) and np.isnan(L[0, 0])


@pytest.mark.parametrize("full", [True, False])
def test_qr_reconstructs(full):
  q, r = (np.asarray(t) for t in linalg.qr(A, full_matrices=full))
  assert q.shape == ((5, 5) if full else (5, 3))
  assert r.shape == ((5, 3) if full else (3, 3))
  np.testing.assert_allclose(q @ r, A, atol=1e-5)
  np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-5)
  np.testing.assert_allclose(r, np.triu(r))


def test_eigh_reconstructs():
  v, w = (np.asarray(t) for t in linalg.eigh(SPD))
  assert np.all(np.diff(w) >= 0)
  np.testing.assert_allclose(v @ np.diag(w) @ v.T, SPD, rtol=1e-4, atol=1e-4)


def test_svd_reconstructs():
  u, s, vh = (np.asarray(t) for t in linalg.svd(A, full_matrices=False))
  np.testing.assert_allclose(u @ np.diag(s) @ vh, A, atol=1e-5)
  s_only = np.asarray(linalg.svd(A, compute_uv=False))
  np.testing.assert_allclose(s_only, np.linalg.svd(A, compute_uv=False), rtol=1e-5)
  u, s, vh = linalg.svd(A)
  assert u.shape == (5, 5) and vh.shape == (3, 3) and s.dtype == np.float32


def test_complex_eigh_has_real_eigenvalues():
  c = (SQ + 1j * SQ.T).astype(np.complex64)
  h = c @ c.conj().T
  v, w = linalg.eigh(h)
  assert w.dtype == np.float32 and v.dtype == np.complex64
  v, w = np.asarray(v), np.asarray(w)
  np.testing.assert_allclose(v @ np.diag(w) @ v.conj().T, h, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name,fn", [
    ("cholesky", linalg.cholesky),
    ("qr", lambda x: linalg.qr(x, full_matrices=False)),
    ("eigh", linalg.eigh),
    ("svd", lambda x: linalg.svd(x, full_matrices=False)),
])
def test_vmap_matches_loop(name, fn):
  xs = np.stack([SPD, SPD + np.eye(4, dtype=np.float32), 2 * SPD], axis=2)  # batch axis 2
  out = purejax.vmap(fn, in_axes=2)(xs)
  outs = out if isinstance(out, tuple) else (out,)
  for i in range(3):
    each = fn(xs[..., i])
    each = each if isinstance(each, tuple) else (each,)
    for a, b in zip(outs, each):
      np.testing.assert_allclose(np.asarray(a)[i], np.asarray(b), rtol=1e-5, atol=1e-5)


def test_grads_against_finite_differences():
  with config.override("jax_enable_x64", True):
    rng = np.random.RandomState(1)
    a = rng.randn(4, 4)
    spd = a @ a.T + 4 * np.eye(4)
    check_grads(linalg.cholesky, (spd,), 2)
    check_grads(lambda x: linalg.qr(x, full_matrices=False), (rng.randn(5, 3),), 2)
    check_grads(linalg.qr, (a,), 1)
    check_grads(lambda x: linalg.eigh(x)[1], (spd,), 1)
    # eigenvectors up to sign: |v| is smooth for distinct eigenvalues
    check_grads(lambda x: jnp.abs(linalg.eigh(x)[0]), (spd,), 1)


def test_vmap_of_grad_cholesky():
  g = purejax.grad(lambda x: linalg.cholesky(x).sum())
  out = purejax.vmap(g)(np.stack([SPD, 2 * SPD]))
  np.testing.assert_allclose(np.asarray(out)[0], np.asarray(g(SPD)), rtol=1e-5)


def test_svd_singular_values_are_differentiable():
  check_grads(lambda x: linalg.svd(x, compute_uv=False), (SQ,), 1, atol=1e-2, rtol=1e-2)


def test_qr_of_wide_matrix_matches_jax_derivative():
  jax = pytest.importorskip("jax")
  ours = purejax.jacfwd(lambda x: linalg.qr(x, full_matrices=False)[1])(A.T)
  theirs = jax.jacfwd(lambda x: jax.lax.linalg.qr(x, full_matrices=False)[1])(A.T)
  np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


# -- random samplers ------------------------------------------------------------

def test_orthogonal_is_orthogonal():
  q = np.asarray(random.orthogonal(random.PRNGKey(3), 4, (2,)))
  assert q.shape == (2, 4, 4)
  for m in q:
    np.testing.assert_allclose(m @ m.T, np.eye(4), atol=1e-5)
  wide = np.asarray(random.orthogonal(random.PRNGKey(3), 2, m=5))
  assert wide.shape == (2, 5)
  np.testing.assert_allclose(wide @ wide.T, np.eye(2), atol=1e-5)


def test_orthogonal_statistics():
  # Haar measure: E[Q] = 0 and each entry has variance 1/n.
  q = np.asarray(random.orthogonal(random.PRNGKey(0), 3, (4000,)))
  assert np.abs(q.mean(0)).max() < 0.05
  np.testing.assert_allclose(q.var(0), 1 / 3, atol=0.03)


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_statistics(method):
  mean = np.array([1., -2., 0.5], np.float32)
  cov = np.array([[2., .5, .1], [.5, 1., .2], [.1, .2, .7]], np.float32)
  x = np.asarray(random.multivariate_normal(random.PRNGKey(5), mean, cov, (20000,),
                                            method=method))
  assert x.shape == (20000, 3) and x.dtype == np.float32
  np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
  np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


def test_multivariate_normal_broadcast_shape():
  mean = jnp.zeros((2, 3))
  x = random.multivariate_normal(random.PRNGKey(0), mean, jnp.eye(3))
  assert x.shape == (2, 3)
  with pytest.raises(ValueError, match="cov.shape"):
    random.multivariate_normal(random.PRNGKey(0), jnp.zeros(3), jnp.eye(2))


# -- against real JAX -------------------------------------------------------------

def test_qr_signs_match_jax():
  jax = pytest.importorskip("jax")
  for full in (True, False):
    q, r = linalg.qr(A, full_matrices=full)
    jq, jr = jax.lax.linalg.qr(A, full_matrices=full)
    np.testing.assert_allclose(np.asarray(q), np.asarray(jq), atol=1e-5)
    np.testing.assert_allclose(np.asarray(r), np.asarray(jr), atol=1e-5)


def test_eigh_order_matches_jax():
  jax = pytest.importorskip("jax")
  v, w = linalg.eigh(SPD)
  jv, jw = jax.lax.linalg.eigh(SPD)
  np.testing.assert_allclose(np.asarray(w), np.asarray(jw), rtol=1e-5)
  # eigenvectors agree up to sign
  np.testing.assert_allclose(np.abs(np.asarray(v)), np.abs(np.asarray(jv)), atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("n,shape,m", [(3, (), None), (4, (2,), None), (2, (), 5),
                                       (5, (), 3)])
def test_orthogonal_matches_jax(seed, n, shape, m):
  jax = pytest.importorskip("jax")
  ours = random.orthogonal(random.PRNGKey(seed), n, shape, m=m)
  theirs = jax.random.orthogonal(jax.random.PRNGKey(seed), n, shape, m=m)
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 42])
@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_matches_jax(seed, method):
  jax = pytest.importorskip("jax")
  mean = np.array([1., -1., 0.], np.float32)
  cov = np.array([[2., .5, .1], [.5, 1., .2], [.1, .2, .7]], np.float32)
  ours = random.multivariate_normal(random.PRNGKey(seed), mean, cov, (4,), method=method)
  theirs = jax.random.multivariate_normal(jax.random.PRNGKey(seed), mean, cov, (4,),
                                          method=method)
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), atol=1e-4)
