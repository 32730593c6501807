"""The on-disk cache of compiled kernels: a private directory of ``<key>.so``.

Where: ``config.purejax_cache_dir``, else ``$XDG_CACHE_HOME/purejax/kernels``,
else ``~/.cache/purejax/kernels``; missing directories are created with mode
0700.  A shared library runs code when it is loaded, so we never load from (or
write to) a directory that is not private: it must be owned by the current
user and not writable by group or others.  When the chosen directory fails
that check (or cannot be created or written), we do not raise: compiled kernels go to a
fresh private temporary directory for the rest of the process (removed at
exit), with a one-time ``RuntimeWarning`` naming the reason.

The directory must also be out of other users' reach all the way down (no
link or directory on the way that another user controls; see
``cache_integrity.path_problem``).  Only files purejax wrote are loaded or
deleted: each library is sealed with an HMAC under a per-user secret key
(``cache_integrity``), checked before the library is loaded; a damaged or
foreign entry is rebuilt with a ``RuntimeWarning``, never loaded.

Writes are atomic (compile into a temporary file in the directory, seal and
``fsync`` it, then ``os.replace``), so processes sharing the cache never see
half-written files.
Nothing partial stays: a temporary file is named after its machine and
process; the process removes its unfinished ones at exit (after the toolchain
kills a compiler still running), and the first use of the cache in a process
removes those whose process is gone (killed before its exit handlers ran).
The total size of purejax's ``.so`` files is capped (least recently used
first out; loading a file touches its mtime); files purejax did not seal are
never deleted.

With ``config.purejax_disk_cache`` off (PUREJAX_DISK_CACHE=0) the cache is not
used at all: each kernel is built in a fresh private temporary directory
(``private_build_dir``) that is removed as soon as the library is loaded.
"""
import atexit
import contextlib
import ctypes
import functools
import hashlib
import os
import pathlib
import platform
import re
import shutil
import stat
import tempfile
import threading
import time
import warnings

from purejax._src.backends.cpu import cache_integrity as integrity
from purejax._src.config import config

SUFFIX = ".so"
_ENTRY_NAME = re.compile(r"^[0-9a-f]{64}\.so$")   # <sha256 cache key>.so
_TMP_SUFFIX = ".tmp"
_STALE_TMP_SECONDS = 3600   # a temporary file this old belongs to a dead process

_lock = threading.Lock()
_fallbacks = {}   # unusable directory -> the private temporary directory used instead


class UnsafeCacheDir(RuntimeError):
  """The cache directory is not private to the current user."""


def enabled():
  """Whether kernels are kept in (and looked up from) the disk cache."""
  return bool(config.purejax_disk_cache and config.jax_enable_compilation_cache)


@contextlib.contextmanager
def private_build_dir():
  """A fresh directory only we can use (mode 0700), removed afterwards with
  what was built in it (a loaded library stays mapped)."""
  path = pathlib.Path(tempfile.mkdtemp(prefix="purejax-build-"))
  try:
    check_private_dir(path)
    yield path
  finally:
    shutil.rmtree(path, ignore_errors=True)


def default_dir():
  """The configured cache directory, or the per-user default (not created)."""
  configured = config.purejax_cache_dir or config.jax_compilation_cache_dir
  if configured:
    return pathlib.Path(configured).expanduser()
  xdg = os.environ.get("XDG_CACHE_HOME")
  # The XDG spec says to ignore a relative path.
  base = pathlib.Path(xdg) if xdg and os.path.isabs(xdg) else pathlib.Path.home() / ".cache"
  return base / "purejax" / "kernels"


def cache_dir():
  """The private kernel cache directory, created if missing.

  Falls back to a private temporary directory (with a one-time warning) when
  the configured or default directory is not private or cannot be created.
  """
  target = default_dir()
  with _lock:
    fallback = _fallbacks.get(target)
    if fallback is not None:
      return fallback
    try:
      _check_path(target)   # before creating anything through it
      _make_private_dirs(target)
      check_private_dir(target)
      _check_path(target)
      usable = True
    except (OSError, UnsafeCacheDir) as e:
      usable = False
      reason = str(e)
      fallback = pathlib.Path(tempfile.mkdtemp(prefix="purejax-kernels-"))
      at_interpreter_exit(functools.partial(shutil.rmtree, fallback, True))
      _fallbacks[target] = fallback
  if usable:
    sweep_unfinished(target)
    return target
  warnings.warn(f"purejax: not using the kernel cache directory {target}: {reason}. "
                f"Compiled kernels go to the private temporary directory {fallback} "
                "for this process instead.", RuntimeWarning, stacklevel=3)
  return fallback


def _check_path(path):
  problem = integrity.path_problem(path)
  if problem:
    raise UnsafeCacheDir(problem)


