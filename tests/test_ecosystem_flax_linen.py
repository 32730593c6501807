"""flax.linen as real projects use it, unedited, on purejax (``python -m
purejax``): scanned RNN cells, lifted transforms, normalisation layers with
mutable batch statistics, a Transformer decoded with its ``cache``, CNNs,
mixed precision, training utilities, logical partitioning and a pmapped
ResNet step each give JAX's values (losses within float32 rounding, shapes,
dtypes and tree structure exactly).  Needs the ``ecosystem`` extra: skipped
without it, except under CI (the CI variable set)."""
import numpy as np
import pytest

from tests.ecosystem import require, run_on_both

pytestmark = pytest.mark.ecosystem

SHAPES = "lambda t: jax.tree.map(lambda a: [list(a.shape), str(a.dtype)], t)"


# Defined in the programs that train a regression with Adam (5 steps).
TRAIN_MSE = """
  def train_mse(apply, params, x, y, steps=5):
    opt = optax.adam(1e-2)
    state = opt.init(params)
    @jax.jit
    def step(p, s):
      l, g = jax.value_and_grad(lambda p: jnp.mean((apply(p, x) - y) ** 2))(p)
      u, s = opt.update(g, s, p)
      return optax.apply_updates(p, u), s, l
    losses = []
    for _ in range(steps):
      params, state, l = step(params, state)
      losses.append(float(l))
    return params, losses
"""


def run(source, tmp_path):
  require("flax")
  require("optax")
  return run_on_both(source, tmp_path)


def assert_close(got, want, keys, rtol=1e-4, atol=1e-5):
  for k in keys:
    np.testing.assert_allclose(np.asarray(got[k], float), np.asarray(want[k], float),
                               rtol=rtol, atol=atol, err_msg=k)


def assert_same(got, want, keys):
  for k in keys:
    assert got[k] == want[k], k


def assert_trains(losses, factor=0.9):
  assert losses[-1] < factor * losses[0], losses


# nn.scan over an LSTM cell (weights broadcast, a dropout mask split per
# step), nn.RNN with GRU/optimized-LSTM cells, seq_lengths, reverse, and
# nn.Bidirectional; both trained with optax.
RNN = f"""
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn

  class DropLSTM(nn.Module):
    hidden: int
    @nn.compact
    def __call__(self, carry, x):
      carry, y = nn.LSTMCell(self.hidden)(carry, x)
      return carry, nn.Dropout(0.1, deterministic=False)(y)

  class ScanLSTM(nn.Module):
    @nn.compact
    def __call__(self, xs):
      cell = nn.scan(DropLSTM, variable_broadcast="params",
                     split_rngs={{"params": False, "dropout": True}}, in_axes=1, out_axes=1)(8)
      carry = nn.LSTMCell(8, parent=None).initialize_carry(jax.random.key(0), xs[:, 0].shape)
      carry, ys = cell(carry, xs)
      return nn.Dense(1)(ys[:, -1])

  class GRUNet(nn.Module):
    @nn.compact
    def __call__(self, xs):
      ys = nn.RNN(nn.GRUCell(features=6))(xs, seq_lengths=jnp.array([5, 5, 4, 4, 3, 3, 2, 5]))
      back = nn.RNN(nn.OptimizedLSTMCell(features=4), reverse=True, keep_order=True)(xs)
      bi = nn.Bidirectional(nn.RNN(nn.GRUCell(3)), nn.RNN(nn.GRUCell(3)))(xs)
      return nn.Dense(1)(jnp.concatenate([ys, back, bi], -1)[:, -1])

  rng = np.random.default_rng(0)
  xs = jnp.asarray(rng.normal(size=(8, 5, 3)).astype(np.float32))
  y = jnp.asarray(rng.normal(size=(8, 1)).astype(np.float32))
  out = {{"jax": jax.__name__}}
  for name, model in [("lstm", ScanLSTM()), ("gru", GRUNet())]:
    params = model.init({{"params": jax.random.key(1), "dropout": jax.random.key(2)}}, xs)
    opt = optax.adam(1e-2)
    st = opt.init(params)
    @jax.jit
    def step(p, s, key):
      loss = lambda p: jnp.mean((model.apply(p, xs, rngs={{"dropout": key}}) - y) ** 2)
      l, g = jax.value_and_grad(loss)(p)
      u, s = opt.update(g, s, p)
      return optax.apply_updates(p, u), s, l
    losses = []
    for i in range(5):
      params, st, l = step(params, st, jax.random.key(10 + i))
      losses.append(float(l))
    out[name] = losses
    out[name + "_shapes"] = ({SHAPES})(params)
  print(json.dumps(out))
"""


