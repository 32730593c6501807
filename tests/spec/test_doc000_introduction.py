"""Acceptance tests for /work/shared/spec/000_61c055f05a256cbc.txt,
"Introduction to JAX": pure functions, in-place updates, out-of-bounds
indexing, random numbers, control flow under jit and grad, structured control
flow primitives, NaN debugging and double precision.

One test (or a few) per code cell, in document order.  The document was
written for an old JAX (``DeviceArray``, ``Traced<ShapedArray(...)>``,
``jax.ops.index_update``, classic threefry); where current JAX 0.10.2
differs, the tests check current JAX's behaviour, plus purejax's documented
compatibility path (DESIGN.md: old APIs still accepted with a
DeprecationWarning; classic threefry through ``jax_threefry_partitionable``).

Cells not turned into tests and why:
- In [1]: only the matplotlib/rcParams lines (plotting setup, outside JAX);
  its JAX imports are tested.
- The Python-equivalent sketches of ``cond``/``while_loop``/``fori_loop``
  are pseudo-code; they are run once against the lax primitives anyway.
- The NaN section's ``%debug`` post-mortem and ``parse_flags_with_absl``
  command-line flags (IPython/absl, outside JAX).
"""
import importlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import grad, jit, lax, make_jaxpr, random
from purejax._src.config import config

# The in-place update texts the document prints.
ZEROS_3x3 = "[[0. 0. 0.]\n [0. 0. 0.]\n [0. 0. 0.]]"
ROW1_3x3 = "[[0. 0. 0.]\n [1. 1. 1.]\n [0. 0. 0.]]"
ONES_5x6 = "\n".join(["[[1. 1. 1. 1. 1. 1.]"] + [" [1. 1. 1. 1. 1. 1.]"] * 3
                     + [" [1. 1. 1. 1. 1. 1.]]"])
ADDED_5x6 = ("[[1. 1. 1. 8. 8. 8.]\n [1. 1. 1. 1. 1. 1.]\n [1. 1. 1. 8. 8. 8.]\n"
             " [1. 1. 1. 1. 1. 1.]\n [1. 1. 1. 8. 8. 8.]]")


@pytest.fixture
def classic():
  """The document's (old default) threefry mode."""
  with config.override("jax_threefry_partitionable", False):
    yield


@pytest.fixture
def debug_nans():
  with config.override("jax_debug_nans", True):
    yield


def _f_python_if(x):
  if x < 3:
    return 3. * x ** 2
  else:
    return -4 * x


# -- In [1]: imports --

def test_imports():
  """In [1]: the JAX imports (matplotlib setup is outside JAX)."""
  from purejax import grad as grad_, jit as jit_, lax as lax_, random as random_
  assert callable(grad_) and callable(jit_)
  assert grad_ is jax.grad and jit_ is jax.jit
  assert lax_ is jax.lax and random_ is jax.random
  assert callable(lax_.cond) and callable(random_.PRNGKey)


# -- § "Pure functions" --

def test_impure_print_side_effect(capsys):
  """§ "Pure functions", In [2]: the print runs only when jit traces."""
  traces = []

  def impure_print_side_effect(x):
    traces.append(x)
    print("Executing function")
    return x

  print("First call: ", jit(impure_print_side_effect)(4.))
  print("Second call: ", jit(impure_print_side_effect)(5.))
  print("Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.])))
  assert capsys.readouterr().out == (
      "Executing function\nFirst call:  4.0\nSecond call:  5.0\n"
      "Executing function\nThird call, different type:  [5.]\n")
  # New jit wrappers of the same function share the trace cache.
  assert len(traces) == 2


g = 0.


def test_impure_uses_globals(capsys):
  """§ "Pure functions", In [3]: the cached trace keeps the old global."""
  global g
  g = 0.

  def impure_uses_globals(x):
    return x + g

  try:
    print("First call: ", jit(impure_uses_globals)(4.))
    g = 10.
    print("Second call: ", jit(impure_uses_globals)(5.))
    print("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))
  finally:
    g = 0.
  assert capsys.readouterr().out == (
      "First call:  4.0\nSecond call:  5.0\nThird call, different type:  [14.]\n")


def test_impure_saves_global(capsys):
  """§ "Pure functions", In [4]: the saved global is a tracer."""
  global g

  def impure_saves_global(x):
    global g
    g = x
    return x

  try:
    print("First call: ", jit(impure_saves_global)(4.))
    print("Saved global: ", g)
    saved = g
  finally:
    g = 0.
  out = capsys.readouterr().out
  # The document prints the old text
  # "Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace(level=0/1)>";
  # JAX 0.10.2 prints the same abstract value (weakly typed float32 scalar)
  # as "JitTracer(~float32[])".
  assert out == "First call:  4.0\nSaved global:  JitTracer(~float32[])\n"
  assert saved.shape == () and saved.dtype == np.float32 and saved.weak_type


def test_pure_uses_internal_state():
  """§ "Pure functions", In [5]: internal state is fine."""
  def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
      state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']

  assert str(jit(pure_uses_internal_state)(5.)) == "50.0"


# -- § "Pure functions": the iterator code block --

def test_iterators_in_fori_loop(capsys):
  """§ "Pure functions" (iterator block): fori_loop with an iterator traces
  ``next`` once, so the result is the unexpected 0."""
  array = jnp.arange(10)
  print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))  # expected result 45
  iterator = iter(range(10))
  print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))  # unexpected result 0
  assert capsys.readouterr().out == "45\n0\n"