def _make_private_dirs(path):
  """Creates ``path`` and its missing parents with mode 0700."""
  missing = []
  p = path
  while not p.exists() and p != p.parent:
    missing.append(p)
    p = p.parent
  for p in reversed(missing):
    try:
      os.mkdir(p, 0o700)
    except FileExistsError:   # another process made it meanwhile
      continue
    os.chmod(p, 0o700)   # whatever the umask


def _owner_problem(st, what, path):
  getuid = getattr(os, "getuid", None)
  if getuid is not None and st.st_uid != getuid():
    return f"{what} {path} is owned by user id {st.st_uid}, not by you ({getuid()})"
  if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
    return (f"{what} {path} is writable by other users "
            f"(mode {stat.S_IMODE(st.st_mode):#o}; it must not be group/other-writable)")
  return None


def check_private_dir(path):
  """Raises ``UnsafeCacheDir`` unless ``path`` is a directory that we, and
  only we, can write."""
  st = os.stat(path)
  if not stat.S_ISDIR(st.st_mode):
    raise UnsafeCacheDir(f"{path} is not a directory")
  problem = _owner_problem(st, "directory", path)
  if problem:
    raise UnsafeCacheDir(problem)
  if not os.access(path, os.W_OK | os.X_OK):
    raise UnsafeCacheDir(f"directory {path} is not writable")


def entry_path(directory, key):
  return directory / (key + SUFFIX)


def load(path):
  """The library cached at ``path``, or None when there is none.

  The file is read once and checked (ours, private, size and HMAC) before
  the dynamic loader sees it.  A file that fails a check is deleted with a
  ``RuntimeWarning``, or silently when it is not ours or is writable by
  others, so that the caller compiles it again.  A hit touches the file's
  mtime (the LRU order).
  """
  try:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
  except FileNotFoundError:
    return None
  except OSError:   # a symbolic link (O_NOFOLLOW), or unreadable
    remove(path)
    return None
  with os.fdopen(fd, "rb") as f:
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode) or _owner_problem(st, "file", path):
      remove(path)
      return None
    data = f.read()
  try:
    integrity.verify(data, path.name, integrity.secret_key(path.parent))
  except integrity.Damaged as e:
    return _discard(path, str(e))
  try:
    lib = ctypes.CDLL(str(path))
  except OSError as e:
    return _discard(path, f"it does not load: {e}")
  try:
    os.utime(path)
  except OSError:   # evicted by another process meanwhile; the mapping stays valid
    pass
  return lib


def _discard(path, why):
  warnings.warn(f"purejax: the cached kernel {path} is not used: {why}. "
                "It is compiled again.", RuntimeWarning, stacklevel=4)
  remove(path)
  return None


def seal(tmp, path):
  """Seals the library compiled into ``tmp`` for publication as ``path``
  (before it is loaded or committed)."""
  integrity.seal_file(tmp, path.name, integrity.secret_key(path.parent))


def _host_tag():
  """A short name of this machine, for the temporary files' names: a process
  id says whether a file's writer is alive only on the machine it ran on."""
  return hashlib.sha256(platform.node().encode("utf-8", "surrogatepass")).hexdigest()[:8]


# .<key prefix>-<host tag>-<pid>-<owner tag>-<random>.tmp: whose it is, to
# tell when its process is gone.  Only files named so, with the owner tag
# this directory's key gives, are ever swept.
_TMP_NAME = re.compile(r"^\..{1,16}-([0-9a-f]{8})-([0-9]+)-([0-9a-f]{16})-[0-9a-z_]+\.tmp$")


def _tmp_tag(directory, host, pid):
  return integrity.owner_tag(integrity.secret_key(directory), f".tmp-{host}-{pid}").hex()[:16]


def tmp_prefix(directory, key, host=None, pid=None):
  """The name a temporary file of ``key`` written by process ``pid`` on
  ``host`` starts with (default: this process)."""
  host = _host_tag() if host is None else host
  pid = os.getpid() if pid is None else pid
  return f".{key[:16]}-{host}-{pid}-{_tmp_tag(directory, host, pid)}-"
_unfinished = set()   # this process's temporary files not yet published or removed
_swept = set()        # directories swept of dead processes' temporaries


def temp_path(directory, key):
  """A fresh private temporary file in ``directory`` to compile into.  It is
  removed at interpreter exit unless ``commit`` or ``remove`` came first."""
  fd, name = tempfile.mkstemp(prefix=tmp_prefix(directory, key), suffix=_TMP_SUFFIX, dir=directory)
  os.close(fd)
  path = pathlib.Path(name)
  with _lock:
    _unfinished.add(str(path))
  return path


def commit(tmp, path):
  """Atomically publishes the compiled (and sealed) ``tmp`` as ``path``."""
  os.chmod(tmp, 0o700)   # the linker created it under the umask
  os.replace(tmp, path)
  with _lock:
    _unfinished.discard(str(tmp))
  _fsync_dir(path.parent)


def _fsync_dir(directory):
  """Makes a rename in ``directory`` durable (where directories can be opened)."""
  try:
    fd = os.open(directory, os.O_RDONLY)
  except OSError:
    return
  try:
    os.fsync(fd)
  except OSError:
    pass
  finally:
    os.close(fd)


