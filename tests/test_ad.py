"""Differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacobians,
hessian, linear_transpose, stop_gradient, checkpoint; composition with jit;
symbolic zeros and float0; errors."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.interpreters import ad
from purejax._src.dtypes import float0

from conftest import oracle


def f_sin_x(x):
  return jnp.sin(x) * x


def df_sin_x(x):
  return np.sin(x) + x * np.cos(x)


def test_jvp_and_linearize():
  y, t = jax.jvp(f_sin_x, (1.0,), (2.0,))
  np.testing.assert_allclose(y, np.sin(1.0), rtol=1e-6)
  np.testing.assert_allclose(t, 2 * df_sin_x(1.0), rtol=1e-6)
  y2, f_jvp = jax.linearize(f_sin_x, 1.0)
  np.testing.assert_allclose(f_jvp(2.0), 2 * df_sin_x(1.0), rtol=1e-6)
  assert float(y2) == float(y)


def test_vjp_with_pytrees_and_has_aux():
  def f(p):
    return {"s": jnp.sum(p["a"] * p["b"])}, "aux"

  p = {"a": jnp.arange(3.0), "b": jnp.ones(3) * 2}
  out, f_vjp, aux = jax.vjp(f, p, has_aux=True)
  assert aux == "aux" and float(out["s"]) == 6.0
  (ct,) = f_vjp({"s": jnp.float32(1.0)})
  np.testing.assert_allclose(ct["a"], [2, 2, 2])
  np.testing.assert_allclose(ct["b"], [0, 1, 2])


def test_grad_argnums_has_aux_value_and_grad():
  f = lambda x, y: (x * y ** 2, {"x": x})
  g = jax.grad(f, argnums=(0, 1), has_aux=True)(3.0, 2.0)
  (gx, gy), aux = g
  assert float(gx) == 4.0 and float(gy) == 12.0 and float(aux["x"]) == 3.0
  (v, aux), gy = jax.value_and_grad(f, argnums=1, has_aux=True)(3.0, 2.0)
  assert float(v) == 12.0 and float(gy) == 12.0


def test_aux_leaves_are_primal_values():
  """has_aux: the aux output (even a differentiated input passed through)
  comes out as plain values, eagerly and under jit; nothing leaks a tracer
  of the differentiation (flax.nnx returns its model's state as aux)."""
  def f(p):
    return jnp.sum(p["w"] ** 2), {"w": p["w"], "b": p["b"], "w2": p["w"] * 2, "tag": "t"}
  p = {"w": jnp.ones(3), "b": jnp.zeros(2)}

  def check(aux, kind):
    assert aux["tag"] == "t"
    for k in ("w", "b", "w2"):
      assert not isinstance(aux[k], ad.JVPTracer), (k, type(aux[k]))
      assert isinstance(aux[k], kind), (k, type(aux[k]))
  (_, aux), _ = jax.value_and_grad(f, has_aux=True)(p)
  check(aux, jax.Array)
  np.testing.assert_array_equal(aux["w2"], [2., 2., 2.])
  check(jax.grad(f, has_aux=True)(p)[1], jax.Array)
  check(jax.vjp(f, p, has_aux=True)[2], jax.Array)
  check(jax.jvp(f, (p,), (p,), has_aux=True)[2], jax.Array)
  check(jax.linearize(f, p, has_aux=True)[2], jax.Array)

  def inner(p):
    aux = jax.grad(f, has_aux=True)(p)[1]
    check(aux, jax.core.Tracer)
    return aux["w2"]
  np.testing.assert_array_equal(jax.jit(inner)(p), [2., 2., 2.])
  np.testing.assert_array_equal(jax.vmap(inner)({"w": jnp.ones((2, 3)), "b": jnp.zeros((2, 2))}),
                                [[2., 2., 2.]] * 2)


def test_python_control_flow_under_grad():
  def f(x):
    if x < 3:
      return 3. * x ** 2
    return -4 * x

  assert float(jax.grad(f)(2.)) == 12.0
  assert float(jax.grad(f)(4.)) == -4.0
  with pytest.raises(jax.errors.TracerBoolConversionError):
    jax.jit(jax.grad(f))(2.)


def test_higher_order():
  squared = lambda x: x ** 2
  assert float(jax.grad(squared)(4.0)) == 8.0
  assert float(jax.grad(jax.grad(squared))(4.0)) == 2.0
  d3 = jax.grad(jax.grad(jax.grad(jnp.sin)))(0.5)
  np.testing.assert_allclose(d3, -np.cos(0.5), rtol=1e-6)


@pytest.mark.parametrize("compose", ["jit_grad", "grad_jit", "jit_grad_jit", "nested_jit"])
def test_grad_composes_with_jit(compose):
  f = f_sin_x
  if compose == "jit_grad":
    g = jax.jit(jax.grad(f))
  elif compose == "grad_jit":
    g = jax.grad(jax.jit(f))
  elif compose == "jit_grad_jit":
    g = jax.jit(jax.grad(jax.jit(f)))
  else:
    inner = jax.jit(lambda y: jnp.sin(y))
    g = jax.grad(jax.jit(lambda x: inner(x) * x))
  np.testing.assert_allclose(g(1.3), df_sin_x(1.3), rtol=1e-6)
  np.testing.assert_allclose(jax.grad(g)(1.3), jax.grad(jax.grad(f))(1.3), rtol=1e-5)


def test_quadratic_form_gradient_is_x():
  def f(x):
    return jnp.dot(x.T, x) / 2.0

  v = jnp.array([1.8160864, -0.75487745, 0.3398885, -0.53483075])
  np.testing.assert_allclose(jax.grad(f)(v), v, rtol=1e-6)
  g = lambda x: jnp.multiply(x, x) / 2.0
  _, t = jax.jvp(g, (v,), (jnp.ones(4),))
  np.testing.assert_allclose(t, v, rtol=1e-6)
  _, g_vjp = jax.vjp(g, v)
  np.testing.assert_allclose(g_vjp(jnp.ones(4))[0], v, rtol=1e-6)


def test_symbolic_zeros_for_unused_inputs():
  g = jax.grad(lambda x, y: x * 2.0, argnums=(0, 1))(1.0, jnp.ones((2, 3)))
  assert float(g[0]) == 2.0
  assert g[1].shape == (2, 3) and not np.any(np.asarray(g[1]))
  _, f_vjp = jax.vjp(lambda x, n: x * 2.0, 1.0, 3)
  cts = f_vjp(1.0)
  assert cts[1].dtype == float0


def test_stop_gradient_blocks():
  f = lambda x: x * jax.lax.stop_gradient(x) if hasattr(jax.lax, "stop_gradient") \
      else x * jax.stop_gradient(x)
  assert float(jax.grad(f)(3.0)) == 3.0
  assert float(jax.grad(lambda x: jax.stop_gradient(x ** 2) + x)(3.0)) == 1.0
  tree = jax.stop_gradient({"a": jnp.ones(2), "i": jnp.arange(2)})
  assert tree["i"].dtype == np.int32


def test_jacobians_and_hessian():
  f = lambda x: jnp.sin(x) * x[::-1]
  x = jnp.array([0.3, 0.7, 1.1])
  jf, jr = jax.jacfwd(f)(x), jax.jacrev(f)(x)
  xs = np.asarray(x, np.float64)
  expected = np.diag(np.cos(xs) * xs[::-1]) + np.sin(xs)[:, None] * np.eye(3)[::-1]
  np.testing.assert_allclose(jf, expected, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(jr, expected, rtol=1e-5, atol=1e-6)
  h = jax.hessian(lambda x: jnp.sum(x ** 3))(x)
  np.testing.assert_allclose(h, np.diag(6 * xs), rtol=1e-5)
  np.testing.assert_allclose(jax.jacfwd(jax.jacrev(lambda x: jnp.sum(x ** 3)))(x), h)


def test_jacobian_pytrees():
  f = lambda p: {"out": p["w"] * p["b"]}
  p = {"w": jnp.ones(2), "b": jnp.float32(3.0)}
  j = jax.jacrev(f)(p)
  assert j["out"]["w"].shape == (2, 2) and j["out"]["b"].shape == (2,)
  j2 = jax.jacfwd(f)(p)
  np.testing.assert_allclose(j["out"]["w"], j2["out"]["w"])


def test_linear_transpose():
  f = lambda x, y: (x * 2.0 + y, jnp.sum(x))
  f_t = jax.linear_transpose(f, jnp.ones(3), jnp.ones(3))
  ct_x, ct_y = f_t((jnp.array([1.0, 2.0, 3.0]), jnp.float32(1.0)))
  np.testing.assert_allclose(ct_x, [3.0, 5.0, 7.0])
  np.testing.assert_allclose(ct_y, [1.0, 2.0, 3.0])


def test_jvp_vjp_consistency():
  rng = np.random.RandomState(0)
  f = lambda x: jnp.tanh(jnp.dot(x, x.T)).sum(0) * x[:, 0]
  x = rng.randn(3, 4).astype(np.float32)
  v = rng.randn(3, 4).astype(np.float32)
  y, jv = jax.jvp(f, (x,), (v,))
  w = rng.randn(*y.shape).astype(np.float32)
  _, f_vjp = jax.vjp(f, x)
  (jtw,) = f_vjp(w)
  np.testing.assert_allclose(np.vdot(jv, w), np.vdot(v, jtw), rtol=1e-4)


def test_checkpoint_recomputes():
  f = lambda x: jnp.sin(jnp.sin(x)) * x
  x = jnp.ones(3)

  def residuals(fun):
    _, _, res = ad.linearize_flat(lambda x: [fun(x)], [x])
    return len(res)

  assert residuals(jax.checkpoint(f)) == 1          # only the input is kept
  assert residuals(jax.checkpoint(f, policy=jax.checkpoint_policies.everything_saveable)) \
      == residuals(f) > 1
  for fun in (jax.checkpoint(f), jax.remat(f),
              jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable)):
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(fun(x)))(x),
                               jax.grad(lambda x: jnp.sum(f(x)))(x), rtol=1e-6)
  np.testing.assert_allclose(jax.grad(jax.grad(jax.checkpoint(lambda x: jnp.sin(x) * x)))(0.5),
                             jax.grad(jax.grad(lambda x: jnp.sin(x) * x))(0.5), rtol=1e-6)


