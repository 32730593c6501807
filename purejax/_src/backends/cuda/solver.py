"""Linear algebra on a GPU's arrays: the routines of ``lax.lapack``'s
interface that the lax.linalg primitives call (potrf, getrf, trsm, geqrf,
orgqr, qr, syevd, gesdd, permutation_from_pivots; and ``lapack_reflectors``'
ormqr), computed by cuSOLVER
and cuBLAS through CuPy's bindings (``cupy.cuda.cusolver``,
``cupy.cuda.cublas``) on device arrays.  Results are device arrays;
nothing is copied to the host, not even a routine's ``info``: where it
reports a failure, that matrix's results are NaN (as JAX's), selected on
the device.

Layout: the libraries take column-major matrices, and a C-ordered matrix's
buffer is its transpose in column-major order.  potrf and trsm solve the
transposed problem on the buffer as it is (potrf reads the other triangle;
trsm solves from the other side); the others work on transposed copies,
made on the device, as the CPU's LAPACK calls do.  cuSOLVER's gesvd takes
only matrices with at least as many rows as columns: a wider matrix's
buffer is its (taller) transpose, whose factors are the matrix's swapped.

A batch of small matrices (at most ``BATCHED_MAX`` rows) is one call of
the libraries' batched routines (potrfBatched, cuBLAS's getrfBatched and
trsmBatched, which take device arrays of the matrices' addresses), as
JAX's GPU backend does; otherwise it is one call per matrix.  The pivots'
permutation is a small CUDA kernel (a thread per matrix).  lax.linalg's other primitives (eig, schur,
hessenberg, tridiagonal (CuPy binds no sytrd), pivoted qr) run on host
copies; tridiagonal_solve is a kernel (``tridiagonal``).
"""
import contextlib
import math

import numpy as np

from purejax._src.backends.cuda import device_prelude, gpu_runtime
from purejax._src.backends.cuda.kernels import Launch
from purejax._src.lax import lapack

_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
           np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
# Batches of matrices of at most this many rows go to the batched routines
# (one launch for the batch; made for small matrices).
BATCHED_MAX = 128


class _Call:
  """What every routine needs: CuPy, its cuSOLVER and cuBLAS bindings and
  their handles, the computing dtype and its routine prefix."""

  def __init__(self, dtype):
    self.cp = gpu_runtime.cupy()
    self.solver, self.blas = self.cp.cuda.cusolver, self.cp.cuda.cublas
    self.work = lapack.work_dtype(dtype)
    self.real = lapack.real_of(self.work)
    self.prefix = _PREFIX[self.work]

  def routine(self, name, suffix=""):
    """The library's routine ``name`` (``suffix``: "_bufferSize", its
    workspace query) for this dtype: orgqr, ormqr and syevd are ungqr,
    unmqr and heevd for complex values."""
    lib = self.blas if name == "trsm" else self.solver
    if self.work.kind == "c":
      name = {"orgqr": "ungqr", "ormqr": "unmqr", "syevd": "heevd"}.get(name, name)
    return getattr(lib, self.prefix + name + suffix)

  @property
  def handle(self):
    return self.cp.cuda.device.get_cusolver_handle()

  @property
  def blas_handle(self):
    return self.cp.cuda.device.get_cublas_handle()

  def batched(self, lib, name):
    return getattr(lib, self.prefix + name + "Batched")

  def addresses(self, a):
    """A device array of the addresses of a's matrices (a contiguous
    (count, ...) array), for the batched routines."""
    step = a.strides[0]
    return self.cp.arange(a.data.ptr, a.data.ptr + step * a.shape[0], step, dtype=np.uint64)

  def workspace(self, size):
    return self.cp.empty(max(1, int(size)), self.work)

  def fail_nan(self, arrays, info):
    """``arrays`` (batch entries first) with NaN in every matrix whose
    ``info`` is not 0."""
    bad = info != 0
    return [self.cp.where(bad.reshape(bad.shape + (1,) * (a.ndim - 1)),
                          self.cp.full((), np.nan, a.dtype), a) for a in arrays]


@contextlib.contextmanager
def _on(x):
  """Calls made on the GPU ``x`` is on (cuSOLVER's handle is per device)."""
  with gpu_runtime.cupy().cuda.Device(x.device.id):
    yield


def _count(batch):
  return int(math.prod(batch))


