"""The README's claims: its code blocks give the results their comments show
(on purejax, and on JAX where it is installed), its set-up commands are what
CI runs, and its numbers are counted, not remembered."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from tests import readme_blocks

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language):
  return re.findall(rf"^```{language}\n(.*?)^```", README, re.M | re.S)


def _section(title):
  start = README.index(f"\n## {title}\n")
  end = README.find("\n## ", start + 1)
  return README[start:end if end >= 0 else None]


def _run_block(tmp_path, block, *args):
  path = tmp_path / "block.py"
  path.write_text(block, encoding="utf-8")
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
  env.pop("XLA_FLAGS", None)
  out = subprocess.run([sys.executable, str(ROOT / "tests" / "readme_blocks.py"), str(path), *args],
                       capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path))
  assert out.returncode == 0, out.stderr[-4000:]
  return json.loads(out.stdout.strip().splitlines()[-1])


PYTHON_BLOCKS = _blocks("python")


def test_the_tour_states_its_results():
  tour = re.search(r"^```python\n(.*?)^```", _section("A short tour"), re.M | re.S).group(1)
  checked = [e for e in readme_blocks._expectations(tour) if e[1]]
  assert len(checked) >= 15, len(checked)
  assert any(kind == "printed" and "jit[" in text for _, kind, text in checked)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_results_on_purejax(tmp_path, index):
  assert _run_block(tmp_path, PYTHON_BLOCKS[index]) == []


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_results_on_jax(tmp_path, index):
  pytest.importorskip("jax")
  assert _run_block(tmp_path, PYTHON_BLOCKS[index], "jax") == []


def test_the_checker_catches_a_wrong_comment():
  block = ("import purejax.numpy as jnp\n"
           "jnp.arange(3)          # Array([0, 1, 3], dtype=int32)\n"
           "jnp.ones(2).sum()      # Array(2., dtype=float32)\n"
           "jnp.zeros(2)[5]        # Array(0., dtype=float32)\n"
           "jnp.ones(2) + jnp.ones(3)  # ValueError: add got incompatible shapes ...\n"
           "print(jnp.int8(3).dtype)\n"
           "# int16\n")
  problems = readme_blocks.run(block)
  assert [p["at"].split(":")[0] for p in problems] == ["line 2", "line 5", "line 6"], problems


def test_ci_runs_the_readme_test_command():
  setup = re.search(r"^```bash\n(.*?)^```", _section("Set-up"), re.M | re.S).group(1)
  install_line, test_line = setup.strip().splitlines()
  assert "python3 -m venv .venv" in install_line and "examples/quickstart.py" in install_line
  assert "pytest" in test_line
  ci = (ROOT / ".ci" / "run").read_text()
  assert test_line in ci.splitlines()
  assert "python3 -m venv .venv" in ci


def test_the_spec_test_count_is_current():
  claimed = int(re.search(r"passes: (\d+) tests", README).group(1))
  out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "tests/spec"],
                       capture_output=True, text=True, cwd=str(ROOT), timeout=300)
  collected = int(re.search(r"(\d+) tests? collected", out.stdout).group(1))
  assert claimed == collected


def test_examples_table_lists_every_example():
  listed = set(re.findall(r"^\| `examples/(\w+\.py)` \|", README, re.M))
  assert listed == {p.name for p in (ROOT / "examples").glob("*.py")}
