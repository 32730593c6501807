"""purejax.experimental.jet (Taylor-mode differentiation).

Every rule is checked twice: against JAX's jet on the same float32 inputs
(orders 1 to 4), and, in float64, against Taylor coefficients computed
independently in NumPy: the coefficients of f(x(t)) for the curve
x(t) = x0 + sum_k x_k t^k / k!, by Cauchy's integral formula on a small
circle of complex t (exact to ~1e-11 for functions analytic near x0;
piecewise functions are evaluated away from their kinks and ties).
"""
import math

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax.experimental import jet as jet_module
from purejax.experimental.jet import jet

from conftest import oracle

special = pytest.importorskip("scipy.special")

RNG = np.random.RandomState(0)


# -- the independent reference ----------------------------------------------------------

def taylor_reference(f, primals, series, radius=0.05, points=32):
  """Derivatives 1..K of t -> f(x(t)) at t = 0 (f written for NumPy complex)."""
  order = len(series[0])
  ts = radius * np.exp(2j * np.pi * np.arange(points) / points)
  values = []
  for t in ts:
    args = [np.asarray(x, np.complex128) + sum(s * t ** (k + 1) / math.factorial(k + 1)
                                              for k, s in enumerate(terms))
            for x, terms in zip(primals, series)]
    values.append(np.asarray(f(*args), np.complex128))
  values = np.stack(values)
  out = []
  for k in range(1, order + 1):
    weights = np.exp(-2j * np.pi * k * np.arange(points) / points)
    coef = np.tensordot(weights, values, axes=(0, 0)) / points / radius ** k
    out.append(math.factorial(k) * coef)
  return out


# -- the cases ---------------------------------------------------------------------------

def uniform(lo, hi, shape=(3,)):
  return lambda: RNG.uniform(lo, hi, shape)


def away_from_zero(shape=(4,)):
  return lambda: RNG.choice([-1., 1.], shape) * RNG.uniform(0.3, 1.5, shape)


def spaced(shape):
  """Distinct values at least 0.4 apart (no ties for max/min/argmax)."""
  n = int(np.prod(shape))
  return lambda: RNG.permutation(np.linspace(-2., 2., n)).reshape(shape) + RNG.uniform(-0.05, 0.05)


def real(z):
  return np.real(z)


def _np_pad(z):
  out = np.zeros(1 + 2 * z.shape[0] - 1 + 2, z.dtype)
  out[1:-2:2] = z
  return out


def _np_conv(x, w):
  windows = np.lib.stride_tricks.sliding_window_view(x, (3, 3), axis=(2, 3))
  return np.einsum("ncijab,ocab->noij", windows, w)


def _np_scatter_add(x, y):
  out = x.copy()
  np.add.at(out, np.array([0, 2, 0]), y)
  return out


def _np_update_slice(x, y):
  out = x.copy()
  out[1:3] = y
  return out


def _np_chosen_prefix(z, pick):
  idx = [pick(real(z)[:i + 1]) for i in range(z.shape[0])]
  return z[idx]


def _np_reduce_choose(z, pick):
  idx = pick(real(z), axis=1)
  return np.take_along_axis(z, idx[:, None], axis=1)[:, 0]


def _np_mlp(x, w1, b1, w2):
  return np.tanh(np.tanh(x @ w1 + b1) @ w2)


def _mlp(lax, jnp):
  return lambda x, w1, b1, w2: jnp.tanh(jnp.tanh(x @ w1 + b1) @ w2)


