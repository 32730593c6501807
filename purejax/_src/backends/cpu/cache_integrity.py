"""What makes the kernel cache trustworthy: only files purejax wrote are
loaded, run or deleted, and a damaged file is noticed before it is loaded.

* A per-user secret key (32 random bytes, ``.purejax-key``, mode 0600) lives
  in the private cache directory.  Every cached library ends with a trailer
  holding its payload size and an HMAC-SHA256, under that key, of its name
  and contents; it is written and ``fsync``-ed before the file is renamed
  into place.  A library is loaded only after its size and HMAC check out,
  so a truncated, corrupted, planted or renamed file is never handed to the
  dynamic loader (whose constructors would run, and which dies of SIGBUS on
  a truncated file).  The dynamic loader ignores bytes after an ELF file's
  last segment, so the trailer does not change how the library loads.
* The trailer also carries a tag that depends only on the file's name, so
  eviction can tell its own files from others' without reading them whole.
* Text records (the compiler probe) carry an HMAC as well.
* A cache path is used only when no other user can change where it leads:
  every directory on the way (symbolic links followed, and the links
  themselves) is owned by us or root, and a directory others can write has
  the sticky bit (as ssh demands of the paths to its keys).
"""
import hashlib
import hmac
import os
import stat
import struct
import threading

KEY_NAME = ".purejax-key"
_KEY_BYTES = 32
_MAGIC = b"PJXKERN1"
_TRAILER = struct.Struct("<8sQ16s32s")   # magic, payload size, owner tag, HMAC
TRAILER_SIZE = _TRAILER.size

_lock = threading.Lock()
_keys = {}   # directory -> its secret key


class Damaged(Exception):
  """A cache entry that fails its checks; the message says how."""


def _getuid():
  getuid = getattr(os, "getuid", None)
  return getuid() if getuid is not None else None


def secret_key(directory):
  """The directory's secret key, created on first use.  A key file that is not
  a private regular file of ours is replaced (every entry it signed is then
  rebuilt)."""
  directory = str(directory)
  with _lock:
    key = _keys.get(directory)
    if key is None:
      key = _read_key(directory) or _create_key(directory)
      _keys[directory] = key
  return key


def _read_key(directory):
  path = os.path.join(directory, KEY_NAME)
  try:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
  except OSError:
    return None
  with os.fdopen(fd, "rb") as f:
    st = os.fstat(f.fileno())
    uid = _getuid()
    if (not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid)
        or st.st_mode & 0o077 or st.st_size != _KEY_BYTES):
      return None
    key = f.read(_KEY_BYTES + 1)
  return key if len(key) == _KEY_BYTES else None


def _create_key(directory):
  """Writes a fresh key through a private temporary file; when another process
  published its key first (``os.link`` refuses to overwrite), that one wins."""
  path = os.path.join(directory, KEY_NAME)
  tmp = os.path.join(directory, f".purejax-key-{os.getpid()}-{threading.get_ident()}.new")
  key = os.urandom(_KEY_BYTES)
  fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
  try:
    os.fchmod(fd, 0o600)
    os.write(fd, key)
    os.fsync(fd)
    os.close(fd)
    fd = None
    try:
      os.link(tmp, path)
    except FileExistsError:
      existing = _read_key(directory)
      if existing is not None:
        return existing
      os.replace(tmp, path)   # the existing key file is not a valid private key
  finally:
    if fd is not None:
      os.close(fd)
    try:
      os.unlink(tmp)
    except FileNotFoundError:
      pass
  return key


def _mac(key, purpose, name, data=b""):
  h = hmac.new(key, digestmod=hashlib.sha256)
  for part in (purpose, name.encode("utf-8", "surrogatepass")):
    h.update(part + b"\0")
  h.update(data)
  return h.digest()


def owner_tag(key, name):
  return _mac(key, b"owner", name)[:16]


