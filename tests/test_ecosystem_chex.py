"""chex, unedited, on purejax (``python -m purejax``): its own test suite (it
ships in chex's wheel) and ``chex.set_n_cpu_devices``. Needs the
``ecosystem`` extra: skipped without it, except under CI (the CI variable
set), where a missing extra fails the tests."""
import pytest

from tests.ecosystem import require, run_on_both, run_test_suite

pytestmark = pytest.mark.ecosystem

# chex's own test suite (chex 0.1.92) on purejax, this test's command,
# measured 2026-11-29 on the 2-core development VM: 566 passed, 1 failed,
# 103 skipped, in about 40 s; JAX 0.10.2, same command and machine: 567
# passed, 103 skipped. The failure is float32 rounding luck:
# NumericalGradsAssertTest.test_easy_with_stop_gradient2 compares a JVP with
# central differences of a sum of 15 float32 values near 150; the eager sum
# (NumPy's pairwise order) lands 3 ulp from the exact one where XLA's
# happens to be within 1, and the difference quotient misses atol=0.15 by
# 0.05. Raise the floor as purejax grows.
CHEX_SUITE_PASS_FLOOR = 566


def test_chex_own_test_suite_on_purejax(tmp_path):
  require("chex")
  counts, output = run_test_suite("chex", tmp_path)
  assert "passed" in counts, output[-6000:]
  print(counts)
  assert counts["passed"] >= CHEX_SUITE_PASS_FLOOR, (counts, output[-5000:])


# chex.set_n_cpu_devices reads jax._src.xla_bridge._backends to tell whether
# the CPU device count is already fixed (purejax's stand-in: empty until the
# devices are first listed).
SET_N_CPU_DEVICES = """
  import json
  import chex
  chex.set_n_cpu_devices(3)          # before any device is listed: allowed
  chex.set_n_cpu_devices(4)          # and again
  import jax
  count = jax.device_count()
  try:
    chex.set_n_cpu_devices(8)        # now the count is fixed
    late = "accepted"
  except RuntimeError as e:
    late = str(e)
  out = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(jax.numpy.arange(4.0))
  print(json.dumps({"jax": jax.__name__, "count": count, "late": late,
                    "psum": out.tolist()}))
"""


def test_chex_set_n_cpu_devices(tmp_path):
  require("chex")
  got, want = run_on_both(SET_N_CPU_DEVICES, tmp_path)
  assert got["count"] == 4
  assert got["late"].startswith("Attempted to set 8 devices, but 4 CPUs already available")
  assert got["psum"] == [6.0] * 4
  if want is not None:
    assert {k: want[k] for k in ("count", "late", "psum")} == \
        {k: got[k] for k in ("count", "late", "psum")}
