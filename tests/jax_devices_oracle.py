"""Running real JAX (the oracle) with several CPU devices: it reads the device
count from XLA_FLAGS at start-up, so it runs in a subprocess."""
import os
import subprocess
import sys

import pytest


def jax_stdout(code, devices):
  """What ``code`` prints under real JAX with ``devices`` CPU devices; skips
  the test when JAX is missing, fails to run, or takes too long."""
  pytest.importorskip("jax")
  env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
             JAX_PLATFORMS="cpu")
  try:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=60, cwd="/").stdout.strip()
  except subprocess.TimeoutExpired:
    pytest.skip("the JAX oracle took too long")
  if not out:
    pytest.skip("the JAX oracle did not run")
  return out
