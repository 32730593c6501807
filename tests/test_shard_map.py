"""shard_map and the collectives' SPMD execution (devices as threads),
against NumPy references, the one-device vmap emulation and real JAX."""
import textwrap

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.mesh import Mesh, NamedSharding, PartitionSpec as P
from purejax.test_util import check_grads

from tests.jax_devices_oracle import jax_stdout

RNG = np.random.RandomState(0)


@pytest.fixture
def mesh22(cpu_devices):
  return Mesh(np.array(cpu_devices(4)).reshape(2, 2), ("x", "y"))


@pytest.fixture
def mesh4(cpu_devices):
  return Mesh(np.array(cpu_devices(4)), ("i",))


def smap(f, mesh, in_specs, out_specs, **kw):
  return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


def test_blocks_and_assembly(mesh22):
  x = np.arange(32.0, dtype=np.float32).reshape(4, 8)
  seen = []
  out = smap(lambda a: a * 2, mesh22, P("x", "y"), P("x", "y"))(x)
  np.testing.assert_array_equal(out, x * 2)
  assert out.sharding == NamedSharding(mesh22, P("x", "y"))
  # Multi-name entries: row-major over the names in the order given.
  y = np.arange(4.0, dtype=np.float32)
  out = smap(lambda a: a * 2, mesh22, P(("x", "y")), P(("y", "x")))(y)
  np.testing.assert_array_equal(out, [0., 4., 2., 6.])
  del seen


def test_collectives_vs_numpy(mesh22):
  x = RNG.randn(4, 6).astype(np.float32)
  blocks = x.reshape(2, 2, 2, 3).transpose(0, 2, 1, 3)   # [x, y, 2, 3]

  def body(a):
    return (lax.psum(a, "x"), lax.pmax(a, "y"), lax.pmin(a, ("x", "y")),
            lax.pmean(a, "x"), lax.axis_index("x") + 0 * a[:1, :1].astype(jnp.int32),
            lax.axis_index(("x", "y")) + 0 * a[:1, :1].astype(jnp.int32))

  s, mx, mn, mean, ix, ixy = smap(
      body, mesh22, P("x", "y"),
      (P(None, "y"), P("x", None), P(), P(None, "y"), P("x", "y"), P("x", "y")))(x)
  np.testing.assert_allclose(s, np.concatenate(list(blocks.sum(0)), axis=1), rtol=1e-6)
  np.testing.assert_allclose(mx, np.concatenate(list(blocks.max(1)), axis=0))
  np.testing.assert_allclose(mn, blocks.min((0, 1)))
  np.testing.assert_allclose(mean, np.concatenate(list(blocks.mean(0)), axis=1), rtol=1e-6)
  np.testing.assert_array_equal(ix, [[0, 0], [1, 1]])
  np.testing.assert_array_equal(ixy, [[0, 1], [2, 3]])


