"""jax.experimental.sparse's BCOO (two sparse dimensions), against JAX."""
import numpy as np
import pytest
import scipy.sparse as ssp

import purejax
from purejax.experimental import sparse as psparse

M = np.array([[0., 2., 0.], [1., 0., 3.], [0., 0., 4.]], np.float32)


def _results(jax, sparse):
  jnp = jax.numpy
  S = sparse.BCOO.fromdense(M)
  x = jnp.array([1., 2., 3.])
  X = jnp.arange(12.).reshape(2, 3, 2)
  C = sparse.BCOO.from_scipy_sparse(ssp.csr_matrix(M))
  padded = sparse.BCOO.fromdense(M, nse=6)
  out = {
      "indices": S.indices, "data": S.data, "nse": S.nse, "repr": repr(S),
      "matvec": S @ x, "matmat": S @ X, "vecmat": x @ S, "matmat_left": jnp.ones((2, 3)) @ S,
      "T": S.T.todense(), "scaled": (2 * S).todense(), "scipy_indices": C.indices,
      "scipy_dense": C.todense(), "padded_indices": padded.indices,
      "padded_matvec": padded @ x, "padded_dense": padded.todense(),
      "jit": jax.jit(lambda s, v: s @ v)(S, x),
      "grad": jax.grad(lambda d: (sparse.BCOO((d, S.indices), shape=S.shape) @ x).sum())(S.data),
      "vmap": jax.vmap(lambda v: S @ v)(X[0].T),
  }
  return {k: v if isinstance(v, (str, int)) else np.asarray(v).tolist() for k, v in out.items()}


def test_bcoo_against_numpy():
  got = _results(purejax, psparse)
  np.testing.assert_array_equal(got["matvec"], M @ [1., 2., 3.])
  np.testing.assert_array_equal(got["T"], M.T)
  np.testing.assert_array_equal(got["scipy_dense"], M)
  np.testing.assert_array_equal(got["padded_dense"], M)
  assert got["nse"] == 4 and got["repr"] == "BCOO(float32[3, 3], nse=4)"


def test_bcoo_as_jax():
  jax = pytest.importorskip("jax")
  from jax.experimental import sparse
  assert _results(purejax, psparse) == _results(jax, sparse)


def test_unsupported_layouts_say_so():
  with pytest.raises(NotImplementedError, match="two sparse dimensions"):
    psparse.BCOO.fromdense(np.ones((2, 2, 2)))
  with pytest.raises(NotImplementedError, match="two sparse matrices"):
    psparse.BCOO.fromdense(M) @ psparse.BCOO.fromdense(M)


def _foreign_shapes(jnp):
  m = ssp.csr_matrix(np.eye(3))
  s = jnp.shape(m)
  with pytest.warns(DeprecationWarning, match="size requires ndarray"):
    n = jnp.size(m)      # NumPy's: a sparse matrix's size is its stored elements
  d = jnp.ndim(m)
  return s, n, d


def test_shape_of_a_scipy_sparse_matrix_as_jax():
  """jnp.shape/size/ndim of another library's array: NumPy's answer (with
  JAX's DeprecationWarning for size; numpyro's CAR passes a scipy.sparse
  matrix)."""
  got = _foreign_shapes(purejax.numpy)
  assert got == ((3, 3), 3, 2)
  jax = pytest.importorskip("jax")
  assert _foreign_shapes(jax.numpy) == got
  with pytest.raises(TypeError):
    purejax.numpy.shape(object())


def _fromdense_under_jit(jax, sparse):
  try:
    jax.jit(lambda m: sparse.BCOO.fromdense(m).todense())(M)
  except Exception as e:   # noqa: BLE001 (the class is compared by name)
    return type(e).__name__, str(e).split("See https")[0].replace("<string>", "")
  return None


def test_fromdense_under_jit_needs_nse_as_jax():
  got = _fromdense_under_jit(purejax, psparse)
  assert got[0] == "ConcretizationTypeError" and "the nse argument of bcoo_fromdense" in got[1]
  np.testing.assert_array_equal(purejax.jit(lambda m: psparse.BCOO.fromdense(m, nse=4).todense())(M), M)
  jax = pytest.importorskip("jax")
  from jax.experimental import sparse
  assert got[1].split("\n")[:5] == _fromdense_under_jit(jax, sparse)[1].split("\n")[:5]
