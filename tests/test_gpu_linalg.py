"""lax.linalg on a GPU's arrays: cuSOLVER and cuBLAS through CuPy's
bindings (backends/cuda/solver.py), on the device, nothing copied to the
host.  With the stand-in CuPy (tests/fake_cupy.py) the routines are
LAPACK's run on the stand-in arrays' memory with cuSOLVER's arguments
(tests/fake_cusolver.py); where CuPy finds a real GPU the same tests run
there too.  Results are compared with NumPy/SciPy in float64."""
import numpy as np
import pytest
import scipy.linalg

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config
from purejax._src.lax import linalg as linalg_p
from tests.test_gpu_devices import _counts, fake, gpu, needs_cc  # noqa: F401  (fixtures)

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _random(rng, shape, dtype):
  a = rng.randn(*shape)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * rng.randn(*shape)
  return a.astype(dtype)


def _tolerance(dtype):
  return 2e-4 if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64)) else 1e-10


def _on_gpu(*arrays):
  return [jax.device_put(a, jax.devices()[0]) for a in arrays]


def _run(gpu, f, *arrays, routines=None, scalars_read=False):
  """f jitted on the arrays put on the GPU: its results as host arrays,
  checking that nothing went to the host meanwhile (with ``scalars_read``:
  no array; a scatter's implementation reads scalars) and (stand-in CuPy)
  which cuSOLVER/cuBLAS routines ran."""
  args = _on_gpu(*arrays)
  before = _counts(gpu)
  calls = len(gpu.solver_libraries.calls) if before is not None else 0
  outs = jax.jit(f)(*args)
  outs = outs if isinstance(outs, (list, tuple)) else [outs]
  for o in outs:
    assert o.device == jax.devices()[0]
  if before is not None:
    copied = gpu.host_copies[len(gpu.host_copies) - (_counts(gpu)[1] - before[1]):]
    assert all(shape == () for shape in copied) if scalars_read else not copied, copied
    if routines is not None:
      assert set(gpu.solver_libraries.calls[calls:]) == set(routines)
  return [np.asarray(o) for o in outs]


def _x64(dtype):
  return config.override("jax_enable_x64",
                         np.dtype(dtype) in (np.dtype(np.float64), np.dtype(np.complex128)))


def _h(a):
  return np.conj(np.swapaxes(a, -1, -2))


def _batched(name, batch, n):
  """The routine a batch of matrices of n rows goes to: the batched one
  for several small matrices (solver.BATCHED_MAX), else one per matrix."""
  return name + "Batched" if len(batch) and np.prod(batch) > 1 and n <= 128 else name


@needs_cc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch,n", [((3,), 6), ((), 6), ((3,), 130)])
def test_cholesky_on_the_device_with_nan_for_failures(gpu, dtype, batch, n):
  p = "sdcz"[DTYPES.index(dtype)]
  rng = np.random.RandomState(1)
  a = _random(rng, batch + (n, n), dtype)
  spd = a @ _h(a) + n * np.eye(n)
  if batch:
    spd[1] = -spd[1]   # not positive definite: NaN
  spd = spd.astype(dtype)
  with _x64(dtype):
    (low,) = _run(gpu, lax.linalg.cholesky, spd, routines=[_batched(p + "potrf", batch, n)])
  assert low.dtype == dtype
  good = [0, 2] if batch else Ellipsis
  want = np.linalg.cholesky(spd[good].astype(np.complex128))
  tol = _tolerance(dtype) * (10 if n > 100 else 1)
  np.testing.assert_allclose(low[good], want, rtol=tol, atol=tol)
  if batch:
    assert np.isnan(low[1][np.tril_indices(n)]).all()
    assert (np.triu(low[0], 1) == 0).all()


