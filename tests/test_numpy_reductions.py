"""jnp reductions, NaN-ignoring and cumulative reductions, and the calculus
functions (diff, gradient, trapezoid, unwrap, cov, corrcoef): values against
NumPy in float64, dtypes/weak types/errors against the installed JAX, and
jit, vmap and gradients."""
import warnings

import numpy as np
import pytest

from tests import jnp_oracle
import purejax
import purejax.numpy as jnp
from purejax._src.api import jit
from purejax._src.vmap import vmap
from purejax.test_util import check_grads

RNG = np.random.RandomState(0)
F = RNG.randn(3, 4).astype(np.float32)
FN = F.copy()
FN[0, 1] = FN[2, :] = np.nan
I8 = RNG.randint(-5, 6, (3, 4)).astype(np.int8)
B = RNG.rand(3, 4) > 0.5
C = (RNG.randn(3, 4) + 1j * RNG.randn(3, 4)).astype(np.complex64)
M = RNG.rand(3, 4) > 0.3
W = np.array([1., 2., 0.5, 3.], np.float32)
FW = np.array([1, 2, 0, 3], np.int32)
PHASE = np.array([0., 1., 3.5, 6.5, 9.7, 3.0, -4.], np.float32)
ARRAYS = dict(F=F, FN=FN, I8=I8, B=B, C=C, M=M, W=W, FW=FW, PHASE=PHASE)


def _run(module, expr):
  env = {k: module.asarray(v) for k, v in ARRAYS.items()}
  env["jnp"] = module
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    return eval(expr, env)


ORACLE_CASES = [
    # cumulative
    "jnp.cumsum(F)", "jnp.cumsum(I8, axis=1)", "jnp.cumsum(B)", "jnp.cumsum(I8, dtype=bool)",
    "jnp.cumprod(F, axis=-2, dtype=jnp.int8)", "jnp.cumsum(3.)", "jnp.nancumsum(FN, axis=1)",
    "jnp.nancumprod(FN)", "jnp.cumulative_sum(I8, axis=1)",
    "jnp.cumulative_sum(F, axis=0, include_initial=True)",
    "jnp.cumulative_prod(B, axis=1, include_initial=True)", "jnp.cumsum(C, axis=0)",
    # nan reductions
    "jnp.nansum(FN)", "jnp.nansum(FN, axis=1, keepdims=True)", "jnp.nansum(I8, axis=0)",
    "jnp.nanprod(FN, axis=0, where=M)", "jnp.nanmax(FN, axis=1)", "jnp.nanmin(FN, axis=0)",
    "jnp.nanmax(FN, axis=1, initial=0.)", "jnp.nanmin(I8, axis=1)", "jnp.nanmean(FN, axis=1)",
    "jnp.nanmean(I8)", "jnp.nanvar(FN, axis=0, ddof=1)", "jnp.nanstd(FN, axis=1, keepdims=True)",
    "jnp.nanvar(C)", "jnp.nanargmax(FN, axis=1)", "jnp.nanargmin(FN, axis=0, keepdims=True)",
    "jnp.nanargmax(I8)", "jnp.nansum(FN, where=M, initial=1.)",
    # the ordinary reductions' options
    "jnp.sum(F, dtype=bool)", "jnp.prod(I8, axis=1, dtype=bool)", "jnp.sum(B, axis=0)",
    "jnp.sum(F, axis=jnp.array(1))", "jnp.max(F, where=M, initial=-1.)",
    "jnp.mean(F, dtype=jnp.int32)", "jnp.mean(I8, axis=1, where=M)",
    "jnp.var(F, axis=1, mean=jnp.zeros((3, 1)))", "jnp.std(F, correction=1)",
    "jnp.var(C, axis=0)", "jnp.var(I8, ddof=2, keepdims=True)",
    "jnp.argmax(F, axis=1, keepdims=True)", "jnp.argmin(F, keepdims=True)",
    # average, ptp, count_nonzero
    "jnp.average(F)", "jnp.average(F, axis=1, weights=W, returned=True)",
    "jnp.average(F, axis=(1, 0), weights=F.T * F.T, returned=True, keepdims=True)",
    "jnp.average(I8, axis=0, returned=True)", "jnp.ptp(F, axis=1, keepdims=True)",
    "jnp.ptp(I8)", "jnp.count_nonzero(I8, axis=1)", "jnp.count_nonzero(C)",
    # calculus
    "jnp.diff(F)", "jnp.diff(B, n=2)", "jnp.diff(I8, axis=0, prepend=1.5)",
    "jnp.diff(F[0], n=7)", "jnp.ediff1d(I8, to_begin=1.5, to_end=jnp.array([1, 2]))",
    "jnp.gradient(F)", "jnp.gradient(F, 2., W, axis=(0, 1))", "jnp.gradient(I8, axis=0)",
    "jnp.trapezoid(F)", "jnp.trapezoid(F, x=W)", "jnp.trapezoid(F, x=F, axis=0)",
    "jnp.trapezoid(I8, dx=0.5)", "jnp.unwrap(PHASE)", "jnp.unwrap(PHASE, period=4)",
    "jnp.unwrap(I8)", "jnp.cov(F)", "jnp.cov(F, rowvar=False, bias=True)", "jnp.cov(F[0], F[1])",
    "jnp.cov(F, fweights=FW, aweights=W)", "jnp.cov(C)", "jnp.cov(jnp.zeros((2, 0)))",
    "jnp.corrcoef(F)", "jnp.corrcoef(F[0], F[1])", "jnp.corrcoef(C)",
]


