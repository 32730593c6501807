"""The benchmark workloads of ``benchmarks/run.py``.

Each workload is written once against a ``(jax, jnp)`` pair of modules, so
purejax and JAX run the very same program text, plus a hand-written NumPy
version of the same computation.  ``make(jax, jnp, data)`` and
``numpy(data)`` both return a thunk: calling it runs the workload once and
returns its outputs.  ``check(out)`` picks the values compared across columns.

``make`` jits a new function object on every call: purejax shares traces (and
their executables) between jit objects of the same function, so a reused
function would let one backend's column run another backend's executable.
"""
import itertools

import numpy as np

import model_workloads as models
from workload_common import adam_update, mlp_loss, np_adam_update  # noqa: F401
from workload_common import normal as _normal, np_softmax_xent as _np_softmax_xent
from workload_common import rng as _rng

# kind: "steady" (a warm jitted computation), "overhead" (per-call cost of a
# tiny computation) or "first" (trace + compile + run of a new function).
STEADY, OVERHEAD, FIRST = "steady", "overhead", "first"


class Workload:
  """A named computation with its inputs, its two implementations and its target
  (the largest acceptable ratio of purejax's C backend to JAX)."""

  def __init__(self, name, title, kind, target, data, make, numpy, check=None):
    self.name, self.title, self.kind, self.target = name, title, kind, target
    self.data, self.make, self.numpy = data, make, numpy
    self.check = check or (lambda out: out)


# -- selu: the spec's elementwise function over 1M floats ---------------------

def _selu_data(quick):
  return {"x": _normal(_rng(), 1000 if quick else 1_000_000)}


def _selu_fn(jnp, x, alpha=1.67, lmbda=1.05):
  return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def _selu_make(jax, jnp, d):
  f, x = jax.jit(lambda x: _selu_fn(jnp, x)), jnp.asarray(d["x"])
  return lambda: f(x)


def _selu_numpy(d):
  return lambda: _selu_fn(np, d["x"])


# -- norm: the spec's column standardisation ----------------------------------

def _norm_data(quick):
  return {"x": _normal(_rng(), *((100, 10) if quick else (10000, 100)))}


def _norm_fn(x):
  x = x - x.mean(0)
  return x / x.std(0)


def _norm_make(jax, jnp, d):
  f, x = jax.jit(lambda x: _norm_fn(x)), jnp.asarray(d["x"])
  return lambda: f(x)


def _norm_numpy(d):
  return lambda: _norm_fn(d["x"])


# -- dot: one 1000x1000 float32 matrix product --------------------------------

def _dot_data(quick):
  n = 32 if quick else 1000
  rng = _rng()
  return {"a": _normal(rng, n, n), "b": _normal(rng, n, n)}


def _dot_make(jax, jnp, d):
  f = jax.jit(lambda a, b: jnp.dot(a, b))
  a, b = jnp.asarray(d["a"]), jnp.asarray(d["b"])
  return lambda: f(a, b)


def _dot_numpy(d):
  return lambda: np.dot(d["a"], d["b"])


# -- mlp: one training step, value_and_grad + Adam ----------------------------

def _mlp_data(quick):
  batch, width, classes = (8, 16, 4) if quick else (128, 512, 10)
  rng = _rng()
  dims = [width, width, width, classes]
  params = []
  for din, dout in zip(dims[:-1], dims[1:]):
    params.append((_normal(rng, din, dout) * np.float32(1 / np.sqrt(din)),
                   np.zeros(dout, np.float32)))
  labels = rng.randint(0, classes, batch)
  return {"params": params, "x": _normal(rng, batch, width),
          "y": np.eye(classes, dtype=np.float32)[labels]}


