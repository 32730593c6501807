"""The C backend's fused kernels compute what the NumPy backend computes.

Each test traces a function to a jaxpr, runs it on both backends and compares
the outputs: bit for bit for integer, boolean and exactly rounded float ops,
within 2 ulp for transcendental functions, NaN where NaN.  Many ops go into one
jaxpr so that a few compilations cover them (the compiled libraries are cached
on disk, so later runs do not compile at all).
"""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends import numpy_backend
from purejax._src.backends.cpu import toolchain

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

from purejax._src.backends.cpu import executable, fusion  # noqa: E402
from tests.tier_pair import run_traced, trace  # noqa: E402

FLOATS = ["float32", "float64"]
SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
INTS = SIGNED + UNSIGNED


# -- helpers --------------------------------------------------------------------------------

def run_both(f, *args):
  (_, expected), (compiled, got) = run_traced(f, args, numpy_backend.compile_jaxpr,
                                              executable.compile_jaxpr)
  assert hasattr(compiled, "source"), "nothing was compiled"
  return expected, got, compiled


def ulp_distance(a, b):
  """Distance in units in the last place (signed zeros are 0 apart)."""
  bits = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
  ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
  mask = np.int64(np.iinfo(bits).max)
  oa = np.where(ia < 0, -(ia & mask), ia)
  ob = np.where(ib < 0, -(ib & mask), ib)
  return np.abs(oa - ob)


def assert_same(expected, got, ulps=0, what=""):
  expected, got = np.asarray(expected), np.asarray(got)
  assert got.dtype == expected.dtype and got.shape == expected.shape, what
  if expected.dtype.kind != "f":
    np.testing.assert_array_equal(got, expected, err_msg=what)
    return
  nan = np.isnan(expected)
  np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{what}: NaN positions")
  e, g = expected[~nan], got[~nan]
  if ulps == 0:
    bad = e.view(f"u{e.dtype.itemsize}") != g.view(f"u{e.dtype.itemsize}")
  else:
    bad = ulp_distance(e, g) > ulps
  assert not bad.any(), f"{what}: {e[bad][:5]} != {g[bad][:5]}"


def check(f, *args, ulps=0, tol=None, names=None):
  """Compares ``f`` on both backends: exactly, within ``ulps``, or (for
  chains where a rounding difference in a transcendental function can be
  amplified by cancellation) within relative and absolute ``tol``."""
  expected, got, compiled = run_both(f, *args)
  assert len(expected) == len(got)
  for i, (e, g) in enumerate(zip(expected, got)):
    what = names[i] if names else f"output {i}"
    if tol is not None and np.asarray(e).dtype.kind == "f":
      assert np.asarray(g).dtype == np.asarray(e).dtype, what
      np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=what)
    else:
      assert_same(e, g, ulps, what)
  return compiled


def specials(dtype, n=301, seed=0):
  """Random values of ``dtype`` with the edge cases mixed in."""
  rng = np.random.default_rng(seed)
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return rng.random(n) < 0.5
  if dtype.kind in "iu":
    info = np.iinfo(dtype)
    edge = [0, 1, 2, 3, 7, info.max, info.max - 1, info.min, info.min + 1]
    if dtype.kind == "i":
      edge += [-1, -2, -3, -7]
    vals = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    small = rng.integers(max(info.min, -20), 20, n).astype(dtype)
    vals = np.where(rng.random(n) < 0.4, small, vals)
    vals[:len(edge)] = edge
    return vals
  info = np.finfo(dtype)
  edge = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
          info.max, -info.max, info.tiny, -info.tiny, info.tiny / 4, 3.0, 1e-3, 0.9999,
          127.5, -128.5, 255.6, 256.0, 2.0 ** 31, -2.0 ** 31, 65535.7, 1e10, -1e10]
  vals = (rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))).astype(dtype)
  vals[:len(edge)] = np.array(edge).astype(dtype)
  return vals


# -- elementwise primitives on every dtype ----------------------------------------------------

EXACT_FLOAT_UNARY = ["neg", "sign", "floor", "ceil", "round", "round_even", "is_finite",
                     "sqrt", "rsqrt", "abs", "square", "pow2", "pow3", "powm3", "pow7"]
