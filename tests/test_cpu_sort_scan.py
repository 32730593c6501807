"""sort and the cumulative reductions compiled to C (backends/cpu/sort_scan.py):
values against NumPy (float64 references) and JAX, lax's float order (-0.0
equal to 0.0, NaNs last, stable), several operands and keys, every real
dtype of C, rows along every axis (short, grouped, long and parallel), scans
split in blocks, bits that do not depend on the thread count, and plans
without host steps.  Each jitted function is compiled before its first call
(``purejax_compile_sync``), so the C code computes every result checked.
"""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends import tier_numerics
from purejax._src.backends.cpu import fusion, toolchain
from purejax._src.config import config

from conftest import oracle

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
RNG = np.random.RandomState(0)
SPECIALS = np.array([0.0, -0.0, np.nan, -np.nan, 1, -np.inf, np.inf, -1, 2, -0.0, 0.0, 1],
                    np.float32)
PRIMS = ("sort", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")


def _compiled(f, *args, threads=None):
  """``jit(f)(*args)`` computed by the C backend, as NumPy arrays; checks
  that no sort or cumulative reduction ran as a host step."""
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True), \
       config.override("purejax_num_threads", config.purejax_num_threads
                       if threads is None else threads):
    out = jax.jit(f)(*args)
  host = _host_steps(fusion.plan_jaxpr(jax.make_jaxpr(f)(*args).jaxpr))
  assert not host & set(PRIMS), f"host steps: {host}"
  return jax.tree_util.tree_map(np.asarray, out)


def _host_steps(plan):
  names = set()
  for step in plan.steps:
    if type(step) is fusion.HostStep:
      names.add(step.eqn.primitive.name)
    for inner in getattr(step, "plans", {}).values():
      names |= _host_steps(inner)
  return names


def _bits(x):
  x = np.asarray(x)
  return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _values(dtype, shape, scale=50):
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return RNG.rand(*shape) < 0.5
  if dtype.kind == "f":
    return (RNG.randn(*shape) * scale).astype(dtype)
  info = np.iinfo(dtype)
  return RNG.randint(max(info.min, -1000), min(info.max, 1000) + 1, shape).astype(dtype)


# -- sort ------------------------------------------------------------------------------

# (shape, dimension): short rows, a row group narrower than an inner axis,
# rows along an outer axis, and long rows (parallel radix passes).
SORT_CASES = [((1,), 0), ((7,), 0), ((33,), 0), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1),
              ((9, 300, 20), 1), ((300, 40), 0), ((70001,), 0), ((3, 70000), 1),
              ((70000, 3), 0)]


def _sort_all(*xs):
  return [lax.sort(x, dimension=d) for x, (_, d) in zip(xs, SORT_CASES)]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.int16, np.uint16,
                                   np.int32, np.uint32, np.bool_])
def test_sort_matches_numpy(dtype):
  xs = [_values(dtype, shape) for shape, _ in SORT_CASES]
  for x, got, (shape, d) in zip(xs, _compiled(_sort_all, *xs), SORT_CASES):
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, np.sort(x, axis=d), err_msg=f"{shape} {d}")


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64])
def test_sort_64_bit_matches_numpy(x64, dtype):
  xs = [_values(dtype, shape) for shape, _ in SORT_CASES]
  if np.dtype(dtype).kind == "i":   # the whole range: keys use every byte
    xs[-2] = RNG.randint(-2**62, 2**62, SORT_CASES[-2][0], dtype=np.int64) * 2
  for x, got, (_, d) in zip(xs, _compiled(_sort_all, *xs), SORT_CASES):
    np.testing.assert_array_equal(got, np.sort(x, axis=d))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bfloat16"], ids=str)
def test_float_order_and_stability(x64, dtype):
  dtype = jnp.dtype(dtype)
  # -0.0 == 0.0 and all NaNs equal (after +inf): the sort is stable, so their
  # order stays; values (sign bits, NaN signs) are untouched.
  x = np.tile(SPECIALS.astype(dtype), 50)   # 600 > 32: the radix path too
  for n in (12, 600):
    keys, perm = _compiled(lambda x: lax.sort_key_val(x, lax.iota(np.int32, n)), x[:n])
    xs = x[:n]
    wide = xs.astype(np.float64)   # 16-bit floats: NumPy's lexsort needs a native type
    expected = np.lexsort([np.arange(n), np.where(np.isnan(wide), np.inf, wide),
                           np.isnan(wide)])
    np.testing.assert_array_equal(perm, expected)
    np.testing.assert_array_equal(_bits(keys), _bits(xs[perm]))


