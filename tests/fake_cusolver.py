"""The cuSOLVER and cuBLAS routines of CuPy's low-level bindings
(``cupy.cuda.cusolver``, ``cupy.cuda.cublas``) for the stand-in CuPy
(tests/fake_cupy.py), whose arrays are host memory: each routine runs the
LAPACK (BLAS) routine of the same name, from SciPy, on the memory its
pointer arguments address.  Arguments are cuSOLVER's, in its order (a
handle first, enums as ints, workspaces sized by the ``_bufferSize``
query, ``info`` written to device memory), and its restrictions are
checked (gesvd takes no wide matrix): a call that is wrong for cuSOLVER
fails here.  ``calls`` lists the routines called, in order."""
import ctypes
import types

import numpy as np

from purejax._src.lax import lapack

# CuPy's values of cuBLAS's and cuSOLVER's enums.
CUBLAS = dict(CUBLAS_FILL_MODE_LOWER=0, CUBLAS_FILL_MODE_UPPER=1, CUBLAS_SIDE_LEFT=0,
              CUBLAS_SIDE_RIGHT=1, CUBLAS_OP_N=0, CUBLAS_OP_T=1, CUBLAS_OP_C=2,
              CUBLAS_DIAG_NON_UNIT=0, CUBLAS_DIAG_UNIT=1)
CUSOLVER = dict(CUSOLVER_EIG_MODE_NOVECTOR=0, CUSOLVER_EIG_MODE_VECTOR=1)
_DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
_REAL = {"s": np.float32, "d": np.float64, "c": np.float32, "z": np.float64}
CUSOLVER_HANDLE, CUBLAS_HANDLE = 11, 22


class _Args:
  """A Fortran call's arguments: everything by reference."""

  def __init__(self):
    self.keep = []

  def int(self, v):
    buf = np.array([v], np.int32)
    self.keep.append(buf)
    return buf.ctypes.data

  def char(self, c):
    buf = ctypes.create_string_buffer(c.encode())
    self.keep.append(buf)
    return ctypes.addressof(buf)

  def buffer(self, size, dtype):
    buf = np.zeros(max(1, int(size)), dtype)
    self.keep.append(buf)
    return buf.ctypes.data


def _fortran(name, *args):
  fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(args))(
      lapack.capsule_address("cython_blas" if name[1:] == "trsm" else "cython_lapack", name))
  fn(*args)


def _query(name, *leading):
  """LAPACK's optimal workspace size (lwork = -1) for ``name``: ``leading``
  are the call's arguments before its work argument, as (kind, value)."""
  a = _Args()
  out = np.zeros(2, np.complex128)
  args = [a.int(v) if k == "i" else a.char(v) if k == "c" else a.buffer(64, np.complex128)
          for k, v in leading]
  _fortran(name, *args, out.ctypes.data, a.int(-1), a.buffer(1, np.int32))
  first = out.view(np.float32 if name[0] in "sc" else np.float64)[0]
  return max(1, int(first) + 1)


def _captured(name, args):
  """(the arguments a captured graph replays the call with, what they
  point to): trsm's alpha is read from the host at the call (host pointer
  mode), so the graph keeps a copy."""
  if "trsm" not in name:
    return args, None
  alpha = np.empty(1, _DTYPES[name[0]])
  ctypes.memmove(alpha.ctypes.data, args[6], alpha.itemsize)
  return args[:6] + (alpha.ctypes.data,) + args[7:], alpha


