"""The public ``purejax.core`` module against JAX 0.10.2's ``jax.core``, and
the printed forms of abstract values."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import core
from purejax import errors

jax_oracle = pytest.importorskip("jax")
import jax.core as jax_core   # noqa: E402  (after the importorskip)

PUBLIC = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer",
          "Value", "ensure_compile_time_eval", "eval_context", "eval_jaxpr",
          "max_dim", "min_dim"]


def _public(module):
  return sorted(n for n in dir(module) if not n.startswith("_"))


def test_public_names_are_jax_cores():
  assert _public(core) == _public(jax_core) == sorted(PUBLIC)
  assert purejax.core is core


def test_names_are_purejax_own_objects():
  from purejax._src import core as src_core
  from purejax._src import jaxpr
  assert core.ShapedArray is src_core.ShapedArray
  assert core.Tracer is src_core.Tracer
  assert core.Trace is src_core.Trace
  assert core.eval_jaxpr is jaxpr.eval_jaxpr
  assert core.ensure_compile_time_eval is purejax.ensure_compile_time_eval


@pytest.mark.parametrize("name", ["Jaxpr", "ClosedJaxpr", "JaxprEqn", "Var", "Literal",
                                  "Primitive", "no_such_name"])
def test_names_jax_core_lacks_are_attribute_errors(name):
  with pytest.raises(AttributeError):
    getattr(jax_core, name)
  with pytest.raises(AttributeError, match=f"has no attribute '{name}'"):
    getattr(core, name)


@pytest.mark.parametrize("name", ["get_aval", "mapped_aval", "set_current_trace", "TraceTag"])
def test_removed_names_raise_jax_message(name):
  with pytest.raises(AttributeError) as theirs:
    getattr(jax_core, name)
  with pytest.raises(AttributeError) as ours:
    getattr(core, name)
  assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["DropVar", "JaxprTypeError",
                                  "InconclusiveDimensionOperation", "check_jaxpr",
                                  "pytype_aval_mappings"])
def test_deprecated_names_warn(name):
  with warnings.catch_warnings(record=True) as theirs:
    warnings.simplefilter("always")
    getattr(jax_core, name)
  with pytest.warns(DeprecationWarning) as ours:
    assert getattr(core, name) is not None
  assert str(ours[0].message) == str(theirs[0].message)


def test_abstract_value_is_shaped_arrays_base():
  assert isinstance(core.ShapedArray((2,), np.float32), core.AbstractValue)
  assert issubclass(jax_core.ShapedArray, jax_core.AbstractValue)
  assert not hasattr(core.ShapedArray((2,), np.float32), "__dict__")   # still slotted


def test_tracer_is_what_transformations_pass():
  seen = []
  purejax.jit(lambda x: seen.append(isinstance(x, core.Tracer)) or x)(1.0)
  purejax.grad(lambda x: seen.append(isinstance(x, core.Tracer)) or x)(1.0)
  assert seen == [True, True]
  assert not isinstance(jnp.ones(2), core.Tracer)


def test_eval_jaxpr_matches_jax():
  f = lambda x, y: jnp.sin(x) * y + 1
  closed = purejax.make_jaxpr(f)(1.0, 2.0)
  ours = core.eval_jaxpr(closed.jaxpr, closed.consts, 0.5, 3.0)
  theirs_closed = jax_oracle.make_jaxpr(lambda x, y: jax_oracle.numpy.sin(x) * y + 1)(1.0, 2.0)
  theirs = jax_core.eval_jaxpr(theirs_closed.jaxpr, theirs_closed.consts, 0.5, 3.0)
  assert isinstance(ours, list) and len(ours) == len(theirs) == 1
  np.testing.assert_allclose(np.asarray(ours[0]), np.asarray(theirs[0]), rtol=1e-6)


def test_eval_context_runs_eagerly_under_jit():
  values = []

  @purejax.jit
  def f(x):
    with core.eval_context():
      y = jnp.arange(3) * 2
    values.append(y)
    return x + y.sum()

  assert int(f(1)) == 7
  assert not isinstance(values[0], core.Tracer)
  assert values[0].tolist() == [0, 2, 4]


def test_max_dim_min_dim_match_jax():
  for d1, d2 in [(2, 3), (5, 1), (0, 0), (np.int64(4), 2)]:
    assert core.max_dim(d1, d2) == jax_core.max_dim(d1, d2)
    assert core.min_dim(d1, d2) == jax_core.min_dim(d1, d2)
  with pytest.raises(TypeError):
    core.max_dim(2.5, 3)
  with pytest.raises(TypeError):
    jax_core.max_dim(2.5, 3)
  with pytest.raises(errors.ConcretizationTypeError, match="core.max_dim"):
    purejax.jit(lambda x: core.max_dim(x, 3))(2)


@pytest.mark.parametrize("shape,dtype,weak", [
    ((), np.int32, True), ((2, 3), np.float32, False), ((0,), np.bool_, False),
    ((1,), np.complex64, True), ((4, 5, 6), np.uint8, False),
    ((), ml_dtypes.bfloat16, False), ((2,), np.float16, True)])
def test_shaped_array_str_and_repr_match_jax(shape, dtype, weak):
  ours = core.ShapedArray(shape, dtype, weak_type=weak)
  theirs = jax_core.ShapedArray(shape, dtype, weak_type=weak)
  assert str(ours) == str(theirs)
  assert repr(ours) == repr(theirs)


def test_weak_scalar_aval_text():
  aval = core.ShapedArray((), np.int32, weak_type=True)
  assert str(aval) == "~int32[]"
  assert repr(aval) == "ShapedArray(int32[], weak_type=True)"
