"""custom_vmap / sequential_vmap."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax.custom_batching import custom_vmap, sequential_vmap


def _make(calls):
  @custom_vmap
  def f(x, y):
    return x + y

  @f.def_vmap
  def rule(axis_size, in_batched, x, y):
    calls.append((axis_size, list(in_batched)))
    return x + y + 100., in_batched[0] or in_batched[1]
  return f


def test_rule_runs_only_under_vmap():
  calls = []
  f = _make(calls)
  assert float(f(1., 2.)) == 3.
  assert float(jax.jit(f)(1., 2.)) == 3.
  assert calls == []
  out = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.), 1.)
  np.testing.assert_allclose(out, [101., 102., 103.])
  assert calls == [(3, [True, False])]


@pytest.mark.parametrize("wrap", ["vmap_of_jit", "jit_of_vmap", "nested"])
def test_composes_with_jit(wrap):
  f = _make([])
  x = jnp.arange(3.)
  if wrap == "vmap_of_jit":
    out = jax.vmap(jax.jit(f), in_axes=(0, None))(x, 1.)
  elif wrap == "jit_of_vmap":
    out = jax.jit(jax.vmap(f, in_axes=(0, None)))(x, 1.)
  else:   # the rule's output, batched again by an outer vmap (plain batching)
    out = jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(0, None))(x[None], 1.)[0]
  np.testing.assert_allclose(out, [101., 102., 103.])


def test_jvp_differentiates_the_function():
  f = _make([])
  p, t = jax.jvp(f, (1., 2.), (1., 1.))
  assert (float(p), float(t)) == (3., 2.)
  np.testing.assert_allclose(jax.vmap(jax.grad(f))(jnp.arange(3.), jnp.ones(3)), 1.)


def test_errors():
  @custom_vmap
  def g(x):
    return x

  with pytest.raises(AttributeError, match="No batching rule"):
    jax.vmap(g)(jnp.ones(2))

  @g.def_vmap
  def bad(axis_size, in_batched, x):
    return x, [True]
  with pytest.raises(ValueError, match="do not match"):
    jax.vmap(g)(jnp.ones(2))


def test_sequential_vmap():
  calls = []

  @sequential_vmap
  def s(x, y):
    calls.append(x.shape)
    return jnp.sum(x) * y
  out = jax.vmap(s, in_axes=(0, None))(jnp.arange(6.).reshape(3, 2), 2.)
  np.testing.assert_allclose(out, [2., 10., 18.])
  assert calls[-1] == (2,)   # the function sees one example at a time
  jaxpr = str(jax.make_jaxpr(jax.vmap(s, in_axes=(0, None)))(jnp.ones((3, 2)), 2.))
  assert "scan" in jaxpr


def test_matches_jax():
  jax_oracle = pytest.importorskip("jax")
  from jax.custom_batching import custom_vmap as jcv

  def build(cv):
    @cv
    def f(x):
      return x * 2.

    @f.def_vmap
    def rule(axis_size, in_batched, x):
      return x * 3. + axis_size, in_batched[0]
    return f
  x = np.arange(4., dtype=np.float32)
  np.testing.assert_allclose(jax.vmap(build(custom_vmap))(x),
                             jax_oracle.vmap(build(jcv))(x))