# (id, fun(lax, jnp) -> f, NumPy complex reference or None, input makers)
CASES = [
    ("neg", lambda lax, jnp: lax.neg, np.negative, [uniform(-1, 1)]),
    ("sin", lambda lax, jnp: lax.sin, np.sin, [uniform(-2, 2)]),
    ("cos", lambda lax, jnp: lax.cos, np.cos, [uniform(-2, 2)]),
    ("sinh", lambda lax, jnp: lax.sinh, np.sinh, [uniform(-2, 2)]),
    ("cosh", lambda lax, jnp: lax.cosh, np.cosh, [uniform(-2, 2)]),
    ("tanh", lambda lax, jnp: lax.tanh, np.tanh, [uniform(-2, 2)]),
    ("logistic", lambda lax, jnp: lax.logistic, lambda z: 1 / (1 + np.exp(-z)),
     [uniform(-3, 3)]),
    ("exp", lambda lax, jnp: lax.exp, np.exp, [uniform(-2, 2)]),
    ("log", lambda lax, jnp: lax.log, np.log, [uniform(0.5, 2)]),
    ("log1p", lambda lax, jnp: lax.log1p, np.log1p, [uniform(-0.4, 2)]),
    ("expm1", lambda lax, jnp: lax.expm1, np.expm1, [uniform(-2, 2)]),
    ("sqrt", lambda lax, jnp: lax.sqrt, np.sqrt, [uniform(0.5, 2)]),
    ("rsqrt", lambda lax, jnp: lax.rsqrt, lambda z: 1 / np.sqrt(z), [uniform(0.5, 2)]),
    ("square", lambda lax, jnp: lax.square, np.square, [uniform(-2, 2)]),
    ("integer_pow3", lambda lax, jnp: lambda x: lax.integer_pow(x, 3), lambda z: z ** 3,
     [uniform(-2, 2)]),
    ("integer_pow-2", lambda lax, jnp: lambda x: lax.integer_pow(x, -2), lambda z: z ** -2,
     [uniform(0.5, 2)]),
    ("integer_pow0", lambda lax, jnp: lambda x: lax.integer_pow(x, 0), np.ones_like,
     [uniform(-2, 2)]),
    ("pow", lambda lax, jnp: lax.pow, lambda x, y: x ** y, [uniform(0.5, 2), uniform(-1.5, 1.5)]),
    ("asinh", lambda lax, jnp: lax.asinh, np.arcsinh, [uniform(-2, 2)]),
    ("acosh", lambda lax, jnp: lax.acosh, np.arccosh, [uniform(1.5, 3)]),
    ("atanh", lambda lax, jnp: lax.atanh, np.arctanh, [uniform(-0.6, 0.6)]),
    ("erf", lambda lax, jnp: lax.erf, special.erf, [uniform(-1.5, 1.5)]),
    ("erfc", lambda lax, jnp: lax.erfc, special.erfc, [uniform(-1.5, 1.5)]),
    ("erf_inv", lambda lax, jnp: lax.erf_inv, None, [uniform(-0.8, 0.8)]),
    # erf_inv's own recurrence, against the identity erf(erf_inv(x)) = x.
    ("erf_of_erf_inv", lambda lax, jnp: lambda x: lax.erf(lax.erf_inv(x)), lambda z: z,
     [uniform(-0.8, 0.8)]),
    ("abs", lambda lax, jnp: lax.abs, lambda z: np.where(real(z) < 0, -z, z), [away_from_zero()]),
    ("sign", lambda lax, jnp: lambda x: lax.sign(x) * 3., lambda z: 3 * np.sign(real(z)),
     [away_from_zero()]),
    ("floor", lambda lax, jnp: lax.floor, lambda z: np.floor(real(z)), [uniform(0.2, 0.8)]),
    ("round", lambda lax, jnp: lax.round, lambda z: np.round(real(z)), [uniform(0.2, 0.4)]),
    ("stop_gradient", lambda lax, jnp: lambda x: lax.stop_gradient(x) * x, None,
     [uniform(-1, 1)]),
    ("add", lambda lax, jnp: lax.add, np.add, [uniform(-1, 1), uniform(-1, 1)]),
    ("sub", lambda lax, jnp: lax.sub, np.subtract, [uniform(-1, 1), uniform(-1, 1)]),
    ("mul", lambda lax, jnp: lax.mul, np.multiply, [uniform(-1, 1), uniform(-1, 1)]),
    ("div", lambda lax, jnp: lax.div, np.divide, [uniform(-1, 1), uniform(0.5, 2)]),
    ("atan2", lambda lax, jnp: lax.atan2, lambda x, y: np.arctan(x / y),
     [uniform(-1, 1), uniform(0.5, 2)]),
    ("rem", lambda lax, jnp: lax.rem, lambda x, y: x - y * np.floor(real(x / y)),
     [uniform(2.2, 2.8), uniform(0.95, 1.05)]),
    ("max", lambda lax, jnp: lambda x: lax.max(x[0], x[1]),
     lambda z: np.where(real(z[0]) > real(z[1]), z[0], z[1]), [spaced((2, 4))]),
    ("min", lambda lax, jnp: lambda x: lax.min(x[0], x[1]),
     lambda z: np.where(real(z[0]) < real(z[1]), z[0], z[1]), [spaced((2, 4))]),
    ("clamp", lambda lax, jnp: lambda x: lax.clamp(jnp.full(5, -0.5), x, jnp.full(5, 0.5)),
     lambda z: np.where(real(z) < -0.5, -0.5, np.where(real(z) > 0.5, 0.5, z)),
     [lambda: np.array([-1., -0.2, 0.1, 0.3, 1.2])]),
    ("select_n", lambda lax, jnp: lambda x: jnp.where(x > 0, x * x, jnp.sin(x)),
     lambda z: np.where(real(z) > 0, z * z, np.sin(z)), [away_from_zero()]),
    ("convert_element_type", lambda lax, jnp: lambda x: lax.convert_element_type(x, "float32"),
     None, [uniform(-1, 1)]),
    ("reshape", lambda lax, jnp: lambda x: jnp.sin(x).reshape(3, 2), lambda z: np.sin(z).reshape(3, 2),
     [uniform(-1, 1, (6,))]),
    ("transpose", lambda lax, jnp: lambda x: jnp.exp(x).T, lambda z: np.exp(z).T,
     [uniform(-1, 1, (2, 3))]),
    ("broadcast_in_dim", lambda lax, jnp: lambda x: jnp.broadcast_to(x * x, (2, 3)),
     lambda z: np.broadcast_to(z * z, (2, 3)), [uniform(-1, 1)]),
    ("concatenate", lambda lax, jnp: lambda x, y: jnp.concatenate([x * y, y]),
     lambda x, y: np.concatenate([x * y, y]), [uniform(-1, 1), uniform(-1, 1)]),
    ("stack", lambda lax, jnp: lambda x: jnp.stack([x, x * x]), lambda z: np.stack([z, z * z]),
     [uniform(-1, 1)]),
    ("split", lambda lax, jnp: lambda x: jnp.split(jnp.sin(x), [1, 3])[1],
     lambda z: np.sin(z)[1:3], [uniform(-1, 1, (4,))]),
    ("pad", lambda lax, jnp: lambda x: lax.pad(x * x, 0., [(1, 2, 1)]), lambda z: _np_pad(z * z),
     [uniform(-1, 1)]),
    ("slice", lambda lax, jnp: lambda x: jnp.cos(x)[1:3], lambda z: np.cos(z)[1:3],
     [uniform(-1, 1, (4,))]),
    ("rev", lambda lax, jnp: lambda x: lax.rev(jnp.exp(x), (0,)), lambda z: np.exp(z)[::-1],
     [uniform(-1, 1)]),
    ("squeeze", lambda lax, jnp: lambda x: lax.squeeze(x * x, (0,)), lambda z: (z * z)[0],
     [uniform(-1, 1, (1, 3))]),
    ("reduce_sum", lambda lax, jnp: lambda x: jnp.sum(jnp.sin(x), axis=0),
     lambda z: np.sin(z).sum(0), [uniform(-1, 1, (3, 2))]),
    ("reduce_window_sum",
     lambda lax, jnp: lambda x: lax.reduce_window(x * x, 0., lax.add, (2,), (1,), "VALID"),
     lambda z: (z * z)[:-1] + (z * z)[1:], [uniform(-1, 1, (4,))]),
    ("cumsum", lambda lax, jnp: lambda x: jnp.cumsum(x * x), lambda z: np.cumsum(z * z),
     [uniform(-1, 1, (4,))]),
    ("cumprod", lambda lax, jnp: jnp.cumprod, np.cumprod, [uniform(0.5, 1.5, (4,))]),
    ("cummax", lambda lax, jnp: lambda x: lax.cummax(x, axis=0),
     lambda z: _np_chosen_prefix(z, np.argmax), [spaced((5,))]),
    ("cummin", lambda lax, jnp: lambda x: lax.cummin(x, axis=0),
     lambda z: _np_chosen_prefix(z, np.argmin), [spaced((5,))]),
    ("reduce_max", lambda lax, jnp: lambda x: jnp.max(x, axis=1),
     lambda z: _np_reduce_choose(z, np.argmax), [spaced((3, 4))]),
    ("reduce_min", lambda lax, jnp: lambda x: jnp.min(x, axis=1),
     lambda z: _np_reduce_choose(z, np.argmin), [spaced((3, 4))]),
    ("dynamic_slice", lambda lax, jnp: lambda x: lax.dynamic_slice(jnp.exp(x), (1,), (2,)),
     lambda z: np.exp(z)[1:3], [uniform(-1, 1, (4,))]),
    ("dynamic_update_slice", lambda lax, jnp: lambda x, y: lax.dynamic_update_slice(x, y * y, (1,)),
     lambda x, y: _np_update_slice(x, y * y), [uniform(-1, 1, (4,)), uniform(-1, 1, (2,))]),
    ("gather", lambda lax, jnp: lambda x: jnp.sin(x)[np.array([2, 0, 1, 2])],
     lambda z: np.sin(z)[[2, 0, 1, 2]], [uniform(-1, 1)]),
    ("scatter_add", lambda lax, jnp: lambda x, y: x.at[np.array([0, 2, 0])].add(y * y),
     lambda x, y: _np_scatter_add(x, y * y), [uniform(-1, 1, (4,)), uniform(-1, 1, (3,))]),
    ("dot_general", lambda lax, jnp: lambda x, w: jnp.dot(x, w), np.dot,
     [uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 4))]),
    ("conv_general_dilated",
     lambda lax, jnp: lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID"),
     _np_conv, [uniform(-1, 1, (1, 2, 5, 5)), uniform(-1, 1, (3, 2, 3, 3))]),
    ("fft", lambda lax, jnp: lambda x: jnp.fft.fft(x * x), lambda z: np.fft.fft(z * z),
     [uniform(-1, 1, (4,))]),
    ("mlp", _mlp, _np_mlp, [uniform(-1, 1, (2, 3)), uniform(-1, 1, (3, 4)),
                            uniform(-0.5, 0.5, (4,)), uniform(-1, 1, (4, 2))]),
    ("logsumexp", lambda lax, jnp: lambda x: jnp.log(jnp.sum(jnp.exp(x))),
     lambda z: np.log(np.exp(z).sum()), [uniform(-1, 1, (4,))]),
]

