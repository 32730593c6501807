"""purejax.scipy.special's erfcx, dawsn, fresnel, sici, owens_t, bessel_jn, bernoulli,
hyp1f1, hyp2f1: values against SciPy (float64) and JAX (float32) where
JAX's are accurate, gradients against finite differences, jit and vmap."""
import fractions
import math

import numpy as np
import pytest

import purejax
import purejax.scipy.special as ps

from conftest import oracle

sps = pytest.importorskip("scipy.special")

WIDE = np.array([-30., -3, -0.5, 0., 0.3, 1., 2., 4.9, 5., 7., 50., 1e5])
FRESNEL_X = np.array([-3., 0., 0.3, 1., 1.7, 1.81, 2.5, 5., 20., np.inf, -np.inf])
OWENS_H = np.array([0., 0.5, 1., 3., -2., 0.5, 10., 0.])
OWENS_A = np.array([0.5, 3., -2, 0.3, 1.5, np.inf, 0.5, np.inf])
BESSEL_Z = np.array([0., 0.1, 1., 5., 20., -3.])
SICI_X = np.array([-1., 0., 0.5, 3., 3.99, 4.01, 5., 30., 1e4, np.inf])
HYP1F1_X = np.array([-30., -1, 0., 3, 30.])
HYP2F1_X = np.array([-5., -1, -0.3, 0., 0.4, 0.6, 0.9, 1.])


def _close(ours, theirs, rtol=1e-13, atol=0):
  ours = np.asarray(ours)
  assert ours.dtype == np.float64 and ours.shape == np.shape(theirs)
  np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def test_float64_against_scipy(x64):
  _close(ps.erfcx(WIDE), sps.erfcx(WIDE))
  _close(ps.dawsn(WIDE), sps.dawsn(WIDE), atol=1e-300)
  for ours, theirs in zip(ps.fresnel(FRESNEL_X), sps.fresnel(FRESNEL_X)):
    _close(ours, theirs, atol=1e-15)
  for ours, theirs in zip(ps.sici(SICI_X), sps.sici(SICI_X)):
    _close(ours, theirs, atol=1e-15)
  _close(ps.owens_t(OWENS_H, OWENS_A), sps.owens_t(OWENS_H, OWENS_A), rtol=1e-12, atol=1e-16)
  _close(ps.bessel_jn(BESSEL_Z, v=3), np.stack([sps.jv(k, BESSEL_Z) for k in range(4)]),
         atol=1e-15)
  _close(ps.hyp1f1(1.3, 2.2, HYP1F1_X), sps.hyp1f1(1.3, 2.2, HYP1F1_X), rtol=1e-12)
  _close(ps.hyp2f1(0.3, 1.1, 2.7, HYP2F1_X), sps.hyp2f1(0.3, 1.1, 2.7, HYP2F1_X), rtol=1e-12)
  _close(ps.hyp2f1(-1.5, 0.6, 1.25, HYP2F1_X), sps.hyp2f1(-1.5, 0.6, 1.25, HYP2F1_X),
         rtol=1e-12)


def test_bernoulli_exact(x64):
  b = [fractions.Fraction(1)]     # B_m from the recurrence sum_k C(m+1, k) B_k = 0
  for m in range(1, 21):
    b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
  ours = np.asarray(ps.bernoulli(20))
  assert ours.dtype == np.float64
  np.testing.assert_array_equal(ours, [float(v) for v in b])
  np.testing.assert_allclose(ours, sps.bernoulli(20), rtol=1e-12, atol=1e-12)
  with pytest.raises(ValueError):
    ps.bernoulli(-1)


