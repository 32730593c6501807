"""benchmarks/fuzz.py's JAX oracle mode runs programs (skipped without JAX)."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("jax")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

import fuzz  # noqa: E402
import fuzz_oracle  # noqa: E402
from fuzz_programs import Gen, make_input  # noqa: E402


def test_oracle_runs_a_few_programs():
  gen = Gen(7, "elementwise", 4)
  report = fuzz_oracle.check_batch_oracle([gen.program() for _ in range(4)])
  assert report.stats["programs"] == 4 and report.stats["outputs"] >= 4
  assert all(f.kind in ("mismatch", "generator") for f in report.failures)


def test_oracle_comparison_is_dtype_aware():
  assert fuzz_oracle.compare_oracle(np.array([1, 2], np.int32), np.array([1, 3], np.int32))[0]
  f = np.array([1.0, np.nan], np.float32)
  assert fuzz_oracle.compare_oracle(f, np.nextafter(f, np.float32(2)))[0] is None
  assert fuzz_oracle.compare_oracle(f, np.array([1.0, 0.0], np.float32))[0]
  assert fuzz_oracle.compare_oracle(f, f.astype(np.float64))[0]


def test_edges_family_generates():
  gen = Gen(3, "edges", 4)
  assert [gen.program() for _ in range(3)]
  assert fuzz.main(["--oracle", "jax", "--family", "edges", "--programs", "2",
                    "--no-fork", "--no-reduce", "--max-reports", "0"]) in (0, 1)


def _program(source_lines, inputs, outputs):
  """A Program from statement lines over ``inputs`` (name -> array)."""
  from fuzz_programs import Program, Stmt, Val
  vals = [(Val(n, np.shape(a), np.asarray(a).dtype), ("value", np.asarray(a)))
          for n, a in inputs.items()]
  stmts = [Stmt([line], [Val(line.split(" = ")[0], (), np.float32)], list(inputs))
           for line in source_lines]
  return Program(vals, stmts, outputs, "test")


def _known(program, x64=False):
  from purejax._src.config import config
  with config.override("jax_enable_x64", x64):
    jaxpr, args = fuzz._trace([program])
    got = fuzz.run_c(jaxpr, args)[0]
  expected = fuzz_oracle.run_jax([program], x64)
  constants = len(args) - len(program.arrays())   # _trace's first arguments
  return fuzz_oracle._KnownDeviations(jaxpr, args, x64, constants), \
      [np.asarray(e) for e in expected], \
      [np.asarray(g) for g in got]


@pytest.mark.parametrize("x64", [False, True])
def test_the_oracle_reproducer_runs_purejax_against_jax(x64):
  program = _program(["v = jnp.sin(x) * 2"], {"x": np.arange(5.0, dtype=np.float32)}, ["v"])
  text = fuzz.reproducer([program], fuzz.Failure("mismatch", 0, 0), oracle_x64=x64)
  import jax as real_jax
  from purejax._src.config import config
  before = real_jax.config.jax_enable_x64, config.jax_enable_x64
  scope = {}
  try:   # (the reproducer sets both libraries' x64 flag)
    exec(compile(text, "<reproducer>", "exec"), scope)
  finally:
    real_jax.config.update("jax_enable_x64", before[0])
    config.update("jax_enable_x64", before[1])
  got, expected = scope["got"], scope["expected"]
  assert type(got[0]).__module__.startswith("purejax")
  assert type(expected[0]).__module__.startswith("jax")
  np.testing.assert_allclose(np.asarray(got[0]), np.asarray(expected[0]), rtol=1e-6)


@pytest.mark.parametrize("lines,inputs,x64,deviation", [
    # XLA simplifies abs(x * x) to x * x, also where int8 wraps
    (["v = jnp.abs(x * x)"], {"x": np.array([12, -12, 3], np.int8)}, False, "abs(x*x)"),
    # ... and folds x * x >= 0 to True (a one-term dot is a product)
    (["v = 0 <= jnp.inner(x, x)"], {"x": np.array([12], np.int8)}, False, "square with 0"),
    (["v = (x * x < 0) | (x > 100)"], {"x": np.array([12, 3, -12], np.int8)}, False,
     "square with 0"),
    (["v = 0.0 <= jnp.square(x)"], {"x": np.array([np.nan, 2.0], np.float32)}, True,
     "square with 0"),
    # XLA:CPU's gather keeps the low 32 bits of a 64-bit index
    (["v = jnp.take(x, i)"], {"x": np.arange(10.0), "i": np.array([2**32 + 3, 5])}, True,
     "64-bit gather index"),
    # XLA:CPU flushes the subnormal sigmoid(-88) to zero
    (["v = jax.nn.silu(x)"], {"x": np.array([-88.0, 1.0], np.float32)}, False, "subnormals"),
    # XLA's cumulative sum is less accurate; arcsin is NaN just past 1
    (["v = jnp.arcsin(jnp.cumsum(jnp.full((65537,), 0.1, jnp.float32)))"], {}, False,
     "float rounding"),
    # XLA's tanh differs by an ulp, and gelu's 1 + tanh(...) cancels
    (["v = jax.nn.gelu(x)"], {"x": np.array([-3.0, -4.0, -2.9082701, 1.0], np.float32)},
     False, "float rounding"),
    # a flushed subnormal quotient: XLA's fused floor_divide(0, 0) is -1
    # (its division by the quotient regrouped, (r))
    (["v = jnp.floor_divide(b / a, b / a) + b"],
     {"a": np.array([-3.4e38, 2.0], np.float32), "b": np.array([-0.5, 3.0], np.float32)}, False,
     "subnormals flushed"),
    # XLA:CPU's large max reductions drop NaN
    (["v = lax.reduce_max(x, (0,))"], {"x": np.r_[np.ones(40960, np.float32), np.nan]}, False,
     "NaN dropped"),
    (["v = jnp.max(x, axis=0)"], {"x": np.where(np.arange(3 * 129 * 113).reshape(3, 129, 113) % 7,
                                                 np.float32(2), np.nan)}, False, "NaN dropped"),
    (["v = lax.reduce_min(x, (0, 3)) + lax.broadcasted_iota(jnp.float32, (2, 41), 1)"],
     {"x": make_input((11, 2, 41, 47), "float32", 185557360, "normal")}, False, "NaN dropped"),
    (["v = x / -1.5 + jnp.max(x, axis=3, keepdims=True)"],
     {"x": make_input((11, 2, 41, 47), "float32", 611956029, "normal")}, True, "NaN"),
    (["v = jnp.max(x, axis=3, keepdims=True)"],
     {"x": make_input((11, 2, 41, 47), "float32", 611956029, "normal")}, True, "NaN dropped"),
    # XLA: log(rsqrt(x)) is -0.5 * log(x), log(exp(x)) is x, convert(bool) * x a select
    (["v = jnp.log2(lax.rsqrt(x))"], {"x": np.array([-0.0, 4.0], np.float32)}, False,
     "log(rsqrt(x))"),
    (["v = jnp.log(jnp.exp(x))"], {"x": np.array([100.0, 1.0], np.float32)}, False,
     "log(exp(x))"),
    # ... also through a switch with a known index, which XLA inlines (seed 144)
    (["v = jnp.log(lax.switch(1, [lambda a: a, lambda a: lax.pow(a, a)], x))"],
     {"x": np.array([-1.0, -2.0, 3.0], np.float32)}, True, "log(pow(a, b))"),
    (["v = jnp.log2(jnp.asarray(x, dtype=jnp.int32) ** y)"],
     {"x": np.array([-3.0, 5.0, 2.0], np.float32), "y": np.array([0.5, 1.5, 2.0], np.float32)},
     False, "log(pow(a, b))"),
    (["v = x.astype(jnp.float32) * np.float32(np.inf)"], {"x": np.array([False, True])}, False,
     "convert(bool)"),
    # XLA divides by a broadcast value through its (flushed) reciprocal
    (["v = jnp.mean(x / jnp.mean(x, axis=0), axis=0)"],
     {"x": np.array([[-1.122058e-02], [-3.5], [3.4e38]], np.float32)}, False, "reciprocal"),
    # XLA merges nested dynamic slices, clamping once
    (["w = lax.dynamic_slice(x, (0, a, 3), (1, 4, 24))",
      "v = lax.dynamic_slice(w, (np.uint32(0), b, np.uint32(4)), (1, 1, 17))"],
     {"x": np.arange(16 * 31, dtype=np.uint32).reshape(1, 16, 31), "a": np.int32(3),
      "b": np.uint32(5)}, False, "nested dynamic_slice"),
    # the same inside loop and cond bodies (the emulation steps through them)
    (["v = lax.fori_loop(0, n, lambda i, c: jnp.log2(jnp.exp(c)), x)"],
     {"x": np.array([100.0, 1.0], np.float32), "n": np.int32(2)}, False, "log(exp(x))"),
    # ... and log(exp2(x)) is x * log(2), finite where exp2 overflows (seed 150)
    (["v = jnp.log(jnp.exp2(x))"], {"x": np.array([132.54303, 4.0], np.float32)}, False,
     "log(exp(x))"),
    # pow(exp(a), b) is exp(a * b), exp2(x) being exp(x * log(2)): finite where
    # exp overflows, NaN for pow(exp2(nan), 0) (seed 162's big program 8)
    (["v = lax.pow(jnp.exp2(x), y)"],
     {"x": np.array([316.80115, np.nan, 3.0], np.float32),
      "y": np.array([0.008327993, 0.0, 0.5], np.float32)}, False, "pow(exp(a), b)"),
    (["v = lax.pow(jnp.exp(x), y)"],
     {"x": np.array([800.0, 2.0], np.float64), "y": np.array([0.25, 3.0], np.float64)}, True,
     "pow(exp(a), b)"),
    (["v = lax.cond(n > 0, lambda: jnp.log(jnp.exp(x)), lambda: x)"],
     {"x": np.array([100.0, 1.0], np.float32), "n": np.int32(2)}, False, "log(exp(x))"),
    (["v = lax.scan(lambda c, y: (c, jnp.log(jnp.exp(y))), 0.0, x)[1]"],
     {"x": np.array([100.0, 1.0], np.float32)}, False, "log(exp(x))"),
    # with x64, XLA folds the clz of a negative int8 constant (here a pad
    # leaving only its padding value) in 64 bits
    (["v = lax.clz(lax.pad(x, np.int8(-3), [(0, 0, 0), (-1, 1, 0), (0, 0, 0)]))"],
     {"x": np.arange(6, dtype=np.int8).reshape(3, 1, 2) - 3}, True, "clz of a constant"),
    # ... also without x64, of a value made from an integer x - x (which XLA
    # makes 0), through a cond whose index is then known (seed 83)
    (["v = lax.clz(~(x - x))"], {"x": np.array([8, -4, 1], np.int32)}, False,
     "clz of a constant"),
    # ... or computed from such a pad's padding value (seed 149's integer
    # program 5: the power by square and multiply of a pad cut away)
    (["w = lax.pad(x, np.int8(-1), [(0, 0, 0), (-1, 1, 0)])",
      "v = lax.clz(jnp.power(w, w))"],
     {"x": np.array([[5], [-3], [9]], np.int8)}, False, "clz of a constant"),
    # ... or from x ** 0, which XLA makes 1 (seed 143)
    (["v = lax.clz(-lax.integer_pow(x, 0))"], {"x": np.array([8, -4, 1], np.int32)}, False,
     "clz of a constant"),
    (["z = x - x",
      "v = lax.cond(jnp.max(z) > -3, lambda a: lax.clz(a - 5), lambda a: a, z)"],
     {"x": np.array([8, -4, 1], np.int32)}, False, "clz of a constant"),
    # ... also a gather of one window, which XLA makes a dynamic_slice first
    # (seed 87's index program 9)
    (["w = lax.dynamic_slice(x, (a, a, 3), (11, 2, 23))",
      "v = w[jnp.array([-12]), jnp.array([0])]"],
     {"x": np.arange(13 * 3 * 31, dtype=np.int32).reshape(13, 3, 31), "a": np.int64(1)}, True,
     "nested dynamic_slice"),
    # XLA:CPU fuses x - x * x into an FMA (seed 85's big program 2)
    (["v = x - x * x"], {"x": np.array([0.9974337, 1.0007457, 2.0], np.float32)}, False,
     "FMA"),
    # ... of two products, the first operand's: x * x exact where it
    # overflows, less a mean made a product by 1/n (seed 145's mixed program 11)
    (["v = x * x - jnp.mean(x * x, axis=-1, keepdims=True)"],
     {"x": np.array([[-3.4e38, 2.5, 59.592304]], np.float32)}, False, "FMA"),
    # ... also with a division by a scalar, a product by its reciprocal
    # (seed 88's edges program 7: 6 / -3 + 2 is 6e-8)
    (["v = y / -3 + x"], {"x": np.array([2.0, 1.0, 4.0], np.float32),
                          "y": np.array([6, 3, 12], np.int8)}, False, "FMA"),
    # ... and x / -0.0 is x * -inf, with x a converted bool a select giving 0,
    # also through a while loop that runs once (seed 85's control program 12)
    (["v = lax.while_loop(lambda s: s[0] < 1, lambda s: (s[0] + 1, "
      "jnp.broadcast_to((~t).astype(jnp.float32), (3, 2))), (jnp.int32(0), x))[1] / -0.0"],
     {"x": np.ones((3, 2), np.float32), "t": np.array(True)}, False, "convert(bool)"),
    # ... jnp.floor_divide by a zero constant divides x itself (XLA folds its
    # select on the constant), a converted bool: 0 // -0.0 is -1 (seed 86)
    (["v = jnp.floor_divide(b.astype(jnp.float32), -0.0)"],
     {"b": np.array([False, True, False])}, False, "convert(bool)"),
    # XLA: sqrt(x * x) is |x|, without the overflow
    (["v = jnp.sqrt(jnp.abs(x * x))"], {"x": np.array([-3.4e38, 2.0], np.float32)}, False,
     "sqrt(x*x)"),
    # ... a negative start counted from the end of its operand first
    (["w = lax.dynamic_slice(x, (1, s, s, s), (8, 7, 1, 1))",
      "v = lax.dynamic_slice(w, (k, 1, 0, 1), (5, 1, 1, 1))"],
     {"x": np.arange(13 * 31 * 5, dtype=np.float32).reshape(13, 31, 1, 5), "s": np.int32(-4),
      "k": np.int32(4)}, False, "nested dynamic_slice"),
    # XLA's acosh of a huge value is log(2) + log(y), and log(pow(a, b)) is
    # b * log|a|: finite where pow overflows (seed 75's elementwise program 8)
    (["v = jnp.arccosh(jnp.broadcast_to(x ** x, (2, 4)))"],
     {"x": np.array([40.0, 50.5, 2.0, 16.5], np.float32)}, False, "acosh(pow(a, b))"),
    # ... and asinh's, also of exp2(x), whose log is x * log(2) (seed 93's
    # elementwise program 9, with x64)
    (["v = jnp.arcsinh(jnp.exp2(x))"], {"x": np.array([282.1746, 3.0, 130.0], np.float32)},
     True, "asinh(pow(a, b))"),
    # ... the inner start clamped for the outer window only, the outer one
    # added as it is (seed 75's index program 16)
    (["w = lax.dynamic_slice(x, (0, a, a, -4), (1, 5, 7, 4))",
      "v = lax.dynamic_slice(w, (b, b, b, a), (1, 2, 3, 2))"],
     {"x": np.arange(7 * 8 * 7, dtype=np.float32).reshape(1, 7, 8, 7),
      "a": np.int32(508071211), "b": np.int32(-63)}, False, "nested dynamic_slice"),
    # ... also through a broadcast between them (seed 81's index program 9)
    (["w = lax.dynamic_slice(x, (0, -4, x.reshape(-1)[218].astype(jnp.int32), 0), "
      "(2, 4, 1, 1))",
      "u = lax.broadcast_in_dim(w, (16, 2, 4, 1, 4), (1, 2, 3, 4))",
      "v = lax.dynamic_slice(u, (y[9].astype(jnp.int32), x.reshape(-1)[274].astype(jnp.int32), "
      "-1, 100, 3), (14, 1, 3, 1, 1))"],
     {"x": make_input((16, 16, 3, 3), "uint32", 1136394692, "small"),
      "y": np.array([5, 0, 7, 2, 11, 2, 1, 6, 4, 0, 7, 6], np.uint32)}, False,
     "nested dynamic_slice"),
    # ... and abs(x) < 0 to False, also for the most negative int (seed 81's
    # big program 13: the sign fix of a remainder by it)
    (["v = jnp.sign(y) % jnp.abs(x)"],
     {"x": np.array([-2**31, 7, -3], np.int32), "y": np.array([12, 0, 5], np.uint8)}, False,
     "comparison of a square with 0"),
    # ... so jnp.take's fill mode does not check that a square's index is >= 0:
    # a wrapped negative square is clamped to 0 (seed 163's index program 6)
    (["v = jnp.take(x, x * x, axis=1)"],
     {"x": np.array([[9, 44971664, 4, 1], [1, 2147483647, 0, -11], [-5, 3, 1, 2],
                     [1, -10, 0, 1596970475]], np.int32)}, False, "gather of a square's index"),
    # ... and a fill-mode take with a traced index from a dynamic_slice reads the
    # operand at the inner start not clamped to its end (seed 166's index program 18)
    (["v = jnp.take(lax.dynamic_slice(x, (i,), (7,)), j, axis=0, mode='fill')"],
     {"x": np.arange(8, dtype=np.float32) * 10, "i": np.int32(-6), "j": np.int32(1)}, False,
     "nested dynamic_slice merged"),
    # ... and drops the start of an inner slice as wide as its axis (seed 175's
    # index program 8: the inner start 4 of an axis of 5 ignored)
    (["u = lax.dynamic_slice(x, (-1, 1, i[0]), (5, 1, 4))",
      "v = lax.dynamic_slice(u, (-4, -4, i[1]), (1, 1, 1))"],
     {"x": np.arange(5 * 13, dtype=np.float32).reshape(5, 1, 13),
      "i": np.array([4, -8], np.int32)}, False, "nested dynamic_slice merged"),
    # ... and 0 / convert(integer) as 0, also at 0, when something reads it
    # (seed 176's big program 13, with x64)
    (["v = jnp.log2(0 / x)"], {"x": np.array([0, 3, -2, 0], np.int8)}, True,
     "0 / convert(integer) is 0"),
    # XLA takes exp(a) / exp(b) as exp(a - b): exp2(x) / exp2(x) is 1 where
    # exp2 overflows (seed 175's edges program 14)
    (["v = jnp.exp2(x) / jnp.exp2(x)"], {"x": np.array([200.0, 1.5, -3.0], np.float32)}, False,
     "exp(a) / exp(b) is exp(a - b)"),
    # ... also through a broadcast or reshape, which XLA moves the abs, sqrt or
    # comparison past (seed 168's integer program 5)
    (["v = jnp.abs(jnp.expand_dims(lax.mul(x, x), 0))"], {"x": np.array([50, 12, -3], np.int8)},
     True, "abs(x*x)"),
    (["v = jnp.abs((x * x).reshape(3, 1))"], {"x": np.array([50, 12, -3], np.int8)},
     False, "abs(x*x)"),
    (["v = jnp.expand_dims(x * x, 0) >= 0"], {"x": np.array([50, 12, -3], np.int8)},
     False, "square with 0"),
    (["v = jnp.sqrt(jnp.expand_dims(x * x, 0))"],
     {"x": np.array([3e20, 2.0, -1.0], np.float32)}, False, "sqrt(x*x)"),
    # XLA's vectorized min over a short axis forgets a slice's elements from
    # its first NaN on: [nan, 100] is inf, seen through a log2 (seed 170's big
    # program 16)
    (["v = jnp.log2(jnp.min(jnp.where(m, x, 100.0), axis=1))"],
     {"x": make_input((11, 2, 41, 47), "float32", 957492452, "normal"),
      "m": make_input((11, 2, 41, 47), "bool", 2039783929, "normal")}, True,
     "NaN dropped by a max/min reduction"),
    # integer_pow 2 is a product LLVM fuses into a following sum (remainder's
    # sign fix, rem + y) as other products (seed 170's big program 10)
    (["v = (x * 100.0) % lax.integer_pow(x * 100.0, 2)"],
     {"x": make_input((64, 1025), "float32", 1176173712, "normal")}, True, "(FMA)"),
    # reciprocal(x) / y is 1 / (x * y) to XLA, and a product with a converted
    # bool a select: (1 / x) / float(False) is +inf for a negative x (seed
    # 171's shape program 13)
    (["v = lax.div(jnp.reciprocal(x), b.astype(jnp.float32))"],
     {"x": np.float32(-52.421227), "b": np.bool_(False)}, False, "quotients regrouped"),
    # XLA may update in place while reading the update from the operand
    (["w = x[..., i]", "v = lax.dynamic_update_slice(w, jnp.resize(w, (8,)), (i,))"],
     {"x": make_input((13, 4), "float32", 812751900, "normal"), "i": np.int32(1)}, False,
     "read its own operand"),
    # ... the inner start clamped in its own type, then added in the outer
    # start's, wrapping: uint8 11 + 251 is 6 (seed 92's index program 17)
    (["w = lax.dynamic_slice(x, (a,), (4,))", "v = lax.dynamic_slice(w, (b,), (2,))"],
     {"x": np.arange(13, dtype=np.uint8) + 100, "a": np.int32(208), "b": np.uint8(251)},
     False, "nested dynamic_slice"),
    # ... an outer slice as wide as the window in a dimension taken from
    # the inner start alone there (seed 96's index program 10)
    (["w = lax.dynamic_slice(x, (a, x.reshape(-1)[61]), (4, 7))",
      "v = lax.dynamic_slice(w, (a, w.reshape(-1)[8]), (4, 2))"],
     {"a": np.int32(-7), "x": make_input((8, 16), "int32", 907618479, "small")}, False,
     "nested dynamic_slice"),
    # ... a chain of three merged from the innermost out (seed 124's index
    # program 13)
    (["w = lax.dynamic_slice(x, (0, a), (2, 5))",
      "u = lax.dynamic_slice(w, (0, b), (2, 2))",
      "v = lax.dynamic_slice(u, (0, c), (2, 1))"],
     {"x": np.arange(14, dtype=np.int32).reshape(2, 7), "a": np.int32(2),
      "b": np.int32(1936399212), "c": np.int32(-864293052)}, False, "nested dynamic_slice"),
    # XLA's min and max give a NaN second operand the sign bit of both
    # operands' OR and AND; cummin folds with the running value first
    # (seed 124's big program 7)
    (["v = jnp.signbit(lax.cummin(x, axis=1))"],
     {"x": np.array([[-1.0, np.nan, 0.5], [2.0, np.nan, -3.0]], np.float32)}, False,
     "NaN sign"),
    (["v = jnp.signbit(lax.cummax(x, axis=0, reverse=True))"],
     {"x": np.array([[2.0, 2.0], [-np.nan, 0.5], [1.0, np.nan]], np.float32)}, False,
     "NaN sign"),
    (["v = jnp.signbit(jnp.minimum(x, y))"],
     {"x": np.array([-1.0, 1.0, -0.0, np.nan], np.float32),
      "y": np.array([np.nan, np.nan, np.nan, -1.0], np.float32)}, False, "NaN sign"),
    # ... also a value XLA's simplifier makes a constant: 1 ** x by square
    # and multiply, its and(False, p) and selects of equal cases folded
    # (seed 124's mixed program 1)
    (["v = lax.clz(jnp.sign(-1 ** x))"], {"x": np.int8(-112)}, False, "clz of a constant"),
    # ... also with a square: hypot's 1 + (y / x)^2, seen through a bitcast
    # (seed 127's elementwise program 5)
    (["v = lax.bitcast_convert_type(jnp.hypot(x, y), jnp.int32)"],
     {"x": np.array([2.5530746, -0.0355999, 3.113631, -0.5], np.float32),
      "y": np.array([2.2296946, 0.02658946, 34.79444, 0.2545968], np.float32)}, False, "FMA"),
    # XLA:CPU's YNNPACK reductions of 4096 elements or more take a float ->
    # int8 conversion inside them as the identity (seed 132's big program 9)
    (["v = jnp.mean(lax.min(a, x.astype(jnp.int8)), axis=-1)"],
     {"a": np.full((4, 1024), 5, np.int8),
      "x": np.tile(np.array([2.7, -300.0, np.inf, 1e10], np.float32), (4, 256))}, False,
     "YNNPACK"),
    (["v = jnp.max((x.astype(jnp.uint8) + a).astype(jnp.float32), axis=0)"],
     {"a": np.full((4096, 2), 3, np.uint8),
      "x": np.full((4096, 2), 2.5, np.float32)}, False, "YNNPACK"),
    # ... also a one-window gather through a broadcast and a reshape that
    # only moves axes of length 1 (jnp.repeat; seed 135's index program)
    (["w = jnp.repeat(lax.dynamic_slice(x, (0, a), (1, 3)), 3, axis=0)",
      "v = w[..., jnp.array([-3])]"],
     {"x": np.arange(26, dtype=np.int32).reshape(2, 13), "a": np.int32(1236406700)}, False,
     "nested dynamic_slice"),
    # XLA:CPU's max or min of a uint8 negation of 4096 elements or more is 0
    # (seed 96's big program 18)
    (["v = jnp.remainder(s, jnp.max(jnp.negative(x), axis=0, keepdims=True))"],
     {"x": make_input((11, 2, 41, 47), "uint8", 1281949124, "small"), "s": np.uint32(5)},
     False, "uint8 negation"),
    (["v = jnp.min(-x)"], {"x": np.arange(1, 4097).astype(np.uint8) | 1}, False,
     "uint8 negation"),
    # ... also a gather in fill mode at an index known in bounds (seed 98's
    # index program 15)
    (["w = lax.dynamic_slice(x, (jnp.int32(69) + y[0], y[1]), (9, 1))",
      "v = w.at[jnp.array([-8])].get(mode='fill', fill_value=0.5)"],
     {"x": np.arange(155, dtype=np.float32).reshape(31, 5), "y": np.array([0, -4], np.int32)},
     False, "nested dynamic_slice"),
    # ... also the row a scatter of one row reads from a dynamic_slice: out
    # of bounds, written as read at the clamped row (seed 154's index
    # program 18, with x64); in bounds, combined with the update there
    (["w = lax.dynamic_slice(x, (a, jnp.int32(0)), (4, 3))",
      "v = w.at[jnp.array([-5])].multiply(y, mode='drop')"],
     {"x": np.arange(48, dtype=np.int32).reshape(16, 3), "a": np.int32(-9),
      "y": np.full((1, 3), 3, np.int32)}, False, "nested dynamic_slice"),
    (["w = lax.dynamic_slice(x, (a, jnp.int32(1)), (4, 2))",
      "v = w.at[jnp.array([0])].add(y, mode='drop')"],
     {"x": np.arange(24, dtype=np.float32).reshape(8, 3), "a": np.int32(6),
      "y": np.full((1, 2), 0.5, np.float32)}, False, "nested dynamic_slice"),
    # ... also a broadcast made float: x / x is x * (1 / x), 0.99999994 for
    # some x, and ceil(1 / that^2) is 2 (seed 115's control program 13, x64)
    (["w = jnp.broadcast_to(x, (3, 4, 13))",
      "v = jnp.ceil(lax.integer_pow(jnp.divide(w, w), -2))"],
     {"x": make_input((4, 13), "uint8", 1233925550, "normal")}, True, "reciprocal"),
    # ... also a product read by a reduction too, which XLA fuses apart
    # (seed 145's mixed program 11: inf - inf is NaN, the FMA's -inf)
    (["w = jnp.multiply(x, x)", "v = w - jnp.mean(w, axis=-1, keepdims=True)"],
     {"x": make_input((4, 7, 7), "float32", 2059205644, "normal")}, False, "FMA"),
    # ... and, as XLA splits its fusions, one read by a comparison too
    (["w = jnp.multiply(x, x)", "u = lax.le(w, x)",
      "v = w - jnp.mean(w, axis=-1, keepdims=True)"],
     {"x": make_input((4, 7, 7), "float32", 2059205644, "normal")}, False, "FMA"),
    # ... also exp's last product, by 2**128 where XLA clamps its input at
    # 88.8: exp(x) - x of 3.4e38 is 2.76e37 (seed 160's big program 5, x64)
    (["v = jnp.exp(x) - x"],
     {"x": np.repeat(np.array([3.4e38, 1e38, 88.9, 2.0, -3.4e38], np.float32), 16)}, True,
     "exp's last product"),
    # ... but LLVM contracts no product read twice: floor_divide's quotient
    # by a broadcast, also selected, is not fused with its - 1; an fmod of
    # it shows the last bit (seed 145's control program 19)
    (["w = jnp.floor_divide(x, y)", "v = jnp.fmod(w, y)"],
     {"x": np.array([[-371020957, 5], [7, -890920231]], np.int32),
      "y": np.array([1.6462591, 3.0], np.float32)}, False, "reciprocal"),
    # XLA regroups divisions of quotients, whose products overflow (seed
    # 113's big program 13, with x64)
    (["w = jnp.divide(x, x)", "v = w / w"], {"x": np.array([3.4e38, 2.0, 1e-30], np.float32)},
     True, "quotients regrouped"),
    (["v = (x / y) / x"], {"x": np.array([3.4e38, 2.0, 1e-30], np.float32),
                           "y": np.array([3.0, 3.4e38, 1e-30], np.float32)}, False,
     "quotients regrouped"),
    (["v = x / (x / y)"], {"x": np.array([3.4e38, 2.0, 1e-30], np.float32),
                           "y": np.array([3.0, 3.4e38, 1e-30], np.float32)}, False,
     "quotients regrouped"),
    # XLA squares a one-element product by a constant as (a * a) * (c * c),
    # also in asinh: inf, and NaN there (seed 98's reduce program 3)
    (["v = jnp.arcsinh(jnp.var(x, axis=(0, 1)))"],
     {"x": make_input((13, 5), "int32", 958610458, "normal")}, False, "scalar product"),
    (["v = jnp.square(jnp.sum(x) / 65)"], {"x": np.array([5.1e19, 3e19], np.float32)}, False,
     "scalar product"),
    (["v = (jnp.sum(x, keepdims=True) * np.float32(0.1)) ** 2"],
     {"x": np.array([5.1e19, 3e19], np.float32)}, False, "scalar product"),
    # XLA's float32 cbrt of a subnormal is -5.6e-16 (seed 92's convert
    # program 15, through a pow of it: NaN)
    (["v = lax.pow(jnp.cbrt(x), x)"],
     {"x": np.array([5.6e-45, 1.3e-44, 0.5, -1e-40], np.float32)}, False,
     "cbrt of a subnormal"),
    # ... also an update computed from the operand's elements, each from
    # the buffer as then written (seed 93's index program 14, with x64)
    (["w = jnp.matmul(z, jnp.broadcast_to(x, (5, 5, 3)))",
      "u = lax.dot_general(y, w, (((2,), (1,)), ((0,), (0,))))",
      "v = lax.dynamic_update_slice(w, jnp.resize(u, (4, 1, 2)), (1, 3, -4))"],
     {"x": np.array([[[1.0], [6.0], [2.7], [-0.34], [127.5]]], np.float32),
      "y": np.array([[[-0.55]], [[-0.0022]], [[-0.0021]], [[0.16]], [[-0.0036]]], np.float32),
      "z": np.repeat(np.array([0.31, 4.9e-6, 4.5e-6, 0.025, 1.3e-5], np.float32),
                     5).reshape(5, 1, 5)}, True, "read its own operand"),
    # ... also by a divisor whose size-1 axes the div stretches (seed 95's
    # shape program 19, with x64: 3.4e38 // 3.4e38 is 0, the reciprocal flushed)
    (["v = jnp.broadcast_to(x, (3, 2, 2)) // x"],
     {"x": np.array([[[3.4e38, 2.0]], [[1.5, -3.4e38]], [[7.0, 1.0]]], np.float32)}, True,
     "reciprocal"),
    # ... not when the operand is traced: the clip take is right, the fill
    # take after it truncates (seed 95's edges program 17, with x64)
    (["w = jnp.take(x, jnp.array([2**64 - 1, 2**63, 1], jnp.uint64), mode='clip')",
      "v = jnp.take(w, jnp.array([2**63, 2, 2**64 - 2], jnp.uint64), mode=None)"],
     {"x": np.array([-3.0, -3.5, 84.9, -0.0017], np.float32)}, True, "index truncated"),
    # XLA's constant folding reads uint64 clip indices >= 2**63 as negative
    (["v = jnp.take(jnp.arange(10.0), jnp.array([2**64 - 1, 1], jnp.uint64), mode='clip')"],
     {}, True, "read as signed"),
])
def test_jax_deviations_are_known_only_as_predicted(lines, inputs, x64, deviation):
  program = _program(lines, inputs, ["v"])
  known, (e,), (g,) = _known(program, x64)
  assert fuzz_oracle.compare_oracle(e, g)[0], "JAX no longer deviates here"
  assert deviation in (known.explains(0, e, g) or "")
  # purejax giving JAX's answer (except within the cumulative tolerance),
  # or another wrong one, is not excused
  if deviation != "float rounding":
    assert known.explains(0, e, e) is None
  if g.dtype != np.bool_:   # (a boolean is JAX's answer or purejax's)
    wrong = g.copy()
    wrong.reshape(-1)[0] = 7 if wrong.dtype.kind in "iu" else np.float32(0.25)
    assert known.explains(0, e, wrong) is None


def test_oracle_accepts_known_deviations_and_counts_them():
  program = _program(["v = jnp.abs(x * x)"], {"x": np.array([12, 5], np.int8)}, ["v"])
  report = fuzz_oracle.check_batch_oracle([program])
  assert not report.failures
  assert any("abs(x*x)" in k for k in report.stats)


_DYING_JAX = """
import json, os, signal, sys
import numpy as np
sys.path.insert(0, "benchmarks"); sys.path.insert(0, "tests")
import fuzz_oracle
from fuzz_programs import Program, Stmt, Val
real = fuzz_oracle.run_jax

