"""Tests for arrays and tracers as purejax.numpy makes them: operators and
methods, printing, basic indexing, ``.at[]`` updates and the deprecated
``purejax.ops`` functions.

Tests marked ``oracle`` compare against the installed JAX and skip without it.
"""
import warnings

import numpy as np
import pytest

import purejax.numpy as jnp
from purejax._src import errors
from purejax._src.api import jit, make_jaxpr
from purejax._src.array import Array
from purejax._src.config import config
from purejax._src.numpy import index_ops


def _jax():
  return pytest.importorskip("jax")


def _jjnp():
  _jax()
  import jax.numpy as jjnp
  return jjnp


def assert_same(ours, theirs):
  """Same dtype, weak type and values (NaN equal) as the reference."""
  if isinstance(theirs, (tuple, list)):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
      assert_same(a, b)
    return
  assert isinstance(ours, Array)
  assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
  assert ours.weak_type == getattr(theirs, "weak_type", False), (ours, theirs)
  assert ours.shape == np.shape(theirs)
  np.testing.assert_allclose(np.asarray(ours, np.float64) if ours.dtype.kind != "c"
                             else np.asarray(ours), np.asarray(theirs).astype(
                                 np.float64 if ours.dtype.kind != "c" else np.complex128),
                             rtol=1e-6, atol=1e-6, equal_nan=True)


def both(fun, *args):
  """fun(jnp, *args) for purejax and JAX, numpy arguments converted."""
  jjnp = _jjnp()
  conv = lambda m: [m.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    theirs = fun(jjnp, *conv(jjnp))
    ours = fun(jnp, *conv(jnp))
  assert_same(ours, theirs)
  return ours


X = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6) - 50


# ---------------------------------------------------------------------------
# Printing

REPR_CASES = [
    lambda m: m.ones((2, 2)),
    lambda m: m.array(3.5),
    lambda m: m.array(3),
    lambda m: m.array(True),
    lambda m: m.arange(10),
    lambda m: m.asarray(np.arange(10, dtype=np.float32) / 3),
    lambda m: m.arange(100.0),
    lambda m: m.arange(1000),
    lambda m: m.arange(2000.0).reshape(40, 50),
    lambda m: m.zeros((0,)),
    lambda m: m.zeros((2, 0, 3), m.int32),
    lambda m: m.array([1e10, 1.0]),
    lambda m: m.array([1e-10, 1.0]),
    lambda m: m.array([np.nan, np.inf, -np.inf]),
    lambda m: m.ones(3, m.bfloat16),
    lambda m: m.asarray(np.full(3, 1 / 3, np.float16)),
    lambda m: m.array([1 + 2j, 3 - 4j], m.complex64),
    lambda m: m.ones((2, 3), bool),
    lambda m: m.arange(5, dtype=m.uint8),
    lambda m: m.arange(24).reshape(2, 3, 4),
    lambda m: m.array([1.0, 2.0]) + 1.0,
    lambda m: m.array(1.0) * 3,
    lambda m: m.array([-1.5, 2.25]),
    lambda m: m.asarray(np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(1.1111)),
    lambda m: m.array(12345678.0),
    lambda m: m.array([1, -2], m.int8),
    lambda m: m.full((3,), 7, m.int16),
    lambda m: m.array(-0.0),
    lambda m: m.ones((1, 1, 1)),
    lambda m: m.asarray(np.arange(30, dtype=np.float32).reshape(2, 15) * 1e5),
]


@pytest.mark.oracle
@pytest.mark.parametrize("index", range(len(REPR_CASES)))
def test_repr_and_str_like_oracle(index):
  jjnp = _jjnp()
  ours, theirs = REPR_CASES[index](jnp), REPR_CASES[index](jjnp)
  assert repr(ours) == repr(theirs)
  assert str(ours) == str(theirs)


def test_spec_reprs():
  assert repr(jnp.ones((2, 2))) == ("Array([[1., 1.],\n       [1., 1.]], dtype=float32)")
  assert repr(jnp.arange(10)[11]) == "Array(9, dtype=int32)"
  assert repr(jnp.array(1.0) * 2) == "Array(2., dtype=float32, weak_type=True)"
  assert repr(jnp.zeros((0, 2))) == "Array([], shape=(0, 2), dtype=float32)"


# ---------------------------------------------------------------------------
# Immutability

