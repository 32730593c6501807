"""purejax.scipy.fft's dct/idct/dctn/idctn against SciPy (float64) and JAX
(float32, errors), under jit, vmap and grad."""
import numpy as np
import pytest

import purejax
import purejax.scipy.fft as pf
from purejax._src.test_util import check_grads

from conftest import oracle

sf = pytest.importorskip("scipy.fft")

RNG = np.random.RandomState(0)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("norm", [None, "ortho", "backward"])
@pytest.mark.parametrize("size", [None, 3, 17])
def test_1d_against_scipy(n, norm, size, x64):
  x = RNG.randn(3, n)
  z = x + 1j * RNG.randn(3, n)
  for axis in (0, 1, -1):
    for v in (x, z):
      for name in ("dct", "idct"):
        ours = getattr(pf, name)(v, n=size, axis=axis, norm=norm)
        theirs = getattr(sf, name)(v, n=size, axis=axis, norm=norm)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("s,axes", [(None, None), ((3, 7), None), ((3, 7), (2, 0)),
                                    (None, (1,)), (None, (-1, 0))])
def test_nd_against_scipy(s, axes, x64):
  x = RNG.randn(4, 5, 6)
  for norm in (None, "ortho"):
    for name in ("dctn", "idctn"):
      np.testing.assert_allclose(getattr(pf, name)(x, s=s, axes=axes, norm=norm),
                                 getattr(sf, name)(x, s=s, axes=axes, norm=norm),
                                 rtol=1e-12, atol=1e-12)


def test_round_trip_and_transforms(x64):
  x = RNG.randn(2, 9)
  np.testing.assert_allclose(pf.idct(pf.dct(x)), x, atol=1e-13)
  np.testing.assert_allclose(pf.idctn(pf.dctn(x, norm="ortho"), norm="ortho"), x, atol=1e-13)


def test_against_jax():
  jax = oracle()
  import jax.scipy.fft as jf
  x = RNG.randn(4, 6).astype(np.float32)
  for name in ("dct", "idct"):
    for norm in (None, "ortho"):
      ours, theirs = getattr(pf, name)(x, norm=norm, n=5), getattr(jf, name)(x, norm=norm, n=5)
      assert ours.dtype == theirs.dtype
      np.testing.assert_allclose(ours, theirs, rtol=2e-5, atol=2e-5)
  assert pf.dct(np.arange(6)).dtype == jf.dct(np.arange(6)).dtype
  np.testing.assert_allclose(pf.dctn(x, s=(3, 8), axes=(1, 0)),
                             jf.dctn(x, s=(3, 8), axes=(1, 0)), rtol=2e-5, atol=2e-5)


def test_errors():
  with pytest.raises(NotImplementedError, match="type 2"):
    pf.dct(np.ones(4), type=3)
  with pytest.raises(ValueError, match="forward"):
    pf.idct(np.ones(4), norm="forward")
  with pytest.raises(ValueError, match="different lengths"):
    pf.dctn(np.ones((2, 2)), s=(2,), axes=(0, 1))


def test_jit_vmap_grad(x64):
  x = RNG.randn(5, 7)
  f = lambda v: pf.dct(v, norm="ortho")
  np.testing.assert_allclose(purejax.jit(f)(x), f(x), atol=1e-13)
  np.testing.assert_allclose(purejax.vmap(pf.idct)(x), np.stack([pf.idct(r) for r in x]),
                             atol=1e-13)
  check_grads(lambda v: pf.dct(v, n=9), (x[0],), order=1)
  check_grads(lambda v: pf.idctn(v, norm="ortho"), (x,), order=1)
