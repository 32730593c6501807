"""purejax.example_libraries (stax, optimizers) against real JAX and NumPy."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import random
from purejax.example_libraries import optimizers, stax
from tests.conftest import oracle

RNG = np.random.RandomState(0)


def _net(s):
  return s.serial(
      s.Conv(4, (3, 3), padding="SAME"), s.BatchNorm(), s.Relu,
      s.MaxPool((2, 2), strides=(2, 2)), s.AvgPool((2, 2), padding="SAME"),
      s.SumPool((1, 2)), s.Flatten,
      s.FanOut(2), s.parallel(s.Dense(5), s.serial(s.Dense(5), s.Tanh)), s.FanInSum,
      s.Dropout(0.7), s.Dense(3), s.LogSoftmax)


def test_stax_network_matches_jax():
  jax = oracle()
  from jax.example_libraries import stax as jstax
  x = RNG.randn(2, 8, 8, 3).astype(np.float32)
  ours_init, ours_apply = _net(stax)
  their_init, their_apply = _net(jstax)
  out_shape, params = ours_init(random.key(0), (2, 8, 8, 3))
  their_shape, their_params = their_init(jax.random.key(0), (2, 8, 8, 3))
  assert out_shape == their_shape
  for a, b in zip(purejax.tree.leaves(params), jax.tree.leaves(their_params)):
    # same keys, same random bits (glorot's scaling may round 1 ulp apart)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
  assert purejax.tree.structure(params).num_leaves == jax.tree.structure(their_params).num_leaves
  ours = ours_apply(params, x, rng=random.key(1))
  theirs = their_apply(their_params, x, rng=jax.random.key(1))
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-5, atol=2e-5)
  jitted = purejax.jit(lambda p, x: ours_apply(p, x, rng=random.key(1)))(params, x)
  np.testing.assert_allclose(np.asarray(jitted), np.asarray(theirs), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["Elu", "Gelu", "LeakyRelu", "Selu", "Sigmoid",
                                  "Softplus", "Softmax", "Exp", "Identity"])
def test_stax_elementwise_layers_match_jax(name):
  jax = oracle()
  from jax.example_libraries import stax as jstax
  x = RNG.randn(3, 4).astype(np.float32)
  shape, _ = getattr(stax, name)[0](random.key(0), (3, 4))
  assert shape == (3, 4)
  np.testing.assert_allclose(np.asarray(getattr(stax, name)[1]((), x)),
                             np.asarray(getattr(jstax, name)[1]((), x)), rtol=1e-6, atol=1e-6)


def test_stax_dense_against_numpy_and_conv_transpose_shapes():
  init, apply = stax.serial(stax.Dense(4), stax.FanOut(2), stax.FanInConcat())
  shape, params = init(random.key(2), (5, 3))
  assert shape == (5, 8)
  x = RNG.randn(5, 3).astype(np.float32)
  W, b = (np.asarray(a, np.float64) for a in params[0])
  want = x.astype(np.float64) @ W + b
  np.testing.assert_allclose(np.asarray(apply(params, x)), np.concatenate([want, want], 1),
                             rtol=1e-5, atol=1e-6)
  jax = oracle()
  from jax.example_libraries import stax as jstax
  for make, in_shape in [(lambda s: s.ConvTranspose(2, (3, 3), strides=(2, 2)), (1, 5, 5, 3)),
                         (lambda s: s.Conv1DTranspose(2, (3,), padding="SAME"), (1, 5, 3))]:
    (our_init, our_apply), (their_init, their_apply) = make(stax), make(jstax)
    s1, p1 = our_init(random.key(0), in_shape)
    s2, p2 = their_init(jax.random.key(0), in_shape)
    assert tuple(s1) == tuple(s2)
    x = RNG.randn(*in_shape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(our_apply(p1, x)), np.asarray(their_apply(p2, x)),
                               rtol=1e-5, atol=1e-5)


def test_dropout_needs_rng():
  with pytest.raises(ValueError, match="Dropout layer requires apply_fun"):
    stax.Dropout(0.5)[1]((), jnp.ones(3))
  np.testing.assert_array_equal(np.asarray(stax.Dropout(0.5, mode="test")[1]((), jnp.ones(3),
                                                                rng=random.key(0))),
                                np.ones(3))


OPTIMIZERS = [("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)),
              ("adagrad", (0.1,)), ("rmsprop", (0.01,)), ("rmsprop_momentum", (0.01,)),
              ("adam", (0.01,)), ("adamax", (0.01,)), ("sm3", (0.1,))]


def _loss(np_like, params):
  return np_like.sum((params["w"] - 3.0) ** 2) + np_like.sum(params["b"] ** 4)


@pytest.mark.parametrize("name,args", OPTIMIZERS)
def test_optimizers_match_jax(name, args):
  jax = oracle()
  from jax.example_libraries import optimizers as jopt
  w0 = {"w": RNG.randn(3, 2).astype(np.float32), "b": RNG.randn(2).astype(np.float32)}

  def run(lib, opt_mod, np_like):
    init, update, get_params = getattr(opt_mod, name)(*args)
    grad = lib.grad(lambda p: _loss(np_like, p))
    step = lambda i, s: update(i, grad(get_params(s)), s)
    if name != "sm3":   # sm3's state holds the parameter shape as ints: not jittable
      step = lib.jit(step)
    state = init(w0)
    for i in range(5):
      state = step(i, state)
    return get_params(state)

  ours = run(purejax, optimizers, jnp)
  theirs = run(jax, jopt, jax.numpy)
  for k in w0:
    np.testing.assert_allclose(np.asarray(ours[k]), np.asarray(theirs[k]), rtol=2e-6, atol=1e-6)
  assert not np.allclose(np.asarray(ours["w"]), w0["w"])


def test_sgd_against_numpy_and_state_is_pytree():
  init, update, get_params = optimizers.sgd(optimizers.exponential_decay(0.1, 10, 0.5))
  x = np.array([1.0, -2.0], np.float32)
  state = init(x)
  assert purejax.tree.leaves(state)[0] is x
  for i in range(3):
    state = update(i, 2 * get_params(state), state)
  want = x.astype(np.float64)
  for i in range(3):
    want = want - 0.1 * 0.5 ** (i / 10) * 2 * want
  np.testing.assert_allclose(np.asarray(get_params(state)), want, rtol=1e-6)
  with pytest.raises(TypeError, match="did not match the parameter tree structure"):
    update(0, [x], state)


def test_schedules_and_utilities_match_jax():
  jax = oracle()
  from jax.example_libraries import optimizers as jopt
  for make in [lambda m: m.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
               lambda m: m.polynomial_decay(1.0, 4, 0.1, 2.0),
               lambda m: m.inverse_time_decay(1.0, 3, 0.5, staircase=True),
               lambda m: m.inverse_time_decay(1.0, 3, 0.5)]:
    for i in range(8):
      np.testing.assert_allclose(np.asarray(make(optimizers)(i)), np.asarray(make(jopt)(i)),
                                 rtol=1e-6)
  tree = {"a": np.ones(3, np.float32) * 2, "b": np.ones(1, np.float32)}
  np.testing.assert_allclose(np.asarray(optimizers.l2_norm(tree)), np.sqrt(13), rtol=1e-6)
  clipped = optimizers.clip_grads(tree, 1.0)
  np.testing.assert_allclose(np.asarray(clipped["a"]), 2 / np.sqrt(13), rtol=1e-6)
  init, _, get_params = optimizers.adam(0.1)
  state = init(tree)
  packed = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
  assert purejax.tree.structure(packed) == purejax.tree.structure(state)
  np.testing.assert_array_equal(np.asarray(get_params(packed)["a"]), tree["a"])
