"""purejax.scipy.sparse.linalg (cg, bicgstab, gmres) against NumPy's dense
solve (float64) and JAX's solvers (float32): matrices, functions, pytrees,
preconditioners, complex systems, derivatives, jit and vmap; errors as JAX's."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.scipy.sparse.linalg import bicgstab, cg, gmres

from conftest import oracle

RNG = np.random.RandomState(0)


def _systems():
  rng = np.random.RandomState(1)
  b_mat = rng.normal(size=(6, 6)).astype(np.float32)
  spd = b_mat @ b_mat.T + 6 * np.eye(6, dtype=np.float32)
  general = b_mat + 5 * np.eye(6, dtype=np.float32)
  rhs = rng.normal(size=6).astype(np.float32)
  return spd, general, rhs


SPD, GENERAL, RHS = _systems()

SOLVERS = {
    "cg": (cg, SPD),
    "bicgstab": (bicgstab, GENERAL),
    "gmres_batched": (lambda *a, **k: gmres(*a, solve_method="batched", **k), GENERAL),
    "gmres_incremental": (lambda *a, **k: gmres(*a, solve_method="incremental", restart=3, **k),
                          GENERAL),
}


def _exact(a, b):
  return np.linalg.solve(np.asarray(a, np.float64), np.asarray(b, np.float64))


@pytest.mark.parametrize("name", SOLVERS)
def test_solves_match_a_dense_solve(name):
  solve, a = SOLVERS[name]
  x, _ = solve(jnp.asarray(a), jnp.asarray(RHS), tol=1e-6)
  assert x.dtype == jnp.float32
  np.testing.assert_allclose(np.asarray(x), _exact(a, RHS), rtol=1e-4, atol=1e-5)
  # A function and a NumPy matrix give the same solution.
  x_fn, _ = solve(lambda v: jnp.asarray(a) @ v, RHS, tol=1e-6)
  np.testing.assert_allclose(np.asarray(x_fn), np.asarray(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", SOLVERS)
def test_preconditioned_and_jitted(name):
  solve, a = SOLVERS[name]
  jacobi = jnp.diag(1 / jnp.diag(jnp.asarray(a)))
  x = purejax.jit(lambda m, v: solve(m, v, M=jacobi, tol=1e-6)[0])(jnp.asarray(a), RHS)
  np.testing.assert_allclose(np.asarray(x), _exact(a, RHS), rtol=1e-4, atol=1e-5)


def test_pytree_right_hand_side():
  # A block-diagonal system over a dict: {"a": 2 a, "b": 3 b + a[:2] / 2}.
  def matvec(t):
    return {"a": 2.0 * t["a"] + 0.5 * jnp.pad(t["b"], (0, 1)), "b": 3.0 * t["b"] + 0.5 * t["a"][:2]}
  dense = np.array([[2, 0, 0, .5, 0], [0, 2, 0, 0, .5], [0, 0, 2, 0, 0],
                    [.5, 0, 0, 3, 0], [0, .5, 0, 0, 3]])
  b = {"a": RHS[:3], "b": RHS[3:5]}
  want = _exact(dense, RHS[:5])
  for solve in (cg, bicgstab, gmres):
    x, _ = solve(matvec, b, tol=1e-6)
    np.testing.assert_allclose(np.concatenate([x["a"], x["b"]]), want, rtol=1e-5, atol=1e-6)


def test_complex_systems():
  rng = np.random.RandomState(2)
  c = (rng.normal(size=(5, 5)) + 1j * rng.normal(size=(5, 5)) + 5 * np.eye(5)).astype(np.complex64)
  b = (rng.normal(size=5) + 1j * rng.normal(size=5)).astype(np.complex64)
  hermitian = c @ c.conj().T
  for solve, a in ((cg, hermitian), (bicgstab, c), (gmres, c)):
    x, _ = solve(jnp.asarray(a), jnp.asarray(b), tol=1e-6)
    assert x.dtype == jnp.complex64
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a.astype(complex), b), rtol=1e-4,
                               atol=1e-5)


def test_derivatives_solve_the_system_again():
  a = jnp.asarray(GENERAL)
  inv = np.linalg.inv(GENERAL.astype(np.float64))
  # d/db sum(A^-1 b)^2 = 2 A^-T A^-1 b
  want = 2 * inv.T @ (inv @ RHS)
  for solve, kwargs in ((gmres, {}), (bicgstab, {})):
    g = purejax.grad(lambda v: jnp.sum(solve(a, v, tol=1e-7, **kwargs)[0] ** 2))(RHS)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4, atol=1e-5)
  s_inv = np.linalg.inv(SPD.astype(np.float64))
  g = purejax.grad(lambda v: jnp.sum(cg(SPD, v, tol=1e-7)[0] ** 2))(RHS)
  np.testing.assert_allclose(np.asarray(g), 2 * s_inv @ (s_inv @ RHS), rtol=1e-4, atol=1e-5)
  # With respect to the matrix: d x = -A^-1 dA x.
  x = inv @ RHS
  _, tangent = purejax.jvp(lambda m: gmres(m, RHS, tol=1e-7)[0], (a,), (jnp.eye(6),))
  np.testing.assert_allclose(np.asarray(tangent), -inv @ x, rtol=1e-4, atol=1e-5)


def test_vmap_over_right_hand_sides():
  bs = np.stack([RHS, 2 * RHS, RHS[::-1]])
  xs = purejax.vmap(lambda v: cg(SPD, v, tol=1e-6)[0])(bs)
  np.testing.assert_allclose(np.asarray(xs), np.stack([_exact(SPD, v) for v in bs]), rtol=1e-4,
                             atol=1e-5)


def test_gmres_info_and_maxiter():
  x, info = gmres(GENERAL, RHS)
  assert info.dtype == jnp.int32 and int(info) == 0
  # A NaN residual stops the iterations at once (NaN > atol is false), as in JAX.
  x, info = gmres(GENERAL, RHS, x0=RHS * np.nan)
  assert int(info) == -1 and np.isnan(np.asarray(x)).all()
  x, info = gmres(GENERAL, RHS * np.nan)
  assert int(info) == 0 and not np.asarray(x).any()
  # One restart of a 2-dimensional Krylov space cannot solve a 6-dimensional system.
  x, _ = gmres(GENERAL, RHS, restart=2, maxiter=1)
  assert np.linalg.norm(GENERAL @ np.asarray(x) - RHS) > 1e-2
  assert cg(SPD, RHS)[1] is None


def test_errors_as_jax():
  with pytest.raises(ValueError, match="must be a square matrix, but has shape: \\(2, 3\\)"):
    cg(jnp.ones((2, 3)), jnp.ones(2))
  with pytest.raises(TypeError, match="either a function or ndarray"):
    bicgstab(3, jnp.ones(2))
  with pytest.raises(ValueError, match="arrays in x0 and b must have matching shapes"):
    cg(SPD, RHS, x0=jnp.ones(5))
  with pytest.raises(ValueError, match="x0 and b must have matching tree structure"):
    gmres(SPD, RHS, x0=[RHS])
  with pytest.raises(ValueError, match="invalid solve_method x"):
    gmres(SPD, RHS, solve_method="x")


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["cg", "bicgstab", "gmres", "gmres_incremental",
                                  "gmres_preconditioned", "bicgstab_few_steps"])
def test_matches_jax(name):
  jax = oracle()
  import jax.scipy.sparse.linalg as jsl
  jacobi = np.diag(1 / np.diag(GENERAL)).astype(np.float32)
  cases = {
      "cg": lambda m, np_: m.cg(SPD, RHS),
      "bicgstab": lambda m, np_: m.bicgstab(GENERAL, RHS),
      "gmres": lambda m, np_: m.gmres(GENERAL, RHS),
      "gmres_incremental": lambda m, np_: m.gmres(GENERAL, RHS, restart=3,
                                                  solve_method="incremental"),
      "gmres_preconditioned": lambda m, np_: m.gmres(GENERAL, RHS, M=jacobi, restart=2, maxiter=2),
      "bicgstab_few_steps": lambda m, np_: m.bicgstab(GENERAL, RHS, M=jacobi, maxiter=2),
  }
  ours = np.asarray(cases[name](purejax.scipy.sparse.linalg, jnp)[0])
  theirs = np.asarray(cases[name](jsl, jax.numpy)[0])
  np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=1e-6)
