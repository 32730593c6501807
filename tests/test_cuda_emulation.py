"""The GPU backend's CUDA kernels, run on the CPU in emulation.

Each test traces a function, runs its fusion plan's CUDA kernels in
emulation (the same CUDA source compiled by the C++ compiler, threads run
one after another) and compares with the C backend (bit for bit where both
compute the same expressions in the same order: arithmetic, conversions,
the prelude's exp/log/tanh, every float reduction) and with float64 NumPy.
The C backend calls glibc's vectorized (libmvec) sin & co., the emulation
the scalar ones: those agree within 2 ulp.  When ``nvcc`` is on PATH the
generated sources are also compiled for a GPU, to keep them valid CUDA.
"""
import shutil
import subprocess

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

from purejax._src.backends.cpu import executable  # noqa: E402
from purejax._src.backends.cuda import kernels, runner  # noqa: E402
from tests.tier_pair import run_traced, trace  # noqa: E402

RNG = np.random.RandomState(0)
_SOURCES = []   # generated CUDA modules, compiled by nvcc at the end


def run_both(f, *args):
  """(C backend's outputs, emulated GPU's outputs) of ``f``."""
  (_, c), (gpu, g) = run_traced(f, args, executable.compile_jaxpr, runner.compile_jaxpr)
  _SOURCES.append(gpu.source)
  return [np.asarray(x) for x in c], [np.asarray(x) for x in g]


def ulps(a, b):
  """Distance in float32/float64 units in the last place."""
  bits = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
  ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
  mask = np.int64(np.iinfo(bits).max)
  return np.abs(np.where(ia < 0, -(ia & mask), ia) - np.where(ib < 0, -(ib & mask), ib))


def assert_same(c, g, ulp=0, what=""):
  assert c.dtype == g.dtype and c.shape == g.shape, what
  if c.dtype.kind != "f" and c.dtype.name not in ("bfloat16",):
    np.testing.assert_array_equal(g, c, err_msg=what)
    return
  nan = np.isnan(c.astype(np.float32))
  np.testing.assert_array_equal(np.isnan(g.astype(np.float32)), nan, err_msg=what)
  if ulp == 0:
    bad = c[~nan].view(f"u{c.itemsize}") != g[~nan].view(f"u{c.itemsize}")
  else:
    bad = ulps(c[~nan], g[~nan]) > ulp
  assert not bad.any(), f"{what}: {c[~nan][bad][:5]} != {g[~nan][bad][:5]}"


def close_to_float64(got, exact, rtol):
  np.testing.assert_allclose(np.asarray(got, np.float64), exact, rtol=rtol, atol=rtol)


# -- elementwise ------------------------------------------------------------------------------

EXACT_UNARY = [jnp.negative, jnp.abs, jnp.floor, jnp.ceil, jnp.round, jnp.sign, jnp.square,
               jnp.sqrt, jnp.exp, jnp.log, jnp.tanh, lambda x: x.astype(jnp.int32),
               lambda x: lax.logistic(x), lambda x: lax.integer_pow(x, 3), jnp.isfinite]
LIBM_UNARY = [jnp.sin, jnp.cos, jnp.arctan, jnp.expm1, jnp.log1p, jnp.sinh]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_float_elementwise_matches_c_backend(dtype):
  x = (RNG.randn(7, 33) * 3).astype(dtype)
  x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
  y = (RNG.rand(7, 33) + 0.5).astype(dtype)

  def f(x, y):
    return ([u(x) for u in EXACT_UNARY] + [x + y, x - y, x * y, x / y, jnp.maximum(x, y),
            jnp.minimum(x, y), x < y, x == y, jnp.where(x > 0, x, y), x ** 2.0,
            jnp.clip(x, -1, 1), jnp.fmod(x, y)] + [u(y) for u in LIBM_UNARY])
  c, g = run_both(f, x, y)
  n = len(c) - len(LIBM_UNARY)
  for i, (a, b) in enumerate(zip(c, g)):
    assert_same(a, b, ulp=0 if i < n else 2, what=f"output {i}")
  y64 = y.astype(np.float64)
  for u, got in zip([np.sin, np.cos, np.arctan, np.expm1, np.log1p, np.sinh], g[n:]):
    close_to_float64(got, u(y64), 1e-6 if dtype == "float32" else 1e-2)


