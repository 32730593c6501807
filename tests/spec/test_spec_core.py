"""The spec documents' examples that need the core language (jit, make_jaxpr,
tracer errors, static args, immutability, dtypes, NumPy interop, reprs).

Each test is a cell of ../../../shared/spec/*.txt run with purejax; where the
documents show an older JAX generation (DeviceArray, Traced<...>), the test
checks current JAX's output, as the spec README says.
"""
from functools import partial

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import jit, lax, make_jaxpr, tree_util


# -- 000 / 003 / 004: pure functions ------------------------------------------

def test_impure_print_side_effect(capsys):
  def impure_print_side_effect(x):
    print("Executing function")
    return x

  print("First call: ", jit(impure_print_side_effect)(4.))
  print("Second call: ", jit(impure_print_side_effect)(5.))
  print("Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.])))
  assert capsys.readouterr().out == (
      "Executing function\nFirst call:  4.0\nSecond call:  5.0\n"
      "Executing function\nThird call, different type:  [5.]\n")


def test_impure_uses_globals(capsys):
  namespace = {"g": 0., "jnp": jnp}
  exec("def impure_uses_globals(x):\n  return x + g\n", namespace)
  f = namespace["impure_uses_globals"]
  print("First call: ", jit(f)(4.))
  namespace["g"] = 10.
  print("Second call: ", jit(f)(5.))
  print("Third call, different type: ", jit(f)(jnp.array([4.])))
  assert capsys.readouterr().out == (
      "First call:  4.0\nSecond call:  5.0\nThird call, different type:  [14.]\n")


def test_impure_saves_global(capsys):
  saved = {}

  def impure_saves_global(x):
    saved["g"] = x
    return x

  print("First call: ", jit(impure_saves_global)(4.))
  print("Saved global: ", saved["g"])
  assert capsys.readouterr().out == "First call:  4.0\nSaved global:  JitTracer(~float32[])\n"


def test_pure_uses_internal_state():
  def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
      state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']

  assert str(jit(pure_uses_internal_state)(5.)) == "50.0"
  assert str(jit(pure_uses_internal_state)(2.)) == "20.0"


# -- in-place updates and .at ---------------------------------------------------

def test_in_place_update_error():
  jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
  with pytest.raises(TypeError) as info:
    jax_array[1, :] = 1.0
  assert str(info.value) == (
      "JAX arrays are immutable and do not support in-place item assignment. "
      "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
      "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def test_at_set_and_add():
  jax_array = jnp.zeros((3, 3))
  updated = jax_array.at[1, :].set(1.0)
  assert str(updated) == "[[0. 0. 0.]\n [1. 1. 1.]\n [0. 0. 0.]]"
  assert str(jax_array) == "[[0. 0. 0.]\n [0. 0. 0.]\n [0. 0. 0.]]"
  new = jnp.ones((5, 6)).at[::2, 3:].add(7.)
  assert str(new) == ("[[1. 1. 1. 8. 8. 8.]\n [1. 1. 1. 1. 1. 1.]\n [1. 1. 1. 8. 8. 8.]\n"
                      " [1. 1. 1. 1. 1. 1.]\n [1. 1. 1. 8. 8. 8.]]")


def test_at_examples_from_impatient():
  x = jnp.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
  updated = x.at[0, 0].set(3.0)
  assert str(x) == "[[1. 2. 3. 4.]\n [5. 6. 7. 8.]]"
  assert str(updated) == "[[3. 2. 3. 4.]\n [5. 6. 7. 8.]]"


def test_at_update_kinds():
  array2 = jnp.arange(5, dtype=jnp.int32)
  assert str(array2.at[4].set(10)) == "[ 0  1  2  3 10]"
  assert str(array2.at[4].add(6)) == "[ 0  1  2  3 10]"
  assert str(array2.at[4].max(20)) == "[ 0  1  2  3 20]"
  assert str(array2.at[4].min(-1)) == "[ 0  1  2  3 -1]"


def test_deprecated_index_ops():
  from purejax.ops import index, index_add, index_update
  with pytest.warns(DeprecationWarning):
    new = index_update(jnp.zeros((3, 3)), index[1, :], 1.)
  np.testing.assert_array_equal(new, [[0, 0, 0], [1, 1, 1], [0, 0, 0]])
  with pytest.warns(DeprecationWarning):
    new = index_add(jnp.ones((5, 6)), index[::2, 3:], 7.)
  assert float(new[0, 3]) == 8.0 and float(new[1, 3]) == 1.0


# -- out-of-bounds indexing -------------------------------------------------------

def test_out_of_bounds_gather_clamps():
  assert repr(jnp.arange(10)[11]) == "Array(9, dtype=int32)"
  assert repr(jnp.arange(10.0).at[11].get()) == "Array(9., dtype=float32)"
  assert repr(jnp.arange(10.0).at[11].get(mode='fill', fill_value=jnp.nan)) == \
      "Array(nan, dtype=float32)"


# -- control flow with jit ------------------------------------------------------

def test_python_loops_unroll_under_jit():
  @jit
  def f(x):
    for i in range(3):
      x = 2 * x
    return x

  assert str(f(3)) == "24"

  @jit
  def g(x):
    y = 0.
    for i in range(x.shape[0]):
      y = y + x[i]
    return y

  assert str(g(jnp.array([1., 2., 3.]))) == "6.0"


def test_if_on_traced_value_fails_then_static_argnums_works():
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  with pytest.raises(jax.errors.TracerBoolConversionError,
                     match="Attempted boolean conversion of traced array with shape bool"):
    jit(f)(2)
  assert str(jit(f, static_argnums=(0,))(2.)) == "12.0"


def test_static_loop_bound():
  def f(x, n):
    y = 0.
    for i in range(n):
      y = y + x[i]
    return y

  f = jit(f, static_argnums=(1,))
  assert repr(f(jnp.array([2., 3., 4.]), 2)) == "Array(5., dtype=float32)"


def test_shape_depending_on_value(capsys):
  def example_fun(length, val):
    return jnp.ones((length,)) * val

  print(example_fun(5, 4))
  with pytest.raises(TypeError, match="Shapes must be 1D sequences of concrete values"):
    jit(example_fun)(10, 4)
  good_example_jit = jit(example_fun, static_argnums=(0,))
  print(good_example_jit(10, 4))
  print(good_example_jit(5, 4))
  assert capsys.readouterr().out == (
      "[4. 4. 4. 4. 4.]\n[4. 4. 4. 4. 4. 4. 4. 4. 4. 4.]\n[4. 4. 4. 4. 4.]\n")


def test_print_inside_jit(capsys):
  @jit
  def f(x):
    print(x)
    y = 2 * x
    print(y)
    return y

  out = f(2)
  assert repr(out) == "Array(4, dtype=int32, weak_type=True)"
  assert capsys.readouterr().out == "JitTracer(~int32[])\nJitTracer(~int32[])\n"


# -- 003: jit internals ---------------------------------------------------------

def test_jit_tracing_prints(capsys):
  @jit
  def f(x, y):
    print("Running f():")
    print(f"x = {x}")
    print(f"y = {y}")
    result = jnp.dot(x + 1, y + 1)
    print(f"Result: x.y = {result}")
    return result

  x, y = np.random.randn(3, 4), np.random.randn(4)
  out = f(x, y)
  np.testing.assert_allclose(out, np.dot(x + 1, y + 1), rtol=1e-5)
  assert capsys.readouterr().out == (
      "Running f():\nx = JitTracer(float32[3,4])\ny = JitTracer(float32[4])\n"
      "Result: x.y = JitTracer(float32[3])\n")
  f(np.random.randn(3, 4), np.random.randn(4))
  assert capsys.readouterr().out == ""
  f(np.random.randn(4, 5), np.random.randn(5))
  assert "x = JitTracer(float32[4,5])" in capsys.readouterr().out


def test_make_jaxpr_dot():
  def f(x, y):
    return jnp.dot(x + 1, y + 1)

  x, y = np.random.randn(3, 4), np.random.randn(4)
  assert str(make_jaxpr(f)(x, y)) == (
      "{ lambda ; a:f32[3,4] b:f32[4]. let\n"
      "    c:f32[3,4] = add a 1.0:f32[]\n"
      "    d:f32[4] = add b 1.0:f32[]\n"
      "    e:f32[3] = dot_general[\n"
      "      dimension_numbers=(([1], [0]), ([], []))\n"
      "      preferred_element_type=float32\n"
      "    ] c d\n"
      "  in (e,) }")


def test_static_argnums_print(capsys):
  @partial(jit, static_argnums=(1,))
  def f(x, neg):
    print(x)
    return -x if neg else x

  print(f(1, True)); print(f(2, True)); print(f(2, False)); print(f(3, False))
  assert capsys.readouterr().out == (
      "JitTracer(~int32[])\n-1\n-2\nJitTracer(~int32[])\n2\n3\n")


def test_traced_shape_error_and_numpy_workaround(capsys):
  @jit
  def f(x):
    print(x)
    print(x.shape)
    print(jnp.array(x.shape).prod())
    return x.reshape(jnp.array(x.shape).prod())

  x = jnp.ones((2, 3))
  with pytest.raises(TypeError) as info:
    f(x)
  msg = str(info.value)
  assert msg.startswith("Shapes must be 1D sequences of concrete values of integer type, "
                        "got [JitTracer(int32[])].")
  assert "operation a:i32[] = reduce_prod[axes=(0,)] b" in msg
  assert capsys.readouterr().out == "JitTracer(float32[2,3])\n(2, 3)\nJitTracer(int32[])\n"

  @jit
  def g(x):
    return x.reshape((np.prod(x.shape),))

  assert repr(g(x)) == "Array([1., 1., 1., 1., 1., 1.], dtype=float32)"


def test_lax_is_stricter(capsys):
  print(jnp.add(1, 1.0))
  assert capsys.readouterr().out == "2.0\n"
  with pytest.raises(TypeError) as info:
    lax.add(1, 1.0)
  assert str(info.value) == (
      "lax.add requires arguments to have the same dtypes, got int32, float32. "
      "(Tip: jnp.add is a similar function that does automatic type promotion on inputs).")


def test_boolean_mask_needs_concrete_values():
  def get_negatives(x):
    return x[x < 0]

  x = jnp.array([-0.5, 1.0, -2.0, 3.0])
  np.testing.assert_array_equal(get_negatives(x), [-0.5, -2.0])
  with pytest.raises(jax.errors.NonConcreteBooleanIndexError) as info:
    jit(get_negatives)(x)
  assert str(info.value).startswith("Array boolean indices must be concrete; got bool[4]")


# -- 001 / 002: arrays, NumPy interop, promotion ----------------------------------

def test_array_reprs():
  assert repr(jnp.ones((4, 4))) == (
      "Array([[1., 1., 1., 1.],\n       [1., 1., 1., 1.],\n"
      "       [1., 1., 1., 1.],\n       [1., 1., 1., 1.]], dtype=float32)")
  n = jnp.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
  assert repr(jnp.dot(n, jnp.ones((4, 4))).block_until_ready()) == (
      "Array([[10., 10., 10., 10.],\n       [26., 26., 26., 26.]], dtype=float32)")


def test_numpy_interop():
  x = np.random.normal(size=(4, 4))
  out = jnp.dot(x, jnp.ones((4, 4)))
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, np.dot(x, np.ones((4, 4))), rtol=1e-5)
  put = jax.device_put(x)
  assert isinstance(put, jax.Array) and put.dtype == np.float32
  back = np.array(jnp.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]))
  assert repr(back) == "array([[1., 2., 3., 4.],\n       [5., 6., 7., 8.]], dtype=float32)"


