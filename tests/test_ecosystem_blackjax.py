"""blackjax, unedited, on purejax (``python -m purejax``): a jitted NUTS chain
and a random-walk Metropolis step on a Gaussian, compared with JAX (the same
random bits give the same chain). Needs the ``ecosystem`` extra: skipped
without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import blackjax
  def logdensity(x):
    return -0.5 * jnp.sum((x - jnp.array([1.0, -2.0])) ** 2 / jnp.array([1.0, 0.25]))
  nuts = blackjax.nuts(logdensity, step_size=0.3, inverse_mass_matrix=jnp.ones(2))
  state = nuts.init(jnp.zeros(2))
  step = jax.jit(nuts.step)
  key = jax.random.key(0)
  samples = []
  for i in range(300):
    key, k = jax.random.split(key)
    state, info = step(k, state)
    samples.append(state.position)
  s = jnp.stack(samples[100:])
  rmh = blackjax.additive_step_random_walk(logdensity, blackjax.mcmc.random_walk.normal(jnp.ones(2) * 0.5))
  st = rmh.init(jnp.zeros(2))
  st2, _ = jax.jit(rmh.step)(jax.random.key(3), st)
  print(json.dumps({"jax": jax.__name__, "mean": np.asarray(s.mean(0)).tolist(), "first": np.asarray(samples[0]).tolist(), "rmh": np.asarray(st2.position).tolist()}))
"""


def test_blackjax_nuts_and_random_walk_match_jax(tmp_path):
  require("blackjax")
  got, want = run_on_both(PROGRAM, tmp_path)
  np.testing.assert_allclose(got["mean"], [1.0, -2.0], atol=0.3)   # the target's mean
  if want is not None:
    np.testing.assert_allclose(got["first"], want["first"], rtol=1e-6)
    np.testing.assert_allclose(got["rmh"], want["rmh"], rtol=1e-6)
    np.testing.assert_allclose(got["mean"], want["mean"], rtol=1e-4, atol=1e-5)
