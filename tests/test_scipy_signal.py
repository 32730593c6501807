"""purejax.scipy.signal: convolve/correlate (direct and FFT, N-d),
convolve2d/correlate2d against SciPy (float64) and JAX (float32), dtypes,
jit/vmap, gradients, errors."""
import numpy as np
import pytest

import purejax
import purejax.scipy.signal as psig
from purejax._src.test_util import check_grads

from conftest import oracle

ss = pytest.importorskip("scipy.signal")

_R = np.random.RandomState(0)
X1, Y1 = _R.randn(9), _R.randn(4)
X2, Y2 = _R.randn(6, 7), _R.randn(3, 2)
X3, Y3 = _R.randn(4, 5, 3), _R.randn(2, 3, 3)
MODES = ["full", "same", "valid"]


def _close(ours, theirs, rtol=1e-10):
  ours = np.asarray(ours)
  assert ours.shape == np.shape(theirs)
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("fn", ["convolve", "correlate"])
def test_nd_against_scipy(fn, method, mode, x64):
  for x, y in ((X1, Y1), (Y1, X1), (X3, Y3)):
    _close(getattr(psig, fn)(x, y, mode, method=method),
           getattr(ss, fn)(x, y, mode, method=method))
  z = X1 + 1j * X1[::-1]
  _close(getattr(psig, fn)(z, Y1, mode, method=method),
         getattr(ss, fn)(z, Y1, mode, method=method))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fn", ["convolve2d", "correlate2d"])
def test_2d_against_scipy(fn, mode, x64):
  pairs = [(X2, Y2), (Y2, X2), (X2, X2[::-1])]
  if mode != "valid":
    pairs.append((X2 + 1j, Y2 - 2j))
  for x, y in pairs:
    _close(getattr(psig, fn)(x, y, mode), getattr(ss, fn)(x, y, mode))


def test_fftconvolve_axes(x64):
  x, y = _R.randn(3, 8), _R.randn(3, 4)
  _close(psig.fftconvolve(x, y, axes=1), ss.fftconvolve(x, y, axes=1))
  _close(psig.fftconvolve(x, y, mode="same", axes=-1), ss.fftconvolve(x, y, "same", axes=-1))
  with pytest.raises(ValueError, match="mapped axes"):
    psig.fftconvolve(x, y.T, axes=1)


def test_dtypes():
  assert psig.convolve(np.arange(5), np.arange(3)).dtype == np.float32   # ints -> float
  assert psig.convolve(X1.astype(np.float32), Y1).dtype == np.float32
  assert psig.correlate2d(X2.astype(np.complex64), Y2).dtype == np.complex64
  np.testing.assert_allclose(psig.convolve(np.arange(5), np.arange(3)),
                             np.convolve(np.arange(5), np.arange(3)))


def test_errors():
  with pytest.raises(ValueError, match="mode must be one of"):
    psig.convolve(X1, Y1, "bogus")
  with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
    psig.convolve(X1, Y1, method="winograd")
  with pytest.raises(ValueError, match="same number of dimensions"):
    psig.convolve(X1, Y2)
  with pytest.raises(ValueError, match="smaller than the other in every dimension"):
    psig.convolve(np.ones((3, 1)), np.ones((1, 3)))
  with pytest.raises(NotImplementedError, match="boundary='fill'"):
    psig.convolve2d(X2, Y2, boundary="wrap")
  with pytest.raises(NotImplementedError, match="fillvalue=0"):
    psig.correlate2d(X2, Y2, fillvalue=1.)
  with pytest.raises(ValueError, match="2-dimensional"):
    psig.convolve2d(X1, Y1)
  with pytest.raises(ValueError, match="zero-size"):
    psig.convolve(np.ones(0), np.ones(0))


def test_jit_vmap_and_grads():
  x, y = X1.astype(np.float32), Y1.astype(np.float32)
  for mode in MODES:
    f = lambda a, b: psig.correlate(a, b, mode)
    np.testing.assert_allclose(purejax.jit(f)(x, y), f(x, y), rtol=1e-6)
  xs = np.stack([x, -x, 2 * x])
  np.testing.assert_allclose(purejax.vmap(lambda a: psig.convolve(a, y, "same"))(xs),
                             np.stack([psig.convolve(a, y, "same") for a in xs]), rtol=1e-6)
  with purejax.enable_x64():
    check_grads(lambda a, b: psig.convolve2d(a, b, "same"), (X2, Y2), 2, modes=("fwd", "rev"))
    check_grads(lambda a, b: psig.correlate(a, b, method="fft"), (X1, Y1), 1,
                modes=("fwd", "rev"))


def test_float32_matches_jax():
  jax = oracle()
  import jax.scipy.signal as jsig

  def run(x1, y1, x2, y2):
    out = []
    for mode in MODES:
      out += [jsig.convolve(x1, y1, mode), jsig.correlate(y1, x1, mode),
              jsig.convolve2d(x2, y2, mode), jsig.correlate2d(y2, x2, mode),
              jsig.correlate2d(x2, y2, mode)]
    return out

  args = [a.astype(np.float32) for a in (X1, Y1, X2, Y2)]
  theirs = jax.jit(run)(*args)
  x1, y1, x2, y2 = args
  ours = []
  for mode in MODES:
    ours += [psig.convolve(x1, y1, mode), psig.correlate(y1, x1, mode),
             psig.convolve2d(x2, y2, mode), psig.correlate2d(y2, x2, mode),
             psig.correlate2d(x2, y2, mode)]
  for o, t in zip(ours, theirs):
    assert o.dtype == t.dtype and o.shape == t.shape
    np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-5)


def test_detrend_matches_scipy(x64):
  import scipy.signal as ss
  import purejax.scipy.signal as ps
  rng = np.random.RandomState(1)
  x = rng.randn(3, 11) + np.arange(11.) ** 2
  for kw in ({}, {"type": "constant"}, {"bp": [3, 6]}, {"axis": 0}, {"axis": 0, "type": "constant"}):
    np.testing.assert_allclose(ps.detrend(x, **kw), ss.detrend(x, **kw), atol=1e-11)
  out = purejax.jit(lambda x: ps.detrend(x, bp=[4]))(x)
  np.testing.assert_allclose(out, ss.detrend(x, bp=[4]), atol=1e-11)
  assert ps.detrend(np.arange(10)).dtype == np.float64
  with pytest.raises(ValueError, match="Trend type"):
    ps.detrend(x, type="foo")
