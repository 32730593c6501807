"""Model workloads of ``workloads.py`` whose NumPy versions write the backward
pass out by hand: an LSTM under ``lax.scan``, a transformer block's training
step and per-example gradients.  Each has ``*_data(quick)``,
``*_make(jax, jnp, data)``, ``*_numpy(data)`` and ``*_check(out)``, as
``workloads.Workload`` takes them."""
import numpy as np

from workload_common import adam_update, mlp_loss, normal, np_adam_update, rng


def _np_sigmoid(x):
  return np.float32(1) / (np.float32(1) + np.exp(-x))


# -- lstm_scan: an LSTM over 200 steps, loss and gradient ----------------------

def lstm_data(quick):
  steps, batch, inputs, hidden = (5, 2, 4, 8) if quick else (200, 32, 64, 128)
  r = rng()
  return {"w": normal(r, inputs, 4 * hidden) * np.float32(1 / np.sqrt(inputs)),
          "u": normal(r, hidden, 4 * hidden) * np.float32(1 / np.sqrt(hidden)),
          "b": np.zeros(4 * hidden, np.float32), "xs": normal(r, steps, batch, inputs)}


def lstm_make(jax, jnp, d):
  sigmoid = jax.nn.sigmoid

  def loss(params, xs):
    w, u, b = params
    hidden = u.shape[0]

    def cell(carry, x):
      h, c = carry
      z = x @ w + h @ u + b
      i, f, g, o = (z[:, k * hidden:(k + 1) * hidden] for k in range(4))
      c = sigmoid(f) * c + sigmoid(i) * jnp.tanh(g)
      h = sigmoid(o) * jnp.tanh(c)
      return (h, c), h

    zeros = jnp.zeros((xs.shape[1], hidden), xs.dtype)
    _, hs = jax.lax.scan(cell, (zeros, zeros), xs)
    return jnp.mean(hs * hs)

  f = jax.jit(jax.value_and_grad(loss))
  params = tuple(jnp.asarray(d[k]) for k in "wub")
  xs = jnp.asarray(d["xs"])
  return lambda: f(params, xs)


