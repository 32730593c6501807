"""The C toolchain: finds the system C compiler, compiles C source into a shared
library, caches it (in memory and on disk, see ``cache.py``) and loads it with
ctypes.

The compiler is the first of ``$CC`` (split into words, never given to a
shell), ``cc``, ``gcc``, ``clang`` on ``PATH`` that compiles and loads a tiny
probe library (a missing or broken ``$CC`` is skipped).  The probe also picks
which of the wanted flags work (``-O3 -march=native -fno-math-errno
-fno-trapping-math -fopenmp``, linking ``-lmvec -lm -lgomp``) and drops the
others, so a compiler without OpenMP or a libc without libmvec still works,
only slower.  No ``-ffast-math``: NaN and Inf must keep their IEEE meaning.
The probe's result is remembered per process and, keyed by the compiler
binary and the CPU, in the cache directory (unless the disk cache is off:
``config.purejax_disk_cache``).  PUREJAX_DEBUG=2 reports, on stderr, the
compiler found and, for each kernel, whether it was compiled or loaded.

Thread-safe: concurrent calls compile a given source once.
"""
import _ctypes
import contextlib
import ctypes
import errno
import functools
import hashlib
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref

from purejax._src.backends.cpu import cache
from purejax._src.config import config


class CompilerUnavailable(RuntimeError):
  """No usable C compiler was found."""


class CompileError(RuntimeError):
  """The C compiler rejected the source; the message holds its diagnostics."""


class DiskFull(CompileError):
  """The compiler (or the cache) could not write: no space left on the device
  or over the disk quota."""


_CANDIDATES = ("cc", "gcc", "clang")
_BASE_FLAGS = ("-fPIC", "-shared")
_OPT_FLAGS = ("-O3", "-march=native", "-fno-math-errno", "-fno-trapping-math")
_PROBE_VERSION = 1        # bump when the probe changes, to forget cached probes
_MAX_STDERR = 4000        # characters of compiler diagnostics kept in errors

# The probe library: a plain function, an OpenMP loop (one thread, so that no
# thread pool starts in the probing process) and a loop over a libmvec
# vectorised expf, each checkable through ctypes.
_PLAIN_SRC = "int purejax_probe_add(int a, int b) { return a + b; }\n"
_OMP_SRC = """
int purejax_probe_omp(int n) {
  int s = 0;
  #pragma omp parallel for num_threads(1) reduction(+:s)
  for (int i = 0; i < n; i++) s += i;
  return s;
}
"""
_MVEC_SRC = """
#pragma omp declare simd notinbranch
extern float expf(float);
float purejax_probe_mvec(const float *x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; i++) s += expf(x[i]);
  return s;
}
"""


class Toolchain:
  """A working compiler and the flags chosen for it."""

  def __init__(self, argv, version, cflags, ldflags, openmp, mvec):
    self.argv, self.version = list(argv), version
    self.cflags, self.ldflags = list(cflags), list(ldflags)
    self.openmp, self.mvec = bool(openmp), bool(mvec)
    self.description = (f"{shlex.join(self.argv)} ({version}); "
                        f"flags: {' '.join(self.cflags + self.ldflags)}; cpu: {_cpu_id()}")

  def to_json(self):
    return json.dumps(dict(argv=self.argv, version=self.version, cflags=self.cflags,
                           ldflags=self.ldflags, openmp=self.openmp, mvec=self.mvec))

  @classmethod
  def from_json(cls, text):
    d = json.loads(text)
    strs = lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v)
    if not (strs(d["argv"]) and strs(d["cflags"]) and strs(d["ldflags"])
            and isinstance(d["version"], str)):
      raise ValueError("malformed toolchain record")
    return cls(d["argv"], d["version"], d["cflags"], d["ldflags"], d["openmp"], d["mvec"])


