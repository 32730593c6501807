"""Buffer donation: ``jit(..., donate_argnums/donate_argnames)`` deletes the
donated Arrays an output can take over, as JAX's CPU backend does."""
import warnings

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax.errors import JaxRuntimeError


def test_donated_array_is_deleted_and_reading_it_raises():
  x = jnp.arange(3.0)
  out = jax.jit(lambda x: x * 2, donate_argnums=0)(x)
  np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
  assert x.is_deleted()
  assert x.shape == (3,)   # the aval stays readable, as in JAX
  for read in (lambda: x + 1, lambda: repr(x), lambda: np.asarray(x),
               lambda: jax.jit(lambda v: v)(x)):
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[3\]\."):
      read()


def test_donate_argnames_and_undonated_arguments():
  f = jax.jit(lambda x, y: (x + 1, y), donate_argnames="y")
  a, b = jnp.ones(3), jnp.zeros(3)
  f(a, y=b)
  assert not a.is_deleted() and b.is_deleted()
  g = jax.jit(lambda x, y: (x + 1, y * 2), donate_argnums=1)
  a, b = jnp.ones(3), jnp.zeros(3)
  g(a, y=b)   # argnums infer the name, as in JAX
  assert not a.is_deleted() and b.is_deleted()


def test_unusable_donation_warns_once_and_keeps_the_array():
  f = jax.jit(lambda x, y: x.sum() + y, donate_argnums=(0, 1))
  p, q = jnp.ones(2), jnp.ones(3)
  with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[2\]\."):
    f(p, q)
  assert not p.is_deleted() and q.is_deleted()
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    f(jnp.ones(2), jnp.ones(3))   # same signature: no second warning


def test_donating_pytrees_scalars_and_numpy_inputs():
  t = {"a": jnp.ones(2), "b": jnp.ones(2)}
  with pytest.warns(UserWarning, match="not usable"):   # "b" has no output to take it
    jax.jit(lambda t: {"a": t["a"] + 1}, donate_argnums=0)(t)
  assert t["a"].is_deleted() and not t["b"].is_deleted()
  n = np.ones(3)
  jax.jit(lambda x: x + 1, donate_argnums=0)(n)   # NumPy inputs are copied, never freed
  np.testing.assert_array_equal(n, 1.0)
  assert float(jax.jit(lambda x: x + 1, donate_argnums=0)(1.0)) == 2.0


def test_donating_an_array_used_twice_in_the_call_raises():
  a = jnp.ones(3)
  with pytest.raises(JaxRuntimeError, match="Attempt to donate a buffer which is also used"):
    jax.jit(lambda x, y: (x + 1, y), donate_argnums=1)(a, a)


def test_delete_by_hand():
  c = jnp.ones(2)
  assert not c.is_deleted()
  c.delete()
  c.delete()   # twice is fine
  assert c.is_deleted()
  with pytest.raises(RuntimeError, match="deleted"):
    float(c.sum())


def test_donation_matches_jax():
  jax_oracle = pytest.importorskip("jax")
  for lib in (jax, jax_oracle):
    h = lib.jit(lambda x, y: (x * 2, y.sum()), donate_argnums=(0, 1))
    p, q = lib.numpy.ones(2), lib.numpy.ones(3)
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      h(p, q)
    if lib is jax:
      mine = (p.is_deleted(), q.is_deleted())
    else:
      assert mine == (p.is_deleted(), q.is_deleted())