@needs_cc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 5), (4, 6), (6, 3), (5, 5), (2, 3, 4)])
def test_lu_and_its_permutation_on_the_device(gpu, dtype, shape):
  p = "sdcz"[DTYPES.index(dtype)]
  a = _random(np.random.RandomState(2), shape, dtype)
  square = shape[-1] == shape[-2]
  with _x64(dtype):
    lu, pivots, perm = _run(gpu, lax.linalg.lu, a, routines=[
        _batched(p + "getrf", shape[:-2] if square else (), shape[-1])])
  m, n = shape[-2:]
  k = min(m, n)
  low = np.tril(lu[..., :, :k], -1) + np.eye(m, k)
  up = np.triu(lu[..., :k, :])
  rows = np.take_along_axis(a, perm[..., :, None], axis=-2)
  np.testing.assert_allclose(low @ up, rows, rtol=_tolerance(dtype) * 10,
                             atol=_tolerance(dtype) * 10)
  # The pivots are LAPACK's partial pivoting: the largest entry of the
  # column (by |re| + |im| for complex values: |l| <= sqrt(2)).
  assert np.all(np.abs(low) <= (np.sqrt(2) if low.dtype.kind == "c" else 1) + 1e-5)
  assert pivots.dtype == np.int32 and pivots.shape == shape[:-2] + (k,)
  assert sorted(perm.reshape(-1, m)[0].tolist()) == list(range(m))


def _jax_permutation(pivots, size):
  """JAX's permutation of row swaps: a negative pivot counts from the end;
  one out of range swaps with the nearest row's value, writing nothing."""
  perm = list(range(size))
  for i, j in enumerate(pivots):
    j = j + size if j < 0 else j
    x, perm[i] = perm[i], perm[min(max(j, 0), size - 1)]
    if 0 <= j < size:
      perm[j] = x
  return perm


@needs_cc
def test_pivots_to_permutation_kernel_takes_any_pivots(gpu):
  pivots = np.array([[2, -1, 7, 1], [3, 3, 3, 3], [-9, 0, 4, 2]], np.int32)
  (perm,) = _run(gpu, lambda p: lax.linalg.lu_pivots_to_permutation(p, 5), pivots)
  assert perm.tolist() == [_jax_permutation(p, 5) for p in pivots.tolist()]
  # the host's implementation (NumPy arrays) agrees
  host = lax.linalg.lu_pivots_to_permutation(pivots, 5)
  assert np.asarray(host).tolist() == perm.tolist()


def test_pivots_to_permutation_as_jax():
  jax_ = pytest.importorskip("jax")
  pivots = np.array([[2, -1, 7, 1], [5, 0, -6, 2]], np.int32)
  want = jax_.lax.linalg.lu_pivots_to_permutation(pivots, permutation_size=6)
  got = lax.linalg.lu_pivots_to_permutation(pivots, permutation_size=6)
  assert np.asarray(got).tolist() == np.asarray(want).tolist()
  assert [_jax_permutation(p, 6) for p in pivots.tolist()] == np.asarray(want).tolist()


@needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("op", ["N", "T", "C", "conj"])
@pytest.mark.parametrize("batch", [(2,), ()])
def test_triangular_solves_on_the_device(gpu, dtype, left_side, lower, op, batch):
  p = "sdcz"[DTYPES.index(dtype)]
  rng = np.random.RandomState(3)
  a = _random(rng, batch + (4, 4), dtype) + 4 * np.eye(4, dtype=dtype)
  b = _random(rng, batch + ((4, 3) if left_side else (3, 4)), dtype)
  params = dict(left_side=left_side, lower=lower, transpose_a=op in "TC",
                conjugate_a=op in ("C", "conj"), unit_diagonal=op == "T")
  with _x64(dtype):
    (x,) = _run(gpu, lambda a, b: lax.linalg.triangular_solve(a, b, **params), a, b,
                routines=[_batched(p + "trsm", batch, 4)])
  tri = (np.tril if lower else np.triu)(a.astype(np.complex128))
  if params["unit_diagonal"]:
    tri[..., np.arange(4), np.arange(4)] = 1
  opa = {"N": tri, "T": np.swapaxes(tri, -1, -2), "C": _h(tri), "conj": np.conj(tri)}[op]
  got = (opa @ x) if left_side else (x @ opa)
  np.testing.assert_allclose(got, b, rtol=_tolerance(dtype) * 10, atol=_tolerance(dtype) * 10)