def test_float_order_matches_jax():
  real = oracle()
  x = np.concatenate([SPECIALS, RNG.randn(200).astype(np.float32)])
  x = np.tile(x, 3)
  f = lambda x: lax.sort((x, lax.iota(np.int32, x.shape[0])), num_keys=1, is_stable=True)
  keys, perm = _compiled(f, x)
  want_keys, want_perm = real.jit(lambda x: real.lax.sort(
      (x, real.lax.iota(np.int32, x.shape[0])), num_keys=1, is_stable=True))(x)
  np.testing.assert_array_equal(perm, np.asarray(want_perm))
  np.testing.assert_array_equal(_bits(keys), _bits(want_keys))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_float_sorts_match_jax(dtype):
  real = oracle()
  x = np.concatenate([SPECIALS, RNG.randn(300).astype(np.float32).round(1), [65504, -6e-8]])
  x = np.stack([x, x[::-1]]).astype(jnp.dtype(dtype))
  k = RNG.randint(0, 5, x.shape).astype(np.int32)
  for f in (lambda lax_, x, k: lax_.sort(x, dimension=1),
            lambda lax_, x, k: lax_.sort(x, dimension=0),
            lambda lax_, x, k: lax_.sort((k, x), dimension=1, num_keys=1),
            lambda lax_, x, k: lax_.sort((x, k), dimension=1, num_keys=2)):
    got = _compiled(lambda x, k: f(lax, x, k), x, k)
    want = real.jit(lambda x, k: f(real.lax, x, k))(x, k)
    for a, b in zip(jax.tree_util.tree_leaves(got), real.tree_util.tree_leaves(want)):
      assert a.tobytes() == np.asarray(b).tobytes()


def test_several_operands_and_keys():
  n = 5000
  a = RNG.randint(0, 4, (3, n)).astype(np.int8)
  b = np.round(RNG.randn(3, n), 1).astype(np.float32)
  c = RNG.randint(0, 3, (3, n)).astype(np.uint16)
  v = RNG.randn(3, n)

  def f(a, b, c, v):
    two = lax.sort((a, b, c, v), dimension=1, num_keys=2)
    three = lax.sort((a, b, c, v), dimension=1, num_keys=3)
    one = lax.sort((b, a), dimension=1, num_keys=1)
    return two, three, one

  two, three, one = _compiled(f, a, b, c, v.astype(np.float32))
  for row in range(3):
    for got, keys in ((two, [b, a]), (three, [c, b, a])):
      order = np.lexsort([k[row] for k in keys])   # stable, primary key last
      for out, x in zip(got, (a, b, c, v.astype(np.float32))):
        np.testing.assert_array_equal(out[row], x[row][order])
    order = np.argsort(b[row], kind="stable")
    np.testing.assert_array_equal(one[1][row], a[row][order])


def test_several_keys_along_a_long_row_and_an_outer_axis():
  a = RNG.randint(0, 3, (70000, 2)).astype(np.int32)
  b = RNG.randn(70000, 2).astype(np.float32)
  got = _compiled(lambda a, b: lax.sort((a, b, -b), dimension=0, num_keys=2), a, b)
  for col in range(2):
    order = np.lexsort([b[:, col], a[:, col]])
    for out, x in zip(got, (a, b, -b)):
      np.testing.assert_array_equal(out[:, col], x[order, col])


def test_unstable_sort_is_a_sort():
  k = RNG.randint(0, 5, 3000).astype(np.int32)
  keys, vals = _compiled(lambda k: lax.sort((k, k * 10), is_stable=False), k)
  np.testing.assert_array_equal(keys, np.sort(k))
  np.testing.assert_array_equal(vals, keys * 10)


def test_argsort_and_sort_of_a_million():
  x = RNG.randn(1 << 20).astype(np.float32)
  x[::1000] = np.round(x[::1000])   # ties
  s, i = _compiled(lambda x: (jnp.sort(x), jnp.argsort(x)), x)
  np.testing.assert_array_equal(i, np.argsort(x, kind="stable"))
  np.testing.assert_array_equal(s, np.sort(x))
  real = oracle()
  np.testing.assert_array_equal(i, np.asarray(real.jit(real.numpy.argsort)(x)))


def test_sort_of_empty_and_single_rows():
  for shape, d in [((0,), 0), ((3, 0), 1), ((0, 4), 1), ((4, 1), 1), ((1, 4), 0)]:
    x = _values(np.float32, shape)
    with config.override("purejax_compile_sync", True):
      got = np.asarray(jax.jit(lambda x: lax.sort(x, dimension=d))(x))
    np.testing.assert_array_equal(got, np.sort(x, axis=d))