def test_item_assignment_is_an_error_with_advice():
  x = jnp.zeros((3, 3))
  with pytest.raises(TypeError) as info:
    x[1, :] = 1.0
  assert str(info.value) == (
      "JAX arrays are immutable and do not support in-place item assignment. Instead of "
      "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
      "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

  def f(x):
    x[0] = 1.0
    return x

  with pytest.raises(TypeError, match="JAX arrays are immutable"):
    jit(f)(x)


# ---------------------------------------------------------------------------
# Basic indexing against NumPy

BASIC_INDICES = [
    0, -1, 3, (1, 2), (1, 2, 3), (-1, -2, -3), slice(None), slice(1, 3), slice(None, None, 2),
    slice(None, None, -1), slice(3, 0, -1), slice(-2, None), slice(1, 100),
    slice(5, None), slice(3, 1), slice(None, None, -3), (slice(None), 1),
    (Ellipsis, 2), (Ellipsis, slice(None, None, -2)), (None, 1), (1, None, 2),
    (slice(1, 3), None, slice(None, None, 2), -1), None, Ellipsis, (), (None, Ellipsis, None),
    (0, Ellipsis, 0), np.int32(2), (np.int64(-1), slice(2, -1)), (slice(-100, 100, 3),),
    True, (Ellipsis, True), (1, slice(4, 1, -2), None),
]


@pytest.mark.parametrize("index", BASIC_INDICES, ids=repr)
def test_basic_indexing_like_numpy(index):
  ours = jnp.asarray(X)[index]
  expected = X[index]
  assert ours.shape == expected.shape
  np.testing.assert_array_equal(np.asarray(ours), expected)
  traced = jit(lambda x: x[index])(jnp.asarray(X))
  np.testing.assert_array_equal(np.asarray(traced), expected)


def test_false_index_gives_an_empty_axis():
  assert jnp.asarray(X)[False].shape == (0, 4, 5, 6)


@pytest.mark.parametrize("i", [-6, -4, -1, 0, 2, 3, 4, 9])
def test_traced_integer_index_clamps(i):
  x = jnp.arange(4.0)
  expected = float(np.arange(4.0)[min(max(i + 4 if i < 0 else i, 0), 3)])
  assert float(jit(lambda x, i: x[i])(x, i)) == expected
  assert float(x[i]) == expected
  assert float(x[jnp.array(i)]) == expected


def test_traced_indices_in_x64_mode(x64):
  x = jnp.arange(12.0).reshape(3, 4)
  assert x.dtype == np.float64
  np.testing.assert_array_equal(np.asarray(jit(lambda x, i: x[i, 1:3])(x, 1)), [5.0, 6.0])
  out = jit(lambda x, i: x.at[i, 1:3].set(0.0))(x, -1)
  expected = np.arange(12.0).reshape(3, 4)
  expected[-1, 1:3] = 0
  np.testing.assert_array_equal(np.asarray(out), expected)
  assert np.isnan(np.asarray(jit(lambda x, i: x.at[i, 0].get(mode="fill"))(x, 5)))


def test_traced_indices_mixed_with_slices():
  x = jnp.asarray(X)
  f = jit(lambda x, i, j: x[i, 1:4, j])
  np.testing.assert_array_equal(np.asarray(f(x, 2, -1)), X[2, 1:4, -1])
  g = jit(lambda x, i: x[i, ::-2, None])
  np.testing.assert_array_equal(np.asarray(g(x, 1)), X[1, ::-2, None])
  h = jit(lambda x, i: x[:, i, ::3])
  np.testing.assert_array_equal(np.asarray(h(x, 4)), X[:, 4, ::3])
  np.testing.assert_array_equal(np.asarray(jit(lambda x, i: x[i])(x, np.uint8(3))), X[3])


@pytest.mark.oracle
def test_indexing_jaxprs_like_oracle():
  jax = _jax()
  import jax.numpy as jjnp
  cases = [lambda x: x[1], lambda x: x[::-1, 1], lambda x: x[1, None], lambda x: x[2:0:-1],
           lambda x: x[..., 1:]]
  for f in cases:
    assert str(make_jaxpr(f)(jnp.ones((3, 4)))) == str(jax.make_jaxpr(f)(jjnp.ones((3, 4))))
  g = lambda x, i: x[i, 2]
  assert str(make_jaxpr(g)(jnp.ones((3, 4)), 1)) == str(jax.make_jaxpr(g)(jjnp.ones((3, 4)), 1))


@pytest.mark.parametrize("index", [
    lambda x: x > 0, lambda x: (Ellipsis, x[0, 0] > -45), lambda x: (slice(None), x[0] > -48),
    lambda x: x[..., 0] > 1000, lambda x: (slice(1, 3), x[0, :, 0] > -45)],
    ids=["full", "ellipsis_last", "middle_2d", "empty", "with_slice"])
def test_concrete_boolean_masks_like_numpy(index):
  idx = index(X)
  np_idx = tuple(np.asarray(i) if isinstance(i, np.ndarray) else i for i in
                 (idx if isinstance(idx, tuple) else (idx,)))
  expected = X[np_idx]
  ours = jnp.asarray(X)[tuple(jnp.asarray(i) if isinstance(i, np.ndarray) else i
                              for i in np_idx)]
  assert ours.shape == expected.shape
  np.testing.assert_array_equal(np.asarray(ours), expected)


def test_boolean_mask_errors():
  x = jnp.arange(4.0)
  with pytest.raises(IndexError, match="boolean index did not match shape"):
    x[jnp.array([True, False])]
  with pytest.raises(errors.NonConcreteBooleanIndexError,
                     match=r"Array boolean indices must be concrete; got bool\[4\]"):
    jit(lambda x: x[x > 1])(x)
  # A concrete mask closed over by a traced function is fine.
  mask = np.array([True, False, True, False])
  np.testing.assert_array_equal(np.asarray(jit(lambda x: x[mask])(x)), [0.0, 2.0])


@pytest.mark.parametrize("index, error, message", [
    (1.5, TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
    ("a", TypeError, "JAX does not support string indexing; got idx='a'"),
    ([0, 1], TypeError, "Using a non-tuple sequence for multidimensional indexing"),
    ((0, 1, 2, 3), IndexError, "Too many indices: array is 3-dimensional, but 4 were indexed"),
    ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis"),
    (np.array([0, 1.5]), TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
])
def test_unsupported_indices_are_clear_errors(index, error, message):
  with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")
                     .replace("[", r"\[").replace(".", r"\.")):
    jnp.asarray(X)[index]


def test_index_into_empty_axis_is_an_error():
  with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
    jnp.zeros(0)[0]


# ---------------------------------------------------------------------------
# .at[] updates

def test_spec_at_updates():
  x = jnp.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
  updated = x.at[0, 0].set(3.0)
  assert str(updated) == "[[3. 2. 3. 4.]\n [5. 6. 7. 8.]]"
  assert str(x) == "[[1. 2. 3. 4.]\n [5. 6. 7. 8.]]"
  y = jnp.ones((5, 6)).at[::2, 3:].add(7.0)
  expected = np.ones((5, 6), np.float32)
  expected[::2, 3:] += 7
  np.testing.assert_array_equal(np.asarray(y), expected)
  assert str(jnp.zeros((3, 3)).at[1, :].set(1.0)) == ("[[0. 0. 0.]\n [1. 1. 1.]\n [0. 0. 0.]]")
  a = jnp.arange(5, dtype=jnp.int32)
  assert a.at[4].set(10).tolist() == [0, 1, 2, 3, 10]
  assert a.at[4].add(6).tolist() == [0, 1, 2, 3, 10]
  assert a.at[4].max(20).tolist() == [0, 1, 2, 3, 20]
  assert a.at[4].min(-1).tolist() == [0, 1, 2, 3, -1]


UPDATE_INDICES = [1, -1, (1, 2), slice(1, 3), slice(None, None, 2), slice(None, None, -1),
                  (slice(3, 0, -2), 1), (Ellipsis, 0), (None, 2), (slice(None), slice(1, 5, 3)),
                  (2, slice(None, None, -2)), ()]


@pytest.mark.oracle
@pytest.mark.parametrize("index", UPDATE_INDICES, ids=repr)
@pytest.mark.parametrize("op", ["set", "add", "subtract", "multiply", "mul", "divide", "power",
                                "min", "max"])
def test_at_updates_like_oracle(index, op):
  x = np.arange(4 * 6, dtype=np.float32).reshape(4, 6) / 4 - 2
  both(lambda m, x: getattr(x.at[index], op)(1.5), x)
  view = np.asarray(jnp.asarray(x)[index])
  update = np.linspace(-2, 2, view.size, dtype=np.float32).reshape(view.shape)
  both(lambda m, x, u: getattr(x.at[index], op)(u), x, update)


@pytest.mark.oracle
def test_at_update_dtypes_like_oracle():
  i = np.arange(6, dtype=np.int32)
  both(lambda m, x: x.at[1].set(5.7), i)
  both(lambda m, x: x.at[1].add(5.7), i)
  both(lambda m, x: x.at[1].divide(3), i)
  both(lambda m, x: x.at[2].power(3), i)
  both(lambda m, x: x.at[2:].mul(3), i)
  both(lambda m: m.array(1.0).at[()].set(2))
  both(lambda m: m.ones(3, bool).at[1].set(False))
  with pytest.warns(FutureWarning, match="scatter inputs have incompatible types: cannot safely "
                    "cast value from dtype=float32 to dtype=int32"):
    jnp.arange(3).at[1].set(2.5)


@pytest.mark.oracle
@pytest.mark.parametrize("index", [6, -7, 100, (slice(None), 9), (2, -9)], ids=repr)
def test_at_out_of_bounds_like_oracle(index):
  x = np.arange(24, dtype=np.float32).reshape(4, 6) if isinstance(index, tuple) else \
      np.arange(6, dtype=np.float32)
  both(lambda m, x: x.at[index].set(-1.0), x)
  both(lambda m, x: x.at[index].add(-1.0), x)
  both(lambda m, x: x.at[index].set(-1.0, mode="clip"), x)
  both(lambda m, x: x.at[index].get(), x)
  both(lambda m, x: x.at[index].get(mode="fill", fill_value=-3.0), x)
  both(lambda m, x: x.at[index].get(mode="fill"), x)


@pytest.mark.oracle
def test_at_get_fill_defaults_like_oracle():
  both(lambda m: m.arange(3).at[5].get(mode="fill"))
  both(lambda m: m.arange(3, dtype=m.uint8).at[5].get(mode="fill"))
  both(lambda m: m.ones(3, bool).at[5].get(mode="fill"))
  both(lambda m: m.arange(12.0).reshape(3, 4).at[5, 1:].get(mode="fill", fill_value=-1))


@pytest.mark.parametrize("i", [-5, -4, -1, 0, 3, 4, 10])
def test_traced_index_updates_drop_out_of_bounds(i):
  x = jnp.zeros(4)
  expected = np.zeros(4, np.float32)
  if -4 <= i < 4:
    expected[i] = 9.0
  np.testing.assert_array_equal(np.asarray(jit(lambda x, i: x.at[i].set(9.0))(x, i)), expected)
  np.testing.assert_array_equal(np.asarray(x.at[i].set(9.0)), expected)
  clipped = np.zeros(4, np.float32)
  clipped[min(max(i + 4 if i < 0 else i, 0), 3)] = 9.0
  np.testing.assert_array_equal(
      np.asarray(jit(lambda x, i: x.at[i].set(9.0, mode="clip"))(x, i)), clipped)
  fill = jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0))(x + 2, i)
  assert float(fill) == (2.0 if -4 <= i < 4 else -1.0)


