"""purejax.ops.segment_{sum,prod,max,min} against real JAX."""
import inspect

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import errors
from purejax.test_util import check_grads

jax_oracle = pytest.importorskip("jax")

OPS = ("segment_sum", "segment_prod", "segment_max", "segment_min")
RNG = np.random.default_rng(0)


def _ours(name):
  return getattr(purejax.ops, name)


def _theirs(name):
  return getattr(jax_oracle.ops, name)


def _same(ours, theirs):
  theirs = np.asarray(theirs)
  assert ours.dtype == theirs.dtype
  assert ours.shape == theirs.shape
  np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-6)


def _data(dtype, shape):
  if dtype == np.bool_:
    return RNG.integers(0, 2, shape).astype(bool)
  if np.issubdtype(dtype, np.integer):
    return RNG.integers(1, 5, shape).astype(dtype)
  return RNG.uniform(0.5, 2.0, shape).astype(dtype)


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_jax(name):
  ours = inspect.signature(_ours(name))
  theirs = inspect.signature(_theirs(name))
  expected = [p for p in theirs.parameters.values() if p.name != "out_sharding"]
  assert [(p.name, p.default) for p in ours.parameters.values()] == [
      (p.name, p.default) for p in expected]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.float16])
def test_matches_jax_with_empty_and_dropped_segments(name, dtype):
  data = _data(dtype, (7, 2))
  ids = np.array([0, 0, 3, -1, 3, 9, 1], np.int32)   # 2 is empty; -1, 9 dropped
  _same(_ours(name)(data, ids, 5), _theirs(name)(data, ids, 5))


@pytest.mark.parametrize("name", ["segment_max", "segment_min"])
def test_bool_matches_jax(name):
  data = np.array([True, False, True, True])
  ids = np.array([0, 0, 2, 2])
  _same(_ours(name)(data, ids, 4), _theirs(name)(data, ids, 4))


@pytest.mark.parametrize("name,prim", [("segment_sum", "add"), ("segment_prod", "mul")])
def test_bool_sum_and_prod_are_type_errors_as_in_jax(name, prim):
  data, ids = np.array([True, False]), np.array([0, 1])
  with pytest.raises(TypeError, match=f"{prim} does not accept dtype bool"):
    _ours(name)(data, ids, 2)
  with pytest.raises(TypeError, match=f"{prim} does not accept dtype bool"):
    _theirs(name)(data, ids, 2)


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("mode", ["clip", "drop", "fill"])
def test_modes_match_jax(name, mode):
  data = _data(np.float32, (5,))
  ids = np.array([0, -2, 1, 7, 1])
  _same(_ours(name)(data, ids, 3, mode=mode), _theirs(name)(data, ids, 3, mode=mode))


@pytest.mark.parametrize("name", OPS)
def test_default_num_segments_and_bucket_size(name):
  data = _data(np.float32, (6, 3))
  ids = np.array([0, 2, 2, 4, 0, 4])
  _same(_ours(name)(data, ids), _theirs(name)(data, ids))
  _same(_ours(name)(data, ids, bucket_size=4), _theirs(name)(data, ids, bucket_size=4))
  _same(_ours(name)(data, ids, 6, True, False, 2), _theirs(name)(data, ids, 6, True, False, 2))


@pytest.mark.parametrize("name", OPS)
def test_under_jit_with_static_num_segments(name):
  data = _data(np.float32, (6,))
  ids = np.array([1, 1, 0, 3, 3, 3], np.int32)
  ours = purejax.jit(_ours(name), static_argnums=2)(data, ids, 5)
  _same(ours, _theirs(name)(data, ids, 5))


def test_num_segments_none_under_jit_is_a_concretization_error():
  with pytest.raises(errors.ConcretizationTypeError, match="num_segments"):
    purejax.jit(purejax.ops.segment_sum)(jnp.arange(4.0), jnp.array([0, 0, 1, 1]))


def test_traced_num_segments_is_a_concretization_error():
  f = purejax.jit(lambda d, i, n: purejax.ops.segment_max(d, i, n))
  with pytest.raises(errors.ConcretizationTypeError):
    f(jnp.arange(4.0), jnp.array([0, 0, 1, 1]), 3)


def test_argument_errors_match_jax():
  with pytest.raises(ValueError, match="num_segments must be non-negative"):
    purejax.ops.segment_sum(jnp.arange(3.0), jnp.array([0, 1, 1]), -1)
  with pytest.raises(TypeError, match="segment_sum requires ndarray or scalar"):
    purejax.ops.segment_sum([1.0, 2.0], [0, 1])
  with pytest.raises(TypeError):
    purejax.ops.segment_sum(jnp.arange(3.0), jnp.array([0, 1, 1]), 2.0)


@pytest.mark.parametrize("name", OPS)
def test_vmap_matches_per_example_loop(name):
  data = _data(np.float32, (3, 5, 2))
  ids = np.array([[0, 1, 1, 3, 0], [2, 2, 2, 0, 1], [3, 3, 0, 0, 5]], np.int32)
  f = lambda d, i: _ours(name)(d, i, 4)
  out = purejax.vmap(f)(data, ids)
  expected = np.stack([np.asarray(_theirs(name)(d, i, 4)) for d, i in zip(data, ids)])
  _same(out, expected)
  # Shared ids, batched data only.
  out = purejax.vmap(f, in_axes=(0, None))(data, ids[0])
  _same(out, jax_oracle.vmap(lambda d: _theirs(name)(d, ids[0], 4))(data))


@pytest.mark.parametrize("name", ["segment_sum", "segment_max", "segment_min"])
def test_grads(name):
  data = np.array([0.5, 1.5, -0.7, 2.0, 1.1, -1.3], np.float32)   # distinct: max/min
  ids = np.array([0, 2, 2, 1, 0, 2], np.int32)
  check_grads(lambda d: _ours(name)(d, ids, 3), (data,), order=2, modes=("fwd", "rev"),
              atol=1e-2, rtol=1e-2)
  ours = purejax.grad(lambda d: _ours(name)(d, ids, 4).sum())(data)
  theirs = jax_oracle.grad(lambda d: _theirs(name)(d, ids, 4).sum())(data)
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5)


def test_segment_prod_grads_need_unique_indices_as_in_jax():
  data = np.array([0.5, 1.5, -0.7, 2.0], np.float32)
  ids = np.array([0, 2, 2, 1], np.int32)
  for ops, grad in ((purejax.ops, purejax.grad), (jax_oracle.ops, jax_oracle.grad)):
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
      grad(lambda d: ops.segment_prod(d, ids, 3).sum())(data)
  ids = np.array([3, 0, 2, 1], np.int32)
  f = lambda ops: lambda d: ops.segment_prod(d, ids, 5, unique_indices=True)
  check_grads(f(purejax.ops), (data,), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
  ours = purejax.grad(lambda d: (f(purejax.ops)(d) ** 2).sum())(data)
  theirs = jax_oracle.grad(lambda d: (f(jax_oracle.ops)(d) ** 2).sum())(data)
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5)
