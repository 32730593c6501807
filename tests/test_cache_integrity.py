"""The kernel cache survives damage and attack: a damaged, truncated, planted
or renamed library is never loaded (it is rebuilt with a warning), a planted
compiler record never runs its program, eviction deletes only purejax's
files, a cache path another user controls is refused, and a full disk is
named as such while kernels still compile.

Scenarios that would crash the process (SIGBUS, SIGSEGV inside the dynamic
loader) run in a child process, so that a crash fails the test."""
import errno
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import purejax
from purejax._src.backends.cpu import cache
from purejax._src.backends.cpu import cache_integrity
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

ROOT = pathlib.Path(purejax.__file__).parent.parent
ENTRY = re.compile(r"^[0-9a-f]{64}\.so$")
RNG = np.random.RandomState(0)


@pytest.fixture
def fresh_toolchain(monkeypatch):
  """Forgets the probed compiler for one test; returns the one found before."""
  tc = toolchain._toolchain
  monkeypatch.setattr(toolchain, "_toolchain", None)
  monkeypatch.setattr(toolchain, "_libraries", {})
  return tc.argv[0] if tc is not None else None


def _entries(d):
  return sorted(p for p in d.iterdir() if ENTRY.match(p.name))


def _src(tag, value):
  """A kernel source never loaded before in this process (the dynamic loader
  would serve an already loaded path from memory)."""
  return f"int value(void) {{ return {value}; }}\n// {tag} {time.time_ns()}\n"


def _path_of(kernels, src):
  return cache.entry_path(kernels, toolchain._cache_key(src, toolchain._get_toolchain(), ()))


# -- a jitted program in a child process, over a damaged cache --------------------------

_JIT_CHILD = r"""
import sys, warnings
warnings.simplefilter("always")
import numpy as np
import purejax, purejax.numpy as jnp
f = purejax.jit(lambda x: jnp.sin(x) * 2.0 + jnp.cumsum(x) + x.sum())
x = np.linspace(-1, 1, 1000).astype(np.float32)
y = np.asarray(f(x))
x64 = x.astype(np.float64)
expected = np.sin(x64) * 2.0 + np.cumsum(x64) + x64.sum()
np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-3)
print("computed right")
"""


def _run_child(kernels, code=_JIT_CHILD, **env):
  env = dict(os.environ, PUREJAX_CACHE_DIR=str(kernels), PUREJAX_COMPILE_SYNC="1",
             PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path), **env)
  return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                        text=True, timeout=300)


def _planted_library(tmp_path, marker):
  """A shared library whose constructor writes ``marker`` (and which has none
  of purejax's symbols)."""
  src = tmp_path / "planted.c"
  src.write_text('#include <stdio.h>\n__attribute__((constructor)) static void planted(void) '
                 f'{{ FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n')
  out = tmp_path / "planted.so"
  subprocess.run([toolchain._get_toolchain().argv[0], "-shared", "-fPIC", str(src), "-o",
                  str(out)], check=True, capture_output=True)
  return out.read_bytes()


