"""lax.while_loop, lax.fori_loop and the while primitive's rules."""
import re

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config

REVERSE_MODE_MSG = ("Reverse-mode differentiation does not work for lax.while_loop or "
                    "lax.fori_loop with dynamic start/stop values.")


def collatz_steps(n):
  steps = 0
  while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
  return steps


def jax_collatz(n):
  def body(c):
    n, steps = c
    n = lax.select(n % 2 == 0, n // 2, 3 * n + 1)
    return n, steps + 1
  return lax.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]


# -- values ----------------------------------------------------------------------

@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit], ids=["eager", "jit"])
def test_while_loop_matches_python(wrap):
  f = wrap(lambda x: lax.while_loop(lambda c: c < 100., lambda c: c * 3. + 1., x))
  for x0 in [0.5, 7., 200.]:
    x = x0
    while x < 100.:
      x = x * 3. + 1.
    assert float(f(x0)) == pytest.approx(x)
  for n in [1, 6, 27]:
    assert int(wrap(jax_collatz)(n)) == collatz_steps(n)


def test_while_loop_pytree_carry():
  init = {"i": 0, "acc": (jnp.zeros(3), 1.)}

  def body(c):
    return {"i": c["i"] + 1, "acc": (c["acc"][0] + c["i"], c["acc"][1] * 2.)}

  out = jax.jit(lambda c: lax.while_loop(lambda c: c["i"] < 4, body, c))(init)
  assert int(out["i"]) == 4
  np.testing.assert_allclose(out["acc"][0], np.full(3, 6.))
  assert float(out["acc"][1]) == 16.
  assert set(out) == {"i", "acc"} and isinstance(out["acc"], tuple)


def test_while_loop_dtypes_and_weak_types():
  out = lax.while_loop(lambda c: c < 3, lambda c: c + 1., 0)   # weak int promoted
  assert out.dtype == np.float32 and not out.weak_type and float(out) == 3.
  out = lax.while_loop(lambda c: c < 3, lambda c: 5., jnp.float32(0))
  assert out.dtype == np.float32 and out.weak_type
  out = lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0)
  assert out.dtype == np.int32 and out.weak_type and int(out) == 3


@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit], ids=["eager", "jit"])
def test_fori_loop_static_and_traced_bounds(wrap):
  body = lambda i, c: c * 2. + i
  expect = 1.
  for i in range(2, 7):
    expect = expect * 2. + i
  assert float(wrap(lambda x: lax.fori_loop(2, 7, body, x))(1.)) == expect
  assert float(wrap(lambda x, lo, hi: lax.fori_loop(lo, hi, body, x))(1., 2, 7)) == expect
  assert float(lax.fori_loop(5, 2, body, 1.)) == 1.       # empty range
  out = jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(10)
  assert int(out) == 45


def test_spec_iterator_examples(capsys):
  array = jnp.arange(10)
  print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))
  iterator = iter(range(10))
  print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))
  assert capsys.readouterr().out == "45\n0\n"


def test_nested_loops():
  def f(n):
    def outer(i, acc):
      return acc + lax.fori_loop(0, i, lambda j, a: a + j, 0)
    return lax.fori_loop(0, n, outer, 0)
  expect = sum(sum(range(i)) for i in range(6))
  assert int(f(6)) == expect
  assert int(jax.jit(f)(6)) == expect
  g = lambda x: lax.while_loop(
      lambda c: c[0] < 3,
      lambda c: (c[0] + 1, lax.while_loop(lambda d: d < c[1] * 2., lambda d: d + 1., c[1])),
      (0, x))
  assert float(g(1.)[1]) == float(jax.jit(g)(1.)[1]) == 8.


# -- errors ------------------------------------------------------------------------

def test_body_type_errors():
  with pytest.raises(TypeError, match="must have equal types") as e:
    lax.while_loop(lambda c: c[0] < 3, lambda s: (s[0] + 1, s[1].astype(jnp.int32)),
                   (0, jnp.float32(1.)))
  assert ("The input carry component s[1] has type float32[] but the corresponding "
          "output carry component has type int32[], so the dtypes do not match.") in str(e.value)
  with pytest.raises(TypeError, match="same pytree structure") as e:
    lax.while_loop(lambda c: c[0] < 3, lambda s: [s[0], s[1]], (0, 1))
  assert "so their Python types differ" in str(e.value)
  with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
    lax.while_loop(lambda c: c, lambda c: c + 1, 0)
  with pytest.raises(TypeError, match="should be callable"):
    lax.while_loop(5, lambda c: c, 0)
  with pytest.raises(TypeError, match="must have equal types, got float32 and int32"):
    lax.fori_loop(0., 3, lambda i, c: c, 0)


