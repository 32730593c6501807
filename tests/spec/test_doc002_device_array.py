"""Acceptance tests for /work/shared/spec/002_d264fc627cd9d168.txt,
"JAX（DeviceArray）": the array type, NumPy vs jax.numpy, immutability,
asynchronous dispatch, type promotion and higher-order gradients.

One test (or a few) per code cell, in document order.  The document was
written for an old JAX (``DeviceArray``, ``jax.ops.index_*``,
``jnp.alltrue``) and NumPy 1.x; where current JAX 0.10.2 differs, the tests
check current JAX's behaviour, plus purejax's documented compatibility path
(DESIGN.md: old APIs still accepted with a DeprecationWarning).

Cells not turned into tests and why: none; the two timing cells ("异步调度")
run at a small size and assert shapes and values, never times.
"""
import re
import time
import warnings

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import random
from purejax._src.config import config


def _lines(text):
  """The non-blank lines of a printed block: the document's shown outputs
  insert and drop blank lines relative to what the code prints."""
  return [line for line in text.splitlines() if line.strip()]


# -- § "JAX是什么？" (first cell: the two array types) --

def test_arrays_created_with_numpy_and_jax(capsys):
  """§ "JAX是什么？": printing both arrays and their types."""
  array_numpy = np.arange(10, dtype=np.int32)
  array_jax = jnp.arange(10, dtype=jnp.int32)
  print("Array created using numpy: ", array_numpy)
  print("Array created using JAX: ", array_jax)
  print(f"array_numpy is of type : {type(array_numpy)}")
  print(f"array_jax is of type : {type(array_jax)}")
  out = _lines(capsys.readouterr().out)
  assert out[:3] == ["Array created using numpy:  [0 1 2 3 4 5 6 7 8 9]",
                     "Array created using JAX:  [0 1 2 3 4 5 6 7 8 9]",
                     "array_numpy is of type : <class 'numpy.ndarray'>"]
  # The document prints the old <class 'jaxlib.xla_extension.DeviceArray'>;
  # current JAX prints <class 'jaxlib._jax.ArrayImpl'>: a class path we cannot
  # share, so only its form is checked, and the type is a jax.Array.
  assert re.fullmatch(r"array_jax is of type : <class '[\w.]+'>", out[3])
  assert "DeviceArray" not in out[3]
  assert isinstance(array_jax, jax.Array)
  assert not isinstance(array_jax, np.ndarray)
  assert array_jax.dtype == np.int32 and array_jax.shape == (10,)
  assert repr(array_jax) == "Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], dtype=int32)"


# -- § "Numpy vs JAX-numpy" --

_ABS_DIFF = """\
[[0 1 2 3 4 5 6 7 8 9]
 [1 0 1 2 3 4 5 6 7 8]
 [2 1 0 1 2 3 4 5 6 7]
 [3 2 1 0 1 2 3 4 5 6]
 [4 3 2 1 0 1 2 3 4 5]
 [5 4 3 2 1 0 1 2 3 4]
 [6 5 4 3 2 1 0 1 2 3]
 [7 6 5 4 3 2 1 0 1 2]
 [8 7 6 5 4 3 2 1 0 1]
 [9 8 7 6 5 4 3 2 1 0]]"""

_MATMUL = """\
[[ 0  0  0  0  0  0  0  0  0  0]
 [ 0  1  2  3  4  5  6  7  8  9]
 [ 0  2  4  6  8 10 12 14 16 18]
 [ 0  3  6  9 12 15 18 21 24 27]
 [ 0  4  8 12 16 20 24 28 32 36]
 [ 0  5 10 15 20 25 30 35 40 45]
 [ 0  6 12 18 24 30 36 42 48 54]
 [ 0  7 14 21 28 35 42 49 56 63]
 [ 0  8 16 24 32 40 48 56 64 72]
 [ 0  9 18 27 36 45 54 63 72 81]]"""