def lstm_numpy(d):
  w, u, b, xs = d["w"], d["u"], d["b"], d["xs"]
  steps, batch, _ = xs.shape
  hidden = u.shape[0]

  def value_and_grad():
    hs = np.zeros((steps + 1, batch, hidden), np.float32)
    cs = np.zeros_like(hs)
    gates = []
    for t in range(steps):
      z = xs[t] @ w + hs[t] @ u + b
      i, f, o = (_np_sigmoid(z[:, k * hidden:(k + 1) * hidden]) for k in (0, 1, 3))
      g = np.tanh(z[:, 2 * hidden:3 * hidden])
      cs[t + 1] = f * cs[t] + i * g
      hs[t + 1] = o * np.tanh(cs[t + 1])
      gates.append((i, f, g, o))
    value = np.mean(hs[1:] * hs[1:])
    scale = np.float32(2 / (steps * batch * hidden))
    dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    dh_next = np.zeros((batch, hidden), np.float32)
    dc_next = np.zeros_like(dh_next)
    for t in reversed(range(steps)):
      i, f, g, o = gates[t]
      tc = np.tanh(cs[t + 1])
      dh = dh_next + scale * hs[t + 1]
      dc = dc_next + dh * o * (1 - tc * tc)
      dz = np.concatenate([dc * g * i * (1 - i), dc * cs[t] * f * (1 - f),
                           dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
      dw += xs[t].T @ dz
      du += hs[t].T @ dz
      db += dz.sum(0)
      dh_next, dc_next = dz @ u.T, dc * f
    return value, (dw, du, db)

  return value_and_grad


def lstm_check(out):
  value, (dw, du, db) = out
  return [value, dw, du, db]


# -- transformer_step: one pre-norm block, grad + Adam --------------------------

_LN_EPS = 1e-5
_MASKED = -1e9
_GELU_C = float(np.sqrt(2 / np.pi))
# The parameters in the order of their flattened tree (dict keys sorted).
_BLOCK_PARAMS = ("b1", "b2", "ln1_b", "ln1_g", "ln2_b", "ln2_g", "w1", "w2", "wo", "wqkv")


def transformer_data(quick):
  batch, seq, dim, heads = (2, 8, 16, 4) if quick else (8, 128, 128, 4)
  r = rng()
  scale = np.float32(1 / np.sqrt(dim))
  params = {"wqkv": normal(r, dim, 3 * dim) * scale, "wo": normal(r, dim, dim) * scale,
            "w1": normal(r, dim, 4 * dim) * scale,
            "w2": normal(r, 4 * dim, dim) * np.float32(1 / np.sqrt(4 * dim)),
            "b1": np.zeros(4 * dim, np.float32), "b2": np.zeros(dim, np.float32),
            "ln1_g": np.ones(dim, np.float32), "ln1_b": np.zeros(dim, np.float32),
            "ln2_g": np.ones(dim, np.float32), "ln2_b": np.zeros(dim, np.float32)}
  return {"params": params, "heads": heads, "x": normal(r, batch, seq, dim),
          "y": normal(r, batch, seq, dim)}


def _gelu(xp, x):
  """GELU, tanh approximation (``jax.nn.gelu``'s default), written out."""
  return 0.5 * x * (1 + xp.tanh(_GELU_C * (x + 0.044715 * (x * x * x))))


def transformer_make(jax, jnp, d):
  tree_map, heads = jax.tree_util.tree_map, d["heads"]

  def layer_norm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + _LN_EPS) * g + b

  def split_heads(t):   # (B, T, D) -> (B, H, T, D / H)
    b, s, dim = t.shape
    return t.reshape(b, s, heads, dim // heads).transpose(0, 2, 1, 3)

  def loss(p, x, y):
    b, s, dim = x.shape
    a = layer_norm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = (split_heads(t) for t in jnp.split(a @ p["wqkv"], 3, axis=-1))
    scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(np.sqrt(dim // heads))
    causal = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(causal, scores, _MASKED)
    e = jnp.exp(scores - jax.lax.stop_gradient(scores.max(-1, keepdims=True)))
    attn = (e / e.sum(-1, keepdims=True)) @ v
    x1 = x + attn.transpose(0, 2, 1, 3).reshape(b, s, dim) @ p["wo"]
    h = _gelu(jnp, layer_norm(x1, p["ln2_g"], p["ln2_b"]) @ p["w1"] + p["b1"])
    out = x1 + h @ p["w2"] + p["b2"]
    return jnp.mean(jnp.square(out - y))

  @jax.jit
  def step(params, m, v, t, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    params, m, v, t = adam_update(jax, jnp, params, m, v, t, grads)
    return params, m, v, t, value, grads

  params = tree_map(jnp.asarray, d["params"])
  zeros = tree_map(jnp.zeros_like, params)
  t = jnp.asarray(0.0, jnp.float32)
  x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
  return lambda: step(params, zeros, zeros, t, x, y)


def _np_layer_norm(x, g, b):
  mu = x.mean(-1, keepdims=True)
  inv = np.float32(1) / np.sqrt(np.mean(np.square(x - mu), -1, keepdims=True)
                                + np.float32(_LN_EPS))
  xhat = (x - mu) * inv
  return xhat * g + b, (xhat, inv)


def _np_layer_norm_grads(dy, g, saved):
  """(dx, dg, db) of ``_np_layer_norm``."""
  xhat, inv = saved
  dxhat = dy * g
  dx = inv * (dxhat - dxhat.mean(-1, keepdims=True)
              - xhat * (dxhat * xhat).mean(-1, keepdims=True))
  return dx, (dy * xhat).sum((0, 1)), dy.sum((0, 1))


def _np_matmul_grads(x, w, dy):
  """(dx, dw) of ``x @ w`` for x of shape (B, T, K)."""
  return dy @ w.T, x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def transformer_numpy(d):
  p, heads, x, y = d["params"], d["heads"], d["x"], d["y"]
  b, s, dim = x.shape
  dh = dim // heads
  f32 = np.float32

  def split(t):
    return t.reshape(b, s, heads, dh).transpose(0, 2, 1, 3)

  def merge(t):
    return t.transpose(0, 2, 1, 3).reshape(b, s, dim)

  def step():
    a, ln1 = _np_layer_norm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = (split(t) for t in np.split(a @ p["wqkv"], 3, axis=-1))
    scores = (q @ k.transpose(0, 1, 3, 2)) / f32(np.sqrt(dh))
    scores = np.where(np.tril(np.ones((s, s), bool)), scores, f32(_MASKED))
    e = np.exp(scores - scores.max(-1, keepdims=True))
    probs = e / e.sum(-1, keepdims=True)
    attn = merge(probs @ v)
    x1 = x + attn @ p["wo"]
    a2, ln2 = _np_layer_norm(x1, p["ln2_g"], p["ln2_b"])
    pre = a2 @ p["w1"] + p["b1"]
    h = _gelu(np, pre)
    out = x1 + h @ p["w2"] + p["b2"]
    diff = out - y
    value = np.mean(np.square(diff))
    grads = {}
    dout = f32(2 / diff.size) * diff
    grads["b2"] = dout.sum((0, 1))
    dh_, grads["w2"] = _np_matmul_grads(h, p["w2"], dout)
    t = np.tanh(f32(_GELU_C) * (pre + f32(0.044715) * pre * pre * pre))
    dpre = dh_ * (f32(0.5) * (1 + t) + f32(0.5) * pre * (1 - t * t) * f32(_GELU_C)
                  * (1 + f32(3 * 0.044715) * pre * pre))
    grads["b1"] = dpre.sum((0, 1))
    da2, grads["w1"] = _np_matmul_grads(a2, p["w1"], dpre)
    dx1, grads["ln2_g"], grads["ln2_b"] = _np_layer_norm_grads(da2, p["ln2_g"], ln2)
    dx1 = dx1 + dout
    dattn, grads["wo"] = _np_matmul_grads(attn, p["wo"], dx1)
    dctx = split(dattn)
    dprobs = dctx @ v.transpose(0, 1, 3, 2)
    dv = probs.transpose(0, 1, 3, 2) @ dctx
    dscores = probs * (dprobs - (dprobs * probs).sum(-1, keepdims=True)) / f32(np.sqrt(dh))
    dq, dk = dscores @ k, dscores.transpose(0, 1, 3, 2) @ q
    dqkv = np.concatenate([merge(dq), merge(dk), merge(dv)], axis=-1)
    da, grads["wqkv"] = _np_matmul_grads(a, p["wqkv"], dqkv)
    _, grads["ln1_g"], grads["ln1_b"] = _np_layer_norm_grads(da, p["ln1_g"], ln1)
    flat = [p[k] for k in _BLOCK_PARAMS]
    zeros = [np.zeros_like(a) for a in flat]
    new, m, v2, t = np_adam_update(flat, zeros, zeros, 0, [grads[k] for k in _BLOCK_PARAMS])
    named = lambda xs: dict(zip(_BLOCK_PARAMS, xs))
    return named(new), named(m), named(v2), t, value, grads

  return step


def transformer_check(out):
  # The gradients themselves: one Adam step moves each weight by about the
  # learning rate whatever the gradient's size.
  params, _, _, _, value, grads = out
  return [value, grads["wqkv"], grads["wo"], grads["w1"], grads["w2"], grads["ln1_g"],
          grads["ln2_b"], params["wqkv"]]


# -- per_example_grads: vmap(grad(loss)) of a small MLP -------------------------

def per_example_data(quick):
  batch, dims = (4, (16, 8, 4)) if quick else (128, (784, 128, 10))
  r = rng()
  params = [(normal(r, din, dout) * np.float32(1 / np.sqrt(din)), np.zeros(dout, np.float32))
            for din, dout in zip(dims[:-1], dims[1:])]
  labels = r.randint(0, dims[-1], batch)
  return {"params": params, "x": normal(r, batch, dims[0]),
          "y": np.eye(dims[-1], dtype=np.float32)[labels]}


def per_example_make(jax, jnp, d):
  per_example = jax.vmap(jax.grad(mlp_loss(jax, jnp)), in_axes=(None, 0, 0))
  f = jax.jit(per_example)
  params = jax.tree_util.tree_map(jnp.asarray, d["params"])
  x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
  return lambda: f(params, x, y)


def per_example_numpy(d):
  (w1, b1), (w2, b2) = d["params"]
  x, y = d["x"], d["y"]

  def grads():
    h = np.maximum(x @ w1 + b1, 0)
    logits = h @ w2 + b2
    e = np.exp(logits - logits.max(-1, keepdims=True))
    g = e / e.sum(-1, keepdims=True) - y        # each example's own loss
    dh = (g @ w2.T) * (h > 0)
    return [(x[:, :, None] * dh[:, None, :], dh), (h[:, :, None] * g[:, None, :], g)]

  return grads