def test_scanned_and_rnn_cells_trained_with_optax_match_jax(tmp_path):
  got, want = run(RNN, tmp_path)
  assert_trains(got["lstm"])
  assert_trains(got["gru"])
  assert got["lstm_shapes"]["params"]["ScanDropLSTM_0"]["LSTMCell_0"]["hi"]["kernel"] == \
      [[8, 8], "float32"]
  if want is not None:
    assert_close(got, want, ["lstm", "gru"], rtol=2e-5, atol=0)
    assert_same(got, want, ["lstm_shapes", "gru_shapes"])


# Lifted transforms in a setup-style module: remat, checkpoint with a
# policy, jit, a vmapped ensemble, params stacked by scan, map_variables,
# cond, switch and while_loop; nn.jvp, nn.vjp and nn.custom_vjp.
TRANSFORMS = f"""
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn
{TRAIN_MSE}

  class Block(nn.Module):
    @nn.compact
    def __call__(self, x):
      return nn.tanh(nn.Dense(8)(x))

  class DenseStep(nn.Module):
    @nn.compact
    def __call__(self, c, _):
      return nn.tanh(nn.Dense(4)(c)), None

  def standardize(tree):   # weight standardisation of the kernels
    return jax.tree.map(lambda w: (w - w.mean()) / (w.std() + 1e-3) if w.ndim == 2 else w, tree)

  class Net(nn.Module):
    def setup(self):
      self.dense = nn.Dense(4)
      self.b = Block()
      self.remb = nn.remat(Block)()
      self.ckb = nn.checkpoint(Block, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)()
      self.jb = nn.jit(Block)()
      self.ens = nn.vmap(nn.Dense, variable_axes={{"params": 0}}, split_rngs={{"params": True}},
                         in_axes=None, out_axes=0, axis_size=3)(4)
      self.stack = nn.scan(DenseStep, variable_axes={{"params": 0}}, split_rngs={{"params": True}},
                           length=2)()
      self.wsd = nn.map_variables(nn.Dense, "params", trans_in_fn=standardize, init=True)(4)

    def __call__(self, x):
      x = self.jb(self.ckb(self.remb(self.b(x))))
      x = self.ens(x).mean(0)
      x, _ = self.stack(x, None)
      x = nn.cond(x.sum() > 0, lambda m, c: m.dense(c), lambda m, c: -m.dense(c), self, x)
      x = nn.switch(1, [lambda m, c: m.dense(c), lambda m, c: m.dense(c) * 2.0], self, x)
      return self.wsd(x).sum(-1, keepdims=True)

    def looped(self, x):   # a dynamic trip count: forward only, as in JAX
      return nn.while_loop(lambda m, c: c[1] < 3,
                           lambda m, c: (m.dense(c[0]) * 0.5, c[1] + 1), self, (x, 0))

    def lifted_ad(self, x):
      f = lambda mdl, x: jnp.sin(mdl(x))
      y, t = nn.jvp(f, self.dense, (x,), (jnp.ones_like(x),), {{}})
      _, bwd = nn.vjp(f, self.dense, x)
      params_t, x_t = bwd(jnp.ones_like(y))
      return t, params_t, x_t

    def sign_grad(self, x):   # custom_vjp: gradients replaced by their signs
      fwd = lambda mdl, x: nn.vjp(lambda m, x: m(x), mdl, x)
      def bwd(vjp_fn, y_t):
        params_t, x_t = vjp_fn(y_t)
        return jax.tree.map(jnp.sign, params_t), x_t
      return nn.custom_vjp(lambda m, x: m(x), forward_fn=fwd, backward_fn=bwd)(self.dense, x).sum()

  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(16, 4)).astype(np.float32))
  y = jnp.asarray(rng.normal(size=(16, 1)).astype(np.float32))
  model = Net()
  params = model.init(jax.random.key(0), x)
  params, losses = train_mse(model.apply, params, x, y)
  looped, n = model.apply(params, x[:2], method="looped")
  tangent, params_t, x_t = model.apply(params, x[:2], method="lifted_ad")
  signs = jax.grad(lambda p: model.apply(p, x[:2], method="sign_grad"))(params)
  flat = lambda t: np.concatenate([np.ravel(a) for a in jax.tree.leaves(t)]).tolist()
  print(json.dumps({{"jax": jax.__name__, "losses": losses,
                    "eager": np.asarray(model.apply(params, x[:2])).ravel().tolist(),
                    "looped": np.asarray(looped).ravel().tolist(), "n": int(n),
                    "tangent": flat(tangent), "params_t": flat(params_t), "x_t": flat(x_t),
                    "signs": flat(signs["params"]["dense"]), "shapes": ({SHAPES})(params)}}))
"""