def test_reverse_mode_error_and_linearize():
  f = lambda x: lax.while_loop(lambda c: c < 3., lambda c: c * 2., x)
  with pytest.raises(ValueError, match=re.escape(REVERSE_MODE_MSG)):
    jax.grad(f)(1.)
  with pytest.raises(ValueError, match=re.escape(REVERSE_MODE_MSG)):
    jax.jit(jax.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2., x)))(1., 3)
  with pytest.raises(ValueError, match=re.escape(REVERSE_MODE_MSG)):
    jax.grad(jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2., x)))(1., 3)
  y, f_lin = jax.linearize(f, 1.)   # forward mode through partial eval works
  assert float(y) == 4. and float(f_lin(1.)) == 4.


# -- derivatives ------------------------------------------------------------------

def test_jvp_vs_finite_differences():
  with config.override("jax_enable_x64", True):
    def f(x, k):
      def body(c):
        i, a, b = c
        return i + 1, jnp.sin(a) * k + b, b * 1.1
      return lax.while_loop(lambda c: c[0] < 5, body, (0, x, k))[1]
    x, k, eps = 0.3, 0.7, 1e-6
    for wrap in [lambda g: g, jax.jit]:
      _, t = wrap(lambda x, k: jax.jvp(f, (x, k), (1., 0.5)))(x, k)
      fd = (f(x + eps, k + 0.5 * eps) - f(x - eps, k - 0.5 * eps)) / (2 * eps)
      assert float(t) == pytest.approx(float(fd), rel=1e-6)


def test_jvp_integer_and_unchanged_carries():
  f = lambda x: lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 2, c[1] + 1, c[2]),
                               (x, 0, 1.))
  primals, tangents = jax.jvp(f, (1.,), (1.,))
  assert [float(p) for p in primals] == [8., 3., 1.]
  assert float(tangents[0]) == 8. and float(tangents[2]) == 0.


def test_grad_fori_loop_static_bounds():
  f = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x)   # x**4
  assert float(f(2.)) == 16.
  assert float(jax.grad(f)(2.)) == 32.
  assert float(jax.jit(jax.grad(f))(2.)) == 32.


# -- batching ------------------------------------------------------------------------

def test_vmap_batched_carry_unbatched_predicate():
  f = lambda x: lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x), (0, 1.))
  steps, out = jax.vmap(f)(jnp.array([1., 2., 3.]))
  np.testing.assert_allclose(out, [1., 32., 243.])
  assert steps.shape == (3,) and list(np.asarray(steps)) == [5, 5, 5]


def test_vmap_batched_predicate():
  xs = np.array([1., 3., 20., 0.25], np.float32)
  out = jax.vmap(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x))(xs)
  expect = []
  for x in xs:
    while x < 10.:
      x = x * 2.
    expect.append(x)
  np.testing.assert_allclose(out, expect)
  ns = jnp.array([1, 6, 27, 7])
  np.testing.assert_array_equal(jax.vmap(jax_collatz)(ns),
                                [collatz_steps(int(n)) for n in ns])


def test_jit_vmap_fori_traced_bounds_and_in_axes():
  f = jax.jit(jax.vmap(lambda n, v: lax.fori_loop(0, n, lambda i, c: c + v, jnp.zeros(2)),
                       in_axes=(0, 1)))
  out = f(jnp.array([1, 3]), jnp.ones((2, 2)))
  np.testing.assert_allclose(out, [[1., 1.], [3., 3.]])
  nested = jax.vmap(jax.vmap(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x)))
  np.testing.assert_allclose(nested(jnp.array([[1., 3.], [20., 0.5]])), [[16., 12.], [20., 16.]])


def test_vmap_of_jvp_of_while():
  f = lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x)
  primals, tangents = jax.vmap(lambda x: jax.jvp(f, (x,), (1.,)))(jnp.array([1., 3.]))
  np.testing.assert_allclose(primals, [16., 12.])
  np.testing.assert_allclose(tangents, [16., 4.])


