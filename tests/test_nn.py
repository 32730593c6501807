"""purejax.nn: activations, softmax/log_softmax, standardize, one_hot,
logmeanexp, dot_product_attention and scaled_matmul.

Values against NumPy formulas in float64 and against the installed JAX
(dtypes, weak types, errors, gradients at the kinks, printed jaxprs), and
jit, vmap and check_grads."""
import inspect
import warnings

import ml_dtypes
import numpy as np
import pytest
from scipy import special as sp_special

from tests import jnp_oracle
import purejax
import purejax.nn as nn
import purejax.numpy as jnp
from purejax.test_util import check_grads

RNG = np.random.RandomState(0)
F = (RNG.randn(3, 4) * 3).astype(np.float32)
F[0, :3] = [0., 1., -1.]
F[1, :2] = [6., 3.]
H = F.astype(np.float16)
BF = F.astype(ml_dtypes.bfloat16)
I = RNG.randint(-5, 8, (3, 4)).astype(np.int32)
M = RNG.rand(3, 4) > 0.3
IDX = np.array([0, 2, -1, 5, 1], np.int32)
ARRAYS = dict(F=F, H=H, BF=BF, I=I, M=M, IDX=IDX)


def _env(module, arrays):
  env = dict(arrays)
  env.update(jnp=module.numpy, nn=module.nn, jax=module,
             dpa=module.nn.dot_product_attention)
  return env


def _run(module, expr, arrays=None):
  arrays = ARRAYS if arrays is None else arrays
  env = _env(module, {k: module.numpy.asarray(v) for k, v in arrays.items()})
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    return eval(expr, env)


_JAX_RESULTS = {}


def _jax_results(name, exprs, arrays=None, together=True):
  """JAX's values of all ``exprs`` (cached under ``name``), traced and
  compiled as one jit: one XLA compilation instead of one per expression
  keeps the oracle tests fast.  ``together=False`` runs them eagerly."""
  jax = pytest.importorskip("jax")
  arrays = ARRAYS if arrays is None else arrays
  if name not in _JAX_RESULTS:
    def run_all(arrays):
      env = _env(jax, arrays)
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [eval(expr, env) for expr in exprs]
    run_all = jax.jit(run_all) if together else run_all
    outs = run_all({k: jax.numpy.asarray(v) for k, v in arrays.items()})
    _JAX_RESULTS[name] = dict(zip(exprs, outs))
  return _JAX_RESULTS[name]


ACTIVATIONS = ("relu relu6 sigmoid softplus sparse_plus sparse_sigmoid soft_sign silu swish "
               "mish log_sigmoid elu selu celu leaky_relu hard_tanh hard_sigmoid hard_silu "
               "hard_swish gelu squareplus identity tanh log1mexp").split()

ORACLE_CASES = (
    [f"nn.{name}(F)" for name in ACTIVATIONS]
    + [f"nn.{name}(BF)" for name in ("relu", "gelu", "elu")]
    + [f"nn.{name}(H)" for name in ("relu6", "mish", "log1mexp")]
    + [f"nn.{name}(I)" for name in ("relu", "relu6", "elu", "hard_tanh", "gelu", "soft_sign")]
    + ["nn.relu(2.0)", "nn.gelu(2.0)", "nn.hard_silu(3)", "nn.sparse_sigmoid(3)"]
    + [
        "nn.gelu(F, approximate=False)", "nn.gelu(BF, False)", "nn.gelu(I, False)",
        "nn.elu(F, 0.5)", "nn.elu(F, jnp.arange(4.))", "nn.celu(F, 2.)",
        "nn.leaky_relu(F, 0.2)", "nn.leaky_relu(I, 2)", "nn.squareplus(F, 1)",
        "nn.glu(F)", "nn.glu(F.T, axis=0)",
        # softmax family
        "nn.softmax(F)", "nn.softmax(F, axis=0)", "nn.softmax(F, axis=(0, 1))",
        "nn.softmax(F, where=M)", "nn.softmax(H, where=M)", "nn.softmax(I)",
        "nn.log_softmax(F)", "nn.log_softmax(F, axis=None)",
        "nn.log_softmax(F, where=M, axis=0)", "nn.log_softmax(H)",
        "nn.logsumexp(F, axis=1)", "nn.logmeanexp(F)",
        "nn.logmeanexp(F, axis=0, where=M, keepdims=True)", "nn.logmeanexp(H)",
        "nn.standardize(F)", "nn.standardize(F, axis=0, where=M)",
        "nn.standardize(F, algorithm='stable')", "nn.standardize(F, mean=1., variance=2.)",
        "nn.standardize(F, axis=None, epsilon=0.1)", "nn.standardize(H)",
        # one_hot
        "nn.one_hot(IDX, 3)", "nn.one_hot(IDX, 4, axis=0)",
        "nn.one_hot(I, 4, axis=1, dtype=jnp.int8)", "nn.one_hot(IDX, 3, dtype=jnp.bfloat16)",
        "nn.one_hot(F, 3)", "nn.one_hot(2, 3)", "nn.one_hot(I, 3, axis=-3)",
    ])


