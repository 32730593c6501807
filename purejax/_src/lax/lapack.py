"""LAPACK (and BLAS trsm) of SciPy's ``cython_lapack``/``cython_blas``, called
through ctypes: the implementations of the lax.linalg primitives, eager and
as the host steps of compiled code alike.

Each primitive makes one library call per matrix of its batch, on the
routine JAX's CPU backend calls with the same arguments (getrf, trsm, potrf,
geqrf/geqp3 + orgqr/ungqr, syevd/heevd, gesdd, geev, gtsv), so results follow
LAPACK's conventions for pivots and signs.  Like JAX, the matrices are handed
over in column-major order (one transposing copy in, one out).

Threads: a call large enough to profit runs on OpenBLAS's own threads (all
the cores); a small one runs in the calling thread only, so the pool is not
woken (``openblas.scipy_modes``).  OpenBLAS's idle threads spin for a while (``thread_timeout``, 0.1 s
by default) after a call, taking cores from the OpenMP threads of the next
compiled kernel; importing purejax asks for a short spin instead, through
``OPENBLAS_THREAD_TIMEOUT`` (unless the user chose a value), which the
OpenBLAS of SciPy reads when it is loaded (by scipy.linalg or
scipy.special) after purejax.

SciPy is a dependency of purejax: without it this module (and with it
purejax) does not import.  SciPy itself is loaded on the first call.
"""
import ctypes
import functools
import importlib.util
import os
from collections import Counter

import numpy as np

from purejax._src import openblas

# OpenBLAS's idle threads spin for 2**THREAD_TIMEOUT cycles (about 1.5 ms)
# before they sleep, instead of its default 2**28 (about 0.1 s, in which a
# jitted 512x512 solve on 2 cores took twice as long: the spinning threads
# slow the next kernels).  Much shorter, and the threads fall asleep inside
# a threaded LU, between its steps.
THREAD_TIMEOUT = "22"
# Calls of fewer multiply-adds than this run in the calling thread alone
# (on 2 cores a 512x512 LU, 2**27, is faster on one thread than on two).
PARALLEL_MIN_FLOPS = 1 << 28

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", THREAD_TIMEOUT)

# routine name -> number of calls made, and of batches (one loop each)
# they were made in (the tests count library calls).
calls, batches = Counter(), Counter()
# A function giving (compiled batch loop, OpenMP threads) or None; the C
# backend sets it (backends/cpu/lapack_loop.py).  Without it: a Python loop.
batch_loop_provider = None

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


MISSING_SCIPY = ("purejax's linear algebra (lax.linalg, numpy.linalg, scipy.linalg) "
                 "calls SciPy's LAPACK, and SciPy, a dependency of purejax, is not "
                 "installed: pip install scipy")

if importlib.util.find_spec("scipy") is None:   # found without importing it
  raise ImportError(MISSING_SCIPY)


def scipy_linalg():
  """``scipy.linalg`` with its BLAS and LAPACK."""
  try:
    import scipy.linalg
    from scipy.linalg import cython_blas, cython_lapack   # noqa: F401
  except ImportError as e:
    raise ImportError(MISSING_SCIPY) from e
  return scipy.linalg


@functools.lru_cache(maxsize=None)
def capsule_address(module, name):
  """The address of the function ``name`` exported (as a PyCapsule) by
  ``scipy.linalg.<module>``."""
  mod = getattr(scipy_linalg(), module)
  capsule = mod.__pyx_capi__[name]
  get_name = ctypes.pythonapi.PyCapsule_GetName
  get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
  get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
  get_pointer.restype = ctypes.c_void_p
  get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
  return get_pointer(capsule, get_name(capsule))


def _module(name):
  return "cython_blas" if name[1:] == "trsm" else "cython_lapack"


@functools.lru_cache(maxsize=None)
def _routine(name, nargs):
  # Every argument is a pointer (Fortran passes by reference); ctypes lets
  # go of the GIL during the call.
  return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)(
      capsule_address(_module(name), name))


