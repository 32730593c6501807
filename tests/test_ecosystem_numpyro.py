"""numpyro, unedited, on purejax (``python -m purejax``): NUTS and SVI on a
linear regression, distributions' densities and samples, and the CAR
distribution with a sparse (BCOO) adjacency matrix, compared with JAX.
Needs the ``ecosystem`` extra: skipped without it, except under CI (the CI
variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import numpyro, numpyro.distributions as dist
  from numpyro.infer import MCMC, NUTS, SVI, Trace_ELBO
  from numpyro.infer.autoguide import AutoNormal
  import optax
  rng = np.random.default_rng(0)
  x = rng.normal(size=50).astype(np.float32)
  y = (2.0 * x + 1.0 + 0.3 * rng.normal(size=50)).astype(np.float32)
  def model(x, y=None):
    a = numpyro.sample("a", dist.Normal(0, 5))
    b = numpyro.sample("b", dist.Normal(0, 5))
    s = numpyro.sample("s", dist.HalfNormal(1))
    numpyro.sample("obs", dist.Normal(a * x + b, s), obs=y)
  mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=200, progress_bar=False)
  mcmc.run(jax.random.key(0), x, y)
  s = mcmc.get_samples()
  svi = SVI(model, AutoNormal(model), optax.adam(0.05), Trace_ELBO())
  res = svi.run(jax.random.key(1), 300, x, y, progress_bar=False)
  lp = dist.Normal(0., 1.).log_prob(jnp.array([0.5, -1.]))
  smp = dist.Dirichlet(jnp.ones(3)).sample(jax.random.key(2), (2,))
  import scipy.sparse as ssp
  adj = np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], np.float32)
  car_dense = dist.CAR(jnp.zeros(4), 0.5, 2.0, adj)
  car_sparse = dist.CAR(jnp.zeros(4), 0.5, 2.0, ssp.csr_matrix(adj), is_sparse=True)
  v = jnp.array([0.1, -0.2, 0.3, 0.05])
  car = [float(car_dense.log_prob(v)), float(car_sparse.log_prob(v))]
  print(json.dumps({"jax": jax.__name__, "car": car, "a": float(s["a"].mean()), "b": float(s["b"].mean()),
                    "a0": float(s["a"][0]), "loss": float(res.losses[-1]), "lp": lp.tolist(), "smp": np.asarray(smp).tolist()}))
"""


def test_numpyro_inference_and_distributions_match_jax(tmp_path):
  require("numpyro")
  require("optax")
  got, want = run_on_both(PROGRAM, tmp_path)
  # the posterior of y = 2x + 1 + noise
  assert got["a"] == pytest.approx(2.0, abs=0.1) and got["b"] == pytest.approx(1.0, abs=0.1)
  np.testing.assert_allclose(got["lp"], [-0.5 * np.log(2 * np.pi) - 0.125,
                                         -0.5 * np.log(2 * np.pi) - 0.5], rtol=1e-6)
  assert got["car"][0] == pytest.approx(got["car"][1], rel=1e-6)
  if want is not None:
    # Random bits are JAX's: the same Dirichlet samples, the same SVI run.
    # NUTS's trajectories diverge with the last bit of a gradient, so only
    # the posterior means compare.
    for k, rtol in (("smp", 1e-5), ("lp", 1e-6), ("loss", 1e-4), ("car", 1e-6)):
      np.testing.assert_allclose(got[k], want[k], rtol=rtol, err_msg=k)
    assert got["a"] == pytest.approx(want["a"], abs=0.05)
    assert got["b"] == pytest.approx(want["b"], abs=0.05)
