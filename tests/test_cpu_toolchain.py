"""The C backend's toolchain: compiler discovery and probing, compiling to a
shared library, the in-memory and on-disk kernel caches."""
import ctypes
import json
import os
import pathlib
import stat
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import purejax
from purejax._src.backends.cpu import cache
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

ADD_SRC = "int add(int a, int b) { return a + b; }\n"
ROOT = pathlib.Path(purejax.__file__).parent.parent


@pytest.fixture
def calls(monkeypatch):
  """Counts the programs the toolchain runs (the compiler's invocations)."""
  seen = []
  real = toolchain._run

  def counting(argv, **kw):
    seen.append(list(argv))
    return real(argv, **kw)

  monkeypatch.setattr(toolchain, "_run", counting)
  return seen


@pytest.fixture
def fresh_toolchain(monkeypatch):
  """Forgets the probed compiler for one test (restored afterwards); returns
  the path of the compiler found before."""
  tc = toolchain._toolchain
  monkeypatch.setattr(toolchain, "_toolchain", None)
  monkeypatch.setattr(toolchain, "_libraries", {})
  return tc.argv[0] if tc is not None else None


def _so_files(d):
  return sorted(p.name for p in d.iterdir() if p.suffix == ".so")


def _fake_compiler(tmp_path, real, rejected):
  """A compiler wrapper (a shell script we write, not a user string) that
  rejects the given flags and otherwise runs the real compiler."""
  checks = "".join(f'  [ "$a" = "{f}" ] && {{ echo "unrecognized option {f}" >&2; exit 1; }}\n'
                   for f in rejected)
  script = tmp_path / "fakecc"
  script.write_text(f'#!/bin/sh\nfor a in "$@"; do\n{checks}done\nexec "{real}" "$@"\n')
  script.chmod(0o700)
  return script


# -- compiling and loading ------------------------------------------------------

def test_add_compiles_loads_and_runs(kernels):
  lib = toolchain.compile_library(ADD_SRC)
  assert lib.add(2, 3) == 5
  assert lib.add(-7, 3) == -4
  (so,) = _so_files(kernels)
  assert stat.S_IMODE((kernels / so).stat().st_mode) == 0o700   # whatever the umask
  assert not [p for p in kernels.iterdir() if p.name.endswith(".tmp")]


def test_probe_flags_and_description(kernels):
  flags = toolchain.flags()
  assert "-fPIC" in flags and "-shared" in flags
  assert "-ffast-math" not in flags and "-ffinite-math-only" not in flags
  desc = toolchain.toolchain_description()
  assert toolchain._get_toolchain().argv[0] in desc
  assert "-shared" in desc
  assert isinstance(toolchain.openmp_enabled(), bool)
  assert isinstance(toolchain.mvec_enabled(), bool)
  if toolchain.mvec_enabled():
    assert toolchain.openmp_enabled() and "-lmvec" in flags


def test_openmp_and_mvec_kernel_runs(kernels):
  if not toolchain.mvec_enabled():
    pytest.skip("no OpenMP/libmvec")
  src = textwrap.dedent("""
    #pragma omp declare simd notinbranch
    extern float expf(float);
    void vexp(const float *x, float *y, int n) {
      #pragma omp parallel for simd num_threads(1)
      for (int i = 0; i < n; i++) y[i] = expf(x[i]);
    }
  """)
  lib = toolchain.compile_library(src)
  x = np.linspace(-5, 5, 37, dtype=np.float32)
  y = np.empty_like(x)
  lib.vexp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
  lib.vexp(x.ctypes.data, y.ctypes.data, x.size)
  np.testing.assert_allclose(y, np.exp(x), rtol=4e-7)


def test_cc_environment_variable_is_used(kernels, fresh_toolchain, monkeypatch):
  monkeypatch.setenv("CC", f"{fresh_toolchain} -DPUREJAX_FROM_CC=7")
  lib = toolchain.compile_library("int f(void) { return PUREJAX_FROM_CC; }")
  assert lib.f() == 7
  assert "-DPUREJAX_FROM_CC=7" in toolchain.toolchain_description()