@pytest.mark.parametrize("expr", ORACLE_CASES)
def test_against_jax(expr):
  _assert_like(_run(purejax, expr), _jax_results("oracle", ORACLE_CASES)[expr])


ERROR_CASES = [
    "nn.glu(jnp.ones((2, 3)))", "nn.standardize(F, algorithm='bad')", "nn.sigmoid(I)",
    "nn.relu([1., 2.])", "nn.silu([1.])", "nn.one_hot(IDX, 3.5)", "nn.one_hot(IDX, 3, axis=2)",
    "nn.softmax(F, where=I)", "nn.log1mexp([1.])",
]


@pytest.mark.parametrize("expr", ERROR_CASES)
def test_errors_like_jax(expr):
  jax = pytest.importorskip("jax")
  with pytest.raises(Exception) as theirs:
    _run(jax, expr)
  with pytest.raises(theirs.type):
    _run(purejax, expr)


def test_names_and_signatures_match_jax():
  jax = pytest.importorskip("jax")
  skip = {"initializers"}
  for name in dir(jax.nn):
    if name.startswith("_") or name in skip:
      continue
    assert hasattr(nn, name), name
    theirs = inspect.signature(getattr(jax.nn, name))
    ours = inspect.signature(getattr(nn, name))
    assert list(ours.parameters) == list(theirs.parameters), name
    for p, q in zip(ours.parameters.values(), theirs.parameters.values()):
      assert p.kind == q.kind, (name, p)
      if q.default is not inspect.Parameter.empty and not callable(q.default):
        assert p.default == q.default, (name, p)


# ---------------------------------------------------------------------------
# NumPy float64 references

def _np_sigmoid(x):
  return sp_special.expit(x)


def _np_softplus(x):
  return np.logaddexp(x, 0)


NUMPY_REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _np_sigmoid,
    "softplus": _np_softplus,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _np_sigmoid(x),
    "mish": lambda x: x * np.tanh(_np_softplus(x)),
    "log_sigmoid": lambda x: -_np_softplus(-x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "selu": lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "tanh": np.tanh,
    "identity": lambda x: x,
}
X64 = np.concatenate([np.linspace(-8, 8, 33), [-1., 0., 1., 6., 1e-3, -1e-3]])


@pytest.mark.parametrize("name", sorted(NUMPY_REFS))
def test_against_numpy_float64(name, x64):
  ours = getattr(nn, name)(X64)
  assert ours.dtype == np.float64
  np.testing.assert_allclose(np.asarray(ours), NUMPY_REFS[name](X64), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(NUMPY_REFS))
def test_against_numpy_float32(name):
  x = X64.astype(np.float32)
  ours = getattr(nn, name)(x)
  assert ours.dtype == np.float32
  np.testing.assert_allclose(np.asarray(ours), NUMPY_REFS[name](X64), rtol=2e-6, atol=2e-6)


