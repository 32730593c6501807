"""distrax, unedited, on purejax (``python -m purejax``), with TensorFlow
Probability's JAX substrate under it: Normal, MultivariateNormalDiag,
Categorical, Bernoulli, Beta and a mixture (sample, log_prob, entropy, KL),
a bijector Chain of ScalarAffine and Tanh, a Transformed distribution, and a
reparameterized gradient under jit; compared with SciPy and with JAX (the
same keys give JAX's samples bit for bit). Needs the ``ecosystem`` extra:
skipped without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp
  import distrax

  k1, k2, k3, k4, k5 = jax.random.split(jax.random.key(42), 5)
  out = {}
  normal = distrax.Normal(loc=jnp.array([0.0, 1.0]), scale=jnp.array([1.0, 0.5]))
  s = normal.sample(seed=k1, sample_shape=(3,))
  out["normal_sample"], out["normal_log_prob"] = s, normal.log_prob(s)
  out["normal_entropy"] = normal.entropy()
  out["normal_cdf"] = normal.cdf(jnp.array([0.3, 0.7]))
  s, lp = normal.sample_and_log_prob(seed=k2, sample_shape=(2,))
  out["sample_and_log_prob"] = [s, lp]
  mvn = distrax.MultivariateNormalDiag(loc=jnp.array([1.0, -1.0, 0.5]), scale_diag=jnp.array([0.5, 2.0, 1.0]))
  s = mvn.sample(seed=k3, sample_shape=(4,))
  out["mvn_sample"], out["mvn_log_prob"] = s, mvn.log_prob(s)
  out["mvn_kl"] = mvn.kl_divergence(distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.ones(3)))
  cat = distrax.Categorical(logits=jnp.array([0.1, 2.0, -1.0, 0.5]))
  s = cat.sample(seed=k4, sample_shape=(10,))
  out["cat_sample"], out["cat_log_prob"] = s, cat.log_prob(s)
  out["cat_entropy"], out["cat_probs"] = cat.entropy(), cat.probs
  out["bernoulli"] = distrax.Bernoulli(logits=jnp.array([0.3, -1.0])).sample(seed=k3, sample_shape=(4,))
  out["beta_log_prob"] = distrax.Beta(2.0, 3.0).log_prob(jnp.array([0.2, 0.7]))
  mix = distrax.MixtureSameFamily(distrax.Categorical(logits=jnp.array([0.0, 1.0])),
                                  distrax.Normal(jnp.array([-1.0, 2.0]), jnp.array([0.5, 1.0])))
  out["mixture_log_prob"] = mix.log_prob(jnp.array([0.0, 1.5]))
  out["mixture_sample"] = mix.sample(seed=k2, sample_shape=(3,))

  chain = distrax.Chain([distrax.ScalarAffine(shift=jnp.array(1.0), scale=jnp.array(2.0)), distrax.Tanh()])
  x = jnp.array([-0.5, 0.1, 0.9])
  y, ldj = chain.forward_and_log_det(x)
  out["chain_forward"] = [y, ldj]
  out["chain_inverse"] = list(chain.inverse_and_log_det(y))
  flow = distrax.Transformed(distrax.Normal(0.0, 1.0), chain)
  s, lp = flow.sample_and_log_prob(seed=k5, sample_shape=(5,))
  out["transformed"] = [s, lp, flow.log_prob(s)]
  out["independent"] = distrax.Independent(distrax.Normal(jnp.zeros((2, 3)), jnp.ones((2, 3))), 1).log_prob(jnp.ones((2, 3)))

  def objective(loc, key):   # E[tanh(z)^2], z ~ N(loc, 1), by reparameterization
    d = distrax.Transformed(distrax.Independent(distrax.Normal(loc, 1.0), 1), distrax.Block(distrax.Tanh(), 1))
    return jnp.mean(d.sample(seed=key, sample_shape=(64,)) ** 2)
  out["reparam_grad"] = jax.jit(jax.grad(objective))(jnp.array([0.2, -0.3]), k1)
  out["vmap_log_prob"] = jax.vmap(lambda l: distrax.Normal(l, 1.0).log_prob(0.5))(jnp.arange(3.0))
  out = jax.tree.map(lambda v: np.asarray(v).tolist() if isinstance(v, jax.Array) else v, out)
  print(json.dumps({"jax": jax.__name__, **out}))
"""