def test_rejected_flags_are_dropped(kernels, fresh_toolchain, monkeypatch, tmp_path):
  fake = _fake_compiler(tmp_path, fresh_toolchain, ["-march=native", "-fopenmp"])
  monkeypatch.setenv("CC", str(fake))
  flags = toolchain.flags()
  assert "-march=native" not in flags and "-fopenmp" not in flags
  assert "-O3" in flags and "-shared" in flags
  assert not toolchain.openmp_enabled() and not toolchain.mvec_enabled()
  assert toolchain.compile_library(ADD_SRC).add(1, 2) == 3
  # The probe is remembered in the cache directory.
  (record,) = kernels.glob("toolchain-*.json")
  text = cache.read_signed_text(record)   # authenticated by the cache's key
  assert json.loads(text)["argv"] == [str(fake)]
  assert json.loads(text)["cflags"] == list(toolchain._get_toolchain().cflags)


def test_compile_error_has_compiler_diagnostics(kernels):
  with pytest.raises(toolchain.CompileError, match="rejected the source") as e:
    toolchain.compile_library("int broken(int a) { return a + ; }\n")
  assert "error" in str(e.value) and "broken" in str(e.value)
  assert not [p for p in kernels.iterdir() if p.suffix in (".so", ".tmp")]
  assert len(toolchain._trim("x" * 10000)) < 4100


def test_compiler_unavailable(fresh_toolchain, monkeypatch, tmp_path):
  monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
  monkeypatch.setenv("PATH", str(tmp_path))
  assert not toolchain.compiler_available()
  with pytest.raises(toolchain.CompilerUnavailable, match=r"\$CC=.*no-such-cc.*not found"):
    toolchain.compile_library(ADD_SRC)
  assert issubclass(toolchain.CompilerUnavailable, RuntimeError)


def test_extra_flags(kernels, calls):
  src = "int g(void) { return VALUE; }\n"
  lib1 = toolchain.compile_library(src, extra_flags=("-DVALUE=1", "-lm"))
  lib2 = toolchain.compile_library(src, extra_flags=["-DVALUE=2"])
  assert (lib1.g(), lib2.g()) == (1, 2)
  # No shell ever sees a flag: "$(...)" stays literal text.
  evil = f"$(touch {kernels}/pwned)"
  lib3 = toolchain.compile_library('const char *s(void) { return STR; }',
                                   extra_flags=(f'-DSTR="{evil}"',))
  lib3.s.restype = ctypes.c_char_p
  assert lib3.s().decode() == evil
  assert not (kernels / "pwned").exists()
  with pytest.raises(ValueError, match="invalid compiler flag"):
    toolchain.compile_library(src, extra_flags=("VALUE=1",))
  with pytest.raises(TypeError):
    toolchain.compile_library(src, extra_flags="-DVALUE=1")


# -- the memory and disk caches ---------------------------------------------------

def test_memory_cache_returns_the_same_library(kernels, calls):
  lib = toolchain.compile_library(ADD_SRC)
  n = len(calls)
  for p in kernels.iterdir():   # the disk is not consulted
    p.unlink()
  assert toolchain.compile_library(ADD_SRC) is lib
  assert len(calls) == n
  assert toolchain.compile_library(ADD_SRC + "\n") is not lib


def test_disk_cache_hit_skips_the_compiler(kernels, calls):
  toolchain.compile_library(ADD_SRC)
  (so,) = _so_files(kernels)
  path = kernels / so
  old = time.time() - 1000
  os.utime(path, (old, old))
  toolchain.clear_memory_cache()
  calls.clear()
  lib = toolchain.compile_library(ADD_SRC)
  assert calls == []
  assert lib.add(20, 22) == 42
  assert path.stat().st_mtime > old + 500   # a hit refreshes the LRU order


def test_cache_key_covers_source_toolchain_and_flags(kernels):
  tc = toolchain._get_toolchain()
  k = toolchain._cache_key(ADD_SRC, tc, ())
  assert len(k) == 64
  assert k != toolchain._cache_key(ADD_SRC + " ", tc, ())
  assert k != toolchain._cache_key(ADD_SRC, tc, ("-DX",))
  tc2 = toolchain.Toolchain.from_json(tc.to_json())
  assert toolchain._cache_key(ADD_SRC, tc2, ()) == k
  tc2.description += " other"
  assert toolchain._cache_key(ADD_SRC, tc2, ()) != k


