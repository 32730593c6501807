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


# -- loop carries updated element by element (x.at[i].set, dynamic_update_slice) ------

def _set_each(x):
  return jax.lax.fori_loop(0, x.shape[0], lambda i, x: x.at[i].set(i * 2.0), x)


def _add_blocks(x):
  return jax.lax.fori_loop(0, x.shape[0] // 4, lambda i, x: jax.lax.dynamic_update_slice(
      x, jnp.full(4, i, x.dtype) + jax.lax.dynamic_slice(x, (i * 4,), (4,)), (i * 4,)), x)


def _fill_blocks(x):
  return jax.lax.fori_loop(0, x.shape[0] // 4, lambda i, x: jax.lax.dynamic_update_slice(
      x, jnp.full(4, i, x.dtype), (i * 4,)), x)


def _prefix_sums(x):
  # reads the carry before updating it: still in place
  return jax.lax.fori_loop(1, x.shape[0], lambda i, x: x.at[i].add(x[i - 1]), x)


def _read_after(x):
  # the old carry is read by another result too, after the update in the
  # program: that read must see the old values
  def body(i, c):
    x, acc = c
    return x.at[i].set(0.0), acc + jnp.roll(x, 1) * 0.5
  return jax.lax.fori_loop(0, 8, body, (x, jnp.zeros_like(x)))


def _read_after_numpy(x):
  x, acc = x.astype(np.float64), np.zeros(x.shape)
  for i in range(8):
    y = x.copy()
    y[i] = 0.0
    x, acc = y, acc + np.roll(x, 1) * 0.5
  return x, acc


def _also_returned(x):
  def body(c):
    i, x, _ = c
    y = x.at[i].set(-1.0)
    return i + 1, y, y
  return jax.lax.while_loop(lambda c: c[0] < 5, body, (0, x, x))[1:]


def _scan_writes_rows(x):
  def body(buf, t):
    return jax.lax.dynamic_update_slice(buf, jnp.full((1, 4), t, buf.dtype), (t, 0)), t
  return jax.lax.scan(body, x, jnp.arange(x.shape[0]))[0]


def _numpy_loops():
  x = np.arange(64, dtype=np.float64)
  set_each = np.arange(64) * 2.0
  blocks = x + np.repeat(np.arange(16), 4)
  prefix = np.cumsum(x)
  returned = x.copy()
  returned[:5] = -1.0
  rows = np.repeat(np.arange(16, dtype=np.float64)[:, None], 4, axis=1)
  return set_each, blocks, prefix, returned, rows


def test_loop_carries_updated_in_place_give_numpys_values():
  x = np.arange(64, dtype=np.float32)
  set_each, blocks, prefix, returned, rows = _numpy_loops()
  np.testing.assert_array_equal(_run(_set_each, x), set_each)
  np.testing.assert_array_equal(_run(_add_blocks, x), blocks)
  np.testing.assert_array_equal(_run(_fill_blocks, x), np.repeat(np.arange(16), 4))
  for got, want in zip(_run(_read_after, x), _read_after_numpy(x)):
    np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(_run(_prefix_sums, x), prefix)
  for out in _run(_also_returned, x):
    np.testing.assert_array_equal(out, returned)
  np.testing.assert_array_equal(_run(_scan_writes_rows, np.zeros((16, 4), np.float32)), rows)
  for threads in (1, 2):   # and the same bits for any thread count
    np.testing.assert_array_equal(_run(jax.vmap(_add_blocks), np.stack([x, -x]), threads=threads),
                                  np.stack([blocks, -x + np.repeat(np.arange(16), 4)]))


def _copies(text, nbytes):
  return [line for line in text.splitlines() if "memcpy" in line and f"{nbytes})" in line]


def test_loop_bodies_do_not_copy_a_carry_they_update_in_place():
  """The carry (16384 bytes) is copied into the loop and out of it, never in
  the body: each iteration costs its update, not the array's size, also
  where the body reads the carry before updating it, or after, where that
  read does not need the update (the update is then moved after it)."""
  x = jnp.zeros(4096)
  for f in (_set_each, _fill_blocks, _add_blocks, _prefix_sums):
    text = _source(f, x)
    assert "host steps (NumPy between compiled kernels): none" in text
    assert len(_copies(text, 16384)) == 2, f.__name__
    assert "+ lo, " not in text   # no scatter initializing its output from the operand
  assert "+ lo, " not in _source(_read_after, x)
