"""lax.sort (variadic, total order), lax.sort_key_val and lax.top_k: values,
dtypes, errors, jit/vmap/grad, printed jaxprs."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.test_util import check_grads

from conftest import oracle

SPECIALS = np.array([0.0, -0.0, np.nan, -np.nan, 1, -np.inf, np.inf, -1, 2, -0.0],
                    np.float32)


def _bits(x):
  x = np.asarray(x)
  return x.view(np.dtype(f"u{x.dtype.itemsize}"))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8, np.uint16, np.int32,
                                   np.bool_])
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1)])
def test_sort_matches_numpy(dtype, shape, dim):
  rng = np.random.RandomState(0)
  x = (rng.randn(*shape) * 4).astype(dtype)
  out = lax.sort(jnp.asarray(x), dimension=dim)
  assert out.dtype == x.dtype and out.shape == x.shape
  np.testing.assert_array_equal(out, np.sort(x, axis=dim, kind="stable"))


def test_sort_total_order_and_stability():
  # -0.0 == 0.0 and all NaNs equal (after +inf): a stable sort keeps their
  # order; the values themselves (sign bits) are untouched.
  keys, perm = lax.sort_key_val(jnp.asarray(SPECIALS), jnp.arange(10))
  np.testing.assert_array_equal(perm, [5, 7, 0, 1, 9, 4, 8, 6, 2, 3])
  np.testing.assert_array_equal(_bits(keys), _bits(SPECIALS[np.asarray(perm)]))


def test_sort_complex_lexicographic():
  c = np.array([1 + 2j, 1 + 1j, 5j, np.nan, complex(1, np.nan), -2 + 9j], np.complex64)
  _, perm = lax.sort_key_val(jnp.asarray(c), jnp.arange(6))
  np.testing.assert_array_equal(perm, [5, 2, 1, 0, 4, 3])


def test_sort_variadic_num_keys():
  a = jnp.array([2, 1, 2, 1, 2])
  b = jnp.array([5., 4., 3., 2., 1.])
  c = jnp.array([0, 1, 2, 3, 4])
  out = lax.sort((a, b, c), num_keys=2)
  assert isinstance(out, tuple) and len(out) == 3
  np.testing.assert_array_equal(out[0], [1, 1, 2, 2, 2])
  np.testing.assert_array_equal(out[1], [2., 4., 1., 3., 5.])
  np.testing.assert_array_equal(out[2], [3, 1, 4, 2, 0])
  _, c1 = lax.sort((a, c), num_keys=1)
  np.testing.assert_array_equal(c1, [1, 3, 0, 2, 4])


@pytest.mark.parametrize("call,err,msg", [
    (lambda: lax.sort(jnp.ones(3), dimension=1), ValueError, "out of bounds"),
    (lambda: lax.sort((jnp.ones(3), jnp.ones(4))), TypeError, "equal shapes"),
    (lambda: lax.sort(jnp.ones(3), num_keys=2), ValueError, "must equal 1"),
    (lambda: lax.sort((jnp.ones(3),), num_keys=2), ValueError, "between 1 and"),
    (lambda: lax.sort(()), TypeError, "at least one operand"),
    (lambda: lax.sort(jnp.ones(())), ValueError, "out of bounds"),
    (lambda: lax.sort_key_val(jnp.ones(3), jnp.ones(2)), TypeError, "equal shapes"),
])
def test_sort_errors(call, err, msg):
  with pytest.raises(err, match=msg):
    call()


def test_sort_jit_vmap_jaxpr():
  x = jnp.array([[3., 1., 2.], [0., -5., 4.]])
  f = lambda x: lax.sort(x, dimension=0)
  np.testing.assert_array_equal(purejax.jit(f)(x), f(x))
  # vmap over axis 1 of x sorts the columns.
  np.testing.assert_array_equal(purejax.vmap(f, in_axes=1)(x), np.sort(np.asarray(x).T))
  np.testing.assert_array_equal(purejax.vmap(lambda r: lax.sort(r))(x), np.sort(x, axis=1))
  # One batched and one unbatched operand.
  keys = jnp.array([[2, 1, 0], [0, 2, 1]])
  vals = jnp.array([10., 20., 30.])
  _, v = purejax.vmap(lambda k: lax.sort_key_val(k, vals))(keys)
  np.testing.assert_array_equal(v, [[30., 20., 10.], [10., 30., 20.]])
  text = str(purejax.make_jaxpr(lambda x, y: lax.sort((x, y), num_keys=1))(
      jnp.ones(3), jnp.ones(3, np.int32)))
  assert "sort[dimension=0 is_stable=True num_keys=1] a b" in text


def test_sort_grad():
  rng = np.random.RandomState(1)
  x = jnp.asarray(rng.randn(3, 4).astype(np.float32))
  weights = jnp.arange(12.).reshape(3, 4)
  for dim in (0, 1):
    f = lambda x: (lax.sort(x, dimension=dim) * weights).sum()
    check_grads(f, (x,), order=2, modes=("fwd", "rev"))
  g = purejax.grad(lambda x: (lax.sort(x) * jnp.arange(3.)).sum())(jnp.array([3., 1., 2.]))
  np.testing.assert_array_equal(g, [2., 0., 1.])
  # Values sorted by other keys get the permuted tangents; int keys get none.
  keys = jnp.array([2, 0, 1])
  g = purejax.grad(lambda v: (lax.sort_key_val(keys, v)[1] * jnp.arange(3.)).sum())(
      jnp.ones(3))
  np.testing.assert_array_equal(g, [2., 0., 1.])
  check_grads(lambda v: purejax.vmap(lambda r: lax.sort(r))(v), (x,), order=1)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.int16])
def test_top_k_matches_stable_descending_sort(dtype):
  rng = np.random.RandomState(2)
  x = rng.randint(0, 4, (3, 6)).astype(dtype)
  vals, idx = lax.top_k(jnp.asarray(x), 4)
  assert vals.dtype == x.dtype and idx.dtype == np.int32 and vals.shape == (3, 4)
  # Ties go to the lower index first.
  order = np.argsort(-x.astype(np.int64), axis=1, kind="stable")[:, :4]
  np.testing.assert_array_equal(idx, order)
  np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1))


def test_top_k_raw_total_order_and_axis():
  # top_k compares raw bits: NaN first, -NaN last, 0.0 before -0.0.
  vals, idx = lax.top_k(jnp.asarray(SPECIALS), 10)
  np.testing.assert_array_equal(idx, [2, 6, 8, 4, 0, 1, 9, 7, 5, 3])
  x = jnp.array([[1, 5, 2], [7, 0, 7]])
  vals, idx = lax.top_k(x, 1, axis=0)
  np.testing.assert_array_equal(vals, [[7, 5, 7]])
  np.testing.assert_array_equal(idx, [[1, 0, 1]])


@pytest.mark.parametrize("call,err,msg", [
    (lambda: lax.top_k(jnp.ones(3), 4), ValueError, "no larger than size"),
    (lambda: lax.top_k(jnp.ones(3), -1), ValueError, "nonnegative"),
    (lambda: lax.top_k(jnp.ones(()), 1), ValueError, "out of bounds"),
    (lambda: lax.top_k(jnp.ones(3), 1, axis=2), ValueError, "out of bounds"),
    (lambda: lax.top_k(jnp.ones(3, np.complex64), 1), ValueError, "complex"),
])
def test_top_k_errors(call, err, msg):
  with pytest.raises(err, match=msg):
    call()


def test_top_k_jit_vmap_grad_jaxpr():
  rng = np.random.RandomState(3)
  x = jnp.asarray(rng.randn(4, 5).astype(np.float32))
  f = lambda x: lax.top_k(x, 3)
  for a, b in zip(purejax.jit(f)(x), f(x)):
    np.testing.assert_array_equal(a, b)
  for a, b in zip(purejax.vmap(f, in_axes=1, out_axes=0)(x.T), f(x)):
    np.testing.assert_array_equal(a, b)
  check_grads(lambda x: lax.top_k(x, 3)[0], (x,), order=2)
  check_grads(lambda x: lax.top_k(x, 2, axis=0)[0], (x,), order=1)
  assert "top_k[axis=1 k=3] a" in str(purejax.make_jaxpr(lambda x: lax.top_k(x, 3))(x))


def test_oracle_sort_top_k():
  jax = oracle()
  x = np.concatenate([SPECIALS, np.arange(-3, 3, dtype=np.float32)]).reshape(2, 8)
  for dim in (0, 1):
    ours = lax.sort_key_val(jnp.asarray(x), jnp.asarray(np.arange(16).reshape(2, 8)), dim)
    theirs = jax.lax.sort_key_val(x, np.arange(16).reshape(2, 8), dim)
    for a, b in zip(ours, theirs):
      np.testing.assert_array_equal(_bits(a), _bits(b))
  ours, theirs = lax.top_k(jnp.asarray(x), 5), jax.lax.top_k(x, 5)
  for a, b in zip(ours, theirs):
    np.testing.assert_array_equal(_bits(a), _bits(b))