def test_float64_elementwise(x64):
  x = RNG.randn(5, 40)
  y = RNG.rand(5, 40) + 0.5
  c, g = run_both(lambda x, y: [jnp.exp(x) * y - jnp.log(y), jnp.tanh(x) / y,
                                jnp.sqrt(y) + x.astype(jnp.float32),
                                lax.erf_inv(jnp.tanh(x)), lax.erf_inv(jnp.tanh(x).astype(
                                    jnp.float32))], x, y)
  for i, (a, b) in enumerate(zip(c, g)):   # erf_inv: the C library's log1p, scalar or not
    assert_same(a, b, ulp=0 if i < 3 else 2, what=f"output {i}")
  close_to_float64(g[0], np.exp(x) * y - np.log(y), 1e-14)
  from scipy.special import erfinv
  close_to_float64(g[3], erfinv(np.tanh(x)), 1e-13)


def _special_functions(x, y):
  return [lax.digamma(x), lax.polygamma(jnp.full_like(x, 2), y), lax.zeta(y + 1, x),
          lax.igamma(x, y), lax.igammac(x, y), lax.igamma_grad_a(x, y),
          lax.random_gamma_grad(x, y), lax.betainc(x, y, y / (x + y)),
          lax.bessel_i0e(x - 3), lax.bessel_i1e(y - 3)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_functions_run_on_the_device(dtype):
  """digamma, zeta, the incomplete gamma and beta functions and the scaled
  Bessel functions are device functions (no host step): the same double
  code as the C backend's, the same results (the C library's exp and log
  in a loop, scalar or not: within 2 ulp)."""
  x = (RNG.rand(4, 25) * 12 + 0.01).astype(dtype)
  y = (RNG.rand(4, 25) * 12 + 0.01).astype(dtype)
  x[0, :5] = [0.0, -1.0, np.inf, np.nan, -2.5]
  with config.override("jax_enable_x64", dtype == "float64"):
    (_, c), (gpu, g) = run_traced(_special_functions, (x, y), executable.compile_jaxpr,
                                  runner.compile_jaxpr)
  _SOURCES.append(gpu.source)
  assert getattr(gpu, "on_host", None) is None and "pj_igamma(" in gpu.source
  for i, (a, b) in enumerate(zip(c, g)):
    assert_same(np.asarray(a), np.asarray(b), ulp=2, what=f"output {i}")
  from scipy import special
  x64_, y64 = x[1:].astype(np.float64), y[1:].astype(np.float64)
  close_to_float64(g[0][1:], special.digamma(x64_), 1e-5)
  close_to_float64(g[3][1:], special.gammainc(x64_, y64), 1e-5)
  close_to_float64(g[7][1:], special.betainc(x64_, y64, y64 / (x64_ + y64)), 1e-5)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int8", "uint32"])
def test_integer_elementwise_matches_c_and_numpy(dtype):
  info = np.iinfo(dtype)
  x = RNG.randint(info.min, info.max, size=(9, 31), dtype=np.int64).astype(dtype)
  y = RNG.randint(info.min, info.max, size=(9, 31), dtype=np.int64).astype(dtype)
  y[0, :3] = [0, 1, 0]

  def f(x, y):
    return [x + y, x - y, x * y, x // jnp.where(y == 0, 1, y), x & y, x | y, x ^ ~y,
            jnp.maximum(x, y), x < y, lax.shift_right_logical(x, y % 9),
            lax.shift_left(x, y % 9), lax.population_count(x), lax.clz(x),
            x.astype(jnp.float32), -x, jnp.abs(x)]
  c, g = run_both(f, x, y)
  for i, (a, b) in enumerate(zip(c, g)):
    assert_same(a, b, what=f"output {i}")
  with np.errstate(over="ignore"):
    np.testing.assert_array_equal(g[0], x + y)
    np.testing.assert_array_equal(g[2], x * y)
  np.testing.assert_array_equal(g[11], [[bin(int(v) & ((1 << info.bits) - 1)).count("1")
                                         for v in row] for row in x])


def test_bool_elementwise():
  x = RNG.rand(6, 50) > 0.5
  y = RNG.rand(6, 50) > 0.3
  c, g = run_both(lambda x, y: [x & y, x | ~y, x ^ y, jnp.where(x, 1.5, 2.5),
                                x.astype(jnp.int32) + y], x, y)
  for a, b in zip(c, g):
    assert_same(a, b)
  np.testing.assert_array_equal(g[1], x | ~y)


def test_broadcasts_transposes_reshapes_slices():
  a = RNG.randn(4, 1, 6).astype(np.float32)
  b = RNG.randn(6, 5).astype(np.float32)
  m = RNG.randn(12, 10).astype(np.float32)

  def f(a, b, m):
    return [a + b.T[None], jnp.transpose(a * 2, (2, 0, 1)) - 1,
            m.reshape(4, 3, 2, 5)[:, 1, :, ::2].reshape(4, 6) * 2,
            m[::-1, 2:9:3] + jnp.arange(3, dtype=jnp.float32), jnp.broadcast_to(b[0], (3, 5)) * 3]
  c, g = run_both(f, a, b, m)
  for a_, b_ in zip(c, g):
    assert_same(a_, b_)
  np.testing.assert_array_equal(g[0], a + b.T[None])
  np.testing.assert_array_equal(g[1], np.transpose(a * 2, (2, 0, 1)) - 1)
  np.testing.assert_array_equal(g[3], m[::-1, 2:9:3] + np.arange(3, dtype=np.float32))


# -- reductions ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axes", [((37, 70), (1,)), ((37, 70), (0,)), ((5, 6, 7), (0, 2)),
                                        ((3, 9000), (1,)), ((4097 * 5 + 3,), (0,)),
                                        ((20, 30, 50), (0, 1, 2)), ((9000, 3), (0,))])
