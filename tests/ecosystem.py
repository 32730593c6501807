"""Helpers of the ecosystem tests (``test_ecosystem_*.py``): JAX libraries,
unedited, run on purejax (``python -m purejax``).  They need the
``ecosystem`` extra: skipped without it, except under CI (the CI variable
set), where a missing extra fails the tests."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def require(name):
  if importlib.util.find_spec(name) is not None:
    return
  if os.environ.get("CI"):
    pytest.fail(f"{name} is not installed: CI installs the `ecosystem` extra")
  pytest.skip(f"{name} is not installed (the `ecosystem` extra)")


def _env():
  return dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))


def run_program(source, tmp_path, on_purejax=True, timeout=600):
  """Runs ``source`` on purejax (or on JAX): the JSON its last line prints."""
  script = tmp_path / "prog.py"
  script.write_text(textwrap.dedent(source))
  args = ["-m", "purejax", str(script)] if on_purejax else [str(script)]
  done = subprocess.run([sys.executable, *args], env=_env(), capture_output=True, text=True,
                        timeout=timeout)
  assert done.returncode == 0, done.stderr[-3000:]
  return json.loads(done.stdout.strip().splitlines()[-1])


def summary_counts(stdout):
  """pytest's closing line, e.g. ``95 failed, 1776 passed, 62 skipped, 4 errors in 540s``."""
  last = stdout.strip().splitlines()[-1] if stdout.strip() else ""
  return {word: int(n) for n, word in re.findall(r"(?<![\w])(\d+) (passed|failed|skipped|errors?)\b", last)}


def run_test_suite(package, tmp_path, deselect=(), timeout=2700):
  """Runs the test files (``*_test.py``) shipped in ``package``'s wheel with
  pytest on purejax: (pytest's counts, its output)."""
  package_dir = os.path.dirname(importlib.util.find_spec(package).origin)
  (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = *_test.py\n")
  site = os.path.dirname(package_dir)
  env = {k: v for k, v in _env().items() if not k.startswith(("PYTEST_", "CI"))}
  done = subprocess.run(
      [sys.executable, "-m", "purejax", "-m", "pytest", "-q", "-p", "no:cacheprovider",
       "-c", str(tmp_path / "pytest.ini"), "--rootdir", site, "--tb=no",
       "--continue-on-collection-errors",
       *[arg for name in deselect for arg in ("--deselect", name)], package_dir],
      cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=timeout)
  return summary_counts(done.stdout), done.stdout + done.stderr


def run_checkout_suite(checkout, args=(), timeout=2700):
  """Runs a library's own test suite from a source checkout (for libraries
  whose tests are not in their wheel) with pytest on purejax, in the
  checkout, so its pytest configuration applies: (pytest's counts, its
  output).  The library itself is the installed one."""
  env = {k: v for k, v in _env().items() if not k.startswith(("PYTEST_", "CI"))}
  done = subprocess.run(
      [sys.executable, "-m", "purejax", "-m", "pytest", "-q", "-p", "no:cacheprovider",
       "--tb=no", *args],
      cwd=str(checkout), env=env, capture_output=True, text=True, timeout=timeout)
  return summary_counts(done.stdout), done.stdout + done.stderr


def run_on_both(source, tmp_path):
  """``source`` run on purejax, then on JAX where it is installed: (purejax's
  JSON, JAX's or None); each program reports ``jax.__name__`` as "jax"."""
  got = run_program(source, tmp_path)
  assert got["jax"] == "purejax"
  if importlib.util.find_spec("jax") is None:
    return got, None
  want = run_program(source, tmp_path, on_purejax=False)
  assert want["jax"] == "jax"
  return got, want
