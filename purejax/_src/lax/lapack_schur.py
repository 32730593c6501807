"""LAPACK's Schur decomposition (gees) and Hessenberg reduction (gehrd), one
call per matrix of a batch through lapack's batch loop, as JAX's CPU
backend calls them."""
import functools

import numpy as np

from purejax._src.lax.lapack import (
    _PREFIX, _Ints, _Work, _call, _char, _each, _fail_nan, _ptr, _run, _size, aligned_zeros,
    from_columns, real_of, to_columns, work_dtype)


@functools.lru_cache(maxsize=None)
def _gees_lwork(name, jobvs, n):
  p = _ptr(np.zeros(4, np.complex128))
  size = np.zeros(4, np.complex128)
  ints = _Ints(n, -1, 0)
  values = [p] if name[0] in "cz" else [p, p]
  rwork = [p] if name[0] in "cz" else []
  _call(name, _char(jobvs), _char("N"), p, ints[0], p, ints[0], ints[2], *values, p,
        ints[0], _ptr(size), ints[1], *rwork, p, ints.info)
  return _size(size, name[0])


def gees(x, *, compute_schur_vectors):
  """[t] or [t, vs]: the (quasi-)triangular Schur form of each square matrix
  of x and its Schur vectors, unsorted; NaNs where LAPACK fails."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  vs = aligned_zeros((count, n, n) if compute_schur_vectors else (1, 1, 1), work)
  bad = np.zeros(count, bool)
  if n and count:
    jobvs = "V" if compute_schur_vectors else "N"
    name = _PREFIX[work] + "gees"
    lwork = _gees_lwork(name, jobvs, n)
    ints = _Ints(n, n if compute_schur_vectors else 1, lwork, 0)
    info = np.zeros(count, np.int32)
    complex_ = work.kind == "c"
    values = [_Work(n, work)] if complex_ else [_Work(n, work), _Work(n, work)]
    rwork = [_Work(n, real_of(work))] if complex_ else []
    vi = _each(vs) if compute_schur_vectors else _Work(1, work)
    # sort = 'N': select and bwork are not referenced (a workspace stands in).
    _run(name, count, [_char(jobvs), _char("N"), _Work(1, np.int64), ints[0], _each(t),
                       ints[0], _Work(1, np.int32)] + values +
         [vi, ints[1], _Work(lwork, work), ints[2]] + rwork +
         [_Work(n, np.int32), _each(info)], 10 * n ** 3)
    bad = info != 0
  outs = [t] + ([vs] if compute_schur_vectors else [])
  _fail_nan(outs, bad)
  return [from_columns(o, batch, x.dtype) for o in outs]


@functools.lru_cache(maxsize=None)
def _gehrd_lwork(name, n):
  p = _ptr(np.zeros(4, np.complex128))
  size = np.zeros(4, np.complex128)
  ints = _Ints(n, 1, -1)
  _call(name, ints[0], ints[1], ints[0], p, ints[0], p, _ptr(size), ints[2], ints.info)
  return _size(size, name[0])


def gehrd(x):
  """(a, taus): each square matrix of x reduced to upper Hessenberg form,
  the Householder vectors below its first subdiagonal and their n - 1
  scalars."""
  batch, n = x.shape[:-2], x.shape[-1]
  work = work_dtype(x.dtype)
  t = to_columns(x, work)
  count = t.shape[0]
  taus = aligned_zeros((count, max(n, 1)), work)
  if n > 1 and count:
    name = _PREFIX[work] + "gehrd"
    lwork = _gehrd_lwork(name, n)
    ints = _Ints(n, 1, lwork)
    info = np.zeros(count, np.int32)
    _run(name, count, [ints[0], ints[1], ints[0], _each(t), ints[0], _each(taus),
                       _Work(lwork, work), ints[2], _each(info)], 10 * n ** 3 // 3)
  k = max(n - 1, 0)
  return (from_columns(t, batch, x.dtype),
          taus[:, :k].reshape(batch + (k,)).astype(x.dtype))
