"""Products moved out of scan loops by the C backend (backends/cpu/scan_products.py):
a per-step input times a constant computed for all steps before the loop, a
weight gradient accumulated as a running sum of outer products computed after
it as one product over the steps.  The rewritten programs give float64
NumPy's values and JAX's (when installed) to float32 rounding, whatever is
moved, and the rewrite leaves alone what it must not touch."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import fusion, scan_products, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

RNG = np.random.default_rng(5)


def outer(a, b):
  """A product without contracted axes, as JAX's transposes of products make."""
  return lax.dot_general(a, b, (((), ()), ((), ())))


def _normal(*shape, scale=1.0, dtype=np.float32):
  return (scale * RNG.standard_normal(shape)).astype(dtype)


def compiled(f, *args):
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    return jax.jit(f)(*args)


def scans_in(jaxpr):
  """The scan equations of ``jaxpr`` after the rewrite, with their bodies'
  primitive names."""
  out = scan_products.rewrite(fusion.inline_calls(jaxpr))
  return out, [(e, [b.primitive.name for b in fusion.inline_calls(e.params["jaxpr"].jaxpr).eqns])
               for e in out.eqns if e.primitive.name == "scan"]


def rnn_loss(params, xs):
  w, u, b = params

  def cell(h, x):
    h = jnp.tanh(h @ w + x @ u + b)
    return h, h

  _, hs = lax.scan(cell, jnp.zeros((xs.shape[1], w.shape[0]), w.dtype), xs)
  return jnp.mean(hs * hs)


def rnn_reference(params, xs):
  """Loss and gradients of rnn_loss in float64, backpropagated by hand."""
  w, u, b = (p.astype(np.float64) for p in params)
  xs = xs.astype(np.float64)
  h = np.zeros((xs.shape[1], w.shape[0]))
  hs, prev = [], []
  for x in xs:
    prev.append(h)
    h = np.tanh(h @ w + x @ u + b)
    hs.append(h)
  hs = np.stack(hs)
  loss = np.mean(hs * hs)
  dw, du, db = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
  dh = np.zeros_like(h)
  for t in reversed(range(len(xs))):
    g = (dh + 2 * hs[t] / hs.size) * (1 - hs[t] ** 2)
    dw += prev[t].T @ g
    du += xs[t].T @ g
    db += g.sum(0)
    dh = g @ w.T
  return loss, (dw, du, db)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rnn_gradient_matches_float64(dtype):
  with config.override("jax_enable_x64", dtype == np.float64):
    n, batch, steps = 24, 3, 40
    params = (_normal(n, n, scale=0.3, dtype=dtype), _normal(n, n, scale=0.3, dtype=dtype),
              _normal(n, scale=0.1, dtype=dtype))
    xs = _normal(steps, batch, n, dtype=dtype)
    loss, grads = compiled(jax.value_and_grad(rnn_loss), params, xs)
    want_loss, want = rnn_reference(params, xs)
    tol = 2e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(float(loss), want_loss, rtol=tol)
    for g, w in zip(grads, want):
      assert g.dtype == dtype
      np.testing.assert_allclose(np.asarray(g), w, rtol=tol * 10, atol=tol)


def test_rnn_gradient_scans_are_rewritten():
  n, steps = 16, 30
  params = (_normal(n, n), _normal(n, n), _normal(n))
  xs = _normal(steps, 3, n)
  jaxpr = jax.make_jaxpr(jax.value_and_grad(rnn_loss))(params, xs).jaxpr
  _, scans = scans_in(jaxpr)
  forward, backward = scans
  # forward: x @ u left the loop, h @ w (of the carry) stayed
  assert forward[1].count("dot_general") == 1
  # backward: the two weight gradients leave the loop, the product with w stays
  assert backward[1].count("dot_general") == 1
  assert backward[0].params["num_carry"] == jaxpr_num_carry(jaxpr, reverse=True) - 2


def jaxpr_num_carry(jaxpr, reverse):
  return next(e.params["num_carry"] for e in fusion.inline_calls(jaxpr).eqns
              if e.primitive.name == "scan" and e.params["reverse"] == reverse)


def test_rnn_gradient_matches_jax():
  real = pytest.importorskip("jax")
  n, batch, steps = 32, 4, 100
  params = (_normal(n, n, scale=0.2), _normal(n, n, scale=0.2), _normal(n, scale=0.1))
  xs = _normal(steps, batch, n)
  loss, grads = compiled(jax.value_and_grad(rnn_loss), params, xs)

  def real_loss(params, xs):
    w, u, b = params
    cell = lambda h, x: (real.numpy.tanh(h @ w + x @ u + b),) * 2
    _, hs = real.lax.scan(cell, real.numpy.zeros((batch, n), np.float32), xs)
    return real.numpy.mean(hs * hs)

  want_loss, want = real.jit(real.value_and_grad(real_loss))(params, xs)
  np.testing.assert_allclose(float(loss), float(want_loss), rtol=1e-5)
  for g, w in zip(grads, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)