@pytest.mark.parametrize("expr", ORACLE_CASES)
def test_matches_jax(expr):
  jax = pytest.importorskip("jax")
  import jax.numpy as jjnp
  del jax
  _assert_like(_run(jnp, expr), _run(jjnp, expr))


ERROR_CASES = [
    ("jnp.sum(F, where=1)", ValueError, "where must be None or a boolean array"),
    ("jnp.var(F, ddof=1, correction=1)", ValueError, "ddof and correction"),
    ("jnp.std(F, dtype=jnp.int32)", ValueError, "must be inexact"),
    ("jnp.var(C, dtype=jnp.float32)", ValueError, "does not yet support real dtype"),
    ("jnp.max(F, where=M)", ValueError, "does not have an identity"),
    ("jnp.cumulative_sum(jnp.float32(3))", ValueError, "must be non-scalar"),
    ("jnp.cumulative_prod(F)", ValueError, "axis was not set"),
    ("jnp.cumsum(F, axis=2)", ValueError, "out of bounds"),
    ("jnp.cumsum([1, 2])", TypeError, "requires ndarray or scalar"),
    ("jnp.average(F, weights=W)", ValueError, "Axis must be specified"),
    ("jnp.average(F, axis=0, weights=W)", ValueError, "Shape of weights must be consistent"),
    ("jnp.diff(F, n=-1)", ValueError, "order must be non-negative"),
    ("jnp.diff(jnp.float32(1))", ValueError, "at least one dimensional"),
    ("jnp.gradient(F[:1], axis=0)", ValueError, "at least 2 elements"),
    ("jnp.gradient(F, 1., 2., 3.)", TypeError, "Invalid number of spacing arguments"),
    ("jnp.unwrap(C)", ValueError, "does not support complex"),
    ("jnp.cov(F, fweights=W)", TypeError, "fweights must be integer"),
    ("jnp.cov(F, aweights=W[:3])", RuntimeError, "incompatible numbers of samples"),
    ("jnp.cov(jnp.zeros((2, 2, 2)))", ValueError, "more than 2 dimensions"),
    ("jnp.corrcoef(F, dtype=jnp.int32)", ValueError, "must be a subclass of float"),
]


@pytest.mark.parametrize("expr,error,message", ERROR_CASES)
def test_errors(expr, error, message):
  with pytest.raises(error, match=message):
    _run(jnp, expr)


# ---------------------------------------------------------------------------
# Values against NumPy in float64

def test_nan_reductions_match_numpy(x64):
  x = RNG.randn(4, 5)
  x[RNG.rand(4, 5) < 0.3] = np.nan
  x[1] = np.nan
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    for name in ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]:
      for axis in [None, 0, 1]:
        np.testing.assert_allclose(getattr(jnp, name)(x, axis=axis),
                                   getattr(np, name)(x, axis=axis), rtol=1e-12,
                                   err_msg=f"{name} axis={axis}")
    np.testing.assert_array_equal(jnp.nanargmax(x, axis=0), np.nanargmax(x, axis=0))
    np.testing.assert_array_equal(jnp.nancumsum(x, axis=1), np.nancumsum(x, axis=1))
  # An all-NaN row: -1 (NumPy raises).
  assert jnp.nanargmin(x, axis=1).tolist()[1] == -1


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(x64, edge_order):
  f = RNG.randn(5, 6)
  x = np.cumsum(RNG.rand(6) + 0.1)
  for args, kwargs in [((), {}), ((0.5,), {"axis": 1}), ((x,), {"axis": -1}),
                       ((2.0, x), {})]:
    ours = jnp.gradient(f, *args, edge_order=edge_order, **kwargs)
    theirs = np.gradient(f, *args, edge_order=edge_order, **kwargs)
    for a, b in zip(ours if isinstance(ours, list) else [ours],
                    theirs if isinstance(theirs, (list, tuple)) else [theirs]):
      np.testing.assert_allclose(a, b, rtol=1e-12)


