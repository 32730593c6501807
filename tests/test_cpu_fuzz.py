"""Differential fuzz: the C backend against the NumPy backend on random programs.

benchmarks/fuzz.py generates the programs (random chains of jnp/lax
operations, shapes, dtypes and control flow) and compares the backends:
integers, booleans and exactly rounded floats bit for bit, other floats
within a bound carried through the program.  Here a few hundred programs
from fixed seeds run, 30 per compilation; the script runs many more
(``python benchmarks/fuzz.py --programs 5000``).
"""
import functools
import os
import signal
import sys
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import backends
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
import fuzz  # noqa: E402
import fuzz_bounds  # noqa: E402
from fuzz_programs import Program, Stmt, Val  # noqa: E402

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")

PER_BATCH = 30
# A real backend bug found by the fuzz keeps its family failing, as
# pytest.mark.xfail(strict=True, reason=...), until it is fixed.
KNOWN_BUGS = {}


@functools.lru_cache(maxsize=None)
def _programs(family, seed, count=PER_BATCH):
  gen = fuzz.Gen(seed, family)
  return [gen.program() for _ in range(count)]


def _explain(programs, report):
  lines = []
  for f in report.failures[:5]:
    lines.append(repr(f))
    lines += ["    " + d for d in f.details]
    if f.program is not None:
      p = programs[f.program]
      out = p.outputs[f.output] if f.output is not None else None
      lines.append((p.restricted([out]) if out else p).source())
  return "\n".join(lines)


# One batch (one compilation) per family, and a second of everything mixed.
BATCHES = [(family, 1000 + i) for i, family in enumerate(sorted(fuzz.FAMILIES))] + [
    ("mixed", 2000)]


def _family_params():
  for family, seed in BATCHES:
    bug = KNOWN_BUGS.get(family)
    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug else []
    yield pytest.param(family, seed, id=f"{family}-{seed}", marks=marks)


@pytest.mark.parametrize("family,seed", _family_params())
def test_random_programs_agree(family, seed):
  programs = _programs(family, seed)
  report = fuzz.check_batch(programs)
  assert not report.failures, _explain(programs, report)
  assert report.stats["programs"] == len(programs)
  assert report.stats["compiled batches"] == 1   # C code ran, not a fallback


@pytest.mark.parametrize("family,seed", [("mixed", 2000), ("control", 2001), ("index", 2002)])
def test_random_programs_agree_on_the_emulated_gpu(family, seed, monkeypatch):
  """The GPU backend's kernels (emulated) in the C backend's place
  (``fuzz.py --target cuda_emulation``)."""
  monkeypatch.setattr(fuzz, "TARGET", "cuda_emulation")
  programs = _programs(family, seed)
  report = fuzz.check_batch(programs)
  assert not report.failures, _explain(programs, report)
  assert report.stats["compiled batches"] == 1   # the GPU module ran, not the host fallback


def test_through_jit():
  """The same programs through ``purejax.jit`` (the user's path: pjit,
  executable cache, tiered compilation made synchronous)."""
  programs = _programs("mixed", 2000)
  jaxpr, args = fuzz._trace(programs)
  bounded = fuzz_bounds.bounded_eval(jaxpr, args)
  f = purejax.jit(fuzz.batch_function(programs))
  arrays = [a for p in programs for a in p.arrays()]
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    got = f(*arrays)
  assert len(got) == len(bounded)
  for i, ((value, bound), g) in enumerate(zip(bounded, got)):
    assert fuzz_bounds.compare(value, np.asarray(g), bound)[0] is None, i


# -- backend bugs the fuzz found, reduced ---------------------------------------------------

def _both_backends(f, *args):
  with config.override("purejax_backend", "numpy"):
    expected = [np.asarray(o) for o in purejax.jit(f)(*args)]
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    got = [np.asarray(o) for o in purejax.jit(f)(*args)]
  return expected, got