TRANSCENDENTAL = ["exp", "exp2", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos",
                  "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                  "cbrt"]


def _unary(name, x):
  if name == "round_even":
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
  if name == "round":
    return lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO)
  if name.startswith("pow"):
    return lax.integer_pow(x, int(name[3:].replace("m", "-")))
  if name == "not":
    return lax.bitwise_not(x)
  return getattr(lax, name)(x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_unary(dtype):
  x = specials(dtype)
  names = EXACT_FLOAT_UNARY + TRANSCENDENTAL
  with purejax.enable_x64(dtype == "float64"):
    expected, got, _ = run_both(lambda x: [_unary(n, x) for n in names], x)
  for name, e, g in zip(names, expected, got):
    # NumPy's float32 log is up to 3 ulp off (ours within 1), its logistic
    # inherits its exp's error.
    ulps = {"log": 3, "logistic": 4}.get(name, 2) if dtype == "float32" else 2
    assert_same(e, g, 0 if name in EXACT_FLOAT_UNARY else ulps, name)


def test_float32_exp_and_log_within_one_ulp():
  rng = np.random.default_rng(7)
  x = np.concatenate([rng.uniform(-104, 89, 20000), np.exp(rng.uniform(-103, 88, 20000))])
  x = x.astype(np.float32)
  x[:8] = [88.72283, 88.72284, -103.97, -87.34, 1e-45, -0.0, 1.0, 0.5]
  jaxpr, _ = trace(lambda x: [lax.exp(x), lax.log(jnp.abs(x))], x)
  exp, log = executable.compile_jaxpr(jaxpr)(x)
  with np.errstate(all="ignore"):
    true_exp = np.exp(x.astype(np.float64)).astype(np.float32)
    true_log = np.log(np.abs(x).astype(np.float64)).astype(np.float32)
  assert_same(true_exp, exp, 1, "exp")
  assert_same(true_log, log, 1, "log")


def test_int_unary():
  # Every integer dtype in one jaxpr: one compilation.
  xs = [specials(d) for d in INTS]
  names = ["neg", "sign", "square", "pow2", "pow3", "pow5", "pow0", "not",
           "population_count", "clz", "abs"]

  def f(*xs):
    return [_unary(n, x) for x, d in zip(xs, INTS) for n in names
            if n != "abs" or d in SIGNED]

  with purejax.enable_x64(True):
    check(f, *xs, names=[f"{n} {d}" for d in INTS for n in names
                         if n != "abs" or d in SIGNED])


BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "eq", "ne", "lt", "le", "gt", "ge"]


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_binary(dtype):
  x, y = specials(dtype, seed=1), specials(dtype, seed=2)
  x, y = np.concatenate([x, x[:40], x[:40]]), np.concatenate([y, x[:40], -x[:40]])
  exact = BINARY + ["nextafter", "mul_add", "mul_sub"]
  names = exact + ["pow", "atan2"]

  def f(x, y):
    # x * y + z rounds twice: no fused multiply-add may change that.
    fused = [lax.add(lax.mul(x, y), lax.neg(y)), lax.sub(lax.mul(y, y), x)]
    return [getattr(lax, n)(x, y) for n in BINARY + ["nextafter"]] + fused + [
        lax.pow(x, y), lax.atan2(x, y)]

  with purejax.enable_x64(dtype == "float64"):
    expected, got, _ = run_both(f, x, y)
  for name, e, g in zip(names, expected, got):
    assert_same(e, g, 0 if name in exact else 2, name)


def test_int_binary():
  args, names = [], BINARY + ["and", "or", "xor"]
  shift_names = ["shift_left", "shift_right_arithmetic", "shift_right_logical"]
  for dtype in INTS:
    x, y = specials(dtype, seed=1), specials(dtype, seed=2)
    x, y = np.concatenate([x, x[:20]]), np.concatenate([y, x[:20]])
    shifts = (np.arange(x.size) % (np.iinfo(dtype).bits + 6)).astype(dtype)
    if dtype in SIGNED:
      shifts = (shifts.astype(np.int64) - 3).astype(dtype)
    args += [x, y, shifts]

  def f(*args):
    outs = []
    for x, y, s in zip(args[::3], args[1::3], args[2::3]):
      outs += [getattr(lax, n if n not in ("and", "or", "xor") else f"bitwise_{n}")(x, y)
               for n in names] + [getattr(lax, n)(x, s) for n in shift_names]
    return outs

  with purejax.enable_x64(True):
    check(f, *args, names=[f"{n} {d}" for d in INTS for n in names + shift_names])