class FakeSolverLibraries:
  """``cupy.cuda.cusolver``, ``cupy.cuda.cublas`` and the handles of
  ``cupy.cuda.device`` as namespaces."""

  def __init__(self):
    self.calls = []
    self.record = lambda replay: None   # the stand-in CuPy's graph capture
    self.cusolver = types.SimpleNamespace(**CUSOLVER)
    self.cublas = types.SimpleNamespace(**CUBLAS)
    self.device = types.SimpleNamespace(get_cusolver_handle=lambda: CUSOLVER_HANDLE,
                                        get_cublas_handle=lambda: CUBLAS_HANDLE)
    for p in "sdcz":
      for name in ("potrf", "getrf", "geqrf", "syevd", "gesvd"):
        name = {"syevd": "heevd"}.get(name, name) if p in "cz" else name
        self._add(self.cusolver, p + name, getattr(self, "_" + name.replace("heevd", "syevd")), p)
      orgqr = ("ungqr" if p in "cz" else "orgqr")
      self._add(self.cusolver, p + orgqr, self._orgqr, p)
      self._add(self.cusolver, p + ("unmqr" if p in "cz" else "ormqr"), self._ormqr, p)
      self._add(self.cublas, p + "trsm", self._trsm, p)
      self._add(self.cusolver, p + "potrfBatched", self._batched(self._potrf, p + "potrf"), p)
      self._add(self.cublas, p + "getrfBatched", self._batched(self._getrf, p + "getrf"), p)
      self._add(self.cublas, p + "trsmBatched", self._batched(self._trsm, p + "trsm"), p)

  def _add(self, lib, name, method, p):
    routine, size = method(p, name)

    def call(handle, *args):
      assert handle == (CUBLAS_HANDLE if lib is self.cublas else CUSOLVER_HANDLE), name
      self.calls.append(name)
      captured, kept = _captured(name, args)
      self.record(lambda: (kept, routine(*captured)))
      return routine(*args)
    setattr(lib, name, call)
    if size is not None:
      setattr(lib, name + "_bufferSize",
              lambda handle, *args: size(*args) if handle == CUSOLVER_HANDLE else None)

  def _batched(self, method, name):
    """The batched routine of ``name``: the same arguments, matrices given
    by device arrays of their addresses, an info (getrf: pivots too) per
    matrix, the batch size last; the routine run on each matrix."""
    single, _ = method(name[0], name)

    def addresses(ptr, count):
      return np.ctypeslib.as_array((ctypes.c_uint64 * count).from_address(ptr)).tolist()

    def potrf(uplo, n, a_array, lda, info, count):
      for i, a in enumerate(addresses(a_array, count)):
        f = _Args()
        _fortran(name, f.char(self._fill(uplo)), f.int(n), a, f.int(lda), info + 4 * i)

    def getrf(n, a_array, lda, pivots, info, count):
      for i, a in enumerate(addresses(a_array, count)):
        single(n, n, a, lda, 1, pivots + 4 * n * i, info + 4 * i)

    def trsm(side, uplo, trans, diag, m, n, alpha, a_array, lda, b_array, ldb, count):
      for a, b in zip(addresses(a_array, count), addresses(b_array, count)):
        single(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb)
    routine = {"potrf": potrf, "getrf": getrf, "trsm": trsm}[name[1:]]
    return lambda p, batched_name: (routine, None)

  @staticmethod
  def _fill(uplo):
    return "L" if uplo == CUBLAS["CUBLAS_FILL_MODE_LOWER"] else "U"

  def _potrf(self, p, name):
    def run(uplo, n, a, lda, work, lwork, info):
      assert work and lwork >= 1 and lda >= max(1, n)
      f = _Args()
      _fortran(name, f.char(self._fill(uplo)), f.int(n), a, f.int(lda), info)
    return run, lambda uplo, n, a, lda: n

  def _getrf(self, p, name):
    def run(m, n, a, lda, work, ipiv, info):
      assert work and lda >= max(1, m)
      f = _Args()
      _fortran(name, f.int(m), f.int(n), a, f.int(lda), ipiv, info)
    return run, lambda m, n, a, lda: m * n

  def _geqrf(self, p, name):
    size = lambda m, n, a, lda: _query(name, ("i", m), ("i", n), ("p", 0), ("i", lda),
                                       ("p", 0))

    def run(m, n, a, lda, tau, work, lwork, info):
      assert lwork >= size(m, n, a, lda) and lda >= max(1, m)
      f = _Args()
      _fortran(name, f.int(m), f.int(n), a, f.int(lda), tau, work, f.int(lwork), info)
    return run, size

  def _orgqr(self, p, name):
    size = lambda m, n, k, a, lda, tau: _query(name, ("i", m), ("i", n), ("i", k), ("p", 0),
                                               ("i", lda), ("p", 0))

    def run(m, n, k, a, lda, tau, work, lwork, info):
      assert lwork >= size(m, n, k, a, lda, tau) and m >= n >= k
      f = _Args()
      _fortran(name, f.int(m), f.int(n), f.int(k), a, f.int(lda), tau, work, f.int(lwork),
               info)
    return run, size

  def _ormqr(self, p, name):
    def chars(side, trans):
      return ("L" if side == CUBLAS["CUBLAS_SIDE_LEFT"] else "R"), "NTC"[trans]

    def size(side, trans, m, n, k, a, lda, tau, c, ldc):
      s, t = chars(side, trans)
      return _query(name, ("c", s), ("c", t), ("i", m), ("i", n), ("i", k), ("p", 0),
                    ("i", lda), ("p", 0), ("p", 0), ("i", ldc))

    def run(side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info):
      assert lwork >= size(side, trans, m, n, k, a, lda, tau, c, ldc) and ldc >= max(1, m)
      s, t = chars(side, trans)
      assert t != ("T" if p in "cz" else "C"), "unmqr takes N or C, ormqr N or T"
      f = _Args()
      _fortran(name, f.char(s), f.char(t), f.int(m), f.int(n), f.int(k), a, f.int(lda), tau,
               c, f.int(ldc), work, f.int(lwork), info)
    return run, size

  def _syevd(self, p, name):
    def run(jobz, uplo, n, a, lda, w, work, lwork, info):
      assert work and lwork >= n and lda >= max(1, n)
      f = _Args()
      job = "V" if jobz == CUSOLVER["CUSOLVER_EIG_MODE_VECTOR"] else "N"
      sizes = [1 + 6 * n + 2 * n * n, 1 + 5 * n + 2 * n * n, 3 + 5 * n]   # LAPACK's minima
      args = [f.char(job), f.char(self._fill(uplo)), f.int(n), a, f.int(lda), w,
              f.buffer(sizes[0], _DTYPES[p]), f.int(sizes[0])]
      if p in "cz":
        args += [f.buffer(sizes[1], _REAL[p]), f.int(sizes[1])]
      _fortran(name, *args, f.buffer(sizes[2], np.int32), f.int(sizes[2]), info)
    return run, lambda jobz, uplo, n, a, lda, w: max(1, n)

  def _gesvd(self, p, name):
    def run(jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info):
      assert m >= n, "cuSOLVER's gesvd takes no matrix with fewer rows than columns"
      assert work and lwork >= 1 and lda >= max(1, m)
      ju, jv = chr(jobu), chr(jobvt)
      assert ldu >= (m if ju in "AS" else 1) and ldvt >= (n if jv in "AS" else 1)
      f = _Args()
      size = 5 * (m + n) * 8 + 64
      extra = [f.buffer(5 * min(m, n), _REAL[p])] if p in "cz" else []
      _fortran(name, f.char(ju), f.char(jv), f.int(m), f.int(n), a, f.int(lda), s, u,
               f.int(ldu), vt, f.int(ldvt), f.buffer(size, _DTYPES[p]), f.int(size), *extra,
               info)
    return run, lambda m, n: m * n

  def _trsm(self, p, name):
    def run(side, uplo, trans, diag, m, n, alpha, a, lda, b, ldb):
      k = m if side == CUBLAS["CUBLAS_SIDE_LEFT"] else n
      assert lda >= max(1, k) and ldb >= max(1, m)
      f = _Args()
      _fortran(name, f.char("L" if side == CUBLAS["CUBLAS_SIDE_LEFT"] else "R"),
               f.char(self._fill(uplo)), f.char("NTC"[trans]),
               f.char("U" if diag == CUBLAS["CUBLAS_DIAG_UNIT"] else "N"), f.int(m), f.int(n),
               alpha, a, f.int(lda), b, f.int(ldb))
    return run, None
