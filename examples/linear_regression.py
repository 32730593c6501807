"""Linear regression by gradient descent, as in the spec's tutorial.

Fits y = x W + b on noisy synthetic data twice: first with W and b as separate
arguments (`jax.grad(mse, 0)`, `jax.grad(mse, 1)`), then with the parameters
held in a pytree and updated with `tree_map`. The per-sample loss is
vectorised with `vmap` and each update step is `jit`-compiled. Prints the loss
every 5 steps, like the document (same data: the classic threefry mode).
"""
import purejax as jax
import purejax.numpy as jnp

random = jax.random


def predict(W, b, x):
  return jnp.dot(x, W) + b


def mse(W, b, x_batched, y_batched):
  def squared_error(x, y):
    y_pred = predict(W, b, x)
    return jnp.inner(y - y_pred, y - y_pred) / 2.0
  return jnp.mean(jax.vmap(squared_error)(x_batched, y_batched), axis=0)


def make_data(n_samples=20, x_dim=10, y_dim=5):
  key = random.PRNGKey(0)
  k1, k2 = random.split(key)
  W = random.normal(k1, (x_dim, y_dim))
  b = random.normal(k2, (y_dim,))
  key_sample, key_noise = random.split(k1)
  x = random.normal(key_sample, (n_samples, x_dim))
  noise = 0.1 * random.normal(key_noise, (n_samples, y_dim))
  return W, b, x, predict(W, b, x) + noise


@jax.jit
def update_params(W, b, x, y, lr):
  return (W - lr * jax.grad(mse, 0)(W, b, x, y),
          b - lr * jax.grad(mse, 1)(W, b, x, y))


def predict_pytree(params, x):
  return jnp.dot(x, params['W']) + params['b']


def mse_pytree(params, x_batched, y_batched):
  def squared_error(x, y):
    y_pred = predict_pytree(params, x)
    return jnp.inner(y - y_pred, y - y_pred) / 2.0
  return jnp.mean(jax.vmap(squared_error)(x_batched, y_batched), axis=0)


@jax.jit
def update_params_pytree(params, learning_rate, x, y):
  grads = jax.grad(mse_pytree)(params, x, y)
  return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g,
                                params, grads)


def main():
  # The document's numbers come from the classic threefry key derivation;
  # current JAX defaults to the partitionable one, which draws other data.
  jax.config.update("jax_threefry_partitionable", False)
  W, b, x_samples, y_samples = make_data()
  print('x shape:', x_samples.shape, '; y shape:', y_samples.shape)
  learning_rate = 0.3

  print('== W and b as separate arguments ==')
  W_hat, b_hat = jnp.zeros_like(W), jnp.zeros_like(b)
  print('Loss for "true" W,b: ', mse(W, b, x_samples, y_samples))
  for i in range(101):
    W_hat, b_hat = update_params(W_hat, b_hat, x_samples, y_samples,
                                 learning_rate)
    if i % 5 == 0:
      print(f"Loss step {i}: ", mse(W_hat, b_hat, x_samples, y_samples))

  print('== parameters as a pytree ==')
  params = {'W': jnp.zeros_like(W), 'b': jnp.zeros_like(b)}
  print('Loss for "true" W,b: ',
        mse_pytree({'W': W, 'b': b}, x_samples, y_samples))
  for i in range(101):
    params = update_params_pytree(params, learning_rate, x_samples, y_samples)
    if i % 5 == 0:
      print(f"Loss step {i}: ", mse_pytree(params, x_samples, y_samples))

  final = mse_pytree(params, x_samples, y_samples)
  print(f"final loss: {float(final):.6f}")


if __name__ == '__main__':
  main()