_lock = threading.Lock()
_toolchain = None      # the probed Toolchain, once found
# (source, extra_flags) -> ctypes.CDLL, while something uses it: a library
# nothing refers to any more is unloaded (see ``_unload_when_unused``).
_libraries = weakref.WeakValueDictionary()
_key_locks = {}        # cache key -> lock, so that threads compile a kernel once


_running = set()   # compiler processes now running (Popen), killed at exit
_running_lock = threading.Lock()
_exiting = False
_hung = set()      # compilers (argv tuples) whose probe timed out: not tried again
_limit = threading.local()   # .deadline: when this thread's compilation must end


@contextlib.contextmanager
def time_limit():
  """Every compiler run in this block (or decorated function), in this
  thread, ends within ``purejax_compile_timeout`` seconds from now all
  together (probing the compiler included), so that a compilation the
  caller waits for never waits longer.  Nested blocks share the outermost
  one's limit."""
  if getattr(_limit, "deadline", None) is not None:
    yield
    return
  _limit.deadline = time.monotonic() + config.purejax_compile_timeout
  try:
    yield
  finally:
    _limit.deadline = None


def _time_left():
  """Seconds the next compiler run may take."""
  deadline = getattr(_limit, "deadline", None)
  if deadline is None:
    return config.purejax_compile_timeout
  return deadline - time.monotonic()


def _timed_out_message():
  return f"timed out after {config.purejax_compile_timeout:g} s (purejax_compile_timeout)"


def _run(argv, *, input=None):
  """Runs a program (never through a shell) in its own process group, which
  is killed on a timeout (``time_limit``; raises ``subprocess.TimeoutExpired``)
  and at interpreter exit, so that no compiler outlives Python (and none
  finishes a temporary file after its process left).  Tests replace this to
  count calls."""
  timeout = _time_left()
  if timeout <= 0:
    raise subprocess.TimeoutExpired(argv, 0)
  env = dict(os.environ, LC_ALL="C")   # diagnostics in plain ASCII
  proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
  with _running_lock:
    _running.add(proc)
  try:
    out, err = proc.communicate(input, timeout=timeout)
    if _exiting:   # killed by _kill_running_compilers: end the compiling thread quietly
      raise SystemExit
  except BaseException:
    _kill_group(proc)
    try:   # a process outside the group may hold the pipes open: don't wait on it
      proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
      pass
    raise
  finally:
    with _running_lock:
      _running.discard(proc)
  return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill_group(proc):
  try:
    os.killpg(proc.pid, signal.SIGKILL)
  except (ProcessLookupError, PermissionError):
    pass


def _kill_running_compilers():
  """At exit, a background compile may still run: kill it (and its
  children: cc1, as, ld), then remove the cache's unfinished temporary
  files, which it can no longer write into."""
  global _exiting
  _exiting = True
  with _running_lock:
    running = list(_running)
  for proc in running:
    _kill_group(proc)
  for proc in running:
    try:
      proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
      pass
  cache.remove_unfinished()


cache.at_interpreter_exit(_kill_running_compilers)


# -- finding and probing the compiler -------------------------------------------

def _candidates():
  """(label, argv or None, why not) for $CC, then cc, gcc, clang."""
  names = []
  cc = os.environ.get("CC", "").strip()
  if cc:
    try:
      names.append(("$CC=" + cc, shlex.split(cc)))
    except ValueError as e:
      yield "$CC=" + cc, None, f"cannot be split into words ({e})"
  names += [(name, [name]) for name in _CANDIDATES]
  seen = set()
  for label, words in names:
    path = shutil.which(words[0]) if words else None
    if path is None:
      yield label, None, "not found"
      continue
    argv = [path] + words[1:]   # not the symlink's target: ccache relies on the name
    if tuple(argv) not in seen:
      seen.add(tuple(argv))
      yield label, argv, None


