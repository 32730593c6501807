"""Compiled gathers and scatters at sizes that take the parallel paths
(cpu/gather_scatter.py): the gradient of an embedding lookup, segment_sum,
``x.at[...]`` updates, take_along_axis.  Scatter-adds with repeated indices
give exactly the bits of NumPy's ``np.add.at`` in float32 (updates applied
in row order), for every thread count and on every call; values agree with
float64 and with JAX; out-of-bounds indices behave as JAX's modes say.
"""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import fusion, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
THREADS = (1, 2, 4)


def _jax():
  return pytest.importorskip("jax")


def _compiled(f, *args, threads=0):
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True), \
       config.override("purejax_num_threads", threads):
    return [np.asarray(r) for r in jax.tree_util.tree_leaves(jax.jit(f)(*args))]


def _same_bits_everywhere(f, *args):
  """``f``'s compiled results, checked identical in bits for every thread
  count and on a second call."""
  first = None
  for threads in THREADS:
    for _ in range(2):
      got = _compiled(f, *args, threads=threads)
      if first is None:
        first = got
      for a, b in zip(first, got):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), threads
  return first


def _plan(f, *args):
  return fusion.plan_jaxpr(jax.make_jaxpr(f)(*args).jaxpr)


def _native(plan, name):
  return [s for s in plan.steps if type(s).__name__ == "NativeStep"
          and s.eqn.primitive.name == name]


def _add_at(shape, idx, updates, dtype=np.float32):
  """np.add.at in ``dtype`` (row order: the bits a sequential scatter gives)."""
  out = np.zeros(shape, dtype)
  np.add.at(out, idx, updates.astype(dtype))
  return out


RNG = np.random.default_rng(0)


# -- the gradient of an embedding lookup ----------------------------------------------

def _embedding(vocab=3000, dim=64, n=4096):
  table = RNG.standard_normal((vocab, dim)).astype(np.float32)
  hot = RNG.integers(-vocab, vocab, 64)   # rows looked up many times
  idx = np.where(RNG.random(n) < 0.5, RNG.choice(hot, n), RNG.integers(-vocab, vocab, n))
  idx = idx.astype(np.int32)
  weights = RNG.standard_normal((n, dim)).astype(np.float32)
  return table, idx, weights


def _lookup_loss(t, i, w):   # each lookup's gradient differs: order shows in the bits
  return (t[i] ** 2 * w).sum()


def test_embedding_gradient_is_add_at_in_row_order_for_any_thread_count():
  table, idx, w = _embedding()
  (grad,) = _same_bits_everywhere(jax.grad(_lookup_loss), table, idx, w)
  rows = np.where(idx < 0, idx + table.shape[0], idx)
  want32 = _add_at(table.shape, rows, 2.0 * table[rows] * w)   # x2 is exact: no order
  assert grad.tobytes() == want32.tobytes()
  want64 = _add_at(table.shape, rows, 2.0 * table[rows].astype(np.float64) * w, np.float64)
  np.testing.assert_allclose(grad, want64, rtol=1e-5, atol=1e-5)


def test_embedding_gradient_stores_no_zeros_and_reads_indices_once():
  table, idx, w = _embedding()
  plan = _plan(jax.grad(_lookup_loss), table, idx, w)
  (scatter,) = _native(plan, "scatter-add")
  assert scatter.fill is not None   # the output is filled, no zeros stored and copied
  assert not any(type(s) is fusion.Group and s.shape == table.shape for s in plan.steps)


@pytest.mark.oracle
def test_embedding_lookup_and_gradient_like_jax():
  real = _jax()
  table, idx, w = _embedding()
  (grad,) = _compiled(jax.grad(_lookup_loss), table, idx, w)
  (rows,) = _compiled(lambda t, i: t[i], table, idx)
  np.testing.assert_allclose(grad, np.asarray(real.jit(real.grad(_lookup_loss))(table, idx, w)),
                             rtol=1e-5, atol=1e-5)
  np.testing.assert_array_equal(rows, np.asarray(real.jit(lambda t, i: t[i])(table, idx)))


# -- segment_sum ----------------------------------------------------------------------

def test_segment_sum_drops_out_of_range_ids_and_adds_in_order():
  values = RNG.standard_normal(200_000).astype(np.float32)
  ids = RNG.integers(-5, 1005, values.size).astype(np.int32)
  f = lambda v, s: jax.ops.segment_sum(v, s, num_segments=1000)
  (got,) = _same_bits_everywhere(f, values, ids)
  keep = (ids >= 0) & (ids < 1000)
  assert got.tobytes() == _add_at(1000, ids[keep], values[keep]).tobytes()
  want64 = _add_at(1000, ids[keep], values[keep].astype(np.float64), np.float64)
  np.testing.assert_allclose(got, want64, rtol=1e-4, atol=1e-3)
  plan = _plan(f, values, ids)
  assert _native(plan, "scatter-add") and not plan.groups   # indices read in place


