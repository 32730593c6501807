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


# ---------------------------------------------------------------------------
# jnp.array / jnp.asarray: large Python ints, buffer-protocol objects

def _construct(jnp, make, x64=False):
  try:
    out = make(jnp)
  except Exception as e:  # noqa: BLE001 -- the class and text are compared
    return type(e).__name__, str(e)
  return repr(out), out.weak_type


_CONSTRUCTIONS = [
    (lambda jnp: jnp.array([4294967295, 2147483648], dtype=jnp.uint32),
     ("Array([4294967295, 2147483648], dtype=uint32)", False)),
    (lambda jnp: jnp.asarray([4294967295, 2147483648], dtype=jnp.uint32),
     ("Array([4294967295, 2147483648], dtype=uint32)", False)),
    (lambda jnp: jnp.array(4294967295, dtype=jnp.uint32),
     ("Array(4294967295, dtype=uint32)", False)),
    (lambda jnp: jnp.array([jnp.uint32(1), 4294967295]),
     ("Array([         1, 4294967295], dtype=uint32)", False)),
    (lambda jnp: jnp.array([2**40, 1.5]),
     ("Array([1.0995116e+12, 1.5000000e+00], dtype=float32)", False)),
    (lambda jnp: jnp.array(2**40, dtype=jnp.float32),
     ("Array(1.0995116e+12, dtype=float32)", False)),
    (lambda jnp: jnp.array([4294967296], dtype=jnp.uint32),
     ("OverflowError", "Python integer 4294967296 out of bounds for uint32")),
    (lambda jnp: jnp.array([-1], dtype=jnp.uint32),
     ("OverflowError", "Python integer -1 out of bounds for uint32")),
    (lambda jnp: jnp.array([2**31]),
     ("OverflowError", "Python integer 2147483648 out of bounds for int32")),
    (lambda jnp: jnp.array(2**31),
     ("OverflowError", "Python int 2147483648 too large to convert to int32")),
    (lambda jnp: jnp.array([jnp.int8(1), 200]),
     ("OverflowError", "Python integer 200 out of bounds for int8")),
    (lambda jnp: jnp.asarray(memoryview(b"abc")), ("Array([97, 98, 99], dtype=uint8)", False)),
    (lambda jnp: jnp.array(bytearray(b"abc")), ("Array([97, 98, 99], dtype=uint8)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("f", [1, 2])), ("Array([1., 2.], dtype=float32)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("d", [1, 2])), ("Array([1., 2.], dtype=float32)", False)),
    (lambda jnp: jnp.asarray(memoryview(np.arange(4, dtype=np.int16))),
     ("Array([0, 1, 2, 3], dtype=int16)", False)),
    (lambda jnp: jnp.asarray(memoryview(b"abc"), dtype=jnp.float32),
     ("Array([97., 98., 99.], dtype=float32)", False)),
    (lambda jnp: jnp.array(b"abc"),
     ("TypeError", "Value 'b'abc'' with dtype |S3 is not a valid JAX array type. "
                   "Only arrays of numeric types are supported by JAX.")),
]

_CONSTRUCTIONS_X64 = [
    (lambda jnp: jnp.array([2**64 - 1, 2**63], dtype=jnp.uint64),
     ("Array([18446744073709551615,  9223372036854775808], dtype=uint64)", False)),
    (lambda jnp: jnp.array([2**63], dtype=jnp.int64),
     ("OverflowError", "Python int too large to convert to C long")),
    (lambda jnp: jnp.array([2**64], dtype=jnp.uint64),
     ("OverflowError", "Python int too large to convert to C long")),
    (lambda jnp: jnp.array([-1], dtype=jnp.uint64),
     ("OverflowError", "Python integer -1 out of bounds for uint64")),
    (lambda jnp: jnp.array([2**31]), ("Array([2147483648], dtype=int64)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("d", [1, 2])), ("Array([1., 2.], dtype=float64)", False)),
]


@pytest.mark.parametrize("i", range(len(_CONSTRUCTIONS)))
def test_array_from_large_ints_and_buffers(i):
  make, expected = _CONSTRUCTIONS[i]
  assert _construct(jnp, make) == expected


@pytest.mark.parametrize("i", range(len(_CONSTRUCTIONS_X64)))
def test_array_from_large_ints_x64(i, x64):
  make, expected = _CONSTRUCTIONS_X64[i]
  assert _construct(jnp, make) == expected


def test_array_from_large_ints_and_buffers_like_oracle():
  jax = oracle()
  for make, expected in _CONSTRUCTIONS:
    assert _construct(jax.numpy, make) == expected
  jax.config.update("jax_enable_x64", True)
  try:
    for make, expected in _CONSTRUCTIONS_X64:
      assert _construct(jax.numpy, make) == expected
  finally:
    jax.config.update("jax_enable_x64", False)


def test_large_uint32_list_under_jit():
  f = purejax.jit(lambda x: jnp.array([x, 4294967295], dtype=jnp.uint32))
  assert f(jnp.uint32(1)).tolist() == [1, 4294967295]
