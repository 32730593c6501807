"""checkify: user checks and automatic NaN / division / index checks, under
jit, grad, vmap and lax control flow, compared with real JAX (the oracle)."""
import numpy as np
import pytest

import purejax
import purejax.numpy as pjnp
from purejax import lax as plax
from purejax.experimental import checkify as pcheckify

from conftest import oracle


def _modules(real):
  if real:
    jax = oracle()
    import jax.numpy as jnp
    from jax import lax
    from jax.experimental import checkify
    return jax, jnp, lax, checkify
  return purejax, pjnp, plax, pcheckify


def _positive(jnp, checkify):
  def f(x):
    checkify.check(x > 0, "x must be positive, got {x}", x=x)
    return jnp.sin(x)
  return f


def _scan_prog(jax, jnp, lax, ck):
  def body(c, xi):
    ck.check(xi < 5, "too big {}", xi)
    return c + xi, c
  return ck.checkify(lambda x: lax.scan(body, 0., x))(jnp.arange(8.))


def _while_prog(jax, jnp, lax, ck, n):
  def body(c):
    ck.check(c < 5, "c too big {}", c)
    return c + 1
  return ck.checkify(lambda x: lax.while_loop(lambda c: c < x, body, 0))(jnp.int32(n))


def _cond_prog(jax, jnp, lax, ck, p):
  def c(p, x):
    return lax.cond(p, lambda x: (ck.check(x > 0, "neg {}", x), x)[1], jnp.log, x)
  return ck.checkify(c, errors=ck.all_checks)(p, jnp.float32(-1.))


def _fori_prog(jax, jnp, lax, ck):
  return ck.checkify(lambda x: lax.fori_loop(
      0, 4, lambda i, a: (ck.check(i < 2, "i={i}", i=i), a + i)[1], x))(jnp.int32(1))


def _vjp_positive(jax, jnp, ck):
  f = jax.custom_vjp(_positive(jnp, ck))
  f.defvjp(lambda x: (f(x), x), lambda r, g: (g * jnp.cos(r),))
  return f


def _debug_positive(ck):
  def f(x):
    ck.debug_check(x > 0, "x must be positive, got {x}", x=x)
    return x * 2
  return f