def _func11(arr, extra):
  ones = jnp.ones(arr.shape)

  def body(carry, aelems):
    ae1, ae2 = aelems
    return (carry + ae1 * ae2 + extra, carry)

  return lax.scan(body, 0., (arr, ones))


def test_iterators_in_scan():
  """§ "Pure functions" (iterator block): make_jaxpr of a scan; an iterator
  argument throws (the document's commented-out line)."""
  text = str(make_jaxpr(_func11)(jnp.arange(16), 5.))
  assert text.startswith("{ lambda ; a:i32[16] b:f32[]. let\n"
                         "    c:f32[16] = broadcast_in_dim 1.0:f32[]\n")
  assert "d:f32[] e:f32[16] = scan[" in text
  assert "length=16" in text and "num_carry=1" in text and "num_consts=1" in text
  carry, ys = _func11(jnp.arange(16), 5.)
  assert float(carry) == sum(range(16)) + 16 * 5.
  np.testing.assert_array_equal(ys[:4], [0., 5., 11., 18.])
  with pytest.raises(TypeError, match=r"Error interpreting argument to <function _func11 "
                     r"at 0x\w+> as an abstract array. The problematic value is of type "
                     r"<class 'range_iterator'>"):
    make_jaxpr(_func11)(iter(range(16)), 5.)


def test_iterators_in_cond():
  """§ "Pure functions" (iterator block): cond on an array; on an iterator
  operand it throws (the document's commented-out line)."""
  array_operand = jnp.array([0.])
  assert repr(lax.cond(True, lambda x: x + 1, lambda x: x - 1, array_operand)) == \
      "Array([1.], dtype=float32)"
  iter_operand = iter(range(10))
  with pytest.raises(TypeError, match="of type '<class 'range_iterator'>' is not a valid JAX type"):
    lax.cond(True, lambda x: next(x) + 1, lambda x: next(x) - 1, iter_operand)


# -- § "In-Place Updates" --

def test_numpy_in_place_update(capsys):
  """§ "In-Place Updates", In [6]: NumPy mutates in place."""
  numpy_array = np.zeros((3, 3), dtype=np.float32)
  print("original array:")
  print(numpy_array)
  numpy_array[1, :] = 1.0
  print("updated array:")
  print(numpy_array)
  assert capsys.readouterr().out == (
      f"original array:\n{ZEROS_3x3}\nupdated array:\n{ROW1_3x3}\n")


def test_jax_in_place_update_error(capsys):
  """§ "In-Place Updates", In [7]: item assignment raises."""
  jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
  with pytest.raises(TypeError) as info:
    jax_array[1, :] = 1.0
  # The document's old text ("'<class '...DeviceArray'>' object does not
  # support item assignment. JAX arrays are immutable; perhaps you want
  # jax.ops.index_update ...") became this in current JAX: same class
  # (TypeError) and substance (immutable; use the update API).
  assert str(info.value) == (
      "JAX arrays are immutable and do not support in-place item assignment. "
      "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
      "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")
  assert str(jax_array) == ZEROS_3x3