def seal_file(path, name, key):
  """Appends the trailer to the library ``path`` (to be published as
  ``name``) and flushes it to disk."""
  with open(path, "r+b") as f:
    payload = f.read()
    trailer = _TRAILER.pack(_MAGIC, len(payload), owner_tag(key, name),
                            _mac(key, b"kernel", name, payload))
    f.write(trailer)
    f.flush()
    os.fsync(f.fileno())


def verify(data, name, key):
  """Raises ``Damaged`` unless ``data`` (a whole cached file) is the sealed
  library purejax wrote under ``name``."""
  if len(data) < TRAILER_SIZE:
    raise Damaged(f"it is truncated ({len(data)} bytes)")
  magic, size, tag, mac = _TRAILER.unpack_from(data, len(data) - TRAILER_SIZE)
  if magic != _MAGIC:
    raise Damaged("it has no purejax seal (truncated, or not written by purejax)")
  if size != len(data) - TRAILER_SIZE:
    raise Damaged(f"its size is {len(data) - TRAILER_SIZE} bytes, not the {size} written")
  expected = _mac(key, b"kernel", name, memoryview(data)[:size])
  if not (hmac.compare_digest(tag, owner_tag(key, name)) and hmac.compare_digest(mac, expected)):
    raise Damaged("its contents do not match their seal (damaged, or not written by purejax)")


def is_ours(path, name, key):
  """Whether the file at ``path`` carries purejax's owner tag for ``name``
  (reads only its trailer)."""
  try:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
  except OSError:
    return False
  with os.fdopen(fd, "rb") as f:
    try:
      f.seek(-TRAILER_SIZE, os.SEEK_END)
    except OSError:
      return False
    trailer = f.read(TRAILER_SIZE)
  if len(trailer) != TRAILER_SIZE:
    return False
  magic, _, tag, _ = _TRAILER.unpack(trailer)
  return magic == _MAGIC and hmac.compare_digest(tag, owner_tag(key, name))


def sign_text(text, name, key):
  """``text`` with an authenticating first line (for ``read_signed_text``)."""
  return _mac(key, b"record", name, text.encode("utf-8")).hex() + "\n" + text


def read_signed_text(signed, name, key):
  """The text ``sign_text`` wrapped, or None when it is not authentic."""
  mac, sep, text = signed.partition("\n")
  if not sep:
    return None
  expected = _mac(key, b"record", name, text.encode("utf-8")).hex()
  return text if hmac.compare_digest(mac, expected) else None


def path_problem(path):
  """Why a user other than us (or root) could change where ``path`` leads, or
  None.  Walks the path as the kernel resolves it, symbolic links included;
  components that do not exist yet are ours to create."""
  uid = _getuid()
  if uid is None:
    return None
  pending = list(reversed(os.path.abspath(path).split(os.sep)[1:]))
  current, links = os.sep, 0
  problem = _component_problem(current, os.lstat(current), uid)
  while problem is None and pending:
    name = pending.pop()
    if name in ("", "."):
      continue
    if name == "..":
      current = os.path.dirname(current)
      continue
    nxt = os.path.join(current, name)
    try:
      st = os.lstat(nxt)
    except FileNotFoundError:
      return None
    problem = _component_problem(nxt, st, uid)
    if problem is None and stat.S_ISLNK(st.st_mode):
      links += 1
      if links > 40:
        return f"{path} has too many levels of symbolic links"
      target = os.readlink(nxt)
      if os.path.isabs(target):
        current = os.sep
      pending.extend(reversed(target.split(os.sep)))
      continue
    current = nxt
  return problem


def _component_problem(path, st, uid):
  if st.st_uid not in (uid, 0):
    kind = "symbolic link" if stat.S_ISLNK(st.st_mode) else "directory"
    return f"the {kind} {path} on the way is owned by user id {st.st_uid}, not by you or root"
  if (stat.S_ISDIR(st.st_mode) and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
      and not st.st_mode & stat.S_ISVTX):
    return (f"the directory {path} on the way is writable by other users "
            f"(mode {stat.S_IMODE(st.st_mode):#o}, no sticky bit): they could replace what follows")
  return None