def test_calculus_matches_numpy(x64):
  y = RNG.randn(4, 6)
  x = np.cumsum(RNG.rand(6))
  np.testing.assert_allclose(jnp.trapezoid(y, x), np.trapezoid(y, x), rtol=1e-12)
  np.testing.assert_allclose(jnp.trapezoid(y, dx=0.3, axis=0), np.trapezoid(y, dx=0.3, axis=0))
  p = np.cumsum(RNG.randn(20) * 2)
  np.testing.assert_allclose(jnp.unwrap(p), np.unwrap(p), rtol=1e-12)
  np.testing.assert_allclose(jnp.unwrap(p, discont=4., period=3.),
                             np.unwrap(p, discont=4., period=3.), rtol=1e-12)
  np.testing.assert_allclose(jnp.diff(y, n=2, axis=0, append=y[:1]),
                             np.diff(y, n=2, axis=0, append=y[:1]))
  fw, aw = RNG.randint(0, 4, 6), RNG.rand(6)
  for kwargs in [{}, {"bias": True}, {"ddof": 3}, {"fweights": fw}, {"aweights": aw},
                 {"fweights": fw, "aweights": aw}, {"rowvar": False}]:
    np.testing.assert_allclose(jnp.cov(y, **kwargs), np.cov(y, **kwargs), rtol=1e-12,
                               err_msg=str(kwargs))
  np.testing.assert_allclose(jnp.cov(y[0], y[1]), np.cov(y[0], y[1]), rtol=1e-12)
  np.testing.assert_allclose(jnp.corrcoef(y), np.corrcoef(y), rtol=1e-12)
  w = RNG.rand(4, 6)
  np.testing.assert_allclose(jnp.average(y, axis=1, weights=w[0]),
                             np.average(y, axis=1, weights=w[0]), rtol=1e-12)
  np.testing.assert_allclose(jnp.average(y, weights=w, returned=True),
                             np.average(y, weights=w, returned=True), rtol=1e-12)


# ---------------------------------------------------------------------------
# Transformations

JIT_VMAP_CASES = [
    lambda x: jnp.cumsum(x, axis=0), lambda x: jnp.nanmax(x, axis=1),
    lambda x: jnp.nanvar(x), lambda x: jnp.nanargmin(x, axis=0),
    lambda x: jnp.average(x, axis=1, weights=jnp.arange(1., 5.)),
    lambda x: jnp.gradient(x, axis=0), lambda x: jnp.cov(x),
    lambda x: jnp.trapezoid(x), lambda x: jnp.unwrap(x * 3), lambda x: jnp.ptp(x, axis=0),
]


@pytest.mark.parametrize("fun", JIT_VMAP_CASES, ids=range(len(JIT_VMAP_CASES)))
def test_jit_and_vmap(fun):
  xs = FN[None] + RNG.randn(2, 3, 4).astype(np.float32)
  np.testing.assert_allclose(jit(fun)(xs[0]), fun(xs[0]), rtol=1e-5, equal_nan=True)
  expected = np.stack([np.asarray(fun(x)) for x in xs])
  np.testing.assert_allclose(vmap(fun)(xs), expected, rtol=1e-5, atol=1e-6, equal_nan=True)


GRAD_CASES = [
    lambda x: jnp.cumsum(x, axis=1), lambda x: jnp.cumprod(x, axis=0),
    lambda x: jnp.nansum(x * x, axis=0), lambda x: jnp.nanvar(x, axis=1),
    lambda x: jnp.average(x, axis=0, weights=x[:, 0] * x[:, 0]), lambda x: jnp.cov(x),
    lambda x: jnp.corrcoef(x), lambda x: jnp.gradient(x * x, axis=1),
    lambda x: jnp.trapezoid(x * x, x=jnp.arange(4.) ** 2),
    lambda x: jnp.var(x, axis=1, mean=0.5),
]


@pytest.mark.parametrize("fun", GRAD_CASES, ids=range(len(GRAD_CASES)))
def test_grads(x64, fun):
  x = RNG.rand(3, 4) + 0.5
  check_grads(fun, (x,), order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_nan_gradients_are_zero():
  x = jnp.asarray(FN)
  for fun in [jnp.nansum, jnp.nanmean, jnp.nanvar]:
    g = purejax.grad(lambda x: fun(x))(x)
    assert np.all(np.isfinite(np.asarray(g)))
    assert np.all(np.asarray(g)[np.isnan(FN)] == 0)


def _assert_like(ours, theirs):
  jnp_oracle.same(ours, theirs, rtol=2e-5, atol=1e-6)