def test_gelu_exact_and_log1mexp_against_numpy(x64):
  np.testing.assert_allclose(np.asarray(nn.gelu(X64, approximate=False)),
                             X64 * sp_special.ndtr(X64), rtol=1e-12, atol=1e-14)
  x = np.array([1e-10, 1e-3, 0.5, np.log(2.), 1., 5., 40.])
  ref = np.where(x < np.log(2.), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
  np.testing.assert_allclose(np.asarray(nn.log1mexp(x)), ref, rtol=1e-13)


def test_softmax_family_against_numpy(x64):
  x = RNG.randn(3, 5) * 4
  e = np.exp(x - x.max(-1, keepdims=True))
  ref = e / e.sum(-1, keepdims=True)
  np.testing.assert_allclose(np.asarray(nn.softmax(x)), ref, rtol=1e-13)
  np.testing.assert_allclose(np.asarray(nn.log_softmax(x)), np.log(ref), rtol=1e-13)
  np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=0)),
                             np.log(np.mean(np.exp(x), axis=0)), rtol=1e-13)
  mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
  for algorithm in ("fast", "stable"):
    np.testing.assert_allclose(np.asarray(nn.standardize(x, algorithm=algorithm)),
                               (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10)
  mask = RNG.rand(3, 5) > 0.4
  mask[:, 0] = True
  out = np.asarray(nn.softmax(x, where=mask))
  assert np.all(out[~mask] == 0)
  np.testing.assert_allclose(out.sum(-1), 1, rtol=1e-13)
  assert np.all(np.asarray(nn.log_softmax(x, where=mask))[~mask] == -np.inf)


# ---------------------------------------------------------------------------
# Gradients

SMOOTH = ["sigmoid", "softplus", "soft_sign", "silu", "mish", "log_sigmoid", "gelu",
          "squareplus", "tanh"]
PIECEWISE = ["relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid",
             "hard_silu", "sparse_plus", "sparse_sigmoid"]


@pytest.mark.parametrize("name", SMOOTH + PIECEWISE)
def test_check_grads(name, x64):
  # Away from the kinks (0, +-1, +-3, 6).
  x = np.array([-4.5, -2.5, -1.5, -0.5, 0.4, 1.6, 2.2, 4.5, 7.5])
  check_grads(getattr(nn, name), (x,), order=2 if name in SMOOTH else 1, modes=("fwd", "rev"))


def test_check_grads_log1mexp_gelu_exact_softmax(x64):
  check_grads(nn.log1mexp, (np.array([0.1, 0.5, 1., 3.]),), order=2, modes=("fwd", "rev"))
  check_grads(lambda x: nn.gelu(x, approximate=False), (X64[:8],), order=2,
              modes=("fwd", "rev"))
  x = RNG.randn(2, 4)
  mask = np.array([[True, False, True, True], [True, True, False, True]])
  for fun in (nn.softmax, nn.log_softmax, lambda x: nn.softmax(x, where=mask, axis=0),
              lambda x: nn.standardize(x, axis=0), lambda x: nn.logmeanexp(x, axis=1),
              lambda x: nn.glu(x, axis=1)):
    check_grads(fun, (x,), order=1, modes=("fwd", "rev"))


KINKS = dict(K=np.array([-6., -3., -1., 0., 1., 3., 6., -0.5, 0.5], np.float32))
KINK_CASES = [f"jax.vmap(jax.grad(nn.{name}))(K)"
              for name in PIECEWISE + ["log1mexp", "softplus"]]


@pytest.mark.parametrize("expr", KINK_CASES)
def test_gradients_at_kinks_like_jax(expr):
  ours = _run(purejax, expr, KINKS)
  theirs = _jax_results("kinks", KINK_CASES, KINKS)[expr]
  # expm1's derivative is ans + 1: one ulp of expm1 (NumPy's against XLA's)
  # moves it by ~6e-8.
  np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=2e-7,
                             equal_nan=True)


def test_custom_jvp_values_at_kinks():
  grad = purejax.vmap(purejax.grad(nn.relu))
  np.testing.assert_array_equal(grad(np.array([-1., 0., 1.], np.float32)), [0., 0., 1.])
  grad6 = purejax.vmap(purejax.grad(nn.relu6))
  np.testing.assert_array_equal(grad6(np.array([0., 3., 6., 7.], np.float32)), [0., 1., 0., 0.])
  # The custom rule also holds in forward mode and at higher order.
  assert purejax.jvp(nn.relu, (0.,), (1.,))[1] == 0.
  assert purejax.grad(purejax.grad(nn.relu))(2.) == 0.
  assert float(purejax.grad(nn.log1mexp)(1.)) == pytest.approx(1 / np.expm1(1.), rel=1e-6)


