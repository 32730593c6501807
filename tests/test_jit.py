"""jit: tracing once per signature, caching, static args, staging, errors."""
from functools import partial

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax.errors import (ConcretizationTypeError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError)


def test_jit_matches_eager():
  def f(x, y):
    return jnp.sin(x) * y + jnp.sum(x)
  x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
  y = np.float32(1.5)
  np.testing.assert_allclose(jax.jit(f)(x, y), f(x, y), rtol=1e-6)


def test_traces_once_per_signature():
  traces = []

  @jax.jit
  def f(x):
    traces.append(x.shape)
    return x * 2

  f(jnp.ones(3)); f(jnp.ones(3)); f(jnp.zeros(3))
  assert traces == [(3,)]
  f(jnp.ones(4))
  assert traces == [(3,), (4,)]
  f(jnp.ones(4, dtype=jnp.int32))
  assert len(traces) == 3


def test_weak_type_is_part_of_the_signature():
  traces = []

  @jax.jit
  def f(x):
    traces.append(x.weak_type)
    return x

  f(1.0); f(2.0)
  f(jnp.float32(1.0))
  assert traces == [True, False]


def test_new_jit_object_reuses_cache():
  calls = []

  def f(x):
    calls.append(1)
    return x

  jax.jit(f)(4.0)
  jax.jit(f)(5.0)
  assert len(calls) == 1
  jax.jit(f)(jnp.array([5.0]))
  assert len(calls) == 2


def test_global_captured_at_trace_time():
  state = {"g": 0.0}

  def f(x):
    return x + state["g"]

  assert float(jax.jit(f)(4.0)) == 4.0
  state["g"] = 10.0
  assert float(jax.jit(f)(5.0)) == 5.0
  assert float(jax.jit(f)(jnp.array([4.0]))[0]) == 14.0


def test_static_argnums_and_argnames():
  traces = []

  @partial(jax.jit, static_argnums=(1,))
  def f(x, neg):
    traces.append(neg)
    return -x if neg else x

  assert int(f(1, True)) == -1
  assert int(f(2, True)) == -2
  assert int(f(2, False)) == 2
  assert traces == [True, False]

  g = jax.jit(lambda x, n: x * n, static_argnames="n")
  assert float(g(2.0, n=3)) == 6.0


def test_unhashable_static_arg():
  f = jax.jit(lambda x, y: x, static_argnums=1)
  with pytest.raises(ValueError, match="Non-hashable static arguments are not supported"):
    f(1.0, np.ones(3))


def test_pytree_args_and_results():
  @jax.jit
  def f(params, x):
    return {"out": params["w"] * x + params["b"], "pair": (x, 2 * x)}
  out = f({"w": jnp.float32(2.0), "b": jnp.float32(1.0)}, jnp.arange(3.0))
  np.testing.assert_array_equal(out["out"], [1.0, 3.0, 5.0])
  np.testing.assert_array_equal(out["pair"][1], [0.0, 2.0, 4.0])


def test_kwargs_are_traced():
  f = jax.jit(lambda x, scale=1.0: x * scale)
  assert float(f(2.0, scale=3.0)) == 6.0


def test_python_scalars_traced_weak():
  seen = []

  @jax.jit
  def f(x):
    seen.append(repr(x))
    return x

  f(1)
  assert seen == ["JitTracer(~int32[])"]
  out = f(1)
  assert out.dtype == np.int32 and out.weak_type


def test_invalid_argument_type():
  with pytest.raises(TypeError, match="is not a valid JAX type|not marked as static"):
    jax.jit(lambda x: x)("a string")


def test_tracer_bool_error_message():
  @jax.jit
  def f(x, neg):
    return -x if neg else x

  with pytest.raises(TracerBoolConversionError) as info:
    f(1, True)
  msg = str(info.value)
  assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].\n")
  assert "The error occurred while tracing the function f at " in msg
  assert "for jit. This concrete value was not available in Python because it " \
         "depends on the value of the argument neg." in msg
  assert msg.endswith("errors.html#jax.errors.TracerBoolConversionError")
  assert isinstance(info.value, TypeError)


def test_dependence_on_several_and_nested_arguments():
  @jax.jit
  def f(d, y):
    return 1 if d["a"]["b"] + y > 0 else 0

  with pytest.raises(TracerBoolConversionError,
                     match=r"depends on the values of the arguments d\['a'\]\['b'\] and y"):
    f({"a": {"b": 1.0}}, 2.0)


def test_int_float_index_array_conversion_errors():
  with pytest.raises(ConcretizationTypeError, match="The problem arose with the `int` function"):
    jax.jit(lambda x: int(x))(1.0)
  with pytest.raises(ConcretizationTypeError, match="`float` function"):
    jax.jit(lambda x: float(x))(1.0)
  with pytest.raises(TracerIntegerConversionError, match="__index__"):
    jax.jit(lambda x: range(x))(1)
  with pytest.raises(TracerArrayConversionError, match="__array__"):
    jax.jit(lambda x: np.asarray(x))(1.0)


def test_value_from_operations_on_constants():
  c = jnp.ones(3)

  @jax.jit
  def f(x):
    return jnp.ones(int(jnp.sum(c) * 2))

  with pytest.raises(ConcretizationTypeError) as info:
    f(1.0)
  msg = str(info.value)
  assert "This value became a tracer due to JAX operations on these lines:" in msg
  assert "operation a:f32[] = mul b 2.0:f32[]" in msg


