"""odeint: Dormand-Prince 5(4) adaptive Runge-Kutta with dense output, and
its gradient by the adjoint method (the augmented system integrated
backwards between consecutive output times), as a custom_vjp.

The state is flattened to one vector; the integrator is a scan over the
output times with a while_loop of steps inside, so it runs under jit, vmap
and grad.  Step control: error norm = RMS of err / (atol + rtol max(|y0|,
|y1|)); next step = step * clip(0.9 err^(-1/5), 0.2, 10), never shrinking
after an accepted step; the first step by Hairer, Norsett and Wanner's
heuristic (Solving ODEs I, II.4).
"""
import functools
import math

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src import core, dtypes, tree_util
from purejax._src.api_extras import closure_convert
from purejax._src.custom_vjp import custom_vjp
from purejax._src.ad_api import vjp
from purejax._src.vmap import vmap

# The Dormand-Prince tableau, its 4th-order weights and the weights of the
# midpoint value used for the dense output.
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
_A = [[1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
      [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
      [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
      [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100,
                1 / 40])
_MID = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                 -2691868925 / 45128329728, 187940372067 / 1594534317056,
                 -1776094331 / 19743644256, 11237099 / 235043384]) / 2


def _ravel(tree):
  leaves, treedef = tree_util.tree_flatten(tree)
  leaves = [jnp.asarray(x) for x in leaves]
  dtype = dtypes.result_type(*leaves) if leaves else np.float32
  flat = jnp.concatenate([jnp.ravel(x).astype(dtype) for x in leaves]) if leaves else (
      jnp.zeros((0,), dtype))
  shapes = [(x.shape, x.dtype) for x in leaves]
  sizes = np.cumsum([math.prod(s) for s, _ in shapes])[:-1]

  def unravel(v):
    parts = jnp.split(v, sizes) if shapes else []
    return treedef.unflatten([p.reshape(s).astype(d) for p, (s, d) in zip(parts, shapes)])
  return flat, unravel


def _rk_step(f, y0, f0, t0, dt):
  """One Dormand-Prince step: (y1, f1, error estimate, stage derivatives)."""
  ks = [f0]
  for i, row in enumerate(_A):
    yi = y0 + dt * sum(a * k for a, k in zip(row, ks) if a != 0)
    ks.append(f(yi, t0 + _C[i + 1] * dt))
  k = jnp.stack(ks)
  y1 = y0 + dt * jnp.asarray(_B5[:6], y0.dtype) @ k[:6]
  err = dt * jnp.asarray(_B5 - _B4, y0.dtype) @ k
  return y1, ks[-1], err, k


def _quartic(y0, y1, k, dt):
  """Coefficients (highest power first) of the quartic in s = (t - t0)/dt
  matching y and dy at both ends and the Dormand-Prince midpoint value."""
  ymid = y0 + dt * jnp.asarray(_MID, y0.dtype) @ k
  d0, d1 = dt * k[0], dt * k[-1]
  a_ = y1 - y0 - d0
  b_ = d1 - d0
  c_ = ymid - y0 - d0 / 2
  return jnp.stack([-8 * a_ + 2 * b_ + 16 * c_, 14 * a_ - 3 * b_ - 32 * c_,
                    16 * c_ - 5 * a_ + b_, d0, y0])


def _error_ratio(err, y0, y1, rtol, atol):
  scale = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
  return jnp.sqrt(jnp.mean((err / scale) ** 2))


def _next_step(dt, ratio):
  factor = jnp.where(ratio == 0, 10.0,
                     jnp.clip(0.9 * ratio ** (-1 / 5), 0.2, 10.0))
  factor = jnp.where(ratio <= 1, jnp.maximum(factor, 1.0), factor)
  return dt * factor


def _first_step(f, y0, t0, f0, rtol, atol):
  scale = atol + jnp.abs(y0) * rtol
  d0 = jnp.sqrt(jnp.mean((y0 / scale) ** 2))
  d1 = jnp.sqrt(jnp.mean((f0 / scale) ** 2))
  h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
  f1 = f(y0 + h0 * f0, t0 + h0)
  d2 = jnp.sqrt(jnp.mean(((f1 - f0) / scale) ** 2)) / h0
  big = jnp.maximum(d1, d2)
  h1 = jnp.where(big <= 1e-15, jnp.maximum(1e-6, h0 * 1e-3), (0.01 / big) ** (1 / 5))
  return jnp.minimum(100 * h0, h1)


def _integrate(f, rtol, atol, mxstep, hmax, y0, ts):
  """y at every time in ts (y0 at ts[0]) for the flat system y' = f(y, t)."""
  dtype = y0.dtype
  ts = ts.astype(dtype)
  f0 = f(y0, ts[0])
  dt0 = _first_step(f, y0, ts[0], f0, rtol, atol)
  interp0 = jnp.zeros((5,) + y0.shape, dtype).at[-1].set(y0)

  def advance(carry, target):
    def cond(s):
      _, _, t, dt, _, _, i = s
      return (t < target) & (i < mxstep) & (dt > 0)

    def body(s):
      y, fy, t, dt, last_t, interp, i = s
      dt = jnp.minimum(dt, hmax)
      y1, f1, err, k = _rk_step(f, y, fy, t, dt)
      ratio = _error_ratio(err, y, y1, rtol, atol)
      accept = ratio <= 1
      keep = lambda new, old: jnp.where(accept, new, old)
      interp = keep(_quartic(y, y1, k, dt), interp)
      return (keep(y1, y), keep(f1, fy), keep(t + dt, t), _next_step(dt, ratio),
              keep(t, last_t), interp, i + 1)

    y, fy, t, dt, last_t, interp = carry
    y, fy, t, dt, last_t, interp, _ = lax.while_loop(
        cond, body, (y, fy, t, dt, last_t, interp, 0))
    s = (target - last_t) / (t - last_t)
    value = (((interp[0] * s + interp[1]) * s + interp[2]) * s + interp[3]) * s + interp[4]
    return (y, fy, t, dt, last_t, interp), value

  carry = (y0, f0, ts[0], dt0, ts[0], interp0)
  _, ys = lax.scan(advance, carry, ts[1:])
  return jnp.concatenate([y0[None], ys])


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
  return _integrate(lambda y, t: func(y, t, *args), rtol, atol, mxstep, hmax, y0, ts)


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
  ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
  return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
  ys, ts, args = residuals
  ts = jnp.asarray(ts)
  args_bar0 = tree_util.tree_map(jnp.zeros_like, args)
  # Augmented state (y, adjoint a, args cotangent), integrated in s = -t.
  aug0, unravel = _ravel((ys[-1], g[-1], args_bar0))

  def aug_dynamics(state, s):
    y, a, _ = unravel(state)
    fy, pullback = vjp(lambda y, t, args: func(y, t, *args), y, -s, args)
    a_y, _, a_args = pullback(a)
    return _ravel((-fy, a_y, a_args))[0]

  def interval(carry, i):
    a, args_bar = carry
    a = a + g[i]
    state0 = _ravel((ys[i], a, args_bar))[0]
    span = jnp.stack([-ts[i], -ts[i - 1]])
    out = _integrate(aug_dynamics, rtol, atol, mxstep, hmax, state0, span)[1]
    _, a, args_bar = unravel(out)
    return (a, args_bar), None

  indices = jnp.arange(len(ts) - 1, 0, -1)
  (a, args_bar), _ = lax.scan(interval, (jnp.zeros_like(ys[0]), args_bar0), indices)
  fs = vmap(lambda y, t: func(y, t, *args))(ys, ts)
  ts_bar = jnp.sum(fs * g, axis=-1)
  ts_bar = ts_bar.at[0].set(-jnp.dot(a, fs[0]))
  return (a + g[0], ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
  """Solve y' = func(y, t, *args) from y(t[0]) = y0; returns y at every t
  (stacked on a leading axis of each leaf of the pytree y0)."""
  for arg in tree_util.tree_leaves(args):
    if not core.is_array_like(arg):
      raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
  t = jnp.asarray(t)
  flat_y0, unravel = _ravel(y0)
  flat_y0 = flat_y0.astype(dtypes.result_type(flat_y0, float))

  def flat_func(y, t, *args):
    return _ravel(func(unravel(y), t, *args))[0].astype(y.dtype)

  converted, consts = closure_convert(flat_func, flat_y0, t[0], *args)
  ys = _odeint(converted, rtol, atol, mxstep, hmax, flat_y0, t, *args, *consts)
  return vmap(unravel)(ys)