def test_index_update(capsys):
  """§ "In-Place Updates", In [9]/[10]: index_update leaves the old array."""
  # Current JAX removed jax.ops.index*; the replacement is x.at[idx].set.
  jax_array = jnp.zeros((3, 3))
  print("original array:")
  print(jax_array)
  new_jax_array = jax_array.at[1, :].set(1.)
  print("old array unchanged:")
  print(jax_array)
  print("new array:")
  print(new_jax_array)
  assert capsys.readouterr().out == (
      f"original array:\n{ZEROS_3x3}\nold array unchanged:\n{ZEROS_3x3}\n"
      f"new array:\n{ROW1_3x3}\n")


def test_index_update_compat():
  """§ "In-Place Updates", In [9]/[10]: the old API, as written, through
  purejax's compatibility path (DeprecationWarning)."""
  from purejax.ops import index, index_update
  jax_array = jnp.zeros((3, 3))
  with pytest.warns(DeprecationWarning, match=r"jax.ops.index_update is deprecated: "
                    r"use x.at\[idx\].set\(y\) instead"):
    new_jax_array = index_update(jax_array, index[1, :], 1.)
  assert str(jax_array) == ZEROS_3x3
  assert str(new_jax_array) == ROW1_3x3


def test_index_add(capsys):
  """§ "In-Place Updates", In [11]: index_add, i.e. x.at[idx].add."""
  print("original array:")
  jax_array = jnp.ones((5, 6))
  print(jax_array)
  new_jax_array = jax_array.at[::2, 3:].add(7.)
  print("new array post-addition:")
  print(new_jax_array)
  assert capsys.readouterr().out == (
      f"original array:\n{ONES_5x6}\nnew array post-addition:\n{ADDED_5x6}\n")


def test_index_add_compat():
  """§ "In-Place Updates", In [11]: the old index_add (compatibility path)."""
  from purejax.ops import index, index_add
  with pytest.warns(DeprecationWarning, match="jax.ops.index_add is deprecated"):
    new_jax_array = index_add(jnp.ones((5, 6)), index[::2, 3:], 7.)
  assert str(new_jax_array) == ADDED_5x6


@pytest.mark.oracle
def test_index_ops_removed_in_current_jax():
  """§ "In-Place Updates", In [9]: current JAX no longer has jax.ops.index*
  (purejax keeps them, deprecated, per DESIGN.md)."""
  jax_oracle = pytest.importorskip("jax")
  assert not hasattr(importlib.import_module("jax.ops"), "index_update")
  with pytest.raises(ImportError):
    exec("from jax.ops import index, index_add, index_update", {})
  out = jax_oracle.numpy.ones((5, 6)).at[::2, 3:].add(7.)
  assert str(out) == ADDED_5x6


# -- § "Out-of-Bounds Indexing" --

def test_numpy_out_of_bounds_raises():
  """§ "Out-of-Bounds Indexing", In [12]: NumPy raises."""
  with pytest.raises(IndexError) as info:
    np.arange(10)[11]
  assert str(info.value) == "index 11 is out of bounds for axis 0 with size 10"


def test_jax_out_of_bounds_clamps():
  """§ "Out-of-Bounds Indexing", In [13]: the index is clamped."""
  out = jnp.arange(10)[11]
  # The document shows the old repr DeviceArray(9, dtype=int32).
  assert repr(out) == "Array(9, dtype=int32)"
  assert repr(jit(lambda x, i: x[i])(jnp.arange(10), 11)) == "Array(9, dtype=int32)"


def test_nanargmin_all_nan_slice():
  """§ "Out-of-Bounds Indexing" (prose): nanargmin/nanargmax give -1 for an
  all-NaN slice where NumPy raises."""
  assert repr(jnp.nanargmin(jnp.array([np.nan, np.nan]))) == "Array(-1, dtype=int32)"
  x = jnp.array([[np.nan, 1.], [np.nan, np.nan]])
  assert repr(jnp.nanargmax(x, axis=1)) == "Array([ 1, -1], dtype=int32)"
  with pytest.raises(ValueError, match="All-NaN slice encountered"):
    np.nanargmin(np.array([np.nan, np.nan]))


# -- § "Random Numbers" --

def test_numpy_stateful_random():
  """§ "Random Numbers", In [14]: unseeded NumPy draws (the document's
  values are not reproducible: the state is unseeded)."""
  draws = [np.random.random() for _ in range(3)]
  assert all(isinstance(d, float) and 0. <= d < 1. for d in draws)
  assert len(set(draws)) == 3


