"""purejax.scipy.special: values against SciPy (float64) and JAX (float32),
dtypes, jit/vmap, gradients (custom jvps at x = 0, logsumexp at -inf rows),
errors."""
import numpy as np
import pytest

import purejax
import purejax.scipy.special as ps
from purejax._src.test_util import check_grads

from conftest import oracle

sps = pytest.importorskip("scipy.special")

_R = np.random.RandomState(0)
X = _R.uniform(-5, 5, 7)             # any real
POS = _R.uniform(0.1, 8, 7)          # positive
UNIT = _R.uniform(0.02, 0.98, 7)     # in (0, 1)
INTS = np.arange(7) % 4              # polygamma orders

# name -> (argument arrays, SciPy function or None when it is the same name)
CASES = {
    "gammaln": ((X,), None),
    "gamma": ((X,), None),
    "gammasgn": ((np.r_[X, -3., -0., 0., np.inf],), None),
    "loggamma": ((POS,), None),
    "digamma": ((X,), None),
    "polygamma": ((INTS, POS), None),
    "betaln": ((POS, POS[::-1] * 3), None),
    "beta": ((X, POS), None),
    "betainc": ((POS, POS[::-1], UNIT), None),
    "gammainc": ((POS, POS[::-1]), None),
    "gammaincc": ((POS, POS[::-1]), None),
    "factorial": ((np.r_[POS, -1.],), None),
    "poch": ((X, POS), None),
    "multigammaln": ((POS + 3, 3), None),
    "zeta": ((POS + 1.1, POS), None),
    "erf": ((X,), None),
    "erfc": ((X,), None),
    "erfinv": ((UNIT * 2 - 1,), None),
    "expit": ((X,), None),
    "logit": ((UNIT,), None),
    "xlogy": ((np.r_[X, 0.], np.r_[POS, 0.]), None),
    "xlog1py": ((np.r_[X, 0.], np.r_[POS, -1.]), None),
    "entr": ((X,), None),
    "rel_entr": ((np.r_[X, 0.], np.r_[X[::-1], 1.]), None),
    "kl_div": ((np.r_[X, 0.], np.r_[X[::-1], 1.]), None),
    "boxcox": ((POS, np.r_[0., X[1:]]), None),
    "boxcox1p": ((POS, np.r_[0., X[1:]]), None),
    "i0": ((X * 3,), None),
    "i0e": ((X * 3,), None),
    "i1": ((X * 3,), None),
    "i1e": ((X * 3,), None),
    "ndtr": ((np.r_[X * 4, -30., 10.],), None),
    "log_ndtr": ((np.r_[X * 4, -40., -25., 7., 12.],), None),
    "ndtri": ((np.r_[UNIT, 1e-30, 1 - 1e-10, 0., 1., 1e-200],), None),
    "expi": ((np.r_[X * 10, 0.5],), None),
    "exp1": ((np.r_[POS, 0.5, 0.],), None),
    "expn": ((np.array([0, 1, 2, 3, 5, 1, 2, 4, 3]), np.array([.5, .5, .5, .5, .5, 3, 3, 2., 0.])),
             None),
    "spence": ((np.r_[POS, 0., 1., -1., 0.3, 1.7, 25.],), None),
    "comb": ((10., np.arange(12.)), None),
    "softmax": ((X.reshape(1, 7),), None),
    "log_softmax": ((X.reshape(1, 7),), None),
    "logsumexp": ((X.reshape(1, 7),), None),
}
# Where purejax follows JAX rather than SciPy.
JAX_NOT_SCIPY = {"expi": lambda x: np.where(x == 0, np.nan, sps.expi(x)),
                 "expn": lambda n, x: np.where(x == 0, 1 / n, sps.expn(n, x))}


def _ours(name):
  return getattr(ps, name)


