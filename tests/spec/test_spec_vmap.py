"""The spec's vmap examples: batched apply_matrix and the linear regression
whose loss averages a vmapped per-example error (001), with and without
pytrees.  The spec draws its data with jax.random (a later issue); here the
data comes from NumPy and the losses are compared with real JAX when it is
installed."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp


def test_batched_apply_matrix_shapes(capsys):
  rng = np.random.RandomState(0)
  mat = jnp.asarray(rng.randn(15, 10).astype(np.float32))
  batched_x = jnp.asarray(rng.randn(5, 10).astype(np.float32))
  single = jnp.asarray(rng.randn(10).astype(np.float32))

  def apply_matrix(v):
    return jnp.dot(mat, v)

  print("Single apply shape: ", apply_matrix(single).shape)
  print("Batched example shape: ", jax.vmap(apply_matrix)(batched_x).shape)
  assert capsys.readouterr().out == ("Single apply shape:  (15,)\n"
                                     "Batched example shape:  (5, 15)\n")
  np.testing.assert_allclose(jax.vmap(apply_matrix)(batched_x),
                             np.asarray(batched_x) @ np.asarray(mat).T, rtol=1e-5)


def _data():
  rng = np.random.RandomState(0)
  W = rng.randn(10, 5).astype(np.float32)
  b = rng.randn(5).astype(np.float32)
  x = rng.randn(20, 10).astype(np.float32)
  y = x @ W + b + 0.1 * rng.randn(20, 5).astype(np.float32)
  return W, b, x, y


def _regression(jax_mod, jnp_mod, use_pytree):
  def predict(W, b, x):
    return jnp_mod.dot(x, W) + b

  def mse(W, b, x_batched, y_batched):
    def squared_error(x, y):
      y_pred = predict(W, b, x)
      return jnp_mod.inner(y - y_pred, y - y_pred) / 2.0
    return jnp_mod.mean(jax_mod.vmap(squared_error)(x_batched, y_batched), axis=0)

  W, b, x, y = _data()
  losses = []
  if use_pytree:
    loss_fn = lambda p, x, y: mse(p["W"], p["b"], x, y)

    @jax_mod.jit
    def update(params, lr, x, y):
      return jax_mod.tree_util.tree_map(lambda p, g: p - lr * g, params,
                                        jax_mod.grad(loss_fn)(params, x, y))

    params = {"W": jnp_mod.zeros_like(W), "b": jnp_mod.zeros_like(b)}
    for i in range(101):
      params = update(params, 0.3, x, y)
      if i % 5 == 0:
        losses.append(float(loss_fn(params, x, y)))
  else:
    @jax_mod.jit
    def update_params(W, b, x, y, lr):
      return (W - lr * jax_mod.grad(mse, 0)(W, b, x, y),
              b - lr * jax_mod.grad(mse, 1)(W, b, x, y))

    W_hat, b_hat = jnp_mod.zeros_like(W), jnp_mod.zeros_like(b)
    for i in range(101):
      W_hat, b_hat = update_params(W_hat, b_hat, x, y, 0.3)
      if i % 5 == 0:
        losses.append(float(mse(W_hat, b_hat, x, y)))
  return losses, float(mse(W, b, x, y))


@pytest.mark.parametrize("use_pytree", [False, True])
def test_linear_regression_trains(use_pytree):
  losses, true_loss = _regression(jax, jnp, use_pytree)
  assert losses[0] > 1.0 and losses[-1] < 0.05
  assert all(b <= a * 1.0001 for a, b in zip(losses, losses[1:]))
  assert true_loss < 0.05


@pytest.mark.parametrize("use_pytree", [False, True])
def test_linear_regression_matches_jax(use_pytree):
  real = pytest.importorskip("jax")
  ours, _ = _regression(jax, jnp, use_pytree)
  theirs, _ = _regression(real, real.numpy, use_pytree)
  np.testing.assert_allclose(ours, theirs, rtol=2e-4, atol=1e-6)


def test_per_example_gradients():
  W, b, x, y = _data()
  loss = lambda W, x, y: jnp.sum((jnp.dot(x, W) - y) ** 2)
  per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(W, x, y)
  assert per_example.shape == (20, 10, 5)
  expected = np.stack([2 * np.outer(xi, xi @ W - yi) for xi, yi in zip(x, y)])
  np.testing.assert_allclose(per_example, expected, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))(W, x, y),
                             per_example, rtol=1e-5, atol=1e-5)