def test_numpy_mersenne_twister_state():
  """§ "Random Numbers", In [17]/[18]: the MT19937 state in the comments."""
  saved = np.random.get_state()
  try:
    np.random.seed(0)
    name, keys, pos, has_gauss, cached = np.random.get_state()
    assert (name, pos, has_gauss, cached) == ('MT19937', 624, 0, 0.0)
    assert keys.dtype == np.uint32 and keys.shape == (624,)
    assert keys[:8].tolist() == [0, 1, 1812433255, 1900727105, 1208447044,
                                 2481403966, 4042607538, 337614300]
    assert keys[-2:].tolist() == [3048484911, 1796872496]
    _ = np.random.uniform()
    _, keys, pos, _, _ = np.random.get_state()
    assert pos == 2
    assert keys[:3].tolist() == [2443250962, 1093594115, 1878467924]
    assert keys[-2:].tolist() == [2648828502, 1678096082]
    for i in range(311):
      _ = np.random.uniform()
    _, keys, pos, _, _ = np.random.get_state()
    assert pos == 624 and keys[:3].tolist() == [2443250962, 1093594115, 1878467924]
    _ = np.random.uniform()
    _, keys, pos, _, _ = np.random.get_state()
    assert pos == 2
    assert keys[:3].tolist() == [1499117434, 2949980591, 2242547484]
    assert keys[-2:].tolist() == [4162027047, 3277342478]
  finally:
    np.random.set_state(saved)


def test_prng_key():
  """§ "Random Numbers", In [19]: a key is two uint32 (both threefry modes)."""
  key = random.PRNGKey(0)
  # The document shows the old repr DeviceArray([0, 0], dtype=uint32).
  assert repr(key) == "Array([0, 0], dtype=uint32)"
  with config.override("jax_threefry_partitionable", False):
    assert repr(random.PRNGKey(0)) == "Array([0, 0], dtype=uint32)"


# Documented normals vs. JAX 0.10.2 differ by ~1e-7 (different XLA erf_inv
# rounding, e.g. -0.20584235 vs -0.20584226): compare to float32 tolerance.
RTOL = 1e-6


def test_reusing_a_key(classic, capsys):
  """§ "Random Numbers", In [20]: the same key gives the same number."""
  key = random.PRNGKey(0)
  a = random.normal(key, shape=(1,))
  print(key)
  b = random.normal(key, shape=(1,))
  print(key)
  assert capsys.readouterr().out == "[0 0]\n[0 0]\n"
  np.testing.assert_allclose(a, [-0.20584235], rtol=RTOL)
  np.testing.assert_array_equal(a, b)
  assert a.shape == (1,) and a.dtype == np.float32


def _split_cell(key):
  print("old key", key)
  key, subkey = random.split(key)
  normal_pseudorandom = random.normal(subkey, shape=(1,))
  print("    \\---SPLIT --> new key   ", key)
  print("             \\--> new subkey", subkey, "--> normal", normal_pseudorandom)
  return key, normal_pseudorandom


def test_split_once(classic, capsys):
  """§ "Random Numbers", In [21]: split gives the documented keys."""
  _, normal = _split_cell(random.PRNGKey(0))
  out = capsys.readouterr().out.splitlines()
  assert out[:2] == ["old key [0 0]", "    \\---SPLIT --> new key    [4146024105  967050713]"]
  assert out[2].startswith("             \\--> new subkey [2718843009 1272950319] --> normal [")
  np.testing.assert_allclose(normal, [-1.2515389], rtol=RTOL)


def test_split_again(classic, capsys):
  """§ "Random Numbers", In [22]: the second split."""
  key, _ = _split_cell(random.PRNGKey(0))
  capsys.readouterr()
  _, normal = _split_cell(key)
  out = capsys.readouterr().out.splitlines()
  assert out[:2] == ["old key [4146024105  967050713]",
                     "    \\---SPLIT --> new key    [2384771982 3928867769]"]
  assert out[2].startswith("             \\--> new subkey [1278412471 2182328957] --> normal [")
  np.testing.assert_allclose(normal, [-0.58665067], rtol=RTOL)


def test_split_into_several_subkeys(classic):
  """§ "Random Numbers", In [23]: split(key, 4) after the two splits above."""
  key = random.split(random.split(random.PRNGKey(0))[0])[0]
  key, *subkeys = random.split(key, 4)
  assert len(subkeys) == 3
  normals = [random.normal(subkey, shape=(1,)) for subkey in subkeys]
  np.testing.assert_allclose(np.concatenate(normals), [-0.37533444, 0.9864503, 0.1455319],
                             rtol=RTOL)