def test_sort_in_a_scan_body_and_its_gradient():
  x = RNG.randn(6, 40).astype(np.float32)

  def f(x):
    def body(c, row):
      return c + lax.sort(row)[-1], jnp.cumsum(lax.sort(row * c))
    return lax.scan(body, np.float32(1), x)

  c, ys = _compiled(f, x)
  want_c, want_ys = np.float32(1), []
  for row in x.astype(np.float64):
    want_ys.append(np.cumsum(np.sort(row * want_c)))
    want_c = want_c + np.sort(row)[-1]
  np.testing.assert_allclose(ys, want_ys, rtol=1e-5, atol=1e-5)
  g = _compiled(jax.grad(lambda x: jnp.sum(jnp.sort(x, axis=1)[:, -3:] ** 2)), x)
  top = np.argsort(x, axis=1)[:, -3:]
  want = np.zeros_like(x)
  np.put_along_axis(want, top, 2 * np.take_along_axis(x, top, 1), 1)
  np.testing.assert_allclose(g, want, rtol=1e-6)


# -- cumulative reductions ----------------------------------------------------------------

SCAN_CASES = [((1,), 0), ((7,), 0), ((5, 7), 0), ((5, 7), 1), ((2, 3, 300), 1),
              ((4, 700, 3), 1), ((200001,), 0), ((70000, 3), 0), ((3, 70000), 1)]


def _reference(name, x, axis, reverse):
  """The running reduction in float64 (integers in their own dtype)."""
  if reverse:
    x = np.flip(x, axis)
  wide = x.astype(np.float64) if x.dtype.kind == "f" else x
  with np.errstate(over="ignore", invalid="ignore"):
    out = {"cumsum": lambda: np.cumsum(wide, axis, dtype=wide.dtype),
           "cumprod": lambda: np.cumprod(wide, axis, dtype=wide.dtype),
           "cummax": lambda: np.maximum.accumulate(wide, axis),
           "cummin": lambda: np.minimum.accumulate(wide, axis),
           "cumlogsumexp": lambda: np.logaddexp.accumulate(wide, axis)}[name]()
  return np.flip(out, axis) if reverse else out


def _scan_inputs(name, dtype):
  xs = []
  for shape, _ in SCAN_CASES:
    if name == "cumprod" and np.dtype(dtype).kind == "f":   # products near 1
      xs.append((1 + RNG.randn(*shape) * 0.01).astype(dtype))
    else:
      xs.append(_values(dtype, shape, scale=3))
  return xs


def _scan_all(name, reverse):
  prim = getattr(lax, name)
  return lambda *xs: [prim(x, axis=a, reverse=reverse) for x, (_, a) in zip(xs, SCAN_CASES)]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name,dtype", [
    ("cumsum", np.float32), ("cumsum", np.int32), ("cumsum", np.int8), ("cumsum", np.uint16),
    ("cumprod", np.float32), ("cumprod", np.int32), ("cumprod", np.uint8),
    ("cummax", np.float32), ("cummax", np.int16), ("cummin", np.float32),
    ("cummin", np.uint32), ("cumlogsumexp", np.float32)])
def test_cumulative_matches_numpy(name, dtype, reverse):
  xs = _scan_inputs(name, dtype)
  outs = _compiled(_scan_all(name, reverse), *xs)
  for x, got, (shape, axis) in zip(xs, outs, SCAN_CASES):
    want = _reference(name, x, axis, reverse)
    assert got.dtype == x.dtype and got.shape == x.shape
    if name == "cumprod" and x.dtype.kind == "f":
      # Products stay in float32 (as reduce_prod): about as close to the
      # exact prefix as NumPy's float32 running product.
      flip = (lambda a: np.flip(a, axis)) if reverse else (lambda a: a)
      ours = np.max(np.abs(got / want - 1))
      numpy_err = np.max(np.abs(np.cumprod(flip(x), axis) / flip(want) - 1))
      assert ours <= 3 * numpy_err + 1e-6, (shape, axis, ours, numpy_err)
    elif x.dtype.kind == "f":
      # float32 rounding of the exact prefix (sums of thousands of terms
      # of size 3 have an absolute error of the sum's size).
      scale = np.maximum.accumulate(np.abs(want).reshape(-1))[-1] if name == "cumsum" else 0
      np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6 * max(1, scale),
                                 err_msg=f"{shape} {axis}")
    else:
      np.testing.assert_array_equal(got, want, err_msg=f"{shape} {axis}")


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
def test_cumulative_float64(x64, name):
  xs = _scan_inputs(name, np.float64)
  for reverse in (False, True):
    outs = _compiled(_scan_all(name, reverse), *xs)
    for x, got, (_, axis) in zip(xs, outs, SCAN_CASES):
      np.testing.assert_allclose(got, _reference(name, x, axis, reverse), rtol=1e-12,
                                 atol=1e-9)


