"""The suite runs on the C backend by default (its first calls of each jitted
function on NumPy, while the C code compiles); this runs the core areas'
tests again with every jitted computation on the NumPy backend, so that both
backends stay correct (PUREJAX_BACKEND=numpy runs the whole suite so)."""
import os
import subprocess
import sys

import pytest

_CORE = ["test_jit.py", "test_scan.py", "test_loops.py", "test_cond.py",
         "test_control_flow_nested.py"]


@pytest.mark.skipif(os.environ.get("PUREJAX_BACKEND") == "numpy",
                    reason="the whole suite runs on the NumPy backend already")
def test_core_areas_pass_on_the_numpy_backend():
  here = os.path.dirname(__file__)
  env = dict(os.environ, PUREJAX_BACKEND="numpy")
  proc = subprocess.run(
      [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
       *[os.path.join(here, name) for name in _CORE]],
      env=env, cwd=os.path.dirname(here), capture_output=True, text=True, timeout=900)
  assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
  assert " passed" in proc.stdout