def _theirs(name):
  return JAX_NOT_SCIPY.get(name, getattr(sps, name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_matches_scipy(name, x64):
  args, _ = CASES[name]
  ours = np.asarray(_ours(name)(*args))
  theirs = np.asarray(_theirs(name)(*args))
  assert ours.dtype == np.float64 and ours.shape == theirs.shape
  np.testing.assert_allclose(ours, theirs, rtol=2e-7 if name != "beta" else 2e-6, atol=1e-12)


# float32 tolerances against JAX (the lax primitives are not all XLA's bit for bit).
F32_RTOL = {"gammaln": 1e-4, "loggamma": 1e-4, "digamma": 1e-3, "betaln": 1e-5,
            "beta": 1e-5, "betainc": 1e-5, "gammainc": 1e-5, "gammaincc": 1e-5,
            "factorial": 1e-5, "poch": 1e-5, "comb": 1e-5, "multigammaln": 1e-5,
            "kl_div": 1e-5, "rel_entr": 1e-5}


def _f32(args):
  return [np.asarray(a, np.float32) if np.asarray(a).dtype == np.float64 else a for a in args]


# Thin wrappers of one lax primitive: the primitive is checked against JAX
# in test_lax_special, here only the wrapper (dtype promotion) is.
ONE_PRIMITIVE = {"gammaln", "digamma", "polygamma", "betainc", "gammainc", "gammaincc",
                 "erf", "erfc", "erfinv", "expit", "i0e", "i1e"}
JAX_CASES = sorted(set(CASES) - ONE_PRIMITIVE)


@pytest.fixture(scope="module")
def jax_values():
  """The cases through JAX at once: one compilation instead of one per case."""
  jax = oracle()
  import jax.scipy.special as js
  static = {"multigammaln": {1}, "comb": {0}}   # Python scalars stay static

  def all_cases(arrays):
    out = {}
    for name in JAX_CASES:
      args = CASES[name][0]
      args = [a if i in static.get(name, ()) else arrays[name][i]
              for i, a in enumerate(_f32(args))]
      out[name] = getattr(js, name)(*args)
    return out

  arrays = {name: [np.asarray(a) for a in _f32(CASES[name][0])] for name in JAX_CASES}
  return {k: np.asarray(v) for k, v in jax.jit(all_cases)(arrays).items()}


@pytest.mark.parametrize("name", JAX_CASES)
def test_float32_matches_jax(name, jax_values):
  args, _ = CASES[name]
  ours = np.asarray(_ours(name)(*_f32(args)))
  theirs = jax_values[name]
  assert ours.dtype == theirs.dtype == np.float32 and ours.shape == theirs.shape
  np.testing.assert_allclose(ours, theirs, rtol=F32_RTOL.get(name, 2e-6), atol=1e-30)


@pytest.mark.parametrize("name", sorted(ONE_PRIMITIVE))
def test_float32_wrappers(name):
  args = _f32(CASES[name][0])
  ours = np.asarray(_ours(name)(*args))
  with np.errstate(all="ignore"):
    theirs = np.asarray(_theirs(name)(*[np.asarray(a, np.float64) for a in args]))
  assert ours.dtype == np.float32
  np.testing.assert_allclose(ours, theirs, rtol=F32_RTOL.get(name, 5e-6) * 10, atol=1e-6)


@pytest.mark.parametrize("name", ["gammaln", "digamma", "erf", "expit", "logit", "xlogy",
                                  "entr", "i1", "ndtri", "log_ndtr", "zeta", "betaln",
                                  "expn", "spence", "softmax", "logsumexp"])
def test_jit_and_vmap(name):
  args, _ = CASES[name]
  args = _f32(args)
  f = _ours(name)
  # Compiled erfc is glibc's; log_ndtr's far tail amplifies its last-ulp
  # differences from the eager (SciPy) value.
  np.testing.assert_allclose(purejax.jit(f)(*args), f(*args), rtol=2e-6)
  if name in ("softmax", "logsumexp"):
    rows = np.stack([args[0][0], args[0][0][::-1]])[:, None, :]
    batched = purejax.vmap(f)(rows)
    expected = np.stack([f(r) for r in rows])
  else:
    batched = purejax.vmap(f)(*args)
    expected = np.stack([f(*[a[i] for a in args]) for i in range(len(args[0]))])
  np.testing.assert_allclose(batched, expected, rtol=2e-6)


GRADS = [
    ("gammaln", lambda x: ps.gammaln(x), (POS[:3],)),
    ("gamma", lambda x: ps.gamma(x), (POS[:3] / 2,)),
    ("digamma", lambda x: ps.digamma(x), (POS[:3],)),
    ("betaln", lambda a, b: ps.betaln(a, b), (POS[:3], POS[3:6] * 3)),
    ("erfinv", lambda x: ps.erfinv(x), (UNIT[:3] - 0.5,)),
    ("logit", lambda x: ps.logit(x), (UNIT[:3],)),
    ("xlogy", lambda x, y: ps.xlogy(x, y), (X[:3], POS[:3])),
    ("xlog1py", lambda x, y: ps.xlog1py(x, y), (X[:3], POS[:3])),
    ("entr", lambda x: ps.entr(x), (POS[:3],)),
    ("rel_entr", lambda p, q: ps.rel_entr(p, q), (POS[:3], POS[3:6])),
    ("i0", lambda x: ps.i0(x), (X[:3],)),
    ("ndtr", lambda x: ps.ndtr(x), (X[:3],)),
    ("ndtri", lambda p: ps.ndtri(p), (UNIT[:3],)),
    ("log_ndtr", lambda x: ps.log_ndtr(x), (np.array([-30., -3., 0.5, 9.]),)),
    ("zeta", lambda x, q: ps.zeta(x, q), (POS[:3] + 1.5, POS[3:6])),
    ("poch", lambda z, m: ps.poch(z, m), (POS[:3], POS[3:6] / 3)),
    ("multigammaln", lambda a: ps.multigammaln(a, 3), (POS[:3] + 2,)),
    ("expi", lambda x: ps.expi(x), (np.array([-2., 0.7, 3.]),)),
    ("exp1", lambda x: ps.exp1(x), (np.array([2.]),)),
    ("spence", lambda x: ps.spence(x), (np.array([0.3, 3.]),)),   # NaN at 1.2, as JAX
    ("softmax", lambda x: ps.softmax(x, axis=-1), (X.reshape(1, 7),)),
    ("log_softmax", lambda x: ps.log_softmax(x), (X.reshape(1, 7),)),
    ("logsumexp_b", lambda a, b: ps.logsumexp(a, axis=0, b=b), (X[:3], POS[:3])),
]


@pytest.mark.parametrize("name,f,args", GRADS, ids=[g[0] for g in GRADS])
def test_grads(name, f, args, x64):
  order = 1 if name in ("expi", "exp1", "spence", "zeta", "poch") else 2
  check_grads(f, args, order, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


def test_xlogy_gradient_is_finite_at_zero():
  gx, gy = purejax.grad(ps.xlogy, argnums=(0, 1))(0., 2.)
  assert np.isclose(gx, np.log(2.)) and gy == 0.
  gx, gy = purejax.grad(ps.xlog1py, argnums=(0, 1))(0., 2.)
  assert np.isclose(gx, np.log(3.)) and gy == 0.
  # entr(x) = -x log x: the custom rule gives -(log x + 1) (-inf at 0, never NaN).
  assert purejax.grad(ps.entr)(0.) == np.inf


def test_logsumexp_options():
  a = np.array([[1., 2., 3.], [-np.inf, -np.inf, -np.inf], [np.inf, 0., 1.]], np.float32)
  out = ps.logsumexp(a, axis=1)
  np.testing.assert_allclose(out, [sps.logsumexp([1., 2., 3.]), -np.inf, np.inf], rtol=1e-6)
  b = np.array([1., -2., 0.5], np.float32)
  x = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
  val, sign = ps.logsumexp(x, axis=1, b=b, return_sign=True)
  ref_val, ref_sign = sps.logsumexp(x, axis=1, b=b, return_sign=True)
  np.testing.assert_allclose(val, ref_val, rtol=1e-5)
  np.testing.assert_array_equal(sign, ref_sign)
  assert np.isnan(ps.logsumexp(x, axis=1, b=b)).all()     # negative sums
  where = np.array([[True, False, True], [False, False, False]])
  out = ps.logsumexp(x, axis=1, keepdims=True, where=where)
  assert out.shape == (2, 1) and out[1, 0] == -np.inf
  np.testing.assert_allclose(out[0, 0], np.log(np.e + np.e ** 3), rtol=1e-6)
  assert ps.logsumexp(np.arange(4)).dtype == np.float32
  z = ps.logsumexp(np.array([1 + 2j, 3 - 1j], np.complex64))
  np.testing.assert_allclose(z, np.log(np.exp(1 + 2j) + np.exp(3 - 1j)), rtol=1e-5)


def test_logsumexp_matches_jax_values_grads_and_jaxpr():
  jax = oracle()
  from jax.scipy.special import logsumexp as jl
  a = np.array([[1., 2., 3.], [-np.inf, -np.inf, -np.inf]], np.float32)
  b = np.array([1., 0., 2.], np.float32)

  def value_and_grads(lse, grad, a, b):
    # -inf rows: the value is -inf and the gradient NaN, as JAX's.
    f1 = lambda x: lse(x, axis=1).sum()
    f2 = lambda x: lse(x, axis=0, b=b).sum()
    return lse(a, axis=1), lse(a, axis=0, b=b), grad(f1)(a), grad(f2)(a)

  theirs = jax.jit(lambda a, b: value_and_grads(jl, jax.grad, a, b))(a, b)
  ours = value_and_grads(ps.logsumexp, purejax.grad, a, b)
  for o, t in zip(ours, theirs):
    np.testing.assert_allclose(o, t, rtol=1e-6)
  ours = str(purejax.make_jaxpr(lambda x: ps.logsumexp(x, axis=1))(a))
  theirs = str(jax.make_jaxpr(lambda x: jl(x, axis=1))(a))
  assert ours == theirs


def test_normal_tails():
  assert ps.ndtri(np.float32(0.)) == -np.inf and ps.ndtri(np.float32(1.)) == np.inf
  assert np.isnan(ps.ndtri(np.float32(1.5)))
  x = np.array([-35., -15., -5.], np.float32)   # log_ndtr's asymptotic series
  np.testing.assert_allclose(ps.log_ndtr(x), sps.log_ndtr(x.astype(np.float64)), rtol=1e-6)
  np.testing.assert_allclose(ps.log_ndtr(x[:1], series_order=0), sps.log_ndtr(x[:1] * 1.),
                             rtol=1e-3)
  with pytest.raises(ValueError, match="non-negative"):
    ps.log_ndtr(x, series_order=-1)
  with pytest.raises(ValueError, match="<= 30"):
    ps.log_ndtr(x, series_order=31)
  with pytest.raises(TypeError, match="Python integer"):
    ps.log_ndtr(x, series_order=2.)
  with pytest.raises(TypeError, match="not supported"):
    ps.ndtr(np.arange(3))


def test_expn_iterations_stay_per_element(x64):
  # A tiny x needs a long continued fraction, which no element may run (JAX's
  # vectorized expn loops forever on this input).
  n, x = np.array([1., 2., 3.]), np.array([1e-20, 2., 0.5])
  np.testing.assert_allclose(ps.expn(n, x), sps.expn(n, x), rtol=1e-12)
  np.testing.assert_allclose(ps.exp1(np.array([1e-20, 50.])), sps.exp1([1e-20, 50.]),
                             rtol=1e-12)


def test_errors():
  with pytest.raises(ValueError, match="integer type"):
    ps.polygamma(1.0, 2.0)
  with pytest.raises(NotImplementedError, match="Riemann"):
    ps.zeta(2.0)
  with pytest.raises(NotImplementedError, match="exact"):
    ps.factorial(3, exact=True)
  with pytest.raises(ValueError, match="complex"):
    ps.entr(np.array([1j]))
  with pytest.raises(ValueError, match="complex"):
    ps.gamma(np.array([1 + 1j]))
  with pytest.raises(TypeError, match="requires ndarray"):
    ps.erf([1.0, 2.0])
  with pytest.raises(purejax.errors.ConcretizationTypeError):
    purejax.jit(ps.multigammaln)(2.0, 3)


def test_dtypes_and_weak_types():
  assert ps.erf(1).dtype == np.float32                      # ints promote to float
  assert ps.gammaln(np.float16(2)).dtype == np.float16
  assert ps.xlogy(np.float32(2), 3.).dtype == np.float32
  assert ps.softmax(np.ones((2, 3), np.float32), axis=1).shape == (2, 3)
  np.testing.assert_allclose(ps.softmax(np.ones((2, 3)), axis=1), np.full((2, 3), 1 / 3))


def _params(fun):
  import inspect
  return [(p.name, p.kind, p.default) for p in inspect.signature(fun).parameters.values()]


@pytest.mark.parametrize("module", ["special", "linalg", "signal"])
def test_signatures_match_jax(module):
  oracle()
  import importlib
  theirs = importlib.import_module(f"jax.scipy.{module}")
  ours = importlib.import_module(f"purejax.scipy.{module}")
  for name in ours.__all__:
    assert _params(getattr(ours, name)) == _params(getattr(theirs, name)), name