def test_pow_one_half_at_minus_inf_and_minus_zero():
  """JAX gives +inf and +0.0 (IEEE pow); NumPy's np.power takes a sqrt
  shortcut for a scalar 0.5 (nan, -0.0), and so does gcc where it vectorizes
  powf(x, 0.5f), so the C result depended on what else was in the loop."""
  x = np.array([[-np.inf], [-0.0], [4.0]], np.float32)
  jax_values = np.array([[np.inf], [0.0], [2.0]], np.float32)   # JAX 0.10
  for f in (lambda x: [x ** 0.5],                                    # vectorized
            lambda x: [x ** 0.5, jnp.log(x), jnp.mean(x, axis=1)]):  # scalar loop
    expected, got = _both_backends(f, x)
    for out in (expected[0], got[0]):
      assert fuzz_bounds._bits_equal(out, jax_values).all(), out.ravel()


def test_scatter_max_min_order_signed_zeros():
  # JAX orders -0.0 below +0.0, as lax.max/min; np.maximum.at keeps either.
  x = np.array([0.0, -0.0, 1.0, -0.0], np.float32)
  idx = jnp.array([0, 1, 3])
  f = lambda x: [x.at[idx].max(jnp.array([-0.0, 0.0, -0.0], jnp.float32)),  # noqa: E731
                 x.at[idx].min(jnp.array([-0.0, 0.0, 0.0], jnp.float32))]
  jax_values = [np.array([0.0, 0.0, 1.0, -0.0], np.float32),   # JAX 0.10
                np.array([-0.0, -0.0, 1.0, -0.0], np.float32)]
  expected, got = _both_backends(f, x)
  for outs in (expected, got):
    for out, want in zip(outs, jax_values):
      assert fuzz_bounds._bits_equal(out, want).all(), out


def test_generator_covers_the_features():
  """The programs above use what the fuzz is meant to exercise."""
  names = set()
  for family, seed in BATCHES:
    jaxpr, _ = fuzz._trace(_programs(family, seed))

    def walk(jaxpr):
      for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for sub in fuzz_bounds._sub_jaxprs(eqn):
          walk(sub.jaxpr)
    walk(jaxpr)
  wanted = {"exp", "log", "sin", "tanh", "logistic", "pow", "atan2", "rem", "div", "shift_left",
            "shift_right_logical", "shift_right_arithmetic", "and", "xor", "not",
            "population_count", "convert_element_type", "select_n", "clamp", "broadcast_in_dim",
            "reshape", "transpose", "slice", "rev", "squeeze", "concatenate", "pad",
            "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin",
            "cumsum", "dot_general", "dynamic_slice", "dynamic_update_slice", "gather",
            "scatter-add", "iota", "cond", "scan", "while"}
  assert wanted <= names, sorted(wanted - names)


def test_inputs_have_edge_cases():
  x = fuzz.make_input((4000,), "float32", 3)
  assert np.isnan(x).any() and np.isinf(x).any() and (np.signbit(x) & (x == 0)).any()
  assert (np.abs(x) < np.finfo(np.float32).tiny).any()   # denormals (and zeros)
  i = fuzz.make_input((4000,), "int8", 3)
  assert i.min() == -128 and i.max() == 127
  assert fuzz.make_input((5, 3), "uint32", 9).dtype == np.uint32
  again = fuzz.make_input((7,), "int32", 5)
  np.testing.assert_array_equal(fuzz.make_input((7,), "int32", 5), again)


def test_generator_is_deterministic():
  a = [p.source() for p in _programs("mixed", 5, 4)]
  b = [p.source() for p in _programs("mixed", 5, 4)]
  assert a == b and len(set(a)) == 4


# -- the comparison can fail -----------------------------------------------------------------

def test_compare_is_bit_exact_without_a_bound():
  e = np.array([1.0, -0.0, np.nan, 3.0], np.float32)
  assert fuzz_bounds.compare(e, e.copy(), None)[0] is None
  assert fuzz_bounds.compare(e, np.array([1.0, 0.0, np.nan, 3.0], np.float32), None)[0]
  assert fuzz_bounds.compare(e, np.nextafter(e, np.float32(9)), None)[0]
  assert fuzz_bounds.compare(e, e.astype(np.float64), None)[0].startswith("expected float32")
  assert fuzz_bounds.compare(np.arange(3), np.arange(3) + [0, 0, 1], None)[1].tolist() == [2]


