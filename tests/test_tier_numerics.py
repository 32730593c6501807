"""float32 exp, log, logistic and tanh in jitted code: the NumPy twins
(``lax/math_f32.py``, the primitives' ``jit_impl``) give the compiled C
helpers' bits, so jitted functions using them are tiered and still give the
same bits on every call; and their accuracy against float64 NumPy.

PUREJAX_EXHAUSTIVE=1 checks the twins against the C code over every float32
in [-100, 100] (minutes); by default a dense sample of it."""
import os

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import backends
from purejax._src.backends import tier_numerics
from purejax._src.config import config
from purejax._src.lax import elementwise as ew
from purejax._src.lax import math_f32

toolchain = pytest.importorskip("purejax._src.backends.cpu.toolchain")
needs_compiler = pytest.mark.skipif(not toolchain.compiler_available(),
                                    reason="no C compiler")

FUNCTIONS = {"exp": (lax.exp, math_f32.expf, np.exp),
             "log": (lax.log, math_f32.logf, np.log),
             "logistic": (lax.logistic, math_f32.logistic, lambda x: 1 / (1 + np.exp(-x))),
             "tanh": (lax.tanh, math_f32.tanhf, np.tanh)}

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40,
                     1.17549435e-38, -1.17549435e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0,
                     0.5, 88.72, 88.8, 88.9, -87.33, -103.9, -104.0, -104.1, 9.0, 9.1, 10.0,
                     -10.0, 20.0, 1e-4, -1e-4, 2.0 ** -12, 0.3465736, 0.6931472],
                    np.float32)
NAN_PAYLOAD = np.array([0x7fc12345, 0xffc00001, 0x7f800001], np.uint32).view(np.float32)

_CHUNK = 1 << 22


