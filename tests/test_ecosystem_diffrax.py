"""diffrax, lineax and optimistix (equinox's ODE, linear-solve and
root-finding libraries), unedited, on purejax (``python -m purejax``):
explicit and implicit (stiff) ODE solves with adaptive steps, their
gradients (checkpointed and backsolve adjoints), LU and Cholesky solves,
Newton and BFGS, compared with JAX. Needs the ``ecosystem`` extra: skipped
without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

EXPLICIT = """
  import json
  import jax, jax.numpy as jnp
  import diffrax
  def f(t, y, args):
    return -args * y
  term = diffrax.ODETerm(f)
  sol = diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=1.0, dt0=0.1, y0=jnp.array([1.0, 2.0]), args=0.5,
                            saveat=diffrax.SaveAt(ts=jnp.linspace(0, 1, 5)), stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8))
  g = jax.grad(lambda a: diffrax.diffeqsolve(term, diffrax.Dopri5(), 0.0, 1.0, 0.1, jnp.array([1.0]), args=a).ys.sum())(0.5)
  print(json.dumps({"jax": jax.__name__, "ys": sol.ys.tolist(), "steps": int(sol.stats["num_steps"]), "g": float(g)}))
"""

IMPLICIT_AND_SOLVERS = """
  import json
  import jax, jax.numpy as jnp
  import diffrax, lineax as lx, optimistix as optx
  jax.config.update("jax_enable_x64", False)
  # stiff ODE with an implicit solver (Newton + linear solves), adjoint gradient
  def vf(t, y, k):
    return jnp.stack([-k * y[0] + y[1], -y[1]])
  term = diffrax.ODETerm(vf)
  def solve(k, adjoint):
    sol = diffrax.diffeqsolve(term, diffrax.Kvaerno5(), 0.0, 2.0, 0.05, jnp.array([1.0, 1.0]), args=k,
                              stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-7), adjoint=adjoint)
    return sol.ys[-1].sum()
  v = float(jax.jit(lambda k: solve(k, diffrax.RecursiveCheckpointAdjoint()))(20.0))
  g1 = float(jax.jit(jax.grad(lambda k: solve(k, diffrax.RecursiveCheckpointAdjoint())))(20.0))
  g2 = float(jax.grad(lambda k: solve(k, diffrax.BacksolveAdjoint()))(20.0))
  # lineax
  A = jnp.array([[3.0, 1.0], [1.0, 2.0]])
  x = lx.linear_solve(lx.MatrixLinearOperator(A), jnp.array([1.0, 1.0]), solver=lx.LU()).value
  xc = lx.linear_solve(lx.MatrixLinearOperator(A, lx.positive_semidefinite_tag), jnp.array([1.0, 1.0]), solver=lx.Cholesky()).value
  # optimistix
  root = optx.root_find(lambda y, a: y ** 3 - a, optx.Newton(rtol=1e-6, atol=1e-6), jnp.array(1.0), args=8.0).value
  mn = optx.minimise(lambda y, a: jnp.sum((y - a) ** 2), optx.BFGS(rtol=1e-6, atol=1e-6), jnp.zeros(2), args=jnp.array([1.0, -2.0])).value
  print(json.dumps({"jax": jax.__name__, "v": v, "g1": g1, "g2": g2, "x": x.tolist(), "xc": xc.tolist(), "root": float(root), "min": mn.tolist()}))
"""


def _close(got, want, rtol):
  if want is None:
    return
  assert got.keys() == want.keys()
  for k in want:
    if k != "jax":
      np.testing.assert_allclose(got[k], want[k], rtol=rtol, err_msg=k)


def test_diffrax_explicit_solve_and_gradient_match_jax(tmp_path):
  require("diffrax")
  got, want = run_on_both(EXPLICIT, tmp_path)
  t = np.linspace(0, 1, 5)
  np.testing.assert_allclose(got["ys"], np.exp(-0.5 * t)[:, None] * [1.0, 2.0], rtol=1e-5)
  assert got["g"] == pytest.approx(-np.exp(-0.5), rel=1e-5)
  _close(got, want, 1e-5)


def test_diffrax_stiff_solve_adjoints_lineax_optimistix_match_jax(tmp_path):
  require("diffrax")
  got, want = run_on_both(IMPLICIT_AND_SOLVERS, tmp_path)
  np.testing.assert_allclose(got["x"], [0.2, 0.4], rtol=1e-5)
  assert got["root"] == pytest.approx(2.0) and got["min"] == pytest.approx([1.0, -2.0])
  assert got["g1"] == pytest.approx(got["g2"], rel=1e-4)
  _close(got, want, 1e-4)
