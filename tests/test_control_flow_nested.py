"""Control flow nested in control flow: scan inside cond inside while_loop,
against plain Python, eagerly, under jit, vmap and jvp."""
import numpy as np

import purejax as jax
import purejax.numpy as jnp
from purejax import lax


def nested(x):
  def scan_body(c, xi):
    return c * 0.5 + xi, c

  def branch_scan(v):
    c, ys = lax.scan(scan_body, v[0], v)
    return v + c + ys.sum()

  def loop_body(state):
    i, v = state
    v = lax.cond(i % 2 == 0, branch_scan, lambda v: v * 1.5, v)
    return i + 1, v

  _, v = lax.while_loop(lambda s: s[0] < 3, loop_body, (0, x))
  return v


def nested_reference(x):
  v = np.array(x, np.float64)
  for i in range(3):
    if i % 2 == 0:
      c, ys = v[0], []
      for xi in v:
        ys.append(c)
        c = c * 0.5 + xi
      v = v + c + sum(ys)
    else:
      v = v * 1.5
  return v


def test_nested_eager_and_jit():
  x = jnp.array([0.5, -1.0, 2.0])
  np.testing.assert_allclose(nested(x), nested_reference(x), rtol=1e-5)
  np.testing.assert_allclose(jax.jit(nested)(x), nested_reference(x), rtol=1e-5)
  text = str(jax.make_jaxpr(nested)(x))
  assert "while[" in text and "cond[" in text and "scan[" in text


def test_nested_vmap():
  xs = np.random.RandomState(0).randn(4, 3).astype(np.float32)
  out = jax.vmap(nested)(xs)
  np.testing.assert_allclose(out, np.stack([nested_reference(x) for x in xs]), rtol=1e-5)


def test_nested_jvp_matches_finite_differences():
  x = jnp.array([0.5, -1.0, 2.0])
  v = jnp.array([1.0, 0.5, -0.25])
  _, t = jax.jvp(nested, (x,), (v,))
  eps = 1e-3
  fd = (nested_reference(np.asarray(x) + eps * np.asarray(v))
        - nested_reference(np.asarray(x) - eps * np.asarray(v))) / (2 * eps)
  np.testing.assert_allclose(t, fd, rtol=1e-3, atol=1e-3)


def test_grad_through_scan_inside_cond_inside_fori_loop():
  def f(x):
    def body(i, v):
      return lax.cond(i < 2, lambda v: lax.scan(lambda c, xi: (c + xi * v[0], c), 0.0, v)[0]
                      * jnp.ones(3) + v, lambda v: v * v, v)
    return lax.fori_loop(0, 3, body, x).sum()

  def reference(x):
    v = np.array(x, np.float64)
    for i in range(3):
      v = (sum(xi * v[0] for xi in v) + v) if i < 2 else v * v
    return v.sum()

  x = np.array([0.3, -0.2, 0.1])
  g = jax.grad(f)(jnp.asarray(x, np.float32))
  eps = 1e-4
  fd = [(reference(x + eps * e) - reference(x - eps * e)) / (2 * eps) for e in np.eye(3)]
  np.testing.assert_allclose(g, fd, rtol=1e-3, atol=1e-3)