@time_limit()   # all candidates probed within one limit
def _find_toolchain():
  problems = []
  for label, argv, problem in _candidates():
    if argv is None:
      problems.append(f"{label}: {problem}")
      continue
    if tuple(argv) in _hung:
      problems.append(f"{label} ({argv[0]}): timed out before")
      continue
    record = _probe_record_path(argv)
    tc = _read_probe_record(record, argv) if record is not None else None
    if tc is not None:
      return tc
    try:
      tc = _probe(argv)
    except subprocess.TimeoutExpired:
      _hung.add(tuple(argv))
      problems.append(f"{label} ({argv[0]}): {_timed_out_message()}")
      if _time_left() <= 0:
        break
      continue
    except (OSError, subprocess.SubprocessError, _ProbeFailed) as e:
      problems.append(f"{label} ({argv[0]}): {e}")
      continue
    if record is not None:
      try:
        cache.write_signed_text(record, tc.to_json())
      except OSError:
        pass
    return tc
  raise CompilerUnavailable(
      "no usable C compiler found (tried " + "; ".join(problems) +
      "). Install gcc or clang, or set $CC to a C compiler.")


class _ProbeFailed(Exception):
  pass


def _probe(argv):
  """Tries the compiler on the probe library: all wanted flags at once, else
  flag by flag keeping those that work."""
  version = _version(argv)
  with tempfile.TemporaryDirectory(prefix="purejax-probe-") as tmp:
    counter = iter(range(1000))

    def works(cflags, ldflags, parts):
      out = os.path.join(tmp, f"probe{next(counter)}.so")
      return _try_probe(argv, cflags, ldflags, parts, out)

    full_c = list(_BASE_FLAGS + _OPT_FLAGS) + ["-fopenmp"]
    full_ld = ["-lmvec", "-lm", "-lgomp"]
    if works(full_c, full_ld, "plain omp mvec") is None:
      return Toolchain(argv, version, full_c, full_ld, True, True)
    problem = works(list(_BASE_FLAGS), [], "plain")
    if problem is not None:
      raise _ProbeFailed(f"cannot build a shared library: {problem}")
    cflags, ldflags = list(_BASE_FLAGS), []
    for flag in _OPT_FLAGS:
      if works(cflags + [flag], ldflags, "plain") is None:
        cflags.append(flag)
    if works(cflags, ldflags + ["-lm"], "plain") is None:
      ldflags.append("-lm")
    openmp = mvec = False
    for extra in ([], ["-lgomp"]):
      if works(cflags + ["-fopenmp"], ldflags + extra, "plain omp") is None:
        cflags.append("-fopenmp")
        ldflags += extra
        openmp = True
        break
    if openmp and works(cflags, ldflags + ["-lmvec"], "plain omp mvec") is None:
      ldflags.insert(0, "-lmvec")
      mvec = True
    return Toolchain(argv, version, cflags, ldflags, openmp, mvec)


def _try_probe(argv, cflags, ldflags, parts, out):
  """None when the probe compiles, loads and computes right, else why not."""
  source = _PLAIN_SRC + (_OMP_SRC if "omp" in parts else "") + (
      _MVEC_SRC if "mvec" in parts else "")
  proc = _run(_command(argv, cflags, ldflags, out), input=source)
  if proc.returncode != 0:
    return _trim(proc.stderr) or f"exit status {proc.returncode}"
  try:
    lib = ctypes.CDLL(out)
  except OSError as e:
    return str(e)
  if lib.purejax_probe_add(2, 3) != 5:
    return "the probe library computes wrong results"
  if "omp" in parts and lib.purejax_probe_omp(10) != 45:
    return "the OpenMP probe computes wrong results"
  if "mvec" in parts:
    fn = lib.purejax_probe_mvec
    fn.restype = ctypes.c_float
    xs = (ctypes.c_float * 64)()   # zeros: exp(0) == 1
    if fn(xs, 64) != 64.0:
      return "the libmvec probe computes wrong results"
  return None


