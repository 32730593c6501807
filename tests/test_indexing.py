"""NumPy indexing (``x[idx]``), ``x.at[idx]`` updates and the jnp indexing
functions: values against NumPy (in bounds) and JAX (out of bounds, dtypes,
printed jaxprs), under jit, vmap and grad."""
import types
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import jit, make_jaxpr, vmap
from purejax._src import errors
from purejax.test_util import check_grads


def _jax():
  return pytest.importorskip("jax")


X = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
A = lambda *v: np.array(v)   # noqa: E731

# In-bounds indices, compared with NumPy.
INDICES = [
    A(0, 2), (slice(None), A(1, 3)), (A(0, 2), A(1, 3)), (A(0, 2), slice(None), A(1, 3)),
    (A(0, 2), 1), (1, A(0, 2)), (slice(None), 1, A(0, 2)), (Ellipsis, A(0, 2)),
    (None, A(0, 2), None), (A([0, 1], [2, 0]),), (A([0, 1], [2, 0]), A(1, 2)),
    (slice(None, None, -1), A(1, 3)), (A(0, 1), slice(1, None, 2), A(3, 4)), (A(-1, -3),),
    (A(0, 2), None, A(1, 3)), (1, slice(None), A(-1, 0)), (A(0), A(1), A(2)),
    (A(2, 1)[:, None], A(0, 1, 2)), (X[:, 0, 0] > 10,), (X[:, :, 0] > 8,),
    (slice(None), X[0, :, 0] > 6), (X > 30,), (True,), (Ellipsis, True), (False,),
    (A(0, 1), True), (1, False), (A(0, 2), Ellipsis, A(1, 3)), ([0, 2], [1, 2]),
    ([True, False, True],), (np.int32(1), A(0, 2)), (slice(1, 3), A([[0, 1], [2, 3]])),
    (A(0, 1, 2, 1), slice(None, None, 2)), (A(2, 0).astype(np.uint8), slice(4, 0, -3)),
    (slice(None), slice(None), A(4, -5, 2)), (1, 2, 3), (-1, slice(None, None, -2), None),
]


def _as_jnp(idx):
  return tuple(jnp.asarray(i) if isinstance(i, np.ndarray) else i
               for i in (idx if isinstance(idx, tuple) else (idx,)))


@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_indexing_like_numpy(idx):
  expected = X[idx]
  x, jidx = jnp.asarray(X), _as_jnp(idx)
  for out in (x[jidx], jit(lambda x: x[jidx])(x), x.at[jidx].get()):
    assert out.shape == expected.shape and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_traced_integer_arrays_under_jit():
  x = jnp.asarray(X)
  f = jit(lambda x, i, j: x[i, 1:, j])
  i, j = np.array([[0], [2]]), np.array([1, 4, 4])
  np.testing.assert_array_equal(np.asarray(f(x, i, j)), X[i, 1:, j])
  g = jit(lambda x, i: x[:, i, ::-2])
  np.testing.assert_array_equal(np.asarray(g(x, np.array([3, -1]))), X[:, [3, -1], ::-2])


@pytest.mark.oracle
@pytest.mark.parametrize("idx", [
    A(3, -4, 7), (slice(None), A(9, -9)), (A(5, 1), A(-7, 2)), (A(0, 5), Ellipsis, 6),
    (2, A(-5, 4)), (A([[4], [-4]]), slice(None, None, 2), A(9, 1)), (7,), (-4, 1), (0, -6)],
    ids=repr)
def test_out_of_bounds_like_oracle(idx):
  jax = _jax()
  import jax.numpy as jjnp
  jidx = _as_jnp(idx)
  theirs = jjnp.asarray(X)[tuple(jjnp.asarray(i) if isinstance(i, np.ndarray) else i
                                 for i in (idx if isinstance(idx, tuple) else (idx,)))]
  for ours in (jnp.asarray(X)[jidx], jit(lambda x: x[jidx])(jnp.asarray(X))):
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
  for mode in ("fill", "clip", "promise_in_bounds"):
    ours = jnp.asarray(X).at[jidx].get(mode=mode, fill_value=-1)
    np.testing.assert_array_equal(np.asarray(ours),
                                  np.asarray(jjnp.asarray(X).at[idx].get(mode=mode,
                                                                         fill_value=-1)))
  del jax


def test_spec_out_of_bounds_facts():
  assert int(jnp.arange(10)[11]) == 9
  assert int(jnp.arange(10)[-11]) == 0
  assert int(jnp.arange(10)[jnp.array([-11, 12])][1]) == 9
  assert np.isnan(float(jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan)))
  assert jnp.arange(10).at[jnp.array([3, 11])].get(mode="fill").tolist() == [3, -2 ** 31]
  assert jnp.arange(5).at[jnp.array([-1])].get(wrap_negative_indices=False).tolist() == [0]


