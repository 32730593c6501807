"""Types and introspection as JAX 0.10 shows them: tracers are Arrays, an
abstract value's sharding, typed keys as pytree leaves, complex ordering,
ShapeDtypeStruct, jaxpr reprs, vjp functions as pytrees, named residuals."""
import numpy as np
import pytest

from conftest import oracle
import purejax as jax
import purejax.numpy as jnp


# -- tracers are Arrays ------------------------------------------------------

@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_tracer_is_an_array(transform):
  seen = []

  def f(x):
    seen.append(isinstance(x, jax.Array))
    return jnp.sum(x)

  getattr(jax, transform)(f)(jnp.ones(3))
  assert seen == [True]


# -- abstract values' sharding -----------------------------------------------

def _sharding_reprs(jx, jxnp):
  seen = []
  jx.jit(lambda x: seen.append(repr(jx.typeof(x).sharding)) or x)(jxnp.ones((2, 3)))
  return [repr(jx.typeof(jxnp.ones(3)).sharding), repr(jx.typeof(jxnp.float32(1)).sharding),
          repr(jx.core.ShapedArray((4, 5, 6), jxnp.float32).sharding),
          repr(jx.typeof(jx.random.key(0)).sharding)] + seen


def test_typeof_sharding_matches_jax():
  real = oracle()
  import jax.numpy as real_jnp
  assert _sharding_reprs(jax, jnp) == _sharding_reprs(real, real_jnp)


def test_typeof_sharding_is_unsplit_over_the_empty_abstract_mesh():
  s = jax.typeof(jnp.ones((2, 3))).sharding
  assert isinstance(s, jax.sharding.NamedSharding)
  assert s.mesh == jax.sharding.AbstractMesh((), ())
  assert s.mesh.empty and s.mesh.axis_names == () and s.spec == jax.P(None, None)
  assert s.memory_kind is None and s.is_fully_replicated
  with pytest.raises(ValueError, match="device_set is not implemented"):
    s.device_set


def test_abstract_mesh_as_jax():
  real = oracle()
  for jx in (jax, real):
    AT = jx.sharding.AxisType
    m = jx.sharding.AbstractMesh((2, 3), ("x", "y"), axis_types=(AT.Explicit, AT.Auto))
    assert (m.size, m.shape_tuple, m.abstract_mesh is m) == (6, (("x", 2), ("y", 3)), True)
  rm = real.sharding.AbstractMesh((2, 3), ("x", "y"))
  pm = jax.sharding.AbstractMesh((2, 3), ("x", "y"))
  assert repr(pm) == repr(rm)
  assert repr(jax.sharding.NamedSharding(pm, jax.P("x"))) == \
      repr(real.sharding.NamedSharding(rm, real.P("x")))


# -- typed keys are leaves ---------------------------------------------------

def test_typed_key_is_a_pytree_leaf():
  real = oracle()
  tree = {"k": jax.random.key(0), "a": 1}
  assert str(jax.tree.structure(tree)) == str(real.tree.structure({"k": real.random.key(0), "a": 1}))
  leaves = jax.tree.leaves(tree)
  assert len(leaves) == 2 and jax.dtypes.issubdtype(leaves[1].dtype, jax.dtypes.prng_key)
  kinds = jax.tree.map(lambda v: isinstance(v, jax.Array) and v.shape == (), tree)
  assert kinds == {"k": True, "a": False}
  keys = jax.random.split(jax.random.key(1), 3)
  out = jax.tree.map(lambda k: jax.vmap(lambda kk: jax.random.uniform(kk, (2,)))(k), [keys])
  assert out[0].shape == (3, 2)   # the key array reached the function whole
