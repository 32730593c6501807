"""purejax.image against live JAX (float32 rounding) and simple NumPy facts."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import image


def _x(shape, seed=0):
  return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def test_resize_linear_upsample_by_hand():
  # 2 -> 4 pixels: centers at 0.25, 0.75, ... of the input's pixel grid.
  out = image.resize(jnp.array([0., 1.]), (4,), "linear")
  np.testing.assert_allclose(out, [0., 0.25, 0.75, 1.], rtol=1e-6)


def test_resize_identity_and_nearest():
  x = _x((3, 5))
  np.testing.assert_array_equal(image.resize(x, (3, 5), "cubic"), x)
  out = image.resize(jnp.arange(3.), (5,), "nearest")
  np.testing.assert_array_equal(out, [0., 0., 1., 2., 2.])
  assert image.resize(np.arange(12).reshape(3, 4), (5, 6), "nearest").dtype == jnp.int32
  assert image.resize(np.arange(12).reshape(3, 4), (5, 6), "bilinear").dtype == jnp.float32


def test_resize_methods_and_errors():
  assert image.ResizeMethod.from_string("trilinear") is image.ResizeMethod.LINEAR
  assert image.ResizeMethod.from_string("bicubic") is image.ResizeMethod.CUBIC
  with pytest.raises(ValueError, match='Unknown resize method "foo"'):
    image.resize(_x((2, 2)), (3, 3), "foo")
  with pytest.raises(ValueError, match="shape must have length"):
    image.resize(_x((2, 2)), (3,), "linear")
  with pytest.raises(ValueError, match="Nearest neighbor"):
    image.scale_and_translate(_x((2, 2)), (3, 3), (0, 1), jnp.ones(2), jnp.zeros(2),
                              "nearest")


CASES = [("linear", (2, 11, 4, 3), True), ("cubic", (2, 3, 13, 3), True),
         ("lanczos3", (2, 4, 5, 3), True), ("lanczos5", (2, 12, 9, 3), False),
         ("cubic-pytorch", (2, 4, 14, 3), False), ("area", (2, 3, 20, 3), True),
         ("nearest", (2, 13, 4, 3), True), ("linear", (2, 3, 4, 3), False)]


@pytest.mark.parametrize("method,shape,antialias", CASES)
def test_resize_matches_jax(method, shape, antialias):
  jax_oracle = pytest.importorskip("jax")
  x = _x((2, 7, 9, 3))
  want = jax_oracle.image.resize(x, shape, method, antialias=antialias)
  got = image.resize(x, shape, method, antialias=antialias)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_scale_and_translate_matches_jax():
  jax_oracle = pytest.importorskip("jax")
  x = _x((2, 7, 9, 3))
  args = ((2, 10, 6, 3), (1, 2), np.array([1.4, 0.7], np.float32),
          np.array([0.3, -1.2], np.float32), "lanczos3")
  want = jax_oracle.image.scale_and_translate(x, *args)
  got = image.scale_and_translate(x, *args)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_resize_under_transformations():
  x = _x((4, 6))
  f = lambda x: image.resize(x, (7, 3), "linear")
  np.testing.assert_allclose(jax.jit(f)(x), f(x), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(f)(np.stack([x, 2 * x])), np.stack([f(x), f(2 * x)]),
                             rtol=1e-5)
  # A linear map: its gradient of a sum is the column sums of the weights.
  g = jax.grad(lambda x: f(x).sum())(x)
  eps_dir = np.zeros_like(x)
  eps_dir[1, 2] = 1.
  np.testing.assert_allclose(g[1, 2], np.sum(f(eps_dir)), rtol=1e-5)
  # Traced scale: differentiable with respect to it.
  s = lambda t: image.scale_and_translate(x, (4, 6), (1,), jnp.array([1.]), t, "linear").sum()
  assert np.isfinite(jax.grad(s)(jnp.array([0.3])))
