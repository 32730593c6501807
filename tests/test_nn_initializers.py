"""purejax.nn.initializers: the same key gives JAX's values (bit for bit, or
within float32 rounding where erf_inv or a QR is involved); fans, variances,
bounds and orthogonality checked without JAX; dtypes, jit and errors."""
import inspect
import warnings

import ml_dtypes
import numpy as np
import pytest

import purejax
import purejax.nn.initializers as init
import purejax.numpy as jnp
from purejax._src.nn.initializers import compute_fans

# (expression, exact): exact means bit-identical to JAX for the same key.
# Most use the shape (5, 6) so that JAX compiles each sampler once.
CASES = [
    ("I.zeros(key, (5, 6))", True), ("I.ones(key, (5, 6), jnp.bfloat16)", True),
    ("I.constant(-7)(key, (5, 6))", True), ("I.constant(2.5, jnp.float16)(key, (5, 6))", True),
    ("I.uniform()(key, (5, 6))", True), ("I.normal(5.)(key, (5, 6))", True),
    ("I.truncated_normal(1., lower=-1., upper=0.5)(key, (5, 6))", False),
    ("I.glorot_uniform()(key, (5, 6))", True), ("I.glorot_normal()(key, (5, 6))", False),
    ("I.lecun_uniform(in_axis=0, out_axis=-1)(key, (5, 6))", True),
    ("I.he_uniform()(key, (5, 6))", True), ("I.he_normal()(key, (5, 6))", False),
    ("I.variance_scaling(2., 'fan_out', 'normal')(key, (5, 6))", True),
    ("I.variance_scaling(2., 'fan_geo_avg', 'uniform', in_axis=(0, 1))(key, (5, 6))", True),
    ("I.variance_scaling(1., 'fan_avg', 'truncated_normal', in_axis=-1, out_axis=-2)"
     "(key, (5, 6))", False),
    ("I.variance_scaling(1., 'fan_in', 'truncated_normal')(key, (5, 6), jnp.complex64)", False),
    ("I.orthogonal(2.)(key, (5, 6))", False),
    ("I.orthogonal(column_axis=0)(key, (6, 5))", False),
    ("I.delta_orthogonal()(key, (3, 5, 6))", False),
    ("I.glorot_uniform()(jax.random.PRNGKey(3), (5, 6))", True),
]


def _run(module, expr):
  env = dict(I=module.nn.initializers, jnp=module.numpy, jax=module,
             key=module.random.key(42))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    return eval(expr, env)


@pytest.mark.parametrize("expr,exact", CASES, ids=[c[0] for c in CASES])
def test_same_key_same_values_as_jax(expr, exact):
  jax = pytest.importorskip("jax")
  import jax.nn.initializers  # noqa: F401
  ours, theirs = _run(purejax, expr), _run(jax, expr)
  assert (ours.dtype, ours.shape, ours.weak_type) == (theirs.dtype, theirs.shape,
                                                      theirs.weak_type)
  a, b = np.asarray(ours), np.asarray(theirs)
  if exact:
    np.testing.assert_array_equal(a, b)
  else:
    # erf_inv and QR round differently: a few float32 ulps.
    scale = max(1., float(np.max(np.abs(b.astype(np.complex128)), initial=0)))
    np.testing.assert_allclose(a.astype(np.complex128), b.astype(np.complex128),
                               rtol=0, atol=2e-6 * scale)