def test_gather_scatter_permute_all_to_all(mesh4):
  x = RNG.randn(8, 4).astype(np.float32)
  f = smap(lambda a: lax.all_gather(a, "i"), mesh4, P("i"), P("i"))
  # Every device holds all 4 blocks [4, 2, 4]; out P('i') stacks the 4 copies.
  np.testing.assert_array_equal(f(x), np.tile(x.reshape(4, 2, 4), (4, 1, 1)))
  f = smap(lambda a: lax.all_gather(a, "i", axis=1, tiled=True), mesh4, P("i"), P("i"))
  np.testing.assert_array_equal(f(x), np.tile(x.reshape(4, 2, 4).transpose(1, 0, 2)
                                              .reshape(2, 16), (4, 1)))
  # psum_scatter: device k keeps block k of the sum.
  f = smap(lambda a: lax.psum_scatter(a, "i", tiled=True), mesh4, P(), P("i"))
  np.testing.assert_allclose(f(x), 4 * x, rtol=1e-6)
  f = smap(lambda a: lax.psum_scatter(a, "i", scatter_dimension=1), mesh4, P("i"), P("i"))
  np.testing.assert_allclose(f(x), x.reshape(4, 2, 4).sum(0).T.reshape(-1), rtol=1e-5)
  # ppermute: a shift by one; device 0 receives nothing -> zeros.
  f = smap(lambda a: lax.ppermute(a, "i", [(0, 1), (1, 2), (2, 3)]), mesh4, P("i"), P("i"))
  np.testing.assert_array_equal(f(x), np.concatenate([np.zeros((2, 4), np.float32), x[:6]]))
  f = smap(lambda a: lax.pshuffle(a, "i", [3, 0, 1, 2]), mesh4, P("i"), P("i"))
  np.testing.assert_array_equal(f(x), np.roll(x, 2, axis=0))
  # all_to_all: device k gets block k of every device's split axis.
  y = RNG.randn(4, 8).astype(np.float32)
  f = smap(lambda a: lax.all_to_all(a, "i", 1, 0, tiled=True), mesh4, P("i"), P("i"))
  expect = y.reshape(4, 4, 2).transpose(1, 0, 2).reshape(16, 2)
  np.testing.assert_array_equal(f(y), expect)


def test_axis_index_groups(mesh4):
  x = np.arange(4.0, dtype=np.float32)
  f = smap(lambda a: lax.psum(a, "i", axis_index_groups=[[0, 1], [2, 3]]), mesh4,
           P("i"), P("i"))
  np.testing.assert_array_equal(f(x), [1., 1., 5., 5.])


def test_vs_vmap_emulation_and_jit(mesh22):
  from purejax._src.shard_map import emulate, shard_map_p
  x = RNG.randn(4, 4).astype(np.float32)

  def body(a):
    return lax.psum(jnp.sin(a), "x") * lax.axis_index("y"), lax.all_gather(a, "y", tiled=True)

  # all_gather's result varies over 'y': JAX's check_vma refuses P("x") for it.
  f = smap(body, mesh22, P("x", "y"), (P(None, "y"), P("x")), check_vma=False)
  closed = jax.make_jaxpr(f)(x)
  eqn = closed.jaxpr.eqns[0]
  assert eqn.primitive is shard_map_p
  emulated = emulate(x, **eqn.params)
  for a, b, c in zip(f(x), emulated, jax.jit(f)(x)):
    np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(c, b, rtol=1e-6)


def test_grads_of_collectives(mesh4):
  x = RNG.randn(8, 3).astype(np.float32)

  def loss(a):
    f = smap(lambda b: (lax.psum(b ** 2, "i") * lax.ppermute(b, "i", [(0, 1), (1, 2), (2, 3),
                                                                      (3, 0)])
                        + lax.all_gather(jnp.sin(b), "i", tiled=True)[:2]),
             mesh4, P("i"), P("i"))
    return f(a)

  check_grads(loss, (x,), order=1, modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)
  # Collectives differentiated inside the body (per device, in parallel).
  # Without varying-axes types psum's transpose is psum: every device's
  # cotangent adds up (JAX with check_vma=False, and pmap, give the same).
  def per_device_grad(a):
    return smap(lambda b: jax.grad(lambda c: lax.psum((c ** 3).sum(), "i"))(b),
                mesh4, P("i"), P("i"), check_vma=False)(a)
  np.testing.assert_allclose(per_device_grad(x), 4 * 3 * x ** 2, rtol=1e-5)
  # Outside: the emulation's gradient, as JAX's (an out_spec P() takes one copy).
  loss2 = lambda a: smap(lambda b: lax.psum(b ** 2, "i"), mesh4, P("i"), P(),
                         check_vma=False)(a).sum()
  np.testing.assert_allclose(jax.grad(loss2)(x), 2 * x, rtol=1e-6)


