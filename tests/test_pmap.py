"""pmap (jit of a shard_map over a 1-D mesh): against vmap of the same
function, NumPy, finite differences and real JAX's printed jaxprs."""
import functools
import textwrap

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.mesh import NamedSharding, PartitionSpec as P
from purejax.test_util import check_grads

from tests.jax_devices_oracle import jax_stdout

RNG = np.random.RandomState(0)


@pytest.fixture
def four(cpu_devices):
  return cpu_devices(4)


def _f(x, y):
  z = jnp.tanh(x) * y
  return (z - lax.pmean(z, "i"), lax.psum(x, "i") * lax.axis_index("i"),
          lax.all_gather(z, "i"), lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
          lax.pmax(x, "i") - lax.pmin(x, "i"))


def test_pmap_matches_vmap(four):
  x = RNG.randn(4, 3).astype(np.float32)
  y = RNG.randn(4, 3).astype(np.float32)
  got = jax.pmap(_f, axis_name="i")(x, y)
  want = jax.vmap(_f, axis_name="i")(x, y)
  for a, b in zip(got, want):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_sharded_outputs(four):
  out = jax.pmap(lambda v: v * 2)(jnp.arange(8.0).reshape(4, 2))
  assert repr(out) == ("Array([[ 0.,  2.],\n       [ 4.,  6.],\n       [ 8., 10.],\n"
                       "       [12., 14.]], dtype=float32)")
  assert isinstance(out.sharding, NamedSharding)
  assert out.sharding.spec == P("_internal_pmap_axis_name")
  assert out.devices() == set(four)
  shard = out.addressable_shards[2]
  assert shard.device == four[2]
  np.testing.assert_array_equal(shard.data, [[8., 10.]])
  # Fewer rows than devices: the first ones.
  assert jax.pmap(lambda v: v)(jnp.ones((2, 1))).devices() == set(four[:2])
  assert jax.pmap(lambda v: v, devices=four[2:])(jnp.ones((2, 1))).devices() == set(four[2:])
  assert (out + 1).shape == (4, 2)    # usable like any Array


def test_lower_and_compile(four):
  """``pmap(f).lower(*args)``, as in JAX: the Lowered stage of the jitted
  shard_map, whose compiled form takes the same arguments."""
  f = jax.pmap(lambda x, y: 2 * x + y, in_axes=(0, None))
  x = jnp.arange(4.0).reshape(4, 1)
  lowered = f.lower(x, 1.0)
  assert isinstance(lowered, jax.stages.Lowered)
  assert "shard_map" in lowered.as_text()
  compiled = lowered.compile()
  np.testing.assert_allclose(compiled(x, 1.0), f(x, 1.0))
  np.testing.assert_allclose(compiled(x + 1, 0.5), 2 * (x + 1) + 0.5)


def test_axes_static_and_pytrees(four):
  x = RNG.randn(3, 4).astype(np.float32)
  f = jax.pmap(lambda a, b, n: {"s": a * b * n, "m": lax.psum(a, "j")}, axis_name="j",
               in_axes=(1, None, None), out_axes={"s": 1, "m": None},
               static_broadcasted_argnums=2)
  out = f(x, 2.0, 3)
  np.testing.assert_allclose(out["s"], x * 6, rtol=1e-6)
  np.testing.assert_allclose(out["m"], x.sum(1), rtol=1e-6)
  assert out["m"].shape == (3,)
  kw = jax.pmap(lambda a, *, b: a + b)(jnp.ones(2), b=jnp.arange(2.0))
  np.testing.assert_array_equal(kw, [1., 2.])