PROGRAMS = {
    "eager_fail": lambda jax, jnp, lax, ck: ck.checkify(_positive(jnp, ck))(jnp.float32(-1.)),
    "eager_pass": lambda jax, jnp, lax, ck: ck.checkify(_positive(jnp, ck))(jnp.float32(1.)),
    "jit_outside": lambda jax, jnp, lax, ck: jax.jit(ck.checkify(_positive(jnp, ck)))(
        jnp.float32(-2.)),
    "jit_inside": lambda jax, jnp, lax, ck: ck.checkify(jax.jit(_positive(jnp, ck)))(
        jnp.float32(-2.)),
    "vmap_of_checkify": lambda jax, jnp, lax, ck: jax.vmap(ck.checkify(_positive(jnp, ck)))(
        jnp.array([1., -1., -3.])),
    "checkify_of_vmap": lambda jax, jnp, lax, ck: ck.checkify(jax.vmap(_positive(jnp, ck)))(
        jnp.array([1., -3., -1.])),
    "checkify_of_vmap_vmap": lambda jax, jnp, lax, ck: ck.checkify(
        jax.vmap(jax.vmap(_positive(jnp, ck))))(jnp.array([[1., -3.], [-1., 2.]])),
    "checkify_of_grad": lambda jax, jnp, lax, ck: ck.checkify(jax.grad(_positive(jnp, ck)))(
        jnp.float32(-1.)),
    "two_checks": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x: (ck.check(x > 0, "x {} {}", x, x * 2), ck.check(x > -5, "second"), x)[2])(
        jnp.float32(-10.)),
    "array_payload": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x: (ck.check(jnp.all(x > 0), "arr {}", x), x)[1])(jnp.array([1., -2.])),
    "scan": _scan_prog,
    "jit_scan": lambda jax, jnp, lax, ck: jax.jit(lambda: _scan_prog(jax, jnp, lax, ck))(),
    "while_fail": lambda jax, jnp, lax, ck: _while_prog(jax, jnp, lax, ck, 10),
    "while_pass": lambda jax, jnp, lax, ck: _while_prog(jax, jnp, lax, ck, 3),
    "cond_true": lambda jax, jnp, lax, ck: _cond_prog(jax, jnp, lax, ck, True),
    "cond_false": lambda jax, jnp, lax, ck: _cond_prog(jax, jnp, lax, ck, False),
    "fori": _fori_prog,
    "nan_log": lambda jax, jnp, lax, ck: ck.checkify(jnp.log, errors=ck.nan_checks)(
        jnp.float32(-1.)),
    "nan_jit_sin": lambda jax, jnp, lax, ck: ck.checkify(jax.jit(jnp.sin), errors=ck.nan_checks)(
        jnp.float32(jnp.inf)),
    "nan_dot": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x: jnp.dot(x, x), errors=ck.nan_checks)(jnp.array([jnp.inf, 0.])),
    "nan_not_on_move": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x: jnp.maximum(-x.reshape(1), 1.), errors=ck.nan_checks)(jnp.float32(jnp.nan)),
    "div_int": lambda jax, jnp, lax, ck: ck.checkify(lambda x, i: x // i, errors=ck.div_checks)(
        jnp.int32(3), jnp.int32(0)),
    "div_float_zero_by_zero": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x / i, errors=ck.all_checks)(jnp.float32(0), jnp.float32(0)),
    "rem_not_checked": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x % i, errors=ck.div_checks)(jnp.int32(3), jnp.int32(0)),
    "oob_gather": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(3.), jnp.int32(5)),
    "oob_gather_2d": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x[1, i], errors=ck.index_checks)(jnp.ones((3, 4)), jnp.int32(9)),
    "oob_negative": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.ones((3, 4)), jnp.int32(-9)),
    "oob_index_array": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.ones((3, 4)), jnp.array([[1], [7]])),
    "oob_dynamic_slice": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: lax.dynamic_slice(x, (i,), (2,)), errors=ck.index_checks)(
        jnp.arange(3.), jnp.int32(5)),
    "oob_scatter": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x.at[i].add(1.), errors=ck.index_checks)(jnp.ones((3, 4)),
                                                              jnp.array([0, 5])),
    "oob_in_bounds": lambda jax, jnp, lax, ck: ck.checkify(
        lambda x, i: x[i], errors=ck.index_checks)(jnp.arange(3.), jnp.int32(2)),
    # values are formatted as Arrays (a dict shows their repr), key arrays too
    "dict_payload": lambda jax, jnp, lax, ck: jax.jit(ck.checkify(
        lambda x: (ck.check(x[0] > 0, "got {d}", d={"a": x[0], "b": x}), x)[1]))(
        jnp.array([-1., 2.])),
    "key_payload": lambda jax, jnp, lax, ck: jax.jit(ck.checkify(
        lambda k, j: (ck.check(jnp.all(k == j), "{} != {}", k, j), jnp.zeros(()))[1]))(
        jax.random.split(jax.random.key(1)), jax.random.split(jax.random.key(2))),
    # checkpoint and custom_vjp bodies are checked (a custom_vjp's fwd is not)
    "checkpoint": lambda jax, jnp, lax, ck: ck.checkify(jax.checkpoint(_positive(jnp, ck)))(
        jnp.float32(-1.)),
    "grad_of_checkpoint": lambda jax, jnp, lax, ck: ck.checkify(
        jax.grad(jax.checkpoint(_positive(jnp, ck))))(jnp.float32(-1.)),
    "custom_vjp": lambda jax, jnp, lax, ck: jax.jit(ck.checkify(_vjp_positive(jax, jnp, ck)))(
        jnp.float32(-1.)),
    "grad_of_custom_vjp": lambda jax, jnp, lax, ck: ck.checkify(
        jax.grad(_vjp_positive(jax, jnp, ck)))(jnp.float32(-1.)),
    "vmap_of_custom_vjp": lambda jax, jnp, lax, ck: jax.vmap(ck.checkify(
        _vjp_positive(jax, jnp, ck)))(jnp.array([-1., 2.])),
    # each device checks its block: the error is mapped over the devices
    "checkify_of_pmap": lambda jax, jnp, lax, ck: ck.checkify(jax.pmap(
        lambda x: (ck.check(x > 0, "neg {x}", x=x), lax.psum(x, "i"))[1], axis_name="i"))(
        jnp.array([-2.])),
    "jit_checkify_of_pmap_nan": lambda jax, jnp, lax, ck: jax.jit(ck.checkify(
        jax.pmap(jnp.log), errors=ck.float_checks))(jnp.array([-2.])),
    # debug_check: a check under checkify, nothing anywhere else
    "debug_check": lambda jax, jnp, lax, ck: ck.checkify(_debug_positive(ck))(jnp.float32(-1.)),
    "debug_check_jit_inside": lambda jax, jnp, lax, ck: ck.checkify(jax.jit(
        _debug_positive(ck)))(jnp.float32(-1.)),
    "debug_check_of_vmap_grad": lambda jax, jnp, lax, ck: ck.checkify(jax.vmap(jax.grad(
        _debug_positive(ck))))(jnp.array([1., -3., -1.])),
    "debug_check_in_scan": lambda jax, jnp, lax, ck: ck.checkify(jax.jit(lambda xs: lax.scan(
        lambda c, x: (c + _debug_positive(ck)(x), x), 0., xs)))(jnp.array([1., -3.])),
    "init_error": lambda jax, jnp, lax, ck: (ck.init_error, jnp.zeros(())),
}


