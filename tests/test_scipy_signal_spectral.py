"""scipy.signal's stft, istft, csd and welch against SciPy (float64) and
JAX (dtypes, shapes, JAX's conventions where they differ from SciPy)."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.scipy.signal as ps

from conftest import oracle

ss = pytest.importorskip("scipy.signal")

RNG = np.random.RandomState(0)


def _same(ours, theirs, tol=1e-13):
  for o, t in zip(ours, theirs):
    o = np.asarray(o)
    assert o.shape == np.shape(t) and o.dtype == np.asarray(t).dtype
    np.testing.assert_allclose(o, t, rtol=tol, atol=tol)


CASES = [
    lambda m, x, y: m.stft(x, nperseg=16),
    lambda m, x, y: m.stft(x.T, nperseg=16, axis=0),
    lambda m, x, y: m.stft(x, nperseg=15, noverlap=4, nfft=20, boundary="odd",
                           detrend="linear"),
    lambda m, x, y: m.stft(x, nperseg=12, boundary="even", return_onesided=False,
                           padded=False),
    lambda m, x, y: m.stft(x, nperseg=12, boundary="constant", window="hamming"),
    lambda m, x, y: m.stft(x, nperseg=12, boundary=None),
    lambda m, x, y: m.welch(x, nperseg=16),
    lambda m, x, y: m.welch(x, nperseg=16, scaling="spectrum", average="median"),
    lambda m, x, y: m.welch(x, nperseg=16, nfft=33, detrend="linear", window=("tukey", .3)),
    lambda m, x, y: m.welch(x.T, nperseg=10, noverlap=7, axis=0),
    lambda m, x, y: m.csd(x, y, nperseg=16),
    lambda m, x, y: m.csd(x, y[:, :40], nperseg=16, average="median"),
    lambda m, x, y: m.csd(x + 1j * y, y, nperseg=16),
    lambda m, x, y: m.csd(x, y, nperseg=50),
    lambda m, x, y: m.istft(ss.stft(x, nperseg=16)[2], nperseg=16),
    lambda m, x, y: m.istft(ss.stft(x, nperseg=16, nfft=20)[2], nperseg=16, nfft=20,
                            window="hamming"),
    lambda m, x, y: m.istft(np.moveaxis(ss.stft(x, nperseg=16)[2], 0, -1), time_axis=1,
                            freq_axis=0),
    lambda m, x, y: m.istft(ss.stft(x, nperseg=16, boundary=None)[2], boundary=False),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_scipy(x64, case):
  x, y = RNG.rand(3, 50), RNG.rand(3, 50)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _same(CASES[case](ps, x, y), CASES[case](ss, x, y))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_jax(case):
  jax = oracle()
  import jax.scipy.signal as js
  x, y = RNG.rand(3, 50).astype(np.float32), RNG.rand(3, 50).astype(np.float32)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _same(CASES[case](ps, x, y), CASES[case](js, x, y), 2e-6)


def test_jax_defaults_and_errors(x64):
  x = RNG.rand(2, 40)
  # nperseg=None: the whole signal (JAX), not SciPy's 256
  f, p = ps.welch(x)
  _same((f, p), ss.welch(x, nperseg=40))
  _same(purejax.jit(lambda v: ps.welch(v, nperseg=16))(x), ss.welch(x, nperseg=16))
  _same(purejax.jit(lambda v: ps.stft(v, nperseg=16))(x), ss.stft(x, nperseg=16))
  t, back = ps.istft(ps.stft(x, nperseg=16)[2], nperseg=16)
  np.testing.assert_allclose(np.asarray(back)[:, :40], x, atol=1e-13)
  with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
    ps.welch(x, nperseg=8, noverlap=8)
  with pytest.raises(ValueError, match="nfft must be greater"):
    ps.welch(x, nperseg=8, nfft=4)
  with pytest.raises(ValueError, match="Unknown boundary"):
    ps.stft(x, boundary="wrap")
  with pytest.raises(ValueError, match="Unknown scaling"):
    ps.welch(x, scaling="x")
  with pytest.raises(ValueError, match="average must be"):
    ps.welch(x, nperseg=8, average="max")
  with pytest.raises(ValueError, match="differing time and frequency"):
    ps.istft(np.ones((3, 4)), time_axis=0, freq_axis=0)