def test_random_cells_in_current_default_mode():
  """§ "Random Numbers", In [20]-[23] in current JAX's default mode
  (jax_threefry_partitionable=True): other keys and numbers, as JAX 0.10.2
  prints them (the document's values need the classic mode above)."""
  assert config.jax_threefry_partitionable is True
  key = random.PRNGKey(0)
  np.testing.assert_allclose(random.normal(key, shape=(1,)), [1.6226422], rtol=RTOL)
  key, subkey = random.split(key)
  assert (key.tolist(), subkey.tolist()) == ([1797259609, 2579123966], [928981903, 3453687069])
  key, subkey = random.split(key)
  assert (key.tolist(), subkey.tolist()) == ([4165894930, 804218099], [1353695780, 2116000888])
  np.testing.assert_allclose(random.normal(subkey, shape=(1,)), [-1.2574776], rtol=RTOL)
  key, *subkeys = random.split(key, 4)
  normals = np.concatenate([random.normal(s, shape=(1,)) for s in subkeys])
  np.testing.assert_allclose(normals, [-1.3877681, -1.2513309, -0.34266764], rtol=RTOL)


# -- § "Control Flow": python control flow + autodiff --

def test_grad_through_python_control_flow(capsys):
  """§ "python control_flow + autodiff", In [24]."""
  print(grad(_f_python_if)(2.))
  print(grad(_f_python_if)(4.))
  assert capsys.readouterr().out == "12.0\n-4.0\n"


# -- § "Control Flow": python control flow + JIT --

def test_jit_python_for_loop(capsys):
  """§ "python控制流+ JIT", In [25]: a static Python loop unrolls."""
  @jit
  def f(x):
    for i in range(3):
      x = 2 * x
    return x

  print(f(3))
  assert capsys.readouterr().out == "24\n"
  assert repr(f(3)) == "Array(24, dtype=int32, weak_type=True)"
  text = str(make_jaxpr(f)(3))
  assert text.count(" = mul ") == 3 and "while" not in text


def test_jit_loop_over_shape(capsys):
  """§ "python控制流+ JIT", In [26]: a loop over x.shape[0] is fine."""
  @jit
  def g(x):
    y = 0.
    for i in range(x.shape[0]):
      y = y + x[i]
    return y

  print(g(jnp.array([1., 2., 3.])))
  assert capsys.readouterr().out == "6.0\n"


def test_jit_python_if_fails():
  """§ "python控制流+ JIT", In [27]: `if` on a traced value fails."""
  with pytest.raises(jax.errors.ConcretizationTypeError) as info:
    jit(_f_python_if)(2)
  # The document's old text began "Abstract tracer value encountered where
  # concrete value is expected: Traced<ShapedArray(bool[], weak_type=True)>"
  # and linked jax.errors.ConcretizationTypeError; current JAX raises its
  # subclass TracerBoolConversionError with this text.
  assert isinstance(info.value, jax.errors.TracerBoolConversionError)
  assert isinstance(info.value, TypeError)
  line = _f_python_if.__code__.co_firstlineno
  msg = str(info.value)
  assert msg.startswith("Attempted boolean conversion of traced array with shape bool[].\n")
  assert re.search(rf"The error occurred while tracing the function _f_python_if at "
                   rf".*test_doc000_introduction.py:{line} for jit. This concrete value was not "
                   r"available in Python because it depends on the value of the argument x.", msg)
  assert msg.endswith(
      "See https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError")


def test_static_argnums_if():
  """§ "python控制流+ JIT", In [28]: static_argnums makes it work."""
  f = jit(_f_python_if, static_argnums=(0,))
  assert str(f(2.)) == "12.0"
  assert repr(f(4.)) == "Array(-16., dtype=float32, weak_type=True)"


def test_static_argnums_loop():
  """§ "python控制流+ JIT", In [29]: a static loop bound; each new n re-traces."""
  traces = []

  def f(x, n):
    traces.append(n)
    y = 0.
    for i in range(n):
      y = y + x[i]
    return y

  f = jit(f, static_argnums=(1,))
  out = f(jnp.array([2., 3., 4.]), 2)
  # The document shows the old repr DeviceArray(5., dtype=float32).
  assert repr(out) == "Array(5., dtype=float32)"
  f(jnp.array([5., 6., 7.]), 2)
  assert traces == [2]
  assert repr(f(jnp.array([2., 3., 4.]), 3)) == "Array(9., dtype=float32)"
  assert traces == [2, 3]