SOFTMAX_GRAD_CASES = [
    f"jax.grad(lambda y: (nn.{fun}(y{kwargs}) ** 2 * W).sum())(F)"
    for fun, kwargs in (("softmax", ""), ("softmax", ", axis=0, where=M"), ("log_softmax", ""))]


@pytest.mark.parametrize("custom_jvp", [False, True])
def test_softmax_gradients_like_jax(custom_jvp):
  jax = pytest.importorskip("jax")
  arrays = dict(ARRAYS, W=np.arange(12.).reshape(3, 4))
  with _flag(jax, custom_jvp):
    theirs = _jax_results(f"softmax grads {custom_jvp}", SOFTMAX_GRAD_CASES, arrays)
  with _flag(purejax, custom_jvp):
    for expr in SOFTMAX_GRAD_CASES:
      np.testing.assert_allclose(np.asarray(_run(purejax, expr, arrays)),
                                 np.asarray(theirs[expr]), rtol=1e-5, atol=1e-6)


class _flag:
  """Sets jax_softmax_custom_jvp on one module's config for a block."""

  def __init__(self, mod, value):
    self.config, self.value = mod.config, value

  def __enter__(self):
    self.old = self.config.jax_softmax_custom_jvp
    self.config.update("jax_softmax_custom_jvp", self.value)

  def __exit__(self, *exc):
    self.config.update("jax_softmax_custom_jvp", self.old)


def test_softmax_custom_jvp_flag_changes_the_jaxpr():
  x = jnp.ones(4)
  assert "stop_gradient" in str(purejax.make_jaxpr(nn.softmax)(x))
  with _flag(purejax, True):
    text = str(purejax.make_jaxpr(nn.softmax)(x))
    assert "custom_jvp_call" in text and "stop_gradient" not in text
    # The rule y * (dx - sum(y * dx)) keeps the output summing to 1.
    _, t = purejax.jvp(nn.softmax, (x,), (jnp.arange(4.),))
    assert abs(float(t.sum())) < 1e-6


# ---------------------------------------------------------------------------
# jit, vmap, dtypes

@pytest.mark.parametrize("name", ACTIVATIONS + ["softmax", "log_softmax", "standardize", "glu"])
def test_jit_and_vmap(name):
  f = getattr(nn, name)
  x = F if name != "log1mexp" else np.abs(F)
  np.testing.assert_allclose(np.asarray(purejax.jit(f)(x)), np.asarray(f(x)), rtol=1e-6,
                             atol=1e-7)
  stacked = np.stack([np.asarray(f(row)) for row in x])
  np.testing.assert_allclose(np.asarray(purejax.vmap(f)(x)), stacked, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float64])
@pytest.mark.parametrize("name", ACTIVATIONS + ["softmax", "log_softmax", "standardize"])
def test_float_dtypes_stay(name, dtype, x64):
  out = getattr(nn, name)(np.abs(F).astype(dtype))
  assert out.dtype == dtype and not out.weak_type


def test_weak_types_of_python_scalars():
  assert nn.relu(2.).weak_type and nn.relu(2.).dtype == np.float32
  assert nn.relu(2).dtype == np.int32 and nn.relu(2).weak_type
  assert nn.gelu(1).dtype == np.float32


JAXPR_CASES = ["nn.relu(x)", "nn.relu6(x)", "nn.silu(x)", "nn.gelu(x)", "nn.gelu(x, False)",
               "nn.softmax(x)", "nn.log_softmax(x)", "nn.softmax(x, where=x > 0)",
               "nn.one_hot(x.astype(jnp.int32), 3)", "nn.hard_silu(x)", "nn.elu(x)",
               "nn.log1mexp(x)", "nn.mish(x)", "nn.standardize(x)",
               "jax.grad(lambda x: nn.relu(x).sum())(x)"]


@pytest.mark.parametrize("expr", JAXPR_CASES)
def test_jaxpr_printed_like_jax(expr):
  jax = pytest.importorskip("jax")
  x = np.linspace(-3, 7, 12).astype(np.float32).reshape(3, 4)
  texts = []
  for mod in (jax, purejax):
    f = eval("lambda x: " + expr, dict(nn=mod.nn, jnp=mod.numpy, jax=mod))
    texts.append(str(mod.make_jaxpr(f)(x)))
  assert texts[1] == texts[0]