def test_bool_ops():
  x, y = specials("bool", seed=1), specials("bool", seed=2)
  names = ["and", "or", "xor", "max", "min", "eq", "ne", "lt", "le", "gt", "ge"]

  def f(x, y):
    outs = [getattr(lax, f"bitwise_{n}" if n in ("and", "or", "xor") else n)(x, y)
            for n in names]
    return outs + [lax.bitwise_not(x), lax.select(x, y, lax.bitwise_not(y))]

  check(f, x, y, names=names + ["not", "select"])


CONVERT_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "float32",
                  "int64", "uint64", "float64"]


def test_convert_element_type():
  xs = []
  for src in CONVERT_DTYPES:
    x = specials(src)
    if np.dtype(src).kind == "f":
      # The NumPy impl does not saturate 64-bit targets (it wraps to INT64_MIN);
      # the C code saturates as XLA does, so compare where the value fits.
      x = np.where(np.abs(x) < 9e18, x, np.array(1.5, src))
    xs.append(x)
  pairs = [(s, d) for s in CONVERT_DTYPES for d in CONVERT_DTYPES if s != d]

  def f(*xs):
    by_dtype = dict(zip(CONVERT_DTYPES, xs))
    return [lax.convert_element_type(by_dtype[s], d) for s, d in pairs]

  with purejax.enable_x64(True):
    check(f, *xs, names=[f"{s} -> {d}" for s, d in pairs])


def test_convert_saturates_like_jax():
  x = np.array([1e19, -1e19, np.inf, -np.inf, np.nan, 2.0 ** 63, 3e9, -5.0])
  with purejax.enable_x64(True):
    jaxpr, _ = trace(lambda x: [lax.convert_element_type(x, d) for d in
                                ("int64", "uint64", "int32", "uint32")], x)
    int64, uint64, int32, uint32 = executable.compile_jaxpr(jaxpr)(x)
  big, small = np.iinfo(np.int64), np.iinfo(np.int32)
  np.testing.assert_array_equal(int64, [big.max, big.min, big.max, big.min, 0, big.max,
                                        3000000000, -5])
  np.testing.assert_array_equal(uint64, [10**19, 0, 2**64 - 1, 0, 0, 2**63, 3000000000, 0])
  np.testing.assert_array_equal(int32, [small.max, small.min, small.max, small.min, 0,
                                        small.max, small.max, -5])
  np.testing.assert_array_equal(uint32, [2**32 - 1, 0, 2**32 - 1, 0, 0, 2**32 - 1,
                                         3000000000, 0])


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_select_n_and_clamp(dtype):
  x, lo, hi = specials(dtype, seed=1), specials(dtype, seed=2), specials(dtype, seed=3)
  x = np.concatenate([x, np.zeros(4, dtype), -np.zeros(4, dtype) if dtype == "float32"
                      else np.ones(4, dtype)])
  lo = np.concatenate([lo, -np.zeros(4, dtype) if dtype == "float32" else np.ones(4, dtype),
                       np.zeros(4, dtype)])
  # Ties of signed zeros: which operand max/min return shows in the result.
  hi = np.concatenate([hi, np.ones(4, dtype), -np.zeros(4, dtype) if dtype == "float32"
                       else np.ones(4, dtype)])
  which = (np.arange(x.size) % 5 - 1).astype(np.int32)

  def f(x, lo, hi, which):
    return [lax.clamp(lo, x, hi), lax.clamp(lo[0], x, hi[1]),
            lax.select_n(which, x, lo, hi), lax.select_n(x > lo, x, hi),
            lax.select_n(which > 1, x, lo), lax.select_n(True, x, lo)]

  check(f, x, lo, hi, which)


# -- fusion: chains, broadcasts, reductions -------------------------------------------------

def selu(x, alpha=1.67, lmbda=1.05):
  return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)


def test_selu_is_one_fused_loop():
  x = specials("float32", 5000)
  expected, (got,), compiled = run_both(lambda x: [selu(x)], x)
  # alpha * exp(x) - alpha cancels near 0: compare within exp's rounding.
  np.testing.assert_allclose(got, expected[0], rtol=4e-7, atol=4e-7)
  groups = compiled.plan.groups
  assert len(groups) == 1 and len(compiled.plan.steps) == 1
  assert compiled.source.count("static void kernel_") == 1
  assert "expf(" in compiled.source