def test_lifted_transforms_match_jax(tmp_path):
  got, want = run(TRANSFORMS, tmp_path)
  assert_trains(got["losses"], 0.5)
  assert got["n"] == 3
  assert set(np.abs(got["signs"])) == {1.0}
  assert got["shapes"]["params"]["ens"]["kernel"] == [[3, 8, 4], "float32"]
  assert got["shapes"]["params"]["stack"]["Dense_0"]["kernel"] == [[2, 4, 4], "float32"]
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["eager", "looped", "tangent", "params_t", "x_t", "signs"])
    assert_same(got, want, ["n", "shapes"])


# BatchNorm (running averages updated through mutable=["batch_stats"]),
# Dropout with rngs={"dropout": key}, LayerNorm, GroupNorm and RMSNorm in a
# TrainState subclass; the norms side by side, not chained (a norm of a
# norm's output cancels digits, in JAX as here).
NORMS = f"""
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn
  from flax.training import train_state

  class Net(nn.Module):
    @nn.compact
    def __call__(self, x, train: bool):
      x = nn.Dense(16, use_bias=False)(x)
      x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
      x = nn.Dropout(0.2, deterministic=not train)(nn.relu(x))
      x = jnp.concatenate([nn.LayerNorm()(x), nn.GroupNorm(num_groups=2)(x), nn.RMSNorm()(x)], -1)
      return nn.Dense(1)(x)

  class TrainState(train_state.TrainState):
    batch_stats: dict

  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(32, 5)).astype(np.float32))
  y = jnp.asarray(np.sin(np.asarray(x).sum(1, keepdims=True)))
  model = Net()
  variables = model.init({{"params": jax.random.key(0), "dropout": jax.random.key(1)}}, x, train=False)
  state = TrainState.create(apply_fn=model.apply, params=variables["params"],
                            batch_stats=variables["batch_stats"], tx=optax.sgd(0.05, momentum=0.9))

  @jax.jit
  def step(state, key):
    def loss_fn(p):
      out, upd = state.apply_fn({{"params": p, "batch_stats": state.batch_stats}}, x, train=True,
                                rngs={{"dropout": key}}, mutable=["batch_stats"])
      return jnp.mean((out - y) ** 2), upd
    (l, upd), g = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    state = state.apply_gradients(grads=g)
    return state.replace(batch_stats=upd["batch_stats"]), l

  losses = []
  for i in range(8):
    state, l = step(state, jax.random.fold_in(jax.random.key(2), i))
    losses.append(float(l))
  pred = model.apply({{"params": state.params, "batch_stats": state.batch_stats}}, x[:4], train=False)
  drop = nn.Dropout(0.5).apply({{}}, jnp.ones((2, 6)), deterministic=False,
                               rngs={{"dropout": jax.random.key(3)}})
  stats = state.batch_stats["BatchNorm_0"]
  print(json.dumps({{"jax": jax.__name__, "losses": losses, "step": int(state.step),
                    "pred": np.asarray(pred).ravel().tolist(), "drop": np.asarray(drop).tolist(),
                    "mean": np.asarray(stats["mean"]).tolist(), "var": np.asarray(stats["var"]).tolist(),
                    "shapes": ({SHAPES})({{"p": state.params, "s": state.opt_state}})}}))
"""


def test_batchnorm_dropout_and_norms_in_a_train_state_match_jax(tmp_path):
  got, want = run(NORMS, tmp_path)
  assert got["step"] == 8
  assert sorted(set(np.ravel(got["drop"]))) == [0.0, 2.0]
  assert got["mean"] != [0.0] * 16   # the running statistics moved
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["pred", "mean", "var"])
    assert_same(got, want, ["drop", "shapes"])