def _inputs(makers, dtype, order):
  primals = [np.asarray(m(), dtype) for m in makers]
  series = [[np.asarray(0.5 * RNG.standard_normal(p.shape), dtype) for _ in range(order)]
            for p in primals]
  return primals, series


def _check_close(got, want, rtol, what):
  got, want = np.asarray(got), np.asarray(want)
  assert got.shape == want.shape, (what, got.shape, want.shape)
  scale = 1. + np.max(np.abs(want), initial=0.)
  np.testing.assert_allclose(got, want, rtol=0, atol=rtol * scale, err_msg=what)


def _kind(x):
  """dtype, weak type, shape, and whether a NumPy array (as JAX's rules leave some)."""
  return (x.dtype, getattr(x, "weak_type", None), x.shape, isinstance(x, np.ndarray))


@pytest.mark.parametrize("name,make,ref,makers", CASES, ids=[c[0] for c in CASES])
def test_rule_matches_jax(name, make, ref, makers):
  jax = oracle()
  from jax.experimental import jet as jax_jet
  f, jax_f = make(lax, jnp), make(jax.lax, jax.numpy)
  for order in range(1, 5):
    primals, series = _inputs(makers, np.float32, order)
    out, terms = jet(f, primals, series)
    jax_out, jax_terms = jax_jet.jet(jax_f, primals, series)
    assert _kind(out) == _kind(jax_out)
    _check_close(out, jax_out, 2e-6, f"{name} primal")
    assert len(terms) == order
    for k, (t, jt) in enumerate(zip(terms, jax_terms)):
      assert _kind(t) == _kind(jt), (name, k)
      _check_close(t, jt, 1e-5, f"{name} order {order} term {k + 1}")


