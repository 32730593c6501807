"""shard_map(check_vma=True): varying-manual-axes types (purejax/_src/vma.py).

The expected gradients are closed forms (NumPy); they are the values JAX
0.10.2 gives with check_vma=True (checked with 4 CPU devices), where
check_vma=False (psum transposing to psum) gives others.
"""
import re

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.mesh import Mesh, PartitionSpec as P
from purejax.test_util import check_grads

RNG = np.random.RandomState(1)


@pytest.fixture
def mesh4(cpu_devices):
  return Mesh(np.array(cpu_devices(4)), ("i",))


@pytest.fixture
def mesh2(cpu_devices):
  return Mesh(np.array(cpu_devices(2)), ("i",))


@pytest.fixture
def mesh22(cpu_devices):
  return Mesh(np.array(cpu_devices(4)).reshape(2, 2), ("x", "y"))


def smap(f, mesh, in_specs, out_specs, **kw):
  return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


def body_text(closed):
  """The shard_map body's equations, one string per line."""
  lines = [line.strip() for line in str(closed).splitlines()]
  start = next(i for i, line in enumerate(lines) if line.startswith("jaxpr={"))
  end = next(i for i in range(start, len(lines)) if lines[i].startswith("in ("))
  return lines[start + 1:end + 1]


# -- gradients taken inside the body ---------------------------------------------------

def test_grad_of_psum_inside_body_is_per_device(mesh4):
  x = RNG.randn(8).astype(np.float32)
  f = lambda b: jax.grad(lambda c: lax.psum((c ** 2).sum(), "i"))(b)
  np.testing.assert_allclose(smap(f, mesh4, P("i"), P("i"))(x), 2 * x, rtol=1e-6)
  # check_vma=False keeps psum's untyped transpose: every device's cotangent adds up.
  np.testing.assert_allclose(smap(f, mesh4, P("i"), P("i"), check_vma=False)(x), 8 * x,
                             rtol=1e-6)


def test_grad_wrt_invariant_value_sums_over_devices(mesh4):
  w = np.float32(3.0)
  x = RNG.randn(8).astype(np.float32)
  g = smap(lambda w, b: jax.grad(lambda v: lax.psum((v * b).sum(), "i"))(w),
           mesh4, (P(), P("i")), P())(w, x)
  np.testing.assert_allclose(g, x.sum(), rtol=1e-5)
  # No psum in the function: the pvary inserted at `v * b` transposes to one.
  g = smap(lambda w, b: jax.grad(lambda v: (v * b).sum())(w), mesh4, (P(), P("i")), P())(w, x)
  np.testing.assert_allclose(g, x.sum(), rtol=1e-5)


def test_grad_of_psum_of_invariant(mesh4):
  w = np.float32(1.5)
  g = smap(lambda v: jax.grad(lambda u: lax.psum(u ** 3, "i"))(v), mesh4, P(), P())(w)
  np.testing.assert_allclose(g, 4 * 3 * w ** 2, rtol=1e-6)


def test_grad_of_pmean_and_all_gather_inside_body(mesh4):
  x = RNG.randn(8).astype(np.float32)
  g = smap(lambda b: jax.grad(lambda c: lax.pmean(jnp.sin(c), "i").sum())(b),
           mesh4, P("i"), P("i"))(x)
  np.testing.assert_allclose(g, np.cos(x) / 4, rtol=1e-5)
  g = smap(lambda b: jax.grad(lambda c: (lax.all_gather(c, "i", tiled=True) ** 2).sum())(b),
           mesh4, P("i"), P("i"))(x)
  np.testing.assert_allclose(g, 4 * 2 * x, rtol=1e-5)   # every device's sum counts it


def test_grad_inside_body_under_jit(mesh4):
  x = RNG.randn(8).astype(np.float32)
  w = np.ones(1, np.float32)
  f = smap(lambda w, b: jax.grad(lambda v: (v * b ** 2).sum())(w) * b, mesh4,
           (P(), P("i")), P("i"))
  expect = (x ** 2).sum() * x
  np.testing.assert_allclose(f(w, x), expect, rtol=1e-5)
  np.testing.assert_allclose(jax.jit(f)(w, x), expect, rtol=1e-5)