def test_index_errors():
  x = jnp.asarray(X)
  cases = [
      (1.5, TypeError, "Indexer must have integer or boolean type, got indexer with type "
                       "float64"),
      (jnp.array(1.5), TypeError, "got indexer with type float32"),
      ("a", TypeError, "JAX does not support string indexing; got idx='a'"),
      ([0, 1], TypeError, r"use `arr\[array\(seq\)\]` instead"),
      ([0, slice(None)], TypeError, r"use `arr\[tuple\(seq\)\]` instead"),
      ((0, 1, 2, 3), IndexError, "Too many indices: array is 3-dimensional, but 4 were"),
      ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis"),
      (object(), IndexError, "only integers, slices"),
      (slice(1.5, 3), TypeError, "'float' object cannot be interpreted as an integer"),
      (slice(None, None, 0), ValueError, "slice step cannot be zero"),
      (jnp.array([True, False]), IndexError, "boolean index did not match shape of indexed "
                                             r"array in index 0: got \(2,\), expected \[3\]"),
  ]
  for idx, error, message in cases:
    with pytest.raises(error, match=message):
      x[idx]
  with pytest.raises(IndexError, match="index is out of bounds for axis 0 with size 0"):
    jnp.zeros((0, 3))[1]
  with pytest.raises(TypeError, match=r"Slice size at index 0 in gather op is out of range, "
                     r"must be within \[0, 0 \+ 1\), got 1\."):
    jnp.zeros((0, 3))[jnp.array([0, 1]), 1]
  with pytest.raises(IndexError, match=r"Slice entries must be static integers\. Got "
                     r"slice\(JitTracer\(~int32\[\]\), 3, None\) at position 0"):
    jit(lambda x, i: x[i:3])(x, 1)
  with pytest.raises(errors.NonConcreteBooleanIndexError):
    jit(lambda x: x[x > 3])(x)
  with pytest.raises(errors.NonConcreteBooleanIndexError):
    jit(lambda x: x.at[x > 3].set(0.0))(x)
  assert jnp.zeros(0)[jnp.array([], jnp.int32)].shape == (0,)


@pytest.mark.parametrize("idx", [(slice(None), A(1, 3, 1)), (A(0, 2), 1, A(4, 0)),
                                 (A([1], [2]), slice(None, None, -2)),
                                 (slice(None), X[0, :, 0] > 2)],
                         ids=repr)
def test_vmap_indexing(idx):
  xs = np.stack([X + k for k in range(2)])
  jidx = _as_jnp(idx)
  out = vmap(lambda x: x[jidx])(jnp.asarray(xs))
  np.testing.assert_array_equal(np.asarray(out), np.stack([x[idx] for x in xs]))


def test_vmap_over_indices():
  x = jnp.asarray(X)
  ii = np.array([[0, 2], [1, 1], [2, 0]])
  np.testing.assert_array_equal(np.asarray(vmap(lambda i: x[i, 1:3])(ii)),
                                np.stack([X[i, 1:3] for i in ii]))
  np.testing.assert_array_equal(np.asarray(vmap(lambda x, i: x[:, i])(x, ii)),
                                np.stack([X[k][:, ii[k]] for k in range(3)]))
  np.testing.assert_array_equal(np.asarray(vmap(lambda i: x[i])(np.array([0, 5, -1]))),
                                X[[0, 2, 2]])
  upd = vmap(lambda x, i: x.at[i].add(1.0))(x, ii)
  expected = X.copy()
  for k in range(3):
    np.add.at(expected[k], ii[k], 1.0)
  np.testing.assert_array_equal(np.asarray(upd), expected)


@pytest.mark.parametrize("fun", [
    lambda x: x[jnp.array([0, 2, 2])],
    lambda x: x[jnp.array([0, 2]), :, jnp.array([1, 4])],
    lambda x: x[1:, ::-2, jnp.array([[3], [0]])],
    lambda x: x.at[jnp.array([0, 2, 0])].add(x[1] * 2),
    lambda x: x.at[jnp.array([0, 2, 0])].set(x[1] * 2),
    lambda x: x.at[jnp.array([0, 1]), jnp.array([1, 3])].mul(3.0),
    lambda x: x.at[jnp.array([2, 2])].max(x[0]),
    lambda x: x.at[1:, 2].set(x[0, :2, :1]),
    lambda x: x.at[jnp.array([0, 5])].get(mode="fill", fill_value=0.0),
    lambda x: x.at[jnp.array([0, 5])].add(x[:2]),
    lambda x: x.at[jnp.array([0, 5])].set(x[:2], mode="clip"),
    lambda x: x.at[0].divide(x[1] + 3),
], ids=range(12))
def test_grads_through_indexing(x64, fun):
  x = np.random.RandomState(0).randn(3, 4, 5)
  check_grads(lambda x: fun(jnp.asarray(x)), (x,), order=2, modes=("fwd", "rev"))