def test_traced_index_updates_with_slices():
  x = jnp.zeros((3, 4))
  out = jit(lambda x, i: x.at[i, 1:3].add(1.0))(x, 2)
  expected = np.zeros((3, 4), np.float32)
  expected[2, 1:3] += 1
  np.testing.assert_array_equal(np.asarray(out), expected)
  out = jit(lambda x, i, u: x.at[::2, i].set(u))(x, -1, jnp.array([5.0, 6.0]))
  expected = np.zeros((3, 4), np.float32)
  expected[::2, -1] = [5, 6]
  np.testing.assert_array_equal(np.asarray(out), expected)


def test_at_updates_through_boolean_masks():
  x = jnp.arange(12.0).reshape(3, 4)
  expected = np.arange(12.0).reshape(3, 4)
  expected[expected > 5] = 0
  np.testing.assert_array_equal(np.asarray(x.at[x > 5].set(0.0)), expected)
  rows = jnp.array([True, False, True])
  new = jnp.array([[1.0, 2, 3, 4], [5, 6, 7, 8]])
  expected = np.arange(12.0).reshape(3, 4)
  expected[[0, 2]] = np.asarray(new)
  np.testing.assert_array_equal(np.asarray(x.at[rows].set(new)), expected)
  expected = np.arange(12.0).reshape(3, 4)
  expected[:, np.array([True, False, False, True])] += 10
  np.testing.assert_array_equal(
      np.asarray(x.at[:, jnp.array([True, False, False, True])].add(10.0)), expected)
  with pytest.raises(errors.NonConcreteBooleanIndexError):
    jit(lambda x: x.at[x > 5].set(0.0))(x)