def at_interpreter_exit(func):
  """Runs ``func`` when the interpreter exits: threading's exit hook (run
  before non-daemon threads are joined, in the order registered), which a
  program cannot run early, as it can atexit's (``atexit._run_exitfuncs()``,
  which chex's tests call, would kill compiles and delete files in use)."""
  try:
    threading._register_atexit(func)
  except (AttributeError, RuntimeError):   # (no such hook, or already exiting)
    atexit.register(func)


def remove_unfinished():
  """A process may exit while a background compile writes a temporary file
  (the compiler itself is killed first, by ``toolchain``): remove it."""
  with _lock:
    paths = list(_unfinished)
    _unfinished.clear()
  for p in paths:
    try:
      os.unlink(p)
    except OSError:
      pass


def _writer_is_gone(directory, name, st, now):
  """Whether the temporary file ``name`` is purejax's and belongs to a process
  that no longer runs (a killed process's; its compile will never finish)."""
  match = _TMP_NAME.match(name)
  if match is None:
    return False   # not ours: never touched
  host, pid = match.group(1), int(match.group(2))
  try:
    if match.group(3) != _tmp_tag(directory, host, pid):
      return False   # named like ours, not written by purejax
  except OSError:
    return False
  if host != _host_tag():
    return now - st.st_mtime > _STALE_TMP_SECONDS   # cannot ask another machine
  if pid == os.getpid():
    return False
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return True
  except PermissionError:   # alive, someone else's (pid reused)
    return now - st.st_mtime > _STALE_TMP_SECONDS
  return False


def sweep_unfinished(directory, force=False):
  """Removes the temporary files that processes which are gone left in
  ``directory`` (once per process and directory, unless ``force``)."""
  with _lock:
    if str(directory) in _swept and not force:
      return
    _swept.add(str(directory))
  now = time.time()
  try:
    scan = list(os.scandir(directory))
  except OSError:
    return
  for e in scan:
    if not e.name.endswith(_TMP_SUFFIX):
      continue
    try:
      st = e.stat(follow_symlinks=False)
    except OSError:
      continue
    if stat.S_ISREG(st.st_mode) and _writer_is_gone(directory, e.name, st, now):
      remove(e.path)


def read_private_text(path):
  """The text of a file we own that others cannot write, or None."""
  try:
    with open(path, encoding="utf-8") as f:
      st = os.fstat(f.fileno())
      if not stat.S_ISREG(st.st_mode) or _owner_problem(st, "file", path):
        return None
      return f.read()
  except (OSError, UnicodeDecodeError):
    return None


def read_signed_text(path):
  """The text ``write_signed_text`` wrote at ``path``, or None when there is
  none or it was not written by purejax (or was changed since)."""
  signed = read_private_text(path)
  if signed is None:
    return None
  return integrity.read_signed_text(signed, path.name, integrity.secret_key(path.parent))


def write_signed_text(path, text):
  """Writes ``text`` to ``path`` authenticated (see ``read_signed_text``)."""
  write_text_atomic(path, integrity.sign_text(text, path.name,
                                              integrity.secret_key(path.parent)))


def write_text_atomic(path, text):
  """Writes ``text`` to ``path`` through a temporary file and ``os.replace``."""
  tmp = temp_path(path.parent, path.stem)
  try:
    with open(tmp, "w", encoding="utf-8") as f:
      f.write(text)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
    with _lock:
      _unfinished.discard(str(tmp))
  except BaseException:
    remove(tmp)
    raise


def evict(directory, max_bytes, keep):
  """Deletes the least recently used kernels while the total of purejax's
  exceeds ``max_bytes``, never ``keep`` (the one just written) nor a file
  purejax did not seal.  Also deletes temporary files that crashed
  compilations left behind."""
  entries, total, now = [], 0, time.time()
  try:
    scan = list(os.scandir(directory))
  except OSError:
    return
  for e in scan:
    try:
      st = e.stat(follow_symlinks=False)
    except OSError:
      continue
    if e.name.endswith(_TMP_SUFFIX):
      if stat.S_ISREG(st.st_mode) and _writer_is_gone(directory, e.name, st, now):
        remove(e.path)
    elif _ENTRY_NAME.match(e.name) and stat.S_ISREG(st.st_mode):
      total += st.st_size
      if e.path != str(keep):
        entries.append((st.st_mtime_ns, e.name, e.path, st.st_size))
  entries.sort()
  key = integrity.secret_key(directory)
  for _, name, p, size in entries:
    if total <= max_bytes:
      break
    if integrity.is_ours(p, name, key):   # reads only the trailer
      remove(p)
    total -= size   # not ours: not counted either


def remove(path):
  try:
    os.unlink(path)
  except FileNotFoundError:
    pass
  with _lock:
    _unfinished.discard(str(path))