def test_data_parallel_training_step(four):
  """pmap(grad) with pmean of the gradients = the full-batch gradient."""
  X = RNG.randn(16, 3).astype(np.float32)
  Y = X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.1
  params = (jnp.zeros(3), jnp.zeros(()))

  def loss(p, x, y):
    return jnp.mean((x @ p[0] + p[1] - y) ** 2)

  @functools.partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0))
  def step(p, x, y):
    g = lax.pmean(jax.grad(loss)(p, x, y), "batch")
    return jax.tree.map(lambda a, b: a - 0.1 * b, p, g)

  single = jax.jit(lambda p: jax.tree.map(lambda a, b: a - 0.1 * b, p,
                                          jax.grad(loss)(p, X, Y)))
  p_par, p_one = params, params
  for _ in range(3):
    p_par = jax.tree.map(lambda a: a[0], step(p_par, X.reshape(4, 4, 3), Y.reshape(4, 4)))
    p_one = single(p_one)
  for a, b in zip(p_par, p_one):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_grad_of_pmap(four):
  x = RNG.randn(4, 2).astype(np.float32)
  f = jax.pmap(lambda a: jnp.sin(a) * lax.psum(a, "i"), axis_name="i")
  check_grads(lambda a: f(a).sum(), (x,), order=1, modes=["fwd", "rev"], atol=2e-2,
              rtol=2e-2)
  check_grads(lambda a: jax.pmap(lambda b: lax.ppermute(b ** 2, "i", [(0, 1), (1, 0)]),
                                 axis_name="i")(a), (x[:2],), order=1,
              modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)


def test_compositions(four):
  x = RNG.randn(4, 5, 3).astype(np.float32)
  g = lambda v: jnp.sum(v * 2) + lax.psum(v.sum(), "i")
  # pmap of jit; vmap (with its own axis name) inside pmap; jit of pmap.
  np.testing.assert_allclose(jax.pmap(jax.jit(g), axis_name="i")(x[:, 0]),
                             jax.vmap(g, axis_name="i")(x[:, 0]), rtol=1e-5)
  inner = lambda v: v - lax.pmean(v, "j") + lax.psum(v, "i")
  got = jax.pmap(jax.vmap(inner, axis_name="j"), axis_name="i")(x)
  want = jax.vmap(jax.vmap(inner, axis_name="j"), axis_name="i")(x)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.pmap(g, axis_name="i"))(x[:, 0]),
                             jax.vmap(g, axis_name="i")(x[:, 0]), rtol=1e-5)
  # vmap of pmap; nested pmaps (the inner one runs as vmap on each device).
  got = jax.vmap(jax.pmap(inner, axis_name="j"), axis_name="i")(x[:, :2])
  want = jax.vmap(jax.vmap(inner, axis_name="j"), axis_name="i")(x[:, :2])
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
  got = jax.pmap(jax.pmap(inner, axis_name="j"), axis_name="i")(x[:2, :2])
  want = jax.vmap(jax.vmap(inner, axis_name="j"), axis_name="i")(x[:2, :2])
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_errors(four):
  with pytest.raises(ValueError, match="requires 5 logical devices, but only 4"):
    jax.pmap(lambda a: a)(jnp.ones(5))
  with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
    jax.pmap(lambda a: a, in_axes=None)(jnp.ones(2))
  with pytest.raises(ValueError, match="Specified axis_size 3 doesn't match received "
                                       "axis_size 2"):
    jax.pmap(lambda a: a, axis_size=3)(jnp.ones(2))
  with pytest.raises(ValueError, match="static_broadcasted_argnums"):
    jax.pmap(lambda a, b: a, static_broadcasted_argnums=1)(jnp.ones(2))
  with pytest.raises(ValueError, match="not evenly divisible"):
    jax.pmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(3))
  with pytest.raises(NameError):
    jax.pmap(lambda a: lax.psum(a, "k"), axis_name="i")(jnp.ones(2))
  with pytest.raises(TypeError, match="in_axes must be an int"):
    jax.pmap(lambda a: a, in_axes="x")
  # A device's callback error reaches the caller as JAX's runtime error.
  with pytest.raises(jax.errors.JaxRuntimeError, match="ZeroDivisionError"):
    jax.pmap(lambda a: jax.pure_callback(lambda v: 1 / 0, a, a))(jnp.ones(2))