# ---------------------------------------------------------------------------
# .at[] updates

AT_OPS = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]
_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "min": np.minimum, "max": np.maximum}


def numpy_update(x, idx, op, y):
  """NumPy's ``x[idx] op= y``, repeated indices applied one by one."""
  out = x.copy()
  if op == "set":
    out[idx] = y
  elif op in ("divide", "power"):
    factors = np.ones_like(x)
    np.multiply.at(factors, idx, y)
    out = x / factors if op == "divide" else x ** factors
  else:
    _UFUNCS[op].at(out, idx, y)
  return out


# In-bounds indices (with repeats), compared with NumPy.
AT_INDICES = [A(0, 2, 0), (A(0, 2, 0), A(1, 1, 1)), (slice(None), A(3, -1, 3)),
              (1, A([[0, 1], [1, 2]])), (X[:, :, 0] > 20,), (slice(None, None, -1), A(0, 0)),
              (Ellipsis, A(2, 2, 3)), (slice(1, None), -3), (A(1, 2), slice(None, None, 2))]


@pytest.mark.parametrize("idx", AT_INDICES, ids=repr)
def test_at_updates_like_numpy(idx):
  x = X[:, :, 0] / 7 + 0.5
  shape = x[idx].shape
  y = np.arange(1.0, 1.0 + int(np.prod(shape)), dtype=np.float32).reshape(shape) / 4
  jidx = _as_jnp(idx)
  for op in AT_OPS:
    expected = numpy_update(x, idx, op, y)
    ours = getattr(jnp.asarray(x).at[jidx], op)(jnp.asarray(y))
    assert ours.dtype == np.float32 and ours.shape == x.shape
    np.testing.assert_allclose(np.asarray(ours), expected, rtol=1e-6)
  traced = jit(lambda x, y: x.at[jidx].add(y))(jnp.asarray(x), jnp.asarray(y))
  np.testing.assert_allclose(np.asarray(traced), numpy_update(x, idx, "add", y), rtol=1e-6)