def test_numpy_vs_jax_numpy(capsys):
  array_numpy = np.arange(10, dtype=np.int32)
  array_jax = jnp.arange(10, dtype=jnp.int32)
  print("Array created using JAX: ", array_jax)
  print(f"Maximum element in DeviceArray: {array_jax.max()}")
  assert capsys.readouterr().out == (
      "Array created using JAX:  [0 1 2 3 4 5 6 7 8 9]\nMaximum element in DeviceArray: 9\n")
  array_numpy = array_numpy.reshape(-1, 1)
  array_jax = array_jax.reshape(-1, 1)
  assert array_jax.shape == (10, 1)
  np.testing.assert_array_equal(jnp.abs(array_jax - array_jax.T),
                                np.abs(array_numpy - array_numpy.T))
  assert bool(jnp.all(np.abs(array_numpy - array_numpy.T) == jnp.abs(array_jax - array_jax.T)))
  np.testing.assert_array_equal(jnp.dot(array_jax, array_jax.T),
                                np.dot(array_numpy, array_numpy.T))


def test_immutability_item_assignment():
  array2 = jnp.arange(5, dtype=jnp.int32)
  with pytest.raises(TypeError, match="JAX arrays are immutable"):
    array2[4] = 10


def test_type_promotion(capsys):
  print((jnp.int8(32) + 4).dtype)
  array2 = jnp.array([1, 3], dtype=jnp.int32)
  print((array2 + 5.0).dtype)
  assert capsys.readouterr().out == "int8\nfloat32\n"


