"""Smoke test of benchmarks/run.py: a --quick run writes the results table."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Listed here, not imported, so a workload dropped from the script fails the test.
WORKLOADS = ("selu", "norm", "dot", "mlp_step", "convnet", "rnn_scan", "attention",
             "reduce_axes", "embedding", "sort", "cumsum", "lstm_scan", "transformer_step",
             "per_example_grads", "random_normal", "linear_solve", "cholesky", "eigh",
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


PARALLEL_ROWS = ("pmap over 2 devices", "throughput, 2 devices / 1 device (1 core)",
                 "psum itself / memcpy", "the collective alone")


def test_quick_parallel_run_writes_its_section(tmp_path):
  # JAX is left out (its own subprocesses): the purejax and MPI workers run.
  proc = _run(tmp_path, "--parallel", "--backends", "cpu")
  assert proc.returncode == 0, proc.stderr[-3000:]
  table = (tmp_path / "parallel.md").read_text()
  assert table.startswith("## Parallel (2 CPU devices")
  rows = [r for r in table.splitlines() if r.startswith("| ")]
  for name in PARALLEL_ROWS:
    row = [r for r in rows if name in r]
    assert len(row) == 1, (name, table)
    purejax_cell = row[0].strip("|").split("|")[1].strip()
    assert purejax_cell.endswith(("ms", "x")) and "n/a" not in purejax_cell, row
  # The workers checked pmap against jit and psum against its exact value.
  assert "MISMATCH" not in table and "purejax: n/a" not in table, table
  mpi = [r for r in rows if "MPI processes" in r]
  assert mpi or "- mpi: n/a (" in table, table   # ran, or says why not


def test_parallel_section_reports_missing_parts():
  sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
  import parallel
  md = parallel.to_markdown({"notes": {"mpi": "mpirun not found"}})
  assert "- mpi: n/a (mpirun not found)" in md
  assert "| MLP step, batch 256, pmap over 2 devices (pmean of grads) | n/a | n/a |  |" in md
