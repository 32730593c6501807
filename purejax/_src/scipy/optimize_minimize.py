"""scipy.optimize.minimize with JAX's methods: BFGS (Nocedal and Wright,
algorithm 6.1, with the strong Wolfe line search) and L-BFGS (two-loop
recursion over the last ``maxcor`` pairs).  Each is one while_loop, so
``minimize`` runs under jit."""
from typing import NamedTuple

import numpy as np

import purejax.numpy as jnp
from purejax import lax
from purejax._src.ad_api import value_and_grad
from purejax._src.scipy.optimize_line_search import line_search


class OptimizeResults(NamedTuple):
  """Result of ``minimize``: the solution ``x``, ``success``, ``status`` (0
  converged, 1 maxiter reached, 3 line search bracket collapsed, 5 line
  search maxiter reached), ``fun``, ``jac``, ``hess_inv`` (None for L-BFGS),
  and the counts ``nfev``, ``njev``, ``nit``."""
  x: object
  success: object
  status: object
  fun: object
  jac: object
  hess_inv: object
  nfev: object
  njev: object
  nit: object


def _norm(g, ord):
  return jnp.linalg.norm(g, ord=ord)


def _status(converged, k, maxiter, failed, ls_status):
  return jnp.where(converged, 0, jnp.where(k >= maxiter, 1,
                                           jnp.where(failed, 2 + ls_status, -1)))


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
  n = x0.shape[0]
  maxiter = 200 * n if maxiter is None else maxiter
  value_grad = value_and_grad(fun)
  f0, g0 = value_grad(x0)
  eye = jnp.eye(n, dtype=x0.dtype)
  state0 = dict(converged=_norm(g0, norm) < gtol, failed=jnp.asarray(False), k=jnp.asarray(0),
                nfev=jnp.asarray(1), x=x0, f=f0, g=g0, H=eye,
                old_old_f=f0 + _norm(g0, 2) / 2, ls_status=jnp.asarray(0))

  def cond(s):
    return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter)

  def body(s):
    p = -s["H"] @ s["g"]
    ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["old_old_f"], gfk=s["g"],
                     maxiter=line_search_maxiter)
    step = ls.a_k * p
    y = ls.g_k - s["g"]
    ys = jnp.dot(y, step)
    rho = jnp.where(ys == 0, 1000.0, 1 / jnp.where(ys == 0, 1, ys))
    left = eye - rho * jnp.outer(step, y)
    H_new = left @ s["H"] @ left.T + rho * jnp.outer(step, step)
    ok = ~ls.failed
    keep = lambda new, old: jnp.where(ok, new, old)
    return dict(converged=ok & (_norm(ls.g_k, norm) < gtol), failed=ls.failed, k=s["k"] + 1,
                nfev=s["nfev"] + ls.nfev, x=keep(s["x"] + step, s["x"]), f=keep(ls.f_k, s["f"]),
                g=keep(ls.g_k, s["g"]), H=keep(H_new, s["H"]), old_old_f=s["f"],
                ls_status=ls.status)

  s = lax.while_loop(cond, body, state0)
  status = _status(s["converged"], s["k"], maxiter, s["failed"], s["ls_status"])
  return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=status,
                         fun=s["f"], jac=s["g"], hess_inv=s["H"], nfev=s["nfev"],
                         njev=s["nfev"], nit=s["k"])


