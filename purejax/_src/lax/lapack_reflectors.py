"""LAPACK's tridiagonal reduction (sytrd/hetrd) and product with the Q of
Householder reflectors (ormqr/unmqr), one call per matrix of a batch, as
JAX's CPU backend calls them."""
import functools

import numpy as np

from purejax._src.lax.lapack import (
    _PREFIX, _Ints, _Work, _call, _char, _each, _ptr, _run, _size, aligned_zeros,
    from_columns, real_of, to_columns, work_dtype)


@functools.lru_cache(maxsize=None)
def _sytrd_lwork(name, uplo, n):
  p = _ptr(np.zeros(4, np.complex128))
  size = np.zeros(4, np.complex128)
  ints = _Ints(n, -1)
  _call(name, _char(uplo), ints[0], p, ints[0], p, p, p, _ptr(size), ints[1], ints.info)
  return _size(size, name[0])


def sytrd(x, *, lower):
  """(a, d, e, taus): each Hermitian matrix of x reduced to real symmetric
  tridiagonal form (diagonal d, off-diagonal e), the reflectors in a's
  other triangle (LAPACK's layout)."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  real = real_of(work)
  t = to_columns(x, work)
  count = t.shape[0]
  d = aligned_zeros((count, max(n, 1)), real)
  e = aligned_zeros((count, max(n, 1)), real)
  taus = aligned_zeros((count, max(n, 1)), work)
  if n and count:
    name = _PREFIX[work] + ("hetrd" if work.kind == "c" else "sytrd")
    uplo = "L" if lower else "U"
    lwork = _sytrd_lwork(name, uplo, n)
    ints = _Ints(n, lwork)
    info = np.zeros(count, np.int32)
    _run(name, count, [_char(uplo), ints[0], _each(t), ints[0], _each(d), _each(e),
                       _each(taus), _Work(lwork, work), ints[1], _each(info)], 4 * n ** 3 // 3)
  k = max(n - 1, 0)
  real_out = np.dtype(real_of(x.dtype))
  return [from_columns(t, batch, x.dtype), d[:, :n].reshape(batch + (n,)).astype(real_out),
          e[:, :k].reshape(batch + (k,)).astype(real_out),
          taus[:, :k].reshape(batch + (k,)).astype(x.dtype)]


@functools.lru_cache(maxsize=None)
def _ormqr_lwork(name, side, trans, m, n, k, lda):
  p = _ptr(np.zeros(4, np.complex128))
  size = np.zeros(4, np.complex128)
  ints = _Ints(m, n, k, lda, -1)
  _call(name, _char(side), _char(trans), ints[0], ints[1], ints[2], p, ints[3], p, p,
        ints[0], _ptr(size), ints[4], ints.info)
  return _size(size, name[0])


def ormqr(a, taus, c, *, left, transpose):
  """Q c, Q^H c, c Q or c Q^H for each Q of the reflectors below a's
  diagonal (geqrf's layout) and their scalars taus."""
  batch, (m, n) = c.shape[:-2], c.shape[-2:]
  lda, k = a.shape[-2], taus.shape[-1]
  work = work_dtype(c.dtype)
  out = to_columns(c, work)
  count = out.shape[0]
  if m and n and k and count:
    reflectors = to_columns(a, work)
    tau = np.ascontiguousarray(taus.reshape(-1, k), dtype=work)
    name = _PREFIX[work] + ("unmqr" if work.kind == "c" else "ormqr")
    side = "L" if left else "R"
    trans = ("C" if work.kind == "c" else "T") if transpose else "N"
    lwork = _ormqr_lwork(name, side, trans, m, n, k, lda)
    ints = _Ints(m, n, k, lda, lwork)
    info = np.zeros(count, np.int32)
    _run(name, count, [_char(side), _char(trans), ints[0], ints[1], ints[2],
                       _each(reflectors), ints[3], _each(tau), _each(out), ints[0],
                       _Work(lwork, work), ints[4], _each(info)], 2 * m * n * k)
  return from_columns(out, batch, c.dtype)
