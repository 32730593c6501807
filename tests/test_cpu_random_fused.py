"""Random sampling under jit on the C backend: threefry2x32, the bits-to-float
chain (shift, or, bitcast_convert_type, sub) and erf_inv compile into the
surrounding fused loops, with no host step, and give the NumPy backend's
bits exactly (and real JAX's: integers exactly, floats within a few ulp).

Each program is jitted once and run on both backends with synchronous
compilation (a gcc run per program, cached on disk).
"""
import numpy as np
import pytest

import purejax
from purejax import lax, random
from purejax._src import pjit
from purejax._src.backends.cpu import fusion, toolchain
from purejax._src.config import config
from purejax._src.random.threefry import threefry2x32_p

from conftest import oracle

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")

SHAPES = [(), (1,), (7,), (3, 5), (2, 0, 3), (1001,), (33, 65)]


def _run_both(f, *args):
  """``jit(f)`` on the NumPy backend and on the C backend: (expected, got,
  the C executable's plan)."""
  jf = purejax.jit(f)
  with config.override("purejax_backend", "numpy"):
    expected = [np.asarray(v) for v in purejax.tree_util.tree_leaves(jf(*args))]
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    got = [np.asarray(v) for v in purejax.tree_util.tree_leaves(jf(*args))]
    exe = pjit.executable_for(jf.trace(*args).jaxpr)
  return expected, got, getattr(exe, "plan", None)


def _host_steps(plan):
  return [s.eqn.primitive.name for s in plan.steps if type(s) is fusion.HostStep]


def _assert_bits_equal(got, expected):
  assert len(got) == len(expected)
  for g, e in zip(got, expected):
    assert g.dtype == e.dtype and g.shape == e.shape
    np.testing.assert_array_equal(g.reshape(-1).view(np.uint8), e.reshape(-1).view(np.uint8))


def _assert_close_to_jax(got, want, ulps=4):
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  if got.dtype.kind != "f":
    np.testing.assert_array_equal(got, want)
    return
  signed = np.dtype(f"int{got.dtype.itemsize * 8}")
  diff = np.abs(got.view(signed).astype(np.int64) - want.view(signed).astype(np.int64))
  # XLA contracts uniform's x * (max - min) + min into one FMA: near 0 that
  # is a few ulps of the operands' scale, not of the result.
  scale = np.finfo(got.dtype).eps * np.abs(want).max(initial=0)
  near = np.abs(got.astype(np.float64) - want) <= ulps * scale
  assert np.all((diff <= ulps) | near), f"{diff[~near].max()} ulps from JAX"


def _samplers(jnp_random, shape):
  """Every sampler under test, as ``name -> f(key)``."""
  return {
      "normal": lambda k: jnp_random.normal(k, shape),
      "uniform": lambda k: jnp_random.uniform(k, shape, minval=-3.7, maxval=5.3),
      "bits": lambda k: jnp_random.bits(k, shape),
      "bits8": lambda k: jnp_random.bits(k, shape, np.uint8),
      "randint": lambda k: jnp_random.randint(k, shape, -50, 1000),
      "split": lambda k: jnp_random.split(k, shape or 3),
      "fold_in": lambda k: jnp_random.fold_in(k, 12345),
  }


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["normal", "uniform", "bits", "bits8", "randint", "split",
                                  "fold_in"])
def test_sampler_matches_numpy_backend_and_jax(name, shape):
  if name == "fold_in" and shape != (7,):
    pytest.skip("fold_in takes no shape")
  key = random.PRNGKey(42)
  f = _samplers(random, shape)[name]
  expected, got, plan = _run_both(f, key)
  _assert_bits_equal(got, expected)
  if plan is not None and all(d > 0 for d in shape):
    # Nothing random runs in NumPy: the cipher is in a kernel.
    assert "threefry2x32" not in _host_steps(plan)
    assert not ({"erf_inv", "bitcast_convert_type"} & set(_host_steps(plan)))
  jax = oracle()
  want = jax.tree_util.tree_leaves(jax.jit(_samplers(jax.random, shape)[name])(
      jax.random.PRNGKey(42)))
  assert len(want) == len(got)
  for g, w in zip(got, want):
    _assert_close_to_jax(g, np.asarray(w))


