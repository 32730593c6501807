"""The rest of jax.lax: split/tile/stack/unstack, custom_linear_solve and
custom_root, optimization_barrier, mulhi, approx_max_k/min_k, the RNG
primitives, ragged_dot, platform_dependent, sharding and staging helpers.
Values against NumPy and live JAX, printed jaxprs against JAX's, gradients
against finite differences, vmap against a loop, jit against eager."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config
from purejax._src.test_util import check_grads

from conftest import oracle

RNG = np.random.RandomState(0)
X34 = RNG.randn(3, 4).astype(np.float32)


def _jaxprs_match(fun_of, *args):
  """``fun_of(jax, lax, jnp)`` traced by JAX and by purejax print the same."""
  jax = oracle()
  ours = str(purejax.make_jaxpr(fun_of(purejax, lax, jnp))(*args))
  theirs = str(jax.make_jaxpr(fun_of(jax, jax.lax, jax.numpy))(*args))
  assert ours == theirs, f"\nours:\n{ours}\njax:\n{theirs}"


def _same_values(fun_of, *args):
  jax = oracle()
  ours = fun_of(purejax, lax, jnp)(*args)
  theirs = fun_of(jax, jax.lax, jax.numpy)(*args)
  ours_l, theirs_l = purejax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
  assert len(ours_l) == len(theirs_l)
  for a, b in zip(ours_l, theirs_l):
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _loop(f, *xs):
  return [f(*[x[i] for x in xs]) for i in range(len(xs[0]))]


# -- split, tile, stack, unstack -----------------------------------------------------

@pytest.mark.parametrize("sizes,axis", [((1, 3), 1), ((2, 0, 1), 0), ((4,), -1)])
def test_split_values_grad_vmap(sizes, axis):
  x = jnp.asarray(X34)
  outs = lax.split(x, sizes, axis)
  bounds = np.cumsum(sizes)[:-1]
  for got, want in zip(outs, np.split(X34, bounds, axis=axis)):
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
  f = lambda x: lax.split(x, sizes, axis)
  for a, b in zip(purejax.jit(f)(x), outs):
    np.testing.assert_array_equal(a, b)
  check_grads(lambda x: [o * o for o in f(x)], (x,), order=2)
  xs = jnp.asarray(RNG.randn(2, 3, 4).astype(np.float32))
  batched = purejax.vmap(f)(xs)
  for k, piece in enumerate(batched):
    np.testing.assert_array_equal(piece, np.stack([f(v)[k] for v in xs]))


def test_split_errors():
  with pytest.raises(ValueError, match="Sum of sizes 3 must be equal to dimension 1"):
    lax.split(jnp.asarray(X34), (1, 2), 1)
  with pytest.raises(ValueError, match="must be nonnegative"):
    lax.split(jnp.asarray(X34), (5, -1), 1)


@pytest.mark.parametrize("reps", [(2, 3), (1, 1), (3, 1)])
def test_tile_values_grad_vmap(reps):
  x = jnp.asarray(X34)
  out = lax.tile(x, reps)
  np.testing.assert_array_equal(out, np.tile(X34, reps))
  f = lambda x: lax.tile(x, reps)
  np.testing.assert_array_equal(purejax.jit(f)(x), out)
  check_grads(f, (x,), order=2)
  xs = jnp.asarray(RNG.randn(2, 3, 4).astype(np.float32))
  np.testing.assert_array_equal(purejax.vmap(f, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2)),
                                np.stack(_loop(f, xs), 1))


def test_tile_rank_error():
  with pytest.raises(TypeError, match="reps length must be equal to the ndim"):
    lax.tile(jnp.asarray(X34), (2,))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack_unstack_values_grad_vmap(axis):
  x, y = jnp.asarray(X34), jnp.asarray(X34 * 2)
  s = lax.stack([x, y], axis=axis)
  np.testing.assert_array_equal(s, np.stack([X34, X34 * 2], axis=axis))
  parts = lax.unstack(s, axis=axis)
  assert isinstance(parts, tuple) and len(parts) == 2
  np.testing.assert_array_equal(parts[1], X34 * 2)
  check_grads(lambda a, b: lax.stack([a, 2 * b], axis=axis), (x, y), order=1)
  check_grads(lambda a: [p * p for p in lax.unstack(a, axis=axis)], (s,), order=1,
              atol=2e-2, rtol=2e-2)
  xs = jnp.asarray(RNG.randn(5, 3, 4).astype(np.float32))
  # One batched and one unbatched operand.
  got = purejax.vmap(lambda a: lax.stack([a, x], axis=axis))(xs)
  np.testing.assert_array_equal(got, np.stack(_loop(lambda a: lax.stack([a, x], axis=axis), xs)))
  got = purejax.vmap(lambda a: lax.unstack(a, axis=axis), in_axes=2, out_axes=0)(xs.transpose(1, 2, 0))
  for k, piece in enumerate(got):
    np.testing.assert_array_equal(piece, np.stack([lax.unstack(v, axis)[k] for v in xs]))


def test_stack_unstack_errors():
  with pytest.raises(ValueError, match="must have the same shape"):
    lax.stack([jnp.ones(3), jnp.ones(4)])
  with pytest.raises(ValueError, match="different numbers of dimensions"):
    lax.stack([jnp.ones(3), jnp.ones((1, 3))])
  with pytest.raises(TypeError, match="same dtypes"):
    lax.stack([jnp.ones(3), jnp.ones(3, jnp.int32)])
  with pytest.raises(ValueError):
    lax.unstack(jnp.float32(1.0))


def test_jnp_split_tile_stack_match_numpy():
  a = np.arange(24.0, dtype=np.float32).reshape(4, 6)
  for got, want in zip(jnp.array_split(a, 4, axis=1), np.array_split(a, 4, axis=1)):
    np.testing.assert_array_equal(got, want)
  for got, want in zip(jnp.split(a, [1, 3]), np.split(a, [1, 3])):
    np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(jnp.tile(a[0], (2, 1, 2)), np.tile(a[0], (2, 1, 2)))
  np.testing.assert_array_equal(jnp.stack(a, axis=1), np.stack(a, axis=1))
  assert jnp.stack([jnp.arange(3), 2.5 * jnp.ones(3)]).dtype == np.float32
  for got, want in zip(jnp.unstack(a, axis=1), a.T):
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", [
    lambda J, L, N: (lambda x: L.split(x, (1, 3), axis=1)),
    lambda J, L, N: (lambda x: N.split(x, 2, axis=1)),
    lambda J, L, N: (lambda x: N.array_split(x, 3, axis=1)),
    lambda J, L, N: (lambda x: N.tile(x, (2, 1, 1))),
    lambda J, L, N: (lambda x: N.stack([x, 2 * x], axis=-1)),
    lambda J, L, N: (lambda x: N.stack(x, axis=1)),
    lambda J, L, N: (lambda x: N.unstack(x, axis=1)),
    lambda J, L, N: J.grad(lambda x: N.unstack(x)[1].sum()),
    lambda J, L, N: J.grad(lambda x: N.tile(x, (2, 3)).sum()),
    lambda J, L, N: J.grad(lambda x: N.stack([x, 2 * x]).sum()),
    lambda J, L, N: J.vmap(lambda x: L.split(x, (1, 3))),
])
def test_split_tile_stack_jaxprs_match_jax(case):
  _jaxprs_match(case, X34)


# -- optimization_barrier, mulhi, small helpers ----------------------------------------

def test_optimization_barrier():
  x = jnp.asarray(X34)
  out = lax.optimization_barrier((x, 3, {"a": 2.0}))
  np.testing.assert_array_equal(out[0], X34)
  assert out[1].dtype == np.int32 and out[1].weak_type and out[2]["a"] == 2.0
  check_grads(lambda x: lax.optimization_barrier((x * x, x))[0], (x,), order=2)
  _jaxprs_match(lambda J, L, N: (lambda x: L.optimization_barrier((x, 2 * x, 3))), X34)
  _jaxprs_match(lambda J, L, N: J.grad(lambda x: L.optimization_barrier(x).sum()), X34)
  _jaxprs_match(lambda J, L, N: J.vmap(lambda x: L.optimization_barrier((x, 1.0))), X34)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32])
def test_mulhi_matches_jax(dtype):
  info = np.iinfo(dtype)
  a = np.array([3, 100, info.max, info.min, info.max // 3, 7], dtype)
  b = np.array([5, 100, info.max, info.max, -2 if info.min else 9, 77], dtype)
  _same_values(lambda J, L, N: L.mulhi, a, b)
  wide = (a.astype(object) * b.astype(object)) >> (8 * a.itemsize)
  np.testing.assert_array_equal(lax.mulhi(a, b), wide.astype(dtype))


def test_mulhi_64bit_weak_and_errors(x64):
  a = np.array([2**62 + 12345, -(2**63), 2**40], np.int64)
  b = np.array([2**61 - 1, 2**63 - 1, -(2**40)], np.int64)
  want = (a.astype(object) * b.astype(object)) >> 64
  np.testing.assert_array_equal(lax.mulhi(a, b), want.astype(np.int64))
  u = np.array([2**64 - 1, 2**33], np.uint64)
  np.testing.assert_array_equal(lax.mulhi(u, u), ((u.astype(object) ** 2) >> 64).astype(np.uint64))
  out = lax.mulhi(3, 4)
  assert out.weak_type and int(out) == 0
  with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
    lax.mulhi(np.float32(1), np.float32(2))


def test_batch_matmul_broadcast_helpers_dtype_empty():
  a, b = RNG.randn(4, 2, 3).astype(np.float32), RNG.randn(4, 3, 5).astype(np.float32)
  np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5)
  with pytest.raises(ValueError, match="same ndim"):
    lax.batch_matmul(a, b[0])
  _jaxprs_match(lambda J, L, N: L.batch_matmul, a, b)
  assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3) and lax.broadcast_shapes((4,)) == (4,)
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    lax.broadcast_shapes((2,), (3,))
  np.testing.assert_array_equal(lax.broadcast_like(jnp.arange(3), jnp.zeros((2, 3))),
                                np.broadcast_to(np.arange(3), (2, 3)))
  with pytest.raises(ValueError):
    lax.broadcast_like(jnp.ones(3), jnp.ones((2, 4)))
  _jaxprs_match(lambda J, L, N: L.broadcast_like, np.ones((1, 3), np.float32),
                np.ones((2, 3), np.float32))
  assert lax.dtype(1) == np.int32 and lax.dtype(1.0) == np.float32
  assert lax.dtype(np.zeros(2)) == np.float32 and lax.dtype(jnp.ones(2, jnp.int8)) == np.int8
  with pytest.warns(UserWarning, match="Explicitly requested dtype int64"):
    assert lax.dtype(np.int64) == np.int32
  with pytest.raises(ValueError, match="Invalid argument to dtype"):
    lax.dtype(None)
  e = lax.empty((2, 3), jnp.float32)
  assert e.shape == (2, 3) and e.dtype == np.float32
  _jaxprs_match(lambda J, L, N: (lambda: L.empty((2, 3), "float32")))
  np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
  assert lax.shape_as_value(()).shape == (0,)


def test_total_order_comparisons_match_jax():
  v = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -np.inf], np.float32)
  for name in ["eq_to_p", "le_to_p", "lt_to_p"]:
    _same_values(lambda J, L, N: (lambda a, b: getattr(L, name).bind(a[:, None], b[None])), v, v)
  _jaxprs_match(lambda J, L, N: (lambda a, b: L.lt_to_p.bind(a, b)), 1, 2)


def test_stage_dce_sink_device_put_sharding():
  x = jnp.asarray(X34)
  s = lax.stage(2.0)
  assert isinstance(s, purejax.Array) and s.weak_type
  _jaxprs_match(lambda J, L, N: (lambda x: L.stage(x) * 2), X34)
  _jaxprs_match(lambda J, L, N: (lambda x: (L.dce_sink(x), x)[1]), X34)
  assert lax.dce_sink(x) is None
  out = lax.with_sharding_constraint({"a": x, "b": 2 * x}, object())
  np.testing.assert_array_equal(out["b"], 2 * X34)
  with pytest.raises(ValueError, match="got sharding None"):
    lax.with_sharding_constraint(x, None)
  check_grads(lambda x: lax.with_sharding_constraint(x * x, "s"), (x,), order=1)
  assert "sharding_constraint" in str(purejax.make_jaxpr(
      lambda x: lax.with_sharding_constraint(x, "s"))(x))
  outs = lax.device_put_p.bind(x, 2 * x, devices=(None, None), srcs=(None, None),
                               copy_semantics=(None, None))
  np.testing.assert_array_equal(outs[1], 2 * X34)


def test_platform_dependent():
  x = jnp.asarray(X34)
  np.testing.assert_array_equal(lax.platform_dependent(x, cpu=jnp.sin, default=jnp.cos),
                                jnp.sin(x))
  np.testing.assert_array_equal(lax.platform_dependent(x, tpu=jnp.sin, default=jnp.cos),
                                jnp.cos(x))
  f = purejax.jit(lambda x: lax.platform_dependent(x, cuda=jnp.sin, default=jnp.cos))
  np.testing.assert_allclose(f(x), jnp.cos(x), rtol=1e-6)   # compiled cos: a few ulp
  g = purejax.grad(lambda v: lax.platform_dependent(v, cpu=jnp.sin, default=jnp.cos))
  np.testing.assert_allclose(g(1.0), np.cos(1.0), rtol=1e-6)
  assert "platform_index[platforms=(('tpu',), None)]" in str(
      purejax.make_jaxpr(lambda x: lax.platform_dependent(x, tpu=jnp.sin, default=jnp.cos))(x))
  with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
    lax.platform_dependent(x, gpu=jnp.sin)
  with pytest.raises(NotImplementedError, match="not found for platform cpu"):
    lax.platform_dependent(x, tpu=jnp.sin)


def test_composite():
  scale = lax.composite(lambda x, s=2.0: x * s, name="my.scale")
  x = jnp.asarray(X34)
  np.testing.assert_array_equal(scale(x, s=3.0), 3 * X34)
  np.testing.assert_array_equal(purejax.jit(lambda x: scale(x, s=3.0))(x), 3 * X34)
  np.testing.assert_array_equal(purejax.vmap(lambda x: scale(x, s=3.0))(x), 3 * X34)
  _jaxprs_match(lambda J, L, N: (lambda x: L.composite(lambda x, s: x * s, name="my.scale")(x, s=3.0)), X34)
  with pytest.raises(ValueError, match="JVP rule for composite not implemented"):
    purejax.grad(lambda x: scale(x).sum())(x)


def test_named_axis_helpers_match_jax():
  _same_values(lambda J, L, N: J.vmap(lambda a: L.pbroadcast(a, "i", 1), axis_name="i"),
               np.arange(3.0, dtype=np.float32))
  _same_values(lambda J, L, N: J.vmap(lambda a: L.pswapaxes(a, "i", 0), axis_name="i"),
               np.arange(9.0, dtype=np.float32).reshape(3, 3))
  x = jnp.asarray(X34)
  assert lax.pcast(x, (), to="varying") is x
  with pytest.raises(ValueError, match="unexpected `to` value"):
    lax.pcast(x, "i", to="bogus")


# -- approx_max_k / approx_min_k -----------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda J, L, N: (lambda x: L.approx_max_k(x, 3)),
    lambda J, L, N: (lambda x: L.approx_min_k(x, 2, reduction_dimension=0)),
    lambda J, L, N: (lambda x: L.approx_max_k(x[0], 2)),
])
def test_approx_top_k_matches_jax(case):
  x = np.array([[3., 1., 4., 1., 5.], [9., 2., 6., 5., 3.], [0., -0., 0., 7., 7.]], np.float32)
  _same_values(case, x)
  _jaxprs_match(case, x)


@pytest.mark.parametrize("n,k,recall,override,rank", [
    (3000, 3, 0.95, -1, 1), (3000, 20, 0.99, -1, 2), (5000, 128, 0.95, -1, 1),
    (1000, 3, 0.95, 6000, 2), (1000, 128, 0.95, 6000, 2), (1000, 1, 0.9, -1, 2)])
def test_approx_top_k_unaggregated_size_matches_jax(n, k, recall, override, rank):
  shape = (n,) if rank == 1 else (2, n)
  x = RNG.randn(*shape).astype(np.float32)
  _same_values(lambda J, L, N: (lambda x: L.approx_min_k(
      x, k, recall_target=recall, reduction_input_size_override=override,
      aggregate_to_topk=False)), x)


def test_approx_top_k_grad_vmap_jit_errors():
  x = jnp.asarray(RNG.randn(4, 6).astype(np.float32))
  f = lambda x: lax.approx_max_k(x, 3)
  for a, b in zip(purejax.jit(f)(x), f(x)):
    np.testing.assert_array_equal(a, b)
  for a, b in zip(purejax.vmap(f, in_axes=1, out_axes=0)(x.T), f(x)):
    np.testing.assert_array_equal(a, b)
  check_grads(lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0], (x,), order=2)
  with pytest.raises(ValueError, match="operand must be a floating type"):
    lax.approx_max_k(jnp.arange(3), 2)
  with pytest.raises(ValueError, match="k must be smaller than the size"):
    lax.approx_max_k(x, 7)
  with pytest.raises(TypeError, match=">= 1 dimension"):
    lax.approx_max_k(jnp.float32(1), 1)
  # XLA's candidate count can exceed the axis (JAX traces it, then fails).
  y = jnp.ones((2, 200))
  f = lambda y: lax.approx_min_k(y, 128, reduction_input_size_override=10**5,
                                 aggregate_to_topk=False)
  assert purejax.eval_shape(f, y)[0].shape == (2, 256)
  with pytest.raises(ValueError, match="exceeds"):
    f(y)


# -- rng_bit_generator / rng_uniform --------------------------------------------------------

@pytest.mark.parametrize("algorithm", ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 5), (2, 1, 3)])
def test_rng_bit_generator_bits_match_jax(algorithm, shape):
  jax = oracle()
  for key in [np.array([1, 2, 3, 4], np.uint32),
              np.array([0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32)]:
    for dtype in ["uint8", "uint32"]:
      ours = lax.rng_bit_generator(key, shape, dtype, getattr(lax.RandomAlgorithm, algorithm))
      theirs = jax.lax.rng_bit_generator(jax.numpy.asarray(key), shape, dtype,
                                         getattr(jax.lax.RandomAlgorithm, algorithm))
      for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_rng_bit_generator_64bit_jaxpr_vmap_errors(x64):
  jax = oracle()
  key = np.array([5, 6, 7, 8], np.uint32)
  for algorithm in ["RNG_THREE_FRY", "RNG_PHILOX"]:
    ours = lax.rng_bit_generator(key, (3,), "uint64", getattr(lax.RandomAlgorithm, algorithm))
    with jax.enable_x64(True):
      theirs = jax.lax.rng_bit_generator(jax.numpy.asarray(key), (3,), "uint64",
                                         getattr(jax.lax.RandomAlgorithm, algorithm))
      np.testing.assert_array_equal(ours[1], theirs[1])
      np.testing.assert_array_equal(ours[0], theirs[0])
  with pytest.raises(TypeError, match="unsupported dtype int32"):
    lax.rng_bit_generator(key, (2,), np.int32)
  with pytest.raises(TypeError, match="key must be a uint32"):
    lax.rng_bit_generator(key[:3], (2,))


def test_rng_bit_generator_jaxpr_and_vmap():
  key = np.array([1, 2, 3, 4], np.uint32)
  _jaxprs_match(lambda J, L, N: (lambda k: L.rng_bit_generator(
      k, (2, 3), N.uint8, L.RandomAlgorithm.RNG_THREE_FRY)), key)
  keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
  _same_values(lambda J, L, N: J.vmap(lambda k: L.rng_bit_generator(k, (2,))), keys)
  assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"


def test_rng_uniform():
  out = lax.rng_uniform(np.float32(2), np.float32(3), (100,))
  assert out.shape == (100,) and out.dtype == np.float32
  assert np.all((np.asarray(out) >= 2) & (np.asarray(out) < 3))
  ints = lax.rng_uniform(np.int32(0), np.int32(5), (50,))
  assert ints.dtype == np.int32 and set(np.asarray(ints).tolist()) <= set(range(5))
  assert lax.rng_uniform(0.0, 1.0, (2,)).weak_type
  _jaxprs_match(lambda J, L, N: (lambda a, b: L.rng_uniform(a, b, (2, 3))), 0.0, 1.0)
  with pytest.raises(ValueError, match="identical dtypes"):
    lax.rng_uniform(np.float32(0), np.int32(1), (2,))
  with pytest.raises(ValueError, match="must be scalars"):
    lax.rng_uniform(jnp.zeros(2), jnp.ones(2), (2,))
  # JAX has no batching rule; purejax draws once per example.
  lo = jnp.arange(3.0)
  out = np.asarray(purejax.vmap(lambda a: lax.rng_uniform(a, a + 1, (4,)))(lo))
  assert out.shape == (3, 4) and np.all((out >= lo[:, None]) & (out < lo[:, None] + 1))
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'rng_uniform'"):
    purejax.grad(lambda a: lax.rng_uniform(a, 1.0, ()))(0.0)


# -- ragged_dot ----------------------------------------------------------------------------

def _ragged_reference(lhs, rhs, group_sizes):
  out = np.zeros((lhs.shape[0], rhs.shape[2]), np.float64)
  start = 0
  for g, n in enumerate(group_sizes):
    out[start:start + n] = lhs[start:start + n] @ rhs[g]
    start += n
  return out


@pytest.mark.parametrize("group_sizes", [[2, 3], [1, 2], [0, 5], [4, 3]])
def test_ragged_dot_values(group_sizes):
  lhs = RNG.randn(5, 4).astype(np.float32)
  rhs = RNG.randn(2, 4, 3).astype(np.float32)
  gs = np.array(group_sizes, np.int32)
  out = lax.ragged_dot(lhs, rhs, gs)
  assert out.shape == (5, 3) and out.dtype == np.float32
  # Rows past the groups' total are zeros; a too-large total clips.
  ref = _ragged_reference(lhs, rhs, np.minimum(np.cumsum(gs), 5) - np.concatenate(
      [[0], np.minimum(np.cumsum(gs), 5)[:-1]]))
  np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
  np.testing.assert_array_equal(purejax.jit(lax.ragged_dot)(lhs, rhs, gs), out)


def test_ragged_dot_matches_jax_all_modes():
  lhs = np.arange(20.0, dtype=np.float32).reshape(5, 4)
  rhs = np.arange(24.0, dtype=np.float32).reshape(2, 4, 3)
  gs = np.array([2, 3], np.int32)
  _jaxprs_match(lambda J, L, N: L.ragged_dot, lhs, rhs, gs)
  _jaxprs_match(lambda J, L, N: J.grad(lambda a, b: L.ragged_dot(a, b, gs).sum(),
                                       argnums=(0, 1)), lhs, rhs)
  contracting = lambda L: L.RaggedDotDimensionNumbers((([0], [0]), ([], [])), [0], [])
  _same_values(lambda J, L, N: (lambda a, b: L.ragged_dot_general(a, b, gs, contracting(L))),
               lhs, np.arange(15.0, dtype=np.float32).reshape(5, 3))
  batch = lambda L: L.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [1], [2])
  g2 = np.array([[1, 2], [3, 0]], np.int32)
  _same_values(lambda J, L, N: (lambda a, b: L.ragged_dot_general(a, b, g2, batch(L))),
               np.arange(24.0, dtype=np.float32).reshape(2, 3, 4),
               np.arange(80.0, dtype=np.float32).reshape(2, 4, 2, 5))
  _same_values(lambda J, L, N: (lambda a, b: L.ragged_dot(a, b, gs, preferred_element_type=N.float16)),
               lhs, rhs)


def test_ragged_dot_grad_vmap_errors():
  lhs = jnp.asarray(RNG.randn(5, 4).astype(np.float32))
  rhs = jnp.asarray(RNG.randn(2, 4, 3).astype(np.float32))
  gs = np.array([2, 3], np.int32)
  check_grads(lambda a, b: lax.ragged_dot(a, b, gs), (lhs, rhs), order=1, atol=2e-2, rtol=2e-2)
  gss = np.array([[2, 3], [1, 1], [5, 0]], np.int32)
  f = lambda a, b, g: lax.ragged_dot(a, b, g)
  lhss = jnp.stack([lhs, lhs + 1, 2 * lhs])
  np.testing.assert_allclose(purejax.vmap(f, in_axes=(0, None, 0))(lhss, rhs, gss),
                             np.stack([f(lhss[i], rhs, gss[i]) for i in range(3)]), rtol=1e-6)
  np.testing.assert_allclose(purejax.vmap(f, in_axes=(None, 0, None))(lhs, jnp.stack([rhs, -rhs]), gs),
                             np.stack([f(lhs, rhs, gs), f(lhs, -rhs, gs)]), rtol=1e-6)
  with pytest.raises(TypeError, match="group_sizes.dtype is subtype of np.integer"):
    lax.ragged_dot(lhs, rhs, np.array([2.0, 3.0], np.float32))
  with pytest.raises(TypeError, match="expected rhs group dimension size to be 3"):
    lax.ragged_dot(lhs, rhs, np.array([2, 3, 0], np.int32))
  assert lax.DotAlgorithmPreset.F32_F32_F32.value == 15 and lax.AccuracyMode.HIGHEST.value == 1
  out = lax.ragged_dot(lhs, rhs, gs, precision=lax.DotAlgorithmPreset.F32_F32_F32)
  np.testing.assert_array_equal(out, lax.ragged_dot(lhs, rhs, gs))
  assert lax.Tolerance(atol=1e-3).atol == 1e-3
  assert lax.DotAlgorithm(np.float32, np.float32, np.float32).lhs_component_count == 1


def test_scaled_dot_matches_jax():
  import ml_dtypes
  rng = np.random.RandomState(0)   # the same data whatever ran before
  a, b = rng.randn(2, 8).astype(np.float32), rng.randn(8, 3).astype(np.float32)
  ls = (2.0 ** rng.randint(-3, 3, size=(2, 2))).astype(ml_dtypes.float8_e8m0fnu)
  rs = (2.0 ** rng.randint(-3, 3, size=(4, 3))).astype(ml_dtypes.float8_e8m0fnu)
  _same_values(lambda J, L, N: L.scaled_dot, a, b)
  _same_values(lambda J, L, N: (lambda a, b, x, y: L.scaled_dot(
      a, b, lhs_scale=x, rhs_scale=y, preferred_element_type=N.float32)), a, b, ls, rs)
  a3, b3 = rng.randn(3, 2, 8).astype(np.float32), rng.randn(3, 8, 4).astype(np.float32)
  _same_values(lambda J, L, N: J.vmap(L.scaled_dot), a3, b3)
  assert "scaled_dot[" in str(purejax.make_jaxpr(lax.scaled_dot)(a3, b3))
  with pytest.raises(TypeError, match="must be at least 2"):
    lax.scaled_dot(a[:, :1], b[:1])
  with pytest.raises(TypeError, match="does not support 0-rank and 1-rank"):
    lax.scaled_dot(a[0], b)


# -- custom_linear_solve / custom_root ----------------------------------------------------------

A = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
B = np.array([1.0, 2.0], np.float32)


def _solve_with(A, b, transpose=True, symmetric=False):
  matvec = lambda x: A @ x
  solve = lambda mv, b: jnp.linalg.solve(A, b)
  tsolve = (lambda vm, b: jnp.linalg.solve(A.T, b)) if transpose else None
  return lax.custom_linear_solve(matvec, b, solve, tsolve, symmetric=symmetric)


def test_custom_linear_solve_values_and_grads():
  A2 = jnp.asarray(A + np.array([[0, 0.5], [0, 0]], np.float32))   # not symmetric
  np.testing.assert_allclose(_solve_with(A2, B), np.linalg.solve(A2, B), rtol=1e-6, atol=1e-6)
  check_grads(lambda A, b: _solve_with(A, b), (A2, jnp.asarray(B)), order=2,
              atol=1e-2, rtol=1e-2)
  check_grads(lambda A, b: _solve_with(A, b, False, True), (jnp.asarray(A), jnp.asarray(B)),
              order=1, atol=1e-2, rtol=1e-2)
  # Forward mode needs no transpose_solve; reverse mode does.
  check_grads(lambda A, b: _solve_with(A, b, False), (A2, jnp.asarray(B)), order=1,
              modes=("fwd",), atol=1e-2, rtol=1e-2)
  with pytest.raises(TypeError, match="transpose_solve required"):
    purejax.grad(lambda b: _solve_with(A2, b, False).sum())(jnp.asarray(B))


def test_custom_linear_solve_jit_vmap():
  f = lambda A, b: _solve_with(A, b)
  np.testing.assert_allclose(purejax.jit(f)(A, B), f(A, B), rtol=1e-6)
  bs = RNG.randn(3, 2).astype(np.float32)
  As = np.stack([A, 2 * A, A + np.eye(2, dtype=np.float32)])
  np.testing.assert_allclose(purejax.vmap(f, in_axes=(None, 0))(A, bs),
                             np.stack([f(A, b) for b in bs]), rtol=1e-6)
  np.testing.assert_allclose(purejax.vmap(f)(As, bs), np.stack(_loop(f, As, bs)), rtol=1e-6)
  g = purejax.vmap(purejax.grad(lambda A, b: (f(A, b) ** 2).sum()), in_axes=(0, None))
  want = [purejax.grad(lambda A, b: (f(A, b) ** 2).sum())(a, B) for a in As]
  np.testing.assert_allclose(g(As, B), np.stack(want), rtol=1e-5)


def test_custom_linear_solve_aux_tree_and_errors():
  d = jnp.asarray(np.array([2.0, 4.0], np.float32))
  solve = lambda mv, b: ({"u": b["u"] / d, "v": b["v"] / 2}, jnp.float32(7))
  matvec = lambda x: {"u": d * x["u"], "v": 2 * x["v"]}
  b = {"u": jnp.asarray(B), "v": jnp.float32(3.0)}
  x, aux = lax.custom_linear_solve(matvec, b, solve, solve, has_aux=True)
  np.testing.assert_allclose(x["u"], B / np.array([2.0, 4.0]))
  assert float(x["v"]) == 1.5 and float(aux) == 7
  grad = purejax.grad(lambda d: lax.custom_linear_solve(
      lambda x: d * x, jnp.asarray(B), lambda mv, b: b / d, lambda mv, b: b / d).sum())(d)
  np.testing.assert_allclose(grad, -B / np.array([4.0, 16.0]), rtol=1e-6)
  with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b"):
    lax.custom_linear_solve(lambda x: x[:1], jnp.asarray(B), lambda mv, b: b)
  with pytest.raises(TypeError, match=r"matvec\(\) output pytree structure must match b"):
    lax.custom_linear_solve(lambda x: [x], jnp.asarray(B), lambda mv, b: b)
  with pytest.raises(ValueError, match="has_aux was set to True"):
    lax.custom_linear_solve(lambda x: x, jnp.asarray(B), lambda mv, b: jnp.stack([b, b]),
                            has_aux=True)


def test_custom_linear_solve_jaxprs_match_jax():
  d = np.array([2.0, 4.0], np.float32)
  _jaxprs_match(lambda J, L, N: (lambda d, b: L.custom_linear_solve(
      lambda x: d * x, b, lambda mv, b: b / d)), d, B)
  # Reverse mode: one solve forward, one transposed solve backward (JAX also
  # hoists the repeated jaxprs into ``let`` bindings; purejax's printer does not).
  grad = lambda J, L, N: J.grad(lambda d, b: L.custom_linear_solve(
      lambda x: d * x, b, lambda mv, b: b / d, lambda mv, b: b / d).sum(), argnums=(0, 1))
  assert str(purejax.make_jaxpr(grad(purejax, lax, jnp))(d, B)).count("custom_linear_solve[") == 2
  _same_values(grad, d, B)


def _sqrt_root(J, L, N):
  def f(a):
    return L.custom_root(lambda x: x ** 2 - a, 1.0, lambda g, x0: N.sqrt(a),
                         lambda g, y: y / g(1.0))
  return f


def test_custom_root():
  f = _sqrt_root(purejax, lax, jnp)
  np.testing.assert_allclose(f(2.0), np.sqrt(2.0), rtol=1e-6)
  np.testing.assert_allclose(purejax.grad(f)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-5)
  np.testing.assert_allclose(purejax.jit(f)(3.0), np.sqrt(3.0), rtol=1e-6)
  np.testing.assert_allclose(purejax.vmap(f)(jnp.array([4.0, 9.0])), [2.0, 3.0])
  check_grads(f, (2.0,), order=1, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
  _jaxprs_match(_sqrt_root, 2.0)
  with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match"):
    lax.custom_root(lambda x: x, 1.0, lambda g, x: (x, x), lambda g, y: y)


def test_compiled_backend_runs_the_new_primitives():
  x = jnp.asarray(X34)
  d = jnp.asarray(np.array([2.0, 4.0], np.float32))

  def f(x, d):
    parts = lax.split(x, (1, 3), 1)
    solved = lax.custom_linear_solve(lambda v: d * v, x[0, :2], lambda mv, b: b / d)
    return [p * 2 + 1 for p in parts] + [lax.tile(x, (2, 1)) + 1, jnp.stack([x, x + 1]),
                                         lax.optimization_barrier(x * 2), solved]

  with config.override("purejax_backend", "cpu"):
    compiled = purejax.jit(f)(x, d)
  for a, b in zip(compiled, f(x, d)):
    np.testing.assert_allclose(a, b, rtol=1e-6)


def test_exported_names_cover_jax_lax():
  jax = oracle()
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    missing = [n for n in dir(jax.lax) if not n.startswith("_") and not hasattr(lax, n)]
  assert not missing, sorted(missing)


def test_x64_fixture_is_restored():
  assert not config.jax_enable_x64


def test_concatenate_transposes_to_one_split():
  jax = pytest.importorskip("jax")
  f = lambda m: lambda x, y: (m.concatenate([x, y]) * 2.0).sum()
  x, y = np.ones(2, np.float32), np.ones(3, np.float32)
  ours = str(purejax.make_jaxpr(purejax.grad(f(jnp), argnums=(0, 1)))(x, y))
  theirs = str(jax.make_jaxpr(jax.grad(f(jax.numpy), argnums=(0, 1)))(x, y))
  assert "split[axis=0 sizes=(2, 3)]" in ours and ours == theirs
