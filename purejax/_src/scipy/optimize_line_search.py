"""An inexact line search satisfying the strong Wolfe conditions (Nocedal and
Wright, Numerical Optimization, algorithms 3.5 and 3.6), as one while_loop
so that it runs under jit.

The loop has two stages sharing one function evaluation per iteration:
bracketing (the step doubles until it overshoots) and zooming (a safeguarded
cubic interpolation inside the bracket).
"""
from typing import NamedTuple

import purejax.numpy as jnp
from purejax import lax
from purejax._src.ad_api import value_and_grad

_BRACKET, _ZOOM, _DONE, _FAILED = 0, 1, 2, 3


class LineSearchResults(NamedTuple):
  failed: object    # bool: no step satisfying the Wolfe conditions was found
  nit: object
  nfev: object
  ngev: object
  k: object
  a_k: object       # the step length
  f_k: object
  g_k: object
  status: object    # 0 success, 1 the bracket collapsed, 3 maxiter reached


def _cubic_min(a_lo, f_lo, d_lo, a_hi, f_hi, d_hi):
  """Minimiser of the cubic matching value and slope at both ends, kept at
  least 10% of the bracket away from its ends (bisection otherwise)."""
  d1 = d_lo + d_hi - 3 * (f_lo - f_hi) / (a_lo - a_hi)
  disc = d1 * d1 - d_lo * d_hi
  d2 = jnp.sign(a_hi - a_lo) * jnp.sqrt(jnp.maximum(disc, 0))
  a = a_hi - (a_hi - a_lo) * (d_hi + d2 - d1) / (d_hi - d_lo + 2 * d2)
  lo, hi = jnp.minimum(a_lo, a_hi), jnp.maximum(a_lo, a_hi)
  margin = 0.1 * (hi - lo)
  ok = (disc >= 0) & jnp.isfinite(a) & (a > lo + margin) & (a < hi - margin)
  return jnp.where(ok, a, 0.5 * (a_lo + a_hi))


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
  xk, pk = jnp.asarray(xk), jnp.asarray(pk)
  value_grad = value_and_grad(f)
  if old_fval is None or gfk is None:
    old_fval, gfk = value_grad(xk)
  dtype = xk.dtype
  phi0 = jnp.asarray(old_fval, dtype)
  dphi0 = jnp.dot(gfk, pk)
  # SciPy's first trial step: aim for the previous decrease, at most 1.
  first = jnp.asarray(1.0, dtype)
  if old_old_fval is not None:
    guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
    first = jnp.where(jnp.isfinite(guess) & (guess > 0), jnp.minimum(guess, 1.0), 1.0)
  zero = jnp.zeros((), dtype)

  state0 = dict(
      stage=jnp.asarray(_BRACKET), i=jnp.asarray(0), a_try=first,
      a_prev=zero, f_prev=phi0, d_prev=dphi0,
      a_lo=zero, f_lo=phi0, d_lo=dphi0, a_hi=zero, f_hi=phi0, d_hi=dphi0,
      a_k=zero, f_k=phi0, g_k=gfk, status=jnp.asarray(0))

  def cond(s):
    return (s["stage"] < _DONE) & (s["i"] < maxiter)

  def body(s):
    a = s["a_try"]
    phi, g = value_grad(xk + a * pk)
    dphi = jnp.dot(g, pk)
    armijo_fails = phi > phi0 + c1 * a * dphi0
    curvature_holds = jnp.abs(dphi) <= -c2 * dphi0

    # Bracketing stage.
    overshoot = armijo_fails | ((s["i"] > 0) & (phi >= s["f_prev"]))
    b_done = ~overshoot & curvature_holds
    uphill = ~overshoot & ~curvature_holds & (dphi >= 0)
    # overshoot: bracket (prev, a), prev the low end; uphill: (a, prev), a the low end.
    b_lo = [jnp.where(overshoot, s["a_prev"], a), jnp.where(overshoot, s["f_prev"], phi),
            jnp.where(overshoot, s["d_prev"], dphi)]
    b_hi = [jnp.where(overshoot, a, s["a_prev"]), jnp.where(overshoot, phi, s["f_prev"]),
            jnp.where(overshoot, dphi, s["d_prev"])]
    b_stage = jnp.where(b_done, _DONE, jnp.where(overshoot | uphill, _ZOOM, _BRACKET))

    # Zoom stage.
    lo = [s["a_lo"], s["f_lo"], s["d_lo"]]
    hi = [s["a_hi"], s["f_hi"], s["d_hi"]]
    new = [a, phi, dphi]
    becomes_hi = armijo_fails | (phi >= s["f_lo"])
    z_done = ~becomes_hi & curvature_holds
    flip = ~becomes_hi & ~z_done & (dphi * (s["a_hi"] - s["a_lo"]) >= 0)
    z_hi = [jnp.where(becomes_hi, n, jnp.where(flip, l, h)) for n, l, h in zip(new, lo, hi)]
    z_lo = [jnp.where(becomes_hi, l, n) for n, l in zip(new, lo)]
    collapsed = jnp.abs(z_hi[0] - z_lo[0]) <= 1e-10 * jnp.maximum(1, jnp.abs(z_lo[0]))
    z_stage = jnp.where(z_done, _DONE, jnp.where(collapsed, _FAILED, _ZOOM))

    zooming = s["stage"] == _ZOOM
    pick = lambda z, b: jnp.where(zooming, z, b)
    lo = [pick(z, b) for z, b in zip(z_lo, b_lo)]
    hi = [pick(z, b) for z, b in zip(z_hi, b_hi)]
    stage = pick(z_stage, b_stage)
    next_a = jnp.where(stage == _ZOOM, _cubic_min(*lo, *hi), 2 * a)
    done = stage == _DONE
    return dict(
        stage=stage, i=s["i"] + 1, a_try=next_a,
        a_prev=a, f_prev=phi, d_prev=dphi,
        a_lo=lo[0], f_lo=lo[1], d_lo=lo[2], a_hi=hi[0], f_hi=hi[1], d_hi=hi[2],
        a_k=jnp.where(done, a, s["a_k"]), f_k=jnp.where(done, phi, s["f_k"]),
        g_k=jnp.where(done, g, s["g_k"]),
        status=jnp.where(stage == _FAILED, 1, s["status"]))

  s = lax.while_loop(cond, body, state0)
  failed = s["stage"] != _DONE
  status = jnp.where(failed, jnp.where(s["stage"] == _FAILED, 1, 3), 0)
  return LineSearchResults(failed=failed, nit=s["i"], nfev=s["i"], ngev=s["i"], k=s["i"],
                           a_k=s["a_k"], f_k=s["f_k"], g_k=s["g_k"], status=status)