def test_float_reductions_bit_for_bit(shape, axes):
  x = RNG.randn(*shape).astype(np.float32)
  x.flat[5] = -0.0

  def f(x):
    return [jnp.sum(x, axes), jnp.max(x, axes), jnp.min(x, axes), jnp.prod(1 + x * 1e-3, axes),
            jnp.sum(jnp.exp(x), axes), jnp.sum(x.astype(jnp.bfloat16), axes)]
  c, g = run_both(f, x)
  for i, (a, b) in enumerate(zip(c, g)):
    assert_same(a, b, what=f"output {i}")
  x64 = x.astype(np.float64)
  close_to_float64(g[0], x64.sum(axes), 1e-5)
  np.testing.assert_array_equal(g[1], x.max(axes))
  close_to_float64(g[3], np.prod(1 + x64 * 1e-3, axes), 1e-5)


# Cumulative reductions in scan_order's blocks: one block, several, and
# more than SCAN_BLOCK blocks (the block totals scanned by blocks too),
# along the first, a middle and the last axis, both directions.
@pytest.mark.parametrize("shape,axis", [((5, 70), 1), ((700, 3), 0), ((4, 300, 6), 1),
                                        ((256 * 256 + 300,), 0), ((2, 257 * 256 + 1), 1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_reductions_bit_for_bit(shape, axis, reverse):
  x = RNG.randn(*shape).astype(np.float32)
  x.flat[:4] = [-0.0, np.nan, 0.0, np.inf] if x.size > 600 else [-0.0, 0.0, 1.0, 2.0]
  ints = np.nan_to_num(x * 1000, posinf=7).astype(np.int32)
  small = np.nan_to_num(x[..., :300] if axis != x.ndim - 1 else x).astype(np.int8)

  def f(x, i, s):
    kw = dict(axis=axis, reverse=reverse)
    return [lax.cumsum(x, **kw), lax.cumprod(1 + x * 1e-3, **kw), lax.cumlogsumexp(x, **kw),
            lax.cummax(x, **kw), lax.cummin(x, **kw), lax.cumsum(i, **kw),
            lax.cumprod(s, **kw), lax.cummax(i, **kw), lax.cumsum(x.astype(jnp.bfloat16), **kw),
            lax.cummin(x.astype(jnp.float16), **kw),
            lax.cumlogsumexp(x * 2, **kw)]   # a second one in the module (its helper once)
  c, g = run_both(f, x, ints, small)
  for k, (a, b) in enumerate(zip(c, g)):
    assert_same(a, b, what=f"output {k}")
  if not np.isnan(x).any():
    along = np.flip(x, axis) if reverse else x
    want = np.cumsum(along.astype(np.float64), axis)
    close_to_float64(g[0], np.flip(want, axis) if reverse else want, 1e-4)
    want = np.maximum.accumulate(along, axis)
    np.testing.assert_array_equal(g[3], np.flip(want, axis) if reverse else want)


def test_float64_reductions(x64):
  x = RNG.randn(3, 10000)
  c, g = run_both(lambda x: [jnp.sum(x, 1), jnp.sum(x), jnp.max(x, 0), jnp.prod(x[:, :50], 1)], x)
  for a, b in zip(c, g):
    assert_same(a, b)
  close_to_float64(g[1], x.sum(), 1e-12)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool"])
def test_integer_and_bool_reductions(dtype):
  x = (RNG.rand(23, 300) > 0.5) if dtype == "bool" else RNG.randint(0, 200, (23, 300)).astype(dtype)

  def f(x):
    outs = [jnp.max(x, 1), jnp.min(x, 0), jnp.any(x, 1) if dtype == "bool" else jnp.sum(x, 0),
            jnp.argmax(x, 1), jnp.argmin(x, 0)]
    return outs + ([jnp.all(x, 0)] if dtype == "bool" else [jnp.sum(x), jnp.prod(x[:3], 0)])
  c, g = run_both(f, x)
  for a, b in zip(c, g):
    assert_same(a, b)
  np.testing.assert_array_equal(g[3], np.argmax(x, 1))
  np.testing.assert_array_equal(g[4], np.argmin(x, 0))


def test_argmax_first_index_and_nans():
  x = RNG.randint(0, 4, (6, 5000)).astype(np.float32)   # many ties
  x[2, 4500] = np.nan
  x[2, 4700] = np.nan
  x[3, 7] = np.nan
  c, g = run_both(lambda x: [jnp.argmax(x, 1), jnp.argmin(x, 1), jnp.argmax(x, 0)], x)
  for a, b in zip(c, g):
    assert_same(a, b)
  np.testing.assert_array_equal(g[0], np.argmax(x, 1))
  np.testing.assert_array_equal(g[1], np.argmin(x, 1))


# -- programs -------------------------------------------------------------------------------

def test_softmax():
  x = (RNG.randn(64, 1000) * 4).astype(np.float32)
  c, g = run_both(lambda x: [purejax.nn.softmax(x, axis=-1), purejax.nn.log_softmax(x, 0)], x)
  for a, b in zip(c, g):
    assert_same(a, b)
  x64 = x.astype(np.float64)
  e = np.exp(x64 - x64.max(-1, keepdims=True))
  close_to_float64(g[0], e / e.sum(-1, keepdims=True), 1e-6)


def test_mlp_forward_and_grad():
  w1 = (RNG.randn(20, 64) * 0.3).astype(np.float32)
  w2 = (RNG.randn(64, 10) * 0.3).astype(np.float32)
  x = RNG.randn(32, 20).astype(np.float32)
  labels = RNG.randint(0, 10, 32)
  onehot = np.eye(10, dtype=np.float32)[labels]

  def loss(params, x, y):
    w1, w2 = params
    h = jnp.tanh(x @ w1)
    logits = h @ w2
    return -jnp.mean(jnp.sum(purejax.nn.log_softmax(logits) * y, -1))

  def f(w1, w2, x, y):
    value, (g1, g2) = purejax.value_and_grad(loss)((w1, w2), x, y)
    return [value, g1, g2]
  c, g = run_both(f, w1, w2, x, onehot)
  for a, b in zip(c, g):   # products: NumPy's BLAS here, the C backend's there
    np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6)
  h = np.tanh(x.astype(np.float64) @ w1)
  logits = h @ w2
  lse = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
  close_to_float64(g[0], -np.mean(np.sum((logits - lse[:, None]) * onehot, -1)), 1e-5)


def test_selected_through_jit():
  x = RNG.randn(8, 300).astype(np.float32)
  f = lambda x: jnp.sum(jnp.exp(x) * 2, axis=1)
  with config.override("purejax_compile_sync", True):
    expected = np.asarray(purejax.jit(f)(x))
    with config.override("purejax_backend", "cuda_emulation"):
      got = purejax.jit(f)(x)
  assert_same(expected, np.asarray(got))


def test_partition_depends_on_shapes_only():
  launch = kernels.Launch("k", 10 ** 9, [])
  assert (launch.grid, launch.threads) == (kernels.MAX_BLOCKS, kernels.THREADS)
  assert kernels.Launch("k", 1000, []).grid == 4


# -- CUDA syntax --------------------------------------------------------------------------

def _complex_sources():
  """Modules with every complex operation the kernels compute (complex64
  and complex128): the device prelude's structs and functions, used."""
  from purejax._src.backends.cpu import fusion
  from purejax._src.backends.cuda import module as cuda_module

  def f(z, w):
    return [z * w - z / w, -z == w, jnp.abs(z), jnp.real(z) + jnp.imag(w), jnp.conj(z),
            lax.complex(jnp.real(z), jnp.imag(z)), z.astype(jnp.complex64).astype(z.dtype),
            jnp.exp(z), jnp.log(z), jnp.sqrt(z), jnp.sin(z), jnp.cos(z), jnp.tan(z),
            jnp.tanh(z), z ** w, lax.integer_pow(z, -3), jnp.expm1(z), jnp.log1p(z),
            jnp.exp2(z), jnp.sign(z), lax.rsqrt(z), lax.logistic(z), z.sum(1), z.prod(0),
            jnp.cumsum(z, 1), jnp.cumprod(z, 0), lax.cummax(z, 1), jnp.arcsin(z),
            jnp.arccos(z), jnp.arctan(z), jnp.arcsinh(z), jnp.arccosh(z), jnp.arctanh(z)]

  def extrema(z, w):   # (not fused with sums: a thread per output)
    return [(w * 2).max(0), z.min(1)]
  sources = []
  for g in (f, extrema):
    for dtype in (np.complex64, np.complex128):
      with config.override("jax_enable_x64", True):
        jaxpr, _ = trace(g, np.ones((4, 5), dtype), np.ones((4, 5), dtype))
      sources.append(cuda_module.generate(fusion.plan_jaxpr(jaxpr)).source)
  return sources


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_generated_sources_compile_with_nvcc(tmp_path):
  if not _SOURCES:   # this test run alone: make a few
    test_float_elementwise_matches_c_backend("float16")
    test_integer_elementwise_matches_c_and_numpy("int32")
    test_float_reductions_bit_for_bit((5, 6, 7), (0, 2))
  _SOURCES.extend(_complex_sources())
  seen = set()
  for i, source in enumerate(_SOURCES):
    if source in seen:
      continue
    seen.add(source)
    path = tmp_path / f"m{i}.cu"
    path.write_text(source)
    proc = subprocess.run(["nvcc", "-ptx", "-arch=sm_80", "--fmad=false", "-diag-suppress",
                           "177", "-o", str(tmp_path / f"m{i}.ptx"), str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
