"""purejax.scipy.integrate.trapezoid against SciPy and JAX."""
import numpy as np
import pytest

import purejax
import purejax.scipy.integrate as pi

from conftest import oracle

si = pytest.importorskip("scipy.integrate")

RNG = np.random.RandomState(0)


def test_against_scipy(x64):
  y = RNG.randn(4, 6)
  x = np.sort(RNG.randn(6))
  np.testing.assert_allclose(pi.trapezoid(y, x), si.trapezoid(y, x), rtol=1e-13)
  np.testing.assert_allclose(pi.trapezoid(y, dx=0.3, axis=0), si.trapezoid(y, dx=0.3, axis=0),
                             rtol=1e-13)
  np.testing.assert_allclose(purejax.jit(pi.trapezoid)(y, x), si.trapezoid(y, x), rtol=1e-13)


def test_against_jax():
  jax = oracle()
  import jax.scipy.integrate as ji
  y = RNG.randn(3, 5).astype(np.float32)
  ours, theirs = pi.trapezoid(y, dx=2.0), ji.trapezoid(y, dx=2.0)
  assert ours.dtype == theirs.dtype
  np.testing.assert_allclose(ours, theirs, rtol=1e-6)