def test_product_with_the_input_on_the_right_and_reverse_scan():
  """``w @ x_t`` (the steps on the right operand's free side), reversed."""
  w = _normal(5, 7)
  xs = _normal(9, 7, 3)

  def f(w, xs):
    return lax.scan(lambda c, x: (c + (w @ x).sum(), w @ x), jnp.float32(0), xs, reverse=True)

  (total, ys) = compiled(f, w, xs)
  want = np.einsum("ij,tjk->tik", w.astype(np.float64), xs)
  np.testing.assert_allclose(np.asarray(ys), want, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(float(total), want.sum(), rtol=1e-4)
  _, scans = scans_in(jax.make_jaxpr(f)(w, xs).jaxpr)
  assert "dot_general" not in scans[0][1]


def test_accumulations_of_carry_and_input_outer_products():
  """c1 += outer(h, x_t) with h a carry, c2 += outer(x_t, h)^T; c3's sum unused."""
  xs = _normal(12, 4)
  w = _normal(4, 4, scale=0.5)

  def f(xs):
    def body(carry, x):
      h, c1, c2, c3 = carry
      c1 = c1 + outer(h, x)
      c2 = c2 + outer(x, h).T
      c3 = c3 + outer(x, x)
      return (jnp.tanh(h @ w + x), c1, c2, c3), None
    zeros = jnp.zeros((4, 4), jnp.float32)
    (h, c1, c2, _), _ = lax.scan(body, (jnp.ones(4, jnp.float32), zeros, zeros + 1, zeros), xs)
    return h, c1, c2

  h, c1, c2 = compiled(f, xs)
  hh = np.ones(4)
  want1, want2 = np.zeros((4, 4)), np.ones((4, 4))
  for x in xs.astype(np.float64):
    want1 += np.outer(hh, x)
    want2 += np.outer(x, hh).T
    hh = np.tanh(hh @ w + x)
  np.testing.assert_allclose(np.asarray(h), hh, rtol=1e-5)
  np.testing.assert_allclose(np.asarray(c1), want1, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(c2), want2, rtol=1e-5, atol=1e-5)
  _, scans = scans_in(jax.make_jaxpr(f)(xs).jaxpr)
  assert scans[0][0].params["num_carry"] == 1   # only h is left in the loop


def test_left_alone():
  """Integers, a carry read by something else, a single step, nested scans
  (rewritten inside), a const-only product, and stacks over the size cap."""
  xs = _normal(6, 3)
  ints = RNG.integers(-5, 5, (6, 3)).astype(np.int32)
  m = RNG.integers(-5, 5, (3, 3)).astype(np.int32)

  def int_loop(m, xs):
    return lax.scan(lambda c, x: (c + outer(x, x), x @ m), jnp.zeros((3, 3), jnp.int32), xs)

  c, ys = compiled(int_loop, m, ints)
  np.testing.assert_array_equal(np.asarray(c), np.einsum("ti,tj->ij", ints, ints))
  np.testing.assert_array_equal(np.asarray(ys), ints @ m)
  _, scans = scans_in(jax.make_jaxpr(int_loop)(m, ints).jaxpr)
  assert scans[0][1].count("dot_general") == 2

  def read_carry(xs):   # the accumulator is read by the step's output too
    return lax.scan(lambda c, x: (c + outer(x, x), c.sum()), jnp.zeros((3, 3)), xs)

  c, ys = compiled(read_carry, xs)
  products = np.einsum("ti,tj->tij", xs, xs).astype(np.float64)
  np.testing.assert_allclose(np.asarray(ys),
                             np.concatenate([[0], np.cumsum(products.sum((1, 2)))[:-1]]),
                             rtol=1e-5, atol=1e-5)
  _, scans = scans_in(jax.make_jaxpr(read_carry)(xs).jaxpr)
  assert scans[0][0].params["num_carry"] == 1

  def nested(xs):
    inner = lambda c, x: (c + outer(x, x), None)
    return lax.scan(lambda c, x: (lax.scan(inner, c, xs)[0] + x[0], None),
                    jnp.zeros((3, 3)), xs)[0]

  np.testing.assert_allclose(np.asarray(compiled(nested, xs)),
                             6 * np.einsum("ti,tj->ij", xs, xs, dtype=np.float64)
                             + xs[:, 0].sum(), rtol=1e-4)

  def one_step(xs):
    return lax.scan(lambda c, x: (c + outer(x, x), None), jnp.zeros((3, 3)), xs[:1])[0]

  _, scans = scans_in(jax.make_jaxpr(one_step)(xs).jaxpr)
  assert "dot_general" in scans[0][1]


def test_size_cap(monkeypatch):
  monkeypatch.setattr(scan_products, "MAX_STACKED_BYTES", 64)
  n, steps = 8, 20
  params = (_normal(n, n, scale=0.3), _normal(n, n, scale=0.3), _normal(n))
  xs = _normal(steps, 2, n)
  jaxpr = jax.make_jaxpr(jax.value_and_grad(rnn_loss))(params, xs).jaxpr
  out, _ = scans_in(jaxpr)
  assert out is fusion.inline_calls(jaxpr) or [e.primitive.name for e in out.eqns] == [
      e.primitive.name for e in fusion.inline_calls(jaxpr).eqns]
  loss, grads = compiled(jax.value_and_grad(rnn_loss), params, xs)
  want_loss, want = rnn_reference(params, xs)
  np.testing.assert_allclose(float(loss), want_loss, rtol=2e-5)
  for g, w in zip(grads, want):
    np.testing.assert_allclose(np.asarray(g), w, rtol=2e-4, atol=2e-5)