def test_value_dependent_shape(capsys):
  """§ "函数具有参数值依赖的形状", In [30]: a traced length fails; static works
  and recompiles for each new length."""
  traces = []

  def example_fun(length, val):
    traces.append(length)
    return jnp.ones((length,)) * val

  print(example_fun(5, 4))
  bad_example_jit = jit(example_fun)
  with pytest.raises(TypeError) as info:
    print(bad_example_jit(10, 4))
  # The document's old text shows the tracer as
  # Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace(level=0/1)>.
  msg = str(info.value)
  assert msg.startswith(
      "Shapes must be 1D sequences of concrete values of integer type, got "
      "(JitTracer(~int32[]),).\n"
      "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions.")
  assert "depends on the value of the argument length." in msg
  good_example_jit = jit(example_fun, static_argnums=(0,))
  del traces[:]
  print(good_example_jit(10, 4))
  print(good_example_jit(5, 4))
  assert capsys.readouterr().out == (
      "[4. 4. 4. 4. 4.]\n[4. 4. 4. 4. 4. 4. 4. 4. 4. 4.]\n[4. 4. 4. 4. 4.]\n")
  assert traces == [10, 5]
  good_example_jit(10, 7)  # cached: no re-trace
  assert traces == [10, 5]


def test_print_inside_jit(capsys):
  """§ "函数具有参数值依赖的形状", In [31]: print inside jit shows tracers."""
  @jit
  def f(x):
    print(x)
    y = 2 * x
    print(y)
    return y

  out = f(2)
  # The document prints the old Traced<ShapedArray(int32[], weak_type=True)>
  # text and DeviceArray(4, dtype=int32); current JAX shows the weak type.
  assert capsys.readouterr().out == "JitTracer(~int32[])\nJitTracer(~int32[])\n"
  assert repr(out) == "Array(4, dtype=int32, weak_type=True)"
  f(3)
  assert capsys.readouterr().out == ""


# -- § "Structured control flow primitives" --

def test_cond():
  """§ "Structured control flow primitives", In [32]: lax.cond."""
  operand = jnp.array([0.])
  assert repr(lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([1.], dtype=float32)"
  # The document shows the old repr DeviceArray([-1.], dtype=float32).
  assert repr(lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand)) == \
      "Array([-1.], dtype=float32)"


def test_while_loop():
  """§ "Structured control flow primitives", In [33]: lax.while_loop."""
  init_val = 0
  cond_fun = lambda x: x < 10
  body_fun = lambda x: x + 1
  # Document: DeviceArray(10, dtype=int32); current JAX keeps the weak type
  # of the Python int init value.
  assert repr(lax.while_loop(cond_fun, body_fun, init_val)) == \
      "Array(10, dtype=int32, weak_type=True)"


def test_fori_loop():
  """§ "Structured control flow primitives", In [34]: lax.fori_loop."""
  init_val = 0
  start = 0
  stop = 10
  body_fun = lambda i, x: x + i
  assert repr(lax.fori_loop(start, stop, body_fun, init_val)) == \
      "Array(45, dtype=int32, weak_type=True)"


def test_python_equivalents_match_primitives():
  """§ "Structured control flow primitives": the Python-equivalent sketches
  compute what the primitives compute."""
  def cond(pred, true_fun, false_fun, operand):
    if pred:
      return true_fun(operand)
    else:
      return false_fun(operand)

  def while_loop(cond_fun, body_fun, init_val):
    val = init_val
    while cond_fun(val):
      val = body_fun(val)
    return val

  def fori_loop(start, stop, body_fun, init_val):
    val = init_val
    for i in range(start, stop):
      val = body_fun(i, val)
    return val

  operand = jnp.array([0.])
  for pred in (True, False):
    np.testing.assert_array_equal(cond(pred, lambda x: x + 1, lambda x: x - 1, operand),
                                  lax.cond(pred, lambda x: x + 1, lambda x: x - 1, operand))
  assert while_loop(lambda x: x < 10, lambda x: x + 1, 0) == 10
  assert fori_loop(0, 10, lambda i, x: x + i, 0) == 45