_NUMPY_VS_JNP_OUTPUT = f"""\
Maximum element in ndarray: 9
Maximum element in DeviceArray: 9

Original shape of ndarray:  (10,)
Original shape of DeviceArray:  (10,)
New shape of ndarray:  (10, 1)
New shape of DeviceArray:  (10, 1)

Absoulte pairwise difference in ndarray
{_ABS_DIFF}
Absoulte pairwise difference in DeviceArray
{_ABS_DIFF}
Are all the values same? True

Matrix multiplication of ndarray
{_MATMUL}

Matrix multiplication of DeviceArray
{_MATMUL}
"""


def _numpy_vs_jnp_cell(all_fn):
  """The cell, with the "are they equal" reduction passed in."""
  array_numpy = np.arange(10, dtype=np.int32)
  array_jax = jnp.arange(10, dtype=jnp.int32)
  print(f"Maximum element in ndarray: {array_numpy.max()}")
  print(f"Maximum element in DeviceArray: {array_jax.max()}")
  print("Original shape of ndarray: ", array_numpy.shape)
  print("Original shape of DeviceArray: ", array_jax.shape)
  array_numpy = array_numpy.reshape(-1, 1)
  array_jax = array_jax.reshape(-1, 1)
  print("\nNew shape of ndarray: ", array_numpy.shape)
  print("New shape of DeviceArray: ", array_jax.shape)
  print("Absoulte pairwise difference in ndarray")
  print(np.abs(array_numpy - array_numpy.T))
  print("\nAbsoulte pairwise difference in DeviceArray")
  print(jnp.abs(array_jax - array_jax.T))
  print("\nAre all the values same?", end=" ")
  print(all_fn(np.abs(array_numpy - array_numpy.T) == jnp.abs(array_jax - array_jax.T)))
  print("Matrix multiplication of ndarray")
  print(np.dot(array_numpy, array_numpy.T))
  print("\nMatrix multiplication of DeviceArray")
  print(jnp.dot(array_jax, array_jax.T))
  return array_jax


def test_numpy_vs_jax_numpy_printed_output(capsys):
  """§ "Numpy vs JAX-numpy": the whole printed output.  Current JAX (like
  NumPy 2) has no ``alltrue``; ``jnp.all`` is its replacement."""
  _numpy_vs_jnp_cell(jnp.all)
  assert _lines(capsys.readouterr().out) == _lines(_NUMPY_VS_JNP_OUTPUT)


def test_numpy_vs_jax_numpy_values_and_dtypes():
  """§ "Numpy vs JAX-numpy": what the printed values are made of."""
  a = jnp.arange(10, dtype=jnp.int32)
  assert repr(a.max()) == "Array(9, dtype=int32)"
  col = a.reshape(-1, 1)
  assert col.shape == (10, 1) and col.T.shape == (1, 10)
  diff = jnp.abs(col - col.T)
  assert diff.dtype == np.int32 and diff.shape == (10, 10)
  prod = jnp.dot(col, col.T)
  assert prod.dtype == np.int32
  n = np.arange(10, dtype=np.int32).reshape(-1, 1)
  np.testing.assert_array_equal(prod, n @ n.T)
  # Comparing an ndarray with a jax array gives a jax bool array.
  eq = np.abs(n - n.T) == diff
  assert isinstance(eq, jax.Array) and eq.dtype == np.bool_
  assert repr(jnp.all(eq)) == "Array(True, dtype=bool)"


def test_alltrue_old_api_compat_path():
  """§ "Numpy vs JAX-numpy": old API.  The document calls ``jnp.alltrue``
  (removed from JAX 0.10.2 and NumPy 2); purejax keeps it as a deprecated
  alias of ``jnp.all`` (DESIGN.md), giving the document's ``True``."""
  n = np.arange(3).reshape(-1, 1)
  with pytest.warns(DeprecationWarning, match="jnp.all"):
    res = jnp.alltrue(np.abs(n - n.T) == jnp.abs(jnp.asarray(n) - jnp.asarray(n).T))
  assert str(res) == "True"


