"""lax.linalg.schur / hessenberg (LAPACK gees / gehrd, batched) and
scipy.linalg's schur, rsf2csf, hessenberg, sqrtm, funm, solve_sylvester
against SciPy (float64) and JAX (dtypes, float32 values), jit and vmap."""
import numpy as np
import pytest

import purejax
import purejax.numpy as pnp
import purejax.scipy.linalg as pl
from purejax.lax import linalg as plax
from purejax._src.lax import lapack

from conftest import oracle

sl = pytest.importorskip("scipy.linalg")

RNG = np.random.RandomState(0)


@pytest.fixture
def jax64(x64):
  """Real JAX with 64-bit types too (restored afterwards)."""
  jax = oracle()
  old = jax.config.jax_enable_x64
  jax.config.update("jax_enable_x64", True)
  yield jax
  jax.config.update("jax_enable_x64", old)


def _close(ours, theirs, tol=1e-12):
  ours = np.asarray(ours)
  assert ours.shape == np.shape(theirs)
  np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def _mat(shape, dtype):
  x = RNG.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * RNG.standard_normal(shape)
  return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lax_schur_hessenberg_match_lapack(x64, dtype):
  x = _mat((3, 5, 5), dtype)
  name = ("d" if dtype == np.float64 else "z") + "gees"
  plax.schur(x)   # the workspace query counts as a call
  before, batches = lapack.calls[name], lapack.batches[name]
  t, z = plax.schur(x)
  assert (lapack.calls[name], lapack.batches[name]) == (before + 3, batches + 1)
  for i in range(3):
    ts, zs = sl.schur(x[i])
    _close(t[i], ts, 1e-13)
    _close(z[i], zs, 1e-13)
  gehrd = sl.lapack.dgehrd if dtype == np.float64 else sl.lapack.zgehrd
  a, taus = plax.hessenberg(x)
  assert taus.shape == (3, 4)
  for i in range(3):
    h, tau, _ = gehrd(x[i])
    _close(a[i], h, 1e-13)
    _close(taus[i], tau[:4], 1e-13)
  tj, zj = purejax.jit(plax.schur)(x)
  np.testing.assert_array_equal(tj, t)
  np.testing.assert_array_equal(zj, z)
  av, tv = purejax.vmap(plax.hessenberg)(x)
  np.testing.assert_array_equal(av, a)
  (t_only,) = plax.schur(x, compute_schur_vectors=False)
  _close(t_only, t, 1e-13)


def test_lax_schur_hessenberg_like_jax(jax64):
  from jax.lax import linalg as jl
  for dtype in (np.float32, np.complex64, np.float64):
    x = _mat((2, 4, 4), dtype)
    for ours, theirs in zip(plax.schur(x), jl.schur(x)):
      assert ours.dtype == theirs.dtype
      _close(ours, theirs, 2e-5)
    for ours, theirs in zip(plax.hessenberg(x), jl.hessenberg(x)):
      assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
      _close(ours, theirs, 2e-5)
  for bad in (np.full((3, 3), np.nan), np.array([[1., 2], [3, 4]])):
    for ours, theirs in zip(plax.schur(bad), jl.schur(bad)):
      _close(ours, theirs, 1e-13)


def test_lax_schur_hessenberg_errors():
  with pytest.raises(ValueError, match="square"):
    plax.schur(np.ones((2, 3)))
  with pytest.raises(ValueError, match="Hessenberg"):
    plax.hessenberg(np.ones((2, 3)))
  with pytest.raises(TypeError, match="schur does not accept dtype int32"):
    plax.schur(np.eye(3, dtype=np.int32))
  with pytest.raises(NotImplementedError, match="sort"):
    plax.schur(np.eye(3), sort_eig_vals=True)
  with pytest.raises(NotImplementedError):
    purejax.grad(lambda x: plax.schur(x)[0].sum())(np.eye(3, dtype=np.float32))
  with pytest.raises(ValueError, match="'real' or 'complex'"):
    pl.schur(np.eye(3), "foo")