@needs_cc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 4), (3, 5), (5, 5)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_on_the_device(gpu, dtype, shape, full_matrices):
  p = "sdcz"[DTYPES.index(dtype)]
  orgqr = p + ("ungqr" if p in "cz" else "orgqr")
  a = _random(np.random.RandomState(4), shape, dtype)
  with _x64(dtype):
    q, r = _run(gpu, lambda x: lax.linalg.qr(x, full_matrices=full_matrices), a,
                routines=[p + "geqrf", orgqr])
  m, n = shape[-2:]
  cols = m if full_matrices else min(m, n)
  assert q.shape == shape[:-2] + (m, cols) and r.shape == shape[:-2] + (cols, n)
  tol = _tolerance(dtype) * 10
  np.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol)
  np.testing.assert_allclose(_h(q) @ q, np.broadcast_to(np.eye(cols), _h(q).shape[:-2] +
                                                        (cols, cols)), atol=tol)
  assert np.allclose(np.tril(r, -1), 0)
  # the Householder pair, as geqrf and householder_product
  with _x64(dtype):
    f = lambda x: lax.linalg.householder_product(*linalg_p.geqrf(x))
    (q2,) = _run(gpu, f, a) if m >= n else (None,)
  if q2 is not None:
    np.testing.assert_allclose(q2, q[..., :, :n], rtol=tol, atol=tol)


@needs_cc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_on_the_device(gpu, dtype, lower):
  p = "sdcz"[DTYPES.index(dtype)]
  a = _random(np.random.RandomState(5), (2, 5, 5), dtype)
  herm = (a + _h(a)).astype(dtype)
  with _x64(dtype):
    v, w = _run(gpu, lambda x: lax.linalg.eigh(x, lower=lower, symmetrize_input=False), herm,
                routines=[p + ("heevd" if p in "cz" else "syevd")])
  tol = _tolerance(dtype) * 10
  np.testing.assert_allclose(w, np.linalg.eigvalsh(herm.astype(np.complex128)), rtol=tol,
                             atol=tol)
  np.testing.assert_allclose(herm @ v, v * w[..., None, :], rtol=tol, atol=tol)
  with _x64(dtype):   # the eigenvalues alone
    (w2,) = _run(gpu, lambda x: jnp.linalg.eigvalsh(x), herm)
  np.testing.assert_allclose(w2, w, rtol=tol, atol=tol)


@needs_cc
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 6, 4), (3, 5), (4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_on_the_device(gpu, dtype, shape, full_matrices):
  p = "sdcz"[DTYPES.index(dtype)]
  a = _random(np.random.RandomState(6), shape, dtype)
  with _x64(dtype):
    u, s, vh = _run(gpu, lambda x: jnp.linalg.svd(x, full_matrices=full_matrices), a,
                    routines=[p + "gesvd"])
    (s2,) = _run(gpu, lambda x: jnp.linalg.svd(x, compute_uv=False), a)
  m, n = shape[-2:]
  k = min(m, n)
  tol = _tolerance(dtype) * 10
  want = np.linalg.svd(a.astype(np.complex128), compute_uv=False)
  np.testing.assert_allclose(s, want, rtol=tol, atol=tol)
  np.testing.assert_allclose(s2, want, rtol=tol, atol=tol)
  assert u.shape == shape[:-2] + (m, m if full_matrices else k)
  assert vh.shape == shape[:-2] + (n if full_matrices else k, n)
  np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, rtol=tol,
                             atol=tol)
  for q in (u, _h(vh)):
    np.testing.assert_allclose(_h(q) @ q, np.broadcast_to(np.eye(q.shape[-1]),
                                                          q.shape[:-2] + (q.shape[-1],) * 2),
                               atol=tol)


