"""The windowed primitives compiled to C (cpu/windows.py): reduce_window_sum
/ _max / _min, the general reduce_window, select_and_gather_add and
select_and_scatter_add, as pooling and its derivatives use them.

Values against loops over windows in float64 (test_lax_windowed's
reference), bit for bit against the NumPy backend (same fold order, same
picks), and against JAX: max/avg/min pooling, their gradients (ties, NaN,
-inf and padding), forward mode and grad of grad.  The compiled plans have
no host step for them, and the bits do not depend on the thread count.
"""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import stages
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

from conftest import oracle
from test_lax_windowed import _reference

pytestmark = [pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler"),
              # C the compiler rejects falls back to NumPy with this warning.
              pytest.mark.filterwarnings("error:purejax. running on the NumPy backend")]
RNG = np.random.RandomState(0)
WINDOWED = {"reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce_window",
            "select_and_gather_add", "select_and_scatter_add"}


def _run(backend, f, *args, threads=0):
  with config.override("purejax_backend", backend), \
       config.override("purejax_compile_sync", True), \
       config.override("purejax_num_threads", threads):
    return [np.asarray(v) for v in jax.tree_util.tree_leaves(jax.jit(f)(*args))]


def _compiled(f, *args, threads=0):
  """``f`` jitted on the C backend; checks no windowed primitive was left
  to NumPy."""
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True), \
       config.override("purejax_num_threads", threads):
    compiled = jax.jit(f).lower(*args).compile()
    left = [name for name in stages.host_steps(compiled) if name.split(": ")[-1] in WINDOWED]
    assert not left, left
  return _run("cpu", f, *args, threads=threads)


def _same_bits(got, want):
  assert len(got) == len(want)
  for g, w in zip(got, want):
    assert g.dtype == w.dtype and g.shape == w.shape
    assert g.tobytes() == w.tobytes(), (g, w)