# ---------------------------------------------------------------------------
# one_hot

def test_one_hot_values_and_axes():
  out = nn.one_hot(jnp.array([[0, 2], [1, 5]]), 3, axis=1, dtype=jnp.int32)
  assert out.shape == (2, 3, 2) and out.dtype == np.int32
  ref = (np.array([[0, 2], [1, 5]])[:, None, :] == np.arange(3)[None, :, None])
  np.testing.assert_array_equal(np.asarray(out), ref.astype(np.int32))
  assert nn.one_hot(jnp.array([-1, 3]), 3).sum() == 0


def test_one_hot_float_input_warns():
  with pytest.warns(DeprecationWarning, match="integer-typed"):
    nn.one_hot(jnp.array([0., 1.]), 2)


def test_one_hot_needs_static_num_classes():
  with pytest.raises(purejax.errors.ConcretizationTypeError):
    purejax.jit(lambda n: nn.one_hot(jnp.array([0, 1]), n))(3)


def test_one_hot_with_a_vmap_axis_name():
  f = purejax.vmap(lambda i: nn.one_hot(i, 4, axis="b"), axis_name="b")
  # Each example compares its index with its own position on the axis.
  np.testing.assert_array_equal(np.asarray(f(jnp.array([0, 1, 3, 3]))), [1., 1., 0., 1.])
  with pytest.raises(ValueError, match="Expected num_classes to match"):
    purejax.vmap(lambda i: nn.one_hot(i, 3, axis="b"), axis_name="b")(jnp.arange(4))


# ---------------------------------------------------------------------------
# dot_product_attention

