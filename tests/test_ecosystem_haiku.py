"""dm-haiku, unedited, on purejax (``python -m purejax``): an MLP trained with
optax and a Conv2D + BatchNorm with state, compared with JAX. Needs the
``ecosystem`` extra: skipped without it, except under CI (the CI variable
set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

PROGRAM = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import haiku as hk
  def net(x):
    return hk.nets.MLP([16, 16, 1])(x)
  f = hk.without_apply_rng(hk.transform(net))
  x = jnp.asarray(np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32))
  y = jnp.sin(x.sum(1, keepdims=True))
  params = f.init(jax.random.key(0), x)
  opt = optax.adam(1e-2); st = opt.init(params)
  @jax.jit
  def step(p, s):
    l, g = jax.value_and_grad(lambda p: jnp.mean((f.apply(p, x) - y) ** 2))(p)
    u, s = opt.update(g, s)
    return optax.apply_updates(p, u), s, l
  losses = []
  for _ in range(10):
    params, st, l = step(params, st); losses.append(float(l))
  def bn(x, is_training):
    return hk.BatchNorm(True, True, 0.9)(hk.Conv2D(4, 3)(x), is_training)
  g = hk.transform_with_state(bn)
  xi = jnp.ones((2, 5, 5, 1))
  p2, s2 = g.init(jax.random.key(1), xi, True)
  o, s2 = g.apply(p2, s2, None, xi, True)
  ema = s2["batch_norm/~/mean_ema"]["average"]
  print(json.dumps({"jax": jax.__name__, "losses": losses, "o2": float((o ** 2).mean()),
                    "ema": np.asarray(ema).ravel().tolist()}))
"""


def test_haiku_mlp_and_batchnorm_state_match_jax(tmp_path):
  require("haiku")
  require("optax")
  got, want = run_on_both(PROGRAM, tmp_path)
  assert got["losses"][-1] < 0.5 * got["losses"][0]
  assert got["o2"] == pytest.approx(1.0, rel=0.1)   # batch-normalized
  if want is not None:
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["o2"], want["o2"], rtol=1e-4)
    np.testing.assert_allclose(got["ema"], want["ema"], rtol=1e-5, atol=1e-7)
