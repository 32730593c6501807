"""Pieces shared by the benchmark workloads (``workloads.py`` and
``model_workloads.py``): seeded random inputs, the MLP loss, and one Adam
step written against ``(jax, jnp)`` and again in NumPy."""
import numpy as np

LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8


def rng():
  return np.random.RandomState(0)


def normal(rng, *shape):
  return rng.standard_normal(shape).astype(np.float32)


def mlp_loss(jax, jnp):
  """The MLP workload's loss: relu layers, softmax cross-entropy."""

  def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
      h = jnp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    m = jax.lax.stop_gradient(logits.max(-1, keepdims=True))
    lse = m + jnp.log(jnp.exp(logits - m).sum(-1, keepdims=True))
    return -jnp.mean(jnp.sum(y * (logits - lse), -1))

  return loss


def adam_update(jax, jnp, params, m, v, t, grads):
  """One Adam update of ``params`` (moments ``m``, ``v``; step count ``t``)."""
  tree_map = jax.tree_util.tree_map
  t = t + 1
  m = tree_map(lambda m, g: B1 * m + (1 - B1) * g, m, grads)
  v = tree_map(lambda v, g: B2 * v + (1 - B2) * g * g, v, grads)
  c1, c2 = 1 - B1 ** t, 1 - B2 ** t
  params = tree_map(lambda p, m, v: p - LR * (m / c1) / (jnp.sqrt(v / c2) + EPS),
                    params, m, v)
  return params, m, v, t


def np_adam_update(params, m, v, t, grads):
  """``adam_update`` in NumPy, over lists of arrays (float32 throughout)."""
  t = t + 1
  c1, c2 = np.float32(1 - B1 ** t), np.float32(1 - B2 ** t)
  m = [np.float32(B1) * a + np.float32(1 - B1) * g for a, g in zip(m, grads)]
  v = [np.float32(B2) * a + np.float32(1 - B2) * g * g for a, g in zip(v, grads)]
  params = [p - np.float32(LR) * (a / c1) / (np.sqrt(b / c2) + np.float32(EPS))
            for p, a, b in zip(params, m, v)]
  return params, m, v, t


def np_softmax_xent(logits, y):
  """Mean softmax cross-entropy of ``logits`` against one-hot ``y``, and its
  gradient w.r.t. the logits (the NumPy references' loss)."""
  z = logits - logits.max(-1, keepdims=True)
  e = np.exp(z)
  s = e.sum(-1, keepdims=True)
  value = -np.mean(np.sum(y * (z - np.log(s)), -1))
  return value, (e / s - y) / np.float32(len(logits))