def test_dynamic_shape_error():
  def example_fun(length, val):
    return jnp.ones((length,)) * val

  with pytest.raises(TypeError) as info:
    jax.jit(example_fun)(10, 4)
  msg = str(info.value)
  assert msg.startswith("Shapes must be 1D sequences of concrete values of integer type, "
                        "got (JitTracer(~int32[]),).\nIf using `jit`, try using "
                        "`static_argnums` or applying `jit` to smaller subfunctions.")
  assert "depends on the value of the argument length" in msg
  good = jax.jit(example_fun, static_argnums=(0,))
  np.testing.assert_array_equal(good(5, 4), [4.0] * 5)


def test_jit_inside_jit_stages_a_call():
  inner = jax.jit(lambda y: y * 2)
  f = lambda x: inner(x) + 1
  text = str(jax.make_jaxpr(f)(1.0))
  assert "jit[" in text and "name=<lambda>" in text
  assert float(jax.jit(f)(3.0)) == 7.0


def test_lower_as_text_is_the_jaxpr():
  f = jax.jit(lambda x: x * 2.0)
  text = f.lower(jnp.ones(3)).as_text()
  assert text == str(jax.make_jaxpr(lambda x: x * 2.0)(jnp.ones(3)))


def test_escaped_tracer_prints_and_then_errors():
  saved = []

  @jax.jit
  def f(x):
    saved.append(x)
    return x

  f(4.0)
  assert repr(saved[0]) == "JitTracer(~float32[])"
  with pytest.raises(jax.errors.UnexpectedTracerError):
    jnp.sin(saved[0])


def test_eval_shape():
  out = jax.eval_shape(lambda x: jnp.dot(x, x.T), jnp.ones((3, 4)))
  assert out.shape == (3, 3) and out.dtype == np.float32


def test_jit_of_function_returning_constants_and_inputs():
  f = jax.jit(lambda x: (x, 1.0, jnp.zeros(2)))
  a, b, c = f(jnp.int32(3))
  assert int(a) == 3 and float(b) == 1.0 and c.shape == (2,)
  assert b.weak_type


def test_pure_internal_state_loop():
  def f(x):
    state = dict(even=0, odd=0)
    for i in range(10):
      state["even" if i % 2 == 0 else "odd"] += x
    return state["even"] + state["odd"]
  assert float(jax.jit(f)(5.0)) == 50.0


def test_jit_method_decorator():
  class Model:
    def __init__(self, w):
      self.w = w

    @partial(jax.jit, static_argnums=0)
    def apply(self, x):
      return x * self.w

    def __hash__(self):
      return hash(self.w)

    def __eq__(self, other):
      return self.w == other.w

  assert float(Model(3.0).apply(2.0)) == 6.0


# -- against real JAX ---------------------------------------------------------

JAXPR_CASES = [
    ("dot", lambda x, y: jnp.dot(x + 1, y + 1), lambda: (np.ones((3, 4), np.float32),
                                                        np.ones(4, np.float32))),
    ("const", lambda x: x + jnp.arange(3.0), lambda: (1.0,)),
    ("nested", lambda x: jax.jit(lambda y: y * 2)(x) + 1, lambda: (1.0,)),
    ("no_eqns", lambda x, y: (x, 1.0, y), lambda: (1, 2.0)),
    ("unary", lambda x: jnp.exp(x) ** 2 + x ** 3.0, lambda: (np.ones(5, np.float32),)),
    ("reduce", lambda x: x.reshape(2, 1).T.sum(1, keepdims=True), lambda: (np.ones(2, np.float32),)),
    ("slices", lambda x: (x[0], x[1:], x[::2]), lambda: (np.ones(5, np.float32),)),
    ("shared_call", lambda x: jnp.where(x > 0, x, 0.) + jnp.where(x < 0, x, 1.),
     lambda: (np.ones(3, np.float32),)),
    ("distinct_calls", lambda x: jnp.where(x > 0, x, 0.) + jnp.where(x < 0, x * 2, x),
     lambda: (np.ones(3, np.float32),)),
    ("long_call", lambda x: jnp.mean(x) + jnp.var(x), lambda: (np.ones((2, 2), np.float32),)),
    ("unused_output", lambda x: (jnp.sin(x), x * 2)[1], lambda: (1.0,)),
    ("unused_call_output", lambda x: jax.jit(lambda y: (y * 2, y + 1))(x)[0], lambda: (1.0,)),
    ("grad", lambda x: jax.grad(lambda y: jnp.sin(y) * y)(x), lambda: (1.0,)),
    ("selu", lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67),
     lambda: (np.arange(5.0, dtype=np.float32),)),
]


@pytest.mark.parametrize("name, f, args", JAXPR_CASES, ids=[c[0] for c in JAXPR_CASES])
def test_make_jaxpr_text_matches_jax(name, f, args):
  real = pytest.importorskip("jax")
  import jax.numpy as real_jnp
  ours = str(jax.make_jaxpr(f)(*args()))
  # Run the same code against real JAX by swapping the modules it closes over.
  g = _with_modules(f, real, real_jnp)
  theirs = str(real.make_jaxpr(g)(*args()))
  assert ours == theirs


def _with_modules(f, real_jax, real_jnp):
  import types
  globs = dict(f.__globals__, jax=real_jax, jnp=real_jnp)
  return types.FunctionType(f.__code__, globs, f.__name__, f.__defaults__, f.__closure__)


def test_inline_jit_stages_no_call():
  f = jax.jit(lambda x: jnp.sin(x) * 2, inline=True)
  text = str(jax.make_jaxpr(lambda x: f(x) + 1)(1.0))
  assert "jit" not in text and "sin" in text
  assert "jit[" in str(jax.make_jaxpr(lambda x: jax.jit(jnp.sin)(x) + 1)(1.0))
  assert float(f(1.0)) == pytest.approx(2 * np.sin(1.0))