def test_float32_against_jax():
  jax = oracle()
  import jax.scipy.special as js
  f32 = lambda a: np.asarray(a, np.float32)
  x = f32(WIDE[1:-1])
  for name in ("erfcx", "dawsn"):
    ours = np.asarray(getattr(ps, name)(x))
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, getattr(js, name)(x), rtol=3e-6)
  for ours, theirs in zip(ps.fresnel(f32(FRESNEL_X[:-2])), js.fresnel(f32(FRESNEL_X[:-2]))):
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
  for ours, theirs in zip(ps.sici(f32(SICI_X)), js.sici(f32(SICI_X))):
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=1e-7)
  h, a = f32(OWENS_H[:5]), f32(OWENS_A[:5])
  np.testing.assert_allclose(ps.owens_t(h, a), js.owens_t(h, a), rtol=1e-5, atol=1e-7)
  z = f32([5., 20.])           # JAX's float32 recurrence gives nan for |z| <= 3 or z < 0
  np.testing.assert_allclose(ps.bessel_jn(z, v=3), js.bessel_jn(z, v=3), rtol=1e-4, atol=1e-6)
  x = f32(HYP1F1_X[1:])        # JAX's series cancels at x = -30 (SciPy agrees with ours)
  np.testing.assert_allclose(ps.hyp1f1(f32(1.3), f32(2.2), x),
                             js.hyp1f1(f32(1.3), f32(2.2), x), rtol=1e-5)
  x = f32(HYP2F1_X[2:-1])      # JAX's hyp2f1 is inaccurate below -1
  np.testing.assert_allclose(ps.hyp2f1(f32(0.3), f32(1.1), f32(2.7), x),
                             js.hyp2f1(f32(0.3), f32(1.1), f32(2.7), x), rtol=1e-5)


def _total(x):
  return (ps.erfcx(x) + ps.dawsn(x) + ps.fresnel(x)[0] + ps.fresnel(x)[1]
          + ps.owens_t(0.7, x) + ps.sici(x)[0] + ps.sici(x)[1] + ps.hyp1f1(1., 2., x)
          + ps.bessel_jn(x, v=2)[2])


def test_grad_jit_vmap(x64):
  xs = np.array([0.3, 1.2, 2.5, 7.])
  g = np.asarray(purejax.jit(purejax.vmap(purejax.grad(_total)))(xs))
  ref = lambda x: (sps.erfcx(x) + sps.dawsn(x) + sum(sps.fresnel(x)) + sum(sps.sici(x))
                   + sps.owens_t(0.7, x)
                   + sps.hyp1f1(1., 2., x) + sps.jv(2, x))
  np.testing.assert_allclose(g, (ref(xs + 1e-6) - ref(xs - 1e-6)) / 2e-6, rtol=1e-6, atol=1e-7)
  eager = np.asarray(_total(xs))
  np.testing.assert_allclose(np.asarray(purejax.jit(_total)(xs)), eager, rtol=1e-14)
  np.testing.assert_allclose(np.asarray(purejax.vmap(_total)(xs)), eager, rtol=1e-14)
  hy = purejax.vmap(lambda x: ps.hyp2f1(0.3, 1.1, 2.7, x))(HYP2F1_X[:-1])
  np.testing.assert_allclose(hy, sps.hyp2f1(0.3, 1.1, 2.7, HYP2F1_X[:-1]), rtol=1e-12)


def test_complex_inputs_refused():
  for f in (ps.erfcx, ps.dawsn, ps.fresnel, ps.sici):
    with pytest.raises(ValueError, match="complex"):
      f(np.array([1 + 1j]))


# (a, b, c, x): integer c - a - b after the transformations (the limit with
# digammas), polynomials, x near 1 and far below -1
HYP2F1_EDGES = [(-1.5, 0.5, 1.25, -5.), (1., 2., 3., -3.), (0.5, 1.5, 2., -2.),
                (-2., 3., 1.5, -4.), (2., 1., 3.5, -10.), (0.25, 0.75, 1., -3.),
                (3., 1., 1., 0.99), (1., 1., 1., -2.), (1., 1.5, 0.5, -5.),
                (0.5, 0.5, 2., 0.9), (1.5, 2.5, 1., 0.75), (-2.5, -0.5, 1.75, -20.),
                (0.3, 0.2, 1.5, 1.0), (0.5, -3., 2., 0.95)]


def test_hyp2f1_integer_gaps_match_scipy(x64):
  a, b, c, x = (np.array(v) for v in zip(*HYP2F1_EDGES))
  _close(ps.hyp2f1(a, b, c, x), sps.hyp2f1(a, b, c, x), rtol=1e-11)
  _close(purejax.jit(ps.hyp2f1)(a, b, c, x), sps.hyp2f1(a, b, c, x), rtol=1e-11)


def test_hyp2f1_above_one_is_inf_like_jax(x64):
  # JAX: inf for every x > 1 (SciPy too, except for polynomials)
  x = np.array([1.5, 2., 10.])
  assert np.all(np.isposinf(np.asarray(ps.hyp2f1(0.5, 0.5, 1.5, x))))
  jax = oracle()
  import jax.scipy.special as js
  np.testing.assert_array_equal(ps.hyp2f1(-2., 3., 1.5, np.float32(x)),
                                js.hyp2f1(-2., 3., 1.5, np.float32(x)))
