"""Compiler processes and loaded kernel libraries: a hanging compiler never
blocks (every run has a time limit, its whole process group is killed on a
timeout and at exit, and the program falls back to NumPy with a warning that
says why), and libraries no executable uses any more are unloaded."""
import gc
import os
import pathlib
import shutil
import subprocess
import sys
import time
import weakref

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.backends.cpu import executable, toolchain
from purejax._src.config import config

ROOT = pathlib.Path(purejax.__file__).parent.parent
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def real_cc():
  if not toolchain.compiler_available():
    pytest.skip("no C compiler")
  return toolchain._get_toolchain().argv[0]


@pytest.fixture
def fresh(monkeypatch, tmp_path):
  """A fresh toolchain, memory cache, warning set and disk cache."""
  monkeypatch.setattr(toolchain, "_toolchain", None)
  monkeypatch.setattr(toolchain, "_libraries", weakref.WeakValueDictionary())
  monkeypatch.setattr(toolchain, "_hung", set(), raising=False)
  monkeypatch.setattr(executable, "_warned", set())
  with config.override("purejax_cache_dir", str(tmp_path / "kernels")):
    yield


def _hanging_compiler(tmp_path, real, pids, hang):
  """A compiler wrapper that appends its pid to ``pids`` and then sleeps
  (in a child process, so that only killing its process group ends both)
  when called with --version (hang="version") or to compile a jit kernel
  (hang="kernel"); otherwise it runs the real compiler."""
  trigger = {"version": "--version", "kernel": "-ffp-contract=off"}[hang]
  sleep = shutil.which("sleep")
  script = tmp_path / f"hangcc-{hang}"
  script.write_text(f'#!/bin/sh\nfor a in "$@"; do if [ "$a" = "{trigger}" ]; then '
                    f'echo $$ >> "{pids}"; "{sleep}" 1000; exit 0; fi; done\n'
                    f'exec "{real}" "$@"\n')
  script.chmod(0o700)
  return script


