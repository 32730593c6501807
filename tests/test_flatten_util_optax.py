"""optax (which imports ``jax.flatten_util``) runs on purejax through a
test-local ``jax`` alias, in a subprocess so this process's real JAX (the
oracle) is untouched. Skipped where optax is not installed."""
import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = textwrap.dedent("""
  import importlib, importlib.util, sys
  import numpy as np
  import purejax

  class _Alias:   # every jax.X resolves to purejax.X
    def find_spec(self, name, path=None, target=None):
      if name != "jax" and not name.startswith("jax."):
        return None
      try:
        mod = importlib.import_module("purejax" + name[3:])
      except ImportError:
        return None
      loader = type("L", (), {"create_module": lambda s, spec: mod,
                              "exec_module": lambda s, m: None})()
      return importlib.util.spec_from_loader(name, loader)

  sys.meta_path.insert(0, _Alias())
  import jax, jax.numpy as jnp, optax
  assert jax is purejax
  params = {"w": jnp.array([1.0, -2.0, 3.0]), "b": jnp.array(0.5)}
  opt = optax.adam(0.1)
  state = opt.init(params)
  loss = lambda p: jnp.sum(p["w"] ** 2) + p["b"] ** 2

  @jax.jit
  def step(p, s):
    g = jax.grad(loss)(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s

  for _ in range(3):
    params, state = step(params, state)
  # adam by hand in float64
  x = np.array([1.0, -2.0, 3.0, 0.5]); m = np.zeros(4); v = np.zeros(4)
  for t in range(1, 4):
    g = 2 * x
    m = 0.9 * m + 0.1 * g; v = 0.999 * v + 0.001 * g * g
    x = x - 0.1 * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
  got = np.concatenate([np.asarray(params["w"]), [float(params["b"])]])
  np.testing.assert_allclose(got, x, rtol=1e-5)
  flat, unravel = jax.flatten_util.ravel_pytree(params)
  assert flat.shape == (4,)
  print("OK")
""")


def test_optax_adam_on_purejax_through_a_jax_alias():
  if importlib.util.find_spec("optax") is None:
    pytest.skip("optax is not installed")
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
  done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                        text=True, timeout=600)
  assert done.returncode == 0 and "OK" in done.stdout, done.stderr[-3000:]