def test_tree_map_examples():
  t = [1, {"k1": 2, "k2": (3, 4)}, 5]
  assert tree_util.tree_map(lambda x: x * x, t) == [1, {'k1': 4, 'k2': (9, 16)}, 25]
  t2 = tree_util.tree_map(lambda x: x * x, t)
  assert tree_util.tree_map(lambda x, y: x + y, t, t2) == [2, {'k1': 6, 'k2': (12, 20)}, 30]
  with pytest.warns(DeprecationWarning):
    assert jax.tree_map(lambda x: x + 1, [1, 2]) == [2, 3]


# -- 004: sharp bits -----------------------------------------------------------

def test_non_array_inputs():
  with pytest.raises(TypeError) as info:
    jnp.sum([1, 2, 3])
  assert str(info.value) == "sum requires ndarray or scalar arguments, got <class 'list'> at position 0."

  def permissive_sum(x):
    return jnp.sum(jnp.array(x))

  x = list(range(10))
  assert repr(permissive_sum(x)) == "Array(45, dtype=int32)"
  text = str(make_jaxpr(permissive_sum)(x))
  assert text.startswith("{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] "
                         "h:i32[] i:i32[]\n    j:i32[]. let\n")
  assert "be:i32[10] = concatenate[dimension=0]" in text
  assert text.endswith("reduce_sum[axes=(0,) out_sharding=None] be\n  in (bf,) }")
  assert repr(jnp.sum(jnp.array(x))) == "Array(45, dtype=int32)"


