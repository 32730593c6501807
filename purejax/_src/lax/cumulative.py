"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin and
cumlogsumexp (``axis`` and ``reverse`` params, as JAX's).

Integer scans and cummax/cummin accumulate in one pass in the operand's
dtype (exact); float sums, products and log-sum-exps in double, in
``scan_order``'s fixed block order (accurate like JAX's tree order, and the
C code's bits).  Derivatives (except
cumsum's, which is linear) differentiate the parallel-prefix formulation
(``associative_scan``) of the same computation, as JAX does, so ties of
cummax/cummin share the tangent the same way JAX's do.

Also here: ``logaddexp``, the overflow-free log(exp(x) + exp(y)) with a
custom JVP, which cumlogsumexp combines with and jnp.logaddexp wraps.
"""
import numpy as np

from purejax._src import core
from purejax._src import dtypes
from purejax._src.custom_jvp import custom_jvp
from purejax._src.interpreters import ad
from purejax._src.lax import ad_util
from purejax._src.lax import scan_order
from purejax._src.lax import api_elementwise as ew
from purejax._src.lax import utils
from purejax._src.lax.families import standard_primitive


# -- logaddexp ---------------------------------------------------------------------

def _const(x, value):
  return np.array(value, dtype=core.get_aval(x).dtype)


def wrap_between(x, half_period):
  """``x`` wrapped into [-half_period, half_period)."""
  shifted = ew.rem(ew.add(x, _const(x, half_period)), _const(x, 2 * half_period))
  shifted = ew.select(ew.lt(shifted, _const(x, 0)),
                      ew.add(shifted, _const(x, 2 * half_period)), shifted)
  return ew.sub(shifted, _const(x, half_period))


def log_add(x1, x2, exp, log1p_scale=None, half_period=np.pi):
  """log(exp(x1) + exp(x2)) for ``exp`` and its inverse log (base e or 2),
  computed from the larger operand so that nothing overflows."""
  amax = ew.max(x1, x2)
  scale = (lambda y: y) if log1p_scale is None else (
      lambda y: ew.mul(_const(y, log1p_scale), y))
  if dtypes.issubdtype(core.get_aval(x1).dtype, np.complexfloating):
    delta = ew.sub(ew.add(x1, x2), ew.mul(amax, _const(amax, 2)))
    out = ew.add(amax, scale(ew.log1p(exp(delta))))
    return ew.complex(ew.real(out), wrap_between(ew.imag(out), half_period))
  delta = ew.sub(x1, x2)
  # A NaN delta: a NaN operand, or infinities of one sign (their sum is right).
  return ew.select(ew.ne(delta, delta), ew.add(x1, x2),
                   ew.add(amax, scale(ew.log1p(exp(ew.neg(ew.abs(delta)))))))


def replace_posinf(x):
  """+inf replaced by 0: the derivative weights exp(x - out) of an infinite
  operand would otherwise be NaN."""
  from purejax._src.lax.structural import broadcast_in_dim
  shape = core.get_aval(x).shape
  zeros = broadcast_in_dim(_const(x, 0), shape, ()) if shape else _const(x, 0)
  return ew.select(ew.eq(x, _const(x, np.inf)), zeros, x)


@custom_jvp
def logaddexp(x1, x2):
  """log(exp(x1) + exp(x2)) without overflow (operands of one inexact dtype)."""
  return log_add(x1, x2, ew.exp)


@logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
  x1, x2 = primals
  t1, t2 = tangents
  out = logaddexp(x1, x2)
  w1 = ew.exp(ew.sub(replace_posinf(x1), replace_posinf(out)))
  w2 = ew.exp(ew.sub(replace_posinf(x2), replace_posinf(out)))
  return out, ew.add(ew.mul(t1, w1), ew.mul(t2, w2))


# -- the primitives ------------------------------------------------------------------

def _abstract_eval(name, kinds):

  def rule(operand, *, axis, reverse):
    if not dtypes.issubdtype(operand.dtype, kinds):
      raise TypeError(f"{name} does not accept dtype {core.dtype_name(operand.dtype)}. "
                      f"Accepted dtypes are subtypes of {kinds.__name__}.")
    if axis < 0:
      raise ValueError("XLA operations do not allow negative axes")
    if axis >= operand.ndim:
      raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
    return core.ShapedArray(operand.shape, operand.dtype, operand.weak_type)

  return rule


def _impl(accumulate):
  """``accumulate(x, axis)`` run forward, or backward when ``reverse``."""

  def impl(x, *, axis, reverse):
    x = np.asarray(x)
    if x.shape[axis] == 0:
      return x
    if reverse:
      x = np.flip(x, axis)
    with np.errstate(over="ignore", invalid="ignore"):
      out = np.asarray(accumulate(x, axis)).astype(x.dtype)
    return np.flip(out, axis) if reverse else out

  return impl


def _fix_zero_sign(x, out, axis, negative):
  """XLA orders -0.0 below +0.0 (NumPy keeps the first zero it meets): a
  running max is +0.0 once a +0.0 was seen, a running min -0.0 once a -0.0."""
  if not dtypes.issubdtype(x.dtype, np.floating):
    return out
  seen = np.logical_or.accumulate((x == 0) & (np.signbit(x) == negative), axis=axis)
  signed = np.where(seen, -0.0 if negative else 0.0, -0.0 if not negative else 0.0)
  return np.where(out == 0, signed.astype(out.dtype), out)


def _complex_first(a, b, negative):
  """Where ``a`` comes strictly before ``b`` by (real, imaginary) (strictly
  after when not ``negative``): False for NaNs and ties."""
  ar, br, ai, bi = a.real, b.real, a.imag, b.imag
  if negative:
    return np.where(ar == br, ai < bi, ar < br)
  return np.where(ar == br, ai > bi, ar > br)


def _complex_extremum(x, axis, negative):
  """A running complex max/min with XLA's elementwise rule (the later element
  unless the running value is strictly first), sequentially: with NaNs that
  rule is not associative."""
  x = np.moveaxis(x, axis, 0)
  out = np.empty_like(x)
  run = out[0] = x[0]
  for i in range(1, x.shape[0]):
    run = out[i] = np.where(_complex_first(run, x[i], negative), run, x[i])
  return np.moveaxis(out, 0, axis)


def _extremum(ufunc, negative):
  def accumulate(x, axis):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
      return _complex_extremum(x, axis, negative)
    return _fix_zero_sign(x, ufunc.accumulate(x, axis=axis), axis, negative)
  return accumulate


def _batch_rule(prim):
  def rule(axis_size, vals, dims, *, axis, reverse):
    (x,), (d,) = vals, dims
    return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d
  return rule


def _scan_jvp(combine):
  """Differentiates ``associative_scan(combine)``, the same reduction."""

  def rule(primals, tangents, *, axis, reverse):
    from purejax._src.lax.control_flow.associative_scan import associative_scan
    scan = lambda x: [associative_scan(combine, x, reverse=reverse, axis=axis)]
    (out,), (tangent,) = ad_util.jvp_of(scan, primals, tangents)
    return out, tangent

  return rule


def _cumulative(name, accumulate, kinds=np.number, combine=None):
  prim = standard_primitive(name, _abstract_eval(name, kinds), _impl(accumulate))
  prim.batch = _batch_rule(prim)
  if combine is not None:
    prim.jvp = _scan_jvp(combine)
  prim.c_code = None
  return prim


def _ordered(name, integer_accumulate=None):
  """Floats in scan_order's block order; integers sequentially (wrapping)."""
  def accumulate(x, axis):
    if dtypes.issubdtype(x.dtype, np.inexact):
      return scan_order.ordered_scan(name, x, axis)
    return integer_accumulate(x, axis=axis, dtype=x.dtype)
  return accumulate