EXACT = ("normal_sample", "mvn_sample", "cat_sample", "bernoulli", "mixture_sample")


def test_distrax_matches_scipy_and_jax(tmp_path):
  require("distrax")
  require("tensorflow_probability")
  st = pytest.importorskip("scipy.stats")
  got, want = run_on_both(PROGRAM, tmp_path)
  s = np.array(got["normal_sample"])
  np.testing.assert_allclose(got["normal_log_prob"], st.norm.logpdf(s, [0, 1], [1, 0.5]), rtol=1e-5)
  np.testing.assert_allclose(got["normal_entropy"], st.norm.entropy([0, 1], [1, 0.5]), rtol=1e-6)
  np.testing.assert_allclose(got["normal_cdf"], st.norm.cdf([0.3, 0.7], [0, 1], [1, 0.5]), rtol=1e-6)
  s = np.array(got["mvn_sample"])
  np.testing.assert_allclose(got["mvn_log_prob"],
                             st.norm.logpdf(s, [1, -1, 0.5], [0.5, 2, 1]).sum(-1), rtol=1e-5)
  var = np.array([0.25, 4.0, 1.0])   # KL(N(m, diag var) || N(0, I))
  kl = 0.5 * np.sum(var + np.array([1, -1, 0.5]) ** 2 - 1 - np.log(var))
  np.testing.assert_allclose(got["mvn_kl"], kl, rtol=1e-6)
  logits = np.array([0.1, 2.0, -1.0, 0.5])
  log_p = logits - np.log(np.exp(logits).sum())
  np.testing.assert_allclose(got["cat_log_prob"], log_p[got["cat_sample"]], rtol=1e-6)
  np.testing.assert_allclose(got["cat_entropy"], -np.sum(np.exp(log_p) * log_p), rtol=1e-6)
  np.testing.assert_allclose(got["beta_log_prob"], st.beta.logpdf([0.2, 0.7], 2, 3), rtol=1e-5)
  w = np.exp([0.0, 1.0]) / np.exp([0.0, 1.0]).sum()
  pdf = lambda v: w[0] * st.norm.pdf(v, -1, 0.5) + w[1] * st.norm.pdf(v, 2, 1)
  np.testing.assert_allclose(got["mixture_log_prob"], np.log(pdf(np.array([0.0, 1.5]))), rtol=1e-5)
  x = np.array([-0.5, 0.1, 0.9])
  # Chain([f, g]) is f after g: y = 2 tanh(x) + 1.
  t = np.tanh(x)
  np.testing.assert_allclose(got["chain_forward"][0], 2 * t + 1, rtol=1e-6)
  np.testing.assert_allclose(got["chain_forward"][1], np.log(2 * (1 - t ** 2)), rtol=1e-5)
  np.testing.assert_allclose(got["chain_inverse"][0], x, rtol=1e-5, atol=1e-6)
  samples, log_probs, again = map(np.array, got["transformed"])
  t = (samples.astype(np.float64) - 1) / 2
  np.testing.assert_allclose(log_probs, st.norm.logpdf(np.arctanh(t)) - np.log(2 * (1 - t ** 2)),
                             rtol=1e-4)
  np.testing.assert_allclose(again, log_probs, rtol=1e-5)
  np.testing.assert_allclose(got["independent"], [3 * st.norm.logpdf(1.0)] * 2, rtol=1e-6)
  np.testing.assert_allclose(got["vmap_log_prob"], st.norm.logpdf(0.5, np.arange(3.0)), rtol=1e-6)
  if want is not None:
    for key in EXACT:   # the same keys, the same random bits and the same transformations
      assert got[key] == want[key], key
    for key in set(want) - set(EXACT) - {"jax"}:
      np.testing.assert_allclose(got[key], want[key], rtol=5e-6, atol=1e-6, err_msg=key)
