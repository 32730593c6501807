"""custom_jvp and custom_vjp: the JAX documentation's examples under grad,
jit(grad), grad(jit) and grad(grad); nondiff_argnums, pytrees, symbolic
zeros, closures, errors; and the same programs against real JAX (values,
error messages, printed jaxprs)."""
import functools
from collections import namedtuple

import numpy as np
import pytest

import purejax
import purejax as jax
import purejax.numpy as jnp
from purejax._src import core
from purejax._src import custom_derivatives as cd

custom_jvp = getattr(purejax, "custom_jvp", cd.custom_jvp)
custom_vjp = getattr(purejax, "custom_vjp", cd.custom_vjp)

# The four ways every scalar example is differentiated.
GRADS = {
    "grad": jax.grad,
    "jit(grad)": lambda f: jax.jit(jax.grad(f)),
    "grad(jit)": lambda f: jax.grad(jax.jit(f)),
    "jit(grad(jit))": lambda f: jax.jit(jax.grad(jax.jit(f))),
}


def close(x, y, tol=1e-6):
  np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


# ---------------------------------------------------------------------------
# custom_jvp: the docs' log1pexp, stable at large x

@custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = log1pexp(x)
  return ans, (1 - 1 / (1 + jnp.exp(x))) * x_dot


def test_naive_log1pexp_gradient_is_nan_at_large_x():
  naive = lambda x: jnp.log(1. + jnp.exp(x))
  with np.errstate(all="ignore"):
    assert np.isnan(float(jax.grad(naive)(100.)))


@pytest.mark.parametrize("how", GRADS)
def test_log1pexp_gradient_is_finite(how):
  df = GRADS[how](log1pexp)
  with np.errstate(all="ignore"):
    close(df(100.), 1.0)
    close(df(3.), 1 - 1 / (1 + np.exp(3.)))
    close(df(-5.), 1 - 1 / (1 + np.exp(-5.)))


def test_log1pexp_values_jvp_and_linearize():
  close(log1pexp(3.), np.log1p(np.exp(3.)))
  y, t = jax.jvp(log1pexp, (3.,), (2.,))
  close(y, np.log1p(np.exp(3.)))
  close(t, 2 * (1 - 1 / (1 + np.exp(3.))))
  y, f_jvp = jax.linearize(log1pexp, 100.)
  close(f_jvp(2.), 2.0)


def test_second_derivative_differentiates_the_rule():
  # d/dx (1 - 1/(1+e^x)) = e^x / (1+e^x)^2
  expected = np.exp(3.) / (1 + np.exp(3.)) ** 2
  for g in [jax.grad(jax.grad(log1pexp)), jax.jit(jax.grad(jax.grad(log1pexp))),
            jax.grad(jax.grad(jax.jit(log1pexp))), jax.grad(jax.jit(jax.grad(log1pexp)))]:
    close(g(3.), expected, 1e-5)
  close(jax.hessian(log1pexp)(3.), expected, 1e-5)


# ---------------------------------------------------------------------------
# custom_jvp: f(x, y) = sin(x) * y with a hand-written rule

@custom_jvp
def f_sin(x, y):
  return jnp.sin(x) * y