def test_checkpoint_dots_saveable_keeps_dots():
  w = jnp.ones((3, 3))
  f = lambda x: jnp.sum(jnp.sin(jnp.dot(jnp.sin(x), w)))
  _, _, res_none = ad.linearize_flat(lambda x: [jax.checkpoint(f)(x)], [jnp.ones(3)])
  _, _, res_dots = ad.linearize_flat(
      lambda x: [jax.checkpoint(f, policy=jax.checkpoint_policies.dots_saveable)(x)],
      [jnp.ones(3)])
  assert len(res_dots) > len(res_none)


def test_checkpoint_static_argnums():
  f = jax.checkpoint(lambda x, n: x ** n, static_argnums=(1,))
  assert float(jax.grad(f)(2.0, 3)) == 12.0


# -- errors --------------------------------------------------------------------

def test_grad_errors():
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    jax.grad(lambda x: x)(1)
  with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. "
                     r"Output had shape: \(3,\)."):
    jax.grad(lambda x: x * 2)(jnp.ones(3))
  with pytest.raises(TypeError, match="For differentiation of functions with integer outputs"):
    jax.grad(lambda x: (x * 2).astype(jnp.int32))(1.)
  with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
    jax.grad(lambda x, y: x, argnums=2)(1., 2.)


def test_jvp_errors():
  with pytest.raises(TypeError, match="must have the same tree structure"):
    jax.jvp(lambda x: x, (1.,), [1.])
  with pytest.raises(ValueError, match="different primal and tangent shapes"):
    jax.jvp(lambda x: x, (1.,), (jnp.ones(2),))
  with pytest.raises(TypeError, match="dtypes must be equal"):
    jax.jvp(lambda x: x, (1.,), (1,))