@needs_cc
def test_jnp_linalg_runs_on_the_device(gpu, recwarn):
  """solve, inv, det, slogdet, cholesky-based solves: no host copies, no
  warning, NumPy's results."""
  rng = np.random.RandomState(7)
  a = (rng.randn(6, 6) + 3 * np.eye(6)).astype(np.float32)
  b = rng.randn(6, 2).astype(np.float32)
  spd = (a @ a.T).astype(np.float32)
  f = lambda a, b, s: (jnp.linalg.solve(a, b), jnp.linalg.inv(a), jnp.linalg.det(a),
                       jnp.linalg.slogdet(a)[1], jax.scipy.linalg.cho_solve(
                           jax.scipy.linalg.cho_factor(s), b), jnp.linalg.pinv(a),
                       jnp.linalg.matrix_rank(a))
  got = _run(gpu, f, a, b, spd)
  a64 = a.astype(np.float64)
  want = (np.linalg.solve(a64, b), np.linalg.inv(a64), np.linalg.det(a64),
          np.linalg.slogdet(a64)[1], scipy.linalg.cho_solve(scipy.linalg.cho_factor(spd), b),
          np.linalg.pinv(a64), 6)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-4)
  assert not [w for w in recwarn if "GPU" in str(w.message)]


@needs_cc
def test_symmetric_product_on_the_device(gpu):
  rng = np.random.RandomState(10)
  a, c = rng.randn(3, 4, 2).astype(np.float32), rng.randn(3, 4, 4).astype(np.float32)
  (got,) = _run(gpu, lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
                a, c)
  a64 = a.astype(np.float64)
  np.testing.assert_allclose(got, 2 * a64 @ np.swapaxes(a64, -1, -2) + 0.5 * c, atol=1e-5)


@needs_cc
def test_gradients_of_decompositions_on_the_device(gpu):
  rng = np.random.RandomState(8)
  a = (rng.randn(4, 4) + 4 * np.eye(4)).astype(np.float32)
  f = lambda a: (jnp.linalg.slogdet(a)[1] + jnp.linalg.eigvalsh(a + a.T).sum() ** 2 +
                 jnp.linalg.svd(a, compute_uv=False).max() +
                 jnp.linalg.qr(a)[1].sum() + jnp.linalg.cholesky(a @ a.T).sum())
  (g,) = _run(gpu, jax.grad(f), a, scalars_read=True)
  np.testing.assert_allclose(g, jax.grad(f)(a), rtol=1e-4, atol=1e-4)


@needs_cc
def test_pivoted_qr_runs_on_host_copies(fake):
  """cuSOLVER has no geqp3: a pivoted QR's operands go to the host and its
  results come back."""
  a = np.random.RandomState(9).randn(5, 4).astype(np.float32)
  x = jax.device_put(a, jax.devices()[0])
  before = fake.transfers["to_host"]
  q, r, p = jax.jit(lambda x: lax.linalg.qr(x, pivoting=True))(x)
  assert fake.transfers["to_host"] > before
  assert q.device == jax.devices()[0]
  np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a[:, np.asarray(p)], atol=1e-5)


@needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_on_the_device(gpu, dtype, left, transpose):
  """Q c, Q^H c, c Q, c Q^H against the full Q that householder_product
  makes of the same reflectors (padded to a square matrix)."""
  p = "sdcz"[DTYPES.index(dtype)]
  rng = np.random.RandomState(11)
  a = _random(rng, (2, 5, 3), dtype)
  c = _random(rng, (2, 5, 4) if left else (2, 4, 5), dtype)

  def f(a, c):
    h, taus = linalg_p.geqrf(a)
    q = lax.linalg.householder_product(jnp.pad(h, ((0, 0), (0, 0), (0, 2))), taus)
    return lax.linalg.ormqr(h, taus, c, left=left, transpose=transpose), q

  with _x64(dtype):
    got, q = _run(gpu, f, a, c, routines=[p + "geqrf", p + ("unmqr" if p in "cz" else "ormqr"),
                                          p + ("ungqr" if p in "cz" else "orgqr")])
  tol = _tolerance(dtype) * 10
  np.testing.assert_allclose(_h(q) @ q, np.broadcast_to(np.eye(5), (2, 5, 5)), atol=tol)
  op = _h(q) if transpose else q
  np.testing.assert_allclose(got, op @ c if left else c @ op, rtol=tol, atol=tol)


