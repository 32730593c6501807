"""How lax/lapack.py hands matrices to BLAS and LAPACK without copies: trsm
reads a row-major matrix with its triangle and transpose flag flipped, and a
column-major one (getrf's factors, a transposed view) as it is; both give
the bits of an explicit column-major copy and solve the system.  The
compiled transpose behind the copies that remain is exact at every tile
edge."""
import itertools

import numpy as np
import pytest

from purejax._src.backends.cpu import lapack_loop, toolchain
from purejax._src.lax import lapack

scipy_linalg = pytest.importorskip("scipy.linalg")
pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

RNG = np.random.RandomState(7)
FLAGS = list(itertools.product([True, False], repeat=5))


def _rand(shape, dtype):
  x = RNG.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * RNG.standard_normal(shape)
  return x.astype(dtype)


def _reference_trsm(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  """The same trsm on explicit column-major copies (one per matrix)."""
  work = lapack.work_dtype(b.dtype)
  if conjugate_a and not transpose_a:
    a = np.conj(a)
  trans = ("C" if conjugate_a else "T") if transpose_a else "N"
  out = []
  for ai, bi in zip(a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])):
    ac = lapack.aligned_empty(ai.shape[::-1], work)
    ac[...] = ai.T
    bc = lapack.aligned_empty(bi.shape[::-1], work)
    bc[...] = bi.T
    m, n = bi.shape
    ints = lapack._Ints(m, n, ai.shape[-1], m)
    one = np.ones(1, work)
    lapack._run(lapack._PREFIX[work] + "trsm", 1,
                [lapack._char("L" if left_side else "R"), lapack._char("L" if lower else "U"),
                 lapack._char(trans), lapack._char("U" if unit_diagonal else "N"),
                 ints[0], ints[1], lapack._ptr(one), (ac.ctypes.data, 0), ints[2],
                 (bc.ctypes.data, 0), ints[3]], 1)
    out.append(bc.T)
  return np.array(out).reshape(b.shape)


def _column_major_view(a):
  buf = lapack.aligned_empty(a.shape[:-2] + a.shape[-2:][::-1], a.dtype)
  buf[...] = np.swapaxes(a, -1, -2)
  return np.swapaxes(buf, -1, -2)


def _unaligned(a):
  raw = np.empty(a.size * a.itemsize + a.itemsize, np.uint8)
  view = raw[a.itemsize:].view(a.dtype).reshape(a.shape)
  view[...] = a
  return view


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("batch,m,n", [((), 40, 3), ((2,), 9, 9), ((), 65, 1)])
def test_trsm_layouts_give_the_bits_of_a_column_major_copy(dtype, batch, m, n):
  lapack_loop.install()
  for left_side, lower, transpose_a, conjugate_a, unit_diagonal in FLAGS:
    k = m if left_side else n
    # Small off the diagonal: unit triangular random matrices are ill conditioned.
    a = (_rand(batch + (k, k), dtype) / k + np.eye(k)).astype(dtype)
    b = _rand(batch + (m, n), dtype)
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
              conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    want = _reference_trsm(a, b, **kw)
    for layout in (a, _column_major_view(a), _unaligned(a)):
      got = lapack.trsm(layout, b, **kw)
      assert got.dtype == b.dtype and got.flags.c_contiguous
      assert got.tobytes() == want.tobytes(), (kw, layout.flags)
    # And it solves the system (float64 reference).
    t = (np.tril if lower else np.triu)(a.astype(np.complex128))
    if unit_diagonal:
      t = t - np.diagonal(t, axis1=-2, axis2=-1)[..., None] * np.eye(k) + np.eye(k)
    op = np.swapaxes(t, -1, -2) if transpose_a else t
    op = np.conj(op) if conjugate_a else op
    lhs = op @ want if left_side else want @ op
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(lhs, b, atol=tol * k, rtol=tol)


def test_getrf_factors_view_solves_like_scipy():
  lapack_loop.install()
  a = _rand((2, 70, 70), np.float32)
  lu, pivots, perm = lapack.getrf(a)
  for i in range(2):
    want_lu, want_piv = scipy_linalg.lu_factor(a[i])
    np.testing.assert_allclose(lu[i], want_lu, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(pivots[i], want_piv)
  # The factors read in C order (what a compiled kernel receives) are the same.
  dense = lapack.c_contiguous(lu)
  assert dense.flags.c_contiguous and np.array_equal(dense, lu)


@pytest.mark.parametrize("shape", [(1, 8, 8), (3, 70, 90), (1, 1, 200), (2, 129, 7),
                                   (1, 0, 5), (1, 64, 64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_compiled_transpose_is_exact(shape, dtype):
  lapack_loop.install()
  x = (np.arange(np.prod(shape)) + 0.5).astype(dtype).reshape(shape)
  # The compiled path (any size), and c_contiguous of a transposed view.
  old = lapack.COMPILED_TRANSPOSE_MIN
  lapack.COMPILED_TRANSPOSE_MIN = 0
  try:
    got = lapack._transposed(x, np.dtype(dtype))
    lower = lapack._transposed(x, np.dtype(dtype), lower=True)
    view = lapack.c_contiguous(np.swapaxes(x, -1, -2))
  finally:
    lapack.COMPILED_TRANSPOSE_MIN = old
  np.testing.assert_array_equal(got, np.swapaxes(x, -1, -2))
  np.testing.assert_array_equal(lower, np.tril(np.swapaxes(x, -1, -2)))
  np.testing.assert_array_equal(view, np.swapaxes(x, -1, -2))
  assert view.flags.c_contiguous