def test_numpy_vs_jax_numpy_matches_oracle():
  """§ "Numpy vs JAX-numpy", against real JAX."""
  jax_oracle = pytest.importorskip("jax")
  ja = jax_oracle.numpy.arange(10, dtype=np.int32).reshape(-1, 1)
  pa = jnp.arange(10, dtype=jnp.int32).reshape(-1, 1)
  assert str(jnp.abs(pa - pa.T)) == str(jax_oracle.numpy.abs(ja - ja.T))
  assert repr(jnp.dot(pa, pa.T)) == repr(jax_oracle.numpy.dot(ja, ja.T))
  assert hasattr(jax_oracle.numpy, "alltrue") is False


# -- § "不变性（Immutability）" --

_ITEM_ASSIGNMENT_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def test_item_assignment(capsys):
  """§ "不变性（Immutability）": ndarray item assignment vs the TypeError."""
  array1 = np.arange(5, dtype=np.int32)
  array2 = jnp.arange(5, dtype=jnp.int32)
  print("Original ndarray: ", array1)
  print("Original DeviceArray: ", array2)
  array1[4] = 10
  print("\nModified ndarray: ", array1)
  print("\nTrying to modify DeviceArray-> ", end=" ")
  try:
    array2[4] = 10
    print("Modified DeviceArray: ", array2)
  except Exception as ex:
    print(type(ex).__name__, ex)
  out = _lines(capsys.readouterr().out)
  assert out[:3] == ["Original ndarray:  [0 1 2 3 4]",
                     "Original DeviceArray:  [0 1 2 3 4]",
                     "Modified ndarray:  [ 0  1  2  3 10]"]
  # The document shows the old text ("'<class ...DeviceArray'>' object does not
  # support item assignment. JAX arrays are immutable; perhaps you want
  # jax.ops.index_update ..."); this is current JAX 0.10.2's text.
  assert out[3] == "Trying to modify DeviceArray->  TypeError " + _ITEM_ASSIGNMENT_MESSAGE
  # What both texts say: a TypeError, arrays are immutable, and the array
  # is left unchanged.
  assert "JAX arrays are immutable" in out[3]
  assert array2.tolist() == [0, 1, 2, 3, 4]


def test_item_assignment_message_matches_oracle():
  """§ "不变性（Immutability）", against real JAX."""
  jax_oracle = pytest.importorskip("jax")
  with pytest.raises(TypeError) as want:
    jax_oracle.numpy.arange(5)[4] = 10
  with pytest.raises(TypeError) as got:
    jnp.arange(5)[4] = 10
  assert str(got.value) == str(want.value)


def test_at_updates(capsys):
  """§ "不变性（Immutability）": ``.at[4].set/add/max/min`` return new arrays."""
  array2 = jnp.arange(5, dtype=jnp.int32)
  array2_modified = array2.at[4].set(10)
  print("Original DeviceArray: ", array2)
  print("Modified DeviceArray: ", array2_modified)
  print(array2.at[4].add(6))
  print(array2.at[4].max(20))
  print(array2.at[4].min(-1))
  assert capsys.readouterr().out == (
      "Original DeviceArray:  [0 1 2 3 4]\n"
      "Modified DeviceArray:  [ 0  1  2  3 10]\n"
      "[ 0  1  2  3 10]\n"
      "[ 0  1  2  3 20]\n"
      "[ 0  1  2  3 -1]\n")
  assert array2_modified.dtype == np.int32
  assert array2.tolist() == [0, 1, 2, 3, 4]


def test_deprecated_index_ops_old_api_compat_path(capsys):
  """§ "不变性（Immutability）": old API.  ``jax.ops.index_add/max/min`` were
  removed from current JAX (AttributeError there);
  purejax keeps them as DeprecationWarning aliases of ``.at[]`` (DESIGN.md)
  and they print what the ``.at[]`` lines print."""
  array2 = jnp.arange(5, dtype=jnp.int32)
  print("\nEquivalent but deprecatd")
  with pytest.warns(DeprecationWarning, match=r"jax\.ops\.index_add is deprecated"):
    print(jax.ops.index_add(array2, 4, 6))
  with pytest.warns(DeprecationWarning, match=r"jax\.ops\.index_max is deprecated"):
    print(jax.ops.index_max(array2, 4, 20))
  with pytest.warns(DeprecationWarning, match=r"jax\.ops\.index_min is deprecated"):
    print(jax.ops.index_min(array2, 4, -1))
  # The commented "Equivalent" line: index_update(array2, 4, 10).
  with pytest.warns(DeprecationWarning, match=r"jax\.ops\.index_update is deprecated"):
    print(jax.ops.index_update(array2, 4, 10))
  assert capsys.readouterr().out == (
      "\nEquivalent but deprecatd\n[ 0  1  2  3 10]\n[ 0  1  2  3 20]\n"
      "[ 0  1  2  3 -1]\n[ 0  1  2  3 10]\n")