REFERENCED = [c for c in CASES if c[2] is not None]


@pytest.mark.parametrize("name,make,ref,makers", REFERENCED, ids=[c[0] for c in REFERENCED])
def test_rule_matches_taylor_reference(name, make, ref, makers, x64):
  f = make(lax, jnp)
  primals, series = _inputs(makers, np.float64, 4)
  out, terms = jet(f, primals, series)
  want0 = np.asarray(ref(*[p.astype(complex) for p in primals]))
  want = taylor_reference(ref, primals, series)
  if not np.iscomplexobj(out):
    want0, want = np.real(want0), [np.real(w) for w in want]
  _check_close(out, want0, 1e-12, f"{name} primal")
  for k, (t, w) in enumerate(zip(terms, want)):
    _check_close(t, w, 1e-8, f"{name} term {k + 1}")


JAXPR_CASES = ["sin", "cosh", "tanh", "logistic", "exp", "log", "sqrt", "integer_pow-2", "pow",
               "erf", "erf_inv", "abs", "atan2", "div", "max", "min", "dot_general",
               "reduce_max", "scatter_add", "mlp"]


@pytest.mark.parametrize("name", JAXPR_CASES)
def test_jaxpr_of_jet_matches_jax(name):
  """The rules compute what JAX's compute, in the same order."""
  jax = oracle()
  from jax.experimental import jet as jax_jet
  _, make, _, makers = next(c for c in CASES if c[0] == name)
  primals, series = _inputs(makers, np.float32, 3)
  n = len(primals)

  def traced(make_jaxpr, jet_fn, f):
    def g(*xs):
      return jet_fn(f, xs[:n], [list(xs[n + 3 * i:n + 3 * i + 3]) for i in range(n)])
    return str(make_jaxpr(g)(*primals, *[t for s in series for t in s]))
  assert traced(purejax.make_jaxpr, jet, make(lax, jnp)) == traced(
      jax.make_jaxpr, jax_jet.jet, make(jax.lax, jax.numpy))


# -- derivatives along a direction: series (v, 0, 0, 0) ---------------------------------

CLOSED_FORMS = [
    ("exp", jnp.exp, lambda x, k: np.exp(x)),
    ("sin", jnp.sin, lambda x, k: [np.sin, np.cos, lambda y: -np.sin(y), lambda y: -np.cos(y)][k % 4](x)),
    ("log", jnp.log, lambda x, k: (-1.) ** (k - 1) * math.factorial(k - 1) / x ** k),
    ("reciprocal", lambda x: 1 / x, lambda x, k: (-1.) ** k * math.factorial(k) / x ** (k + 1)),
    ("sqrt", jnp.sqrt, lambda x, k: np.prod([0.5 - j for j in range(k)]) * x ** (0.5 - k)),
    ("cosh", jnp.cosh, lambda x, k: np.sinh(x) if k % 2 else np.cosh(x)),
]