def test_at_update_shape_errors_and_modes():
  x = jnp.zeros((3, 4))
  with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
    x.at[1].set(jnp.ones((1, 4)))
  with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                     r"type=float32\[3,4\] and requested type=float32\[2,4\]"):
    x.at[1:3].set(jnp.ones((3, 4)))
  with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
    x.at[1].get(mode="bogus")
  np.testing.assert_allclose(np.asarray(jnp.arange(3.0).at[1].apply(jnp.sin)),
                             [0.0, np.sin(1.0), 2.0], rtol=1e-6)


def test_at_helper_reprs():
  x = jnp.arange(3.0)
  assert repr(x.at) == "_IndexUpdateHelper(Array([0., 1., 2.], dtype=float32))"
  assert repr(x.at[1:]) == ("_IndexUpdateRef(Array([0., 1., 2.], dtype=float32), "
                            "slice(1, None, None))")


def test_at_updates_under_jit_match_eager():
  x = jnp.arange(24.0).reshape(4, 6)
  f = lambda x: (x.at[1:3, ::-2].multiply(2.0).at[-1].min(3.0).at[0, 0].divide(4.0)
                 .at[:, 2].power(2.0))
  np.testing.assert_array_equal(np.asarray(jit(f)(x)), np.asarray(f(x)))