@pytest.mark.oracle
def test_segment_sum_like_jax():
  real = _jax()
  values = RNG.standard_normal(50_000).astype(np.float32)
  ids = RNG.integers(-3, 130, values.size).astype(np.int32)
  for sorted_ in (False, True):
    s = np.sort(ids) if sorted_ else ids
    f = lambda v, s, m=jax: m.ops.segment_sum(v, s, num_segments=128, indices_are_sorted=sorted_)
    (got,) = _compiled(f, values, s)
    want = real.jit(lambda v, s: real.ops.segment_sum(v, s, num_segments=128,
                                                      indices_are_sorted=sorted_))(values, s)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5, atol=1e-4)


# -- x.at[...] updates ------------------------------------------------------------------

# (x shape, index maker): small sizes run on one thread, large ones in parallel.
AT_CASES = {
    "vector_small": ((50,), lambda r: r.integers(-60, 60, 70)),
    "vector_large": ((100_000,), lambda r: r.integers(-100_010, 100_010, 300_000)),
    "rows_large": ((2000, 48), lambda r: r.integers(-2010, 2010, 1500)),
    "points_2d": ((300, 200), lambda r: (r.integers(-310, 310, 40_000), r.integers(0, 200, 40_000))),
    "columns_large": ((64, 2000), lambda r: (slice(None), r.integers(-2010, 2010, 700))),
}


def _updates_for(shape, index, rng):
  index = index if isinstance(index, tuple) else (index,)
  probe = np.zeros(shape, np.int8)[tuple(i if isinstance(i, slice) else np.zeros_like(i)
                                         for i in index)]
  return rng.standard_normal(probe.shape).astype(np.float32)


def _np_index(index, shape):
  """The NumPy index of the in-bounds updates (JAX drops the others)."""
  index = index if isinstance(index, tuple) else (index,)
  out, keep = [], None
  for axis, i in enumerate(index):
    if isinstance(i, slice):
      out.append(i)
      continue
    n = shape[axis]
    ok = (i >= -n) & (i < n)
    keep = ok if keep is None else keep & ok
    out.append(np.where(i < 0, i + n, i))
  return tuple(out), keep


@pytest.mark.parametrize("case", list(AT_CASES))
def test_at_add_with_repeats_drops_out_of_bounds_and_matches_add_at(case):
  shape, make = AT_CASES[case]
  rng = np.random.default_rng(1)
  index = make(rng)
  x = rng.standard_normal(shape).astype(np.float32)
  u = _updates_for(shape, index, rng)
  f = lambda x, u: x.at[index].add(u)
  (got,) = _same_bits_everywhere(f, x, u)
  np_index, keep = _np_index(index, shape)
  want = x.copy()
  if isinstance(index, tuple) and isinstance(index[0], slice):   # columns: keep on the last axis
    np.add.at(want, (slice(None), np_index[1][keep]), u[:, keep])
  else:
    np.add.at(want, tuple(i[keep] for i in np_index), u[keep])
  assert got.tobytes() == want.tobytes()


@pytest.mark.oracle
@pytest.mark.parametrize("case", list(AT_CASES))
@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
def test_at_updates_like_jax(case, op):
  real = _jax()
  shape, make = AT_CASES[case]
  rng = np.random.default_rng(2)
  index = make(rng)
  x = rng.standard_normal(shape).astype(np.float32)
  u = _updates_for(shape, index, rng)
  if op == "set":   # distinct positions: JAX leaves the winner of repeats unspecified
    x = np.arange(x.size, dtype=np.float32).reshape(shape)
    u = u * 0 + 7.0
  for mode in ("drop", "clip"):
    f = lambda x, u: getattr(x.at[index], op)(u, mode=mode)
    (got,) = _same_bits_everywhere(f, x, u)
    want = np.asarray(real.jit(lambda x, u: getattr(x.at[index], op)(u, mode=mode))(x, u))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"{op} {mode}")


def test_at_set_last_update_wins_and_integer_adds_wrap():
  x = np.zeros(40_000, np.int32)
  idx = np.random.default_rng(3).integers(0, 40_000, 120_000).astype(np.int32)
  u = np.arange(idx.size, dtype=np.int32) * 1_000_003
  (s, a) = _same_bits_everywhere(lambda x, u: (x.at[idx].set(u), x.at[idx].add(u)), x, u)
  want = x.copy()
  want[idx] = u   # NumPy's assignment: the last of repeated positions wins
  np.testing.assert_array_equal(s, want)
  want = x.copy()
  np.add.at(want, idx, u)
  np.testing.assert_array_equal(a, want)