def test_intermediates_stay_in_registers():
  x = np.linspace(-3, 3, 64).astype(np.float32)
  compiled = check(lambda x: [jnp.sin(x) * 2 + jnp.cos(x) ** 2 - x], x, tol=1e-6)
  kernel = compiled.source[compiled.source.index("static void kernel_0"):]
  assert kernel.count("q0[") == 1 and "q1" not in kernel.split("int seg_0")[0]


@pytest.mark.parametrize("xshape,yshape", [((5, 1), (1, 7)), ((3, 1, 4), (6, 1)),
                                           ((), (4, 3)), ((4, 3), (3,))])
def test_broadcasting_arithmetic(xshape, yshape):
  rng = np.random.default_rng(0)
  x = rng.standard_normal(xshape).astype(np.float32)
  y = rng.standard_normal(yshape).astype(np.float32)
  check(lambda x, y: [x * y + jnp.exp(y), jnp.maximum(x, y) - x], x, y, tol=1e-6)


def test_index_ops_fuse_as_views():
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

  def f(x):
    t = jnp.transpose(x, (2, 0, 1))                   # (4, 2, 3)
    r = x.reshape(6, 4)[:, ::-1]                      # reshape + rev
    s = x[:, 1:3, ::2]                                # strided slice
    i = lax.broadcasted_iota(jnp.int32, (4, 2, 3), 1)
    e = jnp.expand_dims(x[:, 0, :], 1).squeeze(1)     # (2, 4)
    # A reshape whose offset does not split into the operand's axes.
    w = jnp.transpose(x.reshape(4, 6)).reshape(24)[1:21].reshape(5, 4)
    return [t * 2 + i, r + 1, s - 1, e * e, x.reshape(4, 6).T + 0.5, w * 3]

  compiled = check(f, x)
  assert all(type(s) is fusion.Group for s in compiled.plan.steps)


@pytest.mark.parametrize("shape,new", [((4, 8, 8), (16, 16)), ((2, 6, 10), (12, 10)),
                                       ((3, 4, 5, 6), (5, 72)), ((8, 8, 8), (2, 256))])
def test_row_major_reshape_reads_stay_affine(shape, new):
  """A reshape whose axes do not split evenly into the operand's (rows of
  16 over an (8, 8) plane) still reads the operand at the same flat offset:
  no division in the kernels (it kept loops from vectorizing)."""
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)

  def f(x):
    y = x.reshape(new)
    return [jnp.exp(y - y.max(-1, keepdims=True)).sum(-1), y * 2 + 1]

  compiled = check(f, x)
  from purejax._src.backends.cpu import prelude
  kernels = compiled.source.replace(prelude.PRELUDE, "")
  assert " / " not in kernels.replace("/ ((float)", "") and " % " not in kernels.replace(
      "% 1024", "")


def test_only_cheap_bodies_reduce_around_a_kept_one_in_row_tiles():
  """Tiles of outputs keep each output's lanes in memory between pieces,
  which a body computing much per element pays for (4K aliasing): the sum
  of squares is tiled, the sum of exponentials reduced output by output."""
  x = np.random.default_rng(1).standard_normal((16, 64, 256)).astype(np.float32)
  cheap = check(lambda x: (x * x).sum((0, 2)), x, ulps=0)
  costly = check(lambda x: jnp.exp(x).sum((0, 2)), x, ulps=2)
  assert "_tile[" in cheap.source and "_tile[" not in costly.source
  # Two reductions over the same rows: the variance's second pass is cheap,
  # and takes the mean as its prologue (one pass); logsumexp's is not, and
  # its max is a pass of its own, in row tiles.
  var = check(lambda x: jnp.var(x, (0, 2)), x, ulps=0)
  lse = check(lambda x: purejax.scipy.special.logsumexp(x, (0, 2)), x, ulps=2)
  assert "pa0[" in var.source and "pa0[" not in lse.source and "_tile[" in lse.source


def test_contiguous_loops_are_flattened():
  x = np.ones((3, 4, 5), np.float32)
  compiled = check(lambda x: [x * 2, jnp.transpose(x, (1, 0, 2)) + 1], x)
  from purejax._src.backends.cpu import prelude
  kernels = compiled.source.replace(prelude.PRELUDE, "")   # the shared helpers have loops too
  loops = kernels.count("for (int64_t")
  assert "< 60;" in kernels and loops == 4   # 1 flat loop, 3 for the transpose