def test_compare_within_a_bound():
  e = np.array([1.0, 2.0, np.inf, np.nan], np.float32)
  bound = np.array([1e-6, np.inf, 0.0, 1.0])
  near = np.array([1.0000001, -7.0, np.inf, np.nan], np.float32)
  assert fuzz_bounds.compare(e, near, bound)[0] is None
  far = np.array([1.001, 2.0, np.inf, 5.0], np.float32)
  assert fuzz_bounds.compare(e, far, bound)[1].tolist() == [0, 3]


def test_pow_of_a_negative_base_with_a_moving_exponent_is_unbounded():
  """(-1334830)**(-1334830) is 0, (-1334830.1)**(-1334830.1) NaN: where the
  base may be negative and the exponent carries an error, pow's result
  is unbounded (seed 75's mixed program 16, after a dot product)."""
  x = np.array([[-1334830.1, 5.708157]], np.float32)
  closed = purejax.make_jaxpr(lambda x: jnp.power(x @ np.eye(2, dtype=np.float32),
                                                  x @ np.eye(2, dtype=np.float32)))(x)
  ((value, bound),) = fuzz_bounds.bounded_eval(closed.jaxpr, [x], consts=closed.consts)
  assert np.isnan(value[0, 0]) and bound[0, 0] == np.inf
  assert 0 < bound[0, 1] < 1e-3 * value[0, 1]


def test_bounds_follow_the_program():
  """A transcendental result gets a few ulp; an exact chain on it keeps a
  proportional bound; an exact program gets none."""
  x = np.linspace(0.5, 3, 11).astype(np.float32)
  closed = purejax.make_jaxpr(lambda x: (jnp.exp(x), jnp.exp(x) * 4 - 1, x * 3 + 1,
                                         jnp.sum(x)))(x)
  (e, be), (c, bc), (a, ba), (s, bs) = fuzz_bounds.bounded_eval(closed.jaxpr, [x],
                                                                consts=closed.consts)
  eps = np.finfo(np.float32).eps
  np.testing.assert_allclose(be, 4 * eps * e, rtol=1e-6)
  assert (bc >= 4 * be).all() and (bc < 30 * eps * np.abs(c)).all()
  assert ba is None and bs > 0


def test_taint_rejects_discontinuities():
  x = purejax.ShapeDtypeStruct((3,), jnp.float32)
  loop = lambda body: lambda x: lax.fori_loop(0, 3, body, x)  # noqa: E731
  for f, tainted, ok in [
      (lambda x: jnp.floor(x * 2), True, True),     # monotone: bounds pass through
      (lambda x: jnp.exp(x) + 1, True, True),
      (lambda x: (jnp.exp(x) > 1, ), False, False),
      (lambda x: jnp.exp(x).astype(jnp.int32), False, False),
      (lambda x: lax.rem(x, 2.0), True, False),
      (loop(lambda i, c: jnp.where(c > 0, c, 1.0)), False, True),
      (loop(lambda i, c: jnp.where(c > 0, c, 1.0)), True, False),
      # The carry becomes inexact in the first trip, then is compared.
      (loop(lambda i, c: jnp.where(c > 0, jnp.exp(c), 1.0)), False, False)]:
    jaxpr = purejax.make_jaxpr(f)(x).jaxpr
    assert fuzz_bounds.taint_flow(jaxpr, [tainted])[0] == ok


# -- fallbacks never crash -------------------------------------------------------------------

def _small_batch():
  return _programs("elementwise", 77, 3)


def test_compile_error_falls_back(monkeypatch):
  def reject(source, **kwargs):
    raise toolchain.CompileError("rejected by the fuzz test")

  monkeypatch.setattr(toolchain, "compile_library", reject)
  jaxpr, args = fuzz._trace(_small_batch())
  with config.override("purejax_backend", "numpy"):
    expected = backends.compile_jaxpr(jaxpr, "numpy")(*args)
  got, compiled, fallbacks = fuzz.run_c(jaxpr, args)
  assert not compiled and any("rejected by the fuzz test" in m for m in fallbacks)
  for e, g in zip(expected, got):
    assert fuzz_bounds.compare(e, g, None)[0] is None