def _thrown(err):
  try:
    err.throw()
  except Exception as e:   # noqa: BLE001 (the class is compared by name)
    return type(e).__name__, str(e)
  return None


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_checkify_matches_jax(name):
  real = _modules(True)
  want_err, want_out = PROGRAMS[name](*real)
  got_err, got_out = PROGRAMS[name](*_modules(False))
  assert got_err.get() == want_err.get()
  assert type(got_err.get_exception()).__name__ == type(want_err.get_exception()).__name__
  assert _thrown(got_err) == _thrown(want_err)
  want_leaves = real[0].tree.leaves(want_out)
  got_leaves = purejax.tree.leaves(got_out)
  assert len(got_leaves) == len(want_leaves)
  for g, w in zip(got_leaves, want_leaves):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_error_methods_and_types():
  ck = pcheckify
  err, _ = ck.checkify(_positive(pjnp, ck))(pjnp.float32(-1.))
  assert str(err) == "Error(x must be positive, got -1.0 (`check` failed))"
  with pytest.raises(ck.JaxRuntimeError, match=r"got -1.0 \(`check` failed\)"):
    err.throw()
  assert isinstance(err.get_exception(), ck.FailedCheckError)
  assert issubclass(ck.JaxRuntimeError, ValueError)
  ok, _ = ck.checkify(_positive(pjnp, ck))(pjnp.float32(1.))
  ok.throw()
  assert ok.get() is None and ok.get_exception() is None
  assert ck.all_checks == ck.user_checks | ck.nan_checks | ck.index_checks | ck.div_checks
  assert ck.float_checks == ck.nan_checks | ck.div_checks
  with pytest.raises(ck.JaxRuntimeError, match="got -1.0"):
    ck.check_error(err)


def test_check_outside_checkify_raises_as_jax():
  ck = pcheckify
  f = _positive(pjnp, ck)
  with pytest.raises(ck.JaxRuntimeError, match=r"^x must be positive, got -1.0 \(`check` failed\)$"):
    f(pjnp.float32(-1.))
  f(pjnp.float32(1.))
  with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check which was "
                     "not functionalized. This probably means you tried to stage"):
    purejax.jit(f)(pjnp.float32(-1.))
  with pytest.raises(TypeError, match=r"^Formatting arguments to checkify.check need to be "
                     r"PyTrees of arrays, but got -1.0 of type <class 'float'>.$"):
    ck.check(True, "a {}", -1.0)
  with pytest.raises(ck.JaxRuntimeError, match="got -2.0"):
    purejax.vmap(f)(pjnp.array([1., -2.]))


