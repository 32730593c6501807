"""jaxopt, unedited, on purejax (``python -m purejax``): LBFGS, BFGS,
GradientDescent and ScipyMinimize on ridge regression, implicit
differentiation through a solver (``implicit_diff=True`` and
``custom_root``), ProjectedGradient, OSQP and EqualityConstrainedQP,
``jaxopt.linear_solve`` (CG, GMRES, BiCGSTAB: ``jax.scipy.sparse.linalg``)
and Bisection, compared with closed forms in float64 and with JAX. Needs the
``ecosystem`` extra: skipped without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import jaxopt

  rng = np.random.RandomState(0)
  X = jnp.asarray(rng.normal(size=(40, 5)).astype(np.float32))
  w_true = jnp.asarray(rng.normal(size=5).astype(np.float32))
  y = X @ w_true + 0.1 * jnp.asarray(rng.normal(size=40).astype(np.float32))

  def ridge_loss(w, l2reg):
    r = X @ w - y
    return jnp.mean(r ** 2) + l2reg * jnp.sum(w ** 2)

  out = {}
  w0 = jnp.zeros(5)
  res = jaxopt.LBFGS(fun=ridge_loss, maxiter=100, tol=1e-6).run(w0, l2reg=0.1)
  out["lbfgs"], out["lbfgs_iters"] = res.params, int(res.state.iter_num)
  out["gd"] = jaxopt.GradientDescent(fun=ridge_loss, maxiter=200, stepsize=0.1).run(w0, l2reg=0.1).params
  out["bfgs"] = jaxopt.BFGS(fun=ridge_loss, maxiter=50).run(w0, l2reg=0.1).params
  out["scipy"] = jaxopt.ScipyMinimize(fun=ridge_loss, method="L-BFGS-B", tol=1e-8).run(w0, l2reg=0.1).params
  out["jit_lbfgs"] = jax.jit(lambda l: jaxopt.LBFGS(fun=ridge_loss, maxiter=50).run(w0, l2reg=l).params)(0.1)

  # d w*(l2reg) / d l2reg, by implicit differentiation of the solver
  def solution(l2reg):
    return jaxopt.LBFGS(fun=ridge_loss, maxiter=100, tol=1e-6, implicit_diff=True).run(w0, l2reg=l2reg).params
  out["implicit_jac"] = jax.jacobian(solution)(0.1)

  @jaxopt.implicit_diff.custom_root(lambda w, l2reg: jax.grad(ridge_loss)(w, l2reg))
  def ridge_solver(init_w, l2reg):
    A = X.T @ X / 40 + l2reg * jnp.eye(5)
    return jnp.linalg.solve(A, X.T @ y / 40)
  out["custom_root_jac"] = jax.jacobian(ridge_solver, argnums=1)(w0, 0.1)
  out["custom_root_grad_jit"] = jax.jit(jax.grad(lambda l: jnp.sum(ridge_solver(w0, l) ** 2)))(0.3)

  pg = jaxopt.ProjectedGradient(fun=ridge_loss, projection=jaxopt.projection.projection_non_negative)
  out["pg_nonneg"] = pg.run(w0, hyperparams_proj=None, l2reg=0.1).params
  pg = jaxopt.ProjectedGradient(fun=ridge_loss, projection=jaxopt.projection.projection_simplex, maxiter=300)
  out["pg_simplex"] = pg.run(jnp.ones(5) / 5, l2reg=0.1).params

  Q = jnp.array([[2.0, 0.5], [0.5, 1.0]]); c = jnp.array([1.0, 1.0])
  A = jnp.array([[1.0, 1.0]]); b = jnp.array([1.0])
  G = -jnp.eye(2); h = jnp.zeros(2)
  out["osqp"] = jaxopt.OSQP(tol=1e-6).run(params_obj=(Q, c), params_eq=(A, b), params_ineq=(G, h)).params.primal
  out["eqqp"] = jaxopt.EqualityConstrainedQP().run(params_obj=(Q, c), params_eq=(A, b)).params.primal

  M = jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]); rhs = jnp.array([1.0, 2.0, 3.0])
  matvec = lambda v: M @ v
  for name in ("solve_cg", "solve_gmres", "solve_bicgstab", "solve_normal_cg", "solve_lu", "solve_cholesky"):
    kwargs = {"tol": 1e-7} if name in ("solve_cg", "solve_gmres", "solve_bicgstab", "solve_normal_cg") else {}
    out[name] = getattr(jaxopt.linear_solve, name)(matvec, rhs, **kwargs)
  out["bisection"] = jaxopt.Bisection(optimality_fun=lambda x: x ** 3 - x - 2, lower=1.0, upper=2.0, tol=1e-6).run().params
  out = jax.tree.map(lambda v: np.asarray(v).tolist() if isinstance(v, jax.Array) else v, out)
  print(json.dumps({"jax": jax.__name__, **out}))
"""