def _raise(error):
  def fail(*args, **kwargs):
    raise error
  return fail


@pytest.mark.parametrize("where,error", [
    ("compile_library", toolchain.CompileError("gcc says no")),
    ("executable", RuntimeError("a bug in the code generator"))])
def test_a_failing_build_in_the_background_falls_back(monkeypatch, where, error):
  from purejax._src.backends.cpu import executable
  if where == "compile_library":
    monkeypatch.setattr(toolchain, "compile_library", _raise(error))
  else:
    monkeypatch.setattr(executable, "compile_jaxpr", _raise(error))
  x = np.linspace(-2, 2, 9).astype(np.float32)
  jaxpr = purejax.make_jaxpr(lambda x: jnp.sqrt(x * x) * 2 + x)(x).jaxpr   # tiered: exact
  with config.override("purejax_backend", "cpu"), config.override(
      "purejax_compile_sync", False), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    exe = backends.compile_jaxpr(jaxpr, "cpu")   # tiered: NumPy first, C later
    first = exe(x)[0]
    exe.wait()
    later = exe(x)[0]
  with np.errstate(all="ignore"):
    np.testing.assert_array_equal(first, np.sqrt(x * x) * 2 + x)
  np.testing.assert_array_equal(later, first)


def test_unsupported_primitives_run_beside_compiled_code():
  x = fuzz.make_input((5, 6), "float32", 4)
  lines = [("y", "jnp.sin(x) + 1"),
           ("h", "(y.astype(jnp.float16) * 2).astype(jnp.float32)"),   # no C float16
           ("s", "jnp.sort(y, axis=1) + h"),
           ("c", "jnp.cumsum(y * 2, axis=0)"),
           ("e", "lax.erf_inv(jnp.clip(y * 0.1, -0.9, 0.9)) - y")]
  stmts = [Stmt([f"{n} = {e}"], [Val(n, (5, 6), "float32", False)], ["x", "y", "h"])
           for n, e in lines]
  p = Program([(Val("x", x.shape, "float32"), ("value", x))], stmts, ["s", "c", "e"])
  report = fuzz.check_batch([p])
  assert not report.failures and report.stats["compiled batches"] == 1


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_crashing_or_hanging_batch_is_reported():
  def crash():
    import faulthandler
    faulthandler.disable()   # pytest's would print the child's stack
    os.kill(os.getpid(), signal.SIGSEGV)

  def hang():
    import time
    time.sleep(30)

  results = dict(fuzz.run_isolated([crash, hang, fuzz.Report], timeout=1, parallel=3))
  assert results[0].failures[0].kind == "crash" and "SIGSEGV" in results[0].failures[0].message
  assert results[1].failures[0].kind == "timeout"
  assert results[2].failures == []


def test_reduction_finds_the_failing_statement():
  """With a fake backend that gets one statement wrong, the reproducer ends
  with that statement, its small operands replaced by their values."""
  programs = _programs("elementwise", 11, 12)
  target = next(i for i, p in enumerate(programs) if len(p.stmts) >= 4)
  bad_line = programs[target].stmts[2].lines[-1]

  def run(progs):
    report = fuzz.Report()
    for i, p in enumerate(progs):
      if any(bad_line in s.lines for s in p.stmts):
        report.failures.append(fuzz.Failure("mismatch", i, 0, "fake"))
    return report

  progs, failure = fuzz.reduce_failure(programs, fuzz.Failure("mismatch", target, 0), run)
  assert len(progs) == 1 and failure.kind == "mismatch"
  stmts = progs[0].stmts
  assert stmts[-1].lines[-1] == bad_line
  assert all(_size(v.shape) > 64 for s in stmts[:-1] for v in s.outs)
  text = fuzz.reproducer(progs, failure)
  assert bad_line in text and "purejax_backend', 'cpu'" in text
  compile(text, "<reproducer>", "exec")


def _size(shape):
  return int(np.prod(shape))