def test_scipy_schur_family_matches_scipy(x64):
  x = RNG.standard_normal((6, 6))
  for out in ("real", "complex"):
    for ours, theirs in zip(pl.schur(x, out), sl.schur(x, out)):
      _close(ours, theirs, 1e-13)
  for ours, theirs in zip(pl.rsf2csf(*sl.schur(x)), sl.rsf2csf(*sl.schur(x))):
    _close(ours, theirs, 1e-13)
  for ours, theirs in zip(pl.hessenberg(x, calc_q=True), sl.hessenberg(x, calc_q=True)):
    _close(ours, theirs, 1e-13)
  _close(pl.hessenberg(x), sl.hessenberg(x), 1e-13)
  _close(pl.sqrtm(x), sl.sqrtm(x.astype(complex)), 1e-12)
  _close(pl.funm(x, pnp.exp), sl.expm(x), 1e-12)
  _close(pl.funm(x, pnp.sin), sl.funm(x, np.sin), 1e-12)
  b, c = RNG.standard_normal((4, 4)), RNG.standard_normal((6, 4))
  want = sl.solve_sylvester(x, b, c)
  _close(pl.solve_sylvester(x, b, c), want, 1e-11)
  _close(pl.solve_sylvester(x, b, c, method="eigen"), want, 1e-10)
  _close(purejax.jit(pl.solve_sylvester)(x, b, c), want, 1e-11)
  _close(purejax.jit(pl.sqrtm)(x), sl.sqrtm(x.astype(complex)), 1e-12)
  # (SciPy's answer for real A, B and complex C is wrong: check the residual)
  cc = c + 1j * RNG.standard_normal(c.shape)
  xc = pl.solve_sylvester(x, b, cc)
  _close(x @ xc + xc @ b, cc, 1e-12)
  for ours, theirs in zip(pl.hessenberg(np.ones((1, 1)), calc_q=True),
                          sl.hessenberg(np.ones((1, 1)), calc_q=True)):
    _close(ours, theirs)


def test_scipy_schur_family_like_jax(jax64):
  import jax.numpy as jnp
  import jax.scipy.linalg as jl
  x = RNG.standard_normal((5, 5))
  xb = RNG.standard_normal((2, 4, 4))
  b, c = RNG.standard_normal((3, 3)), RNG.standard_normal((5, 3))
  pairs = [
      (pl.rsf2csf(*pl.schur(xb)), jl.rsf2csf(*jl.schur(xb))),
      (pl.hessenberg(xb, calc_q=True), jl.hessenberg(xb, calc_q=True)),
      (pl.funm(x, pnp.sin, disp=False), jl.funm(x, jnp.sin, disp=False)),
      ([pl.sqrtm(x.astype(np.float32))], [jl.sqrtm(x.astype(np.float32))]),
      ([pl.solve_sylvester(x.astype(np.float32), b, c.astype(np.float32))],
       [jl.solve_sylvester(x.astype(np.float32), b, c.astype(np.float32))]),
      ([pl.solve_sylvester(np.eye(2), -np.eye(2), np.eye(2))],
       [jl.solve_sylvester(np.eye(2), -np.eye(2), np.eye(2))]),
      ([pl.solve_sylvester(xb, xb, xb)], [jl.solve_sylvester(xb, xb, xb)]),
      ([pl.solve_sylvester(x, b, c + 1j)], [jl.solve_sylvester(x, b, c + 1j)]),
  ]
  for ours, theirs in pairs:
    for o, t in zip(ours, theirs):
      assert o.dtype == t.dtype and o.shape == t.shape
      np.testing.assert_allclose(np.asarray(o), t, rtol=2e-4, atol=2e-4)
  with pytest.raises(ValueError, match="Unrecognized method"):
    pl.solve_sylvester(x, b, c, method="x")
  with pytest.raises(NotImplementedError):
    pl.sqrtm(x, blocksize=2)
