"""Generated kernels touch no memory outside their arrays: compiled with
AddressSanitizer (through $CC, the sanitizer's runtime preloaded), jitted
gathers, scatters, slices, pads, windows, convolutions, sorts and
cumulative ops at awkward shapes and out-of-bounds indices run without a
report, while a kernel that reads one element past its array is reported
(the check can fail).  benchmarks/asan_check.sh runs the differential fuzz
and the kernel tests this way."""
import os
import subprocess
import sys

import pytest

from purejax._src.backends.cpu import toolchain

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _runtime():
  """(libasan, libstdc++) of the system gcc, or None."""
  try:
    asan, stdcxx = (subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True,
                                   text=True, timeout=30).stdout.strip()
                    for name in ("libasan.so", "libstdc++.so"))
  except (OSError, subprocess.SubprocessError):
    return None
  if not (os.path.isabs(asan) and os.path.exists(asan)):
    return None
  return asan, os.path.realpath(stdcxx) if os.path.isabs(stdcxx) else ""


pytestmark = pytest.mark.skipif(
    not toolchain.compiler_available() or _runtime() is None,
    reason="needs gcc with AddressSanitizer")

PROGRAMS = r'''
import numpy as np
import purejax as jax, purejax.numpy as jnp
from purejax import lax

rng = np.random.default_rng(0)
x = rng.standard_normal((7, 5, 3)).astype(np.float32)
idx = np.array([0, 6, -1, 9, -12, 3], np.int32)
progs = [
    lambda x: x[idx],                                   # gather, indices out of bounds
    lambda x: jnp.take(x, idx, axis=1, mode="fill", fill_value=-1.0),
    lambda x: jnp.take(x, idx, axis=2, mode="clip"),
    lambda x: x.at[idx].add(1.0),                       # scatter, dropped rows
    lambda x: x.at[:, idx].max(jnp.ones((7, 6, 3))),
    lambda x: x.at[idx, 0, 0].set(2.0, mode="clip"),
    lambda x: lax.dynamic_slice(x, (5, -3, 2), (4, 5, 2)),   # starts clamped
    lambda x: lax.dynamic_update_slice(x, x[:3, :2], (6, 4, 0)),
    lambda x: lax.pad(x, 0.0, ((-2, 3, 1), (1, -4, 0), (0, 0, 2))),
    lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 2, 1), (2, 1, 1), ((1, 2), (0, 1), (0, 0))),
    lambda x: jax.grad(lambda x: lax.reduce_window(
        x, -jnp.inf, lax.max, (2, 3, 2), (1, 2, 1), "SAME").sum())(x),
    lambda x: lax.conv_general_dilated(x[None], jnp.ones((2, 7, 2, 2)), (2, 1), ((1, 2), (0, 1)),
                                       (1, 2), (2, 1), ("NCHW", "OIHW", "NCHW")),
    lambda x: jnp.sort(x, axis=0) + jnp.argsort(x, axis=1),
    lambda x: lax.cumsum(x, axis=1, reverse=True) * lax.cummax(x, axis=0),
    lambda x: lax.top_k(x, 2)[0],
    lambda x: jnp.argmax(x, axis=0) + jnp.sum(x[:, :0]),   # an empty axis
    lambda x: jnp.linalg.solve(x[:3, :3, 0] + 3 * jnp.eye(3), x[:3, 0]),
]
for f in progs:
  np.asarray(jax.jit(f)(x))
print("ran", len(progs))
'''

READ_PAST = r'''
import ctypes, numpy as np
from purejax._src.backends.cpu import toolchain
lib = toolchain.compile_library(
    "float read_past(const float *a, long n) { float s = 0; "
    "for (long i = 0; i <= n; i++) s += a[i]; return s; }")
lib.read_past.restype = ctypes.c_float
a = np.ones(1000, np.float32)
print(lib.read_past(a.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(a.size)))
'''


def _under_asan(source, tmp_path):
  asan, stdcxx = _runtime()
  log = tmp_path / "asan"
  env = dict(os.environ, ASAN_OPTIONS=f"detect_leaks=0:log_path={log}",
             LD_PRELOAD=f"{asan} {stdcxx}".strip(),
             CC="gcc -fsanitize=address -fno-omit-frame-pointer",
             PUREJAX_CACHE_DIR=str(tmp_path / "kernels"), PUREJAX_COMPILE_SYNC="1",
             PYTHONPATH=ROOT)
  proc = subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                        text=True, timeout=600, cwd=tmp_path)
  reports = "".join(p.read_text() for p in tmp_path.glob("asan.*"))
  return proc, reports


@pytest.fixture(autouse=True)
def _sanitizer_loads(tmp_path_factory):
  """Skips where the sanitizer's runtime does not load into this Python."""
  proc, reports = _under_asan("import numpy", tmp_path_factory.mktemp("preflight"))
  if proc.returncode != 0 or reports:
    pytest.skip(f"AddressSanitizer does not run in this Python: {proc.stderr[-300:]}")


def test_a_read_past_an_array_is_reported(tmp_path):
  proc, reports = _under_asan(READ_PAST, tmp_path)
  assert proc.returncode != 0 and "heap-buffer-overflow" in reports, (proc.stderr, reports)


def test_kernels_stay_inside_their_arrays(tmp_path):
  proc, reports = _under_asan(PROGRAMS, tmp_path)
  assert reports == "" and proc.returncode == 0, (proc.stderr[-3000:], reports[:3000])
  assert proc.stdout.split() == ["ran", "17"]
