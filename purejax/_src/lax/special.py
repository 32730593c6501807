"""Special functions as lax elementwise primitives: erf, erfc, erf_inv, lgamma,
digamma, polygamma, zeta, igamma, igammac, igamma_grad_a, random_gamma_grad,
bessel_i0e, bessel_i1e and regularized_incomplete_beta (``lax.betainc``).

Each primitive's NumPy numerics live in special_erf, special_gamma and
special_bessel; here are the primitives with their derivative rules (the
elementwise families give them batching).  Results are rounded once to the
operands' dtype, and subnormal float32/float64 results flush to zero, as on
XLA's CPU.
"""
import numpy as np

from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.lax import api_elementwise as ew
from purejax._src.lax import utils
from purejax._src.lax.ad_util import defjvp_ans
from purejax._src.lax.convert import convert_element_type
from purejax._src.lax.creation import full_like
from purejax._src.lax.families import float_dtypes, nary_elementwise
from purejax._src.lax.special_bessel import i0e_np, i1e_np
from purejax._src.lax.special_erf import erf_inv_np, erf_np, erfc_np
from purejax._src.lax.special_gamma import (
    betainc_np, digamma_np, igamma_grad_a_np, igamma_np, igammac_np, lgamma_np,
    polygamma_np, random_gamma_grad_np, zeta_np)


def _flush(out):
  """XLA's CPU flushes subnormal results to (signed) zero."""
  if out.dtype in (np.float32, np.float64):
    return np.where(np.abs(out) < np.finfo(out.dtype).tiny, out * 0, out)
  return out


def _impl(np_fn, half_through_f32=False):
  def impl(*args):
    dtype = np.result_type(*args)
    with np.errstate(all="ignore"):
      if half_through_f32 and dtype.itemsize < 4:
        # As XLA: half floats are evaluated as float32 (flushed), whose
        # result is rounded to the half type (the C code rounds the same).
        wide = [np.asarray(a).astype(np.float32) for a in args]
        return _flush(np.asarray(np_fn(*wide)).astype(np.float32)).astype(dtype)
      return _flush(np.asarray(np_fn(*args)).astype(dtype))
  return impl


def _const(x, value):
  """A constant of ``x``'s dtype and weak type (as JAX's rules make them)."""
  aval = utils.aval(x)
  return convert_element_type(np.array(value, aval.dtype), aval.dtype, aval.weak_type)


def _primitive(name, arity, np_fn, half_through_f32=False):
  prim = nary_elementwise(name, [float_dtypes] * arity, _impl(np_fn, half_through_f32))
  prim.c_code = None   # no C kernel yet: the compiled path runs the impl
  return prim


def _half_through_f32(np_fn):
  """XLA evaluates the float32 approximations for half-precision inputs."""
  def fn(x):
    x = np.asarray(x)
    return np_fn(x.astype(np.float32)) if x.dtype.itemsize < 4 else np_fn(x)
  return fn


# -- the error function ----------------------------------------------------------------

erf_p = _primitive("erf", 1, _half_through_f32(erf_np))
erfc_p = _primitive("erfc", 1, _half_through_f32(erfc_np))
erf_inv_p = _primitive("erf_inv", 1, _half_through_f32(erf_inv_np))

# d erf = 2/sqrt(pi) exp(-x^2); d erf_inv = sqrt(pi)/2 exp(erf_inv(x)^2).
ad.defjvp(erf_p, lambda g, x: ew.mul(_const(x, 2 / np.sqrt(np.pi)),
                                     ew.mul(g, ew.exp(ew.neg(ew.square(x))))))
ad.defjvp(erfc_p, lambda g, x: ew.mul(_const(x, -2 / np.sqrt(np.pi)),
                                      ew.mul(g, ew.exp(ew.neg(ew.square(x))))))
defjvp_ans(erf_inv_p, lambda g, ans, x: ew.mul(_const(x, np.sqrt(np.pi) / 2),
                                               ew.mul(g, ew.exp(ew.square(ans)))))


def erf(x):
  """Elementwise error function (float dtypes); float32 values are XLA's bit
  for bit."""
  return utils.bind(erf_p, x)


def erfc(x):
  """Elementwise complementary error function 1 - erf(x)."""
  return utils.bind(erfc_p, x)


def erf_inv(x):
  """Elementwise inverse error function (nan outside [-1, 1])."""
  return utils.bind(erf_inv_p, x)


# -- gamma, digamma, polygamma, zeta ------------------------------------------------

lgamma_p = _primitive("lgamma", 1, lgamma_np)
digamma_p = _primitive("digamma", 1, digamma_np, half_through_f32=True)
polygamma_p = _primitive("polygamma", 2, polygamma_np, half_through_f32=True)
zeta_p = _primitive("zeta", 2, zeta_np, half_through_f32=True)   # not differentiable, as in JAX

ad.defjvp(lgamma_p, lambda g, x: ew.mul(g, digamma(x)))
ad.defjvp(digamma_p, lambda g, x: ew.mul(g, polygamma(_const(x, 1), x)))


def _polygamma_grad_m(g, m, x):
  raise ValueError("polygamma gradient with respect to m is not supported")


ad.defjvp(polygamma_p, _polygamma_grad_m,
          lambda g, m, x: ew.mul(g, polygamma(ew.add(m, _const(m, 1)), x)))