cumsum_p = _cumulative("cumsum", _ordered("cumsum", np.cumsum))
cumprod_p = _cumulative("cumprod", _ordered("cumprod", np.cumprod), combine=ew.mul)
cummax_p = _cumulative("cummax", _extremum(np.maximum, negative=False), combine=ew.max)
cummin_p = _cumulative("cummin", _extremum(np.minimum, negative=True), combine=ew.min)
# Real floats only: NumPy has no complex logaddexp (JAX's integer case fails too).
cumlogsumexp_p = _cumulative("cumlogsumexp", _ordered("cumlogsumexp"), kinds=np.floating,
                             combine=logaddexp)


def _cumsum_transpose(ct, operand, *, axis, reverse):
  return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


ad.deflinear(cumsum_p, _cumsum_transpose)


def _bind(prim, operand, axis, reverse):
  return utils.bind(prim, operand, axis=int(axis), reverse=bool(reverse))


def cumsum(operand, axis=0, reverse=False):
  """Cumulative sum along ``axis`` (a non-negative axis, as in JAX)."""
  return _bind(cumsum_p, operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
  """Cumulative product along ``axis``."""
  return _bind(cumprod_p, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
  """Cumulative maximum along ``axis`` (NaN propagates)."""
  return _bind(cummax_p, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
  """Cumulative minimum along ``axis`` (NaN propagates)."""
  return _bind(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
  """Cumulative log-sum-exp along ``axis``, computed without overflow.

  Differs from JAX: only real floating operands are accepted (JAX accepts
  integers when tracing and then fails)."""
  return _bind(cumlogsumexp_p, operand, axis, reverse)

