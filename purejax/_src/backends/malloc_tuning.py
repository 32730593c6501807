"""Keeps freed memory in the process (glibc only), set at purejax import.

glibc serves large allocations (from 128 KB, a threshold it raises as it
sees them freed, to at most 32 MB) with fresh ``mmap``s and gives freed
memory at the top of its heaps back to the system.  Each large NumPy
temporary or compiled function output then costs its page faults again
(touching 1 MB of fresh pages takes about 1 ms, 40x reusing warm memory),
which on a jitted step with many such arrays, and on devices of an SPMD run
allocating at once, costs more than the arithmetic.  With the flag
``purejax_malloc_tuning`` (PUREJAX_MALLOC_TUNING, default on) purejax sets
fixed, high thresholds with ``mallopt``: the memory of freed arrays is
reused.  The price is a process that keeps up to its peak heap size
(rather than returning it to the system as soon as the arrays die).

It also keeps every thread on the main heap (one malloc arena): a thread's
own arena grows in heaps of at most 64 MB, so it serves anything larger
with a fresh ``mmap`` whatever the thresholds, and jitted calls run on
the dispatch thread: a 4096x4096 float32 softmax took 99 ms there
against 17 ms on the main thread, all page faults.
"""
import ctypes
import os

# mallopt's parameter numbers (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
# Allocations from this size still get their own mmap (returned when freed).
MMAP_THRESHOLD = 256 << 20
# Free memory at a heap's top kept for later allocations, up to this much.
TRIM_THRESHOLD = 1 << 30

applied = False


def is_glibc():
  try:
    return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
  except (ValueError, OSError, AttributeError):   # not glibc, or not a POSIX system
    return False


def apply():
  """Sets the thresholds once; whether they are in effect (False off glibc)."""
  global applied
  if applied or not is_glibc():
    return applied
  try:
    mallopt = ctypes.CDLL(None).mallopt
  except (OSError, AttributeError):
    return False
  mallopt.restype, mallopt.argtypes = ctypes.c_int, [ctypes.c_int, ctypes.c_int]
  # glibc before 2.26 refuses mmap thresholds above 32 MB.
  mmap_ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) or mallopt(_M_MMAP_THRESHOLD, 32 << 20)
  applied = bool(mmap_ok and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
                 and mallopt(_M_ARENA_MAX, 1))
  return applied