def _mlp_make(jax, jnp, d):
  tree_map = jax.tree_util.tree_map
  loss = mlp_loss(jax, jnp)

  @jax.jit
  def step(params, m, v, t, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    params, m, v, t = adam_update(jax, jnp, params, m, v, t, grads)
    return params, m, v, t, value

  params = tree_map(jnp.asarray, d["params"])
  zeros = tree_map(jnp.zeros_like, params)
  t = jnp.asarray(0.0, jnp.float32)
  x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
  return lambda: step(params, zeros, zeros, t, x, y)


def _mlp_numpy(d):
  params, x, y = d["params"], d["x"], d["y"]
  zeros = [(np.zeros_like(w), np.zeros_like(b)) for w, b in params]

  def step(params, m, v, t):
    hs, h = [x], x
    for w, b in params[:-1]:
      h = np.maximum(h @ w + b, 0)
      hs.append(h)
    w, b = params[-1]
    value, g = _np_softmax_xent(h @ w + b, y)
    grads = [None] * len(params)
    for i in reversed(range(len(params))):
      grads[i] = (hs[i].T @ g, g.sum(0))
      if i:
        g = (g @ params[i][0].T) * (hs[i] > 0)
    flat = [[a for pair in tree for a in pair] for tree in (params, m, v, grads)]
    new_p, new_m, new_v, t = np_adam_update(flat[0], flat[1], flat[2], t, flat[3])
    pairs = lambda xs: list(zip(xs[::2], xs[1::2]))
    return pairs(new_p), pairs(new_m), pairs(new_v), t, value

  return lambda: step(params, zeros, zeros, 0)


def _mlp_check(out):
  params, _, _, _, value = out
  return [value, params[0][0]]


# -- convnet: one training step of a small conv net, value_and_grad + SGD ----

_CONV_DIMS = ("NHWC", "HWIO", "NHWC")
_SGD_LR = 0.01


def _convnet_data(quick):
  batch, size, c1, c2 = (2, 8, 4, 8) if quick else (32, 28, 32, 64)
  classes = 10
  rng = _rng()
  flat = (size // 4) * (size // 4) * c2
  params = [(_normal(rng, 3, 3, 1, c1) * np.float32(1 / 3), np.zeros(c1, np.float32)),
            (_normal(rng, 3, 3, c1, c2) * np.float32(1 / np.sqrt(9 * c1)),
             np.zeros(c2, np.float32)),
            (_normal(rng, flat, classes) * np.float32(1 / np.sqrt(flat)),
             np.zeros(classes, np.float32))]
  labels = rng.randint(0, classes, batch)
  return {"params": params, "x": _normal(rng, batch, size, size, 1),
          "y": np.eye(classes, dtype=np.float32)[labels]}


def _convnet_make(jax, jnp, d):
  lax, tree_map = jax.lax, jax.tree_util.tree_map

  def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
      h = lax.conv_general_dilated(h, w, (1, 1), "SAME", dimension_numbers=_CONV_DIMS) + b
      h = jnp.maximum(h, 0.0)
      h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    w, b = params[-1]
    logits = h.reshape(h.shape[0], -1) @ w + b
    m = lax.stop_gradient(logits.max(-1, keepdims=True))
    lse = m + jnp.log(jnp.exp(logits - m).sum(-1, keepdims=True))
    return -jnp.mean(jnp.sum(y * (logits - lse), -1))

  @jax.jit
  def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return tree_map(lambda p, g: p - _SGD_LR * g, params, grads), value, grads

  params = tree_map(jnp.asarray, d["params"])
  x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
  return lambda: step(params, x, y)


def _np_conv_same(x, w):
  """3x3 "SAME" convolution, NHWC x HWIO, as one matrix product (im2col);
  also returns the columns for the backward pass."""
  n, h, wd, c = x.shape
  padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
  cols = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))
  cols = cols.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * wd, 9 * c)
  return (cols @ w.reshape(9 * c, -1)).reshape(n, h, wd, -1), cols