def test_devices_share_cores(four):
  from purejax._src.shard_map import body_num_threads
  from purejax._src.config import config
  with config.override("purejax_num_threads", 8):
    assert body_num_threads(4) == 2
    assert body_num_threads(16) == 1


_ORACLE = textwrap.dedent("""
    import jax, jax.numpy as jnp
    f = jax.pmap(lambda x, y: (x * y, jax.lax.axis_index('i')), axis_name='i',
                 in_axes=(0, None), out_axes=(1, 0))
    print(jax.make_jaxpr(f)(jnp.ones((3, 2)), 2.))
    print(jax.make_jaxpr(jax.pmap(lambda x: jax.lax.psum(x, 'i'), axis_name='i'))(jnp.arange(3.)))
""")


def test_jaxpr_matches_jax(cpu_devices):
  expect = jax_stdout(_ORACLE, 3)
  cpu_devices(3)
  f = jax.pmap(lambda x, y: (x * y, lax.axis_index("i")), axis_name="i", in_axes=(0, None),
               out_axes=(1, 0))
  got = (str(jax.make_jaxpr(f)(jnp.ones((3, 2)), 2.)) + "\n"
         + str(jax.make_jaxpr(jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i"))(
             jnp.arange(3.))))
  assert got == expect


# -- no copies where a view is exact ------------------------------------------------------

def test_outputs_view_shared_blocks(four):
  """A psum's result (one buffer shared by the devices) and an input passed
  through come back as read-only views, with the same values as copies."""
  x = RNG.randn(4, 1 << 17).astype(np.float32)   # large: the devices share the sum
  out = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
  total = ((x[0] + x[1]) + x[2]) + x[3]
  np.testing.assert_allclose(out, np.broadcast_to(total, x.shape), rtol=1e-6, atol=1e-6)
  value = np.asarray(out)
  assert value.strides[0] == 0 and not value.flags.writeable
  xa = jnp.asarray(x)
  same = jax.pmap(lambda v: v, axis_name="i")(xa)
  np.testing.assert_array_equal(same, x)
  assert np.shares_memory(np.asarray(same), np.asarray(xa))
  with pytest.raises(TypeError):
    same[0] = 1.
  # Distinct per-device results are copied into one array, replicated inputs shared.
  out = jax.pmap(lambda v, w: v * w + lax.axis_index("i"), axis_name="i",
                 in_axes=(0, None))(x, x[0])
  np.testing.assert_allclose(out, x * x[0] + np.arange(4)[:, None], rtol=1e-6)


def test_body_runs_without_edge_squeezes(four):
  """The pmap body's squeezes of its inputs and expand_dims of its outputs
  are done on the blocks by NumPy, not by the compiled body."""
  from purejax._src import block_views
  f = jax.pmap(lambda v, w: (jnp.sin(v) @ w, v), axis_name="i", in_axes=(0, None))
  text = str(jax.make_jaxpr(f)(np.ones((4, 2, 3), np.float32), np.ones((3, 5), np.float32)))
  assert "squeeze" in text and "broadcast_in_dim" in text
  bodies = [e.params["jaxpr"] for e in jax.make_jaxpr(f)(
      np.ones((4, 2, 3), np.float32), np.ones((3, 5), np.float32)).jaxpr.eqns[0]
      .params["jaxpr"].eqns if e.primitive.name == "shard_map"]
  body, in_shapes, out_shapes = block_views.without_edge_axes(bodies[0])
  assert in_shapes == [(2, 3), None] and out_shapes == [(1, 2, 5), (1, 2, 3)]
  names = [e.primitive.name for e in body.jaxpr.eqns]
  assert "squeeze" not in names and "broadcast_in_dim" not in names, names
  x = RNG.randn(4, 2, 3).astype(np.float32)
  w = RNG.randn(3, 5).astype(np.float32)
  got = f(x, w)
  np.testing.assert_allclose(got[0], np.sin(x) @ w, rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(got[1], x)