def _both(fun, *args):
  """fun(jnp, *args) with purejax and JAX agree (values, dtype, weak type, shape)."""
  _jax()
  import jax.numpy as jjnp
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    theirs = fun(jjnp, *[jjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    ours = fun(jnp, *[jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
  assert (ours.dtype, ours.weak_type, ours.shape) == (theirs.dtype, theirs.weak_type,
                                                      theirs.shape)
  np.testing.assert_allclose(np.asarray(ours, np.float64), np.asarray(theirs, np.float64),
                             rtol=1e-6, equal_nan=True)


@pytest.mark.oracle
@pytest.mark.parametrize("idx", [A(5, -4, 1), (slice(None), A(3, -1, 5)), (True, 1), 7,
                                 (A(2, 9), None, A(-5, 0))], ids=repr)
def test_at_out_of_bounds_like_oracle(idx):
  x, xi = X[:, :, 0] / 7 - 1, X[:, :, 1].astype(np.int32) - 9
  _both(lambda m, x: x.at[idx].set(2), x)
  _both(lambda m, x: x.at[idx].add(2.5, mode="clip"), xi)
  _both(lambda m, x: x.at[idx].max(2, mode="promise_in_bounds"), xi)
  _both(lambda m, x: x.at[idx].apply(lambda v: v * 2 + 1), x)
  _both(lambda m, x: x.at[idx].get(mode="fill"), xi)


@pytest.mark.oracle
def test_at_dtype_rules_like_oracle():
  i, b = np.arange(6, dtype=np.int32), np.zeros(4, bool)
  _both(lambda m, x: x.at[A(1, 1)].add(True), i)
  _both(lambda m, x: x.at[A(1, 2)].set(5.7), i)
  _both(lambda m, x: x.at[A(1, 2)].divide(2), i)
  _both(lambda m, x: x.at[A(0, 3)].max(True), b)
  _both(lambda m: m.arange(5, dtype=m.uint8).at[A(1)].add(-1))
  _both(lambda m, x: x.at[0].set([7, 8]), X[:, :2, 0])
  _both(lambda m: m.arange(3.0).at[A(2, 0)].set(m.float16(1.5)))
  with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
    jnp.arange(3).at[jnp.array([1])].set(2.5)
  with pytest.raises(TypeError, match="add does not accept dtype bool"):
    jnp.zeros(3, bool).at[0].add(True)


def test_repeated_indices():
  x = jnp.zeros(5)
  idx = jnp.array([1, 1, 3, 1])
  assert x.at[idx].add(1.0).tolist() == [0, 3, 0, 1, 0]
  assert x.at[idx].add(jnp.array([1.0, 2.0, 3.0, 4.0])).tolist() == [0, 7, 0, 3, 0]
  assert (x + 2).at[idx].multiply(2.0).tolist() == [2, 16, 2, 4, 2]
  assert x.at[idx].set(jnp.array([1.0, 2.0, 3.0, 4.0])).tolist() == [0, 4, 0, 3, 0]
  assert (x + 1).at[idx].apply(lambda v: v * 3).tolist() == [1, 27, 1, 3, 1]
  assert x.at[idx].min(jnp.array([-1.0, -5.0, 2.0, -2.0])).tolist() == [0, -5, 0, 0, 0]
  assert jit(lambda x, i: x.at[i].add(1.0))(x, idx).tolist() == [0, 3, 0, 1, 0]


def test_update_modes():
  x = jnp.arange(5.0)
  assert x.at[jnp.array([1, 7])].set(-1.0).tolist() == [0, -1, 2, 3, 4]
  assert x.at[jnp.array([1, 7])].set(-1.0, mode="clip").tolist() == [0, -1, 2, 3, -1]
  assert x.at[jnp.array([1, 7])].set(-1.0, mode="drop").tolist() == [0, -1, 2, 3, 4]
  assert x.at[-1].set(9.0, wrap_negative_indices=False).tolist() == [0, 1, 2, 3, 4]
  assert x.at[jnp.array([0, 6])].get(mode="fill", fill_value=np.float32(7)).tolist() == [0, 7]
  with pytest.raises(ValueError, match='Unknown gather mode "bad"'):
    x.at[1].set(0.0, mode="bad")
  with pytest.raises(ValueError, match="fill_value argument to indexed get"):
    x.at[1].get(mode="fill", fill_value=jnp.ones(2))


def test_deprecated_ops_index_api():
  from purejax import ops
  x = jnp.zeros(4)
  with pytest.warns(DeprecationWarning, match=r"use x\.at\[idx\]\.set\(y\)"):
    out = ops.index_update(x, ops.index[jnp.array([0, 2])], 5.0)
  assert out.tolist() == [5, 0, 5, 0]
  with pytest.warns(DeprecationWarning):
    assert ops.index_add(x, jnp.array([1, 1]), 1.0).tolist() == [0, 2, 0, 0]
  with pytest.warns(DeprecationWarning):
    assert ops.index_max(x, ops.index[1:3], 3.0).tolist() == [0, 3, 3, 0]
  with pytest.warns(DeprecationWarning):
    assert ops.index_mul(x + 2, 0, 3.0).tolist() == [6, 2, 2, 2]
  with pytest.warns(DeprecationWarning):
    assert ops.index_min(x, ops.index[..., -1], -1.0).tolist() == [0, 0, 0, -1]


# ---------------------------------------------------------------------------
# Printed jaxprs equal JAX's

JAXPR_CASES = [
    (lambda x, i: x[i], [(3, 4), (2, "int32")]),
    (lambda x, i: x[i, 1:3], [(3, 4), 1]),
    (lambda x, i: x[:, i], [(3, 4), (2, "int32")]),
    (lambda x, i: x[i, 1], [(3, 4), (2, "int32")]),
    (lambda x, i: x[::-1, i], [(3, 4), (2, "int32")]),
    (lambda x, i: x[i, ::2], [(3, 4), 1]),
    (lambda x, i: x[i, :, i], [(3, 4, 5), (2, "int32")]),
    (lambda x, i: x[None, i], [(3, 4, 5), (2, 2, "int32")]),
    (lambda x, i: x.at[i].add(1.0), [(3, 4), (2, "int32")]),
    (lambda x, i: x.at[i, 1:].mul(2.0), [(3, 4), (2, "int32")]),
    (lambda x: x.at[1].min(2.0), [(5,)]),
    (lambda x: x.at[1].divide(2.0), [(5,)]),
    (lambda x: x.at[1].apply(jnp.sin), [(5,)]),
    (lambda x: x.at[::-1].add(2.0), [(5,)]),
    (lambda x, i: x.at[i].get(mode="fill"), [(3, 4), (2, "int32")]),
    (lambda x: x.at[7].get(mode="fill", fill_value=-1), [(5,)]),
    (lambda x: x[True], [(3, 4)]),
    (lambda x: x.at[..., 1].set(3), [(3, 4, "int32")]),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(JAXPR_CASES)))
def test_jaxprs_like_oracle(case):
  jax = _jax()
  import jax.numpy as jjnp
  fun, specs = JAXPR_CASES[case]

  def args(m):
    out = []
    for s in specs:
      if isinstance(s, tuple) and s[-1] == "int32":
        out.append(m.arange(int(np.prod(s[:-1])), dtype=m.int32).reshape(s[:-1]) % 3)
      else:
        out.append(m.ones(s) if isinstance(s, tuple) else s)
    return out

  theirs = types.FunctionType(fun.__code__, {**fun.__globals__, "jnp": jjnp})
  assert str(make_jaxpr(fun)(*args(jnp))) == str(jax.make_jaxpr(theirs)(*args(jjnp)))


# ---------------------------------------------------------------------------
# take / put and friends

M = np.arange(12, dtype=np.float32).reshape(3, 4) - 4


def _same(ours, expected):
  expected = np.asarray(expected)
  assert ours.shape == expected.shape, (ours.shape, expected.shape)
  np.testing.assert_array_equal(np.asarray(ours), expected)


def test_take_like_numpy():
  idx = np.array([[0, 2], [3, -1]])
  _same(jnp.take(M, jnp.asarray(idx)), np.take(M, idx))
  _same(jnp.take(M, idx, axis=1), np.take(M, idx, axis=1))
  _same(jnp.take(M, np.array([5, -9, 1]), axis=0, mode="clip"),
        np.take(M, [5, -9, 1], axis=0, mode="clip"))
  _same(jnp.take(M, np.array([5, -9, 1]), axis=1, mode="wrap"),
        np.take(M, [5, -9, 1], axis=1, mode="wrap"))
  _same(jnp.take(M, 3), np.take(M, 3))
  # wrap makes the axis size in the indices' dtype, as JAX: 257 overflows int8
  long = np.arange(257.0, dtype=np.float32)
  _same(jnp.take(long[:100], np.array([-1, 105], np.int8), mode="wrap"), long[[99, 5]])
  with pytest.raises(OverflowError, match="257 out of bounds for int8"):
    jnp.take(long, np.array([1], np.int8), mode="wrap")
  out = jnp.take(M, jnp.array([1, 20, -30]))
  assert out.dtype == np.float32 and np.isnan(np.asarray(out)[1:]).all()
  assert jnp.take(M.astype(np.int32), jnp.array([20])).tolist() == [-2 ** 31]
  assert jnp.take(M, jnp.array([20]), axis=1, fill_value=-7).tolist() == [[-7]] * 3
  _same(jit(lambda m, i: jnp.take(m, i, axis=1, mode="clip"))(M, np.array([0, 9])),
        M[:, [0, 3]])
  with pytest.raises(NotImplementedError, match="'raise' mode to jnp.take"):
    jnp.take(M, jnp.array([1]), mode="raise")
  with pytest.raises(ValueError, match="Invalid mode 'bad' for np.take"):
    jnp.take(M, jnp.array([1]), mode="bad")


def test_take_and_put_along_axis_like_numpy():
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  for axis, idx in [(2, np.array([[[0, 3]], [[2, -1]]])), (1, np.array([[[2], [0]]])),
                    (0, np.array([[[1, 0, 1, 1]]])), (None, np.array([0, 23, -1]))]:
    expected = np.take_along_axis(x, idx, axis)
    _same(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=axis), expected)
    if axis is not None:
      values = -np.arange(idx.size, dtype=np.float32).reshape(idx.shape) - 1
      expected = x.copy()
      np.put_along_axis(expected, idx, values, axis)
      _same(jnp.put_along_axis(x, idx, values, axis, inplace=False), expected)
  out = jnp.take_along_axis(M, jnp.array([[5, -7, 1, 0]]), axis=0)
  assert np.isnan(np.asarray(out)[0, :2]).all()
  _same(jnp.take_along_axis(M, jnp.array([[5, -7, 1, 0]]), axis=0, mode="clip"),
        [[M[2, 0], M[0, 1], M[1, 2], M[0, 3]]])
  g = purejax.grad(lambda m: jnp.take_along_axis(m, jnp.array([[1], [1], [0]]), 1).sum())(M)
  _same(g, np.eye(4, dtype=np.float32)[[1, 1, 0]])
  with pytest.raises(ValueError, match="indices and arr must have the same number of dimensions"):
    jnp.take_along_axis(M, jnp.array([0]), axis=0)
  with pytest.raises(ValueError, match="Pass inplace=False"):
    jnp.put_along_axis(M, jnp.array([[0]]), 1.0, axis=1)


def test_put_place_fill_diagonal_like_numpy():
  expected = M.copy()
  np.put(expected, [0, 7, 11], [10, 20])
  _same(jnp.put(M, jnp.array([0, 7, 11]), jnp.array([10.0, 20.0]), inplace=False), expected)
  # As in JAX, indices past the end go to the last element.
  assert jnp.put(jnp.zeros(5), jnp.array([0, 9]), 1.0, inplace=False).tolist() == [1, 0, 0,
                                                                                   0, 1]
  assert jnp.put(jnp.zeros(5), jnp.array([9]), 1.0, mode="clip",
                 inplace=False).tolist() == [0, 0, 0, 0, 1]
  assert jnp.put(jnp.zeros(5), jnp.array([-1]), 1.0, mode="wrap",
                 inplace=False).tolist() == [0, 0, 0, 0, 1]
  expected = M.copy()
  np.place(expected, M > 1, [1, 3, 5])
  _same(jnp.place(M, M > 1, jnp.array([1.0, 3.0, 5.0]), inplace=False), expected)
  for val in (7.0, np.array([1.0, 2.0])):
    expected = M.copy()
    np.fill_diagonal(expected, val)
    _same(jnp.fill_diagonal(M, val, inplace=False), expected)
  cube = np.zeros((3, 3, 3), np.float32)
  np.fill_diagonal(cube, 1)
  _same(jnp.fill_diagonal(jnp.zeros((3, 3, 3)), 1, inplace=False), cube)
  for fun in (lambda: jnp.put(M, jnp.array([0]), 1.0), lambda: jnp.place(M, M > 1, 1.0)):
    with pytest.raises(ValueError, match="Pass inplace=False"):
      fun()
  with pytest.raises(NotImplementedError, match="must use inplace=False"):
    jnp.fill_diagonal(M, 1.0)


def test_choose_select_compress_extract_like_numpy():
  a = np.array([[0, 1, 2], [2, 1, 0]])
  choices = [np.arange(3), np.arange(3) * 10, np.arange(3) * 100]
  _same(jnp.choose(a, [jnp.asarray(c) for c in choices]), np.choose(a, choices))
  for mode in ("wrap", "clip"):
    _same(jnp.choose(np.array([0, 4, -1]), choices, mode=mode),
          np.choose([0, 4, -1], choices, mode=mode))
  with pytest.raises(ValueError, match="invalid entry in choice array"):
    jnp.choose(jnp.array([3]), choices)
  conds, picks = [M < -2, M > 4], [M, M * 10]
  _same(jnp.select(conds, picks, default=-1), np.select(conds, picks, default=-1))
  _same(jit(lambda m: jnp.select([m < -2, m > 4], [m, m * 10]))(M), np.select(conds, picks))
  with pytest.raises(ValueError, match="condlist must have length equal to choicelist"):
    jnp.select([M > 0], [M, M])
  for cond, axis in [([True, False, True], 0), ([0, 1, 1, 0], 1), ([0, 1, 1, 0, 1], None)]:
    _same(jnp.compress(jnp.asarray(cond), M, axis=axis), np.compress(cond, M, axis=axis))
  _same(jnp.compress(jnp.array([True, False, True]), M, axis=0, size=3, fill_value=-1),
        np.concatenate([M[[0, 2]], np.full((1, 4), -1, np.float32)]))
  _same(jit(lambda m: jnp.compress(m[0] > -4, m, axis=1, size=2))(M), M[:, 1:3])
  _same(jnp.extract(M > 5, M), np.extract(M > 5, M))
  _same(jnp.extract(M > 5, M, size=3, fill_value=-2), [6, 7, -2])


@pytest.mark.parametrize("a", [np.array([0, 1, 0, 3, 0, 5]), np.array([[0, 1], [2, 0]]),
                               np.zeros(3), np.array([[True, False, True]]), np.zeros((2, 0))],
                         ids=["1d", "2d", "zeros", "bool", "empty"])
def test_nonzero_family_like_numpy(a):
  for ours, expected in zip(jnp.nonzero(a), np.nonzero(a)):
    assert ours.dtype == np.int32
    _same(ours, expected)
  _same(jnp.argwhere(a), np.argwhere(a))
  _same(jnp.flatnonzero(a), np.flatnonzero(a))
  count = int(np.count_nonzero(a))
  for size in (2, 5):
    padded = jit(lambda a: jnp.nonzero(a, size=size, fill_value=-1))(a)
    for ours, expected in zip(padded, np.nonzero(a)):
      full = list(expected[:size]) + [-1] * max(0, size - count) if a.size else [0] * size
      assert ours.tolist() == full
    assert jnp.argwhere(a, size=size).shape == (size, a.ndim)


def test_nonzero_errors_and_vmap():
  with pytest.raises(errors.ConcretizationTypeError, match="The size argument of "
                     "jnp.nonzero must be statically specified"):
    jit(jnp.nonzero)(jnp.arange(3))
  with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
    jnp.nonzero(3)
  assert jnp.argwhere(3).shape == (1, 0) and jnp.argwhere(0).shape == (0, 0)
  out = vmap(lambda r: jnp.nonzero(r, size=2, fill_value=9)[0])(jnp.array([[0, 1, 1],
                                                                          [1, 0, 0]]))
  assert out.tolist() == [[1, 2], [0, 9]]
  i, j = jnp.nonzero(jnp.array([[0, 1], [2, 0]]), size=3, fill_value=(7, 8))
  assert i.tolist() == [0, 1, 7] and j.tolist() == [1, 0, 8]


def test_index_tricks_like_numpy():
  a = np.arange(12).reshape(3, 4)
  _same(jnp.asarray(a)[jnp.ix_(jnp.array([0, 2]), jnp.array([1, 3]))], a[np.ix_([0, 2],
                                                                                [1, 3])])
  _same(jnp.indices((2, 3)), np.indices((2, 3)))
  for ours, expected in zip(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True)):
    _same(ours, expected)
  assert jnp.indices((2, 3), dtype=jnp.int16).dtype == np.int16
  _same(jnp.mgrid[0:3, 0:4], np.mgrid[0:3, 0:4])
  np.testing.assert_allclose(np.asarray(jnp.mgrid[0:1:5j, 2:4]), np.mgrid[0:1:5j, 2:4],
                             rtol=1e-6)
  for ours, expected in zip(jnp.ogrid[0:3, 0:4:2], np.ogrid[0:3, 0:4:2]):
    _same(ours, expected)
  _same(jnp.r_[jnp.array([1, 2]), 3, jnp.array([4, 5])], np.r_[[1, 2], 3, [4, 5]])
  _same(jnp.r_[0:3, 5], np.r_[0:3, 5])
  for directive in ("0,2", "1,2,0", "r", "c"):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore", PendingDeprecationWarning)   # NumPy's np.matrix
      expected = np.asarray(np.r_[directive, [1, 2], [3, 4]])
    _same(jnp.r_[directive, jnp.array([1, 2]), jnp.array([3, 4])], expected)
  _same(jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])], np.c_[[1, 2], [3, 4]])
  _same(jnp.c_[jnp.ones((2, 2)), jnp.array([3.0, 4.0])], np.c_[np.ones((2, 2)), [3, 4]])
  _same(jnp.arange(10)[jnp.s_[2:8:3]], np.arange(10)[2:8:3])
  assert jnp.index_exp[1:2, None] == np.index_exp[1:2, None]
  with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
    jnp.r_[1, "r"]