def test_typed_keys_and_a_batch_of_keys():
  def f(seed):
    keys = random.split(random.key(seed), 4)
    draws = purejax.vmap(lambda k: random.normal(k, (9,)))(keys)
    folded = purejax.vmap(lambda k: random.fold_in(k, 7))(keys)
    return draws, random.key_data(folded), random.uniform(keys[2], (3, 3))
  expected, got, plan = _run_both(f, np.int32(5))
  _assert_bits_equal(got, expected)
  assert "threefry2x32" not in _host_steps(plan)
  jax = oracle()

  def g(seed):
    keys = jax.random.split(jax.random.key(seed), 4)
    draws = jax.vmap(lambda k: jax.random.normal(k, (9,)))(keys)
    folded = jax.vmap(lambda k: jax.random.fold_in(k, 7))(keys)
    return draws, jax.random.key_data(folded), jax.random.uniform(keys[2], (3, 3))
  for a, b in zip(got, jax.tree_util.tree_leaves(jax.jit(g)(np.int32(5)))):
    _assert_close_to_jax(a, np.asarray(b))


def test_4m_normal_samples_run_without_host_steps():
  n = 4_000_000
  f = purejax.jit(lambda k: random.normal(k, (n,)))
  key = random.PRNGKey(0)
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    got = np.asarray(f(key))
    exe = pjit.executable_for(f.trace(key).jaxpr)
    source = f.lower(key).compile().as_text()
  assert _host_steps(exe.plan) == []
  # One kernel over the samples computes the cipher, the floats and erf_inv.
  big = [g for g in exe.plan.groups if g.shape == (n,)]
  assert len(big) == 1
  names = {e.primitive.name for e in big[0].producer.values()}
  assert {"shift_left", "xor", "bitcast_convert_type", "erf_inv"} <= names
  assert "pj_erf_invf(" in source
  with config.override("purejax_backend", "numpy"):
    expected = np.asarray(f(key))
  _assert_bits_equal([got], [expected])


def test_sampling_in_a_scan_body_compiles_the_loop():
  # With the cipher in C, a scan drawing fresh samples at every step has a
  # body that compiles completely: the loop runs natively, not in NumPy.
  def f(key, xs):
    def body(c, i):
      x = random.normal(random.fold_in(key, i), (256,))
      return c + x.sum(), x[:3]
    return lax.scan(body, np.float32(0), xs)
  expected, got, plan = _run_both(f, random.PRNGKey(3), np.arange(10, dtype=np.int32))
  _assert_bits_equal(got, expected)
  assert _host_steps(plan) == []
  assert any(s.describe().startswith("native: scan") for s in plan.steps)


def test_threefry2x32_primitive_broadcasts_in_a_kernel():
  # Operands of different shapes broadcast together, as the impl does.
  rng = np.random.RandomState(1)
  k1 = rng.randint(0, 2 ** 32, (3, 1), dtype=np.uint64).astype(np.uint32)
  k2 = np.uint32(0xDEADBEEF)
  x1 = rng.randint(0, 2 ** 32, (1, 4), dtype=np.uint64).astype(np.uint32)
  x2 = rng.randint(0, 2 ** 32, (4,), dtype=np.uint64).astype(np.uint32)

  def f(k1, k2, x1, x2):
    y1, y2 = threefry2x32_p.bind(k1, k2, x1, x2)
    return y1 + np.uint32(1), y2 ^ x2
  expected, got, plan = _run_both(f, k1, k2, x1, x2)
  _assert_bits_equal(got, expected)
  assert _host_steps(plan) == []
  impl = threefry2x32_p.impl(k1, k2, x1, x2)
  np.testing.assert_array_equal(got[0], impl[0] + np.uint32(1))


def test_threefry2x32_known_answer():
  # The Random123 known-answer vector of Threefry-2x32 (20 rounds), at
  # every point of an array of counters.
  def f(x1, x2):
    return threefry2x32_p.bind(np.uint32(0x13198A2E), np.uint32(0x03707344), x1, x2)
  x1 = np.full((5,), 0x243F6A88, np.uint32)
  x2 = np.full((5,), 0x85A308D3, np.uint32)
  _, got, plan = _run_both(f, x1, x2)
  np.testing.assert_array_equal(got[0], np.full(5, 0xC4923A9C, np.uint32))
  np.testing.assert_array_equal(got[1], np.full(5, 0x483DF7A0, np.uint32))
  assert _host_steps(plan) == []


