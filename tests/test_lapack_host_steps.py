"""The lax.linalg primitives run as direct LAPACK calls (SciPy's
cython_lapack through ctypes, lax/lapack.py), eager and as host steps of the
C backend alike: jitted results equal the eager ones bit for bit, match
NumPy/SciPy (and JAX when installed), batches run as one compiled loop, and
the time-critical primitives make one library call per matrix.
"""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import pjit
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config
from purejax._src.lax import lapack
from purejax._src.lax import linalg as lax_linalg

scipy_linalg = pytest.importorskip("scipy.linalg")
pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

RNG = np.random.RandomState(0)
linalg = lax.linalg


def _rand(*shape, dtype=np.float32):
  x = RNG.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * RNG.standard_normal(shape)
  return x.astype(dtype)


def _spd(*shape, dtype=np.float32):
  """Positive definite matrices: ``shape`` is the batch shape and n."""
  n = shape[-1]
  a = _rand(*shape, n, dtype=dtype)
  return (a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n)).astype(dtype)


def _tol(dtype):
  return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def jit_c(f, *args):
  """``jit(f)(*args)`` on the C backend, which must have compiled kernels
  around the LAPACK host steps: f's inputs are doubled (exactly) first."""
  g = lambda *xs: f(*[x * 2 for x in xs])
  jf = purejax.jit(g)
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    out = jf(*args)
    exe = pjit.executable_for(jf.trace(*args).jaxpr)
  outs = [np.asarray(o) for o in purejax.tree_util.tree_leaves(out)]
  if any(np.dtype(x.dtype).kind == "c" for x in args):
    return outs, None     # complex arithmetic is not compiled: no kernels around
  assert hasattr(exe, "source"), "the C backend did not compile the program"
  hosts = {s.eqn.primitive.name for s in exe.plan.steps if type(s).__name__ == "HostStep"}
  return outs, hosts


def eager(f, *args):
  out = f(*[jnp.asarray(x) * 2 for x in args])
  return [np.asarray(o) for o in purejax.tree_util.tree_leaves(out)]


def check_same(f, *args, prim):
  """The jitted outputs equal the eager ones bit for bit (one implementation)."""
  got, hosts = jit_c(f, *args)
  assert hosts is None or prim in hosts
  want = eager(f, *args)
  assert len(got) == len(want)
  for g, w in zip(got, want):
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(g, w)
  return got


DTYPES = [np.float32, np.complex64, np.float64]


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
  if request.param == np.float64:
    with config.override("jax_enable_x64", True):
      yield request.param
  else:
    yield request.param


# -- each primitive: jit == eager, and NumPy/SciPy ---------------------------------------

def test_lu(dtype):
  a = _rand(3, 7, 7, dtype=dtype)
  lu, piv, perm = check_same(linalg.lu, a, prim="lu")
  for i in range(3):
    ref_lu, ref_piv = scipy_linalg.lu_factor(2 * a[i])
    np.testing.assert_array_equal(piv[i], ref_piv)
    np.testing.assert_allclose(lu[i], ref_lu, rtol=_tol(dtype), atol=_tol(dtype))
    l = np.tril(lu[i], -1) + np.eye(7)
    np.testing.assert_allclose(l @ np.triu(lu[i]), 2 * a[i][perm[i]], atol=10 * _tol(dtype))


def test_lu_rectangular_and_singular():
  a = _rand(2, 5, 3)
  lu, piv, perm = check_same(linalg.lu, a, prim="lu")
  ref_lu, ref_piv = scipy_linalg.lu_factor(2 * a[1])
  np.testing.assert_allclose(lu[1], ref_lu, rtol=1e-5, atol=1e-5)
  # A singular matrix factorizes without NaNs (zeros on U's diagonal), as JAX's.
  s = np.ones((4, 4), np.float32)
  lu, piv, _ = check_same(linalg.lu, s, prim="lu")
  assert not np.isnan(lu).any() and lu[1, 1] == 0
  np.testing.assert_array_equal(piv, [0, 1, 2, 3])


@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a,unit_diagonal", [
    (True, True, False, False, False), (True, False, True, False, True),
    (False, True, True, True, False), (False, False, False, True, True),
    (True, True, True, True, False)])