def minimize_lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
                   gtol=1e-5, maxfun=None, maxgrad=None, maxls=20):
  n = x0.shape[0]
  maxiter = 200 * n if maxiter is None else maxiter
  maxfun = np.inf if maxfun is None else maxfun
  maxgrad = np.inf if maxgrad is None else maxgrad
  value_grad = value_and_grad(fun)
  f0, g0 = value_grad(x0)
  dtype = x0.dtype
  state0 = dict(converged=_norm(g0, norm) < gtol, failed=jnp.asarray(False), k=jnp.asarray(0),
                nfev=jnp.asarray(1), x=x0, f=f0, g=g0,
                S=jnp.zeros((maxcor, n), dtype), Y=jnp.zeros((maxcor, n), dtype),
                rho=jnp.zeros((maxcor,), dtype), gamma=jnp.ones((), dtype),
                ls_status=jnp.asarray(0), old_old_f=f0 + _norm(g0, 2) / 2)

  def direction(s):
    # Two-loop recursion; the history is a ring buffer, newest at (k-1) % maxcor,
    # unused slots have rho = 0 and drop out.
    def newest_first(i, carry):
      q, alphas = carry
      j = (s["k"] - 1 - i) % maxcor
      alpha = s["rho"][j] * jnp.dot(s["S"][j], q)
      return q - alpha * s["Y"][j], alphas.at[j].set(alpha)
    q, alphas = lax.fori_loop(0, maxcor, newest_first, (s["g"], jnp.zeros((maxcor,), dtype)))
    r = s["gamma"] * q
    def oldest_first(i, r):
      j = (s["k"] - maxcor + i) % maxcor
      beta = s["rho"][j] * jnp.dot(s["Y"][j], r)
      return r + s["S"][j] * (alphas[j] - beta)
    return -lax.fori_loop(0, maxcor, oldest_first, r)

  def cond(s):
    return (~s["converged"] & ~s["failed"] & (s["k"] < maxiter) & (s["nfev"] < maxfun)
            & (s["nfev"] < maxgrad))

  def body(s):
    p = direction(s)
    ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["old_old_f"], gfk=s["g"],
                     maxiter=maxls)
    step = ls.a_k * p
    y = ls.g_k - s["g"]
    ys = jnp.dot(y, step)
    slot = s["k"] % maxcor
    ok = ~ls.failed
    keep = lambda new, old: jnp.where(ok, new, old)
    small_change = (s["f"] - ls.f_k) <= ftol * jnp.maximum(
        jnp.maximum(jnp.abs(s["f"]), jnp.abs(ls.f_k)), 1)
    converged = ok & ((_norm(ls.g_k, norm) < gtol) | small_change)
    return dict(converged=converged, failed=ls.failed, k=s["k"] + 1,
                nfev=s["nfev"] + ls.nfev, x=keep(s["x"] + step, s["x"]), f=keep(ls.f_k, s["f"]),
                g=keep(ls.g_k, s["g"]), S=s["S"].at[slot].set(step), Y=s["Y"].at[slot].set(y),
                rho=s["rho"].at[slot].set(jnp.where(ys == 0, 0, 1 / jnp.where(ys == 0, 1, ys))),
                gamma=jnp.where(ys > 0, ys / jnp.dot(y, y), s["gamma"]),
                ls_status=ls.status, old_old_f=s["f"])

  s = lax.while_loop(cond, body, state0)
  status = _status(s["converged"], s["k"], maxiter, s["failed"], s["ls_status"])
  return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=status,
                         fun=s["f"], jac=s["g"], hess_inv=None, nfev=s["nfev"],
                         njev=s["nfev"], nit=s["k"])


_METHODS = {"bfgs": minimize_bfgs, "l-bfgs-experimental-do-not-rely-on-this": minimize_lbfgs}


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
  """SciPy's minimize for 1-D ``x0``; ``tol`` is accepted and, as in JAX,
  not used (pass ``options={'gtol': ...}``)."""
  del tol
  if not isinstance(args, tuple):
    raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, "
                    f"got {args}")
  solver = _METHODS.get(method.lower())
  if solver is None:
    raise ValueError(f"Method {method} not recognized")
  x0 = jnp.asarray(x0)
  if x0.ndim != 1:
    raise TypeError(f"minimize: x0 must be a 1-D array, got shape {x0.shape}.")
  return solver(lambda x: fun(x, *args), x0, **(options or {}))