def test_diagonal_and_triangle_indices_like_numpy():
  for ours, expected in [(jnp.diag_indices(3), np.diag_indices(3)),
                         (jnp.diag_indices(2, 3), np.diag_indices(2, 3)),
                         (jnp.diag_indices_from(jnp.ones((3, 3))), np.diag_indices(3)),
                         (jnp.tril_indices(3), np.tril_indices(3)),
                         (jnp.tril_indices(3, -1, 4), np.tril_indices(3, -1, 4)),
                         (jnp.triu_indices(4, 1), np.triu_indices(4, 1)),
                         (jnp.triu_indices(3, 0, 5), np.triu_indices(3, 0, 5)),
                         (jnp.tril_indices_from(jnp.ones((3, 4)), 1),
                          np.tril_indices_from(np.ones((3, 4)), 1)),
                         (jnp.triu_indices_from(jnp.ones((4, 2))),
                          np.triu_indices_from(np.ones((4, 2)))),
                         (jnp.mask_indices(3, lambda m, k: jnp.where(
                             jnp.arange(3)[:, None] + k <= jnp.arange(3), m, 0), 1),
                          np.mask_indices(3, np.triu, 1))]:
    assert len(ours) == len(expected)
    for o, e in zip(ours, expected):
      assert o.dtype == np.int32
      _same(o, e)
  with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
    jnp.diag_indices_from(jnp.ones((3, 2)))
  with pytest.raises(ValueError, match="Only 2-D inputs are accepted"):
    jnp.triu_indices_from(jnp.ones(3))