def test_triangular_solve(dtype, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  a = _rand(2, 6, 6, dtype=dtype) + 4 * np.eye(6, dtype=dtype)
  b = _rand(2, 6, 3, dtype=dtype) if left_side else _rand(2, 3, 6, dtype=dtype)
  f = lambda a, b: linalg.triangular_solve(
      a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
      conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
  (x,) = check_same(f, a, b, prim="triangular_solve")
  t = np.tril(2 * a) if lower else np.triu(2 * a)
  if unit_diagonal:
    t = t - np.diag(np.diagonal(t, axis1=-2, axis2=-1)[0]) * 0 - t * np.eye(6) + np.eye(6)
  if conjugate_a and np.dtype(dtype).kind == "c":
    t = np.conj(t)
  if transpose_a:
    t = np.swapaxes(t, -1, -2)
  np.testing.assert_allclose(t @ x if left_side else x @ t, 2 * b, atol=100 * _tol(dtype))


def test_cholesky_and_not_positive_definite(dtype):
  a = _spd(3, 6, dtype=dtype)
  a[1] = -np.eye(6, dtype=dtype)          # not positive definite: NaNs, this one only
  (l,) = check_same(linalg.cholesky, a, prim="cholesky")
  assert np.isnan(l[1][np.tril_indices(6)]).all()     # (zeros above, as JAX's)
  for i in (0, 2):
    np.testing.assert_allclose(l[i], np.linalg.cholesky(2 * a[i]), atol=10 * _tol(dtype))


@pytest.mark.parametrize("shape,full", [((6, 4), True), ((6, 4), False), ((4, 6), True)])
def test_qr(dtype, shape, full):
  a = _rand(2, *shape, dtype=dtype)
  q, r = check_same(lambda x: linalg.qr(x, full_matrices=full), a, prim="qr")
  ref_q, ref_r = np.linalg.qr(2 * a, mode="complete" if full else "reduced")
  np.testing.assert_allclose(q, ref_q, atol=10 * _tol(dtype))
  np.testing.assert_allclose(r, ref_r, atol=10 * _tol(dtype))


def test_qr_pivoting_geqrf_householder(dtype):
  a = _rand(2, 6, 5, dtype=dtype)
  q, r, p = check_same(lambda x: linalg.qr(x, pivoting=True, full_matrices=False), a,
                       prim="qr")
  ref_q, ref_r, ref_p = scipy_linalg.qr(2 * a[1], pivoting=True, mode="economic")
  np.testing.assert_array_equal(p[1], ref_p)
  np.testing.assert_allclose(r[1], ref_r, atol=10 * _tol(dtype))
  h, taus = check_same(lax_linalg.geqrf, a, prim="geqrf")
  ref_h, ref_taus = np.linalg.qr(2 * a, mode="raw")
  np.testing.assert_allclose(h, np.swapaxes(ref_h, -1, -2), atol=10 * _tol(dtype))
  np.testing.assert_allclose(taus, ref_taus, atol=10 * _tol(dtype))
  (q,) = check_same(lambda x: lax_linalg.householder_product(*lax_linalg.geqrf(x)), a,
                    prim="householder_product")
  np.testing.assert_allclose(q, np.linalg.qr(2 * a)[0], atol=10 * _tol(dtype))


def test_eigh(dtype):
  a = _spd(3, 7, dtype=dtype)
  v, w = check_same(linalg.eigh, a, prim="eigh")
  ref_w = np.linalg.eigvalsh(2 * a)
  np.testing.assert_allclose(w, ref_w, rtol=10 * _tol(dtype), atol=10 * _tol(dtype))
  np.testing.assert_allclose((2 * a) @ v, v * w[..., None, :].astype(dtype),
                             atol=100 * _tol(dtype))


def test_eigenvalues_alone_skip_the_eigenvectors(dtype, monkeypatch):
  """A jitted function that reads only eigh's eigenvalues (eigvalsh, eigh(a)[0])
  has LAPACK compute no eigenvectors: the same eigenvalues to rounding, the
  same bits on every call."""
  asked = []
  syevd = lapack.syevd
  monkeypatch.setattr(lapack, "syevd", lambda *a, **k: asked.append(k.get("vectors", True))
                      or syevd(*a, **k))
  a = _spd(3, 40, dtype=dtype)
  ref = np.linalg.eigvalsh(a.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                    else np.float64))
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    for f, factor in [(jnp.linalg.eigvalsh, 1), (lambda x: jnp.linalg.eigh(x)[0], 1),
                      (lambda x: linalg.eigh(x * 2)[1], 2)]:
      del asked[:]
      jf = purejax.jit(f)
      first = np.asarray(jf(a))
      assert asked == [False]
      np.testing.assert_allclose(first, factor * ref, rtol=10 * _tol(dtype))
      np.testing.assert_array_equal(np.asarray(jf(a)), first)
    del asked[:]
    w, v = purejax.jit(jnp.linalg.eigh)(a)    # both read: the vectors are computed
    assert asked == [True]
    np.testing.assert_allclose(np.asarray(w), ref, rtol=10 * _tol(dtype))
    del asked[:]
    g = purejax.jit(purejax.grad(lambda x: jnp.linalg.eigvalsh(x).sum().real))(a)
    assert asked == [True]                     # the gradient reads the vectors
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(np.eye(40), a.shape),
                               atol=100 * _tol(dtype))