def test_at_updates_match_oracle():
  """§ "不变性（Immutability）", against real JAX."""
  jax_oracle = pytest.importorskip("jax")
  ja = jax_oracle.numpy.arange(5, dtype=np.int32)
  pa = jnp.arange(5, dtype=jnp.int32)
  for op, y in [("set", 10), ("add", 6), ("max", 20), ("min", -1)]:
    assert repr(getattr(pa.at[4], op)(y)) == repr(getattr(ja.at[4], op)(y))
  assert not hasattr(jax_oracle.ops, "index_add")


# -- § "异步调度" --
# The document uses 8000x8000 arrays only to make the timing visible; a small
# size keeps the test fast, and times are never asserted.

_N = 200


def test_uniform_arrays_shapes():
  """§ "异步调度": the two uniform arrays and their shapes."""
  array1 = np.random.uniform(size=(_N, _N)).astype(np.float32)
  array2 = jax.random.uniform(jax.random.PRNGKey(0), (_N, _N), dtype=jnp.float32)
  assert array1.shape == (_N, _N)
  assert array2.shape == (_N, _N) and array2.dtype == np.float32
  a = np.asarray(array2)
  assert a.min() >= 0.0 and a.max() < 1.0
  assert 0.45 < a.mean() < 0.55
  # With the document's size the shapes print as it shows.
  big = jax.eval_shape(lambda k: jax.random.uniform(k, (8000, 8000), dtype=jnp.float32),
                       jax.random.PRNGKey(0))
  assert f"Shape of DeviceArray:  {big.shape}" == "Shape of DeviceArray:  (8000, 8000)"
  assert big.dtype == np.float32


def test_uniform_arrays_match_oracle():
  """§ "异步调度": the sampled values, bit for bit, in both threefry modes
  (False: the document's classic mode; True: current JAX's default)."""
  jax_oracle = pytest.importorskip("jax")
  for partitionable in (False, True):
    with config.override("jax_threefry_partitionable", partitionable):
      got = random.uniform(random.PRNGKey(0), (8, 8), dtype=jnp.float32)
    old = jax_oracle.config.jax_threefry_partitionable
    jax_oracle.config.update("jax_threefry_partitionable", partitionable)
    try:
      want = jax_oracle.random.uniform(jax_oracle.random.PRNGKey(0), (8, 8),
                                       dtype=np.float32)
    finally:
      jax_oracle.config.update("jax_threefry_partitionable", old)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_dot_product_dispatch():
  """§ "异步调度": ``jnp.dot`` on the device array; the result is usable at
  once (shape/dtype), and ``block_until_ready`` / conversion to NumPy give
  the values, which agree with ``np.dot``."""
  array1 = np.random.RandomState(0).uniform(size=(_N, _N)).astype(np.float32)
  array2 = jax.random.uniform(jax.random.PRNGKey(0), (_N, _N), dtype=jnp.float32)
  start_time = time.time()
  res_np = np.dot(array1, array1)
  print(f"Time taken by dot product op on ndarrays: {time.time()-start_time:.2f} seconds")
  start_time = time.time()
  res = jnp.dot(array2, array2)
  print(f"Time taken by dot product op on DeviceArrays: {time.time()-start_time:.2f} seconds")
  assert res.shape == (_N, _N) and res.dtype == np.float32
  assert res.block_until_ready() is res
  # float32 sums of 200 products: a tolerance, not bit equality.
  a2 = np.asarray(array2)
  np.testing.assert_allclose(np.asarray(res), a2 @ a2, rtol=1e-5)
  assert res_np.shape == (_N, _N) and res_np.dtype == np.float32
  # Passing a not-yet-inspected result to another computation works.
  np.testing.assert_allclose(np.asarray(jnp.dot(res, array2)), (a2 @ a2) @ a2, rtol=1e-4)