def _matrices(x):
  """(the call for x's dtype, batch shape, m, n, min(m, n), matrix count) of
  x (..., m, n)."""
  batch, (m, n) = x.shape[:-2], x.shape[-2:]
  return _Call(x.dtype), batch, m, n, min(m, n), _count(batch)


def _pointers(a):
  """The address of each matrix of ``a`` (a contiguous (count, ...) array)."""
  step = a.strides[0] if a.ndim else 0
  return [a.data.ptr + i * step for i in range(a.shape[0])]


def _columns(x, dtype):
  """x (..., m, n) as a new contiguous (count, n, m) array of ``dtype``:
  each matrix in column-major order."""
  m, n = x.shape[-2:]
  return x.reshape((_count(x.shape[:-2]), m, n)).swapaxes(1, 2).astype(
      dtype, order="C", copy=True)


def _rows(t, batch, dtype):
  """The inverse of ``_columns``: (batch..., m, n) in C order."""
  cp = gpu_runtime.cupy()
  out = cp.ascontiguousarray(t.swapaxes(1, 2)).astype(dtype, copy=False)
  return out.reshape(tuple(batch) + out.shape[1:])


# -- potrf: Cholesky ----------------------------------------------------------------

def potrf(x):
  """lapack.potrf on the device: the lower Cholesky factor (zeros above the
  diagonal), NaN where a matrix is not positive definite."""
  c = _Call(x.dtype)
  batch, n = x.shape[:-2], x.shape[-1]
  count = _count(batch)
  with _on(x):
    # The C-ordered buffer read as column-major is x^T: its upper triangle
    # is x's lower, and its upper factor U, read back in C order, is U^T,
    # x's lower factor L (for complex x too: U^H U = conj(x) there).
    t = x.reshape((count, n, n)).astype(c.work, order="C", copy=True)
    info = c.cp.zeros((count,), np.int32)
    upper = c.blas.CUBLAS_FILL_MODE_UPPER
    if n and 1 < count and n <= BATCHED_MAX:
      pt = c.addresses(t)
      c.batched(c.solver, "potrf")(c.handle, upper, n, pt.data.ptr, n, info.data.ptr, count)
    elif n and count:
      h = c.handle
      size = c.routine("potrf", "_bufferSize")(h, upper, n, t.data.ptr, n)
      ws = c.workspace(size)
      potrf_ = c.routine("potrf")
      for a, i in zip(_pointers(t), _pointers(info)):
        potrf_(h, upper, n, a, n, ws.data.ptr, max(1, size), i)
    (out,) = c.fail_nan([c.cp.tril(t)], info)
    return out.astype(x.dtype, copy=False).reshape(x.shape)


# -- getrf: LU with partial pivoting -------------------------------------------------------

def getrf(x):
  """lapack.getrf on the device: (lu, 0-based int32 pivots, permutation)."""
  c, batch, m, n, k, count = _matrices(x)
  with _on(x):
    t = _columns(x, c.work)
    pivots = c.cp.zeros((count, k), np.int32)
    info = c.cp.zeros((count,), np.int32)
    if k and 1 < count and m == n <= BATCHED_MAX:
      pt = c.addresses(t)
      c.batched(c.blas, "getrf")(c.blas_handle, n, pt.data.ptr, n, pivots.data.ptr,
                                 info.data.ptr, count)
      pivots = pivots - 1
    elif k and count:
      h = c.handle
      size = c.routine("getrf", "_bufferSize")(h, m, n, t.data.ptr, m)
      ws = c.workspace(size)
      getrf_ = c.routine("getrf")
      for a, p, i in zip(_pointers(t), _pointers(pivots), _pointers(info)):
        getrf_(h, m, n, a, m, ws.data.ptr, p, i)   # info > 0: a zero on U's diagonal, no failure
      pivots = pivots - 1
    pivots = pivots.reshape(tuple(batch) + (k,))
    return _rows(t, batch, x.dtype), pivots, permutation_from_pivots(pivots, m)