@pytest.mark.parametrize("damage", ["random-bytes", "truncated", "planted", "empty"])
def test_damaged_entries_are_rebuilt_not_loaded(kernels, tmp_path, damage):
  first = _run_child(kernels)
  assert first.returncode == 0 and "computed right" in first.stdout, first.stderr
  entries = _entries(kernels)
  assert entries, "the child compiled nothing into the cache"
  marker = tmp_path / "constructor-ran"
  planted = _planted_library(tmp_path, marker) if damage == "planted" else None
  damaged = {}
  for p in entries:
    data = bytearray(p.read_bytes())
    if damage == "random-bytes":   # everything after the ELF identification
      data[16:] = RNG.randint(0, 256, len(data) - 16).astype(np.uint8).tobytes()
    elif damage == "truncated":
      data = data[:len(data) // 2]
    elif damage == "planted":
      data = bytearray(planted)
    else:
      data = bytearray()
    p.write_bytes(bytes(data))
    damaged[p] = bytes(data)
  second = _run_child(kernels)
  assert second.returncode == 0, f"exit status {second.returncode}: {second.stderr[-3000:]}"
  assert "computed right" in second.stdout
  assert re.search(r"the cached kernel .* is not used", second.stderr), second.stderr
  assert not marker.exists()   # the planted library's constructor never ran
  for p, data in damaged.items():   # rebuilt: sealed again
    rebuilt = p.read_bytes()
    assert rebuilt != data
    cache_integrity.verify(rebuilt, p.name, cache_integrity.secret_key(kernels))
  third = _run_child(kernels)   # the rebuilt entries load quietly
  assert third.returncode == 0 and "not used" not in third.stderr, third.stderr


def test_an_entry_renamed_to_another_key_is_not_loaded(kernels):
  a, b = _src("a", 1), _src("b", 2)
  assert toolchain.compile_library(a).value() == 1
  shutil.copyfile(_path_of(kernels, a), _path_of(kernels, b))   # valid, sealed, wrong name
  with pytest.warns(RuntimeWarning, match="do not match their seal"):
    assert toolchain.compile_library(b).value() == 2


def test_a_sealed_entry_loads_without_a_compile(kernels, monkeypatch):
  src = _src("hit", 5)
  toolchain.compile_library(src)
  toolchain.clear_memory_cache()
  monkeypatch.setattr(toolchain, "_run", lambda *a, **k: pytest.fail("compiled again"))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert toolchain.compile_library(src).value() == 5


def test_a_symlinked_entry_is_not_followed(kernels, tmp_path):
  a, b = _src("target", 3), _src("link", 4)
  toolchain.compile_library(a)
  elsewhere = tmp_path / "elsewhere.so"
  shutil.copyfile(_path_of(kernels, a), elsewhere)
  _path_of(kernels, b).symlink_to(elsewhere)
  assert toolchain.compile_library(b).value() == 4
  assert not _path_of(kernels, b).is_symlink() and elsewhere.exists()


def test_the_key_file_is_private(kernels):
  toolchain.compile_library(_src("key", 6))
  st = (kernels / cache_integrity.KEY_NAME).stat()
  assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 32


# -- a planted compiler record ----------------------------------------------------------

def _marker_compiler(tmp_path, real, marker):
  script = tmp_path / "evilcc"
  script.write_text(f'#!/bin/sh\necho ran > "{marker}"\nexec "{real}" "$@"\n')
  script.chmod(0o700)
  return script


@pytest.mark.parametrize("how", ["unsigned", "signed-for-another-compiler", "bad-flag"])
def test_a_planted_toolchain_record_is_not_used(kernels, fresh_toolchain, monkeypatch,
                                                 tmp_path, how):
  monkeypatch.delenv("CC", raising=False)
  marker = tmp_path / "marker"
  evil = _marker_compiler(tmp_path, fresh_toolchain, marker)
  directory = cache.cache_dir()
  for _, argv, _ in toolchain._candidates():
    if argv is None:
      continue
    record = toolchain._probe_record_path(argv)
    fields = dict(argv=[str(evil)], version="evil 1.0", cflags=["-fPIC", "-shared"],
                  ldflags=[], openmp=False, mvec=False)
    if how == "bad-flag":   # the right compiler, a flag the probe never picks
      fields.update(argv=argv, cflags=["-fPIC", "-shared", f"-wrapper={evil}"])
    text = json.dumps(fields)
    if how == "unsigned":
      record.write_text(text)
      record.chmod(0o600)
    else:
      cache.write_signed_text(record, text)
  assert toolchain.compile_library(_src("record", 8)).value() == 8
  assert not marker.exists()
  tc = toolchain._get_toolchain()
  assert tc.argv[0] != str(evil) and not any("wrapper" in f for f in tc.cflags)
  assert directory == cache.cache_dir()


# -- eviction -----------------------------------------------------------------------------

def test_eviction_deletes_only_what_purejax_wrote(kernels):
  toolchain.compile_library(_src("evict", 0))
  old = time.time() - 10 * 86400
  foreign = {kernels / "libmyproject.so": b"\x7fELF" + b"x" * 100000,
             kernels / "notes.tmp": b"notes",
             kernels / ("ab" * 32 + ".so"): b"\x7fELF" + b"y" * 100000}   # named like ours
  for p, data in foreign.items():
    p.write_bytes(data)
    os.utime(p, (old, old))
  with config.override("purejax_cache_max_bytes", 1):
    toolchain.compile_library(_src("evict", 1))
    toolchain.compile_library(_src("evict", 2))
  for p, data in foreign.items():
    assert p.read_bytes() == data
  ours = [p for p in _entries(kernels) if p not in foreign]
  assert len(ours) == 1   # the one just written is kept, the others evicted


# -- the cache path -----------------------------------------------------------------------

def _refused(path, reason):
  with config.override("purejax_cache_dir", str(path)):
    with pytest.warns(RuntimeWarning, match=f"not using the kernel cache directory.*{reason}"):
      d = toolchain.cache_dir()
    assert toolchain.compile_library(_src("refused", 9)).value() == 9
  assert d != path and not str(d).startswith(str(path))
  return d


def test_a_symlink_through_a_world_writable_directory_is_refused(kernels, tmp_path):
  target = tmp_path / "private"
  target.mkdir(mode=0o700)
  shared = tmp_path / "shared"
  shared.mkdir()
  shared.chmod(0o777)   # no sticky bit: anyone may replace the link
  (shared / "link").symlink_to(target)
  _refused(shared / "link" / "kernels", "writable by other users")
  assert list(target.iterdir()) == []   # nothing created (or deleted) through the link


def test_a_cache_dir_in_a_world_writable_directory_is_refused(kernels, tmp_path):
  shared = tmp_path / "shared"
  shared.mkdir()
  shared.chmod(0o777)
  (shared / "kernels").mkdir(mode=0o700)   # ours, but its parent is anyone's
  _refused(shared / "kernels", "writable by other users")


def test_a_link_to_a_world_writable_directory_is_refused(kernels, tmp_path):
  shared = tmp_path / "shared"
  shared.mkdir()
  shared.chmod(0o777)
  mine = tmp_path / "mine"
  mine.mkdir(mode=0o700)
  (mine / "link").symlink_to(shared)
  _refused(mine / "link" / "kernels", f"{shared}.*writable by other users")


@pytest.mark.skipif(not hasattr(os, "lchown") or os.geteuid() != 0,
                    reason="making a link owned by another user needs root")
def test_a_symlink_owned_by_another_user_is_refused(kernels, tmp_path):
  target = tmp_path / "target"
  target.mkdir(mode=0o700)
  link = tmp_path / "link"
  link.symlink_to(target)
  os.lchown(link, 54321, 54321)
  _refused(link / "kernels", "symbolic link .* owned by user id 54321")


def test_safe_links_and_sticky_directories_are_accepted(kernels, tmp_path):
  sticky = tmp_path / "sticky"
  sticky.mkdir()
  sticky.chmod(0o1777)   # like /tmp: others cannot replace what we put there
  target = sticky / "mine"
  target.mkdir(mode=0o700)
  (tmp_path / "link").symlink_to(target)
  with config.override("purejax_cache_dir", str(tmp_path / "link" / "kernels")):
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      assert toolchain.cache_dir() == tmp_path / "link" / "kernels"
      assert toolchain.compile_library(_src("linked", 10)).value() == 10
  assert len(_entries(target / "kernels")) == 1


# -- a full disk ----------------------------------------------------------------------------

def _full_disk_compiler(tmp_path, real, everywhere):
  """A compiler that fails as ld does on a full disk when it writes into the
  cache (an output named *.tmp), or for every kernel when ``everywhere``."""
  pattern = '*purejax-probe-*) ;; *.tmp|*.so' if everywhere else "*.tmp"
  script = tmp_path / "fullcc"
  script.write_text(
      '#!/bin/sh\nfor a in "$@"; do case "$a" in ' + pattern + ') '
      'echo "/usr/bin/ld: final link failed: No space left on device" >&2; exit 1;; '
      f'esac; done\nexec "{real}" "$@"\n')
  script.chmod(0o700)
  return script


def test_a_full_cache_disk_is_named_and_kernels_still_compile(kernels, fresh_toolchain,
                                                               monkeypatch, tmp_path):
  monkeypatch.setenv("CC", str(_full_disk_compiler(tmp_path, fresh_toolchain, False)))
  with pytest.warns(RuntimeWarning, match="cannot write to the kernel cache directory.*"
                                          "No space left on device"):
    assert toolchain.compile_library(_src("full", 11)).value() == 11
  assert _entries(kernels) == []
  assert not [p for p in kernels.iterdir() if p.name.endswith(".tmp")]


def test_no_room_to_seal_falls_back_too(kernels, monkeypatch):
  def full(tmp, path):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp))

  monkeypatch.setattr(cache, "seal", full)
  monkeypatch.setattr(toolchain, "_disk_full_warned", set())
  with pytest.warns(RuntimeWarning, match="No space left on device"):
    assert toolchain.compile_library(_src("seal", 12)).value() == 12
  assert _entries(kernels) == []


def test_a_full_disk_everywhere_says_so(kernels, fresh_toolchain, monkeypatch, tmp_path):
  monkeypatch.setenv("CC", str(_full_disk_compiler(tmp_path, fresh_toolchain, True)))
  with pytest.warns(RuntimeWarning, match="No space left on device"):
    with pytest.raises(toolchain.CompileError, match="^no space left on the device") as e:
      toolchain.compile_library(_src("everywhere", 13))
  assert isinstance(e.value, toolchain.DiskFull)
  assert "rejected the source" not in str(e.value)
  # A jitted function runs on NumPy, with a warning naming the cause.
  f = purejax.jit(lambda x: x * 3.0 + 1.0)
  with config.override("purejax_compile_sync", True):
    with pytest.warns(RuntimeWarning, match="NumPy backend.*no space left on the device"):
      y = f(np.arange(4, dtype=np.float32) + 0.5)
  np.testing.assert_array_equal(np.asarray(y), np.arange(4, dtype=np.float32) * 3.0 + 2.5)