@pytest.mark.parametrize("shape,axes", [((6, 7), (0,)), ((6, 7), (1,)), ((6, 7), (0, 1)),
                                        ((3, 4, 5), (0, 2)), ((3, 4, 5), (1,)),
                                        ((3, 1, 5), (1,)), ((5, 40), ()), ((70, 3), (0,))])
def test_reductions_with_fused_producers(shape, axes):
  rng = np.random.default_rng(1)
  x = rng.standard_normal(shape).astype(np.float32)
  i = rng.integers(-50, 50, shape).astype(np.int32)
  b = x > 0.3

  def f(x, i, b):
    y = jnp.exp(x) * 2 - 1
    outs = [lax.reduce_max(y, axes), lax.reduce_min(-y, axes), lax.reduce_prod(i % 3 + 1, axes),
            lax.reduce_sum(i * i, axes), lax.reduce_max(i, axes), lax.reduce_or(b, axes),
            lax.reduce_and(b, axes), lax.reduce_xor(i, axes)]
    if len(axes) == 1:
      outs += [lax.argmax(y, axes[0], jnp.int32), lax.argmin(i, axes[0], jnp.int32)]
    if len(shape) == 3:   # kept axes read in another order than they are stored
      outs += [lax.reduce_sum(jnp.transpose(i, (0, 2, 1)), axes),
               lax.reduce_max(jnp.transpose(y, (2, 1, 0)), axes)]
    return outs

  check(f, x, i, b, tol=1e-6)
  # Sums of floats are reassociated: compare within the rounding of the terms.
  jaxpr, _ = trace(lambda x: [lax.reduce_sum(jnp.sin(x), axes)], x)
  expected = np.sum(np.sin(x.astype(np.float64)), axis=axes)
  got, = executable.compile_jaxpr(jaxpr)(x)
  np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * max(1, np.abs(x).size))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64", "bool", "float64"])
def test_reductions_on_every_dtype(dtype):
  x = specials(dtype, 120).reshape(8, 15)
  if dtype == "float64":
    x = np.where(np.isfinite(x) & (np.abs(x) < 1e3), x, 1.5)
  numeric = dtype != "bool"

  def f(x):
    outs = [lax.reduce_max(x, (0,)), lax.reduce_min(x, (1,)), lax.argmax(x, 1, jnp.int32),
            lax.argmin(x, 0, jnp.int32)]
    if numeric:
      outs += [lax.reduce_sum(x, (1,)), lax.reduce_prod(x, (0,))]
    if dtype != "float64":
      outs += [lax.reduce_and(x, (1,)), lax.reduce_or(x, (0,)), lax.reduce_xor(x, (0, 1))]
    return outs

  with purejax.enable_x64(True):
    check(f, x, tol=1e-12)


def test_pow_with_integer_exponents():
  x = specials("float32", seed=4)
  n = (np.arange(x.size) % 9 - 4).astype(np.int32)
  check(lambda x, n: [lax.pow(x, n), lax.pow(jnp.abs(x), 2.5 * jnp.ones_like(x))], x, n,
        ulps=2)


def test_reduction_special_values():
  x = np.array([[np.nan, 1.0, -np.inf], [0.0, -0.0, -0.0], [-0.0, -0.0, 3.0], [2.0, np.nan, 2.0]],
               np.float32)
  check(lambda x: [lax.reduce_max(x, (1,)), lax.reduce_min(x, (1,)), lax.reduce_max(x, (0,)),
                   lax.reduce_min(x, (0,)), lax.argmax(x, 1, jnp.int32),
                   lax.argmin(x, 0, jnp.int32), lax.reduce_sum(x, (1,))], x)


def test_large_reductions_and_parallel_loops():
  rng = np.random.default_rng(2)
  x = rng.standard_normal((300, 257)).astype(np.float32)
  big = rng.standard_normal(70000).astype(np.float32)
  jaxpr, _ = trace(lambda x, big: [x.mean(0), x.max(1), jnp.argmax(x, 0), jnp.tanh(big),
                                   big.sum()], x, big)
  mean0, max1, amax, tanh, total = executable.compile_jaxpr(jaxpr)(x, big)
  np.testing.assert_allclose(mean0, x.astype(np.float64).mean(0), atol=1e-6)
  np.testing.assert_array_equal(max1, x.max(1))
  np.testing.assert_array_equal(amax, x.argmax(0))
  assert_same(np.tanh(big), tanh, ulps=2)
  np.testing.assert_allclose(total, big.astype(np.float64).sum(), rtol=1e-6)