# A small Transformer language model (Embed, SelfAttention with a causal
# mask, LayerNorm, Embed.attend), trained; then decoded one token at a time
# with the `cache` collection (decode=True), which must give the full pass's
# logits; cross attention with a padding mask.  The attention has no biases
# and Adam a large eps: their exact gradients are zero or ~1e-7, rounding
# noise that Adam would turn into +-lr steps (in JAX as here).
TRANSFORMER = f"""
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn

  V, D, T = 11, 16, 6

  class Block(nn.Module):
    decode: bool = False
    @nn.compact
    def __call__(self, x, mask=None):
      h = nn.SelfAttention(num_heads=2, qkv_features=D, decode=self.decode, deterministic=True,
                           use_bias=False)(nn.LayerNorm()(x), mask=mask)
      x = x + h
      return x + nn.Dense(D)(nn.gelu(nn.Dense(2 * D)(nn.LayerNorm()(x))))

  class LM(nn.Module):
    decode: bool = False
    @nn.compact
    def __call__(self, tok):
      embed = nn.Embed(V, D)
      mask = None if self.decode else nn.make_causal_mask(tok)
      x = Block(self.decode)(embed(tok), mask)
      return embed.attend(nn.LayerNorm()(x))

  rng = np.random.default_rng(0)
  tok = jnp.asarray(rng.integers(0, V, size=(4, T)))
  model = LM()
  params = model.init(jax.random.key(0), tok)["params"]
  opt = optax.adamw(3e-3, eps=1e-3)
  st = opt.init(params)
  @jax.jit
  def step(p, s):
    def loss(p):
      logits = model.apply({{"params": p}}, tok[:, :-1])
      return optax.softmax_cross_entropy_with_integer_labels(logits, tok[:, 1:]).mean()
    l, g = jax.value_and_grad(loss)(p)
    u, s = opt.update(g, s, p)
    return optax.apply_updates(p, u), s, l
  losses = []
  for _ in range(6):
    params, st, l = step(params, st)
    losses.append(float(l))

  full = model.apply({{"params": params}}, tok)
  dec = LM(decode=True)
  cache = dec.init(jax.random.key(0), tok)["cache"]
  @jax.jit
  def dstep(cache, t):
    out, upd = dec.apply({{"params": params, "cache": cache}}, t, mutable=["cache"])
    return upd["cache"], out
  steps = []
  for i in range(T):
    cache, out = dstep(cache, tok[:, i:i + 1])
    steps.append(out[:, 0])
  decoded = jnp.stack(steps, 1)
  mha = nn.MultiHeadDotProductAttention(num_heads=4, qkv_features=8, out_features=5)
  q = jnp.asarray(rng.normal(size=(2, 3, 6)).astype(np.float32))
  kv = jnp.asarray(rng.normal(size=(2, 4, 7)).astype(np.float32))
  pad = nn.make_attention_mask(jnp.ones((2, 3)), jnp.array([[1, 1, 1, 0], [1, 1, 0, 0]]))
  cross = mha.apply(mha.init(jax.random.key(1), q, kv, mask=pad), q, kv, mask=pad)
  print(json.dumps({{"jax": jax.__name__, "losses": losses,
                    "decode_err": float(jnp.abs(decoded - full).max()),
                    "decoded": np.asarray(decoded[:, -1]).ravel().tolist(),
                    "cross": np.asarray(cross).ravel().tolist(),
                    "cache": ({SHAPES})(cache), "shapes": ({SHAPES})(params)}}))
"""


def test_transformer_trained_and_decoded_with_its_cache_matches_jax(tmp_path):
  got, want = run(TRANSFORMER, tmp_path)
  assert_trains(got["losses"])
  assert got["decode_err"] < 1e-5
  assert got["cache"]["Block_0"]["SelfAttention_0"]["cache_index"] == [[], "int32"]
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["decoded", "cross"])
    assert_same(got, want, ["cache", "shapes"])


