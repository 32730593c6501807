"""purejax.scipy.linalg: decompositions, solves, expm and structured matrices
against SciPy (float64) and JAX (float32, one compilation), jit/vmap,
gradients (expm's included), errors."""
import numpy as np
import pytest

import purejax
import purejax.scipy.linalg as pl
from purejax._src.test_util import check_grads

from conftest import oracle

sl = pytest.importorskip("scipy.linalg")

_R = np.random.RandomState(0)
A = _R.randn(4, 4)
SPD = A @ A.T + 4 * np.eye(4)
B = _R.randn(4, 3)
b = _R.randn(4)
M = _R.randn(5, 3)
T = np.triu(A) + 3 * np.eye(4)
E = _R.randn(4, 4)


def _close(ours, theirs, rtol=1e-10, atol=1e-10):
  ours = np.asarray(ours)
  assert ours.shape == np.shape(theirs)
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def test_cholesky_family(x64):
  _close(pl.cholesky(SPD), sl.cholesky(SPD))
  _close(pl.cholesky(SPD, lower=True), sl.cholesky(SPD, lower=True))
  _close(pl.cholesky(np.triu(SPD)), sl.cholesky(SPD))            # reads one triangle
  for lower in (False, True):
    c = pl.cho_factor(SPD, lower=lower)
    assert c[1] is lower
    _close(pl.cho_solve(c, B), sl.cho_solve(sl.cho_factor(SPD, lower=lower), B))
    _close(pl.cho_solve(c, b), sl.cho_solve(sl.cho_factor(SPD, lower=lower), b))


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_lu(shape, x64):
  a = _R.randn(*shape)
  for ours, theirs in zip(pl.lu(a), sl.lu(a)):
    _close(ours, theirs)
  for ours, theirs in zip(pl.lu(a, permute_l=True), sl.lu(a, permute_l=True)):
    _close(ours, theirs)


def test_lu_factor_and_solve(x64):
  lu, piv = pl.lu_factor(A)
  lu2, piv2 = sl.lu_factor(A)
  _close(lu, lu2)
  assert piv.dtype == np.int32 and (np.asarray(piv) == piv2).all()
  for trans in (0, 1, 2):
    _close(pl.lu_solve((lu, piv), B, trans=trans), sl.lu_solve((lu2, piv2), B, trans=trans))
  _close(pl.lu_solve((lu, piv), b), sl.lu_solve((lu2, piv2), b))
  with pytest.raises(ValueError, match="'trans' value"):
    pl.lu_solve((lu, piv), b, trans=3)


@pytest.mark.parametrize("mode", ["full", "economic", "r"])
@pytest.mark.parametrize("pivoting", [False, True])
def test_qr(mode, pivoting, x64):
  ours = pl.qr(M, mode=mode, pivoting=pivoting)
  theirs = sl.qr(M, mode=mode, pivoting=pivoting)
  if mode == "r" and not pivoting:
    assert isinstance(ours, tuple) and len(ours) == 1     # JAX returns a 1-tuple
    theirs = (theirs[0] if isinstance(theirs, tuple) else theirs,)
  assert len(ours) == len(theirs)
  for o, t in zip(ours, theirs):
    _close(o, t)


def test_svd_eigh_det_inv(x64):
  u, s, vh = pl.svd(M, full_matrices=False)
  _close((u * s) @ vh, M)
  _close(pl.svd(M, compute_uv=False), sl.svd(M, compute_uv=False))
  assert pl.svd(M)[0].shape == (5, 5)
  w, v = pl.eigh(SPD)
  _close(w, sl.eigh(SPD, eigvals_only=True))
  _close((v * w) @ v.T, SPD)
  # As JAX, the input is symmetrized first (SciPy would read one triangle only).
  low = np.tril(SPD)
  _close(pl.eigh(low, eigvals_only=True), np.linalg.eigvalsh((low + low.T) / 2))
  _close(pl.det(A), sl.det(A))
  _close(pl.inv(A), sl.inv(A))
  with pytest.raises(NotImplementedError, match="b=None"):
    pl.eigh(SPD, SPD)


def test_solve(x64):
  _close(pl.solve(A, B), sl.solve(A, B))
  _close(pl.solve(SPD, B, assume_a="sym"), sl.solve(SPD, B, assume_a="sym"))
  _close(pl.solve(SPD, B, assume_a="pos"), sl.solve(SPD, B, assume_a="pos"))
  _close(pl.solve(np.tril(SPD), b, assume_a="pos", lower=True), sl.solve(SPD, b))
  batch = np.stack([SPD, SPD + np.eye(4)])
  _close(pl.solve(batch, np.stack([B, B]), assume_a="pos"),
         np.stack([sl.solve(SPD, B), sl.solve(SPD + np.eye(4), B)]))
  with pytest.raises(ValueError, match="assume_a"):
    pl.solve(A, b, assume_a="banded")


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular(trans, x64):
  _close(pl.solve_triangular(T, B, trans=trans), sl.solve_triangular(T, B, trans=trans))
  _close(pl.solve_triangular(T.T, b, trans=trans, lower=True, unit_diagonal=True),
         sl.solve_triangular(T.T, b, trans=trans, lower=True, unit_diagonal=True))


