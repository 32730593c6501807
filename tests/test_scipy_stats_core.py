"""purejax.scipy.stats' mode, rankdata and sem against SciPy (float64) and
JAX (dtypes, nan policies, errors), under jit and vmap."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.scipy.stats as ps

from conftest import oracle

ss = pytest.importorskip("scipy.stats")

RNG = np.random.RandomState(0)
AXES = [0, 1, -1, None]


def _data():
  a = RNG.randint(0, 4, size=(5, 7)).astype(float)
  b = a.copy()
  b[1, 2] = np.nan
  return a, b


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_mode_and_sem_against_scipy(axis, keepdims, x64):
  a, b = _data()
  for x in (a, a.astype(int), np.array([1., 2, 2, np.nan, np.nan, np.nan])):
    ax = axis if x.ndim == 2 or axis in (0, None) else 0
    ours, theirs = ps.mode(x, axis=ax, keepdims=keepdims), ss.mode(x, axis=ax,
                                                                   keepdims=keepdims)
    np.testing.assert_array_equal(ours.mode, theirs.mode)
    np.testing.assert_array_equal(ours.count, theirs.count)
  np.testing.assert_allclose(ps.sem(a, axis=axis, keepdims=keepdims),
                             ss.sem(a, axis=axis, keepdims=keepdims), rtol=1e-13)
  np.testing.assert_allclose(ps.sem(b, axis=axis, ddof=0, nan_policy="omit", keepdims=keepdims),
                             ss.sem(b, axis=axis, ddof=0, nan_policy="omit",
                                    keepdims=keepdims), rtol=1e-13)
  np.testing.assert_allclose(ps.sem(b, axis=axis), ss.sem(b, axis=axis), rtol=1e-13)


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_against_scipy(axis, method, x64):
  a, b = _data()
  for x in (a, b, RNG.randn(4, 6)):
    ours, theirs = ps.rankdata(x, method, axis=axis), ss.rankdata(x, method, axis=axis)
    np.testing.assert_array_equal(ours, theirs)


def test_against_jax():
  oracle()
  import jax.scipy.stats as js
  a, b = (x.astype(np.float32) for x in _data())
  for ours, theirs in ((ps.mode(a, axis=1), js.mode(a, axis=1)),
                       (ps.mode(a.astype(np.int32), axis=None, keepdims=True),
                        js.mode(a.astype(np.int32), axis=None, keepdims=True))):
    for o, t in zip(ours, theirs):
      assert o.dtype == t.dtype and o.shape == t.shape
      np.testing.assert_array_equal(o, t)
  for method in ("average", "dense", "ordinal"):
    o, t = ps.rankdata(b, method, axis=0), js.rankdata(b, method, axis=0)
    assert o.dtype == t.dtype
    np.testing.assert_array_equal(o, t)
  o, t = ps.sem(a.astype(np.int32), axis=1), js.sem(a.astype(np.int32), axis=1)
  assert o.dtype == t.dtype
  np.testing.assert_allclose(o, t, rtol=1e-6)


def test_errors():
  with pytest.raises(NotImplementedError, match="omit"):
    ps.mode(np.ones(3), nan_policy="omit")
  with pytest.raises(NotImplementedError, match="nans"):
    ps.mode(np.ones(3), nan_policy="raise")
  with pytest.raises(NotImplementedError, match="omit"):
    ps.rankdata(np.ones(3), nan_policy="omit")
  with pytest.raises(ValueError, match="unknown method"):
    ps.rankdata(np.ones(3), "foo")
  with pytest.raises(ValueError, match="not supported"):
    ps.sem(np.ones(3), nan_policy="raise")


def test_jit_vmap(x64):
  a, _ = _data()
  ours = purejax.jit(lambda x: ps.mode(x, axis=1))(a)
  np.testing.assert_array_equal(ours.mode, ss.mode(a, axis=1).mode)
  np.testing.assert_array_equal(purejax.vmap(ps.rankdata)(a),
                                np.stack([ss.rankdata(r) for r in a]))
  np.testing.assert_allclose(purejax.vmap(ps.sem)(a), ss.sem(a, axis=1), rtol=1e-13)