# ---------------------------------------------------------------------------
# The deprecated purejax.ops functions

def test_ops_index_functions_warn_and_update():
  a = jnp.arange(5, dtype=jnp.int32)
  cases = [(index_ops.index_update, 10, 10), (index_ops.index_add, 6, 10),
           (index_ops.index_max, 20, 20), (index_ops.index_min, -1, -1),
           (index_ops.index_mul, 3, 12)]
  for fun, y, last in cases:
    with pytest.warns(DeprecationWarning, match=f"jax.ops.{fun.__name__} is deprecated"):
      out = fun(a, 4, y)
    assert out.tolist() == [0, 1, 2, 3, last]
  assert index_ops.index[1, :] == (1, slice(None))
  with pytest.warns(DeprecationWarning):
    out = index_ops.index_update(jnp.zeros((2, 3)), index_ops.index[1, :], 1.0)
  assert out.tolist() == [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]


# ---------------------------------------------------------------------------
# Operators

BINARY_OPERATORS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "//": lambda a, b: a // b, "%": lambda a, b: a % b,
    "**": lambda a, b: a ** b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b, "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
    "divmod": divmod,
}


@pytest.mark.oracle
@pytest.mark.parametrize("op", sorted(BINARY_OPERATORS))
@pytest.mark.parametrize("other", ["array", 3, 2.5, True, "numpy", "np_scalar"])
def test_binary_operators_like_oracle(op, other):
  fun = BINARY_OPERATORS[op]
  base = np.array([-3, -1, 2, 5], np.int32)
  if op in ("&", "|", "^", "<<", ">>") and other in (2.5,):
    return
  if op in ("<<", ">>"):
    base = np.abs(base)
  partner = {"array": np.array([1, 2, 3, 1], np.int32), "numpy": np.array([2, 1, 1, 2], np.int32),
             "np_scalar": np.int32(2)}.get(other, other)
  if op == "**" and other is True:
    return
  for x in (base, base.astype(np.float32)):
    if op in ("&", "|", "^", "<<", ">>") and x.dtype.kind == "f":
      continue
    if isinstance(partner, np.ndarray) and other == "numpy":
      both(lambda m, a: fun(a, partner), x)
      both(lambda m, a: fun(partner, a), x)
    else:
      both(lambda m, a, b: fun(a, b), x, partner)
      both(lambda m, a, b: fun(b, a), x, partner)


@pytest.mark.oracle
def test_unary_operators_like_oracle():
  x = np.array([-2.5, 0.0, 1.5], np.float32)
  both(lambda m, a: -a, x)
  both(lambda m, a: +a, x)
  both(lambda m, a: abs(a), x)
  both(lambda m, a: ~a, np.array([0, 5, -3], np.int32))
  both(lambda m, a: ~a, np.array([True, False]))
  both(lambda m: round(m.array(2.567), 2))
  both(lambda m: round(m.array(2.5)))
  both(lambda m, a: a @ a, x)


