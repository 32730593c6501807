"""jnp.interp, packbits and unpackbits against NumPy (float64) and JAX."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.test_util import check_grads

XP = np.array([0., 1., 2., 3.5, 5.])
FP = np.array([1., -2., 4., 4., 0.5])
X = np.array([-1., 0., 0.25, 1.9, 3.5, 4.9, 7.])


@pytest.mark.parametrize("kwargs", [{}, {"left": -9.0, "right": 9.0}, {"period": 4.0},
                                    {"left": 2.0}])
def test_interp_matches_numpy(kwargs):
  with purejax.config.override("jax_enable_x64", True):
    np.testing.assert_allclose(jnp.interp(X, XP, FP, **kwargs), np.interp(X, XP, FP, **kwargs),
                               rtol=1e-12)


def test_interp_extrapolate_and_dtypes():
  out = jnp.interp(np.float32([-1., 6.]), XP, FP, left="extrapolate", right="extrapolate")
  np.testing.assert_allclose(out, [1 + 3.0, 0.5 - 3.5 / 1.5], rtol=1e-6)
  assert jnp.interp(np.int32([1]), np.int32([0, 2]), np.int32([0, 4])).dtype == np.float32
  with pytest.raises(ValueError, match="only valid string value of `left`"):
    jnp.interp(X, XP, FP, left="nearest")
  with pytest.raises(ValueError, match="one-dimensional arrays of equal size"):
    jnp.interp(X, XP, FP[:3])
  with pytest.raises(ValueError, match="complex x"):
    jnp.interp(X + 1j, XP, FP)


def test_interp_transforms():
  f = lambda x: jnp.interp(x, XP.astype(np.float32), FP.astype(np.float32))
  x = np.float32([0.3, 1.7, 4.2])
  np.testing.assert_allclose(purejax.jit(f)(x), f(x))
  np.testing.assert_allclose(purejax.vmap(f)(x[:, None]), f(x)[:, None])
  with purejax.config.override("jax_enable_x64", True):
    check_grads(lambda x: jnp.interp(x, XP, FP), (np.array([0.3, 1.7, 4.2]),), 1)


@pytest.mark.parametrize("shape, axis, bitorder", [
    ((13,), None, "big"), ((2, 9), 1, "little"), ((3, 4, 2), 0, "big"), ((2, 3), None, "little")])
def test_packbits_unpackbits_match_numpy(shape, axis, bitorder):
  bits = np.random.RandomState(0).randint(0, 3, shape).astype(np.int32)
  packed = jnp.packbits(bits, axis=axis, bitorder=bitorder)
  ref = np.packbits(bits != 0, axis=axis, bitorder=bitorder)
  assert packed.dtype == np.uint8 and packed.shape == ref.shape
  np.testing.assert_array_equal(packed, ref)
  for count in (None, 3, -2):
    np.testing.assert_array_equal(
        jnp.unpackbits(ref, axis=axis, count=count, bitorder=bitorder),
        np.unpackbits(ref, axis=axis, count=count, bitorder=bitorder))
  np.testing.assert_array_equal(
      purejax.jit(lambda b: jnp.packbits(b, axis=axis, bitorder=bitorder))(bits), ref)


def test_packbits_errors():
  with pytest.raises(TypeError, match="integer or boolean"):
    jnp.packbits(np.float32([1.0]))
  with pytest.raises(TypeError, match="unsigned byte"):
    jnp.unpackbits(np.int32([1]))
  with pytest.raises(ValueError, match="'order' must be"):
    jnp.packbits(np.int32([1]), bitorder="middle")


def test_fromfile_refuses_like_jax():
  with pytest.raises(NotImplementedError, match="non-pure"):
    jnp.fromfile("data.bin")
  assert issubclass(jnp.ComplexWarning, RuntimeWarning)
