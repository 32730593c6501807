"""lax.cumsum/cumprod/cummax/cummin/cumlogsumexp: values against NumPy,
errors, printed jaxprs, derivatives (finite differences and JAX's tie
rules), batching and jit."""
import numpy as np
import pytest

import purejax
from purejax import lax
from purejax._src.api import jit, make_jaxpr
from purejax._src.vmap import vmap
from purejax.test_util import check_grads

RNG = np.random.RandomState(0)


def _np_cum(name, x, axis, reverse):
  if reverse:
    x = np.flip(x, axis)
  with np.errstate(over="ignore"):
    out = {"cumsum": lambda: np.cumsum(x, axis, dtype=x.dtype),
           "cumprod": lambda: np.cumprod(x, axis, dtype=x.dtype),
           "cummax": lambda: np.maximum.accumulate(x, axis),
           "cummin": lambda: np.minimum.accumulate(x, axis),
           "cumlogsumexp": lambda: np.logaddexp.accumulate(x, axis)}[name]()
  return np.flip(out, axis) if reverse else out


NAMES = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8, np.uint8, np.complex64])
@pytest.mark.parametrize("axis,reverse", [(0, False), (1, True), (2, False)])
def test_values_match_numpy(name, dtype, axis, reverse):
  if name == "cumlogsumexp" and not np.issubdtype(dtype, np.floating):
    return
  if dtype == np.complex64 and name in ("cummax", "cummin"):
    x = (RNG.randint(-3, 4, (2, 3, 4)) + 1j * RNG.randint(-3, 4, (2, 3, 4))).astype(dtype)
  elif dtype == np.complex64:
    x = (RNG.randn(2, 3, 4) + 1j * RNG.randn(2, 3, 4)).astype(dtype)
  elif np.issubdtype(dtype, np.integer):
    x = RNG.randint(0 if dtype == np.uint8 else -5, 6, (2, 3, 4)).astype(dtype)
  else:
    x = RNG.randn(2, 3, 4).astype(dtype)
  out = getattr(lax, name)(x, axis=axis, reverse=reverse)
  assert out.dtype == dtype and out.shape == x.shape
  np.testing.assert_allclose(np.asarray(out), _np_cum(name, x, axis, reverse), rtol=2e-6)


def test_special_values():
  x = np.array([-np.inf, -np.inf, 1., np.inf, 2., np.nan, 0.], np.float32)
  np.testing.assert_array_equal(lax.cumlogsumexp(x), [-np.inf, -np.inf, 1, np.inf, np.inf,
                                                      np.nan, np.nan])
  np.testing.assert_array_equal(lax.cummax(np.array([1., np.nan, 3.])), [1, np.nan, np.nan])
  # XLA orders -0.0 below +0.0.
  assert np.signbit(lax.cummax(np.array([0., -0., 0.], np.float32))).tolist() == [0, 0, 0]
  assert np.signbit(lax.cummin(np.array([0., -0., 0.], np.float32))).tolist() == [0, 1, 1]
  # Integers wrap; half floats round at every step.
  assert lax.cumsum(np.array([100, 100], np.int8)).tolist() == [100, -56]
  assert lax.cumsum(np.zeros((0, 2), np.float32)).shape == (0, 2)


def test_errors():
  with pytest.raises(TypeError, match="cumsum does not accept dtype bool. Accepted dtypes "
                     "are subtypes of number."):
    lax.cumsum(np.array([True, False]))
  with pytest.raises(ValueError, match="XLA operations do not allow negative axes"):
    lax.cumprod(np.ones(3), axis=-1)
  with pytest.raises(ValueError, match=r"axis 1 is out of bounds for array of shape \(3,\)"):
    lax.cummax(np.ones(3), axis=1)
  with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
    lax.cumlogsumexp(np.arange(3, dtype=np.int32))


@pytest.mark.parametrize("name", NAMES)
def test_jaxpr_prints_like_jax(name):
  x = np.ones((2, 3), np.float32)
  text = str(make_jaxpr(lambda x: getattr(lax, name)(x, axis=1, reverse=True))(x))
  assert f"= {name}[axis=1 reverse=True] a" in text


def test_cumsum_transpose_is_reverse_cumsum():
  x = np.ones(3, np.float32)
  text = str(make_jaxpr(purejax.grad(lambda x: lax.cumsum(x).sum()))(x))
  assert "cumsum[axis=0 reverse=True]" in text
  np.testing.assert_array_equal(purejax.grad(lambda x: lax.cumsum(x).sum())(x), [3, 2, 1])


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("reverse", [False, True])
def test_grads_match_finite_differences(x64, name, reverse):
  x = RNG.rand(5) + 0.5   # distinct, positive: cummax/cummin are smooth here
  check_grads(lambda x: getattr(lax, name)(x, axis=0, reverse=reverse), (x,), order=2,
              modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


# JAX's gradients (jax 0.10.2) where the derivative is not the smooth one:
# zeros in a product, ties in a running max/min (shared as JAX's parallel
# prefix shares them), and -inf in a log-sum-exp.
JAX_GRADS = [
    ("cumprod", [1., 0., 2., 3.], [1., 9., 0., 0.]),
    ("cummax", [1., 3., 2., 3.], [1., 2.5, 0., 0.5]),
    ("cummax", [1., 1., 1.], [1.75, 0.75, 0.5]),
    ("cummin", [2., 1., 1., 0.5], [1., 1.5, 0.5, 1.]),
    ("cumlogsumexp", [1., 0., 2., -np.inf], [2.2205153, 0.4490025, 1.3304818, 0.]),
]


@pytest.mark.parametrize("name,x,expected", JAX_GRADS)
def test_grad_at_zeros_and_ties_is_jaxs(name, x, expected):
  x = np.array(x, np.float32)
  ours = purejax.grad(lambda x: getattr(lax, name)(x).sum())(x)
  np.testing.assert_allclose(np.asarray(ours), expected, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_vmap_and_jit(name):
  xs = RNG.randn(3, 4, 2).astype(np.float32)
  fun = lambda x: getattr(lax, name)(x, axis=0, reverse=True)
  expected = np.stack([np.asarray(fun(x)) for x in xs])
  np.testing.assert_allclose(vmap(fun)(xs), expected, rtol=1e-6)
  np.testing.assert_allclose(vmap(fun, in_axes=2, out_axes=2)(xs.transpose(1, 2, 0)),
                             expected.transpose(1, 2, 0), rtol=1e-6)
  np.testing.assert_allclose(jit(fun)(xs[0]), fun(xs[0]), rtol=1e-6)