def _call(name, *args):
  calls[name] += 1
  _routine(name, len(args))(*args)


class _Work:
  """A workspace argument: one buffer of ``size`` elements per thread."""
  __slots__ = ("size", "dtype")

  def __init__(self, size, dtype):
    self.size, self.dtype = max(1, int(size)), np.dtype(dtype)


def _each(a):
  """The argument ``a[i]`` for the i-th call (a batch's leading axis)."""
  return (a.ctypes.data, a.strides[0] if a.shape[0] > 1 else 0)


def _run(name, count, args, flops):
  """Calls ``name`` on each of ``count`` matrices.  ``args``: an int (one
  address for every call), ``_each(array)`` or a ``_Work``.  ``flops``, the
  multiply-adds of one call, picks the threads: OpenBLAS's for a large
  call, else the calling thread, the calls spread over OpenMP threads when
  the compiled loop is there."""
  if not count:
    return
  loop = batch_loop_provider() if batch_loop_provider is not None else None
  small = flops < PARALLEL_MIN_FLOPS
  threads = loop[1] if (loop is not None and small and count > 1) else 1
  threads = max(1, min(threads, count))
  bases, strides, per_thread, keep = [], [], [], []
  for a in args:
    if type(a) is _Work:
      # Each thread's buffer 64-byte aligned, as a fresh allocation is
      # (some kernels round differently on unaligned data).
      row = -(-a.size * a.dtype.itemsize // 64) * 64
      buf = np.empty(threads * row + 64, np.uint8)
      keep.append(buf)
      bases.append(buf.ctypes.data + (-buf.ctypes.data) % 64)
      strides.append(row)
      per_thread.append(1)
    elif type(a) is tuple:
      bases.append(a[0])
      strides.append(a[1])
      per_thread.append(0)
    else:
      bases.append(a)
      strides.append(0)
      per_thread.append(0)
  calls[name] += count
  batches[name] += 1
  if loop is not None:
    n = len(args)
    with _threads(flops if threads == 1 else 0):
      loop[0](capsule_address(_module(name), name), n, count,
              (ctypes.c_void_p * n)(*bases), (ctypes.c_int64 * n)(*strides),
              (ctypes.c_int * n)(*per_thread), threads)
    return
  fn = _routine(name, len(args))
  with _threads(flops):
    for i in range(count):
      fn(*[b if p else b + i * st for b, st, p in zip(bases, strides, per_thread)])


def _threads(flops):
  """OpenBLAS's own threads for a call of ``flops`` multiply-adds in all,
  or the calling thread alone for a small one (openblas.py's modes: no
  compiled product runs single-threaded meanwhile, or the other way round)."""
  scipy_linalg()   # SciPy's OpenBLAS loaded, its thread timeout read
  modes = openblas.scipy_modes()
  return modes.single() if flops < PARALLEL_MIN_FLOPS else modes.threaded()


# -- arguments -----------------------------------------------------------------------

_CHARS = {c: ctypes.create_string_buffer(c.encode()) for c in "NTCLURSAVU"}


def _char(c):
  return ctypes.addressof(_CHARS[c])


class _Ints:
  """Integer arguments, passed by reference from one int32 buffer."""
  __slots__ = ("buf", "base")

  def __init__(self, *values):
    self.buf = np.array(values + (0,), np.int32)
    self.base = self.buf.ctypes.data

  def __getitem__(self, i):
    return self.base + 4 * i

  @property
  def info(self):   # the last slot
    return self.base + 4 * (len(self.buf) - 1)


def _ptr(a):
  return a.ctypes.data


def work_dtype(dtype):
  """The dtype LAPACK computes ``dtype`` in (16-bit floats in float32)."""
  dtype = np.dtype(dtype)
  if dtype.kind == "f" and dtype.itemsize < 4:
    return np.dtype(np.float32)
  if dtype not in _PREFIX:
    return np.dtype(np.float64)
  return dtype


def real_of(dtype):
  single = np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64))
  return np.dtype(np.float32) if single else np.dtype(np.float64)


