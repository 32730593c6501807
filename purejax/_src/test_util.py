"""Checking derivatives against finite differences: check_grads, check_jvp,
check_vjp (the public ``purejax.test_util``).

Derivatives are checked along one random direction (a fixed seed), so a
check costs a few evaluations of the function whatever its size:

* forward mode: ``jvp`` against the central difference
  ``(f(x + eps v) - f(x - eps v)) / (2 eps)``;
* reverse mode: ``<J v, w> == <v, J^T w>`` for random ``v`` and ``w``, with
  ``J v`` from finite differences and ``J^T w`` from ``vjp``.

Higher orders repeat the checks on the derivative functions themselves.
"""
import functools

import numpy as np

from purejax._src import ad_api
from purejax._src import dtypes
from purejax._src import tree_util
from purejax._src.config import config

EPS = 1e-4

# Default tolerances (atol and rtol alike) of the gradient checks, per dtype.
default_gradient_tolerance = {
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _is_python_scalar(x):
  return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _dtype(x):
  if _is_python_scalar(x):
    return dtypes.canonicalize_dtype(np.result_type(type(x)))
  dtype = getattr(x, "dtype", None)
  return np.dtype(dtype) if dtype is not None else np.asarray(x).dtype


def _tolerance(tol, dtype):
  """``tol`` (a number, or a dict by dtype merged over the defaults) for ``dtype``."""
  if tol is not None and not isinstance(tol, dict):
    return tol
  table = dict(default_gradient_tolerance)
  table.update({np.dtype(k): v for k, v in (tol or {}).items()})
  return table.get(np.dtype(dtype), 0)


def _assert_close(x, y, atol, rtol, err_msg):
  x, y = np.asarray(x), np.asarray(y)
  if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
    assert x.dtype == y.dtype and x.shape == y.shape, err_msg
    return
  # The looser tolerance of the two dtypes applies (e.g. float32 vs float64).
  a = max(_tolerance(atol, x.dtype), _tolerance(atol, y.dtype))
  r = max(_tolerance(rtol, x.dtype), _tolerance(rtol, y.dtype))
  if x.dtype == dtypes.bfloat16 or y.dtype == dtypes.bfloat16:
    x, y = x.astype(np.float32), y.astype(np.float32)
  with np.errstate(invalid="ignore"):
    np.testing.assert_allclose(x, y, atol=a or 0, rtol=r or 1e-7, err_msg=err_msg)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
  tree_util.tree_map(functools.partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg),
                     xs, ys)


def _check_dtypes_match(xs, ys):
  def check(x, y):
    dx, dy = _dtype(x), _dtype(y)
    if not config.jax_enable_x64:
      dx, dy = dtypes.canonicalize_dtype(dx), dtypes.canonicalize_dtype(dy)
    assert dx == dy, f"dtypes differ: {dx} vs {dy}"
  tree_util.tree_map(check, xs, ys)


def rand_like(rng, x):
  """Standard normal values shaped and typed like ``x`` (complex: both parts)."""
  dtype, shape = _dtype(x), np.shape(x)
  value = np.asarray(rng.randn(*shape), dtype)
  if dtypes.issubdtype(dtype, np.complexfloating):
    value = value + np.asarray(rng.randn(*shape), dtype) * dtype.type(1j)
  return value.item() if _is_python_scalar(x) else value


def _scale(tree, factor):
  return tree_util.tree_map(lambda x: np.asarray(x) * np.asarray(factor, _dtype(x)), tree)


def _combine(op, xs, ys):
  return tree_util.tree_map(lambda x, y: op(np.asarray(x), np.asarray(y)).astype(_dtype(x)),
                            xs, ys)


def _difference(x, y):
  # inf - inf counts as no change, so infinite outputs give zero derivatives.
  x, y = np.asarray(x), np.asarray(y)
  with np.errstate(invalid="ignore"):
    return np.where(x == y, np.zeros((), x.dtype), np.subtract(x, y, dtype=x.dtype))


