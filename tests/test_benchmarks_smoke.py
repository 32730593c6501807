"""Smoke test of benchmarks/run.py: a --quick run writes the results table."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Listed here, not imported, so a workload dropped from the script fails the test.
WORKLOADS = ("selu", "norm", "dot", "mlp_step", "convnet", "rnn_scan", "attention",
             "eager_add", "jit_call", "first_result")


def _run(out, *extra):
  return subprocess.run(
      [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--quick", "--out",
       str(out), *extra], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_quick_run_writes_table_with_every_workload(tmp_path):
  # The hand-written NumPy column also checks that purejax computes the same.
  proc = _run(tmp_path, "--backends", "numpy,plain")
  assert proc.returncode == 0, proc.stderr[-3000:]
  table = (tmp_path / "results.md").read_text()
  rows = [line for line in table.splitlines() if line.startswith("| ")]
  assert rows[0].startswith("| workload | purejax NumPy | NumPy |")
  for name in WORKLOADS:
    row = [r for r in rows if r.startswith(f"| {name}: ")]
    assert len(row) == 1, name
    cells = [c.strip() for c in row[0].strip("|").split("|")]
    assert all(c.endswith(("us", "ms", " s")) for c in cells[1:3]), row
  assert "MISMATCH" not in table and "Errors:" not in table
  assert "CPU:" in table and "NumPy " in table


def test_rejects_unknown_workload(tmp_path):
  proc = _run(tmp_path, "--only", "nope")
  assert proc.returncode != 0 and "unknown workloads: nope" in proc.stderr
