"""Train a small MLP classifier on two interleaved moons.

Shows a typical JAX training loop: data made with `jax.random`, parameters as
a pytree (a list of dicts), a loss from `jax.nn.log_sigmoid`, one
`jit(value_and_grad)` step, and an Adam optimiser written by hand with
`jax.tree_util.tree_map`. Prints the loss with a progress bar and the final
training accuracy.
"""
import sys

import numpy as np

import purejax as jax
import purejax.numpy as jnp

tree_map = jax.tree_util.tree_map


def make_moons(key, n=256, noise=0.2):
  """Two interleaved half circles; labels 0 (upper) and 1 (lower)."""
  k_angle, k_label, k_noise = jax.random.split(key, 3)
  angle = jax.random.uniform(k_angle, (n,), minval=0.0, maxval=jnp.pi)
  label = jax.random.bernoulli(k_label, 0.5, (n,))
  upper = jnp.stack([jnp.cos(angle), jnp.sin(angle)], axis=1)
  lower = jnp.stack([1.0 - jnp.cos(angle), 0.5 - jnp.sin(angle)], axis=1)
  x = jnp.where(label[:, None], lower, upper)
  x = x + noise * jax.random.normal(k_noise, (n, 2))
  return x, label.astype(jnp.float32)


def init_mlp(key, sizes):
  params = []
  keys = jax.random.split(key, len(sizes) - 1)
  for k, n_in, n_out in zip(keys, sizes[:-1], sizes[1:]):
    w = jax.random.normal(k, (n_in, n_out)) * jnp.sqrt(2.0 / n_in)
    params.append({'w': w, 'b': jnp.zeros(n_out)})
  return params


def logits(params, x):
  for layer in params[:-1]:
    x = jnp.tanh(x @ layer['w'] + layer['b'])
  return (x @ params[-1]['w'] + params[-1]['b'])[..., 0]


def loss_fn(params, x, y):
  # Binary cross-entropy on logits, written stably with log_sigmoid.
  z = logits(params, x)
  return -jnp.mean(y * jax.nn.log_sigmoid(z) + (1 - y) * jax.nn.log_sigmoid(-z))


def adam_init(params):
  zeros = tree_map(jnp.zeros_like, params)
  return {'m': zeros, 'v': zeros, 't': jnp.zeros((), jnp.int32)}


def adam_update(grads, state, params, lr=0.02, b1=0.9, b2=0.999, eps=1e-8):
  t = state['t'] + 1
  m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state['m'], grads)
  v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state['v'], grads)
  # Bias correction folded into the step size.
  step = lr * jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
  params = tree_map(lambda p, m, v: p - step * m / (jnp.sqrt(v) + eps),
                    params, m, v)
  return params, {'m': m, 'v': v, 't': t}


@jax.jit
def train_step(params, state, x, y):
  loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
  params, state = adam_update(grads, state, params)
  return params, state, loss


@jax.jit
def accuracy(params, x, y):
  return jnp.mean((logits(params, x) > 0) == (y > 0.5))


def progress(step, total, loss, width=30):
  done = width * step // total
  bar = '#' * done + '.' * (width - done)
  sys.stdout.write(f'\r[{bar}] step {step:4d}/{total}  loss {loss:.4f}')
  sys.stdout.flush()


def main(num_steps=200):
  key = jax.random.PRNGKey(0)
  k_data, k_init = jax.random.split(key)
  x, y = make_moons(k_data)
  params = init_mlp(k_init, [2, 32, 32, 1])
  state = adam_init(params)
  print('data:', x.shape, x.dtype, '; params:',
        tree_map(lambda p: p.shape, params))

  for step in range(1, num_steps + 1):
    params, state, loss = train_step(params, state, x, y)
    if step % 10 == 0 or step == num_steps:
      progress(step, num_steps, float(loss))
  print()

  acc = float(accuracy(params, x, y))
  print(f'final loss: {float(loss_fn(params, x, y)):.4f}')
  print(f'final train accuracy: {acc:.4f}')
  # Same numbers in plain NumPy, as a cross-check of the jitted accuracy.
  z = np.asarray(logits(params, x))
  assert abs(np.mean((z > 0) == (np.asarray(y) > 0.5)) - acc) < 1e-6


if __name__ == '__main__':
  main()
