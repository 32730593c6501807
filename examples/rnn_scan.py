"""A tiny recurrent network written with `lax.scan`, trained by gradient.

The task: read a sequence of numbers and output, at every step, the running
sum of the last three inputs (a short memory task). The recurrence is one
`jax.lax.scan` over time; `vmap` runs it over a batch of sequences, and
`jax.grad` differentiates straight through the scan (its backward pass is a
scan in reverse). Prints the loss going down.
"""
import purejax as jax
import purejax.numpy as jnp

tree_map = jax.tree_util.tree_map


def init_params(key, hidden=16):
  k1, k2, k3 = jax.random.split(key, 3)
  return {
      'w_in': 0.5 * jax.random.normal(k1, (1, hidden)),
      'w_h': jax.random.normal(k2, (hidden, hidden)) / jnp.sqrt(hidden),
      'b_h': jnp.zeros(hidden),
      'w_out': jax.random.normal(k3, (hidden, 1)) / jnp.sqrt(hidden),
      'b_out': jnp.zeros(1),
  }


def rnn(params, xs):
  """xs: (time,) inputs -> (time,) outputs."""
  def cell(h, x):
    h = jnp.tanh(x * params['w_in'][0] + h @ params['w_h'] + params['b_h'])
    y = h @ params['w_out'] + params['b_out']
    return h, y[0]
  h0 = jnp.zeros(params['w_h'].shape[0])
  _, ys = jax.lax.scan(cell, h0, xs)
  return ys


def make_batch(key, batch=32, length=12):
  xs = jax.random.uniform(key, (batch, length), minval=-1.0, maxval=1.0)
  # Target: x[t] + x[t-1] + x[t-2], with zeros before the start.
  padded = jnp.pad(xs, ((0, 0), (2, 0)))
  ys = padded[:, 2:] + padded[:, 1:-1] + padded[:, :-2]
  return xs, ys


def loss_fn(params, xs, ys):
  preds = jax.vmap(rnn, in_axes=(None, 0))(params, xs)
  return jnp.mean((preds - ys) ** 2)


@jax.jit
def train_step(params, xs, ys, lr):
  loss, grads = jax.value_and_grad(loss_fn)(params, xs, ys)
  # Clip the global gradient norm: recurrences can have steep gradients.
  norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree_util.tree_leaves(grads)))
  scale = jnp.minimum(1.0, 1.0 / norm)
  params = tree_map(lambda p, g: p - lr * scale * g, params, grads)
  return params, loss


def main(num_steps=150, lr=0.1):
  key = jax.random.PRNGKey(42)
  k_init, k_data, k_test = jax.random.split(key, 3)
  params = init_params(k_init)
  xs, ys = make_batch(k_data, batch=64)
  print('sequences:', xs.shape, '; scan output shape:',
        rnn(params, xs[0]).shape)

  first = None
  for step in range(num_steps + 1):
    params, loss = train_step(params, xs, ys, lr)
    first = float(loss) if first is None else first
    if step % 15 == 0:
      print(f'step {step:4d}  loss {float(loss):.5f}')

  test_xs, test_ys = make_batch(k_test, batch=64)
  print(f'initial loss: {first:.5f}')
  print(f'test loss: {float(loss_fn(params, test_xs, test_ys)):.5f}')
  print(f'final loss: {float(loss_fn(params, xs, ys)):.5f}')


if __name__ == '__main__':
  main()