# -- gradients of a shard_map -------------------------------------------------------------

def test_grads_across_shard_map(mesh4):
  x = RNG.randn(8).astype(np.float32)
  w = np.float32(0.7)
  f = smap(lambda w, b: lax.psum(w * jnp.sin(b), "i") * b + lax.pmean(w ** 2, "i"),
           mesh4, (P(), P("i")), P("i"))
  check_grads(f, (w, x), order=1, modes=["fwd", "rev"], atol=2e-2, rtol=2e-2)
  gw, gx = jax.grad(lambda w, b: f(w, b).sum(), (0, 1))(w, x)
  # psum is elementwise over the blocks [device, 2]: out[d, j] = w * s[j] * x[d, j] + w**2.
  s = np.tile(np.sin(x).reshape(4, 2).sum(0), 4)
  xs = np.tile(x.reshape(4, 2).sum(0), 4)
  np.testing.assert_allclose(gw, (s * x).sum() + 8 * 2 * w, rtol=1e-4)
  np.testing.assert_allclose(gx, w * s + w * np.cos(x) * xs, rtol=1e-4)


def test_vmap_of_typed_body(mesh4):
  x = RNG.randn(3, 8).astype(np.float32)
  w = np.float32(2.0)
  f = smap(lambda w, b: w * (b - lax.pmean(b, "i")), mesh4, (P(), P("i")), P("i"))
  blocks = x.reshape(3, 4, 2)
  expect = 2 * (blocks - blocks.mean(1, keepdims=True)).reshape(3, 8)
  np.testing.assert_allclose(jax.vmap(f, in_axes=(None, 0))(w, x), expect, rtol=1e-5,
                             atol=1e-6)


# -- the body's jaxpr ---------------------------------------------------------------------

def test_body_jaxpr_matches_jax(mesh2):
  g = smap(lambda w, x: lax.psum(w * x, "i"), mesh2, (P(), P("i")), P())
  # JAX 0.10.2 prints these equations, `{V:i}` marking the varying values.
  assert body_text(jax.make_jaxpr(g)(1., jnp.arange(2.))) == [
      "f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d",
      "g:f32[]{V:i} = pvary[axes=('i',)] f",
      "h:f32[1]{V:i} = mul g e",
      "i:f32[1] = psum_invariant[axes=('i',)] h",
      "in (i,) }"]
  g = smap(lambda x: x * 2. + jnp.ones(1), mesh2, P("i"), P("i"))
  assert body_text(jax.make_jaxpr(g)(jnp.arange(2.))) == [
      "d:f32[]{V:i} = pvary[axes=('i',)] 2.0:f32[]",
      "e:f32[1]{V:i} = mul c d",
      "f:f32[1] = broadcast_in_dim 1.0:f32[]",
      "g:f32[1]{V:i} = pvary[axes=('i',)] f",
      "h:f32[1]{V:i} = add e g",
      "in (h,) }"]


def test_body_types_print_as_jax(mesh22):
  def body(x, y):
    z = x * y
    return z, lax.psum(z, "y"), lax.pmax(x, ("x", "y"))
  f = smap(body, mesh22, (P("x", "y"), P("y", None)), (P("x", "y"), P("x"), P()))
  text = str(jax.make_jaxpr(f)(jnp.ones((4, 4)), jnp.ones((4, 2))))
  # JAX 0.10.2's text for the same program (axes renamed i, j -> x, y)
  assert "jaxpr={ lambda ; f:f32[2,2]{V:(x,y)} g:f32[2,2]{V:y}. let" in text
  assert body_text(jax.make_jaxpr(f)(jnp.ones((4, 4)), jnp.ones((4, 2)))) == [
      "h:f32[2,2]{V:(x,y)} = pvary[axes=('x',)] g",
      "i:f32[2,2]{V:(x,y)} = mul f h",
      "j:f32[2,2]{V:x} = psum_invariant[axes=('y',)] i",
      "k:f32[2,2] = pmax[axes=('x', 'y') axis_index_groups=None] f",
      "in (i, j, k) }"]


