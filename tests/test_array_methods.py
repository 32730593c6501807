"""Array methods forward to the jnp functions with JAX's signatures: each is
compared with the same method on a JAX array (the oracle)."""
import inspect

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp

X = np.array([[3., 1., 2., 7.], [0., 5., 4., -1.], [2., 2., 9., 6.]], np.float32)
I = np.array([2, 0, 1], np.int32)

METHOD_CASES = {
    "cumsum": lambda x: x.cumsum(1),
    "cumsum_flat_dtype": lambda x: x.cumsum(dtype="int32"),
    "cumprod": lambda x: x.cumprod(0),
    "ptp": lambda x: x.ptp(),
    "ptp_axis_keepdims": lambda x: x.ptp(axis=0, keepdims=True),
    "sort": lambda x: x.sort(),
    "sort_axis0_descending": lambda x: x.sort(axis=0, descending=True),
    "argsort": lambda x: x.argsort(axis=0),
    "argpartition": lambda x: x.argpartition(1),
    "searchsorted": lambda x: x[2].sort().searchsorted(np.float32([2.0, 6.5]), side="right"),
    "take": lambda x: x.take(np.array([0, 5, 11])),
    "take_axis": lambda x: x.take(np.array([3, 0]), axis=1),
    "take_fill": lambda x: x.take(np.array([0, 20]), mode="fill", fill_value=-1.0),
    "nonzero": lambda x: x.nonzero(),
    "nonzero_size": lambda x: x.nonzero(size=3, fill_value=-1),
    "compress": lambda x: x.compress(np.array([True, False, True]), axis=0),
    "choose": lambda x: (x[0] > 2).astype("int32").choose([x[1], x[2]]),
    "repeat": lambda x: x.repeat(2, axis=0),
    "repeat_total": lambda x: x.repeat(np.array([1, 0, 2]), axis=0, total_repeat_length=3),
    "trace": lambda x: x.trace(1),
    "diagonal": lambda x: x.diagonal(-1),
}


@pytest.mark.parametrize("name", list(METHOD_CASES))
def test_method_matches_jax(name):
  jax = pytest.importorskip("jax")
  f = METHOD_CASES[name]
  theirs = f(jax.numpy.asarray(X))
  ours = f(jnp.asarray(X))
  for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
    assert a.dtype == b.dtype and a.shape == b.shape, (a, b)
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("name", ["cumsum", "sort", "take_axis", "repeat", "trace", "ptp"])
def test_methods_under_jit_and_vmap(name):
  f = METHOD_CASES[name]
  np.testing.assert_allclose(purejax.jit(f)(X), f(jnp.asarray(X)))
  xs = np.stack([X, X * 2, -X])
  np.testing.assert_allclose(purejax.vmap(f)(xs), np.stack([f(jnp.asarray(x)) for x in xs]))


def test_tobytes_is_numpys():
  assert jnp.asarray(X).tobytes() == X.tobytes()


@pytest.mark.parametrize("src, dtype", [
    ("float32", "int32"), ("float32", "uint16"), ("float32", "int8"), ("int16", "int32"),
    ("int16", "float16"), ("bool", "int8"), ("int8", "bool"), ("uint8", "uint8")])
def test_view_reinterprets_bytes_like_numpy(src, dtype):
  x = np.arange(8).reshape(2, 4).astype(src)
  got = jnp.asarray(x).view(dtype)
  want = x.view(dtype)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(purejax.jit(lambda a: a.view(dtype))(x), want)


def test_view_errors():
  with pytest.raises(ValueError, match="divisor of the total size"):
    jnp.arange(3, dtype="int16").view("int32")
  with pytest.raises(ValueError, match="0d array"):
    jnp.float32(1).view("int8")
  with pytest.raises(NotImplementedError, match="`type` argument"):
    jnp.ones(2).view(type=np.matrix)


def test_tracer_attributes_do_not_shadow_array_methods():
  # A tracer's own bookkeeping fields must not hide Array methods of the
  # same name (x.var(0) inside jit once found the jaxpr variable).
  from purejax._src.numpy.array_methods import _METHODS
  methods = [n for n, m in _METHODS.items() if not n.startswith("_") and callable(m)]
  seen = {}

  def probe(x):
    for n in methods:
      found = inspect.getattr_static(x, n) is _METHODS[n]
      seen.setdefault(type(x).__name__, []).append((n, found))
    return x.var(0) + x.std(1).sum()

  want = X.var(0) + X.std(1).sum()
  np.testing.assert_allclose(purejax.jit(probe)(X), want, rtol=1e-6)
  np.testing.assert_allclose(purejax.vmap(probe)(X[None])[0], want, rtol=1e-6)
  purejax.grad(lambda x: probe(x).sum())(X)
  assert len(seen) == 3
  for kind, found in seen.items():
    assert all(ok for _, ok in found), (kind, [n for n, ok in found if not ok])
