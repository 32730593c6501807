"""purejax.scipy.linalg's special matrices, qr_multiply and eigh_tridiagonal
against SciPy (float64) and JAX (dtypes, float32 values), errors, jit."""
import numpy as np
import pytest

import purejax
import purejax.scipy.linalg as pl

from conftest import oracle

sl = pytest.importorskip("scipy.linalg")

COEFFS = np.array([1., 2, 3, 4, 5, 6, 7])
_R = np.random.RandomState(0)


def _equal(ours, theirs):
  ours = np.asarray(ours)
  assert ours.shape == np.shape(theirs)
  np.testing.assert_allclose(ours, theirs, rtol=1e-15, atol=1e-15)


def test_structured_matrices_match_scipy(x64):
  for n in range(2, 8):
    _equal(pl.companion(COEFFS[:n] * 0.5), sl.companion(COEFFS[:n] * 0.5))
    _equal(pl.fiedler_companion(COEFFS[:n]), sl.fiedler_companion(COEFFS[:n]))
  _equal(pl.fiedler(np.array([1., 4, 12, -2])), sl.fiedler(np.array([1., 4, 12, -2])))
  for mode in ("full", "same", "valid"):
    for n in (1, 2, 3, 5, 6):
      _equal(pl.convolution_matrix(COEFFS[:4], n, mode), sl.convolution_matrix(COEFFS[:4], n, mode))
  for n in (1, 2, 5, 8):
    for scale in (None, "sqrtn", "n"):
      _equal(pl.dft(n, scale), sl.dft(n, scale))
    _equal(pl.helmert(n), sl.helmert(n))
    _equal(pl.helmert(n, True), sl.helmert(n, True))
    _equal(pl.hilbert(n), sl.hilbert(n))
    _equal(pl.invhilbert(n), sl.invhilbert(n))
    for kind in ("symmetric", "lower", "upper"):
      _equal(pl.pascal(n, kind), sl.pascal(n, kind))
      _equal(pl.invpascal(n, kind), sl.invpascal(n, kind))
  _equal(pl.hadamard(8), sl.hadamard(8))
  f, s = np.array([0.1, 2, 1, 0.5]), np.array([0.2, 0.8, 0.3])
  _equal(pl.leslie(f, s), sl.leslie(f, s))


def test_qr_multiply_and_eigh_tridiagonal(x64):
  a = _R.randn(5, 3)
  for mode, c in (("right", _R.randn(2, 5)), ("left", _R.randn(3, 2)), ("left", _R.randn(3))):
    ours, r = pl.qr_multiply(a, c, mode)
    theirs, r_ref = sl.qr_multiply(a, c, mode)
    # Both are Householder QRs with LAPACK's sign convention.
    np.testing.assert_allclose(r, r_ref, atol=1e-12)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
  d, e = _R.randn(6), _R.randn(5)
  w = pl.eigh_tridiagonal(d, e, eigvals_only=True)
  np.testing.assert_allclose(w, sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)
  w, v = pl.eigh_tridiagonal(d, e)
  t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
  np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-12)
  w2 = pl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3))
  np.testing.assert_allclose(w2, sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                                     select_range=(1, 3)), atol=1e-12)
  np.testing.assert_allclose(purejax.jit(lambda d, e: pl.eigh_tridiagonal(d, e, eigvals_only=True))(d, e),
                             sl.eigh_tridiagonal(d, e, eigvals_only=True), atol=1e-12)


def test_dtypes_and_values_match_jax():
  oracle()
  import jax.numpy as jjnp
  import jax.scipy.linalg as jl
  cases = [("companion", (np.array([1, 2, 3]),)), ("companion", (np.array([2., 2, 3]),)),
           ("fiedler", (np.array([1, 4, 12]),)), ("fiedler_companion", (np.array([1., 2, 3, 4]),)),
           ("convolution_matrix", (np.array([1, 2, 3]), 4, "same")),
           ("convolution_matrix", (np.array([1., 2, 3]), 4)), ("hadamard", (4,)),
           ("hadamard", (2, np.float32)), ("helmert", (3,)), ("helmert", (3, True)),
           ("hilbert", (3,)), ("invhilbert", (4,)), ("pascal", (4,)), ("invpascal", (4, "lower")),
           ("leslie", (np.array([0.1, 2, 1], np.float32), np.array([0.2, 0.8], np.float32))),
           ("dft", (4, "sqrtn"))]
  for name, args in cases:
    ours = np.asarray(getattr(pl, name)(*args))
    theirs = np.asarray(getattr(jl, name)(*[jjnp.asarray(a) if isinstance(a, np.ndarray) else a
                                           for a in args]))
    assert ours.dtype == theirs.dtype, name
    np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5, err_msg=name)


def test_errors():
  with pytest.raises(ValueError, match="power of 2"):
    pl.hadamard(3)
  with pytest.raises(ValueError):
    pl.companion(np.array([1.]))
  with pytest.raises(ValueError):
    pl.leslie(np.array([1., 2]), np.array([1., 2]))
  with pytest.raises(ValueError):
    pl.convolution_matrix(np.array([1., 2]), 3, "bad")
  # JAX refuses select='v' (a data-dependent number of eigenvalues) too
  with pytest.raises(NotImplementedError, match="select='v'"):
    pl.eigh_tridiagonal(np.ones(3), np.ones(2), select="v", select_range=(0., 1.))
  with pytest.raises(ValueError, match="select must have a value"):
    pl.eigh_tridiagonal(np.ones(3), np.ones(2), select="x")