# A CNN (Conv with strides, feature groups and explicit padding,
# ConvTranspose, max_pool, avg_pool, ConvLocal) built with a variety of
# nn.initializers, its output from init_with_output; mixed precision:
# Dense with dtype=bfloat16 (float32 params), bfloat16 params.
CNN = f"""
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn
  from flax.linen import initializers as init
{TRAIN_MSE}

  class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
      x = nn.relu(nn.Conv(4, (3, 3), padding=[(1, 1), (1, 1)], kernel_init=init.he_normal())(x))
      x = nn.max_pool(x, (2, 2), strides=(2, 2))
      x = nn.Conv(6, (3, 3), padding="VALID", feature_group_count=2,
                  kernel_init=init.lecun_uniform(), bias_init=init.constant(0.1))(x)
      x = nn.avg_pool(x, (2, 2), padding="SAME")
      x = nn.ConvTranspose(3, (3, 3), strides=(2, 2), kernel_init=init.orthogonal())(x)
      x = nn.Conv(2, (1, 1), use_bias=False,
                  kernel_init=init.variance_scaling(0.5, "fan_avg", "truncated_normal"))(x)
      x = nn.ConvLocal(2, (3, 3), padding="VALID")(x)
      x = nn.Dense(8, kernel_init=init.xavier_uniform())(x.reshape(x.shape[0], -1))
      return nn.Dense(1, kernel_init=init.normal(0.02), bias_init=init.zeros_init())(nn.swish(x))

  class Mixed(nn.Module):
    @nn.compact
    def __call__(self, x):
      h = nn.Dense(16, dtype=jnp.bfloat16)(x.reshape(x.shape[0], -1))
      return nn.Dense(1, dtype=jnp.float32)(nn.tanh(h))

  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(4, 10, 10, 1)).astype(np.float32))
  y = jnp.asarray(rng.normal(size=(4, 1)).astype(np.float32))
  model = CNN()
  out0, variables = model.init_with_output(jax.random.key(0), x)
  params = variables["params"]
  params, losses = train_mse(lambda p, x: model.apply({{"params": p}}, x), params, x, y)
  mixed = Mixed()
  mp = mixed.init(jax.random.key(4), x)
  mixed_out = mixed.apply(mp, x)
  mixed_grad = jax.grad(lambda p: jnp.mean((mixed.apply(p, x) - y) ** 2))(mp)["params"]
  bf = nn.Dense(3, dtype=jnp.bfloat16, param_dtype=jnp.bfloat16)
  bv = bf.init(jax.random.key(1), jnp.ones((2, 4)))
  bo = bf.apply(bv, jnp.ones((2, 4)))
  inits = {{n: np.asarray(f(jax.random.key(3), (3, 4), jnp.float32)).ravel().tolist() for n, f in [
      ("glorot_normal", init.glorot_normal()), ("kaiming_uniform", init.kaiming_uniform()),
      ("truncated_normal", init.truncated_normal(0.5)), ("uniform", init.uniform(2.0)),
      ("delta", lambda k, s, d: init.delta_orthogonal()(k, (3, 3, 4, 4), d)[1, 1])]}}
  print(json.dumps({{"jax": jax.__name__, "losses": losses, "out0": np.asarray(out0).ravel().tolist(),
                    "mixed_out": np.asarray(mixed_out).ravel().tolist(),
                    "mixed_grad0": np.asarray(mixed_grad["Dense_0"]["kernel"]).ravel().tolist(),
                    "mixed_grad1": np.asarray(mixed_grad["Dense_1"]["kernel"]).ravel().tolist(),
                    "bf_out": np.asarray(bo, np.float32).ravel().tolist(),
                    "dtypes": [str(out0.dtype), str(mixed_out.dtype), str(bo.dtype)],
                    "mixed_shapes": ({SHAPES})({{"p": mp, "g": mixed_grad}}),
                    "bf_shapes": ({SHAPES})(bv), "inits": inits, "shapes": ({SHAPES})(params)}}))
"""


def test_cnn_initializers_and_mixed_precision_match_jax(tmp_path):
  got, want = run(CNN, tmp_path)
  assert_trains(got["losses"], 0.99)
  assert got["dtypes"] == ["float32", "float32", "bfloat16"]
  assert got["bf_shapes"]["params"]["kernel"] == [[4, 3], "bfloat16"]
  assert got["shapes"]["ConvLocal_0"]["kernel"] == [[4, 4, 18, 2], "float32"]
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["out0", "mixed_out", "mixed_grad0", "mixed_grad1"])
    # bfloat16 results: the same rounding, bit for bit
    assert_same(got, want, ["bf_out", "dtypes", "mixed_shapes", "bf_shapes", "shapes"])
    for k in want["inits"]:
      np.testing.assert_allclose(got["inits"][k], want["inits"][k], rtol=1e-6, atol=1e-7, err_msg=k)