def _np_attention(q, k, v, bias=None, mask=None, scale=None, causal=False):
  """The textbook formula in float64, heads repeated for grouped queries."""
  q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
  n, kh = q.shape[2], k.shape[2]
  k, v = np.repeat(k, n // kh, axis=2), np.repeat(v, n // kh, axis=2)
  scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
  logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
  if bias is not None:
    logits = logits + bias
  keep = np.ones(logits.shape, bool)
  if mask is not None:
    keep &= mask
  if causal:
    keep &= np.tril(np.ones(logits.shape[-2:], bool))
  logits = np.where(keep, logits, -np.inf)
  p = np.exp(logits - logits.max(-1, keepdims=True))
  p /= p.sum(-1, keepdims=True)
  return np.einsum("bnts,bsnh->btnh", p, v)


B_, T_, S_, N_, K_, H_ = 2, 3, 4, 4, 2, 5
Q = RNG.randn(B_, T_, N_, H_).astype(np.float32)
KEY = RNG.randn(B_, S_, K_, H_).astype(np.float32)
VAL = RNG.randn(B_, S_, K_, H_).astype(np.float32)
BIAS = RNG.randn(1, N_, T_, S_).astype(np.float32)
MASK = RNG.rand(B_, N_, T_, S_) > 0.3
MASK[..., 0] = True


@pytest.mark.parametrize("kwargs", [dict(), dict(bias=BIAS), dict(mask=MASK),
                                    dict(scale=0.3, causal=True), dict(bias=BIAS, mask=MASK)])
def test_attention_against_numpy(kwargs):
  causal = kwargs.pop("causal", False)
  ours = nn.dot_product_attention(Q, KEY, VAL, is_causal=causal, **kwargs)
  assert ours.shape == Q.shape and ours.dtype == np.float32
  np.testing.assert_allclose(np.asarray(ours), _np_attention(Q, KEY, VAL, causal=causal, **kwargs),
                             rtol=1e-5, atol=1e-5)


ATTENTION_CASES = [
    "dpa(q, k, v)", "dpa(q[0], k[0], v[0])", "dpa(q, k, v, mask=m, is_causal=True)",
    "dpa(q, k, v, query_seq_lengths=ql, key_value_seq_lengths=kl)",
    "dpa(q, k, v, local_window_size=1)", "dpa(q, k, v, local_window_size=(2, 0))",
    "dpa(q, k, v, query_seq_lengths=ql, return_residual=True)",
    "dpa(q[0], k[0], v[0], return_residual=True)",
    "jax.grad(lambda q: dpa(q, k, v, b, is_causal=True).sum())(q)",
    "jax.grad(lambda k: dpa(q, k, v, mask=m).sum())(k)",
    "jax.vmap(lambda q: dpa(q, k[0], v[0]))(q)",
]


ATTENTION_ARRAYS = dict(q=Q, k=KEY, v=VAL, b=BIAS, m=MASK, ql=np.array([2, 3], np.int32),
                        kl=np.array([4, 1], np.int32))


# JAX asks for bf16/f16 products accumulated in f32 and falls back when
# the backend refuses: only outside an enclosing jit, so these run eagerly.
LOW_PRECISION_ATTENTION = [
    "dpa(q.astype(jnp.bfloat16), k.astype(jnp.bfloat16), v.astype(jnp.bfloat16), b,"
    " is_causal=True)",
]


@pytest.mark.parametrize("expr", ATTENTION_CASES + LOW_PRECISION_ATTENTION)
def test_attention_against_jax(expr):
  ours = _run(purejax, expr, ATTENTION_ARRAYS)
  if expr in LOW_PRECISION_ATTENTION:
    theirs = _jax_results("attention16", LOW_PRECISION_ATTENTION, ATTENTION_ARRAYS, False)
  else:
    theirs = _jax_results("attention", ATTENTION_CASES, ATTENTION_ARRAYS)
  _assert_like(ours, theirs[expr])


@pytest.mark.parametrize("expr", [
    "dpa(q, k.astype(jnp.float16), v)", "dpa(q, k, v[:, :3])", "dpa(q[..., :3, :], k, v)",
    "dpa(q, k, v, mask=m.astype(jnp.int32))", "dpa(q, k, v, query_seq_lengths=ql / 1)",
    "dpa(q, k, v, implementation='foo')"])
def test_attention_errors(expr):
  with pytest.raises(ValueError):
    _run(purejax, expr, ATTENTION_ARRAYS)


def test_attention_jit_matches_eager():
  f = lambda q: nn.dot_product_attention(q, KEY, VAL, BIAS, is_causal=True)  # noqa: E731
  np.testing.assert_allclose(np.asarray(purejax.jit(f)(Q)), np.asarray(f(Q)), rtol=1e-6)


def test_attention_cudnn_is_refused():
  with pytest.raises(ValueError, match="cudnn"):
    nn.dot_product_attention(Q, KEY, VAL, implementation="cudnn")


# ---------------------------------------------------------------------------
# Block-scaled products

def test_scaled_matmul_reference():
  a = RNG.randn(2, 3, 8).astype(np.float32)
  b = RNG.randn(2, 5, 8).astype(np.float32)
  sa = RNG.rand(2, 3, 2).astype(np.float32)
  sb = RNG.rand(2, 5, 2).astype(np.float32)
  out = nn.scaled_matmul(a, b, sa, sb, preferred_element_type=jnp.bfloat16)
  assert out.dtype == ml_dtypes.bfloat16 and out.shape == (2, 3, 5)
  ref = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, -1), b * np.repeat(sb, 4, -1))
  np.testing.assert_allclose(np.asarray(out, np.float32), ref, rtol=1e-2, atol=1e-2)
  with pytest.raises(ValueError, match="3-dimensional"):
    nn.scaled_matmul(a[0], b[0], sa[0], sb[0])


def test_scaled_dot_general():
  a, b = RNG.randn(3, 4).astype(np.float32), RNG.randn(4, 2).astype(np.float32)
  out = nn.scaled_dot_general(a, b, (((1,), (0,)), ((), ())))
  np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5)
  config = nn.get_scaled_dot_general_config("mxfp8")
  assert config.block_size == 32 and config.mode == "mxfp8"
  with pytest.raises(ValueError):
    nn.scaled_dot_general(a, b, (((1,), (0,)), ((), ())), configs=[config] * 3)
  with pytest.raises(ValueError, match="Unsupported mode"):
    nn.get_scaled_dot_general_config("int4")


def _assert_like(ours, theirs):
  jnp_oracle.same(ours, theirs, rtol=2e-6, atol=2e-6)
