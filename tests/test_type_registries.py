"""Registering a type whose values are arrays, as TensorFlow Probability does
for its variables: ``jax.core.pytype_aval_mappings`` (type -> aval) and
``jax.interpreters.xla.canonicalize_dtype_handlers`` (type -> conversion to
an array), compared with JAX."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src import core as _src_core
from purejax.interpreters import xla

from conftest import oracle


def _box_type():
  class Box:
    """Array-like, but neither an ndarray nor a JAX array."""

    def __init__(self, value):
      self.value = np.asarray(value, np.float64)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)

    def __array__(self, dtype=None, copy=None):
      return self.value if dtype is None else self.value.astype(dtype)
  return Box


def _register(jax, box, mappings):
  mappings[box] = lambda x: jax.core.ShapedArray(x.shape, np.dtype(np.float32))
  handlers = jax.interpreters.xla.canonicalize_dtype_handlers
  handlers[box] = handlers[np.ndarray]


def _uses(jax, box):
  b = box([1.0, -2.0, 3.0])
  return {"jit": jax.jit(lambda x: x * 2)(b),
          "grad": jax.grad(lambda x: jax.numpy.sum(jax.numpy.sin(x)))(b),
          "vmap": jax.vmap(lambda x: x + 1)(b),
          "typeof": str(jax.typeof(b))}


def _check_against(theirs, ours):
  assert ours["typeof"] == theirs["typeof"] == "float32[3]"
  for key in ("jit", "grad", "vmap"):
    assert ours[key].dtype == theirs[key].dtype == np.float32
    np.testing.assert_allclose(np.asarray(ours[key]), np.asarray(theirs[key]), rtol=1e-6)


def test_unregistered_type_is_rejected():
  box = _box_type()
  b = box([1.0])
  with pytest.raises(TypeError) as refused:   # JAX's message (for a value that is no array)
    purejax.jit(lambda x: x)(b)
  assert str(refused.value) == f"Argument '{b}' of type {box} is not a valid JAX type."


def test_registered_type_is_an_array():
  box = _box_type()
  _register(purejax, box, _src_core.pytype_aval_mappings)
  got = _uses(purejax, box)
  np.testing.assert_allclose(np.asarray(got["grad"]), np.cos([1.0, -2.0, 3.0]), rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(got["jit"]), [2.0, -4.0, 6.0])


@pytest.mark.oracle
def test_registered_type_matches_jax():
  jax = oracle()
  ours_box, theirs_box = _box_type(), _box_type()
  # The registries themselves, not jax.core's deprecated names: JAX warns
  # about those once a process, which test_core_module checks.
  from jax._src import core as jax_src_core
  _register(purejax, ours_box, _src_core.pytype_aval_mappings)
  _register(jax, theirs_box, jax_src_core.pytype_aval_mappings)
  _check_against(_uses(jax, theirs_box), _uses(purejax, ours_box))


def test_reading_a_handler_gives_the_standard_conversion():
  # Whatever the key, as in JAX: a NumPy array of the canonical dtype.
  for key in (np.ndarray, int, object):
    out = xla.canonicalize_dtype_handlers[key](np.arange(3.0))
    assert isinstance(out, np.ndarray) and out.dtype == np.float32


def test_a_none_handler_leaves_values_as_they_are():
  class Sub(np.ndarray):
    pass
  xla.canonicalize_dtype_handlers[Sub] = None
  value = np.arange(3.0).view(Sub)
  np.testing.assert_array_equal(np.asarray(purejax.jit(lambda x: x + 1)(value)), [1, 2, 3])


def test_jax_core_name_is_the_registry():
  with pytest.warns(DeprecationWarning, match="pytype_aval_mappings is deprecated"):
    assert purejax.core.pytype_aval_mappings is _src_core.pytype_aval_mappings


def test_apply_primitive_runs_eagerly():
  out = xla.apply_primitive(purejax.lax.add_p, jnp.ones(2), jnp.arange(2.0))
  np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0])