def test_svd(dtype):
  a = _rand(2, 6, 4, dtype=dtype)
  u, s, vh = check_same(lambda x: linalg.svd(x, full_matrices=False), a, prim="svd")
  np.testing.assert_allclose(s, np.linalg.svd(2 * a, compute_uv=False),
                             rtol=10 * _tol(dtype))
  np.testing.assert_allclose((u * s[..., None, :]) @ vh, 2 * a, atol=100 * _tol(dtype))
  (s2,) = check_same(lambda x: linalg.svd(x, compute_uv=False), a, prim="svd")
  np.testing.assert_allclose(s2, s, rtol=10 * _tol(dtype))
  u, s, vh = check_same(lambda x: linalg.svd(x, full_matrices=True), a, prim="svd")
  assert u.shape == (2, 6, 6) and vh.shape == (2, 4, 4)


def test_eig(dtype):
  a = _rand(2, 5, 5, dtype=dtype)
  w, vl, vr = check_same(linalg.eig, a, prim="eig")
  for i in range(2):
    ref_w, ref_vl, ref_vr = scipy_linalg.eig(2 * a[i], left=True, right=True)
    np.testing.assert_allclose(w[i], ref_w, atol=10 * _tol(dtype))
    np.testing.assert_allclose(vr[i], ref_vr, atol=100 * _tol(dtype))
    np.testing.assert_allclose(vl[i], ref_vl, atol=100 * _tol(dtype))
  (w2,) = check_same(lambda x: linalg.eig(x, compute_left_eigenvectors=False,
                                          compute_right_eigenvectors=False), a, prim="eig")
  np.testing.assert_allclose(w2, w, atol=10 * _tol(dtype))


def test_tridiagonal_solve_and_singular(dtype):
  m = 6
  dl, d, du = _rand(3, m, dtype=dtype), _rand(3, m, dtype=dtype), _rand(3, m, dtype=dtype)
  dl[:, 0] = 0
  du[:, -1] = 0
  d[2] = 0
  dl[2] = 0
  du[2] = 0                                 # singular: NaNs, this system only
  b = _rand(3, m, 2, dtype=dtype)
  (x,) = check_same(lambda dl, d, du, b: linalg.tridiagonal_solve(dl, d, du, b),
                    dl, d, du, b, prim="tridiagonal_solve")
  assert np.isnan(x[2]).all()
  for i in range(2):
    a = 2 * (np.diag(d[i]) + np.diag(dl[i, 1:], -1) + np.diag(du[i, :-1], 1))
    np.testing.assert_allclose(a @ x[i], 2 * b[i], atol=100 * _tol(dtype))


def test_solve_singular_gives_nonfinite():
  a = np.ones((3, 3), np.float32)
  b = np.ones((3, 1), np.float32)
  (x,), _ = jit_c(lambda a, b: jnp.linalg.solve(a, b), a, b)
  assert not np.isfinite(x).all()


# -- one library call per matrix, batches in one loop ------------------------------------

def test_jitted_solve_is_one_getrf_and_two_trsm():
  a = _rand(64, 64) + 8 * np.eye(64, dtype=np.float32)
  b = _rand(64, 3)
  f = lambda a, b: jnp.linalg.solve(a, b)
  jit_c(f, a, b)                                        # compile first
  before = lapack.calls.copy()
  (x,), hosts = jit_c(f, a, b)
  made = lapack.calls - before
  assert dict(made) == {"sgetrf": 1, "strsm": 2}
  assert hosts == {"lu", "triangular_solve"}
  np.testing.assert_allclose((2 * a) @ x, 2 * b, atol=1e-3)