def test_checkify_grad_of_output():
  ck = pcheckify
  g = purejax.grad(lambda x: ck.checkify(_positive(pjnp, ck))(x)[1])(-1.)
  np.testing.assert_allclose(g, np.cos(-1.), rtol=1e-6)


CHEX_PROGRAM = '''
import purejax
purejax.install_as_jax()
import jax, jax.numpy as jnp, chex

def g(x):
  chex.assert_tree_all_finite(x)
  return x * 2

f = chex.chexify(jax.jit(g), async_check=False)

assert list(f(jnp.array([1.0, 2.0]))) == [2.0, 4.0]
try:
  f(jnp.array([1.0, jnp.inf]))
except AssertionError as e:
  assert "assert_tree_all_finite" in str(e), e
  print("OK")
'''


def test_chex_chexify_inside_jit():
  import importlib.util, os, subprocess, sys
  if importlib.util.find_spec("chex") is None:
    if os.environ.get("CI"):
      pytest.fail("chex is not installed: CI installs the `ecosystem` extra")
    pytest.skip("chex is not installed (the `ecosystem` extra)")
  repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  env = dict(os.environ, PYTHONPATH=os.pathsep.join([repo, os.environ.get("PYTHONPATH", "")]))
  done = subprocess.run([sys.executable, "-c", CHEX_PROGRAM], env=env, capture_output=True,
                        text=True, timeout=600)
  assert done.returncode == 0 and "OK" in done.stdout, done.stderr[-3000:]


@pytest.mark.parametrize("start", [0, 3, 200])
def test_checks_in_a_while_loops_cond_as_jax(start):
  """The cond's checks run on the first carry and on every carry after it."""
  real = oracle()
  from jax.experimental import checkify as rcheckify

  def make(m, ck):
    def f(x):
      def cond(c):
        ck.check(c[0] < 100, "cond saw {c}", c=c[0])
        ck.check(c[0] != 4, "four {c}", c=c[0])
        return c[0] < 5
      return m.lax.while_loop(cond, lambda c: (c[0] + 1, c[1] * 2), (x, 1.0))
    return f

  for jit in (False, True):
    got = pcheckify.checkify(make(purejax, pcheckify))
    want = rcheckify.checkify(make(real, rcheckify))
    if jit:
      got, want = purejax.jit(got), real.jit(want)
    (ge, go), (we, wo) = got(start), want(start)
    assert ge.get() == we.get()
    np.testing.assert_array_equal(np.asarray(go[1]), np.asarray(wo[1]))