def _tied(shape, dtype=np.float32, specials=True):
  """Small integers (many ties), with NaN, -inf, +inf and -0.0 sprinkled in."""
  x = RNG.randint(-2, 3, shape).astype(dtype)
  if specials and np.dtype(dtype).kind == "f":
    flat = x.reshape(-1)
    for value in (np.nan, -np.inf, np.inf, -0.0):
      flat[RNG.randint(0, flat.size, max(1, flat.size // 12))] = value
  return x


# -- every primitive, random geometry, against the NumPy backend -----------------------

def _random_geometry(rng, rank):
  while True:
    shape = tuple(rng.randint(1, 7, rank))
    wd = tuple(rng.randint(1, 4, rank))
    ws = tuple(rng.randint(1, 4, rank))
    pad = tuple((int(rng.randint(-1, 3)), int(rng.randint(-1, 3))) for _ in range(rank))
    bd = tuple(rng.choice([1, 1, 2], rank))
    wdl = tuple(rng.choice([1, 1, 2], rank))
    out = lax.reduce_window_shape_tuple(shape, wd, ws, pad, bd, wdl)
    if all(n > 0 for n in out):
      return shape, wd, ws, pad, bd, wdl


def _argmax_pair(a, b):
  (av, ai), (bv, bi) = a, b
  pick = (av > bv) | ((av == bv) & (ai < bi))
  return lax.select(pick, av, bv), lax.select(pick, ai, bi)


def _everything(geometry):
  """One function applying every windowed primitive with ``geometry``."""
  _, wd, ws, pad, bd, wdl = geometry
  win = dict(window_dimensions=wd, window_strides=ws, padding=pad, base_dilation=bd,
             window_dilation=wdl)

  def pool(x, init, op):
    return lax.reduce_window(x, jnp.array(init, x.dtype), op, **win)

  def f(x, t):
    idx = lax.broadcasted_iota(jnp.int32, x.shape, x.ndim - 1)
    outs = [pool(x, 0., lax.add), pool(x, -jnp.inf, lax.max), pool(x, jnp.inf, lax.min),
            pool(x, 1., lax.mul),
            lax.reduce_window((x, idx), (jnp.array(-jnp.inf, x.dtype), np.int32(2 ** 31 - 1)),
                              _argmax_pair,
                              **win),
            jax.jvp(lambda x: pool(x, -jnp.inf, lax.max), (x,), (t,))[1],
            jax.jvp(lambda x: pool(x, jnp.inf, lax.min), (x,), (t,))[1]]
    if all(d == 1 for d in wdl):   # JAX has no VJP of max pooling with window dilation
      for init, op in ((-jnp.inf, lax.max), (jnp.inf, lax.min)):
        weights = 1.0 + jnp.arange(np.prod(pool(x, init, op).shape), dtype=x.dtype)
        outs.append(jax.grad(lambda x: jnp.vdot(pool(x, init, op).ravel(), weights))(x))
    return outs

  return f


@pytest.mark.parametrize("seed", range(16))
def test_random_geometry_matches_numpy_bit_for_bit(seed):
  rng = np.random.RandomState(100 + seed)
  geometry = _random_geometry(rng, rank=1 + seed % 3)
  x = _tied(geometry[0], specials=seed % 2 == 0)
  t = rng.randn(*geometry[0]).astype(np.float32)
  f = _everything(geometry)
  _same_bits(_compiled(f, x, t), _run("numpy", f, x, t))


def test_scalar_operand():
  f = lambda x: [lax.reduce_window(x, 0., lax.add, (), (), ()),
                 lax.reduce_window(x, -jnp.inf, lax.max, (), (), ()),
                 jax.grad(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (), (), ()))(x)]
  _same_bits(_compiled(f, np.float32(3.5)), [np.float32(3.5)] * 2 + [np.float32(1)])


def test_tiny_strided_forward_mode_with_nan():
  # Each window folds (key, tangent) from (-inf, 0), switching whenever
  # picked >= x fails: after a NaN the next element is picked.  (gcc 12
  # once vectorized this tiny loop nest across rows, wrongly.)
  x = np.array([[-np.inf, 1, -np.inf, 2], [np.nan, -np.inf, 3, 3], [0., -0., 1, np.nan],
                [-np.inf] * 4], np.float32)
  t = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
  pool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID")
  got, = _compiled(lambda x, t: jax.jvp(pool, (x,), (t,))[1], x, t)
  np.testing.assert_array_equal(got, [[6, 7], [9, 15]])


# -- values against loops over windows ----------------------------------------------------

CONFIGS = [
    ((9,), (3,), (2,), ((1, 2),), (1,), (2,)),
    ((4, 5), (2, 3), (2, 1), ((1, 0), (2, 2)), (1, 2), (1, 1)),
    ((3, 4), (2, 2), (1, 2), ((1, 1), (0, 1)), (2, 1), (2, 1)),
    ((2, 5, 4, 3), (1, 2, 2, 1), (1, 2, 2, 1), ((0, 0), (0, 1), (0, 0), (0, 0)),
     (1, 1, 1, 1), (1, 1, 1, 1)),
    ((4, 6), (2, 2), (1, 1), ((-1, 0), (0, -2)), (1, 1), (1, 1)),
    ((3, 700), (2, 5), (1, 3), ((1, 1), (2, 2)), (1, 1), (1, 1)),   # rows cut into chunks
]


@pytest.mark.parametrize("cfg", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.uint8])
def test_monoids_match_loops(cfg, dtype, x64):
  shape, wd, ws, pad, bd, wdl = cfg
  if np.dtype(dtype).kind == "f":
    x = RNG.randn(*shape).astype(dtype)
  else:   # large values: sums wrap around
    info = np.iinfo(dtype)
    x = RNG.randint(info.min, int(info.max) + 1, shape).astype(dtype)
  ops = [(0, lax.add, np.add), (-np.inf, lax.max, np.maximum), (np.inf, lax.min, np.minimum)]
  inits = [np.array(i if np.dtype(dtype).kind == "f" else
                    {0: 0, -np.inf: np.iinfo(dtype).min, np.inf: np.iinfo(dtype).max}[i],
                    dtype) for i, _, _ in ops]
  f = lambda x: [lax.reduce_window(x, i, op, wd, ws, pad, bd, wdl)
                 for i, (_, op, _) in zip(inits, ops)]
  got = _compiled(f, x)
  for g, init, (_, _, np_op) in zip(got, inits, ops):
    if np.dtype(dtype).kind == "f":
      want = _reference(x.astype(np.float64), np.float64(init), np_op, wd, ws, pad, bd, wdl)
      np.testing.assert_allclose(g, want, rtol=1e-6 if dtype == np.float32 else 1e-13,
                                 atol=1e-6)
    else:
      with np.errstate(over="ignore"):
        want = _reference(x, init, np_op, wd, ws, pad, bd, wdl)
      np.testing.assert_array_equal(g, want)
    assert g.dtype == dtype


def test_bool_max_and_min():
  x = RNG.rand(5, 7) > 0.6
  f = lambda x: [lax.reduce_window(x, False, lax.max, (2, 3), (1, 2), "SAME"),
                 lax.reduce_window(x, True, lax.min, (2, 3), (1, 2), "SAME")]
  got = _compiled(f, x)
  _same_bits(got, _run("numpy", f, x))
  np.testing.assert_array_equal(
      got[0], _reference(x, False, np.logical_or, (2, 3), (1, 2), ((0, 1), (1, 1)), (1, 1),
                         (1, 1)))


def _loop_scatter(source, x, wd, ws, pad, select):
  """select_and_scatter_add by loops: padding holds the losing key and takes
  part in the pick; each window's value goes to its pick (dropped when the
  pick is padding)."""
  fill = -np.inf if select is np.greater_equal else np.inf
  out = np.zeros(x.shape, np.float64)
  for o in np.ndindex(*source.shape):
    best = pick = None
    for k in np.ndindex(*wd):
      pos = tuple(oi * s + ki - lo for oi, s, ki, (lo, _) in zip(o, ws, k, pad))
      inside = all(0 <= p < n for p, n in zip(pos, x.shape))
      v = x[pos] if inside else fill
      if best is None or not select(best, v):
        best, pick = v, (pos if inside else None)
    if pick is not None:
      out[pick] += source[o]
  return out


@pytest.mark.parametrize("cfg", [((6, 7), (3, 3), (1, 1), ((1, 1), (1, 1))),
                                 ((6, 7), (3, 2), (2, 3), ((2, 0), (0, 1))),
                                 ((5, 6, 4), (2, 3, 1), (2, 1, 1), ((0, 1), (1, -1), (0, 0)))])
@pytest.mark.parametrize("select", ["max", "min"])
def test_pooling_gradient_matches_loops(cfg, select, x64):
  shape, wd, ws, pad = cfg
  x = _tied(shape, np.float64)
  init, op, cmp = ((-np.inf, lax.max, np.greater_equal) if select == "max"
                   else (np.inf, lax.min, np.less_equal))
  out_shape = lax.reduce_window_shape_tuple(shape, wd, ws, pad)
  source = RNG.randn(*out_shape)
  f = lambda x, s: jax.vjp(lambda x: lax.reduce_window(x, init, op, wd, ws, pad), x)[1](s)
  got, = _compiled(f, x, source)
  np.testing.assert_allclose(got, _loop_scatter(source, x, wd, ws, pad, cmp), rtol=1e-14)


# -- against JAX ---------------------------------------------------------------------------

def _pools(lib, np_, window, strides, padding):
  lax_ = lib.lax

  def max_pool(x):
    return lax_.reduce_window(x, -np_.inf, lax_.max, window, strides, padding)

  def avg_pool(x):
    return lax_.reduce_window(x, 0., lax_.add, window, strides, padding) / np.prod(window)

  def min_pool(x):
    return lax_.reduce_window(x, np_.inf, lax_.min, window, strides, padding)

  def f(x, t, untied):
    # Forward mode on values without ties: with asymmetric padding XLA
    # walks some windows in another order, so the pick among ties can
    # differ (the NumPy backend's too; test_lax_windowed).
    outs = []
    for pool in (max_pool, avg_pool, min_pool):
      loss = lambda x: (pool(x) * np_.cos(pool(x))).sum()
      outs += [pool(x), lib.grad(loss)(x), lib.jvp(pool, (untied,), (t,))[1]]
    return outs

  return f


@pytest.mark.parametrize("geometry", [((1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
                                      ((1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                      ((1, 3, 3, 1), (1, 1, 1, 1), "SAME"),
                                      ((1, 2, 3, 1), (1, 1, 2, 1), ((0, 0), (1, 0), (0, 2),
                                                                    (0, 0)))])
def test_pooling_and_gradients_match_jax(geometry):
  real = oracle()
  x = _tied((2, 7, 6, 3))
  t, untied = RNG.randn(2, *x.shape).astype(np.float32)
  got = _compiled(_pools(jax, jnp, *geometry), x, t, untied)
  want = real.jit(_pools(real, real.numpy, *geometry))(x, t, untied)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, np.asarray(w), rtol=2e-6, atol=1e-6)


def test_grad_of_grad_and_forward_mode_match_jax():
  # Forward mode and the derivative of max pooling's gradient go through
  # select_and_gather_add.
  real = oracle()

  def make(lib, np_):
    def loss(x):
      p = lib.lax.reduce_window(x, -np_.inf, lib.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
      return (p * p * p).sum()

    def f(x, v):
      hvp = lib.jvp(lib.grad(loss), (x,), (v,))[1]
      ggrad = lib.grad(lambda x: (lib.grad(loss)(x) * v).sum())(x)
      return hvp, ggrad

    return f

  x = RNG.randn(2, 9, 8, 3).astype(np.float32)
  v = RNG.randn(*x.shape).astype(np.float32)
  got = _compiled(make(jax, jnp), x, v)
  want = real.jit(make(real, real.numpy))(x, v)
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, np.asarray(w), rtol=2e-6, atol=1e-6)
  jaxpr = str(jax.make_jaxpr(make(jax, jnp))(x, v))
  assert "select_and_gather_add" in jaxpr and "select_and_scatter_add" in jaxpr


def test_integer_pooling_matches_jax():
  real = oracle()
  x = RNG.randint(-100, 100, (2, 6, 5, 3)).astype(np.int32)

  def make(lib):
    def f(x):
      return [lib.lax.reduce_window(x, np.int32(0), lib.lax.add, (1, 2, 2, 1), (1, 1, 2, 1),
                                    "SAME"),
              lib.lax.reduce_window(x, np.int32(-2 ** 31), lib.lax.max, (1, 3, 2, 1),
                                    (1, 2, 1, 1), "VALID"),
              lib.lax.reduce_window(x, np.int32(1), lib.lax.mul, (1, 2, 1, 1), (1, 1, 1, 1),
                                    "VALID")]
    return f

  for g, w in zip(_compiled(make(jax), x), real.jit(make(real))(x)):
    np.testing.assert_array_equal(g, np.asarray(w))


# -- threads, plans ------------------------------------------------------------------------

def test_bits_do_not_depend_on_the_thread_count():
  x = _tied((4, 30, 34, 16))   # well above the parallel threshold
  t = RNG.randn(*x.shape).astype(np.float32)
  f = _everything(((4, 30, 34, 16), (1, 3, 3, 1), (1, 2, 2, 1),
                   ((0, 0), (1, 1), (1, 0), (0, 0)), (1, 1, 1, 1), (1, 1, 1, 1)))
  runs = [_compiled(f, x, t, threads=n) for n in (1, 2, 4)]
  _same_bits(runs[1], runs[0])
  _same_bits(runs[2], runs[0])
  _same_bits(runs[0], _run("numpy", f, x, t))


def test_a_computation_without_c_stays_on_numpy():
  # float8 has no C type: the general reduce_window runs on NumPy, right.
  import ml_dtypes
  f8 = ml_dtypes.float8_e4m3fn
  f = lambda x: lax.reduce_window(x, f8(0), lambda a, b: a + b * b, (2,), (1,), "VALID")
  x = np.linspace(0.5, 2, 9).astype(f8)
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    assert stages.host_steps(jax.jit(f).lower(x).compile()) == ["reduce_window"]
  got, = _run("cpu", f, x)
  x64 = x.astype(np.float64)
  want = [a * a + b * b for a, b in zip(x64[:-1], x64[1:])]   # 0 + a^2 + b^2, in float8
  np.testing.assert_allclose(np.float64(got), want, rtol=0.15)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("seed", range(6))
def test_half_floats_match_numpy_bit_for_bit(seed, dtype):
  # Each step of a fold in float32, rounded to the type, as NumPy's
  # ml_dtypes arithmetic (the NumPy backend) computes it.
  rng = np.random.RandomState(200 + seed)
  geometry = _random_geometry(rng, rank=1 + seed % 3)
  x = (_tied(geometry[0], specials=seed % 2 == 0) * 1.37).astype(jnp.dtype(dtype))
  t = rng.randn(*geometry[0]).astype(jnp.dtype(dtype))
  f = _everything(geometry)
  _same_bits(_compiled(f, x, t), _run("numpy", f, x, t))


def test_half_max_pooling_matches_jax():
  real_jax = oracle()
  x = (RNG.randn(2, 9, 10, 3) * 3).astype(jnp.bfloat16)
  for lib_f in (lambda l, x: l.reduce_window(x, -np.inf, l.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                             "SAME"),
                lambda l, x: l.reduce_window(x, np.inf, l.min, (1, 2, 2, 1), (1, 1, 1, 1),
                                             "VALID")):
    got, = _compiled(lambda x: lib_f(lax, x), x)
    want = np.asarray(real_jax.jit(lambda x: lib_f(real_jax.lax, x))(x))
    assert got.tobytes() == want.tobytes()
    g = lambda lib, x: lib.grad(lambda x: lib_f(lib.lax, x).astype(np.float32).sum())(x)
    got, = _compiled(lambda x: g(jax, x), x)
    assert got.tobytes() == np.asarray(real_jax.jit(lambda x: g(real_jax, x))(x)).tobytes()


def test_complex_sums_over_windows(x64):
  x = RNG.randn(3, 8, 5) + 1j * RNG.randn(3, 8, 5)
  geometry = ((1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 1)), (1, 1, 1), (1, 1, 1))
  f = lambda x: lax.reduce_window(x, 0j, lax.add, *geometry)
  got, = _compiled(f, x)
  want = (_reference(x.real, 0.0, np.add, *geometry)
          + 1j * _reference(x.imag, 0.0, np.add, *geometry))
  np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
