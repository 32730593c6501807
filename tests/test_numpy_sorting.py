"""jnp sorting, searching, set operations, quantiles and histograms: against
NumPy (float64 references) and live JAX, under jit, vmap and grad."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.errors import ConcretizationTypeError
from purejax._src.test_util import check_grads

from conftest import oracle

RNG = np.random.RandomState(0)
INTS = RNG.randint(0, 6, (4, 7)).astype(np.int32)
FLOATS = RNG.randn(3, 4, 5).astype(np.float32)
WITH_NANS = FLOATS.copy()
WITH_NANS[0, 1, 2] = WITH_NANS[1, :, 3] = WITH_NANS[2, 0, :] = np.nan


def assert_same(ours, theirs, tol=0):
  """Same values (NaNs included), dtypes and shapes; tuples compared item by item."""
  if isinstance(theirs, (tuple, list)):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
      assert_same(a, b, tol)
    return
  ours, theirs = np.asarray(ours), np.asarray(theirs)
  assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
  assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
  np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol, equal_nan=True)


def _i32(x):
  return tuple(_i32(v) for v in x) if isinstance(x, tuple) else np.array(x, np.int32)


def same_as_jax(fun, *args, tol=0, **kwargs):
  jax = oracle()
  import jax.numpy as jjnp
  del jax
  assert_same(fun(jnp, *args, **kwargs), fun(jjnp, *args, **kwargs), tol)


# ---------------------------------------------------------------------------
# sort, argsort, lexsort, sort_complex

@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_])
def test_sort_argsort_match_numpy(axis, dtype):
  x = (INTS % 3).astype(dtype)
  assert_same(jnp.sort(x, axis=axis), np.sort(x, axis=axis, kind="stable"))
  want = np.argsort(x, axis=axis, kind="stable").astype(np.int32)
  assert_same(jnp.argsort(x, axis=axis), want)
  # Stable descending keeps equal elements in their original order.
  flipped = np.argsort(-(x.astype(np.int64)), axis=axis, kind="stable").astype(np.int32)
  assert_same(jnp.argsort(x, axis=axis, descending=True), flipped)
  assert_same(jnp.sort(x, axis=axis, descending=True),
              np.flip(np.sort(x, axis=axis), axis=0 if axis is None else axis))


def test_sort_nan_and_errors():
  x = np.array([2., np.nan, -np.inf, 1., np.nan, -0.])
  np.testing.assert_array_equal(jnp.sort(x), [-np.inf, -0., 1., 2., np.nan, np.nan])
  np.testing.assert_array_equal(jnp.argsort(x), [2, 5, 3, 0, 1, 4])
  with pytest.raises(TypeError, match="'kind' argument to sort"):
    jnp.sort(x, kind="stable")
  with pytest.raises(TypeError, match="'order' argument to argsort"):
    jnp.argsort(x, order="a")
  with pytest.raises(TypeError, match="requires ndarray"):
    jnp.sort([3, 1])


def test_lexsort_sort_complex():
  k1, k2 = np.array([1, 5, 1, 4, 3]), np.array([9, 4, 0, 4, 0])
  assert_same(jnp.lexsort((k1, k2)), np.lexsort((k1, k2)).astype(np.int32))
  assert_same(jnp.lexsort([INTS[0], INTS[1], INTS[2]]),
              np.lexsort([INTS[0], INTS[1], INTS[2]]).astype(np.int32))
  assert_same(jnp.lexsort((INTS, INTS % 2), axis=0),
              np.lexsort((INTS, INTS % 2), axis=0).astype(np.int32))
  assert_same(jnp.lexsort((np.int32(1),)), np.int32(0))
  with pytest.raises(TypeError, match="need sequence of keys"):
    jnp.lexsort(())
  with pytest.raises(ValueError, match="same shape"):
    jnp.lexsort((k1, INTS))
  c = np.array([[3 + 1j, 1 - 1j, 1 - 2j], [2., 0., 9.]], np.complex64)
  assert_same(jnp.sort_complex(c), np.sort_complex(c))
  assert_same(jnp.sort_complex(np.array([3, 1, 2], np.float32)),
              np.array([1, 2, 3], np.complex64))


def test_sort_transforms():
  x = jnp.asarray(FLOATS[0])
  assert_same(purejax.jit(lambda x: jnp.argsort(x, axis=0))(x), jnp.argsort(x, axis=0))
  assert_same(purejax.vmap(jnp.sort)(x), np.sort(FLOATS[0], axis=1))
  assert_same(purejax.vmap(jnp.argsort, in_axes=1)(x), np.argsort(FLOATS[0].T).astype(np.int32))
  spaced = jnp.asarray(RNG.permutation(20).reshape(4, 5) * 0.1, np.float32)
  check_grads(lambda x: jnp.sort(x, axis=0) * jnp.linspace(0., 1., 20).reshape(4, 5),
              (spaced,), order=2)
  assert "name=sort" in str(purejax.make_jaxpr(jnp.sort)(x))


# ---------------------------------------------------------------------------
# partition, argpartition: JAX's own results (two top_k's)

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("kth,axis", [(0, -1), (3, -1), (6, -1), (-2, 1), (2, 0)])
def test_partition_properties(dtype, kth, axis):
  x = INTS.astype(dtype)
  out, idx = np.asarray(jnp.partition(x, kth, axis)), np.asarray(jnp.argpartition(x, kth, axis))
  n = x.shape[axis]
  k = kth % n
  srt = np.sort(x, axis=axis)
  take = lambda a, i: np.take(a, [i], axis=axis)
  np.testing.assert_array_equal(take(out, k), take(srt, k))
  np.testing.assert_array_equal(np.sort(out, axis=axis), srt)
  assert np.all(np.take(out, range(k), axis=axis) <= take(out, k))
  assert np.all(np.take(out, range(k + 1, n), axis=axis) >= take(out, k))
  # argpartition's sides need not be in partition's order (as in JAX).
  picked = np.take_along_axis(x, idx, axis=axis)
  np.testing.assert_array_equal(take(picked, k), take(srt, k))
  np.testing.assert_array_equal(np.sort(picked, axis=axis), srt)
  np.testing.assert_array_equal(np.sort(idx, axis=axis),
                                np.broadcast_to(np.arange(n).reshape(
                                    [-1 if d == axis % 2 else 1 for d in range(2)]), x.shape))


# JAX 0.10.2's partition and argpartition of INTS (the same for all three dtypes).
PARTITIONS = {
    (3, -1): ([[0, 1, 3, 3, 5, 4, 3], [0, 0, 2, 3, 5, 4, 4], [0, 1, 1, 1, 5, 5, 2],
               [0, 0, 1, 3, 5, 4, 3]],
              [[2, 6, 3, 4, 0, 1, 5], [4, 5, 2, 0, 1, 3, 6], [2, 1, 3, 5, 0, 4, 6],
               [0, 4, 1, 3, 2, 5, 6]]),
    (1, 0): ([[0, 1, 0, 1, 0, 0, 1], [2, 1, 0, 3, 0, 1, 4], [4, 5, 4, 4, 5, 3, 5],
              [3, 5, 2, 3, 3, 3, 5]],
             [[3, 2, 0, 2, 1, 1, 0], [2, 3, 2, 0, 3, 2, 1], [0, 0, 1, 1, 0, 0, 2],
              [1, 1, 3, 3, 2, 3, 3]]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_partition_matches_jax(dtype):
  x = INTS.astype(dtype)
  for (kth, axis), (values, indices) in PARTITIONS.items():
    assert_same(jnp.partition(x, kth, axis), np.array(values, dtype))
    assert_same(jnp.argpartition(x, kth, axis), np.array(indices, np.int32))


def test_partition_errors_and_transforms():
  with pytest.raises(NotImplementedError, match="complex"):
    jnp.partition(np.ones(3, np.complex64), 1)
  with pytest.raises(TypeError):
    jnp.argpartition(np.array([True, False]), 0)
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.partition(np.ones(3), 3)
  x = jnp.asarray(FLOATS[0])
  assert_same(purejax.vmap(lambda r: jnp.argpartition(r, 2))(x), jnp.argpartition(x, 2))
  check_grads(lambda x: jnp.partition(x, 2), (x,), order=1)


# ---------------------------------------------------------------------------
# searchsorted, digitize

A_SORTED = np.array([-np.inf, -1., 0., 0., 2.5, 3., 3., np.nan], np.float32)
QUERIES = np.array([[-5., -np.inf, 0., 0.1], [3., 7., np.nan, np.inf]], np.float32)


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_methods_agree(method, side):
  want = np.searchsorted(A_SORTED, QUERIES, side=side).astype(np.int32)
  got = jnp.searchsorted(A_SORTED, QUERIES, side=side, method=method)
  assert_same(got, want)
  assert_same(purejax.jit(lambda a, v: jnp.searchsorted(a, v, side, method=method))(
      A_SORTED, QUERIES), want)
  ints = np.array([1, 3, 3, 8], np.int16)
  assert_same(jnp.searchsorted(ints, np.arange(10, dtype=np.int16), side, method=method),
              np.searchsorted(ints, np.arange(10), side).astype(np.int32))
  assert_same(jnp.searchsorted(np.zeros(0), 1.5, method=method), np.int32(0))


def test_searchsorted_sorter_vmap_errors():
  a = np.array([3., 1., 2., 5.], np.float32)
  sorter = np.argsort(a)
  assert_same(jnp.searchsorted(a, np.array([2.5, 0.]), sorter=sorter),
              np.searchsorted(a, np.array([2.5, 0.]), sorter=sorter).astype(np.int32))
  rows = np.sort(RNG.rand(3, 6).astype(np.float32), axis=1)
  vals = RNG.rand(3, 4).astype(np.float32)
  want = np.stack([np.searchsorted(r, v) for r, v in zip(rows, vals)]).astype(np.int32)
  for method in ["scan", "sort", "compare_all"]:
    assert_same(purejax.vmap(lambda r, v: jnp.searchsorted(r, v, method=method))(rows, vals),
                want)
  assert_same(purejax.vmap(lambda v: jnp.searchsorted(rows[0], v))(vals),
              np.searchsorted(rows[0], vals).astype(np.int32))
  with pytest.raises(ValueError, match="1-dimensional"):
    jnp.searchsorted(rows, 1.)
  with pytest.raises(ValueError, match="Unsupported method"):
    jnp.searchsorted(a, 1., method="bisect")


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [[0., 1., 2.5], [3., 1., 0.], [1., 1., 2.]])
def test_digitize(right, bins):
  x = np.array([-1., 0., 0.5, 1., 2.5, 3.], np.float32)
  bins = np.array(bins, np.float32)
  want = np.digitize(x, bins, right=right).astype(np.int32)
  assert_same(jnp.digitize(x, bins, right=right), want)
  assert_same(jnp.digitize(x, bins, right=right, method="compare_all"), want)
  assert_same(purejax.jit(lambda x: jnp.digitize(x, bins, right))(x), want)
  assert_same(jnp.digitize(x, np.zeros(0)), np.zeros(6, np.int32))


# ---------------------------------------------------------------------------
# unique and set operations

def _np_unique(x, **kwargs):
  out = np.unique(x, **kwargs)
  return tuple(o if i == 0 else o.astype(np.int32) for i, o in enumerate(out)) \
      if isinstance(out, tuple) else out


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique_matches_numpy(axis):
  x = INTS % 3
  kw = dict(return_index=True, return_inverse=True, return_counts=True, axis=axis)
  ours, want = jnp.unique(x, **kw), _np_unique(x, **kw)
  assert_same(ours[0], want[0])
  assert_same(ours[1], want[1])
  assert_same(ours[2], want[2].reshape(ours[2].shape))
  assert_same(ours[3], want[3])


UNIQUE_X = np.array([3., 1., np.nan, 1., np.nan, 2.], np.float32)
# JAX 0.10.2's (values, index, inverse, counts).
UNIQUE_CASES = [
    ({}, ([1., 2., 3., np.nan], [1, 5, 0, 2], [2, 0, 3, 0, 3, 1], [2, 1, 1, 2])),
    (dict(equal_nan=False), ([1., 2., 3., np.nan, np.nan], [1, 5, 0, 2, 4],
                             [2, 0, 3, 0, 4, 1], [2, 1, 1, 1, 1])),
    (dict(size=7), ([1., 2., 3., np.nan, 1., 1., 1.], [1, 5, 0, 2, 1, 1, 1],
                    [2, 0, 3, 0, 3, 1], [2, 1, 1, 2, 0, 0, 0])),
    (dict(size=2, fill_value=-1.), ([1., 2.], [1, 5], [2, 0, 3, 0, 3, 1], [2, 1])),
    (dict(size=7, fill_value=-1.), ([1., 2., 3., np.nan, -1., -1., -1.], [1, 5, 0, 2, 1, 1, 1],
                                    [2, 0, 3, 0, 3, 1], [2, 1, 1, 2, 0, 0, 0])),
]


@pytest.mark.parametrize("kwargs,want", UNIQUE_CASES)
def test_unique_nan_and_size(kwargs, want):
  got = jnp.unique(UNIQUE_X, return_index=True, return_inverse=True, return_counts=True,
                   **kwargs)
  assert_same(got, (np.array(want[0], np.float32),) + tuple(np.array(w, np.int32)
                                                          for w in want[1:]))


def test_unique_edge_cases_match_jax():
  kw = dict(return_index=True, return_inverse=True, return_counts=True)
  # Rows of no elements are all equal (JAX 0.10.2's result).
  assert_same(jnp.unique(np.zeros((3, 0), np.float32), axis=0, **kw),
              (np.zeros((1, 0), np.float32), _i32([0]), _i32([0, 0, 0]), _i32([3])))
  assert_same(tuple(jnp.unique_all(UNIQUE_X)), (
      np.array([1., 2., 3., np.nan, np.nan], np.float32), _i32([1, 5, 0, 2, 4]),
      _i32([2, 0, 3, 0, 4, 1]), _i32([2, 1, 1, 1, 1])))
  empty = jnp.unique(np.zeros((0,), np.float32), **kw)
  assert_same(empty, (np.zeros(0, np.float32),) + (np.zeros(0, np.int32),) * 3)
  assert_same(jnp.unique(np.array([[1, 2], [1, 2], [0, 5]], np.int32), axis=1, **kw),
              (np.array([[1, 2], [1, 2], [0, 5]], np.int32), np.array([0, 1], np.int32),
               np.array([0, 1], np.int32), np.array([1, 1], np.int32)))
  values, counts = jnp.unique_counts(UNIQUE_X, size=3)
  assert_same((values, counts), (np.array([1., 2., 3.], np.float32), np.array([2, 1, 1], np.int32)))
  assert_same(tuple(jnp.unique_inverse(UNIQUE_X))[1], np.array([2, 0, 3, 0, 4, 1], np.int32))
  assert_same(jnp.unique_values(UNIQUE_X, size=6, fill_value=0.),
              np.array([1., 2., 3., np.nan, np.nan, 0.], np.float32))


def test_unique_under_transforms():
  x = jnp.array([3., 1., 2., 1., 5.])
  f = lambda x: jnp.unique(x, size=4, fill_value=0., return_counts=True, return_inverse=True)
  assert_same(purejax.jit(f)(x), f(x))
  assert_same(f(x), (np.array([1., 2., 3., 5.], np.float32), np.array([2, 0, 1, 0, 3], np.int32),
                     np.array([2, 1, 1, 1], np.int32)))
  xs = jnp.stack([x, x[::-1] * 2])
  assert_same(purejax.vmap(lambda r: jnp.unique(r, size=3))(xs),
              np.array([[1., 2., 3.], [2., 4., 6.]], np.float32))
  g = purejax.grad(lambda x: (jnp.unique(x, size=4) * jnp.arange(4.)).sum())(x)
  assert_same(g, np.array([2., 0., 1., 0., 3.], np.float32))
  with pytest.raises(ConcretizationTypeError, match="size argument"):
    purejax.jit(jnp.unique)(x)
  with pytest.raises(ValueError, match="fill_value must be specified"):
    jnp.unique(np.zeros(0), size=2)


A = np.array([5, 1, 3, 3, 7, 1])
B = np.array([3, 8, 1, 9, 9])


def test_set_operations_match_numpy():
  assert_same(jnp.union1d(A, B), np.union1d(A, B).astype(np.int32))
  assert_same(jnp.setdiff1d(A, B), np.setdiff1d(A, B).astype(np.int32))
  assert_same(jnp.setxor1d(A, B), np.setxor1d(A, B).astype(np.int32))
  assert_same(jnp.intersect1d(A, B), np.intersect1d(A, B).astype(np.int32))
  ours = jnp.intersect1d(A, B, return_indices=True)
  assert_same(ours, tuple(o.astype(np.int32) for o in np.intersect1d(A, B, return_indices=True)))
  u, v = np.array([4, 2, 9]), np.array([9, 5])
  assert_same(jnp.setxor1d(u, v, assume_unique=True), np.array([2, 4, 5], np.int32))
  assert_same(jnp.intersect1d(u, v, assume_unique=True, return_indices=True),
              (np.array([9], np.int32), np.array([2], np.int32), np.array([0], np.int32)))
  assert_same(jnp.isin(A.reshape(2, 3), B), np.isin(A.reshape(2, 3), B))


# JAX 0.10.2's results with size= (and fill_value=None or -4): union,
# setdiff, setxor, intersect with indices, intersect of A[:3], B[:2] with
# assume_unique.
SIZED_CASES = [
    (None, 2, [1, 3], [5, 7], [5, 7], ([1, 3], [1, 2], [2, 0]), ([3, 3], [2, 3], [0, 2])),
    (None, 9, [1, 3, 5, 7, 8, 9, 1, 1, 1], [5, 7, 0, 0, 0, 0, 0, 0, 0],
     [5, 7, 8, 9, 5, 5, 5, 5, 5],
     ([1, 3, 1, 1, 1, 1, 1, 1, 1], [1, 2, 6, 6, 6, 6, 6, 6, 6], [2, 0, 5, 5, 5, 5, 5, 5, 5]),
     ([3, 3, 3, 3, 3, 3, 3, 3, 3], [2, 3, 3, 3, 3, 3, 3, 3, 3], [0, 2, 2, 2, 2, 2, 2, 2, 2])),
    (-4, 2, [1, 3], [5, 7], [5, 7], ([1, 3], [1, 2], [2, 0]), ([3, -4], [2, 3], [0, 2])),
    (-4, 9, [1, 3, 5, 7, 8, 9, -4, -4, -4], [5, 7, -4, -4, -4, -4, -4, -4, -4],
     [5, 7, 8, 9, -4, -4, -4, -4, -4],
     ([1, 3, -4, -4, -4, -4, -4, -4, -4], [1, 2, 6, 6, 6, 6, 6, 6, 6],
      [2, 0, 5, 5, 5, 5, 5, 5, 5]),
     ([3, -4, -4, -4, -4, -4, -4, -4, -4], [2, 3, 3, 3, 3, 3, 3, 3, 3],
      [0, 2, 2, 2, 2, 2, 2, 2, 2])),
]


@pytest.mark.parametrize("fill,size,union,diff,xor,inter,inter_unique", SIZED_CASES)
def test_set_operations_with_size(fill, size, union, diff, xor, inter, inter_unique):
  a, b = A.astype(np.int32), B.astype(np.int32)
  assert_same(jnp.union1d(a, b, size=size, fill_value=fill), _i32(union))
  assert_same(jnp.setdiff1d(a, b, size=size, fill_value=fill), _i32(diff))
  assert_same(jnp.setxor1d(a, b, size=size, fill_value=fill), _i32(xor))
  assert_same(jnp.intersect1d(a, b, size=size, fill_value=fill, return_indices=True),
              _i32(inter))
  assert_same(jnp.intersect1d(a[:3], b[:2], assume_unique=True, size=size, fill_value=fill,
                              return_indices=True), _i32(inter_unique))
  f = lambda a: jnp.intersect1d(a, b, size=size, fill_value=fill, return_indices=True)
  assert_same(purejax.jit(f)(a), _i32(inter))
  rows = np.stack([a, a[::-1] + 1])
  for op in (jnp.setdiff1d, jnp.setxor1d, jnp.union1d):
    g = lambda r: op(r, b, size=size, fill_value=fill)
    assert_same(purejax.vmap(g)(rows), np.stack([g(r) for r in rows]))


def test_set_operations_more_sizes():
  # JAX 0.10.2's results.
  assert_same(jnp.setxor1d(A.astype(np.int32), B[:2].astype(np.int32), size=6),
              _i32([1, 5, 7, 8, 1, 1]))
  assert_same(jnp.setdiff1d(A.astype(np.int32), B[:2], size=6, fill_value=2),
              _i32([1, 5, 7, 2, 2, 2]))


@pytest.mark.parametrize("method", ["auto", "compare_all", "binary_search", "sort"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_methods(method, invert):
  x = np.array([[1., np.nan, 3.], [0., 2., 9.]], np.float32)
  test = np.array([9., np.nan, 1., 1.], np.float32)
  want = np.isin(x, test, invert=invert)
  assert_same(jnp.isin(x, test, invert=invert, method=method), want)
  assert_same(purejax.jit(lambda x: jnp.isin(x, test, invert=invert, method=method))(x), want)
  assert_same(purejax.vmap(lambda r: jnp.isin(r, test, invert=invert, method=method))(x), want)


def test_set_operations_need_concrete_values():
  with pytest.raises(ConcretizationTypeError):
    purejax.jit(jnp.union1d)(A, B)
  with pytest.raises(ConcretizationTypeError):
    purejax.jit(jnp.setdiff1d)(A, B)
  with pytest.raises(ValueError, match="not implemented"):
    jnp.isin(A, B, method="hash")


# ---------------------------------------------------------------------------
# quantiles

@pytest.mark.filterwarnings("ignore:All-NaN slice")
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), ((0, 2), True),
                                           (-1, True)])
def test_quantile_matches_numpy(method, axis, keepdims):
  # No position exactly halfway: there 'nearest' rounds down in JAX, to even in NumPy.
  q = np.array([0., 0.3, 0.55, 1.], np.float32)
  x64 = FLOATS.astype(np.float64)
  want = np.quantile(x64, q, axis=axis, method=method, keepdims=keepdims)
  got = jnp.quantile(FLOATS, q, axis=axis, method=method, keepdims=keepdims)
  assert got.dtype == np.float32 and got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
  want = np.nanquantile(WITH_NANS.astype(np.float64), 0.3, axis=axis, method=method,
                        keepdims=keepdims)
  got = jnp.nanquantile(WITH_NANS, 0.3, axis=axis, method=method, keepdims=keepdims)
  assert got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.filterwarnings("ignore:All-NaN slice")
def test_median_percentile_and_nans():
  np.testing.assert_allclose(jnp.median(FLOATS, axis=1), np.median(FLOATS, axis=1), rtol=1e-6)
  assert_same(jnp.median(np.arange(10)), np.float32(4.5))
  assert_same(jnp.quantile(np.arange(4.), 0.5, method="nearest"), np.float32(1.))
  np.testing.assert_allclose(jnp.percentile(FLOATS, np.array([10., 90.]), axis=2),
                             np.percentile(FLOATS, [10., 90.], axis=2), rtol=1e-5)
  np.testing.assert_allclose(jnp.nanpercentile(WITH_NANS, 40, axis=1),
                             np.nanpercentile(WITH_NANS, 40, axis=1), rtol=1e-5)
  np.testing.assert_allclose(jnp.nanmedian(WITH_NANS, axis=2),
                             np.nanmedian(WITH_NANS, axis=2), rtol=1e-6)
  # One NaN makes the whole slice's quantile NaN.
  assert np.isnan(jnp.quantile(WITH_NANS, 0.5, axis=1)).tolist() == \
      np.isnan(np.quantile(WITH_NANS, 0.5, axis=1)).tolist()


def test_quantile_inverted_cdf():
  # JAX 0.10.2's results: the first sorted value whose cumulative weight
  # reaches q times the total.
  x = np.array([[3., 1., 2., 7.], [0., np.nan, 5., 1.]], np.float32)
  w = np.array([[1., 2., 0., 1.], [1., 1., 3., 0.5]], np.float32)
  q = np.array([0.2, 0.5, 1.], np.float32)
  icdf = dict(method="inverted_cdf")
  assert_same(jnp.quantile(x, q, axis=1, **icdf),
              np.array([[1., np.nan], [2., np.nan], [7., np.nan]], np.float32))
  assert_same(jnp.nanquantile(x, q, axis=1, **icdf),
              np.array([[1., 0.], [2., 1.], [7., 5.]], np.float32))
  assert_same(jnp.nanquantile(x, q, axis=1, weights=w, **icdf),
              np.array([[1., 0.], [1., 5.], [7., 5.]], np.float32))
  assert_same(jnp.quantile(x, q, axis=0, weights=w[:, 0], **icdf),
              np.array([[0., np.nan, 2., 1.], [0., np.nan, 2., 1.], [3., np.nan, 5., 7.]],
                       np.float32))
  assert_same(jnp.nanpercentile(x, 50., axis=1, weights=w, keepdims=True, **icdf),
              np.array([[1.], [5.]], np.float32))
  # A negative weight gives NaN.
  assert np.isnan(jnp.quantile(x[0], 0.5, weights=np.array([1., -1., 1., 1.]), **icdf))
  assert_same(purejax.jit(lambda x, w: jnp.nanquantile(x, q, axis=1, weights=w, **icdf))(
      x, w), jnp.nanquantile(x, q, axis=1, weights=w, **icdf))
  with pytest.raises(NotImplementedError, match="doesn't support weights"):
    jnp.quantile(x, 0.5, weights=w)
  with pytest.raises(ValueError, match="must match reduction axes"):
    jnp.quantile(x, 0.5, axis=1, weights=w[:, :2], **icdf)
  with pytest.raises(ValueError, match="when axis is None"):
    jnp.quantile(x, 0.5, weights=w[0], **icdf)


def test_quantile_float16_matches_jax():
  same_as_jax(lambda m: m.quantile(FLOATS.astype(np.float16), 0.3, axis=2), tol=1e-3)


def test_quantile_errors_and_transforms():
  with pytest.raises(ValueError, match="method can only be"):
    jnp.quantile(FLOATS, 0.5, method="closest")
  with pytest.raises(ValueError, match="rank <= 1"):
    jnp.quantile(FLOATS, np.ones((2, 2)))
  with pytest.raises(ValueError, match="complex"):
    jnp.quantile(np.ones(3, np.complex64), 0.5)
  with pytest.raises(TypeError):
    jnp.quantile(FLOATS, 1)
  with pytest.raises(ValueError, match="overwrite_input"):
    jnp.median(FLOATS, overwrite_input=True)
  x = jnp.asarray(FLOATS[0])
  q = jnp.array([0.2, 0.75])
  f = lambda x, q: jnp.quantile(x, q, axis=1)
  assert_same(purejax.jit(f)(x, q), f(x, q))
  assert_same(purejax.vmap(lambda r: jnp.quantile(r, q))(x), f(x, q).T)
  assert_same(purejax.vmap(lambda p: jnp.quantile(x, p, axis=1))(q), f(x, q))
  check_grads(lambda x: jnp.quantile(x, q, axis=0), (x,), order=2)
  check_grads(lambda x: jnp.nanmedian(x, axis=1), (x,), order=1)


# ---------------------------------------------------------------------------
# bincount, histograms

def test_bincount():
  x = np.array([0, 1, 1, 3, 1])
  assert_same(jnp.bincount(x), np.bincount(x).astype(np.int32))
  w = np.array([.5, 1., 2., 3., 4.], np.float32)
  assert_same(jnp.bincount(x, w, minlength=6), np.bincount(x, w, minlength=6).astype(np.float32))
  assert_same(jnp.bincount(np.array([True, False, True])), np.array([1, 2], np.int32))
  assert_same(jnp.bincount(np.array([0, -2, 7]), length=3), np.array([2, 0, 0], np.int32))
  assert_same(purejax.jit(lambda x: jnp.bincount(x, length=5))(x), np.bincount(x, minlength=5)
              .astype(np.int32))
  assert_same(jnp.bincount(np.zeros(0, np.int32)), np.zeros(0, np.int32))
  with pytest.raises(TypeError, match="integer type"):
    jnp.bincount(np.ones(3))
  with pytest.raises(ValueError, match="1-dimensional"):
    jnp.bincount(np.ones((2, 2), np.int32))
  with pytest.raises(ConcretizationTypeError, match="length"):
    purejax.jit(jnp.bincount)(x)
  g = purejax.grad(lambda w: (jnp.bincount(x, w, length=4) * jnp.arange(4.)).sum())(w)
  assert_same(g, np.array([0., 1., 1., 3., 1.], np.float32))


@pytest.mark.parametrize("kwargs", [dict(bins=3), dict(bins=np.array([0., 2., 4., 5.])),
                                    dict(bins=4, range=(0., 4.)), dict(bins=3, density=True),
                                    dict(bins=4, weights=True)])
def test_histogram_matches_numpy(kwargs):
  # No value near an inner edge (float32 edges round differently).
  a = np.array([0.5, 2., 2., 3.5, 5., 4.5, -1.], np.float32)
  kwargs = dict(kwargs)
  if kwargs.pop("weights", None):
    kwargs["weights"] = np.arange(7, dtype=np.float32)
  counts, edges = jnp.histogram(a, **kwargs)
  want_counts, want_edges = np.histogram(a.astype(np.float64), **kwargs)
  assert counts.dtype == edges.dtype == np.float32
  np.testing.assert_allclose(counts, want_counts, rtol=1e-6)
  np.testing.assert_allclose(edges, want_edges, rtol=1e-6)
  f = purejax.jit(lambda a: jnp.histogram(a, **kwargs))
  assert_same(f(a), (counts, edges))


def test_histogram_edges_2d_dd():
  assert_same(jnp.histogram(np.array([2., 2.], np.float32), bins=2),
              (np.array([0., 2.], np.float32), np.array([1.5, 2., 2.5], np.float32)))
  edges = jnp.histogram_bin_edges(np.array([1, 2, 2, 3, 5], np.int8), bins=3)
  assert edges.dtype == np.float32
  np.testing.assert_allclose(edges, [1., 7 / 3, 11 / 3, 5.], rtol=1e-6)
  x, y = RNG.rand(2, 30).astype(np.float32)
  for bins in (3, [2, 4], np.array([0., .3, .5, 1.], np.float32)):
    for density in (None, True):
      got = jnp.histogram2d(x, y, bins=bins, density=density)
      assert got[0].dtype == (np.float32 if density else np.int32)
      want = np.histogram2d(x.astype(np.float64), y.astype(np.float64), bins=bins,
                            density=density)
      for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5)
  sample = RNG.rand(40, 3).astype(np.float32)
  kw = dict(bins=(2, 3, 2), range=[(0., 1.), None, (0.2, 0.8)], weights=np.ones(40, np.float32))
  hist, edges = jnp.histogramdd(sample, **kw)
  want, want_edges = np.histogramdd(sample.astype(np.float64), **kw)
  np.testing.assert_allclose(hist, want, rtol=1e-6)
  for e, w in zip(edges, want_edges):
    np.testing.assert_allclose(e, w, rtol=1e-6)
  with pytest.raises(ValueError, match="range must be a sequence"):
    jnp.histogramdd(sample, range=[(0., 1.)])
  with pytest.raises(ValueError, match="same shape"):
    jnp.histogram(sample, weights=np.ones(3))