# Training utilities: TrainState, flax.serialization (to_bytes/from_bytes,
# state dicts, msgpack), traverse_util, nn.tabulate's printed table,
# init_with_output, share_scope and setup naming (lists of submodules),
# self.sow (appending, and reduced) and capture_intermediates.
UTILITIES = """
  import json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn
  from flax import serialization, traverse_util
  from flax.training import train_state

  class Encoder(nn.Module):
    @nn.compact
    def __call__(self, x):
      h = nn.Dense(6, name="hidden")(x)
      self.sow("intermediates", "hidden_act", h)
      self.sow("stats", "norm", jnp.linalg.norm(h), reduce_fn=lambda a, b: a + b, init_fn=lambda: 0.0)
      return nn.relu(h)

  class Wrapper(nn.Module):   # share_scope: the inner module's params are the wrapper's
    def setup(self):
      self.inner = Encoder()
      nn.share_scope(self, self.inner)
    def __call__(self, x):
      return self.inner(x)

  class Model(nn.Module):
    def setup(self):
      self.enc = Encoder()
      self.wrap = Wrapper()
      self.heads = [nn.Dense(2) for _ in range(2)]
    def __call__(self, x):
      h = self.enc(x) + self.wrap(x)
      self.enc(x)   # called twice: sow appends
      return self.heads[0](h) + self.heads[1](h)

  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(8, 3)).astype(np.float32))
  y = jnp.asarray(rng.normal(size=(8, 2)).astype(np.float32))
  model = Model()
  out, variables = model.init_with_output(jax.random.key(0), x)
  params = variables["params"]
  _, inter = model.apply({"params": params}, x, mutable=["intermediates", "stats"])
  _, cap = model.apply({"params": params}, x, capture_intermediates=True, mutable=["intermediates"])
  _, cap_dense = model.apply({"params": params}, x, mutable=["intermediates"],
                             capture_intermediates=lambda m, name: isinstance(m, nn.Dense))
  make = lambda: train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-2))
  state = make()
  @jax.jit
  def step(state):
    loss = lambda p: jnp.mean((state.apply_fn({"params": p}, x) - y) ** 2)
    l, g = jax.value_and_grad(loss)(state.params)
    return state.apply_gradients(grads=g), l
  losses = []
  for _ in range(5):
    state, l = step(state)
    losses.append(float(l))
  raw = serialization.to_bytes(state)
  restored = serialization.from_bytes(make(), raw)
  sd = serialization.to_state_dict(state)
  back = serialization.from_state_dict(make(), sd)
  msg = serialization.msgpack_restore(serialization.msgpack_serialize(sd["params"]))
  flat = traverse_util.flatten_dict(params, sep="/")
  unflat = traverse_util.unflatten_dict(traverse_util.flatten_dict(params))
  same = lambda a, b: all(bool(jnp.array_equal(u, v)) for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b)))
  # params only: with several collections the columns' order is a set's (hash-seeded)
  table = nn.tabulate(model, jax.random.key(0), compute_flops=True, mutable=["params"])(x)
  shapes = lambda t: jax.tree.map(lambda a: [list(np.shape(a)), str(jnp.asarray(a).dtype)], t)
  print(json.dumps({"jax": jax.__name__, "losses": losses, "out": np.asarray(out).ravel().tolist(),
    "inter": shapes(inter), "norm": float(inter["stats"]["enc"]["norm"]), "cap": shapes(cap),
    "cap_dense": sorted("/".join(k) for k in traverse_util.flatten_dict(cap_dense)),
    "restored_same": same(restored, state), "back_same": same(back, state),
    "restored_step": int(restored.step), "unflat_same": same(unflat, params),
    "sd_keys": sorted(sd), "sd_opt": shapes(sd["opt_state"]), "msg": shapes(msg),
    "flat": sorted(flat), "nbytes": len(raw), "table": table}))
"""


def test_training_utilities_serialization_and_introspection_match_jax(tmp_path):
  got, want = run(UTILITIES, tmp_path)
  assert_trains(got["losses"])
  assert got["restored_same"] and got["back_same"] and got["unflat_same"]
  assert got["restored_step"] == 5
  assert "wrap/hidden/kernel" in got["flat"] and "heads_1/bias" in got["flat"]
  assert len(got["inter"]["intermediates"]["enc"]["hidden_act"]) == 2
  assert "Total Parameters: 76 " in got["table"]
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["out", "norm"])
    # the table's FLOP counts are XLA's cost analysis of each call, which
    # leaves out dead code (the second call of `enc` only sows)
    assert_same(got, want, ["inter", "cap", "cap_dense", "sd_keys", "sd_opt", "msg", "flat",
                            "nbytes", "table"])