def test_multi_output_group():
  x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
  # y is stored and also reduced, all in one loop nest.
  compiled = check(lambda x: (lambda y: [y, y.max(1), (y * y).max(1), jnp.abs(x)])(
      jnp.exp(x) - 1), x, tol=1e-6)
  assert len(compiled.plan.steps) == 1


def test_softmax_and_norm():
  x = np.random.default_rng(4).standard_normal((16, 33)).astype(np.float32)

  def softmax(x):
    e = jnp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)

  def norm(x):
    x = x - x.mean(0)
    return x / x.std(0)

  jaxpr, _ = trace(lambda x: [softmax(x), norm(x)], x)
  got_soft, got_norm = executable.compile_jaxpr(jaxpr)(x)
  x64 = x.astype(np.float64)
  e = np.exp(x64 - x64.max(-1, keepdims=True))
  np.testing.assert_allclose(got_soft, e / e.sum(-1, keepdims=True), rtol=2e-6)
  c = x64 - x64.mean(0)
  np.testing.assert_allclose(got_norm, c / c.std(0), rtol=1e-5, atol=1e-6)


def test_host_step_in_the_middle_of_a_chain():
  x = np.random.default_rng(5).standard_normal((4, 6)).astype(np.float32)

  def f(x):
    y = jnp.sin(x) + 1
    z = jnp.sort(y, axis=1)                        # a native step
    # a callback: a host step
    h = purejax.pure_callback(lambda a: np.cos(a), purejax.ShapeDtypeStruct(y.shape, y.dtype),
                              y) * 2
    return [jnp.exp(z) * y, h + z, (y @ y.T).sum(0)]

  compiled = check(f, x, tol=1e-6)
  kinds = [type(s).__name__ for s in compiled.plan.steps]
  assert "HostStep" in kinds and "Group" in kinds


def test_literals_and_inputs_as_outputs():
  x = np.arange(6, dtype=np.int32)
  y = np.float32(2.5)
  compiled = check(lambda x, y: [x, x + 1, y, jnp.float32(3), x * 2, y * y], x, y)
  # Two iteration spaces (x's and a scalar's), called through one entry point.
  assert len(compiled.plan.groups) == 2 and compiled.source.count("int seg_") == 1


def test_views_materialized_for_outputs():
  x = np.arange(12, dtype=np.float32)
  check(lambda x: [x.reshape(3, 4), jnp.broadcast_to(x[:3], (2, 3)),
                   jnp.arange(5, dtype=jnp.float32), lax.broadcasted_iota(jnp.int8, (2, 3), 1),
                   x.astype(jnp.int32)], x)


def test_nested_jit_calls_are_inlined():
  inner = purejax.jit(lambda a, b: jnp.where(a > b, a, b * 2))
  x = np.linspace(-1, 1, 50).astype(np.float32)
  compiled = check(lambda x: [inner(x, -x) + inner(x * 3, x)], x)
  assert len(compiled.plan.steps) == 1


def test_big_iteration_space_runs_on_threads():
  x = np.random.default_rng(6).standard_normal((64, 1024)).astype(np.float32)
  compiled = check(lambda x: [jnp.maximum(x, 0) * x[:, :1], jnp.abs(x).max(0)], x)
  assert "omp parallel for" in compiled.source


# -- the executable ---------------------------------------------------------------------------

def test_non_contiguous_and_scalar_inputs():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  jaxpr, _ = trace(lambda x, s: [x * s + 1, (x * s).sum(0)], x, np.float32(2))
  run = executable.compile_jaxpr(jaxpr)
  for arg in (x, x.T.copy().T, np.asfortranarray(x)):
    out, total = run(arg, np.float32(2))
    np.testing.assert_array_equal(out, x * 2 + 1)
    np.testing.assert_array_equal(total, (x * 2).sum(0))


def test_zero_size_arrays_run_on_numpy():
  x = np.zeros((0, 3), np.float32)
  expected, got, compiled = run_both(lambda x, y: [jnp.exp(x), x.sum(0), y * 2], x,
                                     np.ones(3, np.float32))
  for e, g in zip(expected, got):
    assert_same(e, g)
  assert all(s.eqn.primitive.name != "mul" for s in compiled.plan.steps
             if type(s) is fusion.HostStep)