@pytest.mark.parametrize("umask", [0o022, 0o277])
def test_cache_dir_is_created_private(tmp_path, umask):
  d = tmp_path / "a" / "b" / "kernels"
  old = os.umask(umask)
  try:
    with config.override("purejax_cache_dir", str(d)):
      assert toolchain.cache_dir() == d
  finally:
    os.umask(old)
  for p in (d, d.parent, d.parent.parent):
    assert stat.S_IMODE(p.stat().st_mode) == 0o700


def test_default_cache_dir_follows_xdg(monkeypatch, tmp_path):
  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
  with config.override("purejax_cache_dir", None):
    assert cache.default_dir() == tmp_path / "xdg" / "purejax" / "kernels"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")   # ignored, as XDG says
    assert cache.default_dir() == pathlib.Path.home() / ".cache" / "purejax" / "kernels"


@pytest.mark.parametrize("problem", ["world-writable", "group-writable", "other-owner"])
def test_unsafe_cache_dir_is_refused(kernels, tmp_path, monkeypatch, problem):
  unsafe = tmp_path / problem
  unsafe.mkdir()
  unsafe.chmod({"world-writable": 0o777, "group-writable": 0o770}.get(problem, 0o700))
  reason = "owned by user id" if problem == "other-owner" else "writable by other users"
  with config.override("purejax_cache_dir", str(unsafe)):
    with monkeypatch.context() as m:
      if problem == "other-owner":
        uid = os.getuid()
        m.setattr(os, "getuid", lambda: uid + 1)
      with pytest.warns(RuntimeWarning, match=f"not using the kernel cache directory.*{reason}"):
        d = toolchain.cache_dir()
    assert d != unsafe
    st = d.stat()
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
    assert toolchain.cache_dir() == d   # warned once, the same fallback after
    assert toolchain.compile_library(ADD_SRC + "// unsafe\n").add(1, 1) == 2
    assert len(_so_files(d)) == 1
  assert list(unsafe.iterdir()) == []


def test_file_writable_by_others_is_not_loaded(kernels, calls):
  toolchain.compile_library(ADD_SRC)
  (so,) = _so_files(kernels)
  (kernels / so).chmod(0o777)
  toolchain.clear_memory_cache()
  calls.clear()
  assert toolchain.compile_library(ADD_SRC).add(1, 2) == 3
  assert len(calls) == 1   # compiled again
  assert stat.S_IMODE((kernels / so).stat().st_mode) == 0o700


@pytest.mark.parametrize("content", [b"", b"garbage, not a shared library", b"\x7fELF\x02\x01"])
def test_corrupt_cache_file_is_replaced(kernels, calls, content):
  # Written before this process ever loads that path (a loaded path would be
  # served from the dynamic loader's own list).
  src = ADD_SRC + f"// corrupt {len(content)}\n"
  key = toolchain._cache_key(src, toolchain._get_toolchain(), ())
  kernels.mkdir(mode=0o700)
  path = cache.entry_path(kernels, key)
  path.write_bytes(content)
  calls.clear()
  assert toolchain.compile_library(src).add(3, 4) == 7
  assert len(calls) == 1
  assert path.read_bytes()[:4] == b"\x7fELF"


def _const_src(i):
  return f"int k(void) {{ return {i}; }}\n"   # all the same size


