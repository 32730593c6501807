"""purejax.scipy.ndimage.map_coordinates against JAX (every mode; JAX's
'wrap' and 'constant' differ from SciPy's near the edges) and SciPy inside
the array, under jit, vmap and grad."""
import numpy as np
import pytest

import purejax
from purejax.scipy.ndimage import map_coordinates
from purejax._src.test_util import check_grads

from conftest import oracle

ndi = pytest.importorskip("scipy.ndimage")

RNG = np.random.RandomState(0)
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
SHAPES = [(5,), (1,), (4, 3), (3, 2, 4)]


def _coordinates(shape, low=-6, high=6, n=9):
  return [RNG.uniform(low, s + high, size=(n,)) for s in shape]


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", SHAPES)
def test_inside_against_scipy(order, shape, x64):
  x = RNG.randn(*shape)
  coords = [np.clip(c, 0, s - 1) for c, s in zip(_coordinates(shape), shape)]
  for mode in MODES:
    np.testing.assert_allclose(map_coordinates(x, coords, order, mode),
                               ndi.map_coordinates(x, np.stack(coords), order=order, mode=mode),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mode", ["nearest", "mirror", "reflect"])
def test_outside_against_scipy(order, shape, mode, x64):
  # Away from half-integers, where SciPy and JAX round order-0 ties alike.
  x = RNG.randn(*shape)
  coords = [np.round(c) + 0.3 for c in _coordinates(shape)]
  np.testing.assert_allclose(map_coordinates(x, coords, order, mode),
                             ndi.map_coordinates(x, np.stack(coords), order=order, mode=mode),
                             rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES)
def test_against_jax(mode, shape):
  oracle()
  from jax.scipy.ndimage import map_coordinates as jmc
  x = RNG.randn(*shape).astype(np.float32)
  coords = [c.astype(np.float32) for c in _coordinates(shape)]
  coords[0][:3] = [0.5, -0.5, 1.5]
  for order in (0, 1):
    ours, theirs = map_coordinates(x, coords, order, mode, cval=0.7), jmc(x, coords, order,
                                                                         mode, cval=0.7)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
  xi = np.arange(12, dtype=np.int32).reshape(3, 4)
  c2 = [np.array([0.5, 1.5, -0.5, 1.2], np.float32), np.array([0.25, 2.5, 3.5, 0.7],
                                                               np.float32)]
  for order in (0, 1):
    ours, theirs = map_coordinates(xi, c2, order, mode), jmc(xi, c2, order, mode)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_errors():
  x = np.ones((3, 3))
  with pytest.raises(NotImplementedError, match="order<=1"):
    map_coordinates(x, [np.zeros(2)] * 2, order=3)
  with pytest.raises(NotImplementedError, match="grid-wrap"):
    map_coordinates(x, [np.zeros(2)] * 2, order=1, mode="grid-wrap")
  with pytest.raises(ValueError, match="length input.ndim"):
    map_coordinates(x, [np.zeros(2)], order=1)


def test_jit_vmap_grad(x64):
  x = RNG.randn(4, 5)
  coords = [RNG.uniform(0.1, 2.9, 6), RNG.uniform(0.1, 3.9, 6)]
  f = lambda img, a, b: map_coordinates(img, [a, b], 1, "reflect")
  np.testing.assert_allclose(purejax.jit(f)(x, *coords), f(x, *coords), atol=1e-14)
  batch = RNG.randn(3, 4, 5)
  np.testing.assert_allclose(purejax.vmap(f, (0, None, None))(batch, *coords),
                             np.stack([f(b, *coords) for b in batch]), atol=1e-14)
  check_grads(f, (x, *coords), order=1)