def test_compile_error_falls_back_to_numpy(monkeypatch):
  def reject(source, **kwargs):
    raise toolchain.CompileError("rejected for the test")

  monkeypatch.setattr(toolchain, "compile_library", reject)
  monkeypatch.setattr(executable, "_warned", set())
  x = np.arange(4, dtype=np.float32)
  jaxpr, _ = trace(lambda x: [jnp.exp(x) + 1], x)
  with pytest.warns(RuntimeWarning, match="rejected for the test"):
    run = executable.compile_jaxpr(jaxpr)
  assert not hasattr(run, "source")
  np.testing.assert_allclose(run(x)[0], np.exp(x) + 1, rtol=1e-6)


def test_debug_prints_plan_and_source(capsys):
  from purejax._src.config import config
  x = np.arange(4, dtype=np.float32)
  jaxpr, _ = trace(lambda x: [jnp.sin(x).sum()], x)
  with config.override("purejax_debug", 2):
    executable.compile_jaxpr(jaxpr)
  err = capsys.readouterr().err
  assert "fusion plan" in err and "reducing axes [0]" in err and "int seg_0" in err


def test_num_threads_flag_reaches_the_source():
  from purejax._src.config import config
  x = np.zeros(1 << 16, np.float32)
  jaxpr, _ = trace(lambda x: [x * 3], x)
  with config.override("purejax_num_threads", 3):
    run = executable.compile_jaxpr(jaxpr)
  assert "num_threads(3)" in run.source or not toolchain.openmp_enabled()
  np.testing.assert_array_equal(run(x + 1)[0], np.full(1 << 16, 3, np.float32))


# -- a small random-jaxpr fuzz ---------------------------------------------------------------

_FUZZ_UNARY = [jnp.negative, jnp.abs, jnp.floor, jnp.sqrt, jnp.square, jnp.exp,
               lambda a: a * 0.5 + 1, jnp.sign, lambda a: jnp.where(a > 0, a, -a),
               lambda a: a.reshape(2, 12).reshape(4, 6), lambda a: a[::-1, ::2].repeat(2, 1),
               lambda a: a.T.reshape(4, 6) * 2, lambda a: (a * 4).astype(jnp.int32) % 5 - 2.0,
               lambda a: jnp.clip(a, -1, 2), lambda a: ((a > 1) | (a < -1)) + 0.0]
_FUZZ_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
                lambda a, b: jnp.where(a < b, a, b * 3), lambda a, b: a / (jnp.abs(b) + 1),
                lambda a, b: a[:, :1] * b[:1, :], lambda a, b: jnp.sort(a, 1) + b]


def _random_program(rng, shape):
  ops = [(int(rng.integers(0, 5)), int(rng.integers(0, 1000)))
         for _ in range(rng.integers(3, 10))]

  def f(x, y):
    vals = [x, y]
    outs = []
    for kind, k in ops:
      a, b = vals[k % len(vals)], vals[(k // 7) % len(vals)]
      if kind == 0:
        v = _FUZZ_UNARY[k % len(_FUZZ_UNARY)](a)
      elif kind == 1:
        v = _FUZZ_BINARY[k % len(_FUZZ_BINARY)](a, b)
      elif kind == 2:
        axis = (0, 1, (0, 1))[k % 3]
        r = [a.max, a.min, a.sum][(k // 3) % 3](axis=axis, keepdims=True)
        v = jnp.broadcast_to(r, shape) - b
      elif kind == 3:
        v = jnp.argmax(a, axis=k % 2, keepdims=True) + b
      else:
        v = a.astype(jnp.int32).astype(jnp.float32) * b
        outs.append(a.sum(axis=k % len(shape)))
      vals.append(v.astype(jnp.float32))
    return outs + vals[2:]

  return f


@pytest.mark.parametrize("seed", range(4))
def test_random_programs(seed):
  rng = np.random.default_rng(seed)
  shape = (4, 6)
  programs = [_random_program(rng, shape) for _ in range(10)]
  x = (rng.standard_normal(shape) * 3).astype(np.float32)
  y = (rng.standard_normal(shape) * 3).astype(np.float32)
  x.flat[:3] = [0.0, -0.0, 2.5]

  def f(x, y):   # ten programs in one jaxpr: one compilation
    return [out for p in programs for out in p(x, y)]

  expected, got, _ = run_both(f, x, y)
  for i, (e, g) in enumerate(zip(expected, got)):
    np.testing.assert_array_equal(np.isnan(g), np.isnan(e))
    np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=f"output {i}")
