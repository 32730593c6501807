"""Every benchmark workload (benchmarks/workloads.py, quick sizes) on the
GPU backend through the stand-in CuPy (tests/fake_cupy.py): nothing is
copied to the host while it runs (no host step, no value read back) nor
from it (a copy from pageable host memory waits for the device), no
warning says that something ran on the host, and the results are the CPU
backend's (to float32 rounding).  With ``purejax_cuda_graphs``, each is
replayed as one CUDA graph from its third call on (the stand-in's capture
records the device operations and its graph replays them)."""
import os
import sys
import warnings

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.backends.cpu import toolchain
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks"))
import workloads  # noqa: E402

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

STEADY = [pytest.param(w, id=w.name) for w in workloads.WORKLOADS if w.kind == workloads.STEADY]


def _leaves(out):
  return [np.asarray(x) for x in jax.tree_util.tree_leaves(out)]


@pytest.mark.parametrize("graphs", [False, True], ids=["launches", "graph"])
@pytest.mark.parametrize("workload", STEADY)
def test_workload_runs_on_the_device_alone(workload, graphs):
  data = workload.data(True)
  with config.override("purejax_backend", "cpu"):
    want = _leaves(workload.make(jax, jnp, data)())
  cupy = FakeCupy(1)
  gpu_runtime.use(cupy)
  try:
    with config.override("jax_platforms", "cuda,cpu"), warnings.catch_warnings(), \
        config.override("purejax_cuda_graphs", graphs):
      warnings.simplefilter("error", RuntimeWarning)   # "... run on the host"
      run = workload.make(jax, jnp, data)
      run()   # traced and compiled
      if graphs:
        run()   # captured
      before, uploads = len(cupy.host_copies), cupy.transfers["to_device"]
      out = run()
      copied = cupy.host_copies[before:]
      uploads = cupy.transfers["to_device"] - uploads
      launched = len(cupy.launches)
      got = _leaves(out)
  finally:
    gpu_runtime.use("detect")
  assert copied == [], f"copied to the host: {copied}"
  assert uploads == 0, f"{uploads} copies from the host"
  assert launched or workload.name in ("dot", "sort", "linear_solve", "cholesky", "eigh")
  assert cupy.graph_launches >= 2 if graphs else cupy.graph_launches == 0
  assert len(got) == len(want)
  for g, w in zip(got, want):
    assert g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=2e-4,
                               atol=2e-5)