def test_vjp_cotangent_errors():
  _, f_vjp = jax.vjp(lambda x: x * 2, 1.)
  with pytest.raises(ValueError, match="unexpected tree structure"):
    f_vjp((1.,))
  with pytest.raises(ValueError, match="unexpected JAX type"):
    f_vjp(jnp.ones(2))


# -- against real JAX -----------------------------------------------------------

def test_grad_matches_jax_on_a_small_network():
  real = pytest.importorskip("jax")
  rng = np.random.RandomState(1)
  w1, w2 = rng.randn(4, 5).astype(np.float32), rng.randn(5).astype(np.float32)
  x = rng.randn(3, 4).astype(np.float32)

  def loss(np_mod, w1, w2, x):
    h = np_mod.tanh(np_mod.dot(x, w1))
    return np_mod.mean((np_mod.dot(h, w2) - 1.0) ** 2)

  ours = jax.grad(lambda a, b: loss(jnp, a, b, x), argnums=(0, 1))(w1, w2)
  theirs = real.grad(lambda a, b: loss(real.numpy, a, b, x), argnums=(0, 1))(w1, w2)
  for o, t in zip(ours, theirs):
    np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_gradients_keep_weak_types():
  g = jax.grad(lax.sin)(0.5)
  assert g.weak_type
  _, f_vjp = jax.vjp(lambda x: x * np.float32(2), 0.5)
  assert f_vjp(np.float32(1.0))[0].weak_type
  assert not jax.grad(lax.sin)(jnp.float32(0.5)).weak_type


def test_linearize_and_vjp_with_integer_inputs():
  _, f_vjp = jax.vjp(lambda x, y: x * 2.0 + y, 1.0, 3)
  ct_x, ct_y = f_vjp(1.0)
  assert float(ct_x) == 2.0 and ct_y.dtype == float0