# -- § "Types promotion" --

def test_python_scalar_promotion(capsys):
  """§ "Types promotion": the Python scalar keeps the JAX value's int8."""
  print("Types promotion in numpy =>", end=" ")
  print((np.int8(32) + 4).dtype)
  print("Types promtoion in JAX =>", end=" ")
  print((jnp.int8(32) + 4).dtype)
  # The document shows NumPy 1.x's "int64"; NumPy >= 2 (NEP 50) also keeps int8.
  numpy_dtype = "int64" if np.lib.NumpyVersion(np.__version__) < "2.0.0" else "int8"
  assert capsys.readouterr().out == (f"Types promotion in numpy => {numpy_dtype}\n"
                                     "Types promtoion in JAX => int8\n")
  assert repr(jnp.int8(32) + 4) == "Array(36, dtype=int8)"


def test_int_plus_float_promotion(capsys):
  """§ "Types promotion": int32 + 5.0 is float64 in NumPy, float32 in JAX."""
  array1 = np.random.randint(5, size=(2), dtype=np.int32)
  print("Implicit numpy casting gives: ", (array1 + 5.0).dtype)
  array2 = jax.random.randint(jax.random.PRNGKey(0), minval=0, maxval=5, shape=[2],
                              dtype=jnp.int32)
  print("Implicit JAX casting gives: ", (array2 + 5.0).dtype)
  assert capsys.readouterr().out == ("Implicit numpy casting gives:  float64\n"
                                     "Implicit JAX casting gives:  float32\n")
  assert array2.dtype == np.int32 and array2.shape == (2,)
  assert all(0 <= v < 5 for v in array2.tolist())
  # No float64 request anywhere: no x64 truncation warning.
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert (array2 + 5.0).dtype == np.float32


def test_randint_values_match_oracle():
  """§ "Types promotion": the randint draw, bit for bit, in both modes."""
  jax_oracle = pytest.importorskip("jax")
  for partitionable in (False, True):
    with config.override("jax_threefry_partitionable", partitionable):
      got = jax.random.randint(jax.random.PRNGKey(0), minval=0, maxval=5, shape=[2],
                               dtype=jnp.int32)
    old = jax_oracle.config.jax_threefry_partitionable
    jax_oracle.config.update("jax_threefry_partitionable", partitionable)
    try:
      want = jax_oracle.random.randint(jax_oracle.random.PRNGKey(0), minval=0, maxval=5,
                                       shape=[2], dtype=np.int32)
    finally:
      jax_oracle.config.update("jax_threefry_partitionable", old)
    assert repr(got) == repr(want)
    assert repr(got + 5.0) == repr(want + 5.0)


# -- § "自动微分（Automatic Differentiation）" --

def test_higher_order_gradients(capsys):
  """§ "自动微分": first and second derivative of x**2 at 4.0."""
  def squared(x):
    return x**2

  x = 4.0
  y = squared(x)
  assert y == 16.0
  dydx = jax.grad(squared)
  print("First order gradients of y wrt x: ", dydx(x))
  print("Second order gradients of y wrt x: ", jax.grad(dydx)(x))
  assert capsys.readouterr().out == ("First order gradients of y wrt x:  8.0\n"
                                     "Second order gradients of y wrt x:  2.0\n")
  # A Python float argument gives a weakly typed float32 result, as in JAX.
  assert repr(dydx(x)) == "Array(8., dtype=float32, weak_type=True)"
  assert repr(jax.grad(dydx)(x)) == "Array(2., dtype=float32, weak_type=True)"


def test_higher_order_gradients_match_oracle():
  """§ "自动微分", against real JAX."""
  jax_oracle = pytest.importorskip("jax")
  want = jax_oracle.grad(jax_oracle.grad(lambda x: x**2))(4.0)
  got = jax.grad(jax.grad(lambda x: x**2))(4.0)
  assert repr(got) == repr(want)