ERRORS = [
    "I.variance_scaling(1., 'fan_x', 'normal')(key, (5, 6))",
    "I.variance_scaling(1., 'fan_in', 'cauchy')(key, (5, 6))",
    "I.glorot_normal()(key, (5,))", "I.orthogonal()(key, (5,))",
    "I.delta_orthogonal()(key, (3, 5, 4))", "I.delta_orthogonal()(key, (5, 4))",
    "I.orthogonal()(key, (3, 3), out_sharding=1)",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_like_jax(expr):
  jax = pytest.importorskip("jax")
  import jax.nn.initializers  # noqa: F401
  with pytest.raises(Exception) as theirs:
    _run(jax, expr)
  with pytest.raises(theirs.type):
    _run(purejax, expr)


def test_names_and_signatures_match_jax():
  pytest.importorskip("jax")
  import jax.nn.initializers as theirs_mod
  for name in dir(theirs_mod):
    if name.startswith("_"):
      continue
    assert hasattr(init, name), name
    if name == "Initializer":
      continue
    theirs = inspect.signature(getattr(theirs_mod, name))
    ours = inspect.signature(getattr(init, name))
    assert list(ours.parameters) == list(theirs.parameters), name
    for p, q in zip(ours.parameters.values(), theirs.parameters.values()):
      assert (p.kind, p.default) == (q.kind, q.default), (name, p)


# ---------------------------------------------------------------------------
# Without JAX

KEY = purejax.random.key(0)


def test_compute_fans():
  assert compute_fans((4, 6)) == (4, 6)
  # A 3x3 convolution HWIO: receptive field 9.
  assert compute_fans((3, 3, 4, 6)) == (36, 54)
  assert compute_fans((2, 5, 6), batch_axis=0) == (5, 6)
  assert compute_fans((3, 3, 4, 6), in_axis=(0, 1), out_axis=-1) == (36, 24)
  with pytest.raises(ValueError, match="1-dimensional"):
    compute_fans((5,))


@pytest.mark.parametrize("builder,variance", [
    (init.glorot_uniform, 2 / (200 + 300)), (init.glorot_normal, 2 / (200 + 300)),
    (init.lecun_uniform, 1 / 200), (init.lecun_normal, 1 / 200),
    (init.he_uniform, 2 / 200), (init.he_normal, 2 / 200)])
def test_variance_scaling_variances(builder, variance):
  w = np.asarray(builder()(KEY, (200, 300)), np.float64)
  assert abs(w.mean()) < 0.05 * np.sqrt(variance)
  assert abs(w.var() / variance - 1) < 0.03


def test_uniform_and_truncated_bounds():
  w = np.asarray(init.he_uniform()(KEY, (50, 40)))
  assert np.abs(w).max() <= np.sqrt(3 * 2 / 50)
  w = np.asarray(init.he_normal()(KEY, (50, 40)))
  assert np.abs(w).max() < 2 * np.sqrt(2 / 50) / .87962566103423978
  w = np.asarray(init.uniform(3.)(KEY, (1000,)))
  assert w.min() >= 0 and w.max() < 3 and w.max() > 2.9
  w = np.asarray(init.truncated_normal(2., lower=-1., upper=0.5)(KEY, (1000,)))
  assert w.min() > -2 and w.max() < 1


def test_complex_variance_scaling():
  for dist in ("uniform", "truncated_normal", "normal"):
    w = np.asarray(init.variance_scaling(1., "fan_in", dist)(KEY, (100, 200), jnp.complex64))
    assert w.dtype == np.complex64
    assert abs(np.mean(np.abs(w) ** 2) * 100 - 1) < 0.05, dist


@pytest.mark.parametrize("shape,column_axis", [((4, 4), -1), ((3, 6), -1), ((6, 3), -1),
                                               ((2, 3, 5), 0)])
def test_orthogonal(shape, column_axis):
  w = np.asarray(init.orthogonal(scale=2.)(KEY, shape) if column_axis == -1 else
                 init.orthogonal(column_axis=column_axis)(KEY, shape), np.float64)
  scale = 2. if column_axis == -1 else 1.
  m = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis]) / scale
  small = m.T @ m if m.shape[0] >= m.shape[1] else m @ m.T
  np.testing.assert_allclose(small, np.eye(len(small)), atol=1e-5)


def test_delta_orthogonal_structure():
  w = np.asarray(init.delta_orthogonal()(KEY, (3, 4, 2, 5)), np.float64)
  centre = w[1, 1]
  np.testing.assert_allclose(centre @ centre.T, np.eye(2), atol=1e-5)
  w[1, 1] = 0
  assert not w.any()


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
@pytest.mark.parametrize("builder", [init.glorot_uniform(), init.he_normal(), init.orthogonal(),
                                     init.normal(), init.constant(1.5), init.uniform()])
def test_dtypes_stay_and_jit_matches(builder, dtype):
  eager = builder(KEY, (4, 6), dtype)
  assert eager.dtype == dtype and eager.shape == (4, 6) and not eager.weak_type
  jitted = purejax.jit(builder, static_argnums=(1, 2))(KEY, (4, 6), dtype)
  np.testing.assert_allclose(np.asarray(jitted, np.float32), np.asarray(eager, np.float32),
                             rtol=1e-6, atol=1e-6)
  assert init.zeros(KEY, (2,), dtype).dtype == dtype


def test_default_dtype_and_builder_dtype():
  assert init.normal()(KEY, (2,)).dtype == np.float32
  assert init.normal(dtype=jnp.bfloat16)(KEY, (2,)).dtype == ml_dtypes.bfloat16
  assert init.ones(KEY, (2,)).dtype == np.float32
  assert isinstance(init.glorot_normal(), init.Initializer)


def test_vmap_over_keys():
  keys = purejax.random.split(KEY, 3)
  batched = purejax.vmap(lambda k: init.lecun_normal()(k, (3, 4)))(keys)
  stacked = np.stack([np.asarray(init.lecun_normal()(k, (3, 4))) for k in keys])
  np.testing.assert_allclose(np.asarray(batched), stacked, rtol=1e-6, atol=1e-7)
