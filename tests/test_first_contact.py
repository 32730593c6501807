"""What a JAX user or library meets first: ``isinstance(x, jax.Array)`` in
traced code, array construction from buffers and large Python ints, the
error classes of misused transformations, and the weak types of gradients.

Each check states the expected value here and, when JAX is installed, also
compares with it (``oracle()`` skips that half cleanly otherwise)."""
import array as pyarray

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
import purejax.typing
from purejax import lax

from tests.conftest import oracle


# ---------------------------------------------------------------------------
# isinstance(x, jax.Array)

def _array_checks(jax, jnp):
  """(concrete, jit, grad, vmap, key, NumPy, scalar) answers to
  ``isinstance(x, jax.Array)``."""
  seen = {}

  def record(name):
    def f(x):
      seen[name] = isinstance(x, jax.Array)
      return x
    return f

  seen["concrete"] = isinstance(jnp.ones(3), jax.Array)
  jax.jit(record("jit"))(jnp.ones(3))
  jax.grad(record("grad"))(1.0)
  jax.vmap(record("vmap"))(jnp.ones(3))
  seen["key"] = isinstance(jax.random.key(0), jax.Array)
  jax.jit(record("jit_key"))(jax.random.key(0))
  seen["numpy"] = isinstance(np.ones(3), jax.Array)
  seen["scalar"] = isinstance(3.0, jax.Array)
  seen["np_scalar"] = isinstance(np.float32(3.0), jax.Array)
  return seen


_EXPECTED_CHECKS = {"concrete": True, "jit": True, "grad": True, "vmap": True, "key": True,
                    "jit_key": True, "numpy": False, "scalar": False, "np_scalar": False}


def test_tracers_and_keys_are_jax_arrays():
  assert _array_checks(purejax, jnp) == _EXPECTED_CHECKS


def test_tracers_and_keys_are_jax_arrays_like_oracle():
  jax = oracle()
  assert _array_checks(jax, jax.numpy) == _EXPECTED_CHECKS


def test_array_class_relations():
  x = jnp.ones(3)
  assert type(x) is not purejax.Array           # the public class is abstract
  assert type(x).__name__ == "ArrayImpl"        # as JAX's concrete class
  assert issubclass(type(x), purejax.Array)
  assert not issubclass(purejax.core.Tracer, purejax.Array)   # instances only
  assert not issubclass(np.ndarray, purejax.Array)
  assert jnp.ndarray is purejax.Array
  assert purejax.typing.ArrayLike.__args__[0] is purejax.Array
  assert repr(purejax.Array) == "<class 'purejax.Array'>"


def test_array_class_relations_like_oracle():
  jax = oracle()
  x = jax.numpy.ones(3)
  assert type(x) is not jax.Array and type(x).__name__ == "ArrayImpl"
  assert issubclass(type(x), jax.Array) and not issubclass(jax.core.Tracer, jax.Array)
  assert jax.numpy.ndarray is jax.Array
  assert jax.typing.ArrayLike.__args__[0] is jax.Array


def test_annotated_array_checks_in_jitted_code():
  """What chex/optax-style code does: check the type inside a jitted function."""

  def checked(x: purejax.Array) -> purejax.Array:
    if not isinstance(x, purejax.Array):
      raise AssertionError(f"not an Array: {type(x)}")
    return x * 2

  assert purejax.jit(checked)(jnp.ones(2)).tolist() == [2.0, 2.0]
  assert float(purejax.grad(checked)(1.0)) == 2.0
  assert purejax.vmap(checked)(jnp.ones(2)).tolist() == [2.0, 2.0]