# Matrices of fewer elements are transposed by NumPy.
COMPILED_TRANSPOSE_MIN = 4096
# Transposes of more elements than this (in all) spread over OpenMP threads.
# A copy is bound by memory: on 2 idle cores a second thread saved 10% of a
# 512 x 512 one (0.07 ms), on 2 busy ones it made it 4 times slower.
TRANSPOSE_PARALLEL_MIN = 1 << 22


def aligned_empty(shape, dtype):
  """An uninitialized array on a 64-byte boundary (OpenBLAS's kernels may
  round differently on differently aligned data: the same input gives the
  same bits whatever NumPy's allocator returns)."""
  dtype = np.dtype(dtype)
  nbytes = int(np.prod(shape)) * dtype.itemsize
  buf = np.empty(nbytes + 64, np.uint8)
  start = (-buf.ctypes.data) % 64
  return buf[start:start + nbytes].view(dtype).reshape(shape)


def aligned_zeros(shape, dtype):
  out = aligned_empty(shape, dtype)
  out[...] = 0
  return out


def _transposed(flat, dtype, lower=False):
  """A new contiguous (count, n, m) array of ``dtype`` holding the
  transposes of flat's matrices (count, m, n); with ``lower``, their lower
  triangles (zeros above the diagonal)."""
  loop = batch_loop_provider() if batch_loop_provider is not None else None
  count, m, n = flat.shape
  if (loop is not None and flat.dtype == dtype and dtype.itemsize in (4, 8, 16)
      and m * n >= COMPILED_TRANSPOSE_MIN and flat.flags.c_contiguous):
    out = aligned_empty((count, n, m), dtype)
    threads = loop[1] if count * m * n >= TRANSPOSE_PARALLEL_MIN else 1
    loop[2](flat.ctypes.data, out.ctypes.data, count, m, n, dtype.itemsize, threads,
            int(lower))
    return out
  out = aligned_empty((count, n, m), dtype)   # always a copy: LAPACK overwrites it
  out[...] = np.swapaxes(flat, -1, -2)
  return np.tril(out) if lower else out


def c_contiguous(x):
  """x in C order: x itself, or a copy (by the compiled transpose for a
  stack of matrices stored column-major, as getrf's factors are)."""
  if x.flags.c_contiguous:
    return x
  columns = np.swapaxes(x, -1, -2) if x.ndim >= 2 else x
  if columns.flags.c_contiguous:
    flat = columns.reshape((-1,) + columns.shape[-2:])
    return _transposed(flat, x.dtype).reshape(x.shape)
  return np.ascontiguousarray(x)


def to_columns(x, dtype):
  """x (..., m, n) as a contiguous (count, n, m) array: each matrix in
  column-major order, converted to ``dtype``."""
  flat = x.reshape((int(np.prod(x.shape[:-2])),) + x.shape[-2:])
  return _transposed(flat, np.dtype(dtype))


def from_columns(t, batch, dtype, lower=False):
  """The inverse of ``to_columns``: matrices (batch..., m, n) in row-major
  (with ``lower``: their lower triangles)."""
  out = _transposed(t, np.dtype(dtype), lower)
  return out.reshape(tuple(batch) + out.shape[-2:])


def _fail_nan(arrays, bad):
  """Sets every matrix ``bad`` (a boolean per batch entry) marks to NaN."""
  if bad.any():
    for a in arrays:
      a[bad] = np.nan




# -- getrf: LU with partial pivoting ---------------------------------------------------