def numerical_jvp(f, primals, tangents, eps=EPS):
  """The central finite difference of ``f`` at ``primals`` along ``tangents``."""
  step = _scale(tangents, eps)
  f_plus = f(*_combine(np.add, primals, step))
  f_minus = f(*_combine(np.subtract, primals, step))
  diff = tree_util.tree_map(_difference, f_plus, f_minus)
  return _scale(diff, 0.5 / eps)


def inner_prod(xs, ys):
  """The real inner product sum(Re(conj(x) y)) over two pytrees of arrays."""
  def dot(x, y):
    return np.real(np.dot(np.conj(np.asarray(x)).ravel(), np.asarray(y).ravel()))
  # Summed in the leaves' own precision, which then sets the tolerance.
  return functools.reduce(np.add, tree_util.tree_leaves(tree_util.tree_map(dot, xs, ys)))


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Checks ``f_jvp(primals, tangents)`` (typically ``partial(jvp, f)``)
  against finite differences along a random direction."""
  rng = np.random.RandomState(0)
  tangent = tree_util.tree_map(functools.partial(rand_like, rng), args)
  out, tangent_out = f_jvp(args, tangent)
  _check_dtypes_match(out, tangent_out)
  expected = f(*args)
  _check_dtypes_match(out, expected)
  expected_tangent = numerical_jvp(f, args, tangent, eps=eps)
  prefix = f"{err_msg} " if err_msg else ""
  check_close(out, expected, atol, rtol, prefix + "primal")
  check_close(tangent_out, expected_tangent, atol, rtol, prefix + "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Checks ``f_vjp(*primals) -> (out, vjp_fun)`` (typically ``partial(vjp,
  f)``) through the identity <J v, w> == <v, J^T w>."""
  rng = np.random.RandomState(0)
  out, vjp_fun = f_vjp(*args)
  prefix = f"{err_msg} " if err_msg else ""
  check_close(out, f(*args), atol, rtol, prefix + "primal")
  v = tree_util.tree_map(functools.partial(rand_like, rng), args)
  jv = numerical_jvp(f, args, v, eps=eps)
  w = tree_util.tree_map(functools.partial(rand_like, rng), out)
  # JAX's vjp is the transpose, not the adjoint: conjugate around it.
  jtw = tree_util.tree_map(np.conj, vjp_fun(tree_util.tree_map(np.conj, w)))
  check_close(inner_prod(v, jtw), inner_prod(jv, w), atol, rtol,
              prefix + "cotangent projection")


def _jvp_by_linearize(f, primals, tangents):
  out, f_lin = ad_api.linearize(f, *primals)
  return out, f_lin(*tangents)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
  """Checks the derivatives of ``f`` at ``args`` up to ``order``, in forward
  (``"fwd"``), reverse (``"rev"``) and linearize (``"lin"``) modes.

  Raises AssertionError when they disagree with finite differences.
  """
  args = tuple(args)
  eps = eps or EPS
  jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
  vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

  def check(f, args, order, what):
    def label(mode):
      return f"{mode} of {what}" if what else mode

    if "fwd" in modes:
      jvp_f = functools.partial(ad_api.jvp, f)
      jvp_check(f, jvp_f, args, err_msg=label("JVP"))
      if order > 1:
        check(jvp_f, (args, args), order - 1, label("JVP"))
    if "rev" in modes:
      vjp_check(f, functools.partial(ad_api.vjp, f), args, err_msg=label("VJP"))
      if order > 1:
        def vjp_f(*primals):
          out, vjp_fun = ad_api.vjp(f, *primals)
          return vjp_fun(out)   # the output itself serves as the cotangent
        check(vjp_f, args, order - 1, label("VJP"))
    if "lin" in modes:
      lin_f = functools.partial(_jvp_by_linearize, f)
      jvp_check(f, lin_f, args, err_msg=label("LIN"))
      if order > 1:
        check(lin_f, (args, args), order - 1, label("LIN"))

  check(f, args, order, "")