def test_solve_triangular_errors_and_batches():
  with pytest.raises(ValueError, match="Invalid 'trans'"):
    pl.solve_triangular(T, b, trans=3)
  with pytest.warns(FutureWarning, match="batched 1D solves"):
    out = pl.solve_triangular(np.stack([T, T]), np.stack([b, b]))
  assert out.shape == (2, 4)
  out = pl.solve_triangular(np.stack([T, T]), np.stack([B, B]))
  np.testing.assert_allclose(out[1], sl.solve_triangular(T, B), rtol=1e-4)


@pytest.mark.parametrize("scale", [0.005, 0.2, 0.7, 1.5, 3.0, 40.0])
def test_expm_float64(scale, x64):
  # The scales reach every Pade degree (3 to 13) and the squaring phase.
  _close(pl.expm(A * scale), sl.expm(A * scale), rtol=1e-9, atol=1e-12)


def test_expm_variants(x64):
  _close(pl.expm(T, upper_triangular=True), sl.expm(T), rtol=1e-10)
  _close(pl.expm(np.stack([A, 2 * A])), np.stack([sl.expm(A), sl.expm(2 * A)]), rtol=1e-10)
  c = A + 1j * E
  _close(pl.expm(c), sl.expm(c), rtol=1e-10)
  assert np.isnan(pl.expm(A * 1e6)).all()                 # beyond max_squarings
  assert np.isnan(pl.expm(A * 40, max_squarings=2)).all()
  val, frechet = pl.expm_frechet(A, E)
  ref_val, ref_frechet = sl.expm_frechet(A, E)
  _close(val, ref_val)
  _close(frechet, ref_frechet, rtol=1e-8)
  _close(pl.expm_frechet(A, E, compute_expm=False), ref_frechet, rtol=1e-8)
  with pytest.raises(ValueError, match="square"):
    pl.expm(M)
  with pytest.raises(ValueError, match="same shape"):
    pl.expm_frechet(A, E[:3, :3])


def test_expm_grads(x64):
  # 1-norms 0.9 and 12: the degree-7 path, and degree 13 with one squaring.
  a = A / np.abs(A).sum(0).max()
  check_grads(pl.expm, (a * 0.9,), 2, modes=("rev",), atol=1e-6, rtol=1e-6)
  check_grads(pl.expm, (a * 12.,), 1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)


def test_solve_grads(x64):
  # The value reads one triangle but the derivative takes all of a (as JAX's
  # custom_linear_solve), so finite differences see a symmetric a.
  check_grads(lambda a, b: pl.solve((a + a.T) / 2, b, assume_a="pos"), (SPD, B), 1,
              modes=("fwd", "rev"))
  check_grads(lambda c, b: pl.cho_solve((c, True), b), (np.linalg.cholesky(SPD), b), 1,
              modes=("fwd", "rev"))
  check_grads(lambda a, b: pl.solve_triangular(a, b, trans=1), (T, B), 1,
              modes=("fwd", "rev"))
  check_grads(lambda a: pl.lu_solve(pl.lu_factor(a), b), (A,), 1, modes=("fwd", "rev"))
  check_grads(pl.det, (A,), 1, modes=("fwd", "rev"))
  # solve(assume_a='pos') differentiates the whole of a, as JAX's custom_linear_solve.
  g = purejax.grad(lambda a: pl.solve(a, b, assume_a="pos").sum())(SPD)
  x = np.linalg.solve(SPD, b)
  _close(g, -np.outer(np.linalg.solve(SPD, np.ones(4)), x), rtol=1e-8)


def test_jit_and_vmap():
  a = (A / 4).astype(np.float32)
  f = purejax.jit(pl.expm)
  np.testing.assert_allclose(f(a), pl.expm(a), rtol=1e-6)
  batch = np.stack([a, 2 * a, -a])
  np.testing.assert_allclose(purejax.vmap(pl.expm)(batch),
                             np.stack([pl.expm(x) for x in batch]), rtol=1e-6)
  c = pl.cho_factor(SPD.astype(np.float32))
  bs = B.T.astype(np.float32)
  np.testing.assert_allclose(purejax.vmap(lambda v: pl.cho_solve(c, v))(bs),
                             np.stack([pl.cho_solve(c, v) for v in bs]), rtol=1e-5)
  np.testing.assert_allclose(purejax.jit(pl.lu)(a)[2], pl.lu(a)[2], rtol=1e-6)


