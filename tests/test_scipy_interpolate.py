"""purejax.scipy.interpolate.RegularGridInterpolator against SciPy (float64)
and JAX, as a pytree under jit, vmap and grad."""
import numpy as np
import pytest

import purejax
from purejax.scipy.interpolate import RegularGridInterpolator
from purejax._src.test_util import check_grads

from conftest import oracle

si = pytest.importorskip("scipy.interpolate")

RNG = np.random.RandomState(0)
GRID = (np.array([0., 1, 3]), np.array([0., 2, 3, 5]))


def _points(n=20):
  pts = RNG.uniform(-1, 6, size=(n, 2))
  pts[:3] = [[0.5, 1], [3, 5], [1, 2]]
  return pts


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill_value", [np.nan, None, 1.5])
def test_against_scipy(method, fill_value, x64):
  for values in (RNG.randn(3, 4), RNG.randn(3, 4, 2)):
    ours = RegularGridInterpolator(GRID, values, method=method, fill_value=fill_value)
    theirs = si.RegularGridInterpolator(GRID, values, method=method, fill_value=fill_value,
                                        bounds_error=False)
    pts = _points()
    np.testing.assert_allclose(ours(pts), theirs(pts), rtol=1e-12)
    np.testing.assert_allclose(ours(pts.reshape(4, 5, 2)), theirs(pts.reshape(4, 5, 2)),
                               rtol=1e-12)
    np.testing.assert_allclose(ours((pts[:, 0], pts[:, 1])), theirs((pts[:, 0], pts[:, 1])),
                               rtol=1e-12)
    assert ours(pts[0]).shape == theirs(pts[0]).shape
  other = "nearest" if method == "linear" else "linear"
  values, pts = RNG.randn(3, 4), _points()
  np.testing.assert_allclose(
      RegularGridInterpolator(GRID, values, method=method)(pts, method=other),
      si.RegularGridInterpolator(GRID, values, bounds_error=False)(pts, method=other),
      rtol=1e-12)


def test_one_and_three_dimensions(x64):
  grids = [(np.array([0., 0.5, 2]),), (np.arange(3.), np.array([0., 1, 4]), np.arange(5.))]
  for grid in grids:
    values = RNG.randn(*[g.size for g in grid])
    pts = RNG.uniform(-0.5, 3, size=(11, len(grid)))
    np.testing.assert_allclose(RegularGridInterpolator(grid, values)(pts),
                               si.RegularGridInterpolator(grid, values, bounds_error=False)(pts),
                               rtol=1e-12)


def test_against_jax():
  oracle()
  from jax.scipy.interpolate import RegularGridInterpolator as J
  values = RNG.randn(3, 4).astype(np.float32)
  grid = tuple(g.astype(np.float32) for g in GRID)
  pts = _points().astype(np.float32)
  for method in ("linear", "nearest"):
    ours, theirs = RegularGridInterpolator(grid, values, method)(pts), J(grid, values,
                                                                       method)(pts)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


def test_errors():
  with pytest.raises(ValueError, match="not defined"):
    RegularGridInterpolator(GRID, np.ones((3, 4)), method="cubic")
  with pytest.raises(NotImplementedError, match="bounds_error"):
    RegularGridInterpolator(GRID, np.ones((3, 4)), bounds_error=True)
  with pytest.raises(ValueError, match="dimension"):
    RegularGridInterpolator(GRID, np.ones((3, 4)))(np.ones((2, 3)))


def test_pytree_jit_vmap_grad(x64):
  values = RNG.randn(3, 4)
  interp = RegularGridInterpolator(GRID, values)
  pts = RNG.uniform(0.1, 2.9, size=(6, 2))
  np.testing.assert_allclose(purejax.jit(lambda r, p: r(p))(interp, pts), interp(pts),
                             atol=1e-14)
  np.testing.assert_allclose(purejax.vmap(interp)(pts[:, None]), interp(pts)[:, None],
                             atol=1e-14)
  check_grads(lambda v, p: RegularGridInterpolator(GRID, v)(p), (values, pts), order=1)