def _ridge_problem():
  rng = np.random.RandomState(0)
  X = rng.normal(size=(40, 5)).astype(np.float32).astype(np.float64)
  w_true = rng.normal(size=5).astype(np.float32)
  y = X @ w_true + 0.1 * rng.normal(size=40).astype(np.float32)
  return X, y.astype(np.float64)


def test_jaxopt_solvers_match_closed_forms_and_jax(tmp_path):
  require("jaxopt")
  so = pytest.importorskip("scipy.optimize")
  got, want = run_on_both(PROGRAM, tmp_path)
  X, y = _ridge_problem()
  def ridge(l2reg):
    A = X.T @ X / 40 + l2reg * np.eye(5)
    return A, np.linalg.solve(A, X.T @ y / 40)
  A, w_star = ridge(0.1)
  for key in ("lbfgs", "bfgs", "scipy", "jit_lbfgs"):
    np.testing.assert_allclose(got[key], w_star, rtol=1e-4, atol=1e-4, err_msg=key)
  np.testing.assert_allclose(got["gd"], w_star, atol=1e-3)   # stops at a gradient norm of 1e-3
  dw = -np.linalg.solve(A, w_star)   # d/dl of (A0 + l I)^-1 c
  np.testing.assert_allclose(got["implicit_jac"], dw, rtol=1e-3, atol=1e-5)
  np.testing.assert_allclose(got["custom_root_jac"], dw, rtol=1e-4, atol=1e-5)
  A3, w3 = ridge(0.3)
  np.testing.assert_allclose(got["custom_root_grad_jit"], 2 * w3 @ -np.linalg.solve(A3, w3), rtol=1e-4)
  # Non-negative ridge regression is a non-negative least squares problem.
  stacked = np.vstack([X / np.sqrt(40), np.sqrt(0.1) * np.eye(5)])
  nnls, _ = so.nnls(stacked, np.concatenate([y / np.sqrt(40), np.zeros(5)]))
  np.testing.assert_allclose(got["pg_nonneg"], nnls, atol=2e-3)   # jaxopt's default tol is 1e-3
  assert abs(sum(got["pg_simplex"]) - 1) < 1e-5 and min(got["pg_simplex"]) >= 0
  # The QP's inequality is inactive: the equality-constrained KKT system solves it.
  kkt = np.array([[2.0, 0.5, 1.0], [0.5, 1.0, 1.0], [1.0, 1.0, 0.0]])
  qp = np.linalg.solve(kkt, [-1.0, -1.0, 1.0])[:2]
  np.testing.assert_allclose(got["osqp"], qp, atol=1e-4)
  np.testing.assert_allclose(got["eqqp"], qp, rtol=1e-6)
  M = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]])
  exact = np.linalg.solve(M, [1.0, 2.0, 3.0])
  for key in ("solve_cg", "solve_gmres", "solve_bicgstab", "solve_normal_cg", "solve_lu",
              "solve_cholesky"):
    np.testing.assert_allclose(got[key], exact, rtol=1e-5, atol=1e-6, err_msg=key)
  np.testing.assert_allclose(got["bisection"], 1.5213797068045676, rtol=2e-6)
  if want is not None:
    assert got["lbfgs_iters"] == want["lbfgs_iters"]
    assert got["eqqp"] == want["eqqp"]
    for key in ("lbfgs", "gd", "bfgs", "jit_lbfgs", "implicit_jac", "custom_root_jac",
                "custom_root_grad_jit", "pg_simplex", "osqp", "solve_cg", "solve_gmres",
                "solve_bicgstab", "solve_normal_cg", "solve_lu", "solve_cholesky", "bisection"):
      np.testing.assert_allclose(got[key], want[key], rtol=5e-6, atol=1e-6, err_msg=key)
    # SciPy's L-BFGS-B and the line searches of ProjectedGradient branch on
    # float32 rounding near the optimum: JAX's answer to their tolerances.
    np.testing.assert_allclose(got["scipy"], want["scipy"], atol=1e-4)
    np.testing.assert_allclose(got["pg_nonneg"], want["pg_nonneg"], atol=2e-3)