def lgamma(x):
  """Elementwise log |Gamma(x)| (inf at the poles)."""
  return utils.bind(lgamma_p, x)


def digamma(x):
  """Elementwise digamma psi(x) = d lgamma(x)/dx (nan at the poles)."""
  return utils.bind(digamma_p, x)


def polygamma(m, x):
  """Elementwise m-th derivative of digamma; nan unless m is a nonnegative
  integer."""
  return utils.bind(polygamma_p, m, x)


def zeta(x, q):
  """Elementwise Hurwitz zeta function sum_k (q + k)^-x."""
  return utils.bind(zeta_p, x, q)


# -- the incomplete gamma functions ------------------------------------------------

igamma_p = _primitive("igamma", 2, igamma_np, half_through_f32=True)
igammac_p = _primitive("igammac", 2, igammac_np, half_through_f32=True)
igamma_grad_a_p = _primitive("igamma_grad_a", 2, igamma_grad_a_np, half_through_f32=True)   # no jvp, as JAX
random_gamma_grad_p = _primitive("random_gamma_grad", 2, random_gamma_grad_np, half_through_f32=True)


def _igamma_grad_x(g, a, x):
  # The integrand: x^(a-1) e^-x / Gamma(a).
  return ew.mul(g, ew.exp(ew.sub(ew.add(ew.neg(x), ew.mul(ew.sub(a, _const(a, 1)), ew.log(x))),
                                 lgamma(a))))


ad.defjvp(igamma_p, lambda g, a, x: ew.mul(g, igamma_grad_a(a, x)), _igamma_grad_x)
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
          lambda g, a, x: ew.neg(_igamma_grad_x(g, a, x)))


def _no_jvp(primals, tangents):
  raise NotImplementedError("Differentiation rule for 'random_gamma_grad' not implemented")


random_gamma_grad_p.jvp = _no_jvp


def igamma(a, x):
  """Elementwise regularized lower incomplete gamma function P(a, x)."""
  return utils.bind(igamma_p, a, x)


def igammac(a, x):
  """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P."""
  return utils.bind(igammac_p, a, x)


def igamma_grad_a(a, x):
  """Elementwise dP(a, x)/da."""
  return utils.bind(igamma_grad_a_p, a, x)


def random_gamma_grad(a, x):
  """dx/da of x ~ Gamma(a, 1) at a fixed CDF (elementwise, same dtypes).

  Differs from JAX: a primitive (JAX composes it of lax ops, so its jaxpr
  is a loop) and not differentiable; where x^a e^-x / Gamma(a) underflows
  it sums the series to convergence (JAX keeps its first term)."""
  return utils.bind(random_gamma_grad_p, a, x)


# -- Bessel functions ---------------------------------------------------------------

bessel_i0e_p = _primitive("bessel_i0e", 1, i0e_np, half_through_f32=True)
bessel_i1e_p = _primitive("bessel_i1e", 1, i1e_np, half_through_f32=True)

defjvp_ans(bessel_i0e_p, lambda g, y, x: ew.mul(g, ew.sub(bessel_i1e(x),
                                                          ew.mul(ew.sign(x), y))))


def _bessel_i1e_jvp(g, y, x):
  # i1e' = i0e - i1e (sign(x) + 1/x), which tends to 1/2 at 0.
  eps = _const(x, dtypes.finfo(utils.aval(x).dtype).eps)
  not_tiny = ew.gt(ew.abs(x), eps)
  safe_x = ew.select(not_tiny, x, full_like(x, eps))
  dy_dx = ew.sub(bessel_i0e(safe_x),
                 ew.mul(y, ew.add(ew.sign(safe_x), ew.reciprocal(safe_x))))
  return ew.mul(g, ew.select(not_tiny, dy_dx, full_like(x, 0.5)))


defjvp_ans(bessel_i1e_p, _bessel_i1e_jvp)


def bessel_i0e(x):
  """Elementwise exponentially scaled modified Bessel function exp(-|x|) I0(x)."""
  return utils.bind(bessel_i0e_p, x)


def bessel_i1e(x):
  """Elementwise exponentially scaled modified Bessel function exp(-|x|) I1(x)."""
  return utils.bind(bessel_i1e_p, x)


# -- the incomplete beta function ----------------------------------------------------

regularized_incomplete_beta_p = _primitive("regularized_incomplete_beta", 3, betainc_np, half_through_f32=True)


def _betainc_grad_ab(g, a, b, x):
  raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_grad_x(g, a, b, x):
  # The integrand x^(a-1) (1-x)^(b-1) / B(a, b).
  lbeta = ew.sub(ew.add(lgamma(a), lgamma(b)), lgamma(ew.add(a, b)))
  one = _const(x, 1)
  log_density = ew.sub(ew.add(ew.mul(ew.sub(b, one), ew.log1p(ew.neg(x))),
                              ew.mul(ew.sub(a, one), ew.log(x))), lbeta)
  return ew.mul(ew.exp(log_density), g)


ad.defjvp(regularized_incomplete_beta_p, _betainc_grad_ab, _betainc_grad_ab,
          _betainc_grad_x)


def betainc(a, b, x):
  """Elementwise regularized incomplete beta function I_x(a, b)."""
  return utils.bind(regularized_incomplete_beta_p, a, b, x)