@needs_cc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, batch", [(7, 3, (4,)), (1, 2, (2,)), (2, 1, ()), (50, 1, (3,)),
                                         (6, 4, (2, 2))])
def test_tridiagonal_solve_kernel_gives_lapacks_bits(dtype, m, k, batch):
  """The kernel is LAPACK's gtsv (partial pivoting, NaN for a singular
  system): the C backend's bits, in emulation."""
  from purejax._src.backends.cpu import fusion
  from purejax._src.backends.cuda import module as cuda_module, tridiagonal
  from tests.test_cuda_emulation import run_both
  from tests.tier_pair import trace
  rng = np.random.RandomState(m * 10 + k)
  dl, d, du = (rng.randn(*batch, m).astype(dtype) for _ in range(3))
  d[..., ::3] *= 1e-3   # rows interchanged
  b = rng.randn(*batch, m, k).astype(dtype)
  if batch and batch[0] > 1:
    d[1], dl[1] = 0, 0   # singular
  f = lambda dl, d, du, b: [lax.linalg.tridiagonal_solve(dl, d, du, b)]
  with _x64(dtype):
    jaxpr, _ = trace(f, dl, d, du, b)
    mod = cuda_module.generate(fusion.plan_jaxpr(jaxpr))
    assert any(type(s) is tridiagonal.TridiagonalKernel for s in mod.steps), mod.describe()
    (c,), (g,) = run_both(f, dl, d, du, b)
  assert g.dtype == dtype and c.tobytes() == g.tobytes()
  if batch and batch[0] > 1:
    assert np.isnan(g[1]).all() and not np.isnan(g[0]).any()
  dense = np.zeros(batch + (m, m))
  i = np.arange(m)
  dense[..., i, i] = d
  dense[..., i[1:], i[:-1]] = dl[..., 1:]
  dense[..., i[:-1], i[1:]] = du[..., :-1]
  ok = np.isfinite(g).all(axis=(-2, -1))
  np.testing.assert_allclose((dense @ g)[ok], b[ok], rtol=1e-3 if dtype == np.float32 else 1e-9,
                             atol=1e-3 if dtype == np.float32 else 1e-9)


@needs_cc
def test_tridiagonal_solve_on_the_device(gpu):
  rng = np.random.RandomState(12)
  dl, d, du = (rng.randn(3, 8).astype(np.float32) for _ in range(3))
  b = rng.randn(3, 8, 2).astype(np.float32)
  (x,) = _run(gpu, lambda *a: lax.linalg.tridiagonal_solve(*a), dl, d, du, b)
  with config.override("purejax_backend", "cpu"):
    want = jax.jit(lambda *a: lax.linalg.tridiagonal_solve(*a))(dl, d, du, b)
  np.testing.assert_allclose(x, np.asarray(want), rtol=1e-5, atol=1e-5)


@needs_cc
def test_cholesky_update_on_the_device(gpu):
  rng = np.random.RandomState(13)
  a = rng.randn(5, 5).astype(np.float32)
  spd = (a @ a.T + 5 * np.eye(5)).astype(np.float32)
  r = np.linalg.cholesky(spd.astype(np.float64)).T.astype(np.float32)
  w = rng.randn(5).astype(np.float32)
  (got,) = _run(gpu, lax.linalg.cholesky_update, r, w)
  want = np.linalg.cholesky(spd.astype(np.float64) + np.outer(w, w)).T
  np.testing.assert_allclose(np.abs(got), np.abs(want), rtol=1e-4, atol=1e-4)