def test_summary_table():
  """§ "Structured control flow primitives" (the jit/grad table)."""
  # if: jit ❌ (test_jit_python_if_fails), grad ✔ (In [24]).
  # for / while with a static trip count: jit ✔* (unrolled), grad ✔.
  def py_while(x):
    i = 0
    while i < 3:
      x, i = 2. * x, i + 1
    return x

  assert float(jit(py_while)(1.)) == 8. and float(grad(py_while)(1.)) == 8.
  # lax.cond: jit ✔, grad ✔.
  cond_f = lambda x: lax.cond(x < 3, lambda x: 3. * x ** 2, lambda x: -4. * x, x)
  assert float(jit(cond_f)(2.)) == 12. and float(grad(cond_f)(2.)) == 12.
  assert float(jit(grad(cond_f))(4.)) == -4.
  # lax.while_loop: jit ✔, grad fwd only.
  wl = lambda x: lax.while_loop(lambda v: v < 10., lambda v: v * 2., x)
  assert float(jit(wl)(1.)) == 16.
  assert [float(t) for t in jax.jvp(wl, (1.,), (1.,))] == [16., 16.]
  reverse_msg = ("Reverse-mode differentiation does not work for lax.while_loop or "
                 "lax.fori_loop with dynamic start/stop values.")
  with pytest.raises(ValueError, match=re.escape(reverse_msg)):
    grad(wl)(1.)
  # lax.fori_loop: jit ✔, grad fwd only with traced bounds (current JAX
  # lowers static-bound fori_loops to scan, which reverse-differentiates).
  fl = lambda x, n: lax.fori_loop(0, n, lambda i, v: v * 2., x)
  assert float(grad(fl)(1., 3)) == 8.
  with pytest.raises(ValueError, match=re.escape(reverse_msg)):
    jit(lambda x, n: grad(fl)(x, n))(1., 3)
  assert float(jit(lambda x, n: jax.jvp(lambda x: fl(x, n), (x,), (1.,))[1])(1., 3)) == 8.
  # lax.scan: jit ✔, grad ✔.
  sc = lambda x: lax.scan(lambda c, _: (c * 2., None), x, None, length=3)[0]
  assert float(jit(sc)(1.)) == 8. and float(grad(sc)(1.)) == 8.


# -- § "NaNs" --

def test_debug_nans_flag_settings():
  """§ "NaNs" (prose): the ways to switch the NaN checker on."""
  assert config.jax_debug_nans is False
  # config.update("jax_debug_nans", True), here through jax.config.
  try:
    jax.config.update("jax_debug_nans", True)
    assert config.jax_debug_nans is True
  finally:
    jax.config.update("jax_debug_nans", False)
  # The old `from jax.config import config` (removed in current JAX) is
  # kept by purejax as a compatibility path.
  from purejax.config import config as old_config
  assert old_config is config
  # The JAX_DEBUG_NANS=True environment variable.
  env = dict(os.environ, JAX_DEBUG_NANS="True")
  root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
  env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
  code = "import purejax; print(purejax.config.jax_debug_nans)"
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                       text=True, check=True).stdout
  assert out == "True\n"


def test_divide_zero_by_zero():
  """§ "NaNs", In [35]: 0/0 is nan (the NaN checker is off in the cell)."""
  # The document shows the old repr DeviceArray(nan, dtype=float32).
  assert repr(jnp.divide(0., 0.)) == "Array(nan, dtype=float32, weak_type=True)"


def test_divide_zero_by_zero_debug_nans(debug_nans):
  """§ "NaNs", In [35] with the checker on: the nan is caught."""
  with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in div"):
    jnp.divide(0., 0.)


def _nan_f(x, y):
  a = x * y
  b = (x + y) / (x - y)
  c = a + 2
  return a + b * c


def test_nan_under_jit():
  """§ "NaNs", In [36]: a nan in a jitted function's output."""
  out = jit(_nan_f)(jnp.array([2., 0.]), jnp.array([3., 0.]))
  # The document shows the old repr DeviceArray([-34.,  nan], dtype=float32).
  assert repr(out) == "Array([-34.,  nan], dtype=float32)"


def test_nan_under_jit_debug_nans(debug_nans, capsys):
  """§ "NaNs", In [36] with the checker on: the de-optimized re-run finds
  the division."""
  with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in div"):
    jit(_nan_f)(jnp.array([2., 0.]), jnp.array([3., 0.]))
  assert ("Invalid nan value encountered in the output of a jax.jit function. "
          "Calling the de-optimized version.") in capsys.readouterr().out
  assert repr(jit(_nan_f)(jnp.array([2., 1.]), jnp.array([3., 0.]))) == \
      "Array([-34.,   2.], dtype=float32)"


# -- § "NaNs": double precision --

