"""Scan carries updated in place (a body kernel reading the carry only at
the elements it writes, such as gradient sums): the same values as NumPy
in float64, the same bits for any thread count, and carries that must not
be overwritten early (read transposed, shifted, by another step, or also
returned) still computed from their old values."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.config import config


def _run(f, *args, threads=None):
  with config.override("purejax_compile_sync", True):
    if threads is None:
      return jax.jit(f)(*args)
    with config.override("purejax_num_threads", threads):
      return jax.jit(f)(*args)


def _source(f, *args):
  return jax.jit(f).lower(*args).compile().as_text()


def _accumulate(xs, w, reverse=False):
  def body(c, x):
    acc, total, g = c
    h = jnp.tanh(x @ w + g)
    return (acc + jnp.outer(x, h), total + h, h), h.sum()
  n = xs.shape[1]
  init = (jnp.zeros((n, n), jnp.float32), jnp.zeros(n, jnp.float32), jnp.zeros(n, jnp.float32))
  return jax.lax.scan(body, init, xs, reverse=reverse)


def _accumulate_numpy(xs, w, reverse=False):
  xs, w = xs.astype(np.float64), w.astype(np.float64)
  n = xs.shape[1]
  acc, total, g, ys = np.zeros((n, n)), np.zeros(n), np.zeros(n), []
  for x in (xs[::-1] if reverse else xs):
    h = np.tanh(x @ w + g)
    acc, total, g = acc + np.outer(x, h), total + h, h
    ys.append(h.sum())
  return (acc, total, g), np.array(ys[::-1] if reverse else ys)


@pytest.mark.parametrize("reverse", [False, True])
def test_accumulating_carries_match_numpy_and_are_updated_in_place(reverse):
  rng = np.random.default_rng(0)
  xs = rng.standard_normal((40, 48)).astype(np.float32)
  w = (rng.standard_normal((48, 48)) / 7).astype(np.float32)
  f = lambda xs, w: _accumulate(xs, w, reverse)
  (acc, total, g), ys = _run(f, xs, w)
  (acc_r, total_r, g_r), ys_r = _accumulate_numpy(xs, w, reverse)
  for got, want in ((acc, acc_r), (total, total_r), (g, g_r), (ys, ys_r)):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)
  # The accumulating kernel takes its carry and result without ``restrict``.
  assert "float* q" in _source(f, xs, w)


def test_in_place_bits_do_not_depend_on_the_thread_count():
  rng = np.random.default_rng(1)
  xs = rng.standard_normal((20, 300)).astype(np.float32)
  w = (rng.standard_normal((300, 300)) / 17).astype(np.float32)
  results = {np.asarray(_run(_accumulate, xs, w, threads=t)[0][0]).tobytes()
             for t in (1, 2, 3)}
  assert len(results) == 1


def _loop_numpy(step, c, xs):
  ys = []
  for x in xs:
    c, y = step(c, x)
    ys.append(y)
  return c, np.array(ys)


# Carries that a body must not overwrite while it still reads them (jnp and
# NumPy versions of one step).
CASES = {
    "transposed": (lambda c, x: (c.T + x, c[0, 0]), lambda c, x: (c.T + x, c[0, 0])),
    "also_returned": (lambda c, x: (c + x, c), lambda c, x: (c + x, c.copy())),
    "summed_too": (lambda c, x: (c * 0.5 + x, jnp.sum(c)), lambda c, x: (c * 0.5 + x, c.sum())),
    "shifted": (lambda c, x: (jnp.roll(c, 1, axis=1) + x, c[0, 1]),
                lambda c, x: (np.roll(c, 1, axis=1) + x, c[0, 1])),
    "reversed": (lambda c, x: (c[::-1] * 2 + x, c[1, 0]), lambda c, x: (c[::-1] * 2 + x, c[1, 0])),
    "broadcast_row": (lambda c, x: (c + c[0] + x, c[2, 2]), lambda c, x: (c + c[0] + x, c[2, 2])),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_carries_read_elsewhere_keep_their_old_values(case):
  step, step_numpy = CASES[case]
  rng = np.random.default_rng(2)
  c0 = rng.standard_normal((6, 6)).astype(np.float32)
  xs = rng.standard_normal((9, 6, 6)).astype(np.float32)
  c, ys = _run(lambda c0, xs: jax.lax.scan(step, c0, xs), c0, xs)
  c_r, ys_r = _loop_numpy(step_numpy, c0.astype(np.float64), xs.astype(np.float64))
  np.testing.assert_allclose(np.asarray(c), c_r, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(ys), ys_r, rtol=1e-5, atol=1e-5)


def test_swapped_carries():
  def step(c, x):
    a, b = c
    return (b + x, a * 2), a[0]
  rng = np.random.default_rng(3)
  a0, b0 = rng.standard_normal((2, 16)).astype(np.float32)
  xs = rng.standard_normal((7, 16)).astype(np.float32)
  (a, b), ys = _run(lambda a0, b0, xs: jax.lax.scan(step, (a0, b0), xs), a0, b0, xs)
  ra, rb, rys = a0.astype(np.float64), b0.astype(np.float64), []
  for x in xs:
    rys.append(ra[0])
    ra, rb = rb + x, ra * 2
  np.testing.assert_allclose(np.asarray(a), ra, rtol=1e-5)
  np.testing.assert_allclose(np.asarray(b), rb, rtol=1e-5)
  np.testing.assert_allclose(np.asarray(ys), rys, rtol=1e-5)