def test_untyped_body_keeps_psum(mesh2):
  g = smap(lambda w, x: lax.psum(w * x, "i"), mesh2, (P(), P("i")), P(), check_vma=False)
  text = "\n".join(body_text(jax.make_jaxpr(g)(1., jnp.arange(2.))))
  assert "pvary" not in text and "psum_invariant" not in text and "psum[" in text


def test_transposes_are_each_other(mesh2):
  f = smap(lambda w, b: jax.grad(lambda v: (v * b).sum())(w), mesh2, (P(), P("i")), P())
  text = "\n".join(body_text(jax.make_jaxpr(f)(1., jnp.arange(2.))))
  assert "pvary[axes=('i',)]" in text and "psum_invariant[axes=('i',)]" in text
  f = smap(lambda b: jax.grad(lambda c: lax.psum(c, "i").sum())(b), mesh2, P("i"), P("i"))
  text = "\n".join(body_text(jax.make_jaxpr(f)(jnp.arange(2.))))
  assert text.count("pvary[axes=('i',)]") == 1     # psum_invariant's transpose


def test_collectives_pvary_their_operand(mesh22):
  f = smap(lambda w: lax.all_gather(w, "x") + lax.axis_index("y"), mesh22, P(), P("x", "y"))
  text = "\n".join(body_text(jax.make_jaxpr(f)(jnp.ones(1))))
  assert "pvary[axes=('x',)]" in text          # all_gather needs a varying operand
  assert "pvary[axes=('y',)]" in text          # meeting axis_index('y')


# -- out_specs must be invariant where they omit an axis ---------------------------------

def test_out_specs_replication_error(mesh22):
  x = np.arange(4.0, dtype=np.float32)
  with pytest.raises(ValueError, match=re.escape(
      "out_specs is P() which implies that the corresponding output value is only varying "
      "across mesh axes {} and not {x,y}, but it was inferred to be possibly varying over "
      "{x,y}")):
    smap(lambda b: b * 2, mesh22, P(("x", "y")), P())(x)
  with pytest.raises(ValueError, match=re.escape(
      "out_specs[1] is P('x',) which implies that the corresponding output value is "
      "replicated across mesh axis 'y', but could not infer replication over any axes")):
    smap(lambda b: (b, b), mesh22, P(("x", "y")), (P(("x", "y")), P("x")))(x)
  with pytest.raises(ValueError, match="check_vma=False argument to `jax.shard_map`"):
    smap(lambda b: b, mesh22, P("x"), P())(x)
  # Replicated by a psum, or passed as check_vma=False: accepted.
  np.testing.assert_allclose(smap(lambda b: lax.psum(b, ("x", "y")), mesh22,
                                  P(("x", "y")), P())(x), [6.0])
  np.testing.assert_allclose(smap(lambda b: b, mesh22, P("x"), P(), check_vma=False)(x),
                             x[:2])


# -- pcast --------------------------------------------------------------------------------

def test_pcast_to_varying(mesh2):
  f = smap(lambda w: lax.pcast(w, "i", to="varying") * 1.0, mesh2, P(), P("i"))
  text = "\n".join(body_text(jax.make_jaxpr(f)(jnp.ones(1))))
  assert text.startswith("d:f32[1]{V:i} = pvary[axes=('i',)] c\ne:f32[]{V:i} = pvary[axes=('i',)] 1.0")
  np.testing.assert_allclose(f(np.ones(1, np.float32)), np.ones(2))
  with pytest.raises(ValueError, match="Unsupported pcast from=varying"):
    smap(lambda b: lax.pcast(b, "i", to="varying"), mesh2, P("i"), P("i"))(np.ones(2))
  with pytest.raises(ValueError, match="Allowed `to` values"):
    smap(lambda b: lax.pcast(b, "i", to="nope"), mesh2, P("i"), P("i"))(np.ones(2))