def _version(argv):
  proc = _run(argv + ["--version"])
  lines = (proc.stdout or proc.stderr).strip().splitlines()
  if proc.returncode != 0 or not lines:
    raise _ProbeFailed(f"`{shlex.join(argv)} --version` failed")
  return lines[0].strip()


def _command(argv, cflags, ldflags, out, language="c"):
  """The compiler's argument list: source on stdin, libraries after it."""
  return argv + cflags + ["-x", language, "-", "-x", "none", "-o", str(out)] + ldflags


@functools.lru_cache(maxsize=None)
def _cpu_id():
  """Identifies the CPU that ``-march=native`` targets (caches may be shared
  between machines, e.g. on a network home directory)."""
  text = platform.machine() + " " + platform.processor()
  try:
    with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
      first = f.read(1 << 16).split("\n\n")[0]
    text += "".join(line for line in first.splitlines()
                    if line.startswith(("vendor_id", "model name", "flags", "Features")))
  except OSError:
    pass
  return hashlib.sha256(text.encode()).hexdigest()[:16]


def _probe_record_path(argv):
  """Where the probe of this compiler binary on this CPU is remembered
  (None: nowhere)."""
  if not cache.enabled():
    return None
  try:
    st = os.stat(argv[0])
    directory = cache.cache_dir()
  except OSError:
    return None
  ident = repr((_PROBE_VERSION, argv, st.st_size, st.st_mtime_ns, st.st_ino, _cpu_id()))
  return directory / f"toolchain-{hashlib.sha256(ident.encode()).hexdigest()[:32]}.json"


_KNOWN_CFLAGS = frozenset(_BASE_FLAGS + _OPT_FLAGS + ("-fopenmp",))
_KNOWN_LDFLAGS = frozenset(("-lmvec", "-lm", "-lgomp"))


def _read_probe_record(record, argv):
  """The remembered probe of the compiler ``argv``, or None.  The record must
  carry this cache's HMAC (purejax wrote it), name the compiler found on
  PATH itself and only flags the probe can choose: a planted record cannot
  make purejax run another program, or pass it other flags."""
  text = cache.read_signed_text(record)
  if text is None:
    return None
  try:
    tc = Toolchain.from_json(text)
  except (ValueError, KeyError, TypeError):
    return None
  if (tc.argv != list(argv) or not set(tc.cflags) <= _KNOWN_CFLAGS
      or not set(tc.ldflags) <= _KNOWN_LDFLAGS):
    return None
  return tc


def _get_toolchain():
  global _toolchain
  tc = _toolchain
  if tc is None:
    with _lock:
      if _toolchain is None:
        _toolchain = _find_toolchain()
        _debug(f"C compiler {_toolchain.description}")
      tc = _toolchain
  return tc


# -- public interface -------------------------------------------------------------

def compiler_available():
  """Whether a working C compiler was found (probes it on the first call)."""
  try:
    _get_toolchain()
  except CompilerUnavailable:
    return False
  return True


def toolchain_description():
  """The compiler's path, version and flags (part of every kernel's cache key).

  Raises ``CompilerUnavailable`` when there is no compiler, as the other
  functions describing the toolchain do.
  """
  return _get_toolchain().description


def flags():
  """The compiler and linker flags chosen by the probe."""
  tc = _get_toolchain()
  return tuple(tc.cflags + tc.ldflags)


def openmp_enabled():
  """Whether kernels are compiled with OpenMP (``#pragma omp`` takes effect)."""
  return _get_toolchain().openmp


def mvec_enabled():
  """Whether glibc's vector math library is linked, so that math functions
  declared ``#pragma omp declare simd notinbranch`` vectorise."""
  return _get_toolchain().mvec


def cache_dir():
  """The private directory of compiled kernels (see ``cache.py``)."""
  return cache.cache_dir()