def _group_alive(pgid):
  """Whether a live (not zombie) process of process group ``pgid`` exists."""
  for entry in os.listdir("/proc"):
    if not entry.isdigit():
      continue
    try:
      with open(f"/proc/{entry}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
      continue
    if fields[0] != "Z" and int(fields[2]) == pgid:
      return True
  return False


def _gone(pids_file, wait=10.0):
  pgids = [int(line) for line in pids_file.read_text().split()]
  assert pgids, "the fake compiler never ran"
  deadline = time.time() + wait
  while any(map(_group_alive, pgids)) and time.time() < deadline:
    time.sleep(0.05)
  return not any(map(_group_alive, pgids))


def _kernel_fn(c):
  return lambda x: jnp.sin(x) * c + 1.0


@pytest.mark.parametrize("hang", ["kernel", "version"])
def test_hanging_compiler_times_out_to_numpy(real_cc, fresh, tmp_path, monkeypatch, hang):
  pids = tmp_path / "pids"
  monkeypatch.setenv("CC", str(_hanging_compiler(tmp_path, real_cc, pids, hang)))
  if hang == "version":   # no other compiler to fall back on
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
  x = np.linspace(-2, 2, 64, dtype=np.float32)
  with config.override("purejax_compile_timeout", 2), \
       config.override("purejax_compile_sync", True):
    start = time.monotonic()
    with pytest.warns(RuntimeWarning, match="timed out") as record:
      y = purejax.jit(_kernel_fn(3.0))(x)
    elapsed = time.monotonic() - start
    # The whole first call (probe and compile) waits at most the limit.
    assert elapsed < 2 + 3, elapsed
    assert any("NumPy" in str(w.message) for w in record)
    np.testing.assert_allclose(np.asarray(y), np.sin(x.astype(np.float64)) * 3 + 1,
                               rtol=1e-6, atol=1e-6)
    assert _gone(pids)
    if hang == "version":
      # The hung compiler is not tried again: the next jit gives up at once.
      start = time.monotonic()
      with pytest.warns(RuntimeWarning):
        purejax.jit(_kernel_fn(4.0))(x)
      assert time.monotonic() - start < 1.5


def test_compile_timeout_flag():
  assert config.purejax_compile_timeout == 60
  env = dict(os.environ, PUREJAX_COMPILE_TIMEOUT="2.5",
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  out = subprocess.run([sys.executable, "-c", "from purejax._src.config import config; "
                        "print(config.purejax_compile_timeout)"],
                       env=env, capture_output=True, text=True, timeout=60)
  assert out.stdout.strip() == "2.5", out.stderr
  with pytest.raises(ValueError):
    config.update("purejax_compile_timeout", 0)


_EXIT_WHILE_COMPILING = r"""
import os, sys, time
import purejax, purejax.numpy as jnp
f = purejax.jit(lambda x: (x * 3.0 + 1.0).sum())   # exact: tiered, built in the background
x = jnp.ones(1000)
f(x).block_until_ready(); f(x).block_until_ready()   # the second call starts the build
deadline = time.time() + 60
while not (os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1])) and time.time() < deadline:
  time.sleep(0.05)
print("compiling" if os.path.exists(sys.argv[1]) else "never started")
"""


def test_exit_kills_a_hanging_compiler(real_cc, tmp_path):
  pids = tmp_path / "pids"
  cc = _hanging_compiler(tmp_path, real_cc, pids, "kernel")
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(tmp_path / "kernels"), CC=str(cc),
             PUREJAX_COMPILE_TIMEOUT="600",   # exit, not the limit, ends it
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  start = time.monotonic()
  out = subprocess.run([sys.executable, "-c", _EXIT_WHILE_COMPILING, str(pids)], env=env,
                       capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "compiling"
  assert time.monotonic() - start < 60
  assert _gone(pids)


# -- unloading libraries ----------------------------------------------------------

def _map_count():
  with open("/proc/self/maps") as f:
    return sum(1 for _ in f)


def test_unused_libraries_are_unloaded(real_cc, fresh):
  warm = toolchain.compile_library("int warm(void) { return 7; }\n")   # libgomp & co.
  assert warm.warm() == 7
  del warm
  gc.collect()
  before = _map_count()
  n = 120
  for i in range(n):
    lib = toolchain.compile_library(f"int value_{i}(void) {{ return {i}; }}\n")
    assert getattr(lib, f"value_{i}")() == i
    del lib
  gc.collect()
  # Loaded, each library would keep about 5 maps.
  assert _map_count() - before < 20, (before, _map_count())
  kept = toolchain.compile_library("int kept(void) { return 11; }\n")
  again = toolchain.compile_library("int kept(void) { return 11; }\n")
  assert again is kept   # one library object while it is in use
  gc.collect()
  assert kept.kept() == 11


def test_clear_caches_unloads_and_live_executables_keep_working(real_cc, fresh):
  x = np.linspace(-1, 1, 32, dtype=np.float32)
  want = lambda c: np.sin(x.astype(np.float64)) * c + 1
  with config.override("purejax_compile_sync", True):
    live = purejax.jit(_kernel_fn(-1.0)).lower(x).compile()
    np.testing.assert_allclose(np.asarray(live(x)), want(-1.0), rtol=1e-6, atol=1e-6)
    gc.collect()
    before = _map_count()
    fns = [purejax.jit(_kernel_fn(float(c))) for c in range(30)]
    for c, f in enumerate(fns):
      np.testing.assert_allclose(np.asarray(f(x)), want(c), rtol=1e-6, atol=1e-6)
    loaded = _map_count()
    assert loaded - before > 30   # the kernels are loaded
    purejax.clear_caches()
    assert _map_count() - before < 20, (before, loaded, _map_count())
    # The executable still referenced keeps its library, and works.
    np.testing.assert_allclose(np.asarray(live(x)), want(-1.0), rtol=1e-6, atol=1e-6)
    # Jitted functions compile (load) again after clear_caches.
    np.testing.assert_allclose(np.asarray(fns[3](x)), want(3), rtol=1e-6, atol=1e-6)


_UNLOAD_ALL = r"""
import purejax, purejax.numpy as jnp
from purejax._src.config import config
config.update("purejax_compile_sync", True)
f = purejax.jit(lambda x: jnp.sin(x) * 5.0 + 1.0)
f(jnp.ones(1 << 20)).block_until_ready()   # big enough for a parallel loop
del f
purejax.clear_caches()
print(any("libgomp" in line for line in open("/proc/self/maps")))
"""


def test_openmp_runtime_stays_loaded(real_cc, tmp_path):
  """Unloading every kernel keeps libgomp (its idle threads run its code)."""
  if "-lgomp" not in toolchain._get_toolchain().ldflags:
    pytest.skip("kernels do not link libgomp")
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(tmp_path / "kernels"),
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  for _ in range(2):   # the second run loads the probe record: no probe libraries
    out = subprocess.run([sys.executable, "-c", _UNLOAD_ALL], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "True"


def test_compile_library_times_out(real_cc, fresh, tmp_path, monkeypatch):
  pids = tmp_path / "pids"
  monkeypatch.setenv("CC", str(_hanging_compiler(tmp_path, real_cc, pids, "kernel")))
  with config.override("purejax_compile_timeout", 1.5):
    start = time.monotonic()
    with pytest.raises(toolchain.CompileError, match=r"timed out after 1\.5 s"):
      toolchain.compile_library("int f(void) { return 1; }\n",
                                extra_flags=("-ffp-contract=off",))
    assert time.monotonic() - start < 1.5 + 3
  assert _gone(pids)
  assert not [p for p in (tmp_path / "kernels").iterdir() if p.name.endswith(".tmp")]
