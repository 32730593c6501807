"""Refusing arrays that cannot be allocated, as XLA does (RESOURCE_EXHAUSTED).

NumPy lets an eager broadcast stay a zero-stride view of any size, so
``jnp.zeros((2**40,))`` would "succeed" and a later reduction would run for
hours.  Every concrete result is therefore checked against the memory the
machine can give: physical memory plus swap (what Linux's overcommit
heuristic refuses beyond), or the cgroup's limit if that is smaller.
Abstract evaluation (tracing, ``eval_shape``) is never limited.
"""
import math
import os

from purejax._src import errors

_limit = None


def _meminfo_bytes(field):
  try:
    with open("/proc/meminfo") as f:
      for line in f:
        if line.startswith(field + ":"):
          return int(line.split()[1]) * 1024
  except (OSError, ValueError, IndexError):
    pass
  return None


def _cgroup_limit():
  for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
    try:
      with open(path) as f:
        text = f.read().strip()
    except OSError:
      continue
    if text.isdigit():
      return int(text)
  return None


def max_bytes():
  """The largest allocation that can succeed (bytes; computed once)."""
  global _limit
  if _limit is None:
    total = _meminfo_bytes("MemTotal")
    if total is None:
      try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
      except (OSError, ValueError, AttributeError):
        total = 1 << 62   # unknown: only absurd sizes are refused
    total += _meminfo_bytes("SwapTotal") or 0
    cgroup = _cgroup_limit()
    _limit = min(total, cgroup) if cgroup else total
  return _limit


def nbytes(aval):
  dtype = aval.dtype
  itemsize = getattr(dtype, "itemsize", 0)
  return math.prod(aval.shape) * itemsize


def check_avals(avals):
  """Raises JAX's out-of-memory error if an array of ``avals`` (a list of
  ShapedArrays) is larger than can be allocated."""
  for aval in avals:
    shape = getattr(aval, "shape", None)
    if shape is None or math.prod(shape) < (1 << 24):   # small: the common case
      continue
    size = nbytes(aval)
    if size > max_bytes():
      raise errors.JaxRuntimeError(
          f"RESOURCE_EXHAUSTED: Out of memory allocating {size} bytes.")