def program(line, x):
  return Program([(Val("x", x.shape, x.dtype), ("value", x))],
                 [Stmt([line], [Val("v", (), np.int32)], ["x"])], ["v"], "test")

def dies_on_zeros(programs, x64):
  if any("jnp.zeros" in line for p in programs for st in p.stmts for line in st.lines):
    os.kill(os.getpid(), signal.SIGFPE)
  return real(programs, x64)

fuzz_oracle.run_jax = dies_on_zeros
x = np.array([1, 2], np.int32)
dying = program("v = x // jnp.zeros(2, jnp.int32)", x)
report = fuzz_oracle.check_batch_oracle([program("v = x + 1", x), dying])
assert "jax" not in sys.modules
print(json.dumps([len(report.failures), dict(report.stats)]))
"""


def test_programs_jax_dies_on_are_counted_apart():
  """JAX runs in a child process of the batch's (which has not imported
  JAX): a program it dies on (XLA folds an integer 0 / 0 into a SIGFPE) is
  counted, and the batch's other programs still compared."""
  import json
  import subprocess
  root = os.path.join(os.path.dirname(__file__), "..")
  env = dict(os.environ, PYTHONPATH=os.path.abspath(root), PYTHONFAULTHANDLER="")
  out = subprocess.run([sys.executable, "-c", _DYING_JAX], cwd=root, env=env,
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr[-2000:]
  failures, stats = json.loads(out.stdout.strip().splitlines()[-1])
  assert failures == 0
  assert stats["programs JAX itself died on (SIGFPE)"] == 1
  assert stats["programs"] == 2 and stats["outputs"] == 1


def test_a_rewrite_after_rounded_products_is_known():
  """XLA's in-place update (m) of a product's result: JAX's elements
  against the emulated ones within the output's rounding bound."""
  program = _program([
      "w = lax.dynamic_slice(x, (3, 2, 100), (7, 6, 3))",
      "u = jnp.einsum('bij,bjk->bik', x, jnp.resize(w, (7, 8, 1)))",
      "v = lax.dynamic_update_slice(u, jnp.resize(u, (5, 7, 1)), (0, 100, 2))"],
      {"x": make_input((7, 8, 8), "float32", 1939182692, "normal")}, ["v"])
  report = fuzz_oracle.check_batch_oracle([program])
  assert not report.failures
  assert any("read its own operand" in k for k in report.stats)


def test_rsqrt_is_inexact_against_jax_only():
  """XLA:CPU's rsqrt rounds twice (1/sqrt): ``floor(x * rsqrt(x))`` is 0
  where it should be 1 for some x (seed 75's big program 8).  Against JAX
  the bounds let rsqrt round, against NumPy it stays exact."""
  import fuzz_bounds
  x = make_input((40961,), "float32", 497192476, "normal")
  program = _program(["v = jnp.floor(x * lax.rsqrt(x))"], {"x": x}, ["v"])
  try:
    fuzz_bounds.against_jax(False)
    known, (e,), (g,) = _known(program)
    assert fuzz_oracle.compare_oracle(e, g)[0], "JAX no longer deviates here"
    assert known.explains(0, e, g) is None
    report = fuzz_oracle.check_batch_oracle([program])   # switches to JAX's rules
    assert not report.failures
    assert any("rounding" in k for k in report.stats)
  finally:
    fuzz_bounds.against_jax(False)


def test_in_place_update_of_booleans_is_known():
  """(m) on booleans (seed 75's big program 6): the update's sources are
  found by replaying its layout steps (jnp.resize) on indices."""
  program = _program(
      ["w = lax.dynamic_update_slice(y, jnp.resize(y, (144, 1)), (100, 3))",
       "v = lax.convert_element_type(jnp.equal(lax.min(x, x), w), jnp.int8)",
       "u = lax.integer_pow(v, 3)", "t = u > jnp.power(jnp.fmod(u, u), u)"],
      {"x": make_input((163,), "bool", 466142118, "normal"),
       "y": make_input((257, 1), "bool", 1362376714, "normal")}, ["v", "t"])
  known, expected, got = _known(program)
  assert fuzz_oracle.compare_oracle(expected[0], got[0])[0], "JAX no longer deviates here"
  assert "read its own operand" in (known.explains(0, expected[0], got[0]) or "")
  assert known.explains(0, expected[0], expected[0]) is None
  wrong = got[0].copy()
  wrong.reshape(-1)[0] = 7
  assert known.explains(0, expected[0], wrong) is None


def test_sums_are_bounded_as_any_order_against_jax():
  """XLA:CPU's float sums are not pairwise: its var of a 2000-row broadcast
  of small integers is off by more than pairwise summation's bound."""
  program = _program(["v = jnp.var(jnp.broadcast_to(x, (2000, 13)))"],
                     {"x": np.array([[1, 0, 3, 7, 0, 2, 5, 14, 3, 6, 0, 13, 4]], np.int32)},
                     ["v"])
  report = fuzz_oracle.check_batch_oracle([program])
  assert not report.failures, report.failures
  exact = np.var(np.array([1, 0, 3, 7, 0, 2, 5, 14, 3, 6, 0, 13, 4], np.float64))
  known, (e,), (g,) = _known(program)
  assert abs(float(g) - exact) < 1e-6 * exact   # purejax's sum is pairwise-accurate


def test_outputs_jax_computes_differently_on_repeated_calls_are_set_apart(monkeypatch):
  """JAX's jitted var of a large broadcast (seed 77's reduce program 14)
  differs between calls (XLA:CPU's threads race); such outputs are counted
  and not compared."""
  outputs = fuzz_oracle.JaxOutputs([np.float32(1.0), np.float32(2.0)])
  outputs.unstable = (1,)
  monkeypatch.setattr(fuzz_oracle, "run_jax_apart", lambda programs, x64: ("ok", outputs))
  program = _program(["v = x * 0 + 1", "w = x * 0 + 3"], {"x": np.float32(5.0)}, ["v", "w"])
  report = fuzz_oracle.check_batch_oracle([program])
  assert not report.failures
  assert report.stats["outputs JAX computed differently on repeated calls (not compared)"] == 1
  outputs.unstable = ()
  assert fuzz_oracle.check_batch_oracle([program]).failures   # 3 is not 2


def test_outputs_depending_on_a_nan_in_a_max_are_known():
  """(e) XLA:CPU's vectorized max keeps or drops each NaN by its place:
  the argmin of a max over a NaN-holding axis (seed 79's big program 12)
  is accepted where purejax gives the plain value and any way of taking
  the NaNs changes it."""
  x = make_input((11, 2, 41, 47), "float32", 2042607049, "normal")
  program = _program(["m = jnp.max(x, axis=-3, keepdims=True)", "v = jnp.argmin(m, axis=3)"],
                     {"x": x}, ["v"])
  known, (e,), (g,) = _known(program)
  assert fuzz_oracle.compare_oracle(e, g)[0], "JAX no longer deviates here"
  assert "NaN" in (known.explains(0, e, g) or "")
  wrong = g.copy()
  wrong.reshape(-1)[0] = 7 if wrong.reshape(-1)[0] != 7 else 8
  assert known.explains(0, e, wrong) is None


def test_a_max_that_forgets_elements_before_a_nan_is_known():
  """(e) Seed 82's big program 3: XLA:CPU's max of a remainder holding NaNs
  and infs is a finite element (the infs came before a NaN), and comparing
  operand and max gives True where purejax's NaN max gives False."""
  x = make_input((40961,), "float32", 2095044162, "normal")
  y = make_input((40961,), "float32", 1215188762, "normal")
  program = _program(["m = jnp.max(jnp.remainder(y, x))", "v = x == m"], {"x": x, "y": y},
                     ["v"])
  known, (e,), (g,) = _known(program)
  assert fuzz_oracle.compare_oracle(e, g)[0], "JAX no longer deviates here"
  assert "NaN" in (known.explains(0, e, g) or "")
  wrong = g.copy()
  wrong[np.flatnonzero(~e)[0]] = True   # an element no way of taking the NaNs makes True
  assert known.explains(0, e, wrong) is None