# Logical partitioning: with_logical_partitioning / with_partitioning
# boxes, axis rules, get_partition_spec, logical_to_mesh(_sharding), unbox,
# with_logical_constraint, a jitted init with out_shardings on a 1-device
# mesh; params stacked by nn.scan with a "layers" partition axis.
PARTITIONING = f"""
  import json, warnings
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax.linen as nn
  from flax.linen import partitioning as nn_partitioning
  from jax.sharding import Mesh, PartitionSpec as P, NamedSharding
{TRAIN_MSE}

  class MLP(nn.Module):
    @nn.compact
    def __call__(self, x):
      kinit = nn.with_logical_partitioning(nn.initializers.lecun_normal(), ("embed", "mlp"))
      binit = nn.with_logical_partitioning(nn.initializers.zeros_init(), ("mlp",))
      h = nn.with_logical_constraint(nn.relu(nn.Dense(8, kernel_init=kinit, bias_init=binit)(x)),
                                     ("batch", "mlp"))
      w = self.param("out", nn.with_partitioning(nn.initializers.normal(0.1), (None, "model")), (8, 2))
      return h @ w

  class Layer(nn.Module):
    @nn.compact
    def __call__(self, c, _):
      w = self.param("w", nn.with_logical_partitioning(nn.initializers.ones, ("embed", "mlp")), (4, 4))
      return c @ w * 0.1, None

  rules = (("batch", "data"), ("embed", None), ("mlp", "model"))
  mesh = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "model"))
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.normal(size=(8, 4)).astype(np.float32))
  y = jnp.asarray(rng.normal(size=(8, 2)).astype(np.float32))
  model = MLP()
  with jax.set_mesh(mesh), nn_partitioning.axis_rules(rules):
    abstract = jax.eval_shape(model.init, jax.random.key(0), x)
    logical = nn.get_partition_spec(abstract)
    mesh_specs = nn.logical_to_mesh(logical)
    shardings = nn.logical_to_mesh_sharding(logical, mesh, rules)
    variables = jax.jit(model.init, out_shardings=shardings)(jax.random.key(0), x)
    boxed = type(variables["params"]["Dense_0"]["kernel"]).__name__
    params = nn.unbox(variables["params"])
    params, losses = train_mse(lambda p, x: model.apply({{"params": p}}, x), params, x, y)
  stack = nn.scan(Layer, variable_axes={{"params": 0}}, split_rngs={{"params": True}}, length=3,
                  metadata_params={{nn.PARTITION_NAME: "layers"}})()
  sv = stack.init(jax.random.key(1), x, None)
  spec = lambda t: jax.tree.map(lambda s: str(tuple(s)), t, is_leaf=lambda s: isinstance(s, P))
  print(json.dumps({{"jax": jax.__name__, "losses": losses, "boxed": boxed,
                    "logical": spec(logical), "mesh_specs": spec(mesh_specs),
                    "sharding": jax.tree.map(lambda s: str(tuple(s.spec)), shardings,
                                             is_leaf=lambda s: isinstance(s, NamedSharding)),
                    "placed": jax.tree.map(lambda a: str(tuple(a.sharding.spec)), nn.unbox(variables)),
                    "stacked": spec(nn.get_partition_spec(sv)),
                    "stacked_out": np.asarray(stack.apply(sv, x, None)[0]).ravel().tolist(),
                    "shapes": ({SHAPES})(params), "stacked_shapes": ({SHAPES})(nn.unbox(sv))}}))
"""


def test_logical_partitioning_metadata_on_a_one_device_mesh_matches_jax(tmp_path):
  got, want = run(PARTITIONING, tmp_path)
  assert_trains(got["losses"])
  assert got["boxed"] == "LogicallyPartitioned"
  assert got["mesh_specs"]["params"]["Dense_0"]["kernel"] == "(None, 'model')"
  assert got["placed"] == got["sharding"]
  assert got["stacked"]["params"]["w"] == "('layers', 'embed', 'mlp')"
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["stacked_out"])
    assert_same(got, want, ["logical", "mesh_specs", "sharding", "placed", "stacked", "shapes",
                            "stacked_shapes"])


