"""Comparing jnp results with JAX's (the oracle) for the jnp test files."""
import warnings

import numpy as np
import pytest

from purejax._src.array import Array


def oracle():
  """(jax, jax.numpy); skips the test when JAX is not installed."""
  pytest.importorskip("jax")
  import jax
  import jax.numpy as jjnp
  return jax, jjnp


def to(module, x):
  """An argument for ``module`` (purejax.numpy or jax.numpy)."""
  return module.asarray(x) if isinstance(x, np.ndarray) else x


def same(ours, theirs, rtol=1e-5, atol=1e-5):
  """Same structure, dtype, weak type, shape and (close) values; half
  floats compare to 1e-2."""
  if isinstance(theirs, (tuple, list)):
    assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
      same(a, b, rtol, atol)
    return
  assert isinstance(ours, Array), type(ours)
  assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
  assert ours.weak_type == theirs.weak_type, (ours, theirs)
  assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
  a, b = np.asarray(ours), np.asarray(theirs)
  if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
    if a.dtype.itemsize <= 2 and a.dtype.kind != "c":
      rtol, atol = max(rtol, 1e-2), max(atol, 1e-2)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=rtol, atol=atol,
                               equal_nan=True)
  else:
    np.testing.assert_array_equal(a, b)


_RESULTS = {}


def oracle_results(cases, unpack=lambda case: case):
  """JAX's result for every case ``name: (fun(jnp, *args), *args)`` (or what
  ``unpack`` makes of the case), computed under one jit (one XLA compile
  instead of one per op); cases that need concrete values run eagerly."""
  if id(cases) in _RESULTS:
    return _RESULTS[id(cases)]
  jax, jjnp = oracle()

  def run(name):
    fun, *args = unpack(cases[name])
    return fun(jjnp, *[to(jjnp, a) for a in args])

  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    traceable = []
    for name in cases:
      try:
        jax.eval_shape(lambda: run(name))
        traceable.append(name)
      except Exception:
        pass
    results = dict(jax.jit(lambda: {n: run(n) for n in traceable})())
    for name in set(cases) - set(traceable):
      results[name] = run(name)
  _RESULTS[id(cases)] = results
  return results
