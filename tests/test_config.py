import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import purejax
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


# -- flags that refuse work, shift seeds, police raw keys (messages: JAX 0.10.2's) ----

def test_no_tracing_refuses_new_traces_only():
  f = purejax.jit(lambda x: x + 1)
  f(1.)
  with purejax.no_tracing(True):
    assert float(f(2.)) == 3.0    # traced before: runs
    with pytest.raises(RuntimeError, match=r"^re-tracing function <lambda> at .*test_config"
                       r"\.py:\d+ for `jit`, but 'no_tracing' is set$"):
      purejax.jit(lambda x: x * 2)(1.)
  assert float(purejax.jit(lambda x: x * 2)(1.)) == 2.0


def test_no_execution_refuses_jitted_and_eager_runs():
  f = purejax.jit(lambda x: x + 1)
  f(1.)
  ones = jnp.ones(2)
  with purejax.no_execution(True):
    for run, name in [(lambda: f(2.), "<lambda>"), (lambda: ones + 1, "add"),
                      (lambda: jnp.sin(ones), "sin")]:
      with pytest.raises(RuntimeError, match=rf"^JAX tried to execute function jit\({name}\), "
                         "but the no_execution config option is set$"):
        run()
    assert purejax.eval_shape(f, 1.).shape == ()   # abstract evaluation still works
  assert float(f(3.)) == 4.0 and np.asarray(ones + 1).tolist() == [2.0, 2.0]


def test_random_seed_offset_shifts_every_seed():
  data = lambda k: np.asarray(purejax.random.key_data(k)).tolist()
  with config.override("jax_random_seed_offset", 5):
    assert data(purejax.random.key(0)) == [0, 5]
    assert data(purejax.random.key(5)) == [0, 10]
    assert np.asarray(purejax.random.PRNGKey(0)).tolist() == [0, 5]
    assert data(purejax.jit(purejax.random.key)(1)) == [0, 6]
  # a jitted function traced under the offset is traced again without it
  assert data(purejax.jit(purejax.random.key)(1)) == [0, 1]


def test_legacy_prng_key_warns_or_refuses_raw_keys():
  message = ("Legacy uint32 key array passed as key to jax.random function. Please create "
             "keys using jax.random.key(). If use of a raw key array was intended, set "
             'jax_legacy_prng_key="allow".')
  with purejax.legacy_prng_key("error"):
    with pytest.raises(ValueError) as refused:
      purejax.random.normal(purejax.random.PRNGKey(0))
    assert str(refused.value) == message
    purejax.random.normal(purejax.random.key(0))   # typed keys are fine
  with purejax.legacy_prng_key("warn"):
    with pytest.warns(UserWarning) as warned:
      purejax.random.split(purejax.random.PRNGKey(0))
    assert [str(w.message) for w in warned] == [message]
  with pytest.raises(ValueError, match="new enum value must be in"):
    config.update("jax_legacy_prng_key", "never")


def test_compilation_cache_dir_holds_the_kernels(tmp_path):
  """jax_compilation_cache_dir places purejax's compiled kernels (where
  purejax_cache_dir is unset); XLA's tuning flags are accepted, with JAX's checks."""
  with config.override("purejax_cache_dir", None), \
       config.override("jax_compilation_cache_dir", str(tmp_path / "cc")), \
       config.override("purejax_compile_sync", True):
    f = purejax.jit(lambda x: jnp.cos(x) * 1.625 - 0.125)
    np.testing.assert_allclose(f(np.arange(32, dtype=np.float32)),
                               np.cos(np.arange(32)) * 1.625 - 0.125, rtol=1e-6, atol=1e-6)
    assert [p for p in os.listdir(tmp_path / "cc") if p.endswith(".so")]
  for name, value in [("jax_optimization_level", "O3"), ("jax_use_shardy_partitioner", False),
                      ("jax_persistent_cache_min_compile_time_secs", 0.0)]:
    with config.override(name, value):
      assert config.read(name) == value
  with pytest.raises(ValueError, match=r"new enum value must be in \['UNKNOWN', 'O0'"):
    config.update("jax_optimization_level", "fast")