@pytest.mark.parametrize("x", [-1.0, 0.5])
def test_checks_in_a_custom_jvp_function_as_jax(x):
  """The function's checks are checked, under grad too; its rule gives the gradient."""
  real = oracle()
  from jax.experimental import checkify as rcheckify

  def make(m, ck):
    @m.custom_jvp
    def g(x):
      ck.check(x > 0, "negative {x}", x=x)
      return m.numpy.sin(x)
    g.defjvp(lambda p, t: (g(p[0]), 3.0 * t[0]))   # not sin's derivative: the rule is used
    return g

  g, rg = make(purejax, pcheckify), make(real, rcheckify)
  cases = [(lambda m, ck, g: ck.checkify(g)),
           (lambda m, ck, g: ck.checkify(m.grad(g))),
           (lambda m, ck, g: ck.checkify(m.jit(m.grad(g)))),
           (lambda m, ck, g: m.jit(ck.checkify(g)))]
  for case in cases:
    (ge, go), (we, wo) = case(purejax, pcheckify, g)(x), case(real, rcheckify, rg)(x)
    assert ge.get() == we.get()
    np.testing.assert_allclose(np.asarray(go), np.asarray(wo), rtol=1e-6)
  if x < 0:
    return   # JAX raises here, from the failing check the rule's g(x) makes eagerly
  got = purejax.grad(lambda x: pcheckify.checkify(g)(x)[1])(x)
  want = real.grad(lambda x: rcheckify.checkify(rg)(x)[1])(x)
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_checkify_of_pmap_over_four_devices(cpu_devices):
  """Each device checks its own block: the error is mapped over the devices
  (messages as JAX gives them with 4 CPU devices); throw() raises the last
  failing device's; a check outside the pmap counts at every device."""
  cpu_devices(4)
  def f(x):
    pcheckify.check(x > 0, "x must be positive, got {x}", x=x)
    return plax.psum(x, "i")
  g = pcheckify.checkify(purejax.pmap(f, axis_name="i"))
  err, out = g(pjnp.array([1., -2., 3., -4.]))
  assert err.get() == ("at mapped index 1: x must be positive, got -2.0 (`check` failed)\n"
                       "at mapped index 3: x must be positive, got -4.0 (`check` failed)")
  np.testing.assert_array_equal(out, [-2.] * 4)
  with pytest.raises(pcheckify.JaxRuntimeError, match=r"^x must be positive, got -4.0"):
    err.throw()
  err, _ = purejax.jit(g)(pjnp.array([1., 2., 3., 4.]))
  assert err.get() is None

  def outer(x):
    pcheckify.check(x[0] > 0, "first {x}", x=x[0])
    return purejax.pmap(lambda v: (pcheckify.check(v > 0, "pm {v}", v=v), v)[1])(x)
  err, _ = pcheckify.checkify(outer)(pjnp.array([-1., -2., 3., 5.]))
  assert err.get().splitlines() == [f"at mapped index {i}: first -1.0 (`check` failed)"
                                    for i in range(4)]
  err, _ = pcheckify.checkify(outer)(pjnp.array([1., 2., 3., -5.]))
  assert err.get() == "at mapped index 3: pm -5.0 (`check` failed)"


def _grad_of_checkified_custom_vjp(jax, jnp, lax, ck):
  f = _vjp_positive(jax, jnp, ck)   # its fwd calls f itself, check included
  g = jax.grad(lambda x: ck.checkify(f)(x)[1])
  out = [float(g(1.))]
  try:
    g(-1.)
  except Exception as e:   # noqa: BLE001 (the class is compared by name)
    out.append((type(e).__name__, str(e)))
  return out


def test_grad_of_checkify_of_custom_vjp_as_jax():
  """Differentiated, a custom_vjp function's fwd is not checkified (as in
  JAX): run eagerly, its check passes or raises."""
  got = _grad_of_checkified_custom_vjp(*_modules(False))
  assert got[0] == pytest.approx(np.cos(1.), rel=1e-6)
  assert got[1] == ("JaxRuntimeError", "x must be positive, got -1.0 (`check` failed)")
  assert got == _grad_of_checkified_custom_vjp(*_modules(True))


def test_debug_check_does_nothing_outside_checkify():
  """Eagerly and under jit a debug_check neither raises nor costs a host step
  (the compiled scan stays one C loop); the jaxpr keeps it, as JAX's does."""
  f = _debug_positive(pcheckify)
  assert float(f(pjnp.float32(-1.))) == -2.0
  scan = purejax.jit(lambda xs: plax.scan(lambda c, x: (c + f(x), x), 0., xs))
  np.testing.assert_array_equal(scan(pjnp.array([1., -3.]))[0], -4.0)
  assert "check[debug=True" in str(purejax.make_jaxpr(scan)(pjnp.array([1., -3.])))
  text = scan.lower(pjnp.array([1., -3.])).compile().as_text()
  assert "host steps (NumPy between compiled kernels): none" in text
  with pytest.raises(TypeError, match="PyTrees of arrays"):
    pcheckify.debug_check(True, "a {}", -1.0)