def test_int64_wraps_around(x64):
  x = np.array([2**62, 2**62, 2**62, -5, 3], np.int64)
  s, p = _compiled(lambda x: (jnp.cumsum(x), jnp.cumprod(x)), x)
  np.testing.assert_array_equal(s, np.cumsum(x))
  np.testing.assert_array_equal(p, np.cumprod(x))


def test_cumulative_special_values():
  x = np.array([-0.0, -0.0, 0.0, -0.0, np.inf, 1.0, -np.inf, np.nan, 2.0], np.float32)
  m = np.array([-0.0, 0.0, -0.0, -1.0, np.nan, 3.0], np.float32)

  def f(x, m):
    return (lax.cumsum(x[:2]), lax.cumsum(x), lax.cummax(m), lax.cummin(-m),
            lax.cumlogsumexp(x), lax.cumprod(x[3:]), lax.cummax(x, reverse=True))

  s2, s, mx, mn, lse, p, rmx = _compiled(f, x, m)
  assert _bits(s2).tolist() == _bits(np.float32([-0.0, -0.0])).tolist()
  np.testing.assert_array_equal(s, [-0.0, -0.0, 0, 0, np.inf, np.inf, np.nan, np.nan, np.nan])
  assert np.signbit(s[:2]).all() and not np.signbit(s[2:4]).any()
  # lax orders -0.0 below +0.0 and propagates NaN.
  assert _bits(mx[:4]).tolist() == _bits(np.float32([-0.0, 0.0, 0.0, 0.0])).tolist()
  assert np.isnan(mx[4:]).all()
  assert _bits(mn[:4]).tolist() == _bits(np.float32([0.0, -0.0, -0.0, -0.0])).tolist()
  with np.errstate(invalid="ignore"):
    np.testing.assert_array_equal(lse, np.logaddexp.accumulate(x.astype(np.float64))
                                  .astype(np.float32))
  np.testing.assert_array_equal(p, np.cumprod(x[3:]))
  np.testing.assert_array_equal(rmx, [np.nan] * 8 + [2.0])


def test_cumulative_of_empty_arrays():
  for shape, axis in [((0,), 0), ((3, 0), 1), ((0, 4), 1)]:
    x = np.zeros(shape, np.float32)
    with config.override("purejax_compile_sync", True):
      got = jax.jit(lambda x: (lax.cumsum(x, axis), lax.cummax(x, axis)))(x)
    assert all(np.asarray(g).shape == shape for g in got)


def test_long_float32_sum_is_accurate():
  # A blocked scan accumulating in double: far closer to the exact prefix
  # than a float32 running sum.
  x = (RNG.rand(1 << 21) + 0.5).astype(np.float32)
  got = _compiled(jnp.cumsum, x)
  exact = np.cumsum(x.astype(np.float64))
  ours = np.abs(got - exact).max()
  running = np.abs(np.cumsum(x, dtype=np.float32) - exact).max()
  assert ours <= np.abs(exact).max() * 2 ** -24 and ours < running / 10


@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_matches_jax(axis):
  real = oracle()
  x = RNG.randn(300, 500).astype(np.float32)
  fs = lambda m: [lambda x: m.numpy.cumsum(x, axis), lambda x: m.numpy.cumprod(1 + x / 100, axis),
                  lambda x: m.lax.cummax(x, axis, reverse=True),
                  lambda x: m.lax.cumlogsumexp(x, axis)]
  for ours, theirs in zip(fs(jax), fs(real)):
    got = _compiled(ours, x)
    want = np.asarray(real.jit(theirs)(x))
    # float32 rounding of sums of up to 500 terms of size 1 each way.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=3e-5 * np.sqrt(x.shape[axis]))


# -- reproducibility, plans, tiers -----------------------------------------------------------