def test_ravel_and_unravel_like_numpy():
  rows, cols = np.array([0, 1, 2]), np.array([3, 0, 1])
  for order in ("C", "F"):
    _same(jnp.ravel_multi_index((rows, cols), (3, 4), order=order),
          np.ravel_multi_index((rows, cols), (3, 4), order=order))
  bad = (np.array([0, 5, 2]), np.array([3, 0, -1]))
  for mode in ("clip", "wrap"):
    _same(jnp.ravel_multi_index(bad, (3, 4), mode=mode),
          np.ravel_multi_index(bad, (3, 4), mode=mode))
  with pytest.raises(ValueError, match="invalid entry in coordinates array"):
    jnp.ravel_multi_index(bad, (3, 4))
  with pytest.raises(errors.ConcretizationTypeError):
    jit(lambda i, j: jnp.ravel_multi_index((i, j), (3, 4)))(rows, cols)
  flat = np.array([0, 5, 11])
  for ours, expected in zip(jnp.unravel_index(flat, (3, 4)), np.unravel_index(flat, (3, 4))):
    _same(ours, expected)
  # Out of bounds: clamped to the first or last element, as in JAX.
  assert [c.tolist() for c in jnp.unravel_index(jnp.array([12, -1, -20]), (3, 4))] == [
      [2, 2, 0], [3, 3, 0]]
  assert [int(c) for c in jnp.unravel_index(7, (3, 4))] == [1, 3]


