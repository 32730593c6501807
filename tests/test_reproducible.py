"""Bit-reproducible jit results: the same bits on the first call and later
ones (the NumPy tier and the compiled C code), in separate runs, for any
PUREJAX_NUM_THREADS and with or without the kernel cache; float sums in
``lax.reduction_order``'s fixed order, as accurate as NumPy's pairwise sum."""
import hashlib
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src import backends
from purejax._src.config import config
from purejax._src.lax import reduction_order

# The workloads, as one script: its printed digests are compared between runs.
SCRIPT = r'''
import hashlib, json, sys
import numpy as np
import purejax as jax, purejax.numpy as jnp

def digest(tree):
  h = hashlib.sha256()
  for leaf in jax.tree_util.tree_leaves(tree):
    h.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
  return h.hexdigest()[:16]

rng = np.random.default_rng(7)
x = rng.standard_normal((1001, 4099)).astype(np.float32)
fns = {"sum": lambda x, a: jnp.sum(jnp.tanh(x * 2 + 1), axis=a),
       "mean": lambda x, a: jnp.mean(x, axis=a), "var": lambda x, a: jnp.var(x, axis=a),
       "logsumexp": lambda x, a: jax.nn.logsumexp(x, axis=a),
       "softmax": lambda x, a: jax.nn.softmax(x, axis=a)}
out = {}
for name, f in fns.items():
  for axis in (0, 1, None):
    if name == "softmax" and axis is None:
      continue
    g = jax.jit(lambda x, f=f, axis=axis: f(x, axis))
    out[f"{name}{axis}"] = [digest(g(x)) for _ in range(3)]

def init(rng, sizes):
  return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
           np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]

def loss(params, xb, yb):
  h = xb
  for w, b in params[:-1]:
    h = jax.nn.relu(h @ w + b)
  w, b = params[-1]
  return jnp.mean(jax.nn.log_softmax(h @ w + b) * -yb) + 1e-4 * sum(
      jnp.sum(w * w) for w, _ in params)

@jax.jit
def step(params, m, v, t, xb, yb):
  l, g = jax.value_and_grad(loss)(params, xb, yb)
  m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
  v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
  def upd(p, m, v):
    return p - 1e-2 * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
  return jax.tree_util.tree_map(upd, params, m, v), m, v, l

params = init(rng, [32, 256, 256, 10])
m = jax.tree_util.tree_map(np.zeros_like, params)
v = jax.tree_util.tree_map(np.zeros_like, params)
xs = rng.standard_normal((15, 512, 32)).astype(np.float32)
ys = np.eye(10, dtype=np.float32)[rng.integers(0, 10, (15, 512))]
losses = []
for t in range(15):
  params, m, v, l = step(params, m, v, np.float32(t + 1), xs[t], ys[t])
  losses.append(float(l))
out["mlp"] = [digest(params)]
out["mlp_losses"] = losses

def rnn_loss(p, xs):   # its gradient's products leave the scan loops (scan_products)
  w, u = p
  _, hs = jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x @ u),) * 2,
                       jnp.zeros((8, 64), jnp.float32), xs)
  return jnp.mean(hs * hs)

rnn = jax.jit(jax.value_and_grad(rnn_loss))
p = (rng.standard_normal((64, 64)).astype(np.float32) / 8,
     rng.standard_normal((32, 64)).astype(np.float32) / 6)
seq = rng.standard_normal((300, 8, 32)).astype(np.float32)
out["rnn"] = [digest(rnn(p, seq)) for _ in range(3)]
print(json.dumps(out))
'''


