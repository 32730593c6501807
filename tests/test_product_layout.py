"""Products read only through a transpose are computed transposed
(backends/cpu/product_layout.py): same values, no transposed reads."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import product_layout
from purejax._src.config import config

RNG = np.random.default_rng(11)


def _prims(jaxpr):
  return [e.primitive.name for e in jaxpr.eqns]


def _folded(f, *args):
  return product_layout.fold_transposes(jax.make_jaxpr(f)(*args).jaxpr)


def test_weight_gradient_product_is_computed_transposed():
  x = RNG.standard_normal((16, 8)).astype(np.float32)
  w = RNG.standard_normal((8, 4)).astype(np.float32)
  loss = lambda w, x: jnp.sum(jnp.tanh(x @ w))
  jaxpr = jax.make_jaxpr(jax.grad(loss))(w, x).jaxpr
  assert "transpose" in _prims(jaxpr)
  folded = product_layout.fold_transposes(jaxpr)
  assert "transpose" not in _prims(folded)
  assert _prims(folded).count("dot_general") == _prims(jaxpr).count("dot_general")
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(jax.grad(loss))(w, x))
  x64, w64 = x.astype(np.float64), w.astype(np.float64)
  want = x64.T @ (1 - np.tanh(x64 @ w64) ** 2)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("perm", [(0, 2, 1), (1, 0, 2), (2, 1, 0)])
def test_batched_products(perm):
  a = RNG.standard_normal((3, 5, 7)).astype(np.float32)
  b = RNG.standard_normal((3, 7, 6)).astype(np.float32)
  f = lambda a, b: jnp.transpose(lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), perm)
  folded = _folded(f, a, b)
  assert ("transpose" in _prims(folded)) == (perm != (0, 2, 1))
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(f)(a, b))
  want = np.transpose(np.einsum("bik,bkj->bij", a.astype(np.float64), b), perm)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_product_read_elsewhere_too_is_left_alone():
  a = RNG.standard_normal((5, 7)).astype(np.float32)
  b = RNG.standard_normal((7, 6)).astype(np.float32)
  f = lambda a, b: ((a @ b).T, (a @ b).sum())
  assert "transpose" in _prims(_folded(lambda a, b: (lambda p: (p.T, p))(a @ b), a, b))
  with config.override("purejax_compile_sync", True):
    got = jax.jit(f)(a, b)
  np.testing.assert_allclose(np.asarray(got[0]), (a.astype(np.float64) @ b).T, rtol=1e-5,
                             atol=1e-5)


def test_matrix_vector_products_are_left_alone():
  a = RNG.standard_normal((5, 7)).astype(np.float32)
  v = RNG.standard_normal(7).astype(np.float32)
  # One free dimension only: nothing to swap.
  folded = _folded(lambda a, v: jnp.transpose(jnp.expand_dims(a @ v, 0)), a, v)
  assert "dot_general" in _prims(folded)


@pytest.mark.parametrize("spec, a_shape, b_shape", [
    ("ij,bjk->bik", (64, 48), (3, 48, 40)),
    ("bji,bjk->bik", (3, 48, 64), (3, 48, 40)),
    ("ijb,bjk->bik", (64, 48, 3), (3, 48, 40)),
    ("aibj,jb->ai", (4, 5, 6, 7), (7, 6)),
])
def test_products_blas_cannot_take_as_they_are_compile(spec, a_shape, b_shape):
  # A contracted axis in the middle of an operand: transposed first, then BLAS.
  from purejax._src import stages
  a = RNG.standard_normal(a_shape).astype(np.float32)
  b = RNG.standard_normal(b_shape).astype(np.float32)
  f = lambda a, b: jnp.einsum(spec, a, b)
  results = set()
  for threads in (1, 2):
    with config.override("purejax_compile_sync", True), \
         config.override("purejax_num_threads", threads):
      compiled = jax.jit(f).lower(a, b).compile()
      got = np.asarray(compiled(a, b))
    assert stages.host_steps(compiled) == []
    results.add(got.tobytes())
  assert len(results) == 1
  np.testing.assert_allclose(got, np.einsum(spec, a.astype(np.float64), b), rtol=1e-5,
                             atol=1e-4)