def test_bits_do_not_depend_on_the_thread_count():
  x = RNG.randn(1 << 18).astype(np.float32)
  y = RNG.randn(3, 40000).astype(np.float32)
  z = RNG.randn(40000, 5).astype(np.float32)

  def f(x, y, z):
    return (jnp.cumsum(x), lax.cumprod(1 + x / 1000, 0, reverse=True), lax.cumlogsumexp(x, 0),
            jnp.cumsum(y, 1), jnp.cumsum(z, 0), lax.cumlogsumexp(z, 0, reverse=True),
            jnp.sort(x), jnp.argsort(y, axis=1), jnp.sort(z, axis=0))

  results = {threads: b"".join(o.tobytes() for o in _compiled(f, x, y, z, threads=threads))
             for threads in (1, 2, 4)}
  assert len(set(results.values())) == 1


def test_jit_agrees_with_eager():
  x = RNG.randn(64, 33).astype(np.float32)
  fs = [lambda x: jnp.sort(x, 0), lambda x: jnp.argsort(x, 1), lambda x: jnp.cumsum(x, 0),
        lambda x: lax.cummin(x, 1, reverse=True), lambda x: lax.cumlogsumexp(x, 0)]
  for f in fs:
    np.testing.assert_allclose(_compiled(f, x), np.asarray(f(jnp.asarray(x))), rtol=1e-5,
                               atol=1e-5)


def test_vmap_matches_a_loop():
  x = RNG.randn(5, 2000).astype(np.float32)
  f = lambda r: (jnp.sort(r), lax.cumsum(r, 0, True))
  got = _compiled(jax.vmap(f), x)
  for i, row in enumerate(x):
    s, c = _compiled(f, row)
    np.testing.assert_array_equal(got[0][i], s)
    np.testing.assert_allclose(got[1][i], c, rtol=1e-6, atol=1e-5)


def test_plans_compile_these_primitives():
  x = np.ones((4, 8), np.float32)
  f = lambda x: (jnp.sort(x), jnp.argsort(x), jnp.cumsum(x, 0), lax.cummax(x, 1),
                 lax.cumlogsumexp(x, 1), lax.cumprod(x, 0, reverse=True), lax.cummin(x, 0))
  plan = fusion.plan_jaxpr(jax.make_jaxpr(f)(x).jaxpr)
  text = plan.describe()
  assert "host:" not in text
  for name in PRIMS:
    assert f"native: {name}" in text, name


def test_numpy_tier_stands_in_only_where_bits_agree():
  # Cumulative sums and products run in scan_order's block order on both
  # tiers; sorts, extrema and log-sum-exps (libm vs NumPy) compile first.
  x = np.ones(8, np.float32)
  for f in (jnp.sort, lambda x: lax.cummax(x, 0), lambda x: lax.cumlogsumexp(x, 0)):
    assert not tier_numerics.numpy_tier_exact(jax.make_jaxpr(f)(x).jaxpr)
  for f in (jnp.cumsum, jnp.cumprod):
    assert tier_numerics.numpy_tier_exact(jax.make_jaxpr(f)(x).jaxpr)


def test_several_operands_along_an_inner_axis():
  # Row groups (adjacent columns) with staged operands, and argsort's iota.
  a = RNG.randint(0, 3, (500, 37)).astype(np.int8)
  b = np.round(RNG.randn(500, 37), 1).astype(np.float32)
  u = RNG.randint(0, 1000, (500, 37)).astype(np.uint32)

  def f(a, b, u):
    return lax.sort((a, b, u, b * 2), dimension=0, num_keys=2), jnp.argsort(b, axis=0)

  (sa, sb, su, sb2), order = _compiled(f, a, b, u)
  for col in range(37):
    want = np.lexsort([b[:, col], a[:, col]])
    for out, x in zip((sa, sb, su, sb2), (a, b, u, b * 2)):
      np.testing.assert_array_equal(out[:, col], x[want, col])
    np.testing.assert_array_equal(order[:, col], np.argsort(b[:, col], kind="stable"))


def test_rows_too_long_for_a_buffer_per_thread(monkeypatch):
  # Smaller per-thread buffers: fewer rows per group, long rows sorted one
  # at a time (shapes used nowhere else, so nothing compiled before is reused).
  from purejax._src.backends.cpu import sort_scan
  monkeypatch.setattr(sort_scan, "_THREAD_BYTES", 1 << 16)
  x = RNG.randn(301, 41).astype(np.float32)
  y = RNG.randint(-50, 50, (17, 70003)).astype(np.int32)
  sx, sy, (ky, vy) = _compiled(lambda x, y: (jnp.sort(x, axis=0), jnp.sort(y, axis=1),
                                              lax.sort((y, -y), num_keys=1)), x, y)
  np.testing.assert_array_equal(sx, np.sort(x, axis=0))
  np.testing.assert_array_equal(sy, np.sort(y, axis=1))
  np.testing.assert_array_equal(vy, -ky)