def test_vmap_of_shard_map(mesh4):
  x = RNG.randn(3, 8).astype(np.float32)
  f = smap(lambda b: b - lax.pmean(b, "i"), mesh4, P("i"), P("i"))
  blocks = x.reshape(3, 4, 2)     # [batch, device, block]
  expect = (blocks - blocks.mean(1, keepdims=True)).reshape(3, 8)
  np.testing.assert_allclose(jax.vmap(f)(x), expect, rtol=1e-5, atol=1e-6)


def test_closure_and_replicated_inputs(mesh4):
  w = jnp.arange(3.0)
  x = np.ones((8, 3), np.float32)
  f = smap(lambda a, s: a * w + s, mesh4, (P("i"), P()), P("i"))
  np.testing.assert_array_equal(f(x, 1.0), x * np.arange(3.0) + 1)


def test_errors(mesh22):
  f = lambda a: a
  with pytest.raises(ValueError, match="not evenly divisible"):
    smap(f, mesh22, P("x"), P("x"))(jnp.ones(3))
  with pytest.raises(ValueError, match="in_specs refers to 'z'"):
    smap(f, mesh22, P("z"), P("x"))(jnp.ones(4))
  with pytest.raises(ValueError, match="out_specs refers to 'z'"):
    smap(f, mesh22, P("x"), P("z"))(jnp.ones(4))
  with pytest.raises(ValueError, match="in_specs entry which is too long"):
    smap(f, mesh22, P("x", None), P("x"))(jnp.ones(4))
  with pytest.raises(ValueError, match="out_specs entry which is too long"):
    smap(lambda a: a.sum(), mesh22, P("x"), P("x"))(jnp.ones(4))
  with pytest.raises(ValueError, match="context mesh cannot be empty"):
    jax.shard_map(f, in_specs=P("x"), out_specs=P())(jnp.ones(4))
  with pytest.raises(NameError):
    smap(lambda a: lax.psum(a, "q"), mesh22, P("x"), P("x"))(jnp.ones(4))
  with pytest.raises(ValueError, match="length"):
    smap(f, mesh22, (P("x"), P("x")), P("x"))(jnp.ones(4))


def test_collectives_outside_a_run_are_unbound():
  from purejax._src.lax import parallel
  with pytest.raises(NameError, match="unbound axis name: i"):
    parallel.psum_p.impl(np.ones(2), axes=("i",), axis_index_groups=None)
  with pytest.raises(NameError, match="unbound axis name: i"):
    parallel.axis_index_p.impl(axis_name="i")


def test_experimental_path():
  with pytest.warns(DeprecationWarning):
    import importlib
    import purejax.experimental.shard_map as esm
    importlib.reload(esm)
  assert esm.shard_map is jax.shard_map


_ORACLE = textwrap.dedent("""
    import jax, numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ('x', 'y'))
    f = jax.shard_map(lambda a: jax.lax.psum(a * 2, 'x'), mesh=mesh, in_specs=P('x', 'y'),
                      out_specs=P(None, 'y'), check_vma=False)
    print(jax.make_jaxpr(f)(np.ones((4, 4), np.float32)))
""")


def test_jaxpr_matches_jax(mesh22):
  expect = jax_stdout(_ORACLE, 4)
  f = smap(lambda a: lax.psum(a * 2, "x"), mesh22, P("x", "y"), P(None, "y"),
           check_vma=False)
  assert str(jax.make_jaxpr(f)(np.ones((4, 4), np.float32))) == expect


# -- assembling outputs without copies ------------------------------------------------------

