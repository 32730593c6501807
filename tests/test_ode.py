"""purejax.experimental.ode.odeint: values against scipy.integrate.solve_ivp
and JAX's odeint, adjoint gradients against finite differences and JAX's,
jit, vmap, pytree states and closed-over values."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax.experimental.ode import odeint

from conftest import oracle

integrate = pytest.importorskip("scipy.integrate")

TS = np.linspace(0.1, 2.0, 6)
Y0 = np.array([1.0, 0.5])


def forced(np_):
  return lambda y, t, k: -k * y * t + np_.sin(t) * y[::-1]


def _solve_ivp(f, y0, ts, *args):
  r = integrate.solve_ivp(lambda t, y: f(y, t, *args), (ts[0], ts[-1]), y0, t_eval=ts,
                          method="DOP853", rtol=1e-12, atol=1e-12)
  return r.y.T


def test_values_match_solve_ivp(x64):
  ys = odeint(forced(jnp), Y0, TS, 0.7)
  assert ys.shape == (6, 2) and ys.dtype == np.float64
  np.testing.assert_allclose(ys, _solve_ivp(forced(np), Y0, TS, 0.7), rtol=1e-7, atol=1e-8)
  # Van der Pol (mildly stiff) with tighter tolerances.
  vdp = lambda y, t, mu: np.array([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]]) if isinstance(
      y, np.ndarray) else jnp.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])
  ts = np.linspace(0, 5, 11)
  ys = odeint(vdp, np.array([2.0, 0.0]), ts, 2.0, rtol=1e-10, atol=1e-10)
  np.testing.assert_allclose(ys, _solve_ivp(vdp, np.array([2.0, 0.0]), ts, 2.0), atol=1e-7)


def _fd(fun, x, eps=1e-6):
  x = np.asarray(x, float)
  out = np.zeros_like(x)
  for i in np.ndindex(x.shape):
    e = np.zeros_like(x)
    e[i] = eps
    out[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
  return out


def test_adjoint_gradients_match_finite_differences(x64):
  f = forced(jnp)
  loss = lambda y0, ts, k: jnp.sum(odeint(f, y0, ts, k, rtol=1e-11, atol=1e-11) ** 2)
  g_y0, g_ts, g_k = purejax.grad(loss, (0, 1, 2))(Y0, TS, 0.7)
  np.testing.assert_allclose(g_y0, _fd(lambda y: float(loss(y, TS, 0.7)), Y0), rtol=1e-5)
  np.testing.assert_allclose(g_ts, _fd(lambda t: float(loss(Y0, t, 0.7)), TS), rtol=1e-5,
                             atol=1e-6)
  np.testing.assert_allclose(g_k, _fd(lambda k: float(loss(Y0, TS, k)), np.array(0.7)),
                             rtol=1e-5)


def test_jit_vmap_pytree_and_closure(x64):
  f = forced(jnp)
  eager = odeint(f, Y0, TS, 0.7)
  np.testing.assert_allclose(purejax.jit(lambda y0, k: odeint(f, y0, TS, k))(Y0, 0.7), eager,
                             rtol=1e-13)
  ks = np.array([0.3, 0.7, 1.1])
  batched = purejax.vmap(lambda k: odeint(f, Y0, TS, k))(ks)
  for k, ys in zip(ks, np.asarray(batched)):
    np.testing.assert_allclose(ys, odeint(f, Y0, TS, k), rtol=1e-7, atol=1e-9)
  # A dict state, and a gradient through a value the dynamics close over.
  tree = odeint(lambda s, t: {"a": -s["b"], "b": s["a"]}, {"a": 1.0, "b": 0.0}, TS)
  np.testing.assert_allclose(tree["a"], np.cos(TS - TS[0]), atol=1e-7)
  np.testing.assert_allclose(tree["b"], np.sin(TS - TS[0]), atol=1e-7)

  def decay_end(k):
    return odeint(lambda y, t: -k * y, 2.0, np.array([0.0, 1.5]), rtol=1e-11, atol=1e-11)[-1]
  np.testing.assert_allclose(purejax.grad(decay_end)(0.4), -1.5 * 2.0 * np.exp(-0.6),
                             rtol=1e-7)
  np.testing.assert_allclose(purejax.jit(purejax.grad(decay_end))(0.4),
                             -1.5 * 2.0 * np.exp(-0.6), rtol=1e-7)


def test_matches_jax():
  jax = oracle()
  from jax.experimental.ode import odeint as jax_odeint
  y0, ts = Y0.astype(np.float32), TS.astype(np.float32)
  ours = odeint(forced(jnp), y0, ts, np.float32(0.7))
  theirs = jax_odeint(forced(jax.numpy), y0, ts, np.float32(0.7))
  assert ours.dtype == theirs.dtype == np.float32
  np.testing.assert_allclose(ours, theirs, rtol=1e-5)
  g_ours = purejax.grad(lambda k: jnp.sum(odeint(forced(jnp), y0, ts, k)))(np.float32(0.7))
  g_theirs = jax.grad(lambda k: jax.numpy.sum(jax_odeint(forced(jax.numpy), y0, ts, k)))(
      np.float32(0.7))
  np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-4)


def test_args_must_be_arrays():
  with pytest.raises(TypeError, match="must be arrays or scalars"):
    odeint(lambda y, t, fn: -y, 1.0, np.array([0., 1.]), lambda x: x)
