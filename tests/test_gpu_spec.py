"""The specification's tests (tests/spec) pass with a GPU as the default
device: every array made and every operation run there, through the GPU
backend's code paths, on the stand-in CuPy of tests/fake_cupy.py."""
import os
import subprocess
import sys

import pytest

from purejax._src.backends.cpu import toolchain

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
def test_the_spec_passes_on_a_default_gpu():
  env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
  out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "tests.fake_gpu_plugin", "-W", "ignore::RuntimeWarning",
                        "-x", os.path.join("tests", "spec")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
  assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
  assert " passed" in out.stdout
