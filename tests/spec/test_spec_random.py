"""The spec's cells that draw random numbers, in the classic threefry mode
the documents were written in.  Keys are exact; samples are compared with
the documented values to the few-ulp differences between XLA versions."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import random
from purejax._src.config import config


@pytest.fixture
def classic():
  with config.override("jax_threefry_partitionable", False):
    yield


def test_prngkey_repr():
  assert repr(random.PRNGKey(0)) == "Array([0, 0], dtype=uint32)"


def test_split_sequence(classic):
  key = random.PRNGKey(0)
  key, subkey = random.split(key)
  assert str(key) == "[4146024105  967050713]"
  assert str(subkey) == "[2718843009 1272950319]"
  key, subkey = random.split(key)
  assert str(key) == "[2384771982 3928867769]"
  assert str(subkey) == "[1278412471 2182328957]"


def test_split_into_several_subkeys(classic):
  key, subkey = random.split(random.PRNGKey(0))
  key, *subkeys = random.split(key, 4)
  assert repr(key) == "Array([3306097435, 3899823266], dtype=uint32)"
  assert [s.tolist() for s in subkeys] == [[147607341, 367236428],
                                          [2280136339, 1907318301],
                                          [781391491, 1939998335]]


def test_documented_normal_samples(classic):
  key = random.PRNGKey(0)
  np.testing.assert_allclose(random.normal(key, shape=(1,)), [-0.20584235], atol=2e-7)
  np.testing.assert_allclose(random.normal(key, (4,)),
                             [1.8160864, -0.75487745, 0.3398885, -0.53483075], atol=2e-5)
  np.testing.assert_allclose(random.normal(key, (5,)),
                             [0.18784378, -1.2833427, -0.27109176, 1.2490592, 0.24446994],
                             atol=2e-6)


def test_gradient_on_random_input_equals_input(classic):
  v = random.normal(random.PRNGKey(0), (4,))
  assert str(jax.grad(lambda x: jnp.dot(x.T, x) / 2.0)(v)) == str(v)


def test_float64_request_is_truncated():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    x = random.uniform(random.PRNGKey(0), (1000,), dtype=jnp.float64)
  assert x.dtype == np.float32


def test_jit_norm_example():
  def norm(x):
    x = x - x.mean(0)
    return x / x.std(0)

  x = random.normal(random.PRNGKey(0), (100, 10), dtype=jnp.float32)
  assert np.allclose(norm(x), jax.jit(norm)(x), atol=1e-6)