@pytest.mark.oracle
def test_index_functions_dtypes_like_oracle():
  x = np.arange(12, dtype=np.int32).reshape(3, 4)
  _both(lambda m, x: m.take(x, m.array([1, 20])), x)
  _both(lambda m, x: m.put(x, m.array([0, 7]), 2.5, inplace=False), x)
  _both(lambda m, x: m.select([x < 3], [x], default=2.5), x)
  _both(lambda m, x: m.argwhere(x > 4, size=3, fill_value=9), x)
  _both(lambda m: m.unravel_index(m.array([0, 12], m.uint8), (3, 4))[1])
  _both(lambda m: m.r_[1, 2.5])


def test_one_argument_where_is_nonzero():
  c = np.array([[1, 0, 2], [0, 0, 3]])
  for got, want in zip(jnp.where(c), np.where(c)):
    np.testing.assert_array_equal(got, want)
  got = purejax.jit(lambda c: jnp.where(c, size=5, fill_value=-1))(c)
  np.testing.assert_array_equal(got[1], [0, 2, 2, -1, -1])
  with pytest.raises(purejax.errors.ConcretizationTypeError):
    purejax.jit(lambda c: jnp.where(c))(c)
  with pytest.raises(ValueError, match="three-term where"):
    jnp.where(c, 1, 2, size=3)