# The permutation of LAPACK-style row swaps, as JAX's (lax.lapack's
# permutation_from_pivots): a negative pivot counts from the end; the row
# read is clamped into range, the row written dropped when out of range.
_PIVOTS_KERNEL = r"""
extern "C" __global__ void pj_pivots_to_permutation(const int32_t* __restrict__ pivots,
                                                    int32_t* __restrict__ perm) {
  for (int64_t b = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; b < COUNT;
       b += (int64_t)blockDim.x * gridDim.x) {
    int32_t* p = perm + b * SIZE;
    const int32_t* swaps = pivots + b * K;
    for (int64_t i = 0; i < SIZE; i++) p[i] = (int32_t)i;
    for (int64_t i = 0; i < K; i++) {
      int64_t j = swaps[i] < 0 ? (int64_t)swaps[i] + SIZE : (int64_t)swaps[i];
      int64_t read = j < 0 ? 0 : (j >= SIZE ? SIZE - 1 : j);
      int32_t x = p[i], y = p[read];
      p[i] = y;
      if (j >= 0 && j < SIZE) p[j] = x;
    }
  }
}
"""

_modules = {}


def pivots_source(count, k, size):
  """The permutation kernel's module source for these sizes."""
  return (device_prelude.HEADER + f"#define COUNT {count}LL\n#define K {k}LL\n"
          f"#define SIZE {size}LL\n" + _PIVOTS_KERNEL)


def _pivots_module(count, k, size, index):
  """The permutation kernel's module for these sizes on GPU ``index``
  (compiled once per CuPy module in use, sizes and device)."""
  cp = gpu_runtime.cupy()
  key = (id(cp), count, k, size, index)
  entry = _modules.get(key)
  if entry is None or entry[0] is not cp:
    entry = _modules[key] = (cp, gpu_runtime.DeviceModule(pivots_source(count, k, size),
                                                          index))
  return entry[1]


def permutation_from_pivots(pivots, size):
  """lapack.permutation_from_pivots on the device (pivots (..., k), int32)."""
  cp = gpu_runtime.cupy()
  batch, k = pivots.shape[:-1], pivots.shape[-1]
  count = _count(batch)
  with _on(pivots):
    perm = cp.empty((count, size), np.int32)
    if count and size:
      swaps = cp.ascontiguousarray(pivots.reshape((count, k))).astype(np.int32, copy=False)
      module = _pivots_module(count, k, size, pivots.device.id)
      module.launch(Launch("pj_pivots_to_permutation", count, ()), [swaps, perm])
    return perm.reshape(tuple(batch) + (size,))


# -- trsm: triangular solves ------------------------------------------------------------------