def _bits(lo, hi, step=1):
  """Every ``step``-th float32 bit pattern of [lo, hi] (both finite, same sign
  or zero-straddling), in chunks."""
  ranges = []
  if hi >= 0:
    ranges.append((int(np.float32(max(lo, 0)).view(np.uint32)),
                   int(np.float32(hi).view(np.uint32))))
  if lo < 0:
    ranges.append((int(np.float32(-min(hi, -0.0)).view(np.uint32)) | (1 << 31),
                   int(np.float32(lo).view(np.uint32))))
  for a, b in ranges:
    for start in range(a, b + 1, _CHUNK * step):
      stop = min(start + _CHUNK * step, b + 1)
      yield np.arange(start, stop, step, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _samples():
  """float32 inputs for the bit-for-bit checks."""
  if os.environ.get("PUREJAX_EXHAUSTIVE") == "1":
    yield from _bits(-100.0, 100.0)
  else:
    yield from _bits(-100.0, 100.0, step=241)       # every binade, every mantissa stride
    yield from _bits(-2.0, 2.0, step=7)
    for c in (0.0, 0.35, 1.0, 9.0, 10.0, 88.72, 88.8, -87.33, -103.97, 2.0 ** -126):
      u = int(np.float32(abs(c)).view(np.uint32)) | (1 << 31 if c < 0 else 0)
      for sign in (0, 1 << 31):
        yield np.arange(max(u - (1 << 15), 0), u + (1 << 15), dtype=np.uint64).astype(
            np.uint32).__xor__(np.uint32(sign)).view(np.float32)
  yield SPECIALS
  yield NAN_PAYLOAD


@needs_compiler
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_numpy_twin_gives_the_c_bits(name):
  lax_fn, twin, _ = FUNCTIONS[name]
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(lax_fn)
    for x in _samples():
      c, t = np.asarray(compiled(x)), twin(x)
      assert c.dtype == t.dtype == np.float32
      bad = c.view(np.uint32) != t.view(np.uint32)
      assert not bad.any(), (name, x[bad][:5], c[bad][:5], t[bad][:5])


def test_jit_impl_uses_the_twin_for_float32_only():
  x32 = np.linspace(-5, 5, 1001, dtype=np.float32)
  x64 = x32.astype(np.float64)
  for name, (lax_fn, twin, ref) in FUNCTIONS.items():
    prim = {"exp": ew.exp_p, "log": ew.log_p, "logistic": ew.logistic_p,
            "tanh": ew.tanh_p}[name]
    assert np.asarray(prim.jit_impl(x32)).tobytes() == twin(x32).tobytes()
    with np.errstate(all="ignore"):
      np.testing.assert_array_equal(prim.jit_impl(x64), prim.impl(x64))


def test_the_allowlist_is_float32_only():
  for dtype, tiered in ((np.float32, True), (np.float64, False)):
    with config.override("jax_enable_x64", True):
      jaxpr = jax.make_jaxpr(lambda x: (jnp.tanh(x), jnp.exp(x), jnp.log(x),
                                        jax.nn.sigmoid(x)))(np.ones(3, dtype)).jaxpr
    assert tier_numerics.numpy_tier_exact(jaxpr) is tiered
  jaxpr = jax.make_jaxpr(jnp.sin)(np.ones(3, np.float32)).jaxpr
  assert not tier_numerics.numpy_tier_exact(jaxpr)


@pytest.fixture
def tier_large_jaxprs_too(monkeypatch):
  """Large jaxprs compile before their first call (backends._MAX_TIER_ELEMENTS);
  the tiers are compared on large arrays all the same."""
  monkeypatch.setattr(backends, "_MAX_TIER_ELEMENTS", 1 << 62)


def _first_result_fn(x, c):   # benchmarks/workloads.py's first_result
  y = jnp.tanh(x * c) + jnp.exp(-x * x)
  return jnp.mean(y), jnp.std(y)


@needs_compiler
@pytest.mark.parametrize("f", [
    lambda x: _first_result_fn(x, np.float32(1.5)),
    lambda x: (jnp.log(jnp.abs(x) + 1e-3), jax.nn.sigmoid(x) * jnp.tanh(x)),
    lambda x: jnp.mean(jnp.log1p(x * x) + jnp.exp(x / 4) * jnp.tanh(2 * x - 1), axis=0),
    lambda x: (jax.nn.softmax(x, axis=1), jax.nn.logsumexp(x, axis=0), jax.nn.gelu(x)),
], ids=["first_result", "log_sigmoid_tanh", "log1p_exp_tanh_mean", "softmax_lse_gelu"])
def test_jitted_transcendentals_are_tiered_and_give_the_same_bits(f, tier_large_jaxprs_too):
  x = np.random.default_rng(0).standard_normal((301, 1027)).astype(np.float32) * 4
  jaxpr = jax.make_jaxpr(f)(x)
  uses_log1p = any(e.primitive.name == "log1p" for e in jaxpr.jaxpr.eqns)
  with config.override("purejax_compile_sync", False):
    run = backends.compile_jaxpr(jaxpr.jaxpr, "cpu")
  tiered = isinstance(run, backends._Tiered)
  assert tiered != uses_log1p   # log1p: C and NumPy differ, so it compiles first
  first = run(*jaxpr.consts, x)
  if tiered:
    assert run._compiled is None and run._thread is None   # no wait for gcc
    run.wait()
    assert run._compiled is not run._numpy and hasattr(run._compiled, "source")
  later = run(*jaxpr.consts, x)
  for a, b in zip(first, later):
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _ulp_error(y, ref):
  """|y - ref| in float32 ulps of ref (float64); inf where y is wrong at a
  non-finite or overflowing ref."""
  y64 = y.astype(np.float64)
  _, e = np.frexp(ref)
  ulp = np.ldexp(1.0, np.maximum(e - 24, -149))
  finite = np.isfinite(ref) & (np.abs(ref) <= np.finfo(np.float32).max)
  err = np.where(finite, np.abs(y64 - ref) / ulp, 0.0)
  same = (y64 == ref) | (np.isnan(y64) & np.isnan(ref))
  ovf = ~finite & ~np.isnan(ref)
  return np.where(~finite & ~same & ~(ovf & np.isinf(y64) & (np.sign(y64) == np.sign(ref))),
                  np.inf, err)


@pytest.mark.parametrize("name,bound", [("exp", 1.5), ("log", 1.0), ("tanh", 1.5),
                                        ("logistic", 2.5)])
def test_accuracy_against_float64(name, bound):
  _, twin, ref = FUNCTIONS[name]
  worst = 0.0
  with np.errstate(all="ignore"):
    for x in list(_bits(-100.0, 100.0, step=97)) + [SPECIALS]:
      if name == "log":
        x = np.abs(x)
      if name == "logistic":   # 1 / (1 + exp(-x)): 0 once exp(-x) overflows
        x = x[~(x < -88.72)]
      err = _ulp_error(twin(x), ref(x.astype(np.float64)))
      worst = max(worst, float(err.max()))
  assert worst <= bound, (name, worst)


def test_tanh_special_values():
  x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-30, 9.5, -30.0],
               np.float32)
  y = math_f32.tanhf(x)
  assert y[0] == 0 and not np.signbit(y[0]) and y[1] == 0 and np.signbit(y[1])
  assert y[2] == 1 and y[3] == -1 and np.isnan(y[4])
  assert y[5] == x[5] and y[6] == x[6] and y[7] == x[7]
  assert y[8] == 1 and y[9] == -1
