"""Printed jaxprs of reverse-mode programs through ``jit``, compared with JAX's.

Under ``grad``/``vjp``/``linearize`` a ``jit`` splits into a known call
(the primal outputs and the residuals, without the known inputs and outputs
it would only forward) and a linear call, which transposes into a third
``jit`` of the backward pass (residuals first, then the nonzero
cotangents).  Each case's expected text is written here, so the tests run
without JAX; with JAX installed they are also checked against it.  The
values are checked against the same programs without ``jit`` and against
finite differences.
"""
import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
from purejax import lax as plax
from tests.jaxpr_ad_jit_expected import EXPECTED

CASES = {}


def case(fn):
  CASES[fn.__name__] = fn
  return fn


@case
def grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def grad_two_argnums(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * y + x)
  return jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(1., 2.)

@case
def grad_second_argnum(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * y)
  return jax.make_jaxpr(jax.grad(f, argnums=1))(1., 2.)

@case
def several_outputs(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), x * 2., x))
  def g(x):
    a, b, c = f(x)
    return a * b + c
  return jax.make_jaxpr(jax.grad(g))(1.)

@case
def closure_over_array(jax, jnp, lax):
  w = jnp.arange(3.)
  f = jax.jit(lambda x: jnp.sum(jnp.sin(x * w)))
  return jax.make_jaxpr(jax.grad(f))(jnp.ones(3))

@case
def nested_jit(jax, jnp, lax):
  inner = jax.jit(lambda x: jnp.cos(x) * x)
  f = jax.jit(lambda x: inner(x) * 3. + x)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def vjp_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  def g(x):
    y, vjp = jax.vjp(f, x)
    return vjp(jnp.ones_like(y))
  return jax.make_jaxpr(g)(jnp.ones(3))

@case
def linearize_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  def g(x):
    _, lin = jax.linearize(f, x)
    return lin(x)
  return jax.make_jaxpr(g)(1.)

@case
def value_and_grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sum(jnp.sin(x) * x))
  return jax.make_jaxpr(jax.value_and_grad(f))(jnp.ones(3))

@case
def grad_jit_grad_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(jax.jit(jax.grad(f))))(1.)

@case
def integer_input(jax, jnp, lax):
  f = jax.jit(lambda x, n: jnp.sin(x) * n)
  return jax.make_jaxpr(jax.grad(f))(1., 3)

@case
def unused_input(jax, jnp, lax):
  f = jax.jit(lambda x, y: jnp.sin(x) * 2.)
  return jax.make_jaxpr(jax.grad(f, argnums=(0, 1)))(1., 2.)

@case
def static_argnums(jax, jnp, lax):
  f = jax.jit(lambda x, k: jnp.sin(x) * k, static_argnums=1)
  return jax.make_jaxpr(jax.grad(lambda x: f(x, 3.)))(1.)

@case
def output_is_input(jax, jnp, lax):
  f = jax.jit(lambda x: (x, jnp.sin(x)))
  def g(x):
    a, b = f(x)
    return a * b
  return jax.make_jaxpr(jax.grad(g))(1.)

@case
def linear_body(jax, jnp, lax):
  f = jax.jit(lambda x: x * 2.)
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def input_residual_and_output(jax, jnp, lax):
  f = jax.jit(lambda x, y: (x * y, y))
  def g(x, y):
    a, b = f(x, y)
    return a * b
  return jax.make_jaxpr(jax.grad(g, argnums=(0, 1)))(1., 2.)

@case
def jit_of_grad_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.jit(jax.grad(f)))(1.)

@case
def unused_output(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), jnp.cos(x)))
  return jax.make_jaxpr(jax.grad(lambda x: f(x)[0]))(1.)

@case
def same_jit_twice(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x))
  return jax.make_jaxpr(jax.grad(lambda x: f(x) * f(x)))(1.)

@case
def residual_is_output(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.exp(x))
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def vjp_two_outputs(jax, jnp, lax):
  f = jax.jit(lambda x, y: (x * y, jnp.sin(y)))
  def g(x, y):
    out, vjp = jax.vjp(f, x, y)
    return vjp(out)
  return jax.make_jaxpr(g)(1., 2.)