def test_lru_eviction(kernels):
  paths = []
  for i in range(3):
    toolchain.compile_library(_const_src(i))
    key = toolchain._cache_key(_const_src(i), toolchain._get_toolchain(), ())
    paths.append(cache.entry_path(kernels, key))
  now = time.time()
  for age, p in zip((300, 200, 100), paths):
    os.utime(p, (now - age, now - age))
  toolchain.clear_memory_cache()
  toolchain.compile_library(_const_src(0))   # a hit: 0 becomes the newest
  size = paths[0].stat().st_size
  assert all(p.stat().st_size == size for p in paths)
  # A temporary file of a process on another machine, two hours old (its
  # process cannot be asked), and an old one purejax did not write.
  other_host = '0' * 8 if cache._host_tag() != '0' * 8 else '1' * 8
  stale = kernels / (cache.tmp_prefix(kernels, "0123456789abcdef", other_host, 12345)
                     + "abcd1234.tmp")
  foreign = kernels / "notes.tmp"
  for p in (stale, foreign):
    p.write_bytes(b"x")
    os.utime(p, (now - 7200, now - 7200))
  with config.override("purejax_cache_max_bytes", 3 * size + size // 2):
    toolchain.compile_library(_const_src(3))
  assert [p.exists() for p in paths] == [True, False, True]   # 1 was least recent
  assert len(_so_files(kernels)) == 3
  assert not stale.exists() and foreign.exists()
  with config.override("purejax_cache_max_bytes", 1):
    toolchain.compile_library(_const_src(4))   # never evicts the one just written
  (left,) = _so_files(kernels)
  assert left == toolchain._cache_key(_const_src(4), toolchain._get_toolchain(), ()) + ".so"


_CHILD = r"""
import json, os, sys, time
from purejax._src.backends.cpu import toolchain
ready_dir, me, other = sys.argv[1], sys.argv[2], sys.argv[3]
toolchain.toolchain_description()   # probe (or reuse the recorded probe)
real, log = toolchain._run, []
def run(argv, **kw):
  proc = real(argv, **kw)
  log.append(argv)
  if argv[-1 - len(toolchain._get_toolchain().ldflags)].endswith(".tmp"):
    # Both processes have compiled before either publishes its library.
    open(os.path.join(ready_dir, me), "w").close()
    deadline = time.time() + 30
    while not os.path.exists(os.path.join(ready_dir, other)) and time.time() < deadline:
      time.sleep(0.01)
  return proc
toolchain._run = run
hit = toolchain.compile_library(sys.argv[4]).add(1, 2)
n_hit = len(log)
new = toolchain.compile_library(sys.argv[5]).add(2, 3)
print(json.dumps([hit, n_hit, new, len(log)]))
"""


def test_two_processes_share_the_cache_and_compile_concurrently(kernels, tmp_path):
  toolchain.compile_library(ADD_SRC)   # on disk before the children start
  src = ADD_SRC + "// compiled by both children at once\n"
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(kernels),
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  (tmp_path / "ready").mkdir()
  procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path / "ready"), me, other,
                             ADD_SRC, src], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
           for me, other in (("a", "b"), ("b", "a"))]
  for p in procs:
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    hit, n_hit, new, n = json.loads(out)
    assert (hit, n_hit, new, n) == (3, 0, 5, 1)   # a disk hit, then one compile each
  assert len(_so_files(kernels)) == 2
  assert not [p for p in kernels.iterdir() if p.name.endswith(".tmp")]
  toolchain.clear_memory_cache()
  assert toolchain.compile_library(src).add(4, 5) == 9


@pytest.mark.skipif(os.name != "posix" or os.getuid() == 0, reason="root writes anywhere")
def test_read_only_cache_dir_falls_back(tmp_path):
  ro = tmp_path / "ro"
  ro.mkdir(mode=0o500)
  with config.override("purejax_cache_dir", str(ro)):
    with pytest.warns(RuntimeWarning, match="not writable"):
      assert toolchain.cache_dir() != ro


def test_threads_compile_a_kernel_once(kernels, calls):
  src = ADD_SRC + "// threads\n"
  libs, barrier = [], threading.Barrier(4)

  def work():
    barrier.wait()
    libs.append(toolchain.compile_library(src))

  threads = [threading.Thread(target=work) for _ in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert len(libs) == 4 and all(lib is libs[0] for lib in libs)
  assert len(calls) == 1


# -- no partial files left behind ------------------------------------------------

def _slow_compiler(tmp_path, real, pids):
  """A compiler wrapper that records its pid and, when compiling a kernel
  into the cache (an output named *.tmp), first sleeps for a minute."""
  script = tmp_path / "slowcc"
  script.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in *.tmp) '
                    f'echo $$ >> "{pids}"; sleep 60;; esac; done\nexec "{real}" "$@"\n')
  script.chmod(0o700)
  return script


