"""Smoke tests for examples/: each script runs in a fresh interpreter, exits 0
and reaches its documented result (final loss / accuracy under a threshold)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
TIMEOUT_S = 120


def _number(label):
  return re.compile(re.escape(label) + r"\s*([-+0-9.eE]+)\s*$", re.M)


# script -> list of (regex on stdout, check on the captured number or None).
CHECKS = {
    "quickstart.py": [
        (re.compile(r"^int8 \+ 4 -> int8$", re.M), None),
        (re.compile(r"^apply -> \[3\. 3\.\]$", re.M), None),
        (re.compile(r"^\{ lambda ; a:f32\[5\]\. let", re.M), None),
        # grad, vmap and random, with JAX's values (random bits exact).
        (re.compile(r"^d2/dx2 x\*\*3 at 2\.0 += 12\.0$", re.M), None),
        (re.compile(r"^grad of loss w\.r\.t\. b += \[6\. 4\.\]$", re.M), None),
        (re.compile(r"^vmap\(apply\) over 3 +-> \[\[1\.0, 1\.0\], \[5\.0, 5\.0\], \[9\.0, 9\.0\]\]$",
                    re.M), None),
        (re.compile(r"^per-example grads of w: \(3, 2, 2\)$", re.M), None),
        (re.compile(r"^normal\(k1, \(3,\)\) += \[ 1\.004014\d -0\.906337\d -0\.748172\d\]$", re.M),
         None),
        (re.compile(r"^randint\(k2, \(4,\), 0, 100\) = \[22 22 96 35\]$", re.M), None),
    ],
    "linear_regression.py": [
        # The document's data (classic threefry): "true" loss 0.02363973.
        (_number('Loss for "true" W,b: '), lambda v: abs(v - 0.0236398) < 1e-5),
        (_number("Loss step 0: "), lambda v: 10.9 < v < 11.1),
        (_number("final loss:"), lambda v: v < 0.0125),
    ],
    "mlp_training.py": [
        (re.compile(r"\[#+\] step  200/200"), None),
        (_number("final loss:"), lambda v: v < 0.1),
        (_number("final train accuracy:"), lambda v: v > 0.95),
    ],
    "rnn_scan.py": [
        (_number("initial loss:"), lambda v: v > 0.5),
        (_number("test loss:"), lambda v: v < 0.02),
        (_number("final loss:"), lambda v: v < 0.01),
    ],
    "per_example_grads.py": [
        (_number("max |vmap - loop| difference:"), lambda v: v < 1e-5),
        (re.compile(r"example 7: gradient norm"), None),
        (_number("final mean gradient norm:"), lambda v: abs(v - 3.212) < 1e-3),
    ],
}


def _run(script):
  env = dict(os.environ)
  # This checkout's purejax, whatever is installed; scripts run from examples/.
  env["PYTHONPATH"] = os.pathsep.join(
      [str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
  return subprocess.run(
      [sys.executable, str(EXAMPLES / script)], cwd=str(EXAMPLES), env=env,
      capture_output=True, text=True, timeout=TIMEOUT_S)


def test_every_example_has_checks():
  scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
  assert scripts == sorted(CHECKS), "add the new example to CHECKS"


@pytest.mark.parametrize("script", sorted(CHECKS))
def test_example_runs(script):
  proc = _run(script)
  assert proc.returncode == 0, proc.stderr[-3000:]
  for pattern, check in CHECKS[script]:
    matches = pattern.findall(proc.stdout)
    assert matches, f"{script}: no output matching {pattern.pattern!r}"
    if check is not None:
      value = float(matches[-1])
      assert check(value), f"{script}: {pattern.pattern!r} gave {value}"


@pytest.mark.parametrize("script", sorted(CHECKS))
def test_example_uses_only_the_jax_names(script):
  # So that it runs unchanged with real JAX after swapping the two imports.
  source = (EXAMPLES / script).read_text()
  imports = set(re.findall(r"^(?:import|from) .*$", source, re.M))
  allowed = {"import purejax as jax", "import purejax.numpy as jnp",
             "import numpy as np", "import sys"}
  assert imports <= allowed, imports - allowed
  body = re.sub(r"^import .*$", "", source, flags=re.M)
  assert not re.search(r"\bpurejax\.\w", body), "use jax./jnp. names only"
  assert re.search(r'\A"""\S', source), "module docstring"