def test_outputs_view_inputs_and_shared_sums(mesh4):
  # The devices' run (a shard_map under jit; eagerly the body runs once on
  # all the blocks, see test_explicit_sharding's eager case).
  smap_ = lambda *a, **k: jax.jit(smap(*a, **k))
  x = jnp.asarray(RNG.randn(6, 8).astype(np.float32))
  # Column blocks of the input, passed through: the input itself, viewed.
  out = smap_(lambda a: a, mesh4, P(None, "i"), P(None, "i"))(x)
  np.testing.assert_array_equal(out, x)
  assert np.shares_memory(np.asarray(out), np.asarray(x))
  # A large psum's blocks are one shared buffer, but 2 rows thick: tiled by copying.
  big = RNG.randn(8, 1 << 15).astype(np.float32)
  out = smap_(lambda a: lax.psum(a, "i"), mesh4, P("i"), P("i"))(big)
  blocks = big.reshape(4, 2, -1)
  total = ((blocks[0] + blocks[1]) + blocks[2]) + blocks[3]
  np.testing.assert_allclose(out, np.tile(total, (4, 1)), rtol=1e-6, atol=1e-6)
  # Replicated (P()) output: one device's block, as it is.
  out = smap_(lambda a: lax.psum(a, "i"), mesh4, P("i"), P(), check_vma=False)(big)
  np.testing.assert_allclose(out, total, rtol=1e-6, atol=1e-6)


# -- make_jaxpr(axis_env=...) -------------------------------------------------------------

# What JAX 0.10.2 prints for the same calls.
_AXIS_ENV_JAXPRS = [
    (lambda x, y: lax.psum((x, y), "i"), [("i", 2)], (1., 2.), """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = psum[axes=('i',) axis_index_groups=None] a
    d:f32[] = psum[axes=('i',) axis_index_groups=None] b
  in (c, d) }"""),
    (lambda x: lax.axis_index("i") + lax.psum(x, ("i", "j")), [("i", 2), ("j", 3)],
     (np.ones(3, np.float32),), """\
{ lambda ; a:f32[3]. let
    b:i32[] = axis_index[axis_name=i] 
    c:f32[3] = psum[axes=('i', 'j') axis_index_groups=None] a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[3] = add d c
  in (e,) }"""),
    (lambda x: lax.pmean(x, "i") * lax.all_gather(x, "i").sum(), [("i", 4)],
     (np.ones(3, np.float32),), """\
{ lambda ; a:f32[3]. let
    b:f32[3] = psum[axes=('i',) axis_index_groups=None] a
    c:f32[3] = div b 4.0:f32[]
    d:f32[4,3] = all_gather[
      all_gather_dimension=0
      axis_index_groups=None
      axis_name=('i',)
      axis_size=4
      tiled=False
    ] a
    e:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
    f:f32[3] = mul c e
  in (f,) }"""),
    (lambda x: jax.jit(lambda y: lax.psum(y, "i"))(x), [("i", 2)], (1.,), """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let
          b:f32[] = psum[axes=('i',) axis_index_groups=None] a
        in (b,) }
    ] a
  in (b,) }"""),
    (lambda x: lax.psum(1, "i"), [("i", 2)], (1.,), """\
{ lambda ; a:f32[]. let  in (2:i32[],) }"""),
]


@pytest.mark.parametrize("case", range(len(_AXIS_ENV_JAXPRS)))
def test_make_jaxpr_axis_env(case):
  f, env, args, want = _AXIS_ENV_JAXPRS[case]
  assert str(jax.make_jaxpr(f, axis_env=env)(*args)) == want


def test_make_jaxpr_axis_env_errors_and_grad():
  with pytest.raises(NameError, match="unbound axis name: k"):
    jax.make_jaxpr(lambda x: lax.psum(x, "k"), axis_env=[("i", 2)])(1.)
  with pytest.raises(NameError, match="unbound axis name: i"):
    jax.make_jaxpr(lambda x: lax.psum(x, "i"))(1.)
  closed, shape = jax.make_jaxpr(lambda x: lax.psum(x, "i"), axis_env=[("i", 2)],
                                 return_shape=True)(np.float32(1.))
  assert shape == jax.ShapeDtypeStruct((), np.float32) and "psum" in str(closed)
  text = str(jax.make_jaxpr(jax.grad(lambda x: lax.psum(x * x, "i")),
                            axis_env=[("i", 2)])(np.float32(1.)))
  assert text.count("psum[axes=('i',)") == 2, text
