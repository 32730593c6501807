"""benchmarks/fuzz.py's JAX oracle mode runs programs (skipped without JAX)."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

import fuzz  # noqa: E402
import fuzz_oracle  # noqa: E402
from fuzz_programs import Gen  # noqa: E402


def test_oracle_runs_a_few_programs():
  gen = Gen(7, "elementwise", 4)
  report = fuzz_oracle.check_batch_oracle([gen.program() for _ in range(4)])
  assert report.stats["programs"] == 4 and report.stats["outputs"] >= 4
  assert all(f.kind in ("mismatch", "generator") for f in report.failures)


def test_oracle_comparison_is_dtype_aware():
  assert fuzz_oracle.compare_oracle(np.array([1, 2], np.int32), np.array([1, 3], np.int32))[0]
  f = np.array([1.0, np.nan], np.float32)
  assert fuzz_oracle.compare_oracle(f, np.nextafter(f, np.float32(2)))[0] is None
  assert fuzz_oracle.compare_oracle(f, np.array([1.0, 0.0], np.float32))[0]
  assert fuzz_oracle.compare_oracle(f, f.astype(np.float64))[0]


def test_edges_family_generates():
  gen = Gen(3, "edges", 4)
  assert [gen.program() for _ in range(3)]
  assert fuzz.main(["--oracle", "jax", "--family", "edges", "--programs", "2",
                    "--no-fork", "--no-reduce", "--max-reports", "0"]) in (0, 1)