# flax's ImageNet example, in small: a ResNet with BatchNorm trained by a
# pmapped step (replicate/unreplicate, common_utils.shard, pmean of the
# gradients and batch statistics, donated state), nesterov SGD on a cosine
# schedule with gradient clipping; evaluated with the running averages.
RESNET = f"""
  import functools, json
  import numpy as np
  import jax, jax.numpy as jnp, optax
  import flax
  import flax.linen as nn
  from flax import jax_utils
  from flax.training import common_utils, train_state

  class ResBlock(nn.Module):
    filters: int
    strides: tuple = (1, 1)
    @nn.compact
    def __call__(self, x, train):
      norm = functools.partial(nn.BatchNorm, use_running_average=not train, momentum=0.9)
      y = nn.relu(norm()(nn.Conv(self.filters, (3, 3), self.strides, use_bias=False)(x)))
      y = norm(scale_init=nn.initializers.zeros_init())(nn.Conv(self.filters, (3, 3), use_bias=False)(y))
      if x.shape != y.shape:
        x = norm(name="norm_proj")(nn.Conv(self.filters, (1, 1), self.strides, use_bias=False,
                                           name="conv_proj")(x))
      return nn.relu(x + y)

  class ResNet(nn.Module):
    @nn.compact
    def __call__(self, x, train=True):
      x = nn.Conv(8, (3, 3), (2, 2), padding=[(1, 1), (1, 1)], use_bias=False, name="conv_init")(x)
      x = nn.relu(nn.BatchNorm(use_running_average=not train, name="bn_init")(x))
      x = nn.max_pool(x, (3, 3), strides=(2, 2), padding="SAME")
      x = ResBlock(8)(x, train)
      x = ResBlock(16, (2, 2))(x, train)
      return nn.Dense(5)(jnp.mean(x, axis=(1, 2)))

  class TrainState(train_state.TrainState):
    batch_stats: flax.core.FrozenDict

  rng = np.random.default_rng(0)
  imgs = jnp.asarray(rng.normal(size=(8, 16, 16, 3)).astype(np.float32))
  labels = jnp.asarray(rng.integers(0, 5, size=(8,)))
  model = ResNet()
  v = model.init(jax.random.key(0), imgs[:1], train=False)
  tx = optax.chain(optax.clip_by_global_norm(1.0),
                   optax.sgd(optax.cosine_decay_schedule(0.1, 10), momentum=0.9, nesterov=True))
  state = jax_utils.replicate(TrainState.create(apply_fn=model.apply, params=v["params"],
                                                batch_stats=v["batch_stats"], tx=tx))

  def step(state, batch):
    def loss_fn(p):
      logits, upd = state.apply_fn({{"params": p, "batch_stats": state.batch_stats}}, batch["x"],
                                   mutable=["batch_stats"])
      loss = optax.softmax_cross_entropy(logits, common_utils.onehot(batch["y"], 5)).mean()
      return loss, upd
    (l, upd), g = jax.value_and_grad(loss_fn, has_aux=True)(state.params)
    g = jax.lax.pmean(g, "batch")
    stats = jax.lax.pmean(upd["batch_stats"], "batch")
    return state.apply_gradients(grads=g, batch_stats=stats), jax.lax.pmean(l, "batch")

  p_step = jax.pmap(step, axis_name="batch", donate_argnums=(0,))
  batch = common_utils.shard({{"x": imgs, "y": labels}})
  losses = []
  for _ in range(4):
    state, l = p_step(state, batch)
    losses.append(float(l[0]))
  state = jax_utils.unreplicate(state)
  logits = model.apply({{"params": state.params, "batch_stats": state.batch_stats}}, imgs, train=False)
  print(json.dumps({{"jax": jax.__name__, "losses": losses, "step": int(state.step),
                    "logits": np.asarray(logits).ravel().tolist(),
                    "stats": ({SHAPES})(state.batch_stats), "shapes": ({SHAPES})(state.params)}}))
"""


def test_pmapped_resnet_training_step_matches_jax(tmp_path):
  got, want = run(RESNET, tmp_path)
  assert_trains(got["losses"])
  assert got["step"] == 4
  assert got["stats"]["ResBlock_1"]["norm_proj"]["mean"] == [[16], "float32"]
  if want is not None:
    assert_close(got, want, ["losses"], rtol=2e-5, atol=0)
    assert_close(got, want, ["logits"])
    assert_same(got, want, ["stats", "shapes"])