def _np_conv_same_grads(x, cols, w, g, need_dx=True):
  """Gradients of ``_np_conv_same`` w.r.t. its input (if needed) and kernel."""
  n, h, wd, c = x.shape
  g2 = g.reshape(n * h * wd, -1)
  dw = (cols.T @ g2).reshape(w.shape)
  if not need_dx:
    return None, dw
  dcols = (g2 @ w.reshape(9 * c, -1).T).reshape(n, h, wd, 3, 3, c)
  dx = np.zeros((n, h + 2, wd + 2, c), x.dtype)
  for i in range(3):
    for j in range(3):
      dx[:, i:i + h, j:j + wd] += dcols[:, :, :, i, j]
  return dx[:, 1:-1, 1:-1], dw


def _np_pool(h):
  """2x2 max pooling; also the index of each window's first maximum."""
  n, hh, ww, c = h.shape
  win = h.reshape(n, hh // 2, 2, ww // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
  win = win.reshape(n, hh // 2, ww // 2, c, 4)
  pick = win.argmax(-1)
  return np.take_along_axis(win, pick[..., None], -1)[..., 0], pick


def _np_unpool(g, pick):
  n, ph, pw, c = g.shape
  win = np.zeros((n, ph, pw, c, 4), g.dtype)
  np.put_along_axis(win, pick[..., None], g[..., None], -1)
  win = win.reshape(n, ph, pw, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
  return win.reshape(n, 2 * ph, 2 * pw, c)


def _convnet_numpy(d):
  params, x, y = d["params"], d["x"], d["y"]

  def step():
    saved, h = [], x
    for w, b in params[:-1]:
      a, cols = _np_conv_same(h, w)
      a += b
      r = np.maximum(a, 0)
      p, pick = _np_pool(r)
      saved.append((h, cols, a, pick))
      h = p
    w, b = params[-1]
    flat = h.reshape(len(h), -1)
    value, g = _np_softmax_xent(flat @ w + b, y)
    grads = [None] * len(params)
    grads[-1] = (flat.T @ g, g.sum(0))
    g = (g @ w.T).reshape(h.shape)
    for i in reversed(range(len(params) - 1)):
      h_in, cols, a, pick = saved[i]
      g = _np_unpool(g, pick) * (a > 0)
      dx, dw = _np_conv_same_grads(h_in, cols, params[i][0], g, need_dx=i > 0)
      grads[i] = (dw, g.sum((0, 1, 2)))
      g = dx
    new = [tuple(p - np.float32(_SGD_LR) * q for p, q in zip(ps, gs))
           for ps, gs in zip(params, grads)]
    return new, value, grads

  return step


def _convnet_check(out):
  # The gradients themselves: an SGD step changes the weights too little to
  # show a wrong one.
  params, value, grads = out
  return [value, grads[0][0], grads[1][0], grads[2][0], params[2][0]]


# -- rnn: a 1000-step scan, forward and backward ------------------------------

def _rnn_data(quick):
  steps, hidden = (10, 8) if quick else (1000, 128)
  rng = _rng()
  scale = np.float32(1 / np.sqrt(hidden))
  return {"w": _normal(rng, hidden, hidden) * scale, "u": _normal(rng, hidden, hidden) * scale,
          "b": np.zeros(hidden, np.float32), "xs": _normal(rng, steps, hidden)}


def _rnn_make(jax, jnp, d):
  def loss(params, xs):
    w, u, b = params

    def cell(h, x):
      h = jnp.tanh(h @ w + x @ u + b)
      return h, h

    _, hs = jax.lax.scan(cell, jnp.zeros(w.shape[0], w.dtype), xs)
    return jnp.mean(hs * hs)

  f = jax.jit(jax.value_and_grad(loss))
  params = tuple(jnp.asarray(d[k]) for k in "wub")
  xs = jnp.asarray(d["xs"])
  return lambda: f(params, xs)


def _rnn_numpy(d):
  w, u, b, xs = d["w"], d["u"], d["b"], d["xs"]

  def value_and_grad():
    steps, hidden = xs.shape
    hs = np.zeros((steps + 1, hidden), np.float32)
    for t in range(steps):
      hs[t + 1] = np.tanh(hs[t] @ w + xs[t] @ u + b)
    value = np.mean(hs[1:] * hs[1:])
    dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    scale = np.float32(2 / (steps * hidden))
    g = np.zeros(hidden, np.float32)
    for t in reversed(range(steps)):
      da = (g + scale * hs[t + 1]) * (1 - hs[t + 1] * hs[t + 1])
      dw += np.outer(hs[t], da)
      du += np.outer(xs[t], da)
      db += da
      g = da @ w.T
    return value, (dw, du, db)

  return value_and_grad


def _rnn_check(out):
  value, (dw, _, _) = out
  return [value, dw]


# -- attention: single-head softmax attention ---------------------------------

def _attention_data(quick):
  seq, dim = (16, 8) if quick else (512, 64)
  rng = _rng()
  return {k: _normal(rng, seq, dim) for k in "qkv"}


def _attention_fn(xp, q, k, v):
  s = (q @ k.T) / np.float32(np.sqrt(q.shape[-1]))
  e = xp.exp(s - s.max(-1, keepdims=True))
  return (e / e.sum(-1, keepdims=True)) @ v


def _attention_make(jax, jnp, d):
  f = jax.jit(lambda q, k, v: _attention_fn(jnp, q, k, v))
  q, k, v = (jnp.asarray(d[n]) for n in "qkv")
  return lambda: f(q, k, v)


def _attention_numpy(d):
  return lambda: _attention_fn(np, d["q"], d["k"], d["v"])


# -- reduce_axes: sum, max, logsumexp, mean over each axis and all -----------

def _reduce_data(quick):
  return {"x": _normal(_rng(), *((64, 48) if quick else (4096, 4096)))}


def _reductions(xp, logsumexp, x):
  """Twelve reductions: sum, max, logsumexp and mean along axis 0, 1, all."""
  return tuple(r(x, axis) for axis in (0, 1, None)
               for r in (lambda x, a: x.sum(a), lambda x, a: x.max(a), logsumexp,
                         lambda x, a: xp.mean(x, a)))


def _np_logsumexp(x, axis):
  m = x.max(axis, keepdims=True)
  out = np.log(np.exp(x - m).sum(axis, keepdims=True)) + m
  return out.reshape(()) if axis is None else out.squeeze(axis)


def _reduce_make(jax, jnp, d):
  f = jax.jit(lambda x: _reductions(jnp, jax.nn.logsumexp, x))
  x = jnp.asarray(d["x"])
  return lambda: f(x)


def _reduce_numpy(d):
  return lambda: _reductions(np, _np_logsumexp, d["x"])


# -- embedding: a table lookup and its gradient (a scatter-add) --------------

def _embedding_data(quick):
  rows, dim, n = (100, 8, 32) if quick else (50000, 256, 8192)
  rng = _rng()
  return {"table": _normal(rng, rows, dim), "idx": rng.randint(0, rows, n).astype(np.int32)}


def _embedding_make(jax, jnp, d):
  def loss(table, idx):
    rows = table[idx]
    return jnp.mean(rows * rows)

  @jax.jit
  def f(table, idx):
    value, grad = jax.value_and_grad(loss)(table, idx)
    return table[idx], value, grad

  table, idx = jnp.asarray(d["table"]), jnp.asarray(d["idx"])
  return lambda: f(table, idx)


def _embedding_numpy(d):
  table, idx = d["table"], d["idx"]

  def run():
    rows = table[idx]
    grad = np.zeros_like(table)
    np.add.at(grad, idx, np.float32(2 / rows.size) * rows)
    return rows, np.mean(rows * rows), grad

  return run


# -- sort, cumsum: 1M float32 -------------------------------------------------

def _vector_data(quick):
  return {"x": _normal(_rng(), 1000 if quick else 1_000_000)}


def _sort_make(jax, jnp, d):
  f, x = jax.jit(lambda x: jnp.sort(x)), jnp.asarray(d["x"])
  return lambda: f(x)


def _sort_numpy(d):
  return lambda: np.sort(d["x"])


def _cumsum_make(jax, jnp, d):
  f, x = jax.jit(lambda x: jnp.cumsum(x)), jnp.asarray(d["x"])
  return lambda: f(x)


def _cumsum_numpy(d):
  return lambda: np.cumsum(d["x"])


# -- random_normal: 4M standard normal samples from one key -------------------

def _random_normal_data(quick):
  return {"n": 1000 if quick else 4_000_000, "seed": 0}


def _random_normal_make(jax, jnp, d):
  n = d["n"]
  f, key = jax.jit(lambda k: jax.random.normal(k, (n,))), jax.random.PRNGKey(d["seed"])
  return lambda: f(key)


def _random_normal_numpy(d):
  # The same stream in NumPy: Threefry-2x32 of the counters (0, i) under the
  # key (0, seed), the xor of its two words, the top 23 bits as a float in
  # [1, 2), then uniform in (-1, 1) and sqrt(2) erf_inv.
  from purejax._src.lax.special_erf import erf_inv_np
  from purejax._src.random.threefry import _threefry_numpy

  n, seed = d["n"], np.uint32(d["seed"])

  def run():
    y1, y2 = _threefry_numpy(np.uint32(0), seed, np.zeros(n, np.uint32),
                             np.arange(n, dtype=np.uint32))
    bits = ((y1 ^ y2) >> np.uint32(9)) | np.uint32(0x3F800000)
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = bits.view(np.float32) - np.float32(1)
    u = np.maximum(lo, u * (np.float32(1) - lo) + lo)
    return np.float32(np.sqrt(2)) * erf_inv_np(u)
  return run


# -- linear algebra: LU solve, Cholesky, eigh of 512x512 float32 -------------

def _spd(rng, n):
  a = _normal(rng, n, n)
  return (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)


def _solve_data(quick):
  n = 16 if quick else 512
  rng = _rng()
  return {"a": _normal(rng, n, n), "b": _normal(rng, n, 4), "spd": _spd(rng, n)}


def _solve_make(jax, jnp, d):
  f = jax.jit(lambda a, b: jnp.linalg.solve(a, b))
  a, b = jnp.asarray(d["a"]), jnp.asarray(d["b"])
  return lambda: f(a, b)


def _solve_numpy(d):
  return lambda: np.linalg.solve(d["a"], d["b"])


def _cholesky_make(jax, jnp, d):
  f = jax.jit(lambda a: jnp.linalg.cholesky(a))
  a = jnp.asarray(d["spd"])
  return lambda: f(a)


def _cholesky_numpy(d):
  return lambda: np.linalg.cholesky(d["spd"])


def _eigh_make(jax, jnp, d):
  f = jax.jit(lambda a: jnp.linalg.eigh(a)[0])
  a = jnp.asarray(d["spd"])
  return lambda: f(a)


def _eigh_numpy(d):
  return lambda: np.linalg.eigvalsh(d["spd"])


# -- per-call overheads and time to first result ------------------------------

def _scalar_data(quick):
  return {"x": np.float32(1.5), "y": np.float32(2.25)}


def _eager_add_make(jax, jnp, d):
  x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
  return lambda: x + y


def _eager_add_numpy(d):
  x, y = np.asarray(d["x"]), np.asarray(d["y"])
  return lambda: x + y


def _jit_call_make(jax, jnp, d):
  f, x = jax.jit(lambda x: x + 1.0), jnp.asarray(d["x"])
  return lambda: f(x)


def _jit_call_numpy(d):
  x = np.asarray(d["x"])
  return lambda: x + np.float32(1.0)


# Every call of a first-result thunk jits a brand-new function with its own
# constant, so no in-memory or on-disk cache can answer it.
_fresh = itertools.count(1)


def _first_fn(xp, x, c):
  y = xp.tanh(x * c) + xp.exp(-x * x)
  return (y - y.mean()) / (y.std() + 1.0)


def _first_data(quick):
  return {"x": _normal(_rng(), 100 if quick else 1000)}


def _first_make(jax, jnp, d):
  x = jnp.asarray(d["x"])

  def call():
    c = 1.0 + next(_fresh) * 1e-6
    return jax.jit(lambda x: _first_fn(jnp, x, c))(x)
  return call


def _first_numpy(d):
  return lambda: _first_fn(np, d["x"], np.float32(1.0))


WORKLOADS = [
    Workload("selu", "spec selu, 1M float32", STEADY, 1.0,
             _selu_data, _selu_make, _selu_numpy),
    Workload("norm", "spec norm, 10000x100", STEADY, 1.0,
             _norm_data, _norm_make, _norm_numpy),
    Workload("dot", "jnp.dot 1000x1000 float32", STEADY, 1.0,
             _dot_data, _dot_make, _dot_numpy),
    Workload("mlp_step", "MLP step (3x512, batch 128), grad + Adam", STEADY, 1.0,
             _mlp_data, _mlp_make, _mlp_numpy, _mlp_check),
    Workload("convnet", "conv net step (2 conv 3x3 + pool, batch 32), grad + SGD",
             STEADY, 1.0, _convnet_data, _convnet_make, _convnet_numpy, _convnet_check),
    Workload("rnn_scan", "scan RNN 1000 steps (h=128), fwd+bwd", STEADY, 1.0,
             _rnn_data, _rnn_make, _rnn_numpy, _rnn_check),
    Workload("attention", "softmax attention, seq 512, dim 64", STEADY, 1.0,
             _attention_data, _attention_make, _attention_numpy),
    Workload("reduce_axes", "sum, max, logsumexp, mean of 4096x4096 float32 "
             "along axis 0, 1, all", STEADY, 1.0, _reduce_data, _reduce_make, _reduce_numpy),
    Workload("embedding", "embedding lookup (8192 of 50000x256) + its gradient", STEADY, 1.0,
             _embedding_data, _embedding_make, _embedding_numpy),
    Workload("sort", "jnp.sort of 1M float32", STEADY, 1.0,
             _vector_data, _sort_make, _sort_numpy),
    Workload("cumsum", "jnp.cumsum of 1M float32", STEADY, 1.0,
             _vector_data, _cumsum_make, _cumsum_numpy),
    Workload("lstm_scan", "scan LSTM 200 steps (h=128, in 64, batch 32), fwd+bwd", STEADY,
             1.0, models.lstm_data, models.lstm_make, models.lstm_numpy, models.lstm_check),
    Workload("transformer_step", "transformer block step (seq 128, d 128, 4 heads, batch 8), "
             "grad + Adam", STEADY, 1.0, models.transformer_data, models.transformer_make,
             models.transformer_numpy, models.transformer_check),
    Workload("per_example_grads", "vmap(grad) of a 784-128-10 MLP over 128 examples",
             STEADY, 1.0, models.per_example_data, models.per_example_make,
             models.per_example_numpy),
    Workload("random_normal", "4M random.normal samples (float32)", STEADY, 1.0,
             _random_normal_data, _random_normal_make, _random_normal_numpy),
    Workload("linear_solve", "jnp.linalg.solve 512x512 float32, 4 right-hand sides",
             STEADY, 1.0, _solve_data, _solve_make, _solve_numpy),
    Workload("cholesky", "jnp.linalg.cholesky 512x512 float32", STEADY, 1.0,
             _solve_data, _cholesky_make, _cholesky_numpy),
    Workload("eigh", "jnp.linalg.eigh 512x512 float32 (eigenvalues)", STEADY, 1.0,
             _solve_data, _eigh_make, _eigh_numpy),
    Workload("eager_add", "eager scalar add (dispatch)", OVERHEAD, 0.5,
             _scalar_data, _eager_add_make, _eager_add_numpy),
    Workload("jit_call", "call of a trivial jitted function", OVERHEAD, 0.5,
             _scalar_data, _jit_call_make, _jit_call_numpy),
    Workload("first_result", "new jitted function: first result", FIRST, 0.5,
             _first_data, _first_make, _first_numpy),
]