def test_fwd_and_bwd_reuses_one_compiled_backward():
  """jax.fwd_and_bwd: fwd gives fun's value and residuals (a pytree), bwd the
  cotangents of argnums; jitted, each compiles once over many steps."""
  w = np.full((4, 4), 0.5, np.float32)
  f = lambda x, w: jnp.tanh(x @ w)
  fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
  for i in range(3):
    x = np.arange(16, dtype=np.float32).reshape(4, 4) / (10 + i)
    y, residuals = fwd(x, w)
    cx, cw = bwd(residuals, jnp.ones((4, 4)))
    dy = 1 - np.tanh(x @ w) ** 2    # d tanh / d(x @ w), cotangent ones
    np.testing.assert_allclose(y, np.tanh(x @ w), rtol=1e-6)
    np.testing.assert_allclose(cx, dy @ w.T, rtol=1e-5)
    np.testing.assert_allclose(cw, x.T @ dy, rtol=1e-5)
  assert (fwd._cache_size(), bwd._cache_size()) == (1, 1)
  fwd, bwd = jax.fwd_and_bwd(lambda x, w: (f(x, w), x.sum()), argnums=1, has_aux=True,
                             jitted=False)
  y, residuals, aux = fwd(x, w)
  assert float(aux) == float(x.sum())
  np.testing.assert_allclose(bwd(residuals, jnp.ones((4, 4))), x.T @ dy, rtol=1e-5)
  with pytest.raises(TypeError, match="Expected a callable value, got 3"):
    jax.fwd_and_bwd(3, 0)
  with pytest.raises(ValueError, match="but got value 5 for len"):
    jax.fwd_and_bwd(f, argnums=5)[0](x, w)


def _tracer_kinds(jax):
  """Which values inside and out of jvp are tracers, and of what type."""
  seen = {}

  def f(x, n):
    seen["int_input"] = isinstance(n, jax.core.Tracer)
    seen["independent"] = isinstance(x * 0 + jax.lax.stop_gradient(x), jax.core.Tracer)
    seen["dependent"] = isinstance(x * 2, jax.core.Tracer)
    return x + 1, n * 2

  (_, n_out), (t, _) = jax.jvp(f, (1.0, 3), (1.0, np.zeros((), jax.dtypes.float0)))
  seen["tangent"] = type(t).__name__
  seen["int_out"] = type(n_out).__name__
  seen["identity_tangent"] = type(jax.jvp(lambda x: x, (1.0,), (1.0,))[1]).__name__
  return seen


def test_jvp_values_without_tangents_are_not_tracers():
  """As JAX: a value whose tangent is a symbolic zero (an integer input, a
  stop_gradient) is no JVP tracer, and a Python-scalar tangent passed
  through an operation comes out an Array (through no operation: as it is)."""
  got = _tracer_kinds(jax)
  assert got["int_input"] is False and got["dependent"] is True
  assert got["tangent"] == "ArrayImpl" and got["identity_tangent"] == "float"
  jax_ = oracle()
  assert got == _tracer_kinds(jax_)


def test_linear_transpose_takes_shapes_and_dtypes():
  """Only the primals' shapes and dtypes are read: a ShapeDtypeStruct (or a
  ShapedArray) stands for an array, as in JAX."""
  f = lambda x: x * 3.0
  for primal in (jax.ShapeDtypeStruct((2,), jnp.float32),
                 jax.core.ShapedArray((2,), np.dtype(np.float32))):
    (ct,) = jax.linear_transpose(f, primal)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(ct, [3.0, 6.0])
    assert ct.dtype == np.float32


def _float0_values(jax):
  grad = jax.grad(lambda a, b: b * 2.0, argnums=(0, 1), allow_int=True)
  z = np.zeros((2,), jax.dtypes.float0)
  out = {
      "jit_grad": jax.jit(grad)(1, 2.0)[0],
      "jit_identity": jax.jit(lambda x: x)(z),
      "vmap_grad": jax.vmap(lambda a: grad(a, 2.0)[0])(np.arange(2)),
  }
  kinds = {k: (isinstance(v, np.ndarray), isinstance(v, jax.Array), v.dtype == jax.dtypes.float0,
               np.shape(v)) for k, v in out.items()}
  kinds["eq"] = bool((out["jit_grad"] == out["jit_grad"]).all())
  try:
    jax.lax.eq(z, z)
  except TypeError as e:
    kinds["lax_eq"] = str(e)
  try:
    jax.lax.neg(z)
  except TypeError as e:
    kinds["lax_neg"] = str(e)
  return kinds


def test_float0_results_are_numpy_arrays():
  """A float0 value (the gradient of an integer) is a NumPy array, from jit
  and vmap too, so comparing two works; lax refuses float0 with JAX's words."""
  got = _float0_values(jax)
  assert got["jit_grad"] == (True, False, True, ())
  assert got["eq"] is True
  assert got["lax_eq"].startswith("Called eq with a float0 at position 0. float0s do not")
  assert got["lax_neg"].startswith("Called neg with a float0 array.")
  assert got == _float0_values(oracle())