def trsm(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  """lapack.trsm on the device: op(a) x = b (left_side) or x op(a) = b."""
  c = _Call(b.dtype)
  batch, (m, n) = b.shape[:-2], b.shape[-2:]
  k, count = a.shape[-1], _count(batch)
  with _on(b):
    # C-ordered buffers are the transposes: op(a) x = b is x^T op(a)^T = b^T,
    # solved from the other side with the other triangle.  op(a)^T is the
    # buffer a^T under the same operation (N, T, or C: a^H^T = conj(a));
    # a conjugate without transpose needs a conjugated copy.
    if conjugate_a and not transpose_a:
      a, trans = c.cp.conj(a), c.blas.CUBLAS_OP_N
    else:
      trans = (c.blas.CUBLAS_OP_C if conjugate_a else c.blas.CUBLAS_OP_T) if transpose_a \
          else c.blas.CUBLAS_OP_N
    ac = c.cp.ascontiguousarray(a.reshape((count, k, k))).astype(c.work, copy=False)
    bc = b.reshape((count, m, n)).astype(c.work, order="C", copy=True)
    if m and n and count:
      side = c.blas.CUBLAS_SIDE_RIGHT if left_side else c.blas.CUBLAS_SIDE_LEFT
      uplo = c.blas.CUBLAS_FILL_MODE_UPPER if lower else c.blas.CUBLAS_FILL_MODE_LOWER
      diag = c.blas.CUBLAS_DIAG_UNIT if unit_diagonal else c.blas.CUBLAS_DIAG_NON_UNIT
      one = np.ones(1, c.work)   # alpha, read from the host
      h = c.blas_handle
      if 1 < count and k <= BATCHED_MAX:
        pa, pb = c.addresses(ac), c.addresses(bc)   # (held until the call is made)
        c.batched(c.blas, "trsm")(h, side, uplo, trans, diag, n, m, one.ctypes.data,
                                  pa.data.ptr, k, pb.data.ptr, n, count)
      else:
        trsm_ = c.routine("trsm")
        for pa, pb in zip(_pointers(ac), _pointers(bc)):
          trsm_(h, side, uplo, trans, diag, n, m, one.ctypes.data, pa, k, pb, n)
    return bc.astype(b.dtype, copy=False).reshape(b.shape)


# -- QR: geqrf, orgqr/ungqr ---------------------------------------------------------------------

def _geqrf_into(c, t, taus, m, n):
  """Householder QR of each column-major m x n matrix of t, in place."""
  h = c.handle
  info = c.cp.zeros((t.shape[0],), np.int32)
  size = c.routine("geqrf", "_bufferSize")(h, m, n, t.data.ptr, m)
  ws = c.workspace(size)
  geqrf_ = c.routine("geqrf")
  for a, tau, i in zip(_pointers(t), _pointers(taus), _pointers(info)):
    geqrf_(h, m, n, a, m, tau, ws.data.ptr, max(1, size), i)


def _orgqr_into(c, q, taus, m, n, k):
  """Q's first n columns (in place of q, (count, n, m)) from k reflectors."""
  h = c.handle
  info = c.cp.zeros((q.shape[0],), np.int32)
  size = c.routine("orgqr", "_bufferSize")(h, m, n, k, q.data.ptr, m, taus.data.ptr)
  ws = c.workspace(size)
  orgqr_ = c.routine("orgqr")
  for a, tau, i in zip(_pointers(q), _pointers(taus), _pointers(info)):
    orgqr_(h, m, n, k, a, m, tau, ws.data.ptr, max(1, size), i)


def geqrf(x):
  """lapack.geqrf on the device: (a, taus)."""
  c, batch, m, n, k, count = _matrices(x)
  with _on(x):
    t = _columns(x, c.work)
    taus = c.cp.zeros((count, k), c.work)
    if k and count:
      _geqrf_into(c, t, taus, m, n)
    return _rows(t, batch, x.dtype), taus.reshape(tuple(batch) + (k,)).astype(x.dtype)


def orgqr(a, taus):
  """lapack.orgqr on the device: the Q (shape of a, m >= n) of the
  reflectors below a's diagonal."""
  c = _Call(a.dtype)
  batch, (m, n), k = a.shape[:-2], a.shape[-2:], taus.shape[-1]
  count = _count(batch)
  with _on(a):
    t = _columns(a, c.work)
    if count and m and n:
      if k == 0:
        t[...] = c.cp.eye(n, m, dtype=c.work)
      else:
        tau = c.cp.ascontiguousarray(taus.reshape((count, k))).astype(c.work, copy=False)
        _orgqr_into(c, t, tau, m, n, k)
    return _rows(t, batch, a.dtype)


def qr(x, *, pivoting, full_matrices):
  """lapack.qr on the device, without pivoting (cuSOLVER has no geqp3)."""
  if pivoting:
    raise ValueError("pivoted QR runs on the host")   # (qr_p keeps it off the device)
  c, batch, m, n, k, count = _matrices(x)
  qcols = m if full_matrices else k
  with _on(x):
    t = _columns(x, c.work)
    taus = c.cp.zeros((count, k), c.work)
    if k and count:
      _geqrf_into(c, t, taus, m, n)
    r = c.cp.triu(_rows(t, batch, c.work))[..., :qcols, :]
    if qcols > n:   # Q's columns beyond n need room in the reflectors' array
      q = c.cp.zeros((count, qcols, m), c.work)
      q[:, :n, :] = t
    else:
      q = c.cp.ascontiguousarray(t[:, :qcols, :])
    if count and m:
      if k:
        _orgqr_into(c, q, taus, m, qcols, k)
      else:
        q[...] = c.cp.eye(qcols, m, dtype=c.work)
    return [_rows(q, batch, x.dtype), r.astype(x.dtype, copy=False)]


def ormqr(a, taus, c, *, left, transpose):
  """lapack_reflectors.ormqr on the device: Q c, Q^H c, c Q or c Q^H for the
  Q of geqrf's reflectors a and taus."""
  call, batch, m, n, _, count = _matrices(c)
  lda, k = a.shape[-2], taus.shape[-1]
  with _on(c):
    out = _columns(c, call.work)
    if m and n and k and count:
      reflectors = _columns(a, call.work)
      tau = call.cp.ascontiguousarray(taus.reshape((count, k))).astype(call.work, copy=False)
      blas = call.blas
      side = blas.CUBLAS_SIDE_LEFT if left else blas.CUBLAS_SIDE_RIGHT
      trans = ((blas.CUBLAS_OP_C if call.work.kind == "c" else blas.CUBLAS_OP_T) if transpose
               else blas.CUBLAS_OP_N)
      h = call.handle
      size = call.routine("ormqr", "_bufferSize")(
          h, side, trans, m, n, k, reflectors.data.ptr, lda, tau.data.ptr, out.data.ptr, m)
      ws = call.workspace(size)
      info = call.cp.zeros((count,), np.int32)
      ormqr_ = call.routine("ormqr")
      for r, t, o, i in zip(_pointers(reflectors), _pointers(tau), _pointers(out),
                            _pointers(info)):
        ormqr_(h, side, trans, m, n, k, r, lda, t, o, m, ws.data.ptr, max(1, size), i)
    return _rows(out, batch, c.dtype)


# -- syevd / heevd: Hermitian eigendecomposition -----------------------------------------------

def syevd(x, *, lower, vectors=True):
  """lapack.syevd on the device: (v, w), NaN where it fails to converge."""
  c = _Call(x.dtype)
  batch, n = x.shape[:-2], x.shape[-1]
  count = _count(batch)
  with _on(x):
    t = _columns(x, c.work)
    w = c.cp.zeros((count, n), c.real)
    info = c.cp.zeros((count,), np.int32)
    if n and count:
      h = c.handle
      jobz = c.solver.CUSOLVER_EIG_MODE_VECTOR if vectors else c.solver.CUSOLVER_EIG_MODE_NOVECTOR
      uplo = c.blas.CUBLAS_FILL_MODE_LOWER if lower else c.blas.CUBLAS_FILL_MODE_UPPER
      size = c.routine("syevd", "_bufferSize")(h, jobz, uplo, n, t.data.ptr, n, w.data.ptr)
      ws = c.workspace(size)
      syevd_ = c.routine("syevd")
      for a, wi, i in zip(_pointers(t), _pointers(w), _pointers(info)):
        syevd_(h, jobz, uplo, n, a, n, wi, ws.data.ptr, max(1, size), i)
    t, w = c.fail_nan([t, w], info)
    v = _rows(t, batch, x.dtype) if vectors else None
    return v, w.reshape(tuple(batch) + (n,))


# -- gesvd: singular value decomposition --------------------------------------------------------

def gesdd(x, *, full_matrices, compute_uv):
  """lapack.gesdd's results on the device, by cuSOLVER's gesvd (QR
  iteration): [s] or [s, u, vh], NaN where it fails."""
  c, batch, m, n, k, count = _matrices(x)
  with _on(x):
    wide = m < n
    # Rows >= columns: a wide x's C-ordered buffer is x^T (n x m) in
    # column-major order; x^T = U S V^H gives x = conj(V) S U^T, so the
    # buffers of V^H and U, read in C order, are x's u and vh.
    rows, cols = (n, m) if wide else (m, n)
    t = (x.reshape((count, m, n)).astype(c.work, order="C", copy=True) if wide
         else _columns(x, c.work))
    ucols = rows if full_matrices else k
    s = c.cp.zeros((count, k), c.real)
    # u: column-major rows x ucols; vt: cols x cols (k == cols); or nothing.
    u = c.cp.zeros((count, ucols, rows) if compute_uv else (count, 1, 1), c.work)
    vt = c.cp.zeros((count, cols, cols) if compute_uv else (count, 1, 1), c.work)
    ldu, ldvt = (rows, cols) if compute_uv else (1, 1)
    info = c.cp.zeros((count,), np.int32)
    if k and count:
      job = ord("A" if full_matrices else "S") if compute_uv else ord("N")
      h = c.handle
      size = c.routine("gesvd", "_bufferSize")(h, rows, cols)
      ws = c.workspace(size)
      gesvd_ = c.routine("gesvd")
      for a, si, ui, vi, i in zip(_pointers(t), _pointers(s), _pointers(u), _pointers(vt),
                                  _pointers(info)):
        gesvd_(h, job, job, rows, cols, a, rows, si, ui, ldu, vi, ldvt, ws.data.ptr,
               max(1, size), 0, i)
    s, u, vt = c.fail_nan([s, u, vt], info)
    s = s.reshape(tuple(batch) + (k,))
    if not compute_uv:
      return [s]
    if wide:
      left, right = vt, u        # already x's u (m x k) and vh (ucols x n) in C order
      shape = lambda v: v.reshape(tuple(batch) + v.shape[1:])
      return [s, shape(left).astype(x.dtype, copy=False),
              shape(right).astype(x.dtype, copy=False)]
    return [s, _rows(u, batch, x.dtype), _rows(vt, batch, x.dtype)]