@case
def dead_code_in_body(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.cos(x), jnp.sin(x) * x)[1])
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def unused_output_and_input(jax, jnp, lax):
  f = jax.jit(lambda x, y: (jnp.sin(x) * y, jnp.cos(y) * x))
  return jax.make_jaxpr(jax.grad(lambda x, y: f(x, y)[1], argnums=(0, 1)))(1., 2.)

@case
def vmap_of_grad(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.vmap(jax.grad(f)))(jnp.ones(3))

@case
def grad_of_vmap(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(jax.grad(lambda x: jnp.sum(jax.vmap(f)(x))))(jnp.ones(3))

@case
def jvp_of_jit(jax, jnp, lax):
  f = jax.jit(lambda x: jnp.sin(x) * x)
  return jax.make_jaxpr(lambda x: jax.jvp(f, (x,), (x,)))(1.)

@case
def integer_output(jax, jnp, lax):
  f = jax.jit(lambda x: (jnp.sin(x), jnp.argmax(x)))
  return jax.make_jaxpr(jax.grad(lambda x: jnp.sum(f(x)[0])))(jnp.ones(3))

@case
def jit_in_cond_branch_linear(jax, jnp, lax):
  inner = jax.jit(lambda x: x * 3.)
  def f(x):
    return jnp.sin(inner(x))
  return jax.make_jaxpr(jax.grad(f))(1.)

@case
def dict_args(jax, jnp, lax):
  f = jax.jit(lambda p, x: jnp.sum(jnp.sin(x @ p["w"]) * p["b"]))
  p = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}
  return jax.make_jaxpr(jax.grad(f))(p, jnp.ones((4, 3)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_jaxpr(name):
  assert str(CASES[name](purejax, pjnp, plax)) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_jaxpr_matches_jax(name):
  jax = pytest.importorskip("jax")
  import jax.numpy as jnp
  assert str(CASES[name](jax, jnp, jax.lax)) == str(CASES[name](purejax, pjnp, plax))


# ---------------------------------------------------------------------------
# Values: the same derivatives with and without jit, and finite differences.

@pytest.fixture(params=["numpy", "cpu"])
def backend(request):
  from purejax._src.config import config
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


def _f_multi(x, y, n):
  a = pjnp.sin(x) * y + x * n
  return pjnp.sum(a * pjnp.cos(y)), a


def _f_nested(x, y):
  inner = purejax.jit(lambda u, v: (pjnp.tanh(u) * v, u))
  a, b = inner(x, y)
  return pjnp.sum(a * b + pjnp.exp(-b * b))


def _f_scan(c0, xs):
  body = purejax.jit(lambda c, x: (pjnp.sin(c) * x + c, c * x))
  c, ys = plax.scan(lambda c, x: body(c, x), c0, xs)
  return c + pjnp.sum(ys)


def _f_cond(p, x):
  inner = purejax.jit(lambda x: pjnp.sin(x) * x)
  return plax.cond(p, inner, lambda x: x * 2., x)


def _f_remat(x):
  g = purejax.checkpoint(lambda y: pjnp.sin(pjnp.sin(y)))
  return pjnp.sum(g(x) * x)


def _finite_difference(f, x, eps=1e-3):
  x = np.asarray(x, np.float64)
  grad = np.zeros_like(x)
  for i in np.ndindex(x.shape):
    d = np.zeros_like(x)
    d[i] = eps
    grad[i] = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
  return grad


def test_grad_values(backend):
  x = pjnp.array([0.3, -1.2, 2.0])
  y = pjnp.array([1.5, 0.7, -0.4])
  loss = lambda f: (lambda x, y: f(x, y, 3)[0])
  want = purejax.grad(loss(_f_multi), argnums=(0, 1))(x, y)
  for got in [purejax.grad(loss(purejax.jit(_f_multi)), argnums=(0, 1))(x, y),
              purejax.jit(purejax.grad(loss(purejax.jit(_f_multi)), argnums=(0, 1)))(x, y)]:
    for g, w in zip(got, want):
      np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
  fd = _finite_difference(lambda x: np.asarray(loss(_f_multi)(pjnp.asarray(x, np.float32), y)),
                          np.asarray(x))
  np.testing.assert_allclose(np.asarray(want[0]), fd, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("fun,args", [
    (_f_nested, (np.array([0.3, -1.2], np.float32), np.array([1.5, 0.7], np.float32))),
    (_f_scan, (np.float32(0.4), np.array([0.5, -0.2, 1.1], np.float32))),
    (_f_remat, (np.array([0.3, -1.2, 2.0], np.float32),)),
])
def test_nested_values_against_finite_differences(backend, fun, args):
  argnums = tuple(range(len(args)))
  eager = purejax.grad(fun, argnums=argnums)(*args)
  jitted = purejax.grad(purejax.jit(fun), argnums=argnums)(*args)
  staged = purejax.jit(purejax.grad(purejax.jit(fun), argnums=argnums))(*args)
  for i, arg in enumerate(args):
    np.testing.assert_allclose(np.asarray(jitted[i]), np.asarray(eager[i]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(staged[i]), np.asarray(eager[i]), rtol=1e-5, atol=1e-6)
    def partial(xi, i=i):
      full = list(args)
      full[i] = np.asarray(xi, np.float32)
      return fun(*full)
    fd = _finite_difference(partial, arg)
    np.testing.assert_allclose(np.asarray(eager[i]), fd, rtol=2e-2, atol=2e-2)


def test_cond_and_vjp_values(backend):
  x = np.float32(0.7)
  for p in (True, False):
    want = purejax.grad(lambda x: _f_cond(p, x))(x)
    got = purejax.jit(purejax.grad(purejax.jit(lambda x: _f_cond(p, x))))(x)
    np.testing.assert_allclose(float(got), float(want), rtol=1e-6)
  f = purejax.jit(lambda x, y: (x * y, pjnp.sin(y)))
  out, vjp = purejax.vjp(f, 2., 3.)
  ct = vjp((1.5, -0.5))
  np.testing.assert_allclose([float(c) for c in ct], [1.5 * 3., 1.5 * 2. - 0.5 * np.cos(3.)],
                             rtol=1e-6)


def test_second_order_values(backend):
  f = purejax.jit(lambda x: pjnp.sin(x) * x)
  d2 = purejax.grad(purejax.jit(purejax.grad(f)))(0.8)
  np.testing.assert_allclose(float(d2), 2 * np.cos(0.8) - 0.8 * np.sin(0.8), rtol=1e-5)
  h = purejax.hessian(purejax.jit(lambda x: pjnp.sum(pjnp.sin(x) * x)))(pjnp.array([0.1, 0.5]))
  want = np.diag([2 * np.cos(v) - v * np.sin(v) for v in (0.1, 0.5)])
  np.testing.assert_allclose(np.asarray(h), want, rtol=1e-5, atol=1e-6)


def test_symbolic_zero_cotangent_and_integer_inputs(backend):
  f = purejax.jit(lambda x, n: (pjnp.sin(x) * n, pjnp.cos(x)))
  g = purejax.grad(lambda x: f(x, 3)[0])(0.4)
  np.testing.assert_allclose(float(g), 3 * np.cos(0.4), rtol=1e-6)
  _, vjp = purejax.vjp(lambda x: f(x, 2), 0.4)
  ct = vjp((pjnp.zeros(()), pjnp.ones(())))
  np.testing.assert_allclose(float(ct[0]), -np.sin(0.4), rtol=1e-6)


def test_eager_backward_pass_is_compiled_once():
  from purejax._src import pjit
  f = purejax.jit(lambda x, w: pjnp.sum(pjnp.tanh(x @ w)))
  g = purejax.grad(f, argnums=1)
  x, w = pjnp.ones((4, 3)), pjnp.ones((3, 2))
  g(x, w)
  closed = [k for k in pjit._transposed_jaxprs.keys()]
  # The executable caches are weakly keyed: hold every key so that other
  # tests' jaxprs cannot be collected meanwhile and shrink the counts.
  held = {k: list(v.keys()) for k, v in pjit._executables.items()}
  for _ in range(3):
    g(x, w)
  assert {k: len(v) for k, v in pjit._executables.items()} == {
      k: len(v) for k, v in held.items()}
  assert [k for k in pjit._transposed_jaxprs.keys()] == closed