def test_structured_matrices(x64):
  _close(pl.block_diag(A, b, 3., B), sl.block_diag(A, b, 3., B))
  assert pl.block_diag().shape == (1, 0)
  assert pl.block_diag(np.ones(2, np.int32), np.ones((1, 1), np.float32)).dtype == np.float32
  with pytest.raises(ValueError, match="at most 2 dimensions"):
    pl.block_diag(np.ones((2, 2, 2)))
  _close(pl.toeplitz(b, B[:, 0]), sl.toeplitz(b, B[:, 0]))
  _close(pl.toeplitz(b[:3], M[:, 0]), sl.toeplitz(b[:3], M[:, 0]))
  _close(pl.toeplitz(b + 1j), sl.toeplitz(b + 1j))                # r = conj(c)
  _close(pl.hankel(b, M[:, 0]), sl.hankel(b, M[:, 0]))
  _close(pl.hankel(b), sl.hankel(b))
  _close(pl.circulant(b), sl.circulant(b))
  assert pl.toeplitz(np.ones((2, 3))).shape == (2, 3, 3)          # batched, as JAX
  check_grads(lambda c, r: pl.toeplitz(c, r), (b, B[:, 0]), 1, modes=("rev",))


@pytest.mark.parametrize("side", ["right", "left"])
def test_polar(side, x64):
  a = M if side == "right" else M.T
  for method in ("svd", "qdwh"):
    u, p = pl.polar(a, side=side, method=method)
    u2, p2 = sl.polar(a, side=side)
    _close(u, u2)
    _close(p, p2)
  with pytest.raises(NotImplementedError, match="qdwh"):
    pl.polar(a.T, side=side)
  with pytest.raises(ValueError, match="Unknown polar"):
    pl.polar(a, side=side, method="newton")


@pytest.fixture(scope="module")
def jax_values():
  """float32 results from JAX, all in one compilation."""
  jax = oracle()
  import jax.scipy.linalg as jl

  def run(a, spd, bb, t, m):
    return {"cholesky": jl.cholesky(spd), "cho_solve": jl.cho_solve((jl.cholesky(spd), False), bb),
            "lu": jl.lu(m), "lu_solve": jl.lu_solve(jl.lu_factor(a), bb, trans=1),
            "qr": jl.qr(m, mode="economic", pivoting=True), "solve_pos": jl.solve(spd, bb,
                                                                                 assume_a="pos"),
            "solve_triangular": jl.solve_triangular(t, bb, trans=2, lower=False),
            "expm": [jl.expm(a * s) for s in (0.1, 0.5, 4.0)],
            "block_diag": jl.block_diag(a, m), "toeplitz": jl.toeplitz(m[:, 0], t[0]),
            "hankel": jl.hankel(m[:, 0]), "circulant": jl.circulant(m[:, 1])}

  args = [x.astype(np.float32) for x in (A, SPD, B, T, M)]
  return jax.tree_util.tree_map(np.asarray, jax.jit(run)(*args))


def test_float32_matches_jax(jax_values):
  a, spd, bb, t, m = [x.astype(np.float32) for x in (A, SPD, B, T, M)]
  ours = {"cholesky": pl.cholesky(spd), "cho_solve": pl.cho_solve((pl.cholesky(spd), False), bb),
          "lu": pl.lu(m), "lu_solve": pl.lu_solve(pl.lu_factor(a), bb, trans=1),
          "qr": pl.qr(m, mode="economic", pivoting=True),
          "solve_pos": pl.solve(spd, bb, assume_a="pos"),
          "solve_triangular": pl.solve_triangular(t, bb, trans=2, lower=False),
          "expm": [pl.expm(a * s) for s in (0.1, 0.5, 4.0)],
          "block_diag": pl.block_diag(a, m), "toeplitz": pl.toeplitz(m[:, 0], t[0]),
          "hankel": pl.hankel(m[:, 0]), "circulant": pl.circulant(m[:, 1])}
  for name, theirs in jax_values.items():
    mine = ours[name]
    mine, theirs = (list(mine), list(theirs)) if isinstance(mine, (list, tuple)) else (
        [mine], [theirs])
    for o, t_ in zip(mine, theirs):
      o = np.asarray(o)
      assert o.dtype == t_.dtype and o.shape == t_.shape, name
      np.testing.assert_allclose(o, t_, rtol=2e-4, atol=2e-5, err_msg=name)