def test_dynamic_shapes_nansum(capsys):
  def nansum(x):
    mask = ~jnp.isnan(x)
    x_without_nans = x[mask]
    return x_without_nans.sum()

  x = jnp.array([1, 2, jnp.nan, 3, 4])
  print(nansum(x))
  with pytest.raises(jax.errors.NonConcreteBooleanIndexError,
                     match=r"Array boolean indices must be concrete; got bool\[5\]"):
    jax.jit(nansum)(x)

  @jax.jit
  def nansum_2(x):
    mask = ~jnp.isnan(x)
    return jnp.where(mask, x, 0).sum()

  print(nansum_2(x))
  assert capsys.readouterr().out == "10.0\n10.0\n"


def test_nan_results():
  assert repr(jnp.divide(0., 0.)) == "Array(nan, dtype=float32, weak_type=True)"

  @jit
  def f(x, y):
    a = x * y
    b = (x + y) / (x - y)
    c = a + 2
    return a + b * c

  out = f(jnp.array([2., 0.]), jnp.array([3., 0.]))
  assert repr(out) == "Array([-34.,  nan], dtype=float32)"


def test_double_precision_warning():
  with pytest.warns(UserWarning, match="Explicitly requested dtype .*float64.* is not "
                    "available, and will be truncated to dtype float32"):
    x = jnp.zeros((1000,), dtype=jnp.float64)
  assert x.dtype == np.float32
  with jax.enable_x64(True):
    assert jnp.zeros((3,), dtype=jnp.float64).dtype == np.float64


def test_unsafe_cast():
  assert repr(jnp.arange(254.0, 258.0).astype('uint8')) == \
      "Array([254, 255, 255, 255], dtype=uint8)"