def test_scatter_windows_crossing_thread_ranges():
  """Windows of several rows, so the threads' output ranges cut through them."""
  x = RNG.standard_normal((500, 64)).astype(np.float32)
  starts = RNG.integers(-3, 499, (300, 1)).astype(np.int32)   # some out of bounds: dropped
  u = RNG.standard_normal((300, 5, 64)).astype(np.float32)
  dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                   scatter_dims_to_operand_dims=(0,))
  for mode, clip in ((lax.GatherScatterMode.FILL_OR_DROP, False),
                     (lax.GatherScatterMode.CLIP, True)):
    f = lambda x, s, u: lax.scatter_add(x, s, u, dn, mode=mode)
    (got,) = _same_bits_everywhere(f, x, starts, u)
    want = x.copy()
    for r, s in enumerate(starts[:, 0]):
      if clip:
        s = min(max(s, 0), 495)
      elif not 0 <= s <= 495:
        continue
      want[s:s + 5] += u[r]
    assert got.tobytes() == want.tobytes(), mode


# -- gathers --------------------------------------------------------------------------

def test_gathers_of_common_forms_match_numpy():
  x = RNG.standard_normal((3000, 40)).astype(np.float32)
  labels = RNG.integers(0, 40, 3000).astype(np.int32)
  order = RNG.integers(0, 3000, (3000, 40)).astype(np.int32)
  cols = RNG.integers(0, 40, 25).astype(np.int32)
  f = lambda x, l, o, c: (x[jnp.arange(3000), l], jnp.take_along_axis(x, o, axis=0),
                          jnp.take_along_axis(x, l[:, None], axis=1), x[:, c], x[l])
  got = _same_bits_everywhere(f, x, labels, order, cols)
  want = (x[np.arange(3000), labels], np.take_along_axis(x, order, 0),
          np.take_along_axis(x, labels[:, None], 1), x[:, cols], x[labels])
  for g, w in zip(got, want):
    np.testing.assert_array_equal(g, w)
  assert _native(_plan(f, x, labels, order, cols), "gather")


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["clip", "fill", None])
def test_out_of_bounds_gathers_like_jax(mode):
  real = _jax()
  x = RNG.standard_normal((5000, 16)).astype(np.float32)
  idx = RNG.integers(-5100, 5100, 20_000).astype(np.int32)
  ours = lambda x, i: (x.at[i].get(mode=mode, fill_value=-1.5),
                       x.at[i, 3].get(mode=mode, fill_value=-1.5))
  theirs = lambda x, i: (x.at[i].get(mode=mode, fill_value=-1.5),
                         x.at[i, 3].get(mode=mode, fill_value=-1.5))
  got = _same_bits_everywhere(ours, x, idx)
  want = real.jit(theirs)(x, idx)
  for g, w in zip(got, want):
    np.testing.assert_array_equal(g, np.asarray(w))


@pytest.mark.oracle
@pytest.mark.parametrize("unique,sorted_", [(True, True), (False, True), (True, False)])
def test_index_flags_change_nothing(unique, sorted_):
  real = _jax()
  x = RNG.standard_normal((4000, 32)).astype(np.float32)
  idx = np.sort(RNG.permutation(4000)[:1000]).astype(np.int32)
  if not sorted_:
    idx = RNG.permutation(idx)
  u = RNG.standard_normal((1000, 32)).astype(np.float32)
  kw = dict(unique_indices=unique, indices_are_sorted=sorted_)
  f = lambda x, u: (x.at[idx].add(u, **kw), x.at[idx].get(**kw), x.at[idx].set(u, **kw))
  got = _same_bits_everywhere(f, x, u)
  want = real.jit(f)(x, u)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6, atol=1e-6)


def test_scatters_into_broadcast_scalars_from_arguments_and_inside_loops():
  idx = RNG.integers(0, 5000, 3000).astype(np.int32)
  u = RNG.standard_normal((3000, 32)).astype(np.float32)
  ui = RNG.integers(-9, 9, 3000).astype(np.int32)

  def f(s, u, ui):
    full = jnp.full((5000, 32), s).at[idx].add(u)
    counts = jnp.full(5000, 3, np.int32).at[idx].max(ui)

    def body(k, acc):
      return acc + jnp.zeros((5000, 32), np.float32).at[idx].add(u * k)
    return full, counts, jax.lax.fori_loop(0, 3, body, jnp.zeros((5000, 32), np.float32))

  s = np.float32(0.25)
  full, counts, looped = _same_bits_everywhere(f, s, u, ui)
  want = np.full((5000, 32), s, np.float32)
  np.add.at(want, idx, u)
  assert full.tobytes() == want.tobytes()
  want = np.full(5000, 3, np.int32)
  np.maximum.at(want, idx, ui)
  np.testing.assert_array_equal(counts, want)
  want = np.zeros((5000, 32), np.float32)
  for k in range(3):
    step = np.zeros((5000, 32), np.float32)
    np.add.at(step, idx, u * np.float32(k))
    want = want + step
  assert looped.tobytes() == want.tobytes()
  plan = _plan(f, s, u, ui)
  assert all(step.fill is not None for step in _native(plan, "scatter-add"))