# A signed index type too narrow for the axis: JAX makes the axis size a
# constant of the index type to count negative indices from the end, and
# NumPy's OverflowError stops it; scalar, unsigned and take's indices, and
# non-negative dynamic_slice starts are fine.
_NARROW_CASES = [
    ("getitem", lambda j, x: x[j.numpy.array([1], j.numpy.int8)]),
    ("numpy int8", lambda j, x: x[np.array([1], np.int8)]),
    ("uint8", lambda j, x: x[np.array([1], np.uint8)]),
    ("at get", lambda j, x: x.at[np.array([1], np.int8)].get()),
    ("at set clip", lambda j, x: x.at[np.array([1], np.int8)].set(2., mode="clip")),
    ("scalar int8", lambda j, x: x[np.int8(1)]),
    ("jit", lambda j, x: j.jit(lambda i: x[i])(np.array([1], np.int8))),
    ("take", lambda j, x: j.numpy.take(x, np.array([1], np.int8))),
    ("dynamic_slice", lambda j, x: j.lax.dynamic_slice(x, (np.int8(1),), (2,))),
    ("dynamic_slice negative", lambda j, x: j.lax.dynamic_slice(x, (np.int8(-3),), (2,))),
]


@pytest.mark.parametrize("name,case", _NARROW_CASES, ids=[n for n, _ in _NARROW_CASES])
def test_index_types_too_narrow_for_the_axis(name, case):
  jax = _jax()

  def outcome(j):
    try:
      return np.asarray(case(j, j.numpy.arange(300.0, dtype=np.float32)))
    except OverflowError as e:
      return str(e)
  ours, theirs = outcome(purejax), outcome(jax)
  if isinstance(theirs, str):
    assert ours == theirs
  else:
    np.testing.assert_array_equal(ours, theirs)