@f_sin.defjvp
def f_sin_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  return f_sin(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot


@custom_jvp
def f_sin_jvps(x, y):
  return jnp.sin(x) * y


f_sin_jvps.defjvps(lambda x_dot, ans, x, y: jnp.cos(x) * x_dot * y,
                   lambda y_dot, ans, x, y: jnp.sin(x) * y_dot)


@pytest.mark.parametrize("fun", [f_sin, f_sin_jvps], ids=["defjvp", "defjvps"])
@pytest.mark.parametrize("how", GRADS)
def test_sin_times_y_gradients(fun, how):
  close(GRADS[how](fun)(1., 2.), np.cos(1.) * 2.)
  dx, dy = jax.grad(fun, argnums=(0, 1))(1., 2.)
  close(dx, np.cos(1.) * 2.)
  close(dy, np.sin(1.))


@pytest.mark.parametrize("fun", [f_sin, f_sin_jvps], ids=["defjvp", "defjvps"])
def test_sin_times_y_second_derivatives(fun):
  close(jax.grad(jax.grad(fun))(1., 2.), -np.sin(1.) * 2.)
  close(jax.grad(jax.grad(fun), argnums=1)(1., 2.), np.cos(1.))
  close(jax.jit(jax.grad(jax.grad(fun)))(1., 2.), -np.sin(1.) * 2.)


def test_defjvp_returns_the_rule_and_defjvps_none():
  f = custom_jvp(lambda x: x)
  rule = lambda p, t: (p[0], t[0])
  assert f.defjvp(rule) is rule
  assert f.defjvps(lambda g, ans, x: g) is None


# A rule that disagrees with the function proves which one is differentiated.
@custom_jvp
def fake_sin(x):
  return jnp.sin(x)


@fake_sin.defjvp
def _fake_sin_jvp(primals, tangents):
  x, = primals
  return fake_sin(x), 2. * x * tangents[0]      # "derivative" x**2


@pytest.mark.parametrize("how", GRADS)
def test_the_rule_is_used_not_the_function(how):
  close(GRADS[how](fake_sin)(3.), 6.)


def test_the_rule_is_used_in_every_mode():
  close(jax.jvp(fake_sin, (3.,), (1.,))[1], 6.)
  close(jax.linearize(fake_sin, 3.)[1](1.), 6.)
  close(jax.vjp(fake_sin, 3.)[1](1.)[0], 6.)
  close(jax.jacfwd(fake_sin)(jnp.array([1., 2.])), np.diag([2., 4.]))
  close(jax.jacrev(fake_sin)(jnp.array([1., 2.])), np.diag([2., 4.]))
  close(jax.grad(jax.checkpoint(fake_sin))(3.), 6.)
  # the rule's own derivative: d/dx 2x = 2
  close(jax.grad(jax.grad(fake_sin))(3.), 2.)
  close(jax.grad(jax.grad(jax.jit(fake_sin)))(3.), 2.)
  close(fake_sin(3.), np.sin(3.))     # the primal value is the function's


def test_function_is_not_traced_under_grad():
  calls = []

  @custom_jvp
  def f(x):
    calls.append(x)
    if x > 0:        # Python control flow: fine with concrete values
      return x
    return -x

  f.defjvp(lambda p, t: (f(p[0]), 3. * t[0]))
  close(jax.grad(f)(2.), 3.)
  close(jax.grad(f)(-2.), 3.)
  # only the rule's own calls, on concrete values: f is never traced
  assert len(calls) == 2 and not any(isinstance(c, core.Tracer) for c in calls)


# ---------------------------------------------------------------------------
# custom_vjp: sin(x) * y, and the docs' clip_gradient

@custom_vjp
def g_sin(x, y):
  return jnp.sin(x) * y


def g_sin_fwd(x, y):
  return g_sin(x, y), (jnp.cos(x), jnp.sin(x), y)


def g_sin_bwd(res, g):
  cos_x, sin_x, y = res
  return (cos_x * g * y, sin_x * g)


g_sin.defvjp(g_sin_fwd, g_sin_bwd)


@pytest.mark.parametrize("how", GRADS)
def test_custom_vjp_gradients(how):
  close(GRADS[how](g_sin)(1., 2.), np.cos(1.) * 2.)
  close(jax.grad(g_sin, argnums=1)(1., 2.), np.sin(1.))
  close(g_sin(1., 2.), np.sin(1.) * 2)


def test_bwd_runs_in_the_backward_pass_only():
  log = []

  @custom_vjp
  def f(x):
    return x * 2.

  def fwd(x):
    log.append("fwd")
    return x * 2., x

  def bwd(x, g):
    log.append("bwd")
    return (g * 10.,)

  f.defvjp(fwd, bwd)
  y, f_vjp = jax.vjp(f, 3.)
  close(y, 6.)
  assert log == ["fwd"]
  close(f_vjp(1.)[0], 10.)
  assert log == ["fwd", "bwd"]
  close(f(3.), 6.)
  assert log == ["fwd", "bwd"]       # eagerly neither rule runs


@functools.partial(custom_vjp, nondiff_argnums=(0, 1))
def clip_gradient(lo, hi, x):
  return x


def clip_gradient_fwd(lo, hi, x):
  return x, None


def clip_gradient_bwd(lo, hi, _, g):
  return (jnp.clip(g, lo, hi),)


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def clip_sin(x):
  return jnp.sin(clip_gradient(-0.75, 0.75, x))


@pytest.mark.parametrize("how", GRADS)
def test_clip_gradient(how):
  df = GRADS[how](clip_sin)
  for x in [0., 1., 2.5, 3., 6.]:
    close(df(x), np.clip(np.cos(x), -0.75, 0.75))


def test_custom_vjp_second_order_differentiates_bwd():
  @custom_vjp
  def sin(x):
    return jnp.sin(x)

  sin.defvjp(lambda x: (jnp.sin(x), x), lambda x, g: (jnp.cos(x) * g,))
  for g in [jax.grad(jax.grad(sin)), jax.jit(jax.grad(jax.grad(sin))),
            jax.grad(jax.grad(jax.jit(sin)))]:
    close(g(1.), -np.sin(1.))
  close(jax.jacrev(sin)(jnp.array([0., 1.])), np.diag(np.cos([0., 1.])))


def test_forward_mode_of_custom_vjp_raises():
  msg = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
  with pytest.raises(TypeError, match=r"can't apply forward-mode"):
    jax.jvp(g_sin, (1., 2.), (1., 1.))
  with pytest.raises(TypeError) as info:
    jax.linearize(g_sin, 1., 2.)[1](1., 1.)
  assert str(info.value) == msg
  with pytest.raises(TypeError, match=r"can't apply forward-mode"):
    jax.jacfwd(g_sin)(1., 2.)
  with pytest.raises(TypeError, match=r"can't apply forward-mode"):
    jax.jit(lambda x: jax.jvp(g_sin, (x, 2.), (x, 1.)))(1.)
  # ... but a jvp with zero tangents is just the function
  y, t = jax.jvp(lambda x: g_sin(2., 3.) * x, (1.,), (1.,))
  close(t, np.sin(2.) * 3.)


# ---------------------------------------------------------------------------
# nondiff_argnums with a function argument (the docs' app example)

@functools.partial(custom_vjp, nondiff_argnums=(0,))
def app(f, x):
  return f(x)


app.defvjp(lambda f, x: (f(x), x), lambda f, x, g: (5. * g * x,))


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def app_jvp(f, x):
  return f(x)


@app_jvp.defjvp
def _app_jvp_rule(f, primals, tangents):
  x, = primals
  return app_jvp(f, x), 7. * tangents[0]


@pytest.mark.parametrize("how", ["grad", "jit(grad)"])
def test_nondiff_function_argument(how):
  grad = GRADS[how]
  close(grad(lambda x: app(jnp.sin, x))(2.), 10.)
  close(grad(lambda x: app_jvp(jnp.sin, x))(2.), 7.)
  close(app(jnp.sin, 2.), np.sin(2.))
  close(jax.jit(lambda x: app_jvp(jnp.sin, x))(2.), np.sin(2.))


def test_custom_jvp_nondiff_array_gets_no_gradient():
  mul = functools.partial(custom_jvp, nondiff_argnums=(0,))(lambda a, b: a * b)
  mul.defjvp(lambda a, p, t: (a * p[0], a * t[0]))
  close(jax.grad(lambda x: mul(x, x))(2.), 2.)          # only through b
  close(jax.grad(mul)(2., 3.), 0.)
  close(jax.jit(jax.grad(lambda x: mul(x, x)))(2.), 2.)
  close(jax.grad(jax.grad(lambda x: mul(x, x) * x))(2.), 4.)
  text = str(jax.make_jaxpr(lambda x: mul(x, x))(2.))
  assert "stop_gradient" in text and "num_consts=1" in text


def test_custom_vjp_rejects_tracers_in_nondiff_args():
  mul = functools.partial(custom_vjp, nondiff_argnums=(0,))(lambda a, b: a * b)
  mul.defvjp(lambda a, b: (a * b, None), lambda a, r, g: (g * a,))
  with pytest.raises(jax.errors.UnexpectedTracerError, match="nondiff_argnums"):
    jax.grad(lambda x: mul(x, x))(2.)
  with pytest.raises(jax.errors.UnexpectedTracerError, match="nondiff_argnums"):
    jax.jit(lambda x: mul(x, x))(2.)
  close(jax.grad(lambda x: mul(jnp.float32(3.), x))(2.), 3.)


# ---------------------------------------------------------------------------
# Pytrees (the docs' Point example), keyword arguments, symbolic zeros

Point = namedtuple("Point", ["x", "y"])


@custom_jvp
def pt_fun(pt):
  return {"a": pt.x ** 2, "b": (jnp.sin(pt.x), jnp.cos(pt.y))}


@pt_fun.defjvp
def _pt_fun_jvp(primals, tangents):
  pt, = primals
  dot, = tangents
  return pt_fun(pt), {"a": 2 * pt.x * dot.x,
                      "b": (jnp.cos(pt.x) * dot.x, -jnp.sin(pt.y) * dot.y)}


@custom_vjp
def pt_fun_v(pt):
  return {"a": pt.x ** 2, "b": (jnp.sin(pt.x), jnp.cos(pt.y))}


def _pt_bwd(pt, g):
  return (Point(2 * pt.x * g["a"] + jnp.cos(pt.x) * g["b"][0], -jnp.sin(pt.y) * g["b"][1]),)


pt_fun_v.defvjp(lambda pt: (pt_fun_v(pt), pt), _pt_bwd)


@pytest.mark.parametrize("fun", [pt_fun, pt_fun_v], ids=["custom_jvp", "custom_vjp"])
@pytest.mark.parametrize("how", GRADS)
def test_pytree_inputs_and_outputs(fun, how):
  loss = lambda pt: fun(pt)["a"] + fun(pt)["b"][0] + fun(pt)["b"][1]
  g = GRADS[how](loss)(Point(1., 2.))
  assert isinstance(g, Point)
  close(g.x, 2. + np.cos(1.))
  close(g.y, -np.sin(2.))


def test_keyword_arguments_and_defaults():
  @custom_jvp
  def f(x, y=1.):
    return x * y

  f.defjvp(lambda p, t: (f(*p), t[0] * p[1] + t[1] * p[0]))
  close(jax.grad(f)(3.), 1.)
  close(jax.grad(lambda x: f(x, y=x))(3.), 6.)
  close(jax.jit(lambda x: f(x=x, y=2.))(3.), 6.)
  with pytest.raises(TypeError, match="could not be resolved to positional-only"):
    f(3., z=2.)


def test_symbolic_zeros():
  seen = []

  @custom_jvp
  def f(x, y):
    return x * y

  @functools.partial(f.defjvp, symbolic_zeros=True)
  def _(primals, tangents):
    x, y = primals
    tx, ty = tangents
    seen.append(tuple(type(t) is cd.SymbolicZero for t in tangents))
    out = 0.
    if type(tx) is not cd.SymbolicZero:
      out = out + tx * y
    if type(ty) is not cd.SymbolicZero:
      out = out + ty * x
    return f(x, y), out

  close(jax.grad(f)(2., 3.), 3.)
  close(jax.grad(jax.jit(f), argnums=1)(2., 3.), 2.)
  assert seen == [(False, True), (True, False)]

  @custom_vjp
  def g(x, y):
    return x * y

  def fwd(x, y):
    seen.append((x.perturbed, y.perturbed))
    return g(x.value, y.value), (x.value, y.value)

  g.defvjp(fwd, lambda r, ct: (ct * r[1], ct * r[0]), symbolic_zeros=True)
  close(jax.grad(g)(2., 3.), 3.)
  assert seen[-1] == (True, False)


# ---------------------------------------------------------------------------
# Closures

def test_closure_over_outer_jit_tracer_works():
  def outer(y, x):
    @custom_jvp
    def f(x):
      return x * y
    f.defjvp(lambda p, t: (f(p[0]), t[0] * y))

    @custom_vjp
    def g(x):
      return x * y
    g.defvjp(lambda x: (x * y, None), lambda r, ct: (ct * y,))
    return f(x) + g(x)

  close(jax.jit(lambda y: jax.grad(lambda x: outer(y, x))(3.))(5.), 10.)
  close(jax.jit(outer)(5., 3.), 30.)
  text = str(jax.make_jaxpr(outer)(5., 3.))
  assert text.count("num_consts=1") == 2


def test_closure_over_differentiated_value_raises():
  def outer(y):
    @custom_vjp
    def f(x):
      return x * y
    f.defvjp(lambda x: (x * y, None), lambda r, g: (g * y,))
    return f(2.)

  with pytest.raises(jax.errors.UnexpectedTracerError):
    jax.grad(outer)(3.)
  with pytest.raises(jax.errors.UnexpectedTracerError):
    jax.jit(jax.grad(outer))(3.)
  with pytest.raises(cd.CustomVJPException, match="closed-over value"):
    jax.grad(jax.jit(outer))(3.)


# ---------------------------------------------------------------------------
# Errors

def test_missing_rules():
  with pytest.raises(AttributeError, match="No JVP defined for custom_jvp function"):
    custom_jvp(lambda x: x)(1.)
  with pytest.raises(AttributeError, match="No VJP defined for custom_vjp function"):
    jax.grad(custom_vjp(lambda x: x))(1.)


def _with_jvp(rule):
  f = custom_jvp(lambda x: jnp.sin(x))
  f.defjvp(rule)
  return f


def test_bad_jvp_rule_outputs():
  with pytest.raises(TypeError, match="must produce a pair"):
    jax.jvp(_with_jvp(lambda p, t: p[0]), (1.,), (1.,))
  with pytest.raises(TypeError, match="equal container"):
    jax.jvp(_with_jvp(lambda p, t: (p[0], (t[0],))), (1.,), (1.,))
  with pytest.raises(TypeError, match="corresponding shapes and dtypes"):
    jax.jvp(_with_jvp(lambda p, t: (jnp.sin(p[0]), jnp.ones(2))), (1.,), (1.,))
  with pytest.raises(TypeError, match="primal output"):
    jax.grad(jax.jit(_with_jvp(lambda p, t: ((p[0],), (t[0],)))))(1.)


def _with_vjp(fwd, bwd):
  f = custom_vjp(lambda x, y: jnp.sin(x) * y)
  f.defvjp(fwd, bwd)
  return f


def test_bad_vjp_rule_outputs():
  ok_fwd = lambda x, y: (jnp.sin(x) * y, (jnp.cos(x), y))
  with pytest.raises(TypeError, match="same container"):
    jax.grad(_with_vjp(ok_fwd, lambda r, g: r[0] * g))(1., 2.)
  with pytest.raises(TypeError, match="same container"):
    jax.jit(jax.grad(_with_vjp(ok_fwd, lambda r, g: (g,))))(1., 2.)
  with pytest.raises(ValueError, match=r"at output\[0\].*shapes do not match"):
    jax.grad(_with_vjp(ok_fwd, lambda r, g: (jnp.ones(3), g)))(1., 2.)
  with pytest.raises(TypeError, match="must produce a pair"):
    jax.grad(_with_vjp(lambda x, y: x, lambda r, g: (g, g)))(1., 2.)
  with pytest.raises(TypeError, match="shapes/dtypes"):
    jax.grad(jax.jit(_with_vjp(lambda x, y: (jnp.ones((), jnp.float16), None),
                               lambda r, g: (g, g))))(1., 2.)
  # None and lists are accepted
  dx, dy = jax.grad(_with_vjp(ok_fwd, lambda r, g: [None, g]), argnums=(0, 1))(1., 2.)
  assert float(dx) == 0. and float(dy) == 1.


def test_methods_are_not_bound():
  class C:
    @functools.partial(custom_jvp, nondiff_argnums=(0,))
    def m(self, x):
      return jnp.sin(x)

    @m.defjvp
    def _m_jvp(self, primals, tangents):
      return self.m(primals[0]), tangents[0]

  with pytest.raises(TypeError, match="missing a required argument: 'x'"):
    C().m(1.)


# ---------------------------------------------------------------------------
# Against real JAX: the same programs, values and error messages, and the
# printed jaxprs.

class _Purejax:
  """purejax with custom_jvp/custom_vjp, as the programs below see it."""
  custom_jvp, custom_vjp = custom_jvp, custom_vjp

  def __getattr__(self, name):
    return getattr(purejax, name)


def _sin_y_jvp(jax, jnp):
  @jax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y

  @f.defjvp
  def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return f(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot
  return f


def _sin_y_vjp(jax, jnp):
  @jax.custom_vjp
  def g(x, y):
    return jnp.sin(x) * y

  def g_fwd(x, y):
    return g(x, y), (jnp.cos(x), jnp.sin(x), y)

  def g_bwd(res, ct):
    cos_x, sin_x, y = res
    return (cos_x * ct * y, sin_x * ct)
  g.defvjp(g_fwd, g_bwd)
  return g


def _log1pexp(jax, jnp):
  @jax.custom_jvp
  def log1pexp(x):
    return jnp.log(1. + jnp.exp(x))

  @log1pexp.defjvp
  def log1pexp_jvp(primals, tangents):
    x, = primals
    return log1pexp(x), (1 - 1 / (1 + jnp.exp(x))) * tangents[0]
  return log1pexp


def _closing(jax, jnp):
  def outer(y, x):
    @jax.custom_vjp
    def f(x):
      return x * y
    f.defvjp(lambda x: (x * y, None), lambda r, g: (g * y,))
    return f(x)
  return outer


def _long(jax, jnp):
  def long(x):
    for _ in range(12):
      x = jnp.sin(x)
    return x
  f = jax.custom_jvp(long)
  f.defjvp(lambda p, t: (f(p[0]), t[0]))
  return lambda x: f(x) * f(x)


VALUE_CASES = [
    ("jvp_grad", lambda jax, jnp: jax.grad(_sin_y_jvp(jax, jnp), (0, 1))(1., 2.)),
    ("jvp_gradgrad", lambda jax, jnp: jax.grad(jax.grad(_sin_y_jvp(jax, jnp)))(1., 2.)),
    ("jvp_grad_jit", lambda jax, jnp: jax.grad(jax.jit(_sin_y_jvp(jax, jnp)))(.5, 3.)),
    ("jvp_jvp", lambda jax, jnp: jax.jvp(_sin_y_jvp(jax, jnp), (1., 2.), (.5, -1.))),
    ("log1pexp", lambda jax, jnp: [jax.grad(_log1pexp(jax, jnp))(x) for x in (-3., 0., 50.)]),
    ("log1pexp_hessian", lambda jax, jnp: jax.hessian(_log1pexp(jax, jnp))(2.)),
    ("vjp_grad", lambda jax, jnp: jax.grad(_sin_y_vjp(jax, jnp), (0, 1))(1., 2.)),
    ("vjp_jit_grad", lambda jax, jnp: jax.jit(jax.grad(_sin_y_vjp(jax, jnp)))(1., 2.)),
    ("vjp_vjp", lambda jax, jnp: jax.vjp(_sin_y_vjp(jax, jnp), 1., 2.)[1](3.)),
    ("vjp_jvp_error", lambda jax, jnp: jax.jvp(_sin_y_vjp(jax, jnp), (1., 2.), (1., 1.))),
    ("closure_jit_grad", lambda jax, jnp: jax.grad(jax.jit(_closing(jax, jnp)))(3., 2.)),
    ("closure_inside_jit", lambda jax, jnp: jax.jit(
        lambda y: jax.grad(lambda x: _closing(jax, jnp)(y, x))(2.))(3.)),
    ("no_jvp", lambda jax, jnp: jax.custom_jvp(lambda x: x)(1.)),
    ("no_vjp", lambda jax, jnp: jax.grad(jax.custom_vjp(lambda x: x))(1.)),
    ("bwd_structure", lambda jax, jnp: jax.grad(_bad_bwd(jax, jnp, lambda r, g: (g,)))(1.)),
    ("bwd_shape", lambda jax, jnp: jax.grad(
        _bad_bwd(jax, jnp, lambda r, g: (jnp.ones(3), g)))(1.)),
    ("bwd_pytree_none", lambda jax, jnp: jax.grad(_tree_vjp(jax, jnp), (0, 1))(
        {"a": 1., "b": (2., 3.)}, 2.)),
    ("jvp_rule_not_pair", lambda jax, jnp: jax.jvp(
        _bad_rule(jax, jnp, lambda p, t: p[0]), (1.,), (1.,))),
    ("jvp_rule_trees", lambda jax, jnp: jax.jvp(
        _bad_rule(jax, jnp, lambda p, t: (p[0], (t[0],))), (1.,), (1.,))),
    ("jvp_rule_tangent_type", lambda jax, jnp: jax.jvp(
        _bad_rule(jax, jnp, lambda p, t: (jnp.sin(p[0]), jnp.ones(2))), (1.,), (1.,))),
    ("jvp_rule_primal_type_jit", lambda jax, jnp: jax.jvp(jax.jit(_bad_rule(
        jax, jnp, lambda p, t: (jnp.ones(2), jnp.ones(2)))), (1.,), (1.,))),
    ("fwd_primal_tree_jit", lambda jax, jnp: jax.grad(jax.jit(_bad_fwd(
        jax, jnp, lambda x, y: ((jnp.sin(x) * y,), None))))(1., 2.)),
    ("fwd_not_pair", lambda jax, jnp: jax.grad(_bad_fwd(jax, jnp, lambda x, y: y))(1., 2.)),
]


def _bad_bwd(jax, jnp, bwd):
  f = jax.custom_vjp(lambda x, y=2.: jnp.sin(x) * y)
  f.defvjp(lambda x, y=2.: (jnp.sin(x) * y, (jnp.cos(x), y)), bwd)
  return f


def _bad_fwd(jax, jnp, fwd):
  f = jax.custom_vjp(lambda x, y: jnp.sin(x) * y)
  f.defvjp(fwd, lambda r, g: (g, g))
  return f


def _bad_rule(jax, jnp, rule):
  f = jax.custom_jvp(lambda x: jnp.sin(x))
  f.defjvp(rule)
  return f


def _tree_vjp(jax, jnp):
  fun = lambda x, y: x["a"] * x["b"][0] * y
  f = jax.custom_vjp(fun)
  f.defvjp(lambda x, y: (fun(x, y), (x, y)),
           lambda r, g: ({"a": g * r[1], "b": (None, g)}, g * r[0]["a"]))
  return f


def _run(program, jax, jnp):
  try:
    return program(jax, jnp)
  except Exception as err:   # compared below: class name and message
    return err


@pytest.fixture(scope="module")
def real():
  jax_ = pytest.importorskip("jax")
  import jax.numpy as jnp_
  return jax_, jnp_


@pytest.mark.oracle
@pytest.mark.parametrize("name,program", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_and_errors_match_jax(real, name, program):
  theirs = _run(program, *real)
  ours = _run(program, _Purejax(), jnp)
  if isinstance(theirs, Exception):
    assert isinstance(ours, Exception), f"JAX raised {theirs!r}, we returned {ours!r}"
    assert type(ours).__name__ == type(theirs).__name__
    assert str(ours).split("\nSee https")[0] == str(theirs).split("\nSee https")[0]
    return
  assert not isinstance(ours, Exception), ours
  import jax as real_jax
  their_leaves, their_tree = real_jax.tree_util.tree_flatten(theirs)
  our_leaves, our_tree = jax.tree_util.tree_flatten(ours)
  assert len(our_leaves) == len(their_leaves)
  for a, b in zip(our_leaves, their_leaves):
    assert np.asarray(a).dtype == np.asarray(b).dtype
    close(a, b, 1e-5)


JAXPR_CASES = [
    ("custom_jvp", lambda jax, jnp: jax.make_jaxpr(_sin_y_jvp(jax, jnp))(1., 2.)),
    ("custom_jvp_in_jit", lambda jax, jnp: jax.make_jaxpr(jax.jit(_sin_y_jvp(jax, jnp)))(1., 2.)),
    ("defjvps", lambda jax, jnp: jax.make_jaxpr(_defjvps(jax, jnp))(1., 2.)),
    ("log1pexp", lambda jax, jnp: jax.make_jaxpr(_log1pexp(jax, jnp))(1.)),
    ("custom_vjp", lambda jax, jnp: jax.make_jaxpr(_sin_y_vjp(jax, jnp))(1., 2.)),
    ("custom_lin", lambda jax, jnp: jax.make_jaxpr(
        lambda x: jax.jvp(_sin_y_vjp(jax, jnp), (x, 2.), (x, 1.)))(1.)),
    ("jvp_of_custom_jvp", lambda jax, jnp: jax.make_jaxpr(
        lambda x, y: jax.jvp(_sin_y_jvp(jax, jnp), (x, y), (x, y)))(1., 2.)),
    ("closure_num_consts", lambda jax, jnp: jax.make_jaxpr(_closing(jax, jnp))(3., 2.)),
    ("long_callee_hoisted", lambda jax, jnp: jax.make_jaxpr(_long(jax, jnp))(1.)),
    ("symbolic_zeros", lambda jax, jnp: jax.make_jaxpr(_symbolic(jax, jnp))(1., 2.)),
]


def _defjvps(jax, jnp):
  f = jax.custom_jvp(lambda x, y: x * y)
  f.defjvps(lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
  return f


def _symbolic(jax, jnp):
  def f(x, y):
    return x * y
  f = jax.custom_jvp(f)
  f.defjvp(lambda p, t: (f(*p), t[0]), symbolic_zeros=True)
  return f


@pytest.mark.oracle
@pytest.mark.parametrize("name,program", JAXPR_CASES, ids=[c[0] for c in JAXPR_CASES])
def test_printed_jaxprs_match_jax(real, name, program):
  assert str(program(_Purejax(), jnp)) == str(program(*real))


def _residual_types(jax):
  @jax.custom_vjp
  def f(x):
    return x * 2

  def fwd(x):
    return f(x), (x * 3, True, 3, 1.5, None)

  seen = []

  def bwd(res, g):
    seen.append([isinstance(r, (bool, int, float)) and not hasattr(r, "shape") for r in res[1:4]]
                + [type(r[1]) is bool for r in [res]] + [res[4] is None])
    assert res[2] == 3 and res[3] == 1.5 and res[1] is True
    return (g * res[0],)
  f.defvjp(fwd, bwd)
  grads = [float(jax.grad(f)(1.)), float(jax.jit(jax.grad(f))(1.))]
  return seen, grads


def test_python_scalar_residuals_reach_bwd_as_they_are():
  """A fwd's Python bool/int/float residuals reach bwd unchanged (not made
  arrays), eagerly and under jit, as in JAX (equinox keeps bools there)."""
  seen, grads = _residual_types(jax)
  assert grads == [3.0, 3.0]   # bwd says g * 3x
  assert seen == [[True, True, True, True, True]] * 2
  real = pytest.importorskip("jax")
  assert _residual_types(real) == (seen, grads)


def test_custom_derivatives_module_names_and_tangent_avals():
  from purejax import custom_derivatives as cd
  assert cd.custom_jvp_call_p.name == "custom_jvp_call"
  assert cd.custom_vjp_call_p.name == "custom_vjp_call"
  assert callable(cd.closure_convert) and callable(cd.custom_gradient)
  assert str(jax.typeof(jnp.ones(2, jnp.int32)).to_tangent_aval()) == "float0[2]"
  assert str(jax.typeof(1.0).to_tangent_aval()) == "~float32[]"


def _bwd_cotangent_kinds(jax):
  """What a symbolic_zeros bwd receives for outputs no cotangent reaches:
  inputs a, b of the identity, then b only through stop_gradient and a not
  at all."""
  seen = []

  @jax.custom_vjp
  def rec(x):
    return x

  def fwd(x):
    return jax.tree.map(lambda p: p.value, x), None

  def bwd(_, g):
    seen.append([type(t).__name__ for t in g])
    return (g,)
  rec.defvjp(fwd, bwd, symbolic_zeros=True)

  def f(xs):
    a, b, c, d = rec(xs)
    return c, d, jax.lax.stop_gradient(b), d
  _, vjp = jax.vjp(f, (1.0, 2.0, jax.numpy.array(3.0), jax.numpy.array(4.0)))
  vjp((1.0, 0.0, 1.0, 1.0))
  jax.grad(lambda xs: f(xs)[0])((1.0, 2.0, jax.numpy.array(3.0), jax.numpy.array(4.0)))
  return seen


def test_symbolic_zeros_bwd_sees_symbolic_zero_cotangents():
  """A custom_vjp with symbolic_zeros=True gets SymbolicZero (not an array
  of zeros) for the outputs no cotangent flows to, as in JAX (equinox's
  checkpointed while loop finds its fixed point of zero cotangents so)."""
  got = _bwd_cotangent_kinds(jax)
  assert got[0][:2] == ["SymbolicZero", "SymbolicZero"]
  assert got[1] == ["SymbolicZero", "SymbolicZero", "ArrayImpl", "SymbolicZero"]
  real = pytest.importorskip("jax")
  assert _bwd_cotangent_kinds(real) == got
