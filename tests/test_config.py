import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.config import config


def test_update_and_read():
  old = jax.config.jax_enable_x64
  try:
    jax.config.update("jax_enable_x64", True)
    assert jax.config.jax_enable_x64 is True
    assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float64
  finally:
    jax.config.update("jax_enable_x64", old)
  assert jnp.ones(2).dtype == np.float32


def test_context_manager_restores():
  with jax.enable_x64(True):
    assert config.jax_enable_x64
    assert jnp.arange(3).dtype == np.int64
  assert not config.jax_enable_x64
  assert jnp.arange(3).dtype == np.int32


def test_unknown_flag_raises():
  with pytest.raises(AttributeError):
    jax.config.update("jax_not_a_flag", True)
  with pytest.raises(AttributeError):
    jax.config.jax_not_a_flag


def test_old_style_import():
  from purejax.config import config as old_config
  assert old_config is jax.config


@pytest.mark.parametrize("value, expected", [("1", "True"), ("true", "True"), ("0", "False")])
def test_environment_variable(value, expected):
  env = dict(os.environ, JAX_ENABLE_X64=value)
  out = subprocess.run(
      [sys.executable, "-c", "import purejax; print(purejax.config.jax_enable_x64)"],
      capture_output=True, text=True, env=env)
  assert out.stdout.strip() == expected, out.stderr


def test_disable_jit_flag_runs_python():
  calls = []

  @jax.jit
  def f(x):
    calls.append(type(x).__name__)
    return x + 1

  with jax.disable_jit():
    f(1.0)
    f(1.0)
  assert calls == ["float", "float"]
  f(jnp.float32(1.0))
  assert calls[-1] == "DynamicJaxprTracer"
