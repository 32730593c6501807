"""purejax.flatten_util.ravel_pytree against NumPy and real JAX."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.flatten_util import ravel_pytree
from tests.conftest import oracle


def _tree(lib):
  xnp = lib.numpy
  return {"a": xnp.arange(3, dtype=np.int32),
          "b": (xnp.ones((2, 2), np.float16) * 0.5, 3.0),
          "c": [xnp.array([True, False])]}


def test_flat_values_and_dtype_against_numpy():
  flat, unravel = ravel_pytree(_tree(purejax))
  want = np.concatenate([np.arange(3), np.full(4, 0.5), [3.0], [1.0, 0.0]])
  assert flat.dtype == np.float32 and flat.shape == (10,)
  np.testing.assert_array_equal(np.asarray(flat), want.astype(np.float32))
  back = unravel(flat)
  assert back["a"].dtype == np.int32 and back["b"][0].dtype == np.float16
  assert back["b"][0].shape == (2, 2)
  np.testing.assert_array_equal(np.asarray(back["c"][0]), [True, False])
  assert back["b"][1].shape == () and not back["b"][1].weak_type


@pytest.mark.parametrize("leaves", [
    [], [1, True], [np.ones(2, np.int8), 3], [np.ones(2, np.int8), 3.0],
    [np.ones(2, np.uint32), np.ones(2, np.int32)],
    [np.ones(2, np.float16), np.ones(1, np.complex64) * (1 + 2j)],
    [np.ones(2, np.float64), np.zeros((0, 3), np.float32)],
])
def test_matches_jax(leaves):
  jax = oracle()
  from jax.flatten_util import ravel_pytree as jax_ravel
  ours, our_unravel = ravel_pytree(leaves)
  theirs, their_unravel = jax_ravel(leaves)
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
  np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
  for a, b in zip(our_unravel(ours * 2), their_unravel(theirs * 2)):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  del jax


def test_complex_to_real_takes_real_part():
  flat, unravel = ravel_pytree([np.ones(2, np.float32), np.ones(1, np.complex64)])
  back = unravel(flat * (2 + 1j))
  assert back[0].dtype == np.float32
  np.testing.assert_array_equal(np.asarray(back[0]), [2.0, 2.0])


def test_errors_as_jax():
  _, unravel = ravel_pytree([np.ones(2, np.float32), np.ones(3, np.float32)])
  with pytest.raises(TypeError, match="unravel function given array of dtype int32, "
                     "but expected dtype float32"):
    unravel(jnp.ones(5, jnp.int32))
  with pytest.raises(ValueError):
    unravel(jnp.ones(4))


def test_under_jit_grad_vmap():
  params = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3)}
  flat, unravel = ravel_pytree(params)

  def loss(flat):
    p = unravel(flat)
    return jnp.sum(p["w"] ** 2) + jnp.sum(p["b"] * 3.0)

  g = purejax.jit(purejax.grad(loss))(flat)
  want = np.concatenate([np.ones(3) * 3.0, 2 * np.arange(6.0)])  # leaves sorted: b, w
  np.testing.assert_allclose(np.asarray(g), want)
  np.testing.assert_array_equal(np.asarray(purejax.jit(lambda t: ravel_pytree(t)[0])(params)),
                                np.asarray(flat))
  batch = jnp.stack([flat, flat * 2])
  out = purejax.vmap(lambda f: unravel(f)["w"])(batch)
  np.testing.assert_array_equal(np.asarray(out[1]), 2 * np.arange(6.0).reshape(2, 3))
  rav = purejax.vmap(lambda t: ravel_pytree(t)[0])({"w": batch[:, 3:], "b": batch[:, :3]})
  np.testing.assert_array_equal(np.asarray(rav), np.asarray(batch))


def test_unravel_functions_of_equal_layouts_are_equal():
  _, u1 = ravel_pytree([np.ones(2, np.float32)])
  _, u2 = ravel_pytree([np.zeros(2, np.float32)])
  assert u1 == u2 and hash(u1) == hash(u2)