def test_float64_request_is_float32():
  """§ "NaNs" (double precision), In [37]: float64 becomes float32."""
  with pytest.warns(UserWarning, match=re.escape(
      "Explicitly requested dtype float64 is not available, and will be truncated to "
      "dtype float32. To enable more dtypes, set the jax_enable_x64 configuration "
      "option or the JAX_ENABLE_X64 shell environment variable.")):
    x = random.uniform(random.PRNGKey(0), (1000,), dtype=jnp.float64)
  assert repr(x.dtype) == "dtype('float32')"
  assert x.shape == (1000,)
  assert float(x.min()) >= 0. and float(x.max()) < 1.


def test_float64_with_x64(x64):
  """§ "NaNs" (double precision), In [37] with jax_enable_x64: float64."""
  x = random.uniform(random.PRNGKey(0), (1000,), dtype=jnp.float64)
  assert repr(x.dtype) == "dtype('float64')"
  assert float(x.min()) >= 0. and float(x.max()) < 1.


# -- Against real JAX --

def _run_cells(jax_mod):
  """The document's value-printing cells with the given JAX, as reprs."""
  jnp_, lax_, random_ = jax_mod.numpy, jax_mod.lax, jax_mod.random
  out = {}
  out["oob"] = repr(jnp_.arange(10)[11])
  out["key"] = repr(random_.PRNGKey(0))
  key = random_.PRNGKey(0)
  out["normal"] = random_.normal(key, shape=(1,)).tolist()
  key, subkey = random_.split(key)
  key, subkey = random_.split(key)
  out["keys"] = (key.tolist(), subkey.tolist())
  key, *subkeys = random_.split(key, 4)
  out["normals"] = [random_.normal(s, shape=(1,)).tolist() for s in subkeys]
  out["grad"] = [repr(jax_mod.grad(_f_python_if)(v)) for v in (2., 4.)]
  out["cond"] = repr(lax_.cond(False, lambda x: x + 1, lambda x: x - 1, jnp_.array([0.])))
  out["while"] = repr(lax_.while_loop(lambda x: x < 10, lambda x: x + 1, 0))
  out["fori"] = repr(lax_.fori_loop(0, 10, lambda i, x: x + i, 0))
  out["div"] = repr(jnp_.divide(0., 0.))
  out["nan"] = repr(jax_mod.jit(_nan_f)(jnp_.array([2., 0.]), jnp_.array([3., 0.])))
  out["jaxpr"] = str(jax_mod.make_jaxpr(
      lambda a, e: lax_.scan(lambda c, ae: (c + ae[0] * ae[1] + e, c), 0.,
                             (a, jnp_.ones(a.shape))))(jnp_.arange(16), 5.))
  return out


@pytest.mark.oracle
@pytest.mark.parametrize("partitionable", [False, True])
def test_cells_match_real_jax(partitionable):
  """All value-printing cells, purejax vs. real JAX, in both threefry modes
  (normals to float32 rounding: XLA's erf_inv differs in the last bits)."""
  jax_oracle = pytest.importorskip("jax")
  old = jax_oracle.config.jax_threefry_partitionable
  jax_oracle.config.update("jax_threefry_partitionable", partitionable)
  try:
    want = _run_cells(jax_oracle)
  finally:
    jax_oracle.config.update("jax_threefry_partitionable", old)
  with config.override("jax_threefry_partitionable", partitionable):
    got = _run_cells(jax)
  for name in ("normal", "normals"):
    np.testing.assert_allclose(got.pop(name), want.pop(name), rtol=RTOL)
  assert got == want


@pytest.mark.oracle
def test_error_texts_match_real_jax():
  """In [27] and [30]: the error texts, purejax vs. real JAX (the function
  location is the same line in this file)."""
  jax_oracle = pytest.importorskip("jax")

  def example_fun(length, val):
    return jnp.ones((length,)) * val

  def oracle_example_fun(length, val):
    return jax_oracle.numpy.ones((length,)) * val

  texts = []
  for mod, fun in ((jax, example_fun), (jax_oracle, oracle_example_fun)):
    with pytest.raises(mod.errors.TracerBoolConversionError) as bool_info:
      mod.jit(_f_python_if)(2)
    with pytest.raises(TypeError) as shape_info:
      mod.jit(fun)(10, 4)
    texts.append((str(bool_info.value),
                  str(shape_info.value).replace(fun.__name__, "FUN").split(" at ")[0]))
  assert texts[0] == texts[1]