def _erf_inv_inputs():
  rng = np.random.RandomState(2)
  special = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1.5, -1.0000001,
                      np.nextafter(np.float32(1), np.float32(0)), 1e-45, -1e-45, 1e-38,
                      -1.2e-38, 1e-30, 0.5, -0.5, 0.9933, 0.99327, 0.99330, 0.9999],
                     np.float32)
  dense = np.linspace(-1, 1, 20001, dtype=np.float32)
  tails = (1 - rng.uniform(0, 1e-3, 5000) * rng.choice([1e-4, 1.0], 5000)).astype(np.float32)
  uniform = rng.uniform(-1, 1, 50000).astype(np.float32)
  return np.concatenate([special, dense, tails, -tails, uniform])


def test_erf_inv_float32_is_bit_exact_in_c():
  x = _erf_inv_inputs()
  expected, got, plan = _run_both(lambda x: lax.erf_inv(x) * np.float32(2.0), x)
  assert "erf_inv" not in _host_steps(plan)
  _assert_bits_equal(got, expected)


def test_erf_inv_of_every_uniform_draw_random_normal_can_make():
  # random.normal's uniforms: (m * 2^-23) * 2 + (-1 + 2^-24) for every 23-bit
  # m, clamped below: all 2^23 of them, bit for bit.
  def f(m):
    lo = np.nextafter(np.float32(-1), np.float32(0))
    u = lax.bitcast_convert_type(lax.shift_right_logical(m, np.uint32(9))
                                 | np.uint32(0x3F800000), np.float32) - np.float32(1)
    u = lax.max(lo, u * (np.float32(1) - lo) + lo)
    return lax.erf_inv(u)
  m = np.arange(1 << 23, dtype=np.uint32) << np.uint32(9)
  expected, got, plan = _run_both(f, m)
  assert _host_steps(plan) == []
  _assert_bits_equal(got, expected)


def test_erf_inv_float64_compiles_and_half_agrees():
  # float64 in C: the same polynomials, w from the C library's log1p (a few
  # ulp from the NumPy tier's); float16 through float32, bit for bit.
  x64 = np.concatenate([np.linspace(-1, 1, 100001), [1e-300, -0.0, 1.5, -1.0, np.nan]])
  with config.override("jax_enable_x64", True):
    expected, got, plan = _run_both(lambda x: lax.erf_inv(x * 1.0), x64)
  assert _host_steps(plan) == []
  expected, got = np.asarray(expected[0]), np.asarray(got[0])
  np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
  finite = np.isfinite(expected)
  assert np.all(np.abs(got - expected)[finite] <= 4 * np.spacing(np.abs(expected[finite])))
  assert np.array_equal(got[~finite & ~np.isnan(got)], expected[~finite & ~np.isnan(got)])
  special = pytest.importorskip("scipy.special")
  inside = np.abs(x64) < 0.999
  np.testing.assert_allclose(got[inside], special.erfinv(x64[inside]), rtol=1e-13, atol=1e-300)
  x16 = np.linspace(-0.99, 0.99, 51).astype(np.float16)
  expected, got, _ = _run_both(lambda x: lax.erf_inv(x) * np.float16(2), x16)
  _assert_bits_equal(got, expected)


@pytest.mark.parametrize("src,dst", [(np.float32, np.int32), (np.uint32, np.float32),
                                     (np.int32, np.uint32), (np.float32, np.float32)])
def test_bitcast_convert_type_same_width_in_c(src, dst):
  rng = np.random.RandomState(3)
  x = rng.randint(0, 2 ** 32, 1000, dtype=np.uint64).astype(np.uint32).view(src)
  if np.dtype(src).kind == "f":
    x = np.where(np.isnan(x), np.float32(0.25), x).astype(src)
  expected, got, plan = _run_both(
      lambda x: lax.bitcast_convert_type(x + x, dst) if np.dtype(src).kind != "f" else
      lax.bitcast_convert_type(x * np.float32(2), dst), x)
  _assert_bits_equal(got, expected)
  assert "bitcast_convert_type" not in _host_steps(plan)