def _running(pid):
  try:
    with open(f"/proc/{pid}/stat") as f:
      return f.read().rsplit(")", 1)[1].split()[0] != "Z"
  except FileNotFoundError:
    return False


_EXIT_DURING_BUILD = r"""
import os, sys, time
import purejax, purejax.numpy as jnp
# Exact arithmetic only: such a function runs its first calls on the NumPy
# tier while its C code compiles in the background.
f = purejax.jit(lambda x: (x * 3.0 + 1.0).sum())
x = jnp.ones(1000)
f(x).block_until_ready(); f(x).block_until_ready()   # the second call starts the C build
deadline = time.time() + 60
def started():   # the compiler has written its pid: it is compiling into a temporary file
  return os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1]) > 0
while not started() and time.time() < deadline:
  time.sleep(0.05)
print(sorted(n for n in os.listdir(sys.argv[2]) if n.endswith(".tmp")))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_exit_during_a_background_compile_leaves_nothing_behind(kernels, tmp_path):
  """The process exits while its background compile runs: the compiler is
  killed and its temporary file removed."""
  pids = tmp_path / "compiler-pids"
  cc = _slow_compiler(tmp_path, toolchain._get_toolchain().argv[0], pids)
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(kernels), CC=str(cc),
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  out = subprocess.run([sys.executable, "-c", _EXIT_DURING_BUILD, str(pids), str(kernels)],
                       env=env, capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() not in ("", "[]")   # the child saw its temporary file
  assert "compil" not in out.stderr, out.stderr    # no warning from the killed build
  assert not [p.name for p in kernels.iterdir() if p.name.endswith(".tmp")]
  compilers = [int(line) for line in pids.read_text().split()]
  assert compilers
  deadline = time.time() + 10
  while any(map(_running, compilers)) and time.time() < deadline:
    time.sleep(0.05)
  assert not any(map(_running, compilers))


_EXIT_FUNCS_RUN_EARLY = r"""
import atexit, sys
import numpy as np
import purejax, purejax.numpy as jnp
from purejax._src.config import config
config.update("purejax_compile_sync", True)
print(float(purejax.jit(lambda x: (x * 2.0).sum())(jnp.ones(8))))
atexit._run_exitfuncs()   # as chex's tests do, in the middle of a process
print(float(purejax.jit(lambda x: (x * 3.0).sum())(jnp.ones(8))))
"""


def test_atexit_run_early_stops_nothing(kernels):
  """A program that runs the atexit handlers itself (chex's tests call
  ``atexit._run_exitfuncs()``) keeps compiling: purejax's clean-up at exit
  (killing compilers, removing unfinished files) runs at the real exit only."""
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(kernels),
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
  out = subprocess.run([sys.executable, "-c", _EXIT_FUNCS_RUN_EARLY], env=env,
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-3000:]
  assert out.stdout.split() == ["16.0", "24.0"]


def test_temporaries_of_dead_processes_are_swept(kernels):
  """A killed process (no atexit) leaves its temporary file: the next process
  to use the cache removes it; live processes' and foreign files stay."""
  kernels.mkdir(exist_ok=True)
  host = cache._host_tag()
  done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                        capture_output=True, text=True)
  alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
  try:
    dead = kernels / (cache.tmp_prefix(kernels, "0123456789abcdef", host, int(done.stdout))
                      + "abcd1234.tmp")
    live = kernels / (cache.tmp_prefix(kernels, "0123456789abcdef", host, alive.pid)
                      + "abcd1234.tmp")
    foreign = kernels / ".0123456789abcdef-notes.tmp"
    # Named like purejax's, but without the tag only this cache's key gives.
    lookalike = kernels / (f".0123456789abcdef-{host}-{int(done.stdout)}-{'0' * 16}-"
                           "abcd1234.tmp")
    for p in (dead, live, foreign, lookalike):
      p.write_bytes(b"partial")
    cache.sweep_unfinished(kernels, force=True)
    assert ((dead.exists(), live.exists(), foreign.exists(), lookalike.exists())
            == (False, True, True, True))
  finally:
    alive.kill()
    alive.wait()
  cache.sweep_unfinished(kernels, force=True)
  assert not live.exists()