def _run_script(**env):
  full = dict(os.environ, **{k: str(v) for k, v in env.items()})
  proc = subprocess.run([sys.executable, "-c", SCRIPT], env=full, capture_output=True,
                        text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr
  return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def runs():
  """The script's digests: threads 1, 2 and 4, a second run, no kernel cache."""
  return {"t1": _run_script(PUREJAX_NUM_THREADS=1), "t2": _run_script(PUREJAX_NUM_THREADS=2),
          "t4": _run_script(PUREJAX_NUM_THREADS=4), "again": _run_script(PUREJAX_NUM_THREADS=2),
          "nocache": _run_script(PUREJAX_DISK_CACHE=0)}


def test_every_call_gives_the_same_bits(runs):
  for name, digests in runs["t2"].items():
    if name != "mlp_losses":
      assert len(set(digests)) == 1, (name, digests)


@pytest.mark.parametrize("other", ["t1", "t4", "again", "nocache"])
def test_same_bits_across_runs_and_thread_counts(runs, other):
  assert runs[other] == runs["t2"]


def test_mlp_training_converges(runs):
  losses = runs["t2"]["mlp_losses"]
  assert all(math.isfinite(l) for l in losses) and losses[-1] < losses[0]


# -- in process: the NumPy tier and the compiled code ------------------------------

def _tiers(f, *args):
  """``f``'s result from the first call (NumPy tier where it is tiered) and
  from the compiled code, and whether it was tiered."""
  jaxpr = jax.make_jaxpr(f)(*args)
  run = backends.compile_jaxpr(jaxpr.jaxpr, "cpu")
  args = [np.asarray(a) for a in args]
  first = run(*jaxpr.consts, *args)
  tiered = isinstance(run, backends._Tiered)
  if tiered:
    run.wait()
  later = run(*jaxpr.consts, *args)
  return first, later, tiered


@pytest.fixture(autouse=True)
def _tier_large_jaxprs_too(monkeypatch):
  """The tiers are compared on large arrays, which purejax would otherwise
  compile before their first call (backends._MAX_TIER_ELEMENTS)."""
  monkeypatch.setattr(backends, "_MAX_TIER_ELEMENTS", 1 << 62)


SHAPES = [(1001, 4099), (9001, 67), (3, 70001), (17, 33, 1025)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_tiers_agree_on_reductions(shape, dtype):
  x = np.random.default_rng(1).standard_normal(shape).astype(dtype) * 3 + 1
  axes_list = [(a,) for a in range(len(shape))] + [None, tuple(range(len(shape)))[::2]]
  with config.override("jax_enable_x64", dtype == np.float64):
    for axes in axes_list:
      for name, f in [("sum", jnp.sum), ("mean", jnp.mean), ("var", jnp.var),
                      ("prod", lambda x, axis: jnp.prod(1 + x * 1e-4, axis=axis)),
                      ("max", jnp.max), ("argmax", lambda x, axis: jnp.argmax(
                          x, axis=axis[0] if isinstance(axis, tuple) else axis))]:
        if name == "argmax" and axes is not None and len(axes) > 1:
          continue
        first, later, tiered = _tiers(lambda x: f(x, axis=axes), x)
        assert tiered   # exact in both tiers: no compile before the first call
        for a, b in zip(first, later):
          assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), (name, axes)


@pytest.mark.parametrize("axis", [0, 1])
def test_tiers_agree_on_logsumexp_and_softmax(axis):
  x = np.random.default_rng(2).standard_normal((513, 4105)).astype(np.float32)
  for f in (jax.nn.logsumexp, jax.nn.softmax, lambda x, axis: jnp.tanh(x * 2 + 1).sum(axis)):
    first, later, _ = _tiers(lambda x: f(x, axis=axis), x)
    assert first[0].tobytes() == later[0].tobytes()


def test_thread_counts_agree_in_process():
  x = np.random.default_rng(3).standard_normal((257, 20011)).astype(np.float32)
  results = {}
  for threads in (1, 2, 4, 16):   # 16: a device machine's core count
    with config.override("purejax_num_threads", threads), \
         config.override("purejax_compile_sync", True):
      f = jax.jit(lambda x: (x.sum(), x.sum(0), x.sum(1), jnp.var(x, 0)))
      results[threads] = hashlib.sha256(b"".join(
          np.asarray(r).tobytes() for r in f(x))).hexdigest()
  assert len(set(results.values())) == 1


# Whole-array sums run on all threads, each taking chunks of blocks: one
# block, 4096 blocks and more (chunks of 2 and 4 blocks, with a tail of 1 and 3).
@pytest.mark.parametrize("n", [3000, 4096 * 4096 - 5, 4096 * 4096 + 77, 4096 * 8195 - 11])
def test_whole_array_sums_follow_the_order_on_any_thread_count(n):
  x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
  want = reduction_order.ordered_reduce(x, (0,), "+")
  for threads in (1, 2, 3):
    with config.override("purejax_num_threads", threads), \
         config.override("purejax_compile_sync", True):
      total, top = jax.jit(lambda x: (x.sum(), x.max()))(x)
    assert np.asarray(total).tobytes() == want.tobytes()
    assert float(top) == x.max()


# Sums over several axes around a kept one (the mean and variance of an
# NCHW batch norm): the innermost reduced run a multiple of the lanes (one
# row per chunk of lanes, blocks of several rows, rows of several blocks)
# or not.
# Tiles of outputs read whole rows (row_tiles): rows of whole runs (8192,
# 3072 across blocks), runs of whole rows (256, 128), neither (4160, 1920);
# two kept runs (axes 1 and 3).
AROUND = [((256, 64, 256), (0, 2)), ((3, 40, 8192), (0, 2)), ((33, 7, 4160), (0, 2)),
          ((9, 16, 30, 64), (0, 2, 3)), ((20, 12, 100), (0, 2)), ((5, 6, 3072), (0, 2)),
          ((70, 50, 128), (0, 2)), ((3, 40, 7, 64), (1, 3))]


@pytest.mark.parametrize("shape,axes", AROUND)
def test_sums_over_axes_around_a_kept_one_follow_the_order(shape, axes):
  x = np.random.default_rng(len(shape)).standard_normal(shape).astype(np.float32)
  want = reduction_order.ordered_reduce(x, axes, "+")
  want64 = reduction_order.ordered_reduce(x.astype(np.float64), axes, "+")
  p = 1 + x[..., :] * np.float32(1e-3)
  want_p = reduction_order.ordered_reduce(p, axes, "*")
  for threads in (1, 3):
    with config.override("purejax_num_threads", threads), \
         config.override("purejax_compile_sync", True):
      got = jax.jit(lambda x: x.sum(axes))(x)
      got_p = jax.jit(lambda p: jnp.prod(p, axes))(p)
      with config.override("jax_enable_x64", True):
        got64 = jax.jit(lambda x: x.sum(axes))(x.astype(np.float64))
    assert np.asarray(got).tobytes() == want.tobytes()
    assert np.asarray(got_p).tobytes() == want_p.tobytes()
    assert np.asarray(got64).tobytes() == want64.tobytes()


@pytest.mark.parametrize("shape,axes", AROUND)
def test_exact_reductions_around_a_kept_one(shape, axes):
  rng = np.random.default_rng(11)
  x = rng.standard_normal(shape).astype(np.float32)
  x.flat[rng.integers(0, x.size, 3)] = [-0.0, np.inf, -np.inf]
  k = rng.integers(-1000, 1000, shape).astype(np.int32)
  with config.override("purejax_compile_sync", True):
    top, low, mean = jax.jit(lambda x: (x.max(axes), x.min(axes), x.mean(axes)))(x)
    total, kmax = jax.jit(lambda k: (k.sum(axes), k.max(axes)))(k)
  np.testing.assert_array_equal(np.asarray(top), x.max(axes))
  np.testing.assert_array_equal(np.asarray(low), x.min(axes))
  assert np.asarray(mean).tobytes() == (reduction_order.ordered_reduce(x, axes, "+")
                                        / np.float32(x.size // mean.size)).tobytes()
  np.testing.assert_array_equal(np.asarray(total), k.sum(axes, dtype=np.int32))
  np.testing.assert_array_equal(np.asarray(kmax), k.max(axes))
  y = x.copy()
  y[(0,) * y.ndim] = np.nan
  with config.override("purejax_compile_sync", True):
    got = np.asarray(jax.jit(lambda y: y.max(axes))(y))
  np.testing.assert_array_equal(np.isnan(got), np.isnan(y.max(axes)))


@pytest.mark.parametrize("shape,axes", AROUND[:3] + AROUND[-2:])
def test_fused_reductions_around_a_kept_one_agree_across_tiers_and_threads(shape, axes):
  rng = np.random.default_rng(5)
  x = rng.standard_normal(shape).astype(np.float32)
  scale = rng.standard_normal(shape[-1]).astype(np.float32)

  def f(x, scale):   # a cheap body (row tiles take only those)
    y = jnp.maximum(x * scale + 1, 0.5) * x
    return y.sum(axes), (y * y).sum(axes), jnp.mean(x, axes), jnp.var(x, axes)

  want = reduction_order.ordered_reduce(np.maximum(x * scale + 1, np.float32(0.5)) * x,
                                        axes, "+")
  results = set()
  for threads in (1, 2, 3):
    with config.override("purejax_num_threads", threads):
      first, later, _ = _tiers(f, x, scale)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(first, later))
    results.add(b"".join(np.asarray(r).tobytes() for r in first + later))
    assert np.asarray(later[0]).tobytes() == want.tobytes()
  assert len(results) == 1


@pytest.mark.parametrize("shapes", [((1000, 700), (700, 1001)), ((3, 130, 333), (3, 333, 70)),
                                    ((77, 900), (900, 600)), ((600, 64), (64, 5))])
def test_matrix_product_bits_do_not_depend_on_the_thread_count(shapes):
  rng = np.random.default_rng(5)
  a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
  results = set()
  for threads in (1, 2, 3, 4, 16):
    with config.override("purejax_num_threads", threads), \
         config.override("purejax_compile_sync", True):
      out = np.asarray(jax.jit(jnp.matmul)(a, b))
    results.add(out.tobytes())
  assert len(results) == 1
  np.testing.assert_allclose(out, np.matmul(a.astype(np.float64), b), rtol=1e-4, atol=1e-3)


# -- the order itself and its accuracy ----------------------------------------------

def _reference_order(values, op="+", B=reduction_order.BLOCK, L=reduction_order.LANES,
                     run=None):
  """reduction_order's documented order, one element at a time (``run``:
  float32 values, each lane folding runs of that many in float32 first)."""
  fold = (lambda a, b: a + b) if op == "+" else (lambda a, b: a * b)
  ident = 0.0 if op == "+" else 1.0
  n = len(values)
  parts = []
  for lo in range(0, max(n, 1), B):
    lanes = [ident] * L
    if run:
      runs = [np.float32(0)] * L
      for r in range(lo, min(n, lo + B)):
        runs[(r - lo) % L] = np.float32(runs[(r - lo) % L] + values[r])
        if (r - lo + 1) % (run * L) == 0 or r + 1 == min(n, lo + B):
          lanes = [a + np.float64(f) for a, f in zip(lanes, runs)]
          runs = [np.float32(0)] * L
    for r in range(lo, min(n, lo + B)) if not run else ():
      lanes[(r - lo) % L] = fold(lanes[(r - lo) % L], values[r])
    h = L
    while h > 1:
      h //= 2
      lanes = [fold(lanes[i], lanes[i + h]) for i in range(h)]
    parts.append(lanes[0])
  while len(parts) > 1:
    parts = [fold(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)] + (
        [parts[-1]] if len(parts) % 2 else [])
  return parts[0]


@pytest.mark.parametrize("n", [1, 5, 64, 65, 4096, 4097, 3 * 4096 + 17, 11 * 4096 + 5])
def test_numpy_order_is_the_documented_one(n):
  x = np.random.default_rng(n).standard_normal(n) * 10.0 ** np.random.default_rng(
      n + 1).integers(-4, 6, n)
  got = reduction_order.ordered_reduce(x, (0,), "+")
  want = _reference_order([np.float64(v) for v in x])
  assert got.tobytes() == np.float64(want).tobytes()
  p = 1 + x[:200] * 1e-3
  assert reduction_order.ordered_reduce(p, (0,), "*").tobytes() == np.float64(
      _reference_order([np.float64(v) for v in p], "*")).tobytes()


@pytest.mark.parametrize("n", [5, 64, 1000, 1024, 1025, 4096, 4097, 2 * 4096 + 1500])
def test_float32_lanes_fold_runs_first(n):
  rng = np.random.default_rng(n)
  x = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
  want = np.float32(_reference_order([np.float32(v) for v in x], run=reduction_order.RUN))
  assert reduction_order.ordered_reduce(x, (0,), "+").tobytes() == want.tobytes()
  with config.override("purejax_compile_sync", True):
    assert np.asarray(jax.jit(jnp.sum)(x)).tobytes() == want.tobytes()
    rows = np.stack([x, x[::-1]])
    got = np.asarray(jax.jit(lambda y: y.sum(1))(rows))
  assert got[0].tobytes() == want.tobytes()


# Column order: the last axis kept, each column folded row by row in blocks
# of COLUMN_BLOCK rows (one block, several, a ragged last one).
@pytest.mark.parametrize("n", [2, 5, 256, 257, 3 * 256 + 17, 40 * 256 + 3])
def test_column_order_is_the_documented_one(n):
  rng = np.random.default_rng(n)
  x = rng.standard_normal((n, 3)) * 10.0 ** rng.integers(-4, 6, (n, 3))
  assert reduction_order.layout(x.shape, (0,)) == (reduction_order.COLUMN_BLOCK, 1)
  got = reduction_order.ordered_reduce(x, (0,), "+")
  for j in range(3):
    want = _reference_order([np.float64(v) for v in x[:, j]], B=reduction_order.COLUMN_BLOCK, L=1)
    assert got[j].tobytes() == np.float64(want).tobytes()
  p = 1 + x[:300] * 1e-3
  want = _reference_order([np.float64(v) for v in p[:, 1]], "*", reduction_order.COLUMN_BLOCK, 1)
  assert reduction_order.ordered_reduce(p, (0,), "*")[1].tobytes() == np.float64(want).tobytes()


def test_the_layout_is_chosen_by_the_last_long_axis():
  col, row = (reduction_order.COLUMN_BLOCK, 1), (reduction_order.BLOCK, reduction_order.LANES)
  assert reduction_order.layout((50, 7), (0,)) == col
  assert reduction_order.layout((5, 50, 7), (0, 1)) == col
  assert reduction_order.layout((50, 7, 1), (0,)) == col
  assert reduction_order.layout((50, 7), (1,)) == row
  assert reduction_order.layout((50, 1), (0,)) == row     # the kept axis is 1 long
  assert reduction_order.layout((5, 50, 7), (0, 2)) == row
  assert reduction_order.layout((1, 7), (0,)) == row      # nothing longer than 1 reduced


# Column sums and products in C follow the column order on any thread count:
# column tiles of several widths, a middle axis, several outer axes.
@pytest.mark.parametrize("shape,axes", [((4096, 300), (0,)), ((1000, 3), (0,)),
                                        ((64, 256, 130), (1,)), ((7, 60, 9, 70), (0, 1)),
                                        ((300, 1, 5), (0,)), ((2, 257, 4100), (1,)),
                                        ((5000, 2), (0,))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_sums_follow_the_order(shape, axes, dtype):
  x = np.random.default_rng(len(shape)).standard_normal(shape).astype(dtype)
  p = (1 + x * 1e-3).astype(dtype)
  want = reduction_order.ordered_reduce(x, axes, "+")
  want_p = reduction_order.ordered_reduce(p, axes, "*")
  assert reduction_order.layout(shape, axes)[1] == 1
  with config.override("jax_enable_x64", dtype == np.float64):
    for threads in (1, 3):
      with config.override("purejax_num_threads", threads), \
           config.override("purejax_compile_sync", True):
        got, got_p = jax.jit(lambda x, p: (x.sum(axes), p.prod(axes)))(x, p)
      assert np.asarray(got).tobytes() == want.tobytes()
      assert np.asarray(got_p).tobytes() == want_p.tobytes()


def test_float32_sums_are_more_accurate_than_pairwise():
  x = (np.random.default_rng(5).standard_normal(3_000_001) + 0.1).astype(np.float32)
  exact = math.fsum(x.astype(np.float64))
  ours = float(jax.jit(jnp.sum)(x))
  pairwise = float(np.sum(x))
  assert abs(ours - exact) <= abs(pairwise - exact) + abs(exact) * 2 ** -24
  y = x[:3_000_000].reshape(1000, 3000)
  # Down columns the accumulation is all float64: within the final rounding.
  exact = y.astype(np.float64).sum(0)
  err = np.abs(np.asarray(jax.jit(lambda y: y.sum(0))(y)) - exact)
  assert np.all(err <= np.abs(exact) * 2 ** -24 + 1e-6)
  # Along rows each lane folds runs of RUN elements in float32: at worst RUN
  # float32 roundings of the magnitudes, and no less accurate than NumPy's
  # pairwise sum over the outputs.
  exact = y.astype(np.float64).sum(1)
  err = np.abs(np.asarray(jax.jit(lambda y: y.sum(1))(y)) - exact)
  magnitude = np.abs(y).astype(np.float64).sum(1)
  assert np.all(err <= reduction_order.RUN * 2 ** -24 * magnitude + np.abs(exact) * 2 ** -24)
  pairwise = np.abs(y.sum(1) - exact)
  assert np.sqrt(np.mean(err ** 2)) <= np.sqrt(np.mean(pairwise ** 2))


def test_float64_sums_accuracy():
  x = np.random.default_rng(6).standard_normal(2_000_003) + 0.1
  exact = math.fsum(x)
  with config.override("jax_enable_x64", True):
    ours = float(jax.jit(jnp.sum)(x))
  assert abs(ours - exact) <= 64 * np.finfo(np.float64).eps * np.abs(x).sum()
  # Column order: a bound of COLUMN_BLOCK + log2(n / COLUMN_BLOCK) ulps, where
  # NumPy's sum over an outer axis is sequential (n ulps).
  y = x[:2_000_000].reshape(20_000, 100)
  exact = np.array([math.fsum(c) for c in y.T])
  with config.override("jax_enable_x64", True):
    cols = np.asarray(jax.jit(lambda y: y.sum(0))(y))
  bound = (reduction_order.COLUMN_BLOCK + 7) * np.finfo(np.float64).eps * np.abs(y).sum(0)
  assert np.all(np.abs(cols - exact) <= bound)
  assert np.abs(cols - exact).max() <= np.abs(y.sum(0) - exact).max()


def test_eager_sums_are_numpys_and_jitted_sums_the_fixed_order():
  """Eager reductions stay NumPy's own (fast); jitted code on either backend
  uses the fixed order, so eager and jitted may differ in the last ulp."""
  from purejax._src.lax import reduction_order
  x = np.random.RandomState(7).randn(3, 50001).astype(np.float32)
  eager = np.asarray(jnp.sum(jnp.asarray(x), axis=1))
  assert eager.tobytes() == np.sum(x, axis=1).tobytes()
  ordered = reduction_order.ordered_reduce(x, (1,), "+")
  for backend in ("numpy", "cpu"):
    with config.override("purejax_backend", backend), \
        config.override("purejax_compile_sync", True):
      jitted = np.asarray(jax.jit(lambda v: jnp.sum(v, axis=1))(x))
    assert jitted.tobytes() == ordered.tobytes(), backend


def test_concurrent_callers_get_the_same_bits():
  # OpenBLAS's thread count is one per process: a large LAPACK call on
  # OpenBLAS's threads in one Python thread must not thread the fixed
  # blocks of another thread's matrix product, nor the other way round.
  product = jax.jit(lambda a, b: jnp.tanh(a @ b) @ b)
  solve = jax.jit(jnp.linalg.solve)
  rng = np.random.default_rng(3)
  a = rng.standard_normal((512, 512)).astype(np.float32) * 0.1
  b = rng.standard_normal((512, 512)).astype(np.float32) * 0.1
  m = rng.standard_normal((900, 900)) + 30 * np.eye(900)
  v = rng.standard_normal((900, 4))
  want = {"product": np.asarray(product(a, b)), "solve": np.asarray(solve(m, v))}
  mismatches = []

  def caller(i):
    for _ in range(8):
      name, got = (("solve", solve(m, v)) if i % 3 == 2 else ("product", product(a, b)))
      if not np.array_equal(np.asarray(got), want[name]):
        mismatches.append(name)
  import threading
  threads = [threading.Thread(target=caller, args=(i,)) for i in range(6)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert mismatches == []


def test_openblas_thread_count_restored_after_compiled_products():
  from purejax._src import openblas
  setter = openblas.threads_setter(openblas.scipy_libs(), also_global=True)
  if setter is None:
    pytest.skip("SciPy's OpenBLAS has no thread count setter")
  before = setter(3)   # a count purejax would not choose
  try:
    f = jax.jit(lambda a: a @ a)
    f(np.ones((300, 300), np.float32)).block_until_ready()
    jnp.linalg.solve(np.eye(4) * 2, np.ones(4))
    assert setter(3) == 3
  finally:
    setter(before)


def test_openblas_single_mode_nests_in_one_thread():
  from purejax._src import openblas
  setter = openblas.threads_setter(openblas.scipy_libs(), also_global=True)
  modes = openblas.scipy_modes()
  if setter is None or modes.addresses is None:
    pytest.skip("SciPy's OpenBLAS has no thread count setter, or no C compiler")
  before = setter(3)
  try:
    with modes.single():
      with modes.single():   # already single: must not wait or change the count
        assert setter(1) == 1
      assert setter(1) == 1   # the inner leave kept the outer single mode
    assert setter(3) == 3
    with modes.threaded():   # single mode fully left: threaded mode not blocked
      pass
  finally:
    setter(before)


@pytest.mark.parametrize("loop", ["scan", "while"])
def test_loop_of_products_bits_and_thread_count(loop):
  """Loops whose steps multiply matrices (single mode entered once around
  the loop): NumPy's values, the same bits for any thread count, and
  OpenBLAS's thread count restored afterwards."""
  from purejax._src import openblas
  rng = np.random.default_rng(11)
  w = (rng.standard_normal((96, 96)) / 10).astype(np.float32)
  xs = rng.standard_normal((50, 3, 96)).astype(np.float32)

  def f(w, xs):
    if loop == "scan":
      return jax.lax.scan(lambda h, x: (jnp.tanh(h @ w + x), h.sum()), xs[0], xs)
    return jax.lax.while_loop(lambda c: c[0] < 50,
                              lambda c: (c[0] + 1, jnp.tanh(c[1] @ w + xs[c[0]])),
                              (0, xs[0]))[1]

  h = xs[0].astype(np.float64)
  for x in xs:
    h = np.tanh(h @ w + x)
  setter = openblas.threads_setter(openblas.scipy_libs(), also_global=True)
  before = setter(3) if setter is not None else None
  try:
    results = set()
    for threads in (1, 2, 3):
      with config.override("purejax_num_threads", threads), \
           config.override("purejax_compile_sync", True):
        out = jax.jit(f)(w, xs)
      results.add(b"".join(np.asarray(r).tobytes() for r in jax.tree_util.tree_leaves(out)))
    if setter is not None:
      assert setter(3) == 3
  finally:
    if setter is not None:
      setter(before)
  assert len(results) == 1
  final = out[0] if loop == "scan" else out
  np.testing.assert_allclose(np.asarray(final), h, rtol=1e-4, atol=1e-4)