def permutation_from_pivots(pivots, size):
  """The row permutation of LAPACK-style swaps ``pivots`` (0-based, (..., k)),
  as JAX computes it: a negative pivot counts from the end, and one out of
  range swaps with the nearest row's value but writes nothing there."""
  batch, k = pivots.shape[:-1], pivots.shape[-1]
  swaps = pivots.reshape(int(np.prod(batch)), k).astype(np.int64)
  swaps = np.where(swaps < 0, swaps + size, swaps)
  count = swaps.shape[0]
  if count == 1:
    perm = list(range(size))
    for i, j in enumerate(swaps[0].tolist()):
      x, perm[i] = perm[i], perm[min(max(j, 0), size - 1)]
      if 0 <= j < size:
        perm[j] = x
    return np.array(perm, np.int32).reshape(batch + (size,))
  perm = np.tile(np.arange(size, dtype=np.int32), (count, 1))
  rows = np.arange(count)
  for i in range(k):
    j = swaps[:, i]
    x = perm[:, i].copy()
    perm[:, i] = perm[rows, np.clip(j, 0, size - 1)]
    inside = (j >= 0) & (j < size)
    perm[rows[inside], j[inside]] = x[inside]
  return perm.reshape(batch + (size,))


def getrf(x):
  """(lu, pivots, permutation) of x (..., m, n): P x = L U, with 0-based
  int32 pivots.  A singular matrix factorizes (zeros on U's diagonal)."""
  batch, (m, n) = x.shape[:-2], x.shape[-2:]
  k = min(m, n)
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  pivots = aligned_zeros((count, k), np.int32)
  if k and count:
    ints = _Ints(m, n, max(1, m))
    info = np.zeros(count, np.int32)
    _run(_PREFIX[work] + "getrf", count,
         [ints[0], ints[1], _each(t), ints[2], _each(pivots), _each(info)],
         m * n * k * 2 // 3)
    pivots -= 1
  pivots = pivots.reshape(batch + (k,))
  if t.dtype == x.dtype:
    # The factors as a view of the column-major buffer: trsm reads it as it
    # is; a consumer that needs row-major order makes the copy.
    lu = np.swapaxes(t, -1, -2).reshape(batch + (m, n))
  else:
    lu = from_columns(t, batch, x.dtype)
  return lu, pivots, permutation_from_pivots(pivots, m)


# -- trsm: triangular solves -------------------------------------------------------------

def _is_aligned_dense(x, dtype):
  return x.dtype == dtype and x.flags.c_contiguous and x.ctypes.data % 64 == 0


def _row_major(x, dtype):
  """x as a contiguous array of ``dtype`` on a 64-byte boundary: x itself
  when it is one already (read only), else an aligned copy."""
  if _is_aligned_dense(x, dtype):
    return x
  out = aligned_empty(x.shape, dtype)
  out[...] = x
  return out


def trsm(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  """op(a) x = b (left_side) or x op(a) = b for the ``lower`` (else upper)
  triangle of a; a (..., m, m), b (..., m, n) or (..., n, m)."""
  batch, (m, n) = b.shape[:-2], b.shape[-2:]
  work = work_dtype(b.dtype)
  columns = np.swapaxes(a, -1, -2)
  if (not (conjugate_a and not transpose_a) and _is_aligned_dense(columns, work)):
    # a is a column-major buffer seen transposed (getrf's result): BLAS
    # reads the buffer with the flags as given.
    buf, uplo = columns, lower
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
  else:
    # a's row-major buffer is a^T in column-major order: BLAS reads it as
    # is, with the other triangle and the transpose flag flipped (same bits
    # as a transposed copy: the same kernel runs).  Only a^H, the conjugate
    # of the buffer, needs a copy.
    if conjugate_a and transpose_a:
      a = np.conj(a)
      trans = "N"
    else:
      trans = "C" if conjugate_a else ("N" if transpose_a else "T")
    buf, uplo = _row_major(a, work), not lower
  bc = to_columns(b, work)
  count = bc.shape[0]
  if m and n and count:
    ints = _Ints(m, n, a.shape[-1], m)
    one = np.ones(1, work)
    args = [_char("L" if left_side else "R"), _char("L" if uplo else "U"), _char(trans),
            _char("U" if unit_diagonal else "N"), ints[0], ints[1], _ptr(one),
            _each(buf.reshape((count,) + a.shape[-2:])), ints[2], _each(bc), ints[3]]
    _run(_PREFIX[work] + "trsm", count, args, m * n * a.shape[-1])
  return from_columns(bc, batch, b.dtype)


# -- potrf: Cholesky -------------------------------------------------------------------

def potrf(x):
  """The lower Cholesky factor of each matrix of x (reading its lower
  triangle), zeros above the diagonal; NaNs where x is not positive definite."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  bad = np.zeros(count, bool)
  if n and count:
    ints = _Ints(n, n)
    info = np.zeros(count, np.int32)
    _run(_PREFIX[work] + "potrf", count, [_char("L"), ints[0], _each(t), ints[1], _each(info)],
         n ** 3 // 3)
    bad = info != 0
  out = from_columns(t, batch, work, lower=True)
  _fail_nan([out.reshape((count, n, n))], bad)
  return out.astype(x.dtype, copy=False)


# -- QR: geqrf / geqp3 and orgqr / ungqr -------------------------------------------------

def _size(buf, prefix):
  """A workspace size LAPACK wrote as the first float of ``buf`` (with a
  margin: a large one may have been rounded down to a float32)."""
  first = float(buf.view(np.float32 if prefix in "sc" else np.float64)[0])
  return max(1, int(first * (1 + 2 ** -20)) + 1)


@functools.lru_cache(maxsize=None)
def _lwork(name, *key):
  """The optimal workspace size(s) a query (lwork = -1) reports for
  ``name`` with the leading arguments ``key`` (chars as str, ints as int)."""
  base = name[1:]
  dummy = np.zeros(4, np.complex128)
  size = np.zeros(4, np.complex128)     # work[0], complex wide enough
  p = _ptr(dummy)
  ints = _Ints(*[v for v in key if isinstance(v, int)], -1, -1, -1)
  iv = [v for v in key if isinstance(v, int)]
  lw = ints[len(iv)]
  if base == "geqrf":        # m, n
    _call(name, ints[0], ints[1], p, ints[0], p, _ptr(size), lw, ints.info)
  elif base == "geqp3":
    extra = (p,) if name[0] in "cz" else ()
    _call(name, ints[0], ints[1], p, ints[0], p, p, _ptr(size), lw, *extra, ints.info)
  elif base in ("orgqr", "ungqr"):   # m, n, k
    _call(name, ints[0], ints[1], ints[2], p, ints[0], p, _ptr(size), lw, ints.info)
  elif base in ("syevd", "heevd"):   # jobz, uplo, n
    sizes = np.zeros(3, np.complex128)
    iw = np.zeros(2, np.int32)
    jobz, uplo = _char(key[0]), _char(key[1])
    if base == "syevd":
      _call(name, jobz, uplo, ints[0], p, ints[0], p, _ptr(size), lw, _ptr(iw), lw, ints.info)
      return _size(size, name[0]), 0, max(1, int(iw[0]))
    _call(name, jobz, uplo, ints[0], p, ints[0], p, _ptr(size), lw,
          _ptr(sizes), lw, _ptr(iw), lw, ints.info)
    return _size(size, name[0]), _size(sizes, name[0]), max(1, int(iw[0]))
  elif base == "gesdd":      # jobz, m, n, ldu, ldvt
    m, n, ldu, ldvt = iv
    extra = (p,) if name[0] in "cz" else ()
    _call(name, _char(key[0]), ints[0], ints[1], p, ints[0], p, p, ints[2], p, ints[3],
          _ptr(size), lw, *extra, p, ints.info)
  elif base == "geev":       # jobvl, jobvr, n
    if name[0] in "cz":
      _call(name, _char(key[0]), _char(key[1]), ints[0], p, ints[0], p, p, ints[0], p,
            ints[0], _ptr(size), lw, p, ints.info)
    else:
      _call(name, _char(key[0]), _char(key[1]), ints[0], p, ints[0], p, p, p, ints[0], p,
            ints[0], _ptr(size), lw, ints.info)
  else:
    raise ValueError(name)
  return _size(size, name[0])


def geqrf(x):
  """(a, taus): R on and above a's diagonal, the Householder vectors below."""
  batch, (m, n) = x.shape[:-2], x.shape[-2:]
  k = min(m, n)
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  taus = aligned_zeros((count, k), work)
  if k and count:
    _geqrf_into(t, taus, m, n, work)
  return from_columns(t, batch, x.dtype), taus.reshape(batch + (k,)).astype(x.dtype)


def _geqrf_into(t, taus, m, n, work, jpvt=None):
  name = _PREFIX[work] + ("geqrf" if jpvt is None else "geqp3")
  lwork = _lwork(name, m, n)
  ints = _Ints(m, n, lwork)
  info = np.zeros(t.shape[0], np.int32)
  piv = [] if jpvt is None else [_each(jpvt)]
  rwork = [_Work(2 * n, real_of(work))] if (jpvt is not None and work.kind == "c") else []
  _run(name, t.shape[0], [ints[0], ints[1], _each(t), ints[0]] + piv +
       [_each(taus), _Work(lwork, work), ints[2]] + rwork + [_each(info)], m * n * min(m, n))


def _orgqr_into(t, taus, m, n, k, work):
  """Q's first n columns (in place of t, (count, n, m)) from k reflectors."""
  name = _PREFIX[work] + ("ungqr" if work.kind == "c" else "orgqr")
  lwork = _lwork(name, m, n, k)
  ints = _Ints(m, n, k, lwork)
  info = np.zeros(t.shape[0], np.int32)
  _run(name, t.shape[0], [ints[0], ints[1], ints[2], _each(t), ints[0], _each(taus),
                          _Work(lwork, work), ints[3], _each(info)], m * n * k)


def orgqr(a, taus):
  """The Q (shape of a, m >= n) of the reflectors below a's diagonal."""
  batch, (m, n), k = a.shape[:-2], a.shape[-2:], taus.shape[-1]
  work = work_dtype(a.dtype)
  t = to_columns(a, work)
  if t.shape[0] and m and n:
    tau = np.ascontiguousarray(taus.reshape(-1, k), dtype=work)
    if k == 0:
      t[:] = np.eye(n, m, dtype=work)
    else:
      _orgqr_into(t, tau, m, n, k, work)
  else:
    t[:] = np.eye(n, m, dtype=work)
  return from_columns(t, batch, a.dtype)


def qr(x, *, pivoting, full_matrices):
  """[q, r] (and the column permutation when ``pivoting``) as JAX's CPU
  computes them: geqrf (geqp3) then orgqr/ungqr."""
  batch, (m, n) = x.shape[:-2], x.shape[-2:]
  k = min(m, n)
  qcols = m if full_matrices else k
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  taus = aligned_zeros((count, k), work)
  jpvt = aligned_zeros((count, n), np.int32) if pivoting else None
  if k and count:
    _geqrf_into(t, taus, m, n, work, jpvt)
  r = np.triu(from_columns(t, batch, work))[..., :qcols, :]
  if qcols > n:   # Q's columns beyond n need room in the reflectors' array
    q = aligned_zeros((count, qcols, m), work)
    q[:, :n, :] = t
  else:
    q = t[:, :qcols, :].copy()
  if count and m:
    if k:
      _orgqr_into(q, taus, m, qcols, k, work)
    else:
      q[:] = np.eye(qcols, m, dtype=work)
  outs = [from_columns(q, batch, x.dtype), r.astype(x.dtype, copy=False)]
  if pivoting:
    if not k:
      jpvt[:] = np.arange(1, n + 1, dtype=np.int32)
    outs.append((jpvt - 1).reshape(batch + (n,)))
  return outs


# -- syevd / heevd: Hermitian eigendecomposition ------------------------------------------

def syevd(x, *, lower, vectors=True):
  """(v, w): eigenvectors (columns) and ascending eigenvalues of each
  Hermitian matrix of x, reading its lower (else upper) triangle; NaNs
  where LAPACK fails to converge.  Without ``vectors``: (None, w), about
  half the work (no back-transformation, no divide and conquer)."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  real = real_of(work)
  t = to_columns(x, work)
  count = t.shape[0]
  w = aligned_zeros((count, n), real)
  bad = np.zeros(count, bool)
  if n and count:
    uplo = "L" if lower else "U"
    complex_ = work.kind == "c"
    name = _PREFIX[work] + ("heevd" if complex_ else "syevd")
    jobz = "V" if vectors else "N"
    lwork, lrwork, liwork = _lwork(name, jobz, uplo, n)
    ints = _Ints(n, max(1, lwork), max(1, lrwork), liwork)
    info = np.zeros(count, np.int32)
    args = [_char(jobz), _char(uplo), ints[0], _each(t), ints[0], _each(w),
            _Work(lwork, work), ints[1]]
    if complex_:
      args += [_Work(lrwork, real), ints[2]]
    args += [_Work(liwork, np.int32), ints[3], _each(info)]
    # About 4 n^3 multiply-adds with vectors; without, 4/3 n^3 in the
    # reduction to tridiagonal form.
    _run(name, count, args, 4 * n ** 3 if vectors else 4 * n ** 3 // 3)
    bad = info != 0
  _fail_nan([t, w], bad)
  v = from_columns(t, batch, x.dtype) if vectors else None
  return v, w.reshape(batch + (n,))


# -- gesdd: singular value decomposition ---------------------------------------------------

def gesdd(x, *, full_matrices, compute_uv):
  """[s] or [s, u, vh] of each matrix of x (divide and conquer); NaNs where
  LAPACK fails."""
  batch, (m, n) = x.shape[:-2], x.shape[-2:]
  k = min(m, n)
  work = work_dtype(x.dtype)
  real = real_of(work)
  t = to_columns(x, work)
  count = t.shape[0]
  jobz = ("A" if full_matrices else "S") if compute_uv else "N"
  ucols, vrows = (m, n) if full_matrices else (k, k)
  s = aligned_zeros((count, k), real)
  u = aligned_zeros((count, ucols, m) if compute_uv else (1, 1, 1), work)
  vt = aligned_zeros((count, n, vrows) if compute_uv else (1, 1, 1), work)
  bad = np.zeros(count, bool)
  if k and count:
    complex_ = work.kind == "c"
    name = _PREFIX[work] + "gesdd"
    ldu, ldvt = (m, vrows) if compute_uv else (1, 1)
    lwork = _lwork(name, jobz, m, n, ldu, ldvt)
    mx = max(m, n)
    rwork = [_Work(max(7 * k, 5 * k * k + 7 * k, 2 * mx * k + 2 * k * k + k), real)] \
        if complex_ else []
    ints = _Ints(m, n, ldu, ldvt, lwork)
    info = np.zeros(count, np.int32)
    ui = _each(u) if compute_uv else _Work(1, work)
    vi = _each(vt) if compute_uv else _Work(1, work)
    _run(name, count, [_char(jobz), ints[0], ints[1], _each(t), ints[0], _each(s), ui,
                       ints[2], vi, ints[3], _Work(lwork, work), ints[4]] + rwork +
         [_Work(8 * k, np.int32), _each(info)], (4 if compute_uv else 2) * m * n * k)
    bad = info != 0
  _fail_nan([s] + ([u, vt] if compute_uv else []), bad)
  s = s.reshape(batch + (k,))
  if not compute_uv:
    return [s]
  return [s, from_columns(u, batch, x.dtype), from_columns(vt, batch, x.dtype)]


# -- geev: general eigendecomposition --------------------------------------------------------

def _unpack_real_vectors(v, wi):
  """geev's real eigenvectors (count, n columns, n) as complex ones: a
  conjugate pair's columns j, j+1 hold the real and imaginary parts."""
  out = v.astype(np.result_type(v.dtype, np.complex64))
  first = (wi > 0) & (np.arange(wi.shape[-1]) < wi.shape[-1] - 1)
  for c, j in zip(*np.nonzero(first)):
    re, im = v[c, j], v[c, j + 1]
    out[c, j] = re + 1j * im
    out[c, j + 1] = re - 1j * im
  return out


def geev(x, *, left, right):
  """[w] + [vl] + [vr] (as requested) of each square matrix of x, complex,
  with geev's normalization; NaNs where LAPACK fails."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  cdtype = np.dtype(np.complex64) if real_of(work) == np.float32 else \
      np.dtype(np.complex128)
  t = to_columns(x, work)
  count = t.shape[0]
  complex_ = work.kind == "c"
  w = aligned_zeros((count, n), cdtype)
  wr, wi = aligned_zeros((count, n), work), aligned_zeros((count, n), work)
  vl = aligned_zeros((count, n, n) if left else (1, 1, 1), work)
  vr = aligned_zeros((count, n, n) if right else (1, 1, 1), work)
  bad = np.zeros(count, bool)
  if n and count:
    jl, jr = "V" if left else "N", "V" if right else "N"
    name = _PREFIX[work] + "geev"
    lwork = _lwork(name, jl, jr, n)
    ints = _Ints(n, n if left else 1, n if right else 1, lwork)
    info = np.zeros(count, np.int32)
    li = _each(vl) if left else _Work(1, work)
    ri = _each(vr) if right else _Work(1, work)
    values = [_each(w)] if complex_ else [_each(wr), _each(wi)]
    rwork = [_Work(2 * n, real_of(work))] if complex_ else []
    _run(name, count, [_char(jl), _char(jr), ints[0], _each(t), ints[0]] + values +
         [li, ints[1], ri, ints[2], _Work(lwork, work), ints[3]] + rwork + [_each(info)],
         10 * n ** 3)
    bad = info != 0
  if not complex_:
    w = (wr + 1j * wi).astype(cdtype)
    vl = _unpack_real_vectors(vl, wi) if left else vl
    vr = _unpack_real_vectors(vr, wi) if right else vr
  outs = [w] + ([vl.astype(cdtype, copy=False)] if left else []) + \
      ([vr.astype(cdtype, copy=False)] if right else [])
  _fail_nan(outs, bad)
  return [outs[0].reshape(batch + (n,))] + [from_columns(v, batch, cdtype) for v in outs[1:]]


# -- gtsv: tridiagonal solve ---------------------------------------------------------------

def gtsv(dl, d, du, b):
  """x with A x = b for the tridiagonal A of sub-diagonal dl (dl[..., 0]
  unused), diagonal d and super-diagonal du (du[..., -1] unused); Gaussian
  elimination with partial pivoting; NaNs where A is singular."""
  batch, (m, k) = b.shape[:-2], b.shape[-2:]
  work = work_dtype(b.dtype)
  count = int(np.prod(batch))
  flat = lambda v: np.array(v.reshape(count, m), dtype=work, order="C", copy=True)
  lo, diag, up = flat(dl)[:, 1:].copy(), flat(d), flat(du)[:, :-1].copy()
  bc = to_columns(b, work)
  bad = np.zeros(count, bool)
  if m and k and count:
    ints = _Ints(m, k)
    info = np.zeros(count, np.int32)
    _run(_PREFIX[work] + "gtsv", count, [ints[0], ints[1], _each(lo), _each(diag), _each(up),
                                         _each(bc), ints[0], _each(info)], 0)
    bad = info != 0
  _fail_nan([bc], bad)
  return from_columns(bc, batch, b.dtype)
