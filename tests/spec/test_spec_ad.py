"""The spec documents' autodiff examples (those that need no vmap or random)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import grad, jit


def test_python_control_flow_with_grad(capsys):
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  print(grad(f)(2.))
  print(grad(f)(4.))
  assert capsys.readouterr().out == "12.0\n-4.0\n"


def test_higher_order_gradients(capsys):
  def squared(x):
    return x ** 2

  x = 4.0
  dydx = jax.grad(squared)
  print("First order gradients of y wrt x: ", dydx(x))
  print("Second order gradients of y wrt x: ", jax.grad(dydx)(x))
  assert capsys.readouterr().out == ("First order gradients of y wrt x:  8.0\n"
                                     "Second order gradients of y wrt x:  2.0\n")


def test_gradient_of_half_squared_norm():
  def f(x):
    return jnp.dot(x.T, x) / 2.0

  v = jnp.ones((4,))
  assert repr(f(v)) == "Array(2., dtype=float32)"
  v = jnp.array([1.8160864, -0.75487745, 0.3398885, -0.53483075])
  assert str(jax.grad(f)(v)) == str(v)


def test_jvp_and_vjp_of_half_square():
  def f(x):
    return jnp.multiply(x, x) / 2.0

  x = jnp.array([0.18784378, -1.2833427, -0.27109176, 1.2490592, 0.24446994])
  v = jnp.ones(5)
  primal, tangent = jax.jvp(f, (x,), (v,))
  np.testing.assert_allclose(primal, f(x))
  assert str(tangent) == str(x)
  val, vjp_fun = jax.vjp(f, x)
  assert str(vjp_fun(jnp.ones((5,)))[0]) == str(x)


def test_update_step_with_value_and_grad_under_jit():
  # The spec's training loops in miniature (its vmap-based version runs once
  # vmap exists): a jitted update with grad and tree_map lowers the loss.
  rng = np.random.RandomState(0)
  x = rng.randn(20, 10).astype(np.float32)
  w_true = rng.randn(10, 5).astype(np.float32)
  y = x @ w_true + 0.1 * rng.randn(20, 5).astype(np.float32)

  def mse(params, x, y):
    pred = jnp.dot(x, params["W"]) + params["b"]
    return jnp.mean(jnp.sum((y - pred) ** 2, axis=1) / 2.0)

  @jit
  def update(params, lr):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss

  params = {"W": jnp.zeros((10, 5)), "b": jnp.zeros(5)}
  losses = []
  for _ in range(101):
    params, loss = update(params, 0.3)
    losses.append(float(loss))
  assert losses[-1] < 0.05 < losses[0]
  assert all(b <= a * 1.0001 for a, b in zip(losses[5:], losses[6:]))