def test_operators_reject_what_jax_rejects():
  x = jnp.arange(3.0)
  with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'ArrayImpl' and 'str'"):
    x + "a"
  with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'ArrayImpl' and 'list'"):
    x + [1, 2, 3]
  with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*: 'tuple' and 'ArrayImpl'"):
    (1, 2, 3) * x
  with pytest.raises(TypeError):
    x < "a"
  with pytest.raises(TypeError):
    pow(x, 2, 3)
  assert (x == "a") is False and (x != "a") is True
  with pytest.raises(TypeError, match="unhashable"):
    hash(x)


def test_operators_work_on_tracers():
  f = jit(lambda x, y: ((x + 1) * y - x / 2) ** 2 // 3 % 5 + (x > y) - abs(-x) + x @ y)
  x, y = jnp.arange(4.0), jnp.linspace(1.0, 2.0, 4)
  np.testing.assert_allclose(np.asarray(f(x, y)), np.asarray(f._fun(x, y)), rtol=1e-6)


# ---------------------------------------------------------------------------
# Methods

@pytest.mark.oracle
def test_methods_like_oracle():
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8 - 1
  both(lambda m, a: a.reshape(6, 4), x)
  both(lambda m, a: a.reshape((4, -1)), x)
  both(lambda m, a: a.reshape(-1), x)
  both(lambda m, a: a.reshape(4, 6, order="F"), x)
  both(lambda m, a: a.transpose(), x)
  both(lambda m, a: a.transpose(1, 0, 2), x)
  both(lambda m, a: a.transpose((2, 0, 1)), x)
  both(lambda m, a: a.T, x)
  both(lambda m, a: a.mT, x)
  both(lambda m, a: a.real, x)
  both(lambda m, a: a.imag, x)
  both(lambda m, a: a.conj(), x)
  both(lambda m, a: a.real, np.array([1 + 2j], np.complex64))
  both(lambda m, a: a.imag, np.array([1 + 2j], np.complex64))
  both(lambda m, a: a.conjugate(), np.array([1 + 2j], np.complex64))
  both(lambda m, a: a.astype(m.int32), x * 3)
  both(lambda m, a: a.astype("uint8"), np.array([254.0, 255.0, 256.0, 257.0], np.float32))
  both(lambda m, a: a.astype(bool), x)
  both(lambda m, a: a.ravel(), x)
  both(lambda m, a: a.flatten(), x)
  both(lambda m, a: a[:, :1].squeeze(), x)
  both(lambda m, a: a.swapaxes(0, 2), x)
  both(lambda m, a: a.sum(axis=(0, 2)), x)
  both(lambda m, a: a.mean(1, keepdims=True), x)
  both(lambda m, a: a.std(), x)
  both(lambda m, a: a.var(axis=0, ddof=1), x)
  both(lambda m, a: a.max(axis=2), x)
  both(lambda m, a: a.min(), x)
  both(lambda m, a: a.prod(axis=0), x)
  both(lambda m, a: a.argmax(axis=1), x)
  both(lambda m, a: a.argmin(), x)
  both(lambda m, a: a.all(axis=0), x)
  both(lambda m, a: a.any(), x)
  both(lambda m, a: a.dot(a[0, 0]), x)
  both(lambda m, a: a.copy(), x)
  both(lambda m, a: a.clip(-0.5, 0.5), x)
  both(lambda m, a: a.round(1), x)
  both(lambda m: m.array(1.5).astype(m.float32))


def test_astype_warns_for_64_bit_without_x64():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in astype "
                    "is not available"):
    out = jnp.arange(3.0).astype(jnp.float64)
  assert out.dtype == np.float32
  old = config.jax_enable_x64
  config.update("jax_enable_x64", True)
  try:
    assert jnp.arange(3.0).astype(jnp.float64).dtype == np.float64
  finally:
    config.update("jax_enable_x64", old)


def test_methods_work_on_tracers():
  def f(x):
    return (x.reshape(2, 6).T.sum(axis=0) + x.ravel()[:2] + x.at[0].set(1.0).mean()
            + x[1:].max() + x.astype(jnp.int32).argmax() + x.copy().std())

  x = jnp.arange(12.0).reshape(3, 4)
  np.testing.assert_allclose(np.asarray(jit(f)(x)), np.asarray(f(x)), rtol=1e-6)


def test_copy_is_a_new_array_with_the_same_values():
  x = jnp.arange(3.0)
  y = x.copy()
  assert y is not x and y.tolist() == x.tolist()
  z = jnp.array(x)
  assert z is not x and jnp.asarray(x) is x