@time_limit()   # probe and compile within one limit
def compile_library(source, *, extra_flags=()):
  """Compiles C ``source`` into a shared library and loads it with ctypes.

  The same ``(source, extra_flags)`` returns the same ``ctypes.CDLL`` object
  (from memory); otherwise a library compiled before, by this or another
  process, is loaded from the disk cache (unless ``purejax_disk_cache`` is
  off: then nothing is read from or written to it).  Raises
  ``CompilerUnavailable`` when there is no compiler and ``CompileError``
  (with the compiler's diagnostics) when it rejects the source.  A flag
  ``-x<language>`` (``-xc++``) compiles another language than C.
  """
  extra = _check_flags(extra_flags)
  lib = _libraries.get((source, extra))
  if lib is not None:
    return lib
  tc = _get_toolchain()
  key = _cache_key(source, tc, extra)
  with _lock:
    key_lock = _key_locks.setdefault(key, threading.Lock())
  with key_lock:
    lib = _libraries.get((source, extra))
    if lib is None:
      lib = _load_or_build(source, tc, extra, key)
      _unload_when_unused(lib, tc)
      _libraries[(source, extra)] = lib
  return lib


def _unload_when_unused(lib, tc):
  """Unloads ``lib`` once nothing refers to it any more (each distinct
  kernel would otherwise keep its memory maps for good).  Whatever calls
  into it holds it, through its ctypes functions, so none can then."""
  if tc.openmp:
    _pin_openmp_runtime()
  unload = weakref.finalize(lib, _dlclose, lib._handle)
  unload.atexit = False   # at exit, other threads may still be inside a kernel


def _dlclose(handle):
  try:
    _ctypes.dlclose(handle)
  except (OSError, AttributeError):   # AttributeError: a platform without dlclose
    pass


_pinned = []   # the OpenMP runtime, loaded for good


def _pin_openmp_runtime():
  """Keeps the OpenMP runtime loaded even after the last kernel using it
  is unloaded: its idle thread pool runs the runtime's code."""
  if _pinned:
    return
  try:
    with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
      paths = {line.split(None, 5)[-1].strip() for line in f if "omp" in line}
  except OSError:
    return
  for path in sorted(paths):
    name = os.path.basename(path)
    if name.startswith(("libgomp.so", "libomp.so", "libiomp5.so")):
      try:
        _pinned.append(ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_NODELETE))
      except OSError:
        pass


def clear_memory_cache():
  """Forgets the libraries loaded so far (the disk cache stays)."""
  _libraries.clear()


def _reset():
  """Forgets the probed compiler too (for tests that change $CC or PATH)."""
  global _toolchain
  with _lock:
    _toolchain = None
  _hung.clear()
  clear_memory_cache()


def _check_flags(extra_flags):
  if isinstance(extra_flags, str):
    raise TypeError("extra_flags must be a sequence of strings, not a string")
  extra = tuple(extra_flags)
  for flag in extra:
    if not isinstance(flag, str) or not flag.startswith("-") or "\0" in flag:
      raise ValueError(f"invalid compiler flag {flag!r}: flags start with '-'")
  return extra