# -- against JAX -----------------------------------------------------------------------

def _drop_unused(text):
  # purejax doesn't yet print an equation's unused outputs as ``_``.
  return re.sub(r"\b_:", "X:", text)


@pytest.fixture(scope="module")
def oracle():
  jax_ = pytest.importorskip("jax")
  return jax_


def test_make_jaxpr_text_matches_jax(oracle):
  olax, ojnp = oracle.lax, oracle.numpy

  def make(jx, lx, np_):
    y = np_.ones(3)
    return [
        (lambda x: lx.while_loop(lambda c: c < 10., lambda c: c * 2., x), (1.,)),
        (lambda x: lx.while_loop(lambda c: c[0] < x, lambda c: (c[0] + 1., c[1] * y),
                                 (0., y)), (3.,)),
        (lambda: lx.while_loop(lambda c: c < 3, lambda c: c + 1., 0), ()),
    ]

  for (f, args), (g, _) in zip(make(jax, lax, jnp), make(oracle, olax, ojnp)):
    assert str(jax.make_jaxpr(f)(*args)) == str(oracle.make_jaxpr(g)(*args))
  fori = lambda lx: (lambda x, n: lx.fori_loop(0, n, lambda i, c: c + i, x))
  ours = str(jax.make_jaxpr(fori(lax))(1., 3))
  theirs = str(oracle.make_jaxpr(fori(olax))(1., 3))
  assert "while[" in ours
  assert ours == theirs


ERROR_CASES = [
    lambda lx, np_: lx.while_loop(lambda c: c < 3, lambda c: (c, c), 0),
    lambda lx, np_: lx.while_loop(lambda c: c['a'] < 3, lambda s: {'a': s['a'] + 1, 'b': (
        np_.ones(2, np_.int32), np_.ones(3))}, {'a': 0, 'b': (np_.ones(2), np_.ones(2))}),
    lambda lx, np_: lx.while_loop(lambda c: c[0] < 3, lambda *s: s, (0, 1)),
    lambda lx, np_: lx.while_loop(lambda c: c['a'] < 3, lambda c: {'b': c['a']}, {'a': 0}),
    lambda lx, np_: lx.while_loop(lambda c: c < 3, lambda c: None, 0),
    lambda lx, np_: lx.while_loop(lambda c: c < 3, lambda c: np_.ones(2, np_.int32), 0.),
    lambda lx, np_: lx.while_loop(lambda c: np_.array([True, False]), lambda c: c + 1, 0),
    lambda lx, np_: lx.while_loop(lambda c: (c < 3, c < 3), lambda c: c + 1, 0),
    lambda lx, np_: lx.while_loop(lambda c: c[0] < 3, lambda c: (
        c[0].astype(np_.int16), c[1].astype(np_.int16)), (1, np_.float32(1))),
    lambda lx, np_: lx.fori_loop(np_.int16(0), np_.int32(3), lambda i, c: c, 0.),
    lambda lx, np_: lx.fori_loop(0, 3, 5, 0),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors_match_jax(oracle, case):
  def message(lx, np_):
    with pytest.raises(Exception) as e:
      ERROR_CASES[case](lx, np_)
    return type(e.value), str(e.value).replace("purejax._src.core.", "").replace(
        "jax._src.core.", "")
  assert message(lax, jnp) == message(oracle.lax, oracle.numpy)


def test_values_match_jax(oracle):
  def run(jx, lx, np_):
    xs = np_.array([1., 3., 20.])
    return [
        jx.vmap(lambda x: lx.while_loop(lambda c: c < 10., lambda c: c * 2., x))(xs),
        jx.jvp(lambda x: lx.while_loop(lambda c: c < 10., lambda c: np_.sin(c) + c * 1.5 + .1,
                                       x), (1.,), (1.,))[1],
        jx.grad(lambda x: lx.fori_loop(1, 4, lambda i, c: c * np_.cos(x * i), x))(0.3),
        lx.fori_loop(0, 5, lambda i, c: c + i, 0.5),
    ]
  for a, b in zip(run(jax, lax, jnp), run(oracle, oracle.lax, oracle.numpy)):
    assert a.dtype == b.dtype and a.weak_type == b.weak_type
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5)
