"""lax.linalg: triangular_solve, lu, lu_pivots_to_permutation, eig,
tridiagonal_solve, householder_product and the derivatives of cholesky, qr,
eigh and svd; against NumPy (float64), finite differences and live JAX."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.lax import linalg
from purejax.test_util import check_grads
from conftest import oracle

RNG = np.random.RandomState(0)
SQ = RNG.randn(4, 4)
TRI = np.tril(SQ) + 4 * np.eye(4)
SPD = SQ @ SQ.T + 4 * np.eye(4)
TALL = RNG.randn(5, 3)
CSQ = RNG.randn(4, 4) + 1j * RNG.randn(4, 4)
f32 = lambda x: np.asarray(x, np.complex64 if np.iscomplexobj(x) else np.float32)


def _close(a, b, tol=1e-5):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _op(a, lower, transpose_a, conjugate_a, unit_diagonal):
  """op(A) as the solve reads it, built densely by NumPy."""
  a = np.tril(a) if lower else np.triu(a)
  if unit_diagonal:
    a = a - np.diag(np.diag(a)) + np.eye(len(a))
  a = a.conj() if conjugate_a else a
  return a.T if transpose_a else a


# -- triangular_solve -------------------------------------------------------------

@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a,conjugate_a,unit_diagonal",
                         [(False, False, False), (True, False, True), (True, True, False),
                          (False, True, True)])
def test_triangular_solve_matches_numpy(x64, left_side, lower, transpose_a, conjugate_a,
                                        unit_diagonal):
  a = CSQ + 4 * np.eye(4)
  b = RNG.randn(4, 3) if left_side else RNG.randn(3, 4)
  x = linalg.triangular_solve(a, b.astype(complex), left_side=left_side, lower=lower,
                              transpose_a=transpose_a, conjugate_a=conjugate_a,
                              unit_diagonal=unit_diagonal)
  op = _op(a, lower, transpose_a, conjugate_a, unit_diagonal)
  want = np.linalg.solve(op, b) if left_side else np.linalg.solve(op.T, b.T).T
  assert x.dtype == np.complex128 and x.shape == b.shape
  _close(x, want, 1e-10)


def test_triangular_solve_vector_rhs_and_errors():
  x = linalg.triangular_solve(f32(TRI), f32(np.ones(4)), left_side=True, lower=True)
  _close(x, np.linalg.solve(TRI, np.ones(4)))
  assert x.shape == (4,) and x.dtype == np.float32
  with pytest.raises(TypeError, match="does not accept dtype int32 at position 0"):
    linalg.triangular_solve(np.eye(3, dtype=np.int32), f32(np.ones((3, 3))))
  with pytest.raises(ValueError, match="Incompatible shapes"):
    linalg.triangular_solve(f32(TRI), f32(np.ones((3, 4))), left_side=True)
  with pytest.raises(ValueError, match="must be a square matrix"):
    linalg.triangular_solve(f32(np.ones((3, 4))), f32(np.ones((4, 4))))


@pytest.mark.parametrize("left_side,lower,transpose_a", [(True, True, False),
                                                         (False, False, True)])
def test_triangular_solve_grads(x64, left_side, lower, transpose_a):
  b = RNG.randn(4, 2) if left_side else RNG.randn(2, 4)
  f = lambda a, b: linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a)
  check_grads(f, (TRI if lower else TRI.T, b), 2)


@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_vmap(left_side):
  a = f32(np.stack([TRI, TRI + np.eye(4), 2 * TRI]))
  b = f32(RNG.randn(3, 4, 2) if left_side else RNG.randn(3, 2, 4))
  f = lambda a, b: linalg.triangular_solve(a, b, left_side=left_side, lower=True)
  for in_axes in [(0, 0), (None, 0), (0, None)]:
    args = [a if in_axes[0] == 0 else a[0], b if in_axes[1] == 0 else b[0]]
    out = purejax.vmap(f, in_axes=in_axes)(*args)
    for i in range(3):
      _close(out[i], f(*[x[i] if ax == 0 else x for x, ax in zip(args, in_axes)]))
  _close(purejax.jit(f)(a[0], b[0]), f(a[0], b[0]))


# -- lu ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu_reconstructs(x64, shape):
  a = RNG.randn(*shape)
  lu, pivots, perm = linalg.lu(a)
  assert pivots.dtype == perm.dtype == np.int32
  m, n = shape[-2:]
  k = min(m, n)
  assert lu.shape == a.shape and pivots.shape == shape[:-2] + (k,)
  assert perm.shape == shape[:-2] + (m,)
  lu, perm = np.asarray(lu), np.asarray(perm)
  for idx in np.ndindex(*shape[:-2]):
    l = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
    u = np.triu(lu[idx])[:k]
    _close(l @ u, a[idx][perm[idx]], 1e-12)
  _close(linalg.lu_pivots_to_permutation(pivots, m), perm, 0)


def test_lu_grads(x64):
  check_grads(lambda x: linalg.lu(x)[0], (SQ,), 2)
  check_grads(lambda x: linalg.lu(x)[0], (TALL,), 1)


def test_lu_vmap_and_jit():
  xs = f32(RNG.randn(3, 4, 4))
  outs = purejax.vmap(linalg.lu)(xs)
  for i in range(3):
    for a, b in zip(outs, linalg.lu(xs[i])):
      _close(a[i], b, 0)
  for a, b in zip(purejax.jit(linalg.lu)(xs[0]), linalg.lu(xs[0])):
    _close(a, b, 0)


def test_lu_pivots_to_permutation_errors():
  assert list(linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 5)) == \
      [2, 0, 1, 3, 4]
  with pytest.raises(ValueError, match="has to exceed"):
    linalg.lu_pivots_to_permutation(np.array([2, 2, 2], np.int32), 2)
  with pytest.raises(TypeError, match="lu does not accept dtype int32"):
    linalg.lu(np.eye(3, dtype=np.int32))


# -- eig ----------------------------------------------------------------------------------

def test_eig_properties(x64):
  w, vl, vr = linalg.eig(SQ)
  assert w.dtype == vl.dtype == vr.dtype == np.complex128
  w, vl, vr = map(np.asarray, (w, vl, vr))
  _close(SQ @ vr, vr * w, 1e-10)
  _close(vl.conj().T @ SQ, w[:, None] * vl.conj().T, 1e-10)
  _close(np.linalg.norm(vl, axis=0), np.ones(4), 1e-12)
  w_only, = linalg.eig(SQ, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
  _close(w_only, w, 1e-12)


def test_eig_vmap_and_errors():
  xs = f32(RNG.randn(2, 3, 3))
  w, vr = purejax.vmap(lambda x: linalg.eig(x, compute_left_eigenvectors=False))(xs)
  for i in range(2):
    _close(w[i], linalg.eig(xs[i])[0])
  with pytest.raises(ValueError, match="must be a square matrix"):
    linalg.eig(f32(np.ones((2, 3))))
  with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
    purejax.jvp(linalg.eig, (xs[0],), (xs[1],))


def test_eig_jvp_eigenvalues(x64):
  # The eigenvalues of a real matrix with real spectrum: compare to finite differences.
  a = SPD + np.triu(SQ, 1) * 0.1
  f = lambda x: jnp.real(linalg.eig(x, compute_left_eigenvectors=False,
                                    compute_right_eigenvectors=False)[0])
  check_grads(f, (a,), 1, modes=("fwd",))


# -- tridiagonal_solve ---------------------------------------------------------------------

def _tridiag(m=5):
  dl, d, du = RNG.randn(3, m)
  dl[0], du[-1] = 0, 0
  return dl, d + 4, du


def test_tridiagonal_solve_matches_dense(x64):
  dl, d, du = _tridiag()
  b = RNG.randn(5, 2)
  dense = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
  _close(linalg.tridiagonal_solve(dl, d, du, b), np.linalg.solve(dense, b), 1e-12)
  with pytest.raises(TypeError, match="same shape"):
    linalg.tridiagonal_solve(dl[:3], d, du, b)


def test_tridiagonal_solve_grads(x64):
  dl, d, du = _tridiag()
  check_grads(linalg.tridiagonal_solve, (dl, d, du, RNG.randn(5, 2)), 1)


def test_tridiagonal_solve_vmap():
  dl, d, du = (f32(np.stack([v, v * 0.5])) for v in _tridiag())
  b = f32(RNG.randn(2, 5, 3))
  out = purejax.vmap(linalg.tridiagonal_solve)(dl, d, du, b)
  shared = purejax.vmap(linalg.tridiagonal_solve, in_axes=(None, None, None, 0))(
      dl[0], d[0], du[0], b)
  for i in range(2):
    _close(out[i], linalg.tridiagonal_solve(dl[i], d[i], du[i], b[i]))
    _close(shared[i], linalg.tridiagonal_solve(dl[0], d[0], du[0], b[i]))


# -- decompositions' derivatives -------------------------------------------------------------

def test_cholesky_qr_eigh_grads(x64):
  check_grads(linalg.cholesky, (SPD,), 2)
  check_grads(lambda x: linalg.qr(x, full_matrices=False), (TALL,), 1)
  check_grads(linalg.qr, (TALL,), 1)          # complete Q of a tall matrix
  check_grads(linalg.qr, (TALL.T,), 1)        # wide
  check_grads(lambda x: linalg.qr(x, pivoting=True)[:2], (SQ,), 1)
  check_grads(lambda x: linalg.eigh(x)[1], (SPD,), 1)


@pytest.mark.parametrize("x", [TALL, TALL.T, SQ], ids=["tall", "wide", "square"])
def test_svd_grads(x64, x):
  # Singular vectors are defined up to sign: differentiate sign-free functions.
  check_grads(lambda x: linalg.svd(x, compute_uv=False), (x,), 2)
  def f(x):
    u, s, vh = linalg.svd(x, full_matrices=False)
    return s, (u * u[..., :1, :]), (vh * vh[..., :, :1])
  check_grads(f, (x,), 1)


def test_svd_subset_and_full_matrices(x64):
  u, s, vh = linalg.svd(SQ, full_matrices=False, subset_by_index=(1, 3))
  _, s_all, _ = np.linalg.svd(SQ)
  assert u.shape == (4, 2) and vh.shape == (2, 4)
  _close(s, s_all[1:3], 1e-12)
  check_grads(lambda x: linalg.svd(x, full_matrices=False, compute_uv=False,
                                   subset_by_index=(0, 2)), (SQ,), 1)
  with pytest.raises(ValueError, match="cannot both be set"):
    linalg.svd(SQ, subset_by_index=(1, 3))
  with pytest.raises(NotImplementedError, match="full matrices"):
    purejax.jacfwd(lambda x: linalg.svd(x)[0])(TALL)


def test_householder_product(x64):
  h, taus = np.linalg.qr(TALL, mode="raw")
  q = linalg.householder_product(h.T, taus)
  _close(q, np.linalg.qr(TALL)[0], 1e-12)
  with pytest.raises(ValueError, match="at least as many rows"):
    linalg.householder_product(TALL.T, taus)


# -- against JAX ---------------------------------------------------------------------------

def _jax_close(ours, theirs, tol=2e-5):
  ours = ours if isinstance(ours, (tuple, list)) else [ours]
  theirs = theirs if isinstance(theirs, (tuple, list)) else [theirs]
  assert len(ours) == len(theirs)
  for a, b in zip(ours, theirs):
    assert a.dtype == b.dtype and a.shape == b.shape
    _close(a, b, tol)


def test_values_match_jax():
  jax = oracle()
  a, tall, spd = f32(SQ), f32(TALL), f32(SPD)
  b = f32(RNG.randn(4, 2))
  for name, args, kw in [("lu", (a,), {}), ("lu", (tall,), {}), ("eig", (a,), {}),
                         ("qr", (a,), dict(pivoting=True)),
                         ("triangular_solve", (a + 4 * np.eye(4, dtype=np.float32), b),
                          dict(left_side=True, lower=True, transpose_a=True)),
                         ("tridiagonal_solve", tuple(map(f32, _tridiag(4))) + (b,), {})]:
    theirs = jax.jit(lambda *a: getattr(jax.lax.linalg, name)(*a, **kw))(*args)
    _jax_close(getattr(linalg, name)(*args, **kw), theirs)
  jac = jax.numpy.linalg.qr(tall, mode="raw")
  _jax_close(linalg.householder_product(jac[0].T, jac[1]),
             jax.lax.linalg.householder_product(jac[0].T, jac[1]))
  _jax_close(linalg.cholesky(spd), jax.lax.linalg.cholesky(spd))


@pytest.mark.parametrize("name", ["cholesky", "qr", "qr_tall", "qr_wide", "eigh", "svd",
                                  "lu", "triangular_solve", "tridiagonal_solve"])
def test_grads_match_jax(name):
  jax = oracle()
  spd, a, tall = f32(SPD), f32(SQ), f32(TALL)
  w4 = f32(RNG.randn(4, 4))
  tri = tuple(map(f32, _tridiag(4)))

  def fn(L, lnp):
    return {
        "cholesky": (lambda x: (L.cholesky(x) * w4).sum(), spd),
        "qr": (lambda x: (L.qr(x)[0] * w4).sum() + L.qr(x)[1].sum(), a),
        "qr_tall": (lambda x: L.qr(x)[0].sum() + (L.qr(x)[1] ** 2).sum(), tall),
        "qr_wide": (lambda x: L.qr(x)[0].sum() + (L.qr(x)[1] ** 2).sum(), tall.T),
        "eigh": (lambda x: (L.eigh(x)[0] ** 2 * w4).sum() + L.eigh(x)[1].sum(), spd),
        "svd": (lambda x: sum(lnp.abs(t).sum() for t in L.svd(x, full_matrices=False)), tall),
        "lu": (lambda x: (L.lu(x)[0] * w4).sum(), a),
        "triangular_solve": (lambda x: (L.triangular_solve(x + 4 * np.eye(4, dtype=np.float32),
                                                            w4, lower=True) * w4).sum(), a),
        "tridiagonal_solve": (lambda x: (L.tridiagonal_solve(*tri, x) ** 2
                                         ).sum(), w4),
    }[name]

  f, x = fn(linalg, jnp)
  g, _ = fn(jax.lax.linalg, jax.numpy)
  _close(purejax.grad(f)(x), jax.jit(jax.grad(g))(x), 5e-5)


def test_eig_jvp_matches_jax():
  jax = oracle()
  a, da = f32(SQ), f32(RNG.randn(4, 4))
  f = lambda L: (lambda x: L.eig(x, enable_eigvec_derivs=True))
  _, ours = purejax.jvp(f(linalg), (a,), (da,))
  _, theirs = jax.jit(lambda a, da: jax.jvp(f(jax.lax.linalg), (a,), (da,)))(a, da)
  _jax_close(ours, theirs, 1e-4)


@pytest.mark.parametrize("name", ["triangular_solve", "lu", "eigh", "svd", "qr",
                                  "cholesky", "tridiagonal_solve"])
def test_jaxpr_matches_jax(name):
  jax = oracle()
  a = f32(SQ)
  d = f32(np.ones(4))
  args = {"triangular_solve": (a, a), "tridiagonal_solve": (d, d, d, a)}.get(name, (a,))
  ours = purejax.make_jaxpr(getattr(linalg, name))(*args)
  theirs = jax.make_jaxpr(getattr(jax.lax.linalg, name))(*args)
  assert str(ours) == str(theirs)


def test_without_scipy_import_fails_naming_it():
  # SciPy is a dependency (its LAPACK runs every lax.linalg primitive): an
  # install without it fails at import, saying so, instead of running
  # something else.
  import subprocess
  import sys
  code = "import sys; sys.modules['scipy'] = None; import purejax"
  run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
  assert run.returncode != 0
  assert "ImportError" in run.stderr
  assert "SciPy" in run.stderr and "pip install scipy" in run.stderr, run.stderr


def test_scipy_without_lapack_fails_naming_it(monkeypatch):
  import sys
  import scipy.linalg
  from purejax._src.lax import lapack
  monkeypatch.setitem(sys.modules, "scipy.linalg.cython_lapack", None)
  monkeypatch.delattr(scipy.linalg, "cython_lapack", raising=False)
  with pytest.raises(ImportError, match="pip install scipy"):
    lapack.scipy_linalg()
