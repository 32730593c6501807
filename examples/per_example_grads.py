"""Per-example gradients with `vmap(grad(...))`.

`grad` of a single-example loss, mapped over the batch with `vmap`, gives one
gradient per example in a single vectorised call (the building block of
differentially private SGD and of gradient-noise diagnostics). The result is
checked against a plain Python loop over the examples, also jitted, and the
per-example gradient norms are printed; their mean equals the batch gradient.
"""
import numpy as np

import purejax as jax
import purejax.numpy as jnp

tree_map = jax.tree_util.tree_map


def predict(params, x):
  h = jnp.tanh(jnp.dot(x, params['w1']) + params['b1'])
  return jnp.dot(h, params['w2']) + params['b2']


def loss(params, x, y):
  """Squared error of one example (x: (features,), y: scalar)."""
  return 0.5 * (predict(params, x) - y) ** 2


def global_norm(tree):
  return jnp.sqrt(sum(jnp.sum(l * l) for l in jax.tree_util.tree_leaves(tree)))


# One call: gradients of every example; params are shared (in_axes None).
per_example_grads = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))


def main(batch=8, features=5, hidden=4):
  key = jax.random.PRNGKey(0)
  k1, k2, kx, ky = jax.random.split(key, 4)
  params = {
      'w1': jax.random.normal(k1, (features, hidden)) / jnp.sqrt(features),
      'b1': jnp.zeros(hidden),
      'w2': jax.random.normal(k2, (hidden,)) / jnp.sqrt(hidden),
      'b2': jnp.zeros(()),
  }
  xs = jax.random.normal(kx, (batch, features))
  ys = jax.random.normal(ky, (batch,))

  grads = per_example_grads(params, xs, ys)
  print('per-example gradient shapes:', tree_map(lambda g: g.shape, grads))

  # Reference: one grad call per example, in a Python loop.
  grad_one = jax.jit(jax.grad(loss))
  looped = [grad_one(params, xs[i], ys[i]) for i in range(batch)]
  stacked = tree_map(lambda *gs: jnp.stack(gs), *looped)
  max_diff = max(float(jnp.max(jnp.abs(a - b))) for a, b in zip(
      jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(stacked)))
  print(f'max |vmap - loop| difference: {max_diff:.3e}')
  assert max_diff < 1e-5, max_diff

  norms = jax.vmap(global_norm)(grads)
  for i, n in enumerate(np.asarray(norms)):
    print(f'  example {i}: gradient norm {n:.5f}')

  # The mean of the per-example gradients is the gradient of the mean loss.
  batch_grad = jax.grad(lambda p: jnp.mean(jax.vmap(
      loss, in_axes=(None, 0, 0))(p, xs, ys)))(params)
  mean_diff = max(float(jnp.max(jnp.abs(jnp.mean(g, 0) - b))) for g, b in zip(
      jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(batch_grad)))
  print(f'max |mean(per-example) - batch grad|: {mean_diff:.3e}')
  assert mean_diff < 1e-5, mean_diff
  print(f'final mean gradient norm: {float(jnp.mean(norms)):.5f}')


if __name__ == '__main__':
  main()