@pytest.mark.parametrize("name,f,deriv", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_kth_term_is_kth_derivative(name, f, deriv, x64):
  x = RNG.uniform(0.5, 2., (5,))
  out, terms = jet(f, (x,), ((np.ones(5),) + (np.zeros(5),) * 4,))
  for k, t in enumerate(terms, 1):
    np.testing.assert_allclose(t, deriv(x, k), rtol=1e-11, err_msg=f"order {k}")


def _nested_jvp(f, x, v, k):
  """The k-th derivative of f at x along v, by k nested purejax.jvp."""
  g = f
  for _ in range(k):
    g = (lambda h: lambda y: purejax.jvp(h, (y,), (v,))[1])(g)
  return g(x)


def test_mlp_derivatives_along_direction_match_nested_jvp(x64):
  w1, b1, w2 = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((4, 2))
  f = lambda x: jnp.tanh(jnp.tanh(x @ w1 + b1) @ w2)
  x, v = RNG.standard_normal(3), RNG.standard_normal(3)
  _, terms = jet(f, (x,), ((v, np.zeros(3), np.zeros(3), np.zeros(3)),))
  for k, t in enumerate(terms, 1):
    np.testing.assert_allclose(t, _nested_jvp(f, x, v, k), rtol=1e-10, atol=1e-12)


def test_mlp_in_float32_against_float64_reference():
  w1, b1 = RNG.uniform(-1, 1, (3, 4)), RNG.uniform(-0.5, 0.5, 4)
  f = lambda x: jnp.tanh(x @ w1.astype(np.float32) + b1.astype(np.float32))
  x = RNG.uniform(-1, 1, 3)
  series = [RNG.standard_normal(3) * 0.5 for _ in range(3)]
  _, terms = jet(f, (x.astype(np.float32),), ([s.astype(np.float32) for s in series],))
  want = taylor_reference(lambda z: np.tanh(z @ w1 + b1), [x], [series])
  for t, w in zip(terms, want):
    assert t.dtype == np.float32
    _check_close(t, np.real(w), 1e-5, "tanh(Wx + b)")


# -- the API: arguments, errors, dtypes, structure -------------------------------------

def _error(f):
  try:
    f()
  except Exception as e:   # noqa: BLE001 (compared with JAX's)
    return type(e), str(e)
  return None


ERROR_CASES = [
    ("not callable", lambda j, jnp, lax: j(3, (1.,), ((1.,),))),
    ("series not sized", lambda j, jnp, lax: j(jnp.sin, (1.,), (1.,))),
    ("not an array", lambda j, jnp, lax: j(jnp.sin, ("a",), ((1.,),))),
    ("inconsistent lengths", lambda j, jnp, lax: j(lambda a, b: a * b, (1., 2.), ((1., 0.), (1.,)))),
    ("no arguments", lambda j, jnp, lax: j(lambda: 1., (), ())),
    ("pytree primal", lambda j, jnp, lax: j(lambda a: a, ((1., 2.),), (((1., 1.),),))),
    ("pytree term", lambda j, jnp, lax: j(lambda a: a, (1.,), (((1., 1.),),))),
    ("shape mismatch", lambda j, jnp, lax: j(jnp.sin, (np.ones(3, np.float32),),
                                             ((np.ones(2, np.float32),),))),
    ("dtype mismatch", lambda j, jnp, lax: j(lambda a: a * 2, (np.ones(3, np.float32),),
                                             ((np.ones(3, np.float16),),))),
    ("int primal", lambda j, jnp, lax: j(lambda a: a * 2, (3,), ((1,),))),
    ("too many primals", lambda j, jnp, lax: j(jnp.sin, (1., 1.), ((1.,), (1.,)))),
    ("sort has no rule", lambda j, jnp, lax: j(jnp.sort, (np.ones(3, np.float32),),
                                               ((np.ones(3, np.float32),),))),
    ("cond has no rule", lambda j, jnp, lax: j(lambda a: lax.cond(a > 0, jnp.sin, jnp.cos, a),
                                               (0.5,), ((1.,),))),
    ("scan has no rule", lambda j, jnp, lax: j(
        lambda a: lax.fori_loop(0, 3, lambda i, c: c * a, a), (0.5,), ((1.,),))),
    ("argmax has no rule", lambda j, jnp, lax: j(jnp.argmax, (np.arange(3.),), ((np.ones(3),),))),
    ("tan has no rule", lambda j, jnp, lax: j(jnp.tan, (0.5,), ((1.,),))),
    ("bool of a tracer", lambda j, jnp, lax: j(lambda a: a if a > 0 else -a, (0.5,), ((1.,),))),
    ("clamp with scalar bounds", lambda j, jnp, lax: j(lambda a: lax.clamp(-0.5, a, 0.5),
                                                       (np.ones(3, np.float32),),
                                                       ((np.ones(3, np.float32),),))),
]


@pytest.mark.parametrize("name,call", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_match_jax(name, call):
  jax = oracle()
  from jax.experimental import jet as jax_jet
  got = _error(lambda: call(jet, jnp, lax))
  want = _error(lambda: call(jax_jet.jet, jax.numpy, jax.lax))
  assert want is not None and got is not None, (got, want)
  assert got[0].__name__ == want[0].__name__
  if name != "bool of a tracer":   # JAX's message adds a link to its docs
    assert got[1] == want[1]


def test_leaked_tracer_is_an_error():
  leaked = []
  jet(lambda a: leaked.append(a) or a, (1.,), ((1.,),))
  with pytest.raises(purejax.errors.UnexpectedTracerError):
    jnp.sin(leaked[0])


def test_unsupported_primitive_names_it():
  with pytest.raises(KeyError, match="sort"):
    jet(jnp.sort, (np.ones(3, np.float32),), ((np.ones(3, np.float32),),))


def _structure(tree):
  leaves, treedef = purejax.tree_util.tree_flatten(tree)
  return str(treedef).replace("PyTreeDef", ""), [
      (np.asarray(x).dtype, getattr(x, "weak_type", None), np.shape(x)) for x in leaves]


def test_output_structure_dtypes_and_zero_series_match_jax():
  jax = oracle()
  from jax.experimental import jet as jax_jet

  def f(np_):
    n = np.int32(3)
    return lambda a: {"a": a, "b": (np_.sin(a), 3.), "c": a > 0, "n": n * 2,
                      "i": (a > 0).astype(np.int32) * n, "k": np_.ones(2)}
  args = (np.float32(0.5),)
  series = ((1., 2.),)
  got = jet(f(jnp), args, series)
  want = jax_jet.jet(f(jax.numpy), args, series)
  assert _structure(got) == _structure(jax.tree_util.tree_map(lambda x: x, want))
  for g, w in zip(purejax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_constants_and_unused_inputs_have_zero_terms():
  c = jnp.array([1., 2.])
  out, terms = jet(lambda a, b: (c * 3, a * c), (np.float32(2.), np.float32(1.)),
                   ((np.float32(1.), np.float32(1.)), (np.float32(5.), np.float32(5.))))
  np.testing.assert_array_equal(terms[0], np.zeros((2, 2)))
  np.testing.assert_allclose(terms[1], [[1., 2.], [1., 2.]])


def test_factorial_scaling_and_jet2():
  x = np.float32(0.3)
  _, derivs = jet(jnp.exp, (x,), ((1., 0., 0.),))
  _, coefs = jet(jnp.exp, (x,), ((1., 0., 0.),), factorial_scaled=False)
  _, coefs2 = jet_module.jet2(jnp.exp, (x,), ((1., 0., 0.),))
  e = np.exp(np.float64(x))
  np.testing.assert_allclose(derivs, [e, e, e], rtol=1e-6)
  np.testing.assert_allclose(coefs, [e, e / 2, e / 6], rtol=1e-6)
  np.testing.assert_allclose(coefs2, coefs, rtol=0)


def test_stop_gradient_factor_is_constant(x64):
  x, v = RNG.uniform(-1, 1, 3), RNG.standard_normal(3)
  _, terms = jet(lambda a: lax.stop_gradient(a) * a, (x,), ((v, v),))
  np.testing.assert_allclose(terms, [x * v, x * v], rtol=1e-14)


def test_fact():
  np.testing.assert_allclose(jet_module.fact(np.arange(6.)), [1, 1, 2, 6, 24, 120], rtol=1e-6)


def test_public_names_match_jax():
  oracle()
  import jax.experimental.jet as jax_jet
  ours = set(jet_module.__all__)
  public = {n for n in dir(jax_jet) if not n.startswith("_")}
  # Not part of jet's surface: JAX's imports, and its linear_util plumbing.
  plumbing = {"jet_fun", "jet_subtrace", "traceable", "call_param_updaters"}
  imports = {"Any", "Callable", "ad_util", "api_util", "core", "dispatch", "jnp", "lax",
             "lax_internal", "lu", "np", "partial", "pe", "pjit", "register_pytree_node",
             "safe_zip", "sharding_impls", "tree_flatten", "tree_structure", "tree_unflatten",
             "treedef_is_leaf", "unzip2", "weakref_lru_cache"}
  assert ours == public - plumbing - imports
  assert jet_module.zero_series is not None and jet_module.zero_term is not None
  assert isinstance(jet_module.zero_series, jet_module.ZeroSeries)


def test_tracer_repr_matches_jax():
  jax = oracle()
  from jax.experimental import jet as jax_jet
  for j, np_ in ((jet, jnp), (jax_jet.jet, jax.numpy)):
    seen = []
    j(lambda a, b: seen.append((repr(a), str(b))) or a + b,
      (1., np_.ones((2, 3))), ((1.,), (np_.ones((2, 3)),)))
    if j is jet:
      ours = seen
  assert ours == seen == [("JetTracer<~float32[]>", "JetTracer<float32[2,3]>")]


# -- user rules -----------------------------------------------------------------------

def _user_primitive(name, impl):
  from purejax.extend.core import Primitive
  p = Primitive(name)
  p.def_impl(impl)
  p.def_abstract_eval(lambda x: x)
  return p


def test_user_primitives_with_rule_families():
  from purejax._src import core
  double = _user_primitive("jet_test_double", lambda x: 2 * x)
  floorish = _user_primitive("jet_test_floor", np.floor)
  cube = _user_primitive("jet_test_cube", lambda x: x ** 3)
  core_aval = lambda x: core.ShapedArray(x.shape, x.dtype, x.weak_type)
  for p in (double, floorish, cube):
    p.def_abstract_eval(core_aval)
  jet_module.deflinear(double)
  jet_module.defzero(floorish)
  jet_module.def_comp(cube, lambda x: x * x * x)
  x = np.float32(0.7)
  series = ((np.float32(1.), np.float32(0.5)),)
  _, t = jet(lambda a: double.bind(a), (x,), series)
  np.testing.assert_allclose(t, [2., 1.])
  _, t = jet(lambda a: floorish.bind(a) + a, (x,), series)
  np.testing.assert_allclose(t, [1., 0.5])
  _, t = jet(lambda a: cube.bind(a), (x,), series)
  np.testing.assert_allclose(t, [3 * x ** 2, 6 * x + 3 * x ** 2 * 0.5], rtol=1e-6)
  # def_deriv: a primitive from its derivative (here exp from exp).
  myexp = _user_primitive("jet_test_exp", np.exp)
  myexp.def_abstract_eval(core_aval)
  jet_module.def_deriv(myexp, lambda y: jnp.exp(y))
  _, t = jet(lambda a: myexp.bind(a), (x,), ((np.float32(1.), np.float32(0.), np.float32(0.)),))
  np.testing.assert_allclose(t, [np.exp(x)] * 3, rtol=1e-6)
  for p in (double, floorish, cube, myexp):
    del jet_module.jet_rules[p]


# -- composition with jit, vmap, grad, custom derivatives -------------------------------

def _sin_exp(np_):
  return lambda a: np_.sin(a) * np_.exp(a / 2)


def test_jet_of_jit_matches_jax_and_keeps_the_call():
  jax = oracle()
  from jax.experimental import jet as jax_jet
  x, series = np.float32(0.4), ((np.float32(1.), np.float32(0.3), np.float32(-0.2)),)
  got = jet(purejax.jit(_sin_exp(jnp)), (x,), series)
  want = jax_jet.jet(jax.jit(_sin_exp(jax.numpy)), (x,), series)
  plain = jet(_sin_exp(jnp), (x,), series)
  np.testing.assert_allclose(got[1], want[1], rtol=1e-5)
  np.testing.assert_allclose(got[1], plain[1], rtol=1e-6)
  jaxpr = purejax.make_jaxpr(lambda a: jet(purejax.jit(_sin_exp(jnp)), (a,), series))(x)
  assert [e.primitive.name for e in jaxpr.jaxpr.eqns if e.primitive.name == "jit"] == ["jit"]
  want_jaxpr = jax.make_jaxpr(
      lambda a: jax_jet.jet(jax.jit(_sin_exp(jax.numpy)), (a,), series))(x)
  assert str(jaxpr) == str(want_jaxpr)


def test_jet_of_nested_jit_with_closure_constant_and_int_output():
  jax = oracle()
  from jax.experimental import jet as jax_jet

  def make(jit, np_):
    c = np_.array([1., -2., 0.5])

    @jit
    def inner(a):
      return np_.tanh(a * c), np_.sum((a > 0).astype(np.int32))

    @jit
    def outer(a, b):
      y, i = inner(a)
      return y * b, i
    return outer, lambda a, b: np_.tanh(a * c) * b

  a, b = np.array([0.1, 0.2, -0.3], np.float32), np.float32(2.)
  series = ((np.ones(3, np.float32), np.zeros(3, np.float32)), (np.float32(0.), np.float32(0.)))
  outer, plain = make(purejax.jit, jnp)
  (y, i), (ty, ti) = jet(outer, (a, b), series)
  want = jet(plain, (a, b), series)
  np.testing.assert_allclose(y, want[0], rtol=1e-5)
  np.testing.assert_allclose(ty, want[1], rtol=1e-5)
  (jy, ji), (jty, jti) = jax_jet.jet(make(jax.jit, jax.numpy)[0], (a, b), series)
  np.testing.assert_allclose(ty, jty, rtol=1e-5)
  assert int(i) == int(ji) == 2
  assert [np.asarray(t).dtype for t in ti] == [np.asarray(t).dtype for t in jti]
  np.testing.assert_array_equal(ti, [0, 0])


def test_jet_inside_jit_matches_eager_and_jax():
  jax = oracle()
  from jax.experimental import jet as jax_jet

  def g(jet_fn, np_):
    return lambda a: jet_fn(_sin_exp(np_), (a,), ((np_.ones_like(a), a, a * a),))
  x = np.array([0.1, 0.7, -0.4], np.float32)
  got = purejax.jit(g(jet, jnp))(x)
  eager = g(jet, jnp)(x)
  want = jax.jit(g(jax_jet.jet, jax.numpy))(x)
  np.testing.assert_allclose(got[1], eager[1], rtol=1e-5)
  np.testing.assert_allclose(got[1], want[1], rtol=1e-5)


def test_vmap_of_jet_and_jet_of_vmap():
  x = np.array([0.1, 0.7, -0.4], np.float32)
  v = np.array([1., 2., 3.], np.float32)
  per_example = [jet(jnp.sin, (xi,), ((vi, vi),)) for xi, vi in zip(x, v)]
  out, terms = purejax.vmap(lambda a, b: jet(jnp.sin, (a,), ((b, b),)))(x, v)
  np.testing.assert_allclose(out, [p for p, _ in per_example], rtol=1e-6)
  np.testing.assert_allclose(np.stack(terms, 1), [t for _, t in per_example], rtol=1e-6)
  out2, terms2 = jet(purejax.vmap(jnp.sin), (x,), ((v, v),))
  np.testing.assert_allclose(terms2, terms, rtol=1e-6)


def test_grad_of_jet_and_jet_of_grad():
  x = 0.5
  # d/dx of the 2nd derivative term of sin with series (1, 0) is -cos(x).
  g = purejax.grad(lambda a: jet(jnp.sin, (a,), ((1., 0.),))[1][1])(x)
  np.testing.assert_allclose(g, -np.cos(x), rtol=1e-6)
  _, t = jet(purejax.grad(jnp.sin), (x,), ((1., 0.),))
  np.testing.assert_allclose(t, [-np.sin(x), -np.cos(x)], rtol=1e-6)


def test_jet_of_jet():
  x = np.float32(0.5)
  inner = lambda a: jet(jnp.sin, (a,), ((1.,),))[1][0]   # cos
  _, t = jet(inner, (x,), ((1., 0.),))
  np.testing.assert_allclose(t, [-np.sin(x), -np.cos(x)], rtol=1e-6)


def test_custom_jvp_runs_the_function_not_the_rule():
  # JAX's jet means to call the function (its process_custom_jvp_call), but
  # in JAX 0.10.2 that raises UnexpectedTracerError: compared with closed forms.
  f = purejax.custom_jvp(lambda a: jnp.sin(a))
  f.defjvp(lambda p, t: (f(p[0]), 100. * t[0]))   # a wrong rule, to show it is unused
  x, series = np.float32(0.5), ((np.float32(1.), np.float32(0.)),)
  _, terms = jet(f, (x,), series)
  np.testing.assert_allclose(terms, [np.cos(x), -np.sin(x)], rtol=1e-6)
  # A value constant to the jet keeps the custom_jvp call (its rule serves an outer jvp).
  inner = lambda a: jet(lambda b: f(a) * b, (x,), ((np.float32(1.),),))[0]
  _, dy = purejax.jvp(inner, (x,), (np.float32(1.),))
  np.testing.assert_allclose(dy, 100. * x, rtol=1e-6)


def test_custom_vjp_runs_the_function():
  f = purejax.custom_vjp(lambda a: jnp.exp(a))
  f.defvjp(lambda a: (f(a), a), lambda r, g: (0. * g,))
  x = np.float32(0.2)
  _, t = jet(f, (x,), ((np.float32(1.), np.float32(0.)),))
  np.testing.assert_allclose(t, [np.exp(x)] * 2, rtol=1e-6)


def test_relu_and_softplus():
  # custom_jvp functions (JAX 0.10.2 raises UnexpectedTracerError here).
  x = np.array([-0.5, 0.3, 1.2], np.float32)
  v = np.ones(3, np.float32)
  _, t = jet(purejax.nn.relu, (x,), ((v, v),))
  np.testing.assert_allclose(t, [[0, 1, 1], [0, 1, 1]])
  _, t = jet(purejax.nn.softplus, (x,), ((v, np.zeros(3, np.float32)),))
  s = 1 / (1 + np.exp(-x.astype(np.float64)))
  np.testing.assert_allclose(t, [s, s * (1 - s)], rtol=1e-6)