def _cache_key(source, tc, extra):
  h = hashlib.sha256()
  for part in (source, tc.description, *extra):
    h.update(part.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
  return h.hexdigest()


def _load_or_build(source, tc, extra, key):
  if not cache.enabled():
    return _build_privately(source, tc, extra, key, "disk cache off")
  directory = cache.cache_dir()
  path = cache.entry_path(directory, key)
  try:
    lib = cache.load(path)
    if lib is not None:
      _debug(f"kernel {key[:16]} loaded from the disk cache ({path})")
      return lib
    lib = _build_into_cache(source, tc, extra, key, path)
  except (DiskFull, OSError) as e:
    if not _is_disk_full(e):
      raise
    _warn_disk_full(directory, e)
    return _build_privately(source, tc, extra, key, "the cache directory is full")
  cache.evict(directory, config.purejax_cache_max_bytes, keep=path)
  return lib


def _build_into_cache(source, tc, extra, key, path):
  """Compiles into a temporary file next to ``path``, seals, loads and
  publishes it."""
  tmp = cache.temp_path(path.parent, key)
  start = time.perf_counter()
  try:
    _compile(source, tc, extra, tmp)
    cache.seal(tmp, path)
    lib = _load_built(tmp)
    cache.commit(tmp, path)
  finally:
    cache.remove(tmp)
  _debug(f"kernel {key[:16]} compiled in {time.perf_counter() - start:.2f} s ({path})")
  return lib


def _build_privately(source, tc, extra, key, why):
  """Compiles in a fresh private directory, removed once the library is loaded."""
  start = time.perf_counter()
  try:
    with cache.private_build_dir() as directory:
      out = cache.entry_path(directory, key)
      _compile(source, tc, extra, out)
      lib = _load_built(out)
  except OSError as e:
    if _is_disk_full(e):
      raise DiskFull(f"no space left on the device for a private build directory: {e}") from None
    raise
  _debug(f"kernel {key[:16]} compiled in {time.perf_counter() - start:.2f} s ({why})")
  return lib


_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_DISK_FULL_MESSAGES = tuple(os.strerror(n) for n in _DISK_FULL_ERRNOS)
_disk_full_warned = set()   # cache directories found full (warned once each)


def _is_disk_full(e):
  return isinstance(e, DiskFull) or getattr(e, "errno", None) in _DISK_FULL_ERRNOS


def _warn_disk_full(directory, e):
  with _lock:
    if directory in _disk_full_warned:
      return
    _disk_full_warned.add(directory)
  warnings.warn(f"purejax: cannot write to the kernel cache directory {directory} "
                f"({str(e).splitlines()[0]}): compiled kernels are built in private "
                "temporary directories and not kept.", RuntimeWarning, stacklevel=5)


def _debug(message):
  if config.purejax_debug >= 2:
    print(f"purejax: {message}", file=sys.stderr)


def _compile(source, tc, extra, out):
  """Compiles into ``out``; raises ``CompileError`` (``DiskFull`` when the
  compiler could not write for want of space)."""
  libs = tuple(f for f in extra if f.startswith("-l"))
  # ``-x<language>`` in extra_flags: the source's language (C++ for the
  # CUDA backend's emulated kernels), else C.
  languages = [f for f in extra if f.startswith("-x")]
  cflags = tc.cflags + [f for f in extra if f not in libs and f not in languages]
  argv = _command(tc.argv, cflags, tc.ldflags + list(libs), out,
                  languages[-1][2:] if languages else "c")
  try:
    proc = _run(argv, input=source)
  except subprocess.TimeoutExpired:
    raise CompileError(f"the C compiler {_timed_out_message()}") from None
  except OSError as e:
    raise CompileError(f"could not run the C compiler {tc.argv[0]}: {e}") from None
  if proc.returncode != 0:
    full = [line for line in (proc.stderr or "").splitlines()
            if any(m in line for m in _DISK_FULL_MESSAGES)]
    if full:
      raise DiskFull(f"no space left on the device: the C compiler ({shlex.join(tc.argv)}) "
                     f"could not write its output ({full[0].strip()}):\n{_trim(proc.stderr)}")
    raise CompileError(f"the C compiler ({shlex.join(tc.argv)}) rejected the source "
                       f"(exit status {proc.returncode}):\n{_trim(proc.stderr)}")


def _load_built(out):
  """Loads a library just compiled (before it is published in the cache)."""
  try:
    return ctypes.CDLL(str(out))
  except OSError as e:
    raise CompileError(f"the compiled library does not load: {e}") from None


def _trim(text):
  text = (text or "").strip()
  if len(text) > _MAX_STDERR:
    text = text[:_MAX_STDERR] + f"\n... ({len(text) - _MAX_STDERR} more characters)"
  return text