def test_batch_is_one_loop():
  a = _rand(50, 8, 8) + 4 * np.eye(8, dtype=np.float32)
  b = _rand(50, 8, 1)
  f = lambda a, b: jnp.linalg.solve(a, b)
  jit_c(f, a, b)
  calls, batches = lapack.calls.copy(), lapack.batches.copy()
  (x,), _ = jit_c(f, a, b)
  assert dict(lapack.calls - calls) == {"sgetrf": 50, "strsm": 100}
  assert dict(lapack.batches - batches) == {"sgetrf": 1, "strsm": 2}
  np.testing.assert_allclose(np.linalg.solve(2 * a, 2 * b), x, rtol=1e-4, atol=1e-4)


def test_python_loop_and_compiled_loop_agree(monkeypatch):
  a = _spd(9, 12)
  assert lapack.batch_loop_provider is not None
  compiled = [lapack.syevd(a, lower=True), lapack.gesdd(a, full_matrices=False,
                                                        compute_uv=True)]
  monkeypatch.setattr(lapack, "batch_loop_provider", None)
  python = [lapack.syevd(a, lower=True), lapack.gesdd(a, full_matrices=False,
                                                      compute_uv=True)]
  for c, p in zip(compiled, python):
    for x, y in zip(c, p):
      np.testing.assert_array_equal(x, y)


def test_inputs_are_not_overwritten():
  a, b = _rand(2, 5, 5), _rand(2, 5, 1)
  a0, b0 = a.copy(), b.copy()
  lapack.getrf(a)
  lapack.trsm(a, b, left_side=True, lower=True, transpose_a=False, conjugate_a=False,
              unit_diagonal=False)
  lapack.gtsv(a[:, 0], a[:, 1], a[:, 2], b)
  np.testing.assert_array_equal(a, a0)
  np.testing.assert_array_equal(b, b0)


# -- against JAX ----------------------------------------------------------------------------

def test_against_jax():
  jax = pytest.importorskip("jax")
  a = _rand(2, 32, 32) + 4 * np.eye(32, dtype=np.float32)
  spd, b = _spd(2, 32), _rand(2, 32, 3)
  bad = spd.copy()
  bad[1] = -np.eye(32)
  cases = [
      (lambda m, a, b: m.numpy.linalg.solve(a, b), (a, b)),
      (lambda m, a: m.lax.linalg.lu(a), (a,)),
      (lambda m, a: m.lax.linalg.cholesky(a), (bad,)),
      (lambda m, a: m.lax.linalg.qr(a), (a,)),
      (lambda m, a: m.lax.linalg.eigh(a)[1], (spd,)),
      (lambda m, a: m.lax.linalg.svd(a, compute_uv=False), (a,)),
      (lambda m, a: m.lax.linalg.eig(a, compute_left_eigenvectors=False), (a,)),
  ]
  for f, args in cases:
    want = jax.tree_util.tree_leaves(jax.jit(lambda *xs: f(jax, *xs))(*args))
    got = purejax.tree_util.tree_leaves(purejax.jit(lambda *xs: f(purejax, *xs))(*args))
    for w, g in zip(want, got):
      np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_empty_matrices_and_batches():
  z = lambda *s: np.zeros(s, np.float32)
  cases = [
      (linalg.lu, (z(3, 0, 0),), [(3, 0, 0), (3, 0), (3, 0)]),
      (linalg.lu, (z(3, 2, 0),), [(3, 2, 0), (3, 0), (3, 2)]),
      (linalg.lu, (z(0, 4, 4),), [(0, 4, 4), (0, 4), (0, 4)]),
      (linalg.cholesky, (z(2, 0, 0),), [(2, 0, 0)]),
      (lambda a, b: linalg.triangular_solve(a, b), (z(2, 0, 0), z(2, 3, 0)), [(2, 3, 0)]),
      (linalg.eigh, (z(2, 0, 0),), [(2, 0, 0), (2, 0)]),
      (lambda *v: linalg.tridiagonal_solve(*v), (z(2, 0), z(2, 0), z(2, 0), z(2, 0, 1)),
       [(2, 0, 1)]),
  ]
  for f, args, shapes in cases:
    for fn in (f, purejax.jit(f)):
      out = purejax.tree_util.tree_leaves(fn(*args))
      assert [np.shape(o) for o in out] == shapes
