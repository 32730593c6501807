"""JAX's own known deviations, for benchmarks/fuzz_oracle.py: where JAX 0.10
(XLA:CPU) gives an answer purejax deliberately does not copy, the oracle
accepts JAX's answer only if it is exactly what the deviation predicts, and
purejax's only if it is the NumPy reference's.  Everything else stays strict.

(a) Float rounding: XLA evaluates cumulative sums and products as a
    reduce-window / associative scan whose order adds more rounding error
    than purejax's, sums and dot products in other orders, and its own
    transcendental approximations, which ill-conditioned functions after
    them (arcsin near 1, the cancellation in gelu or logaddexp) magnify.
    Both answers are accepted within fuzz_bounds' bound (4 ulp per
    transcendental function, a sum's reassociation error scaled to its
    length and measured against the float64 sum, carried through the later
    operations); elements it cannot bound (where a partial sum may overflow
    in some order) are not compared after a sum, as in the C fuzz.
(b) XLA's algebraic simplifier rewrites ``abs(x * x)`` to ``x * x``, also on
    signed integers, where ``x * x`` may wrap to a negative number:
    ``jnp.abs(jnp.int8(12) * jnp.int8(12))`` is -112 in JAX, 112 in NumPy
    and purejax.
(c) With x64, XLA:CPU's gather truncates 64-bit start indices to 32 bits
    before its bounds check (in every mode but clip, where jnp clamps first):
    ``jnp.take(x, jnp.array([2**32 + 3]))`` reads ``x[3]``.
(d) XLA:CPU flushes float32/float64 subnormals to zero, as inputs and as
    results (README, "Subnormal numbers are kept"): the oracle's inputs have
    none, but intermediate results can (``jax.nn.silu(-88.0)`` is -0.0 in
    JAX, -7e-37 in purejax).
(e) XLA:CPU's max/min reductions over large operands drop NaNs
    (``lax.reduce_max`` of 40961 floats holding a NaN is a number, not always
    the largest; of 16, NaN): documented as NaN-propagating, as in NumPy and
    purejax.  Where the reduction is the program's output (also reshaped, as
    by ``keepdims``), any of the slice's values is accepted; later
    operations see it emulated as NaN-dropping (``fmax``/``fmin``), and,
    as XLA's choice of value is not predictable, the elements that
    dropping NaNs alone changes (or taking them as +-inf, or forgetting
    the elements before a slice's last NaN too) are accepted wherever
    purejax gives the plain value.
(n) XLA:CPU contracts a float32 sum or difference with a product into a
    fused multiply-add (one rounding): ``x - x * x`` near 1 differs from
    NumPy's in the last bits of its small result (seed 85's big program 2).
    Emulated with the product exact in float64 (two roundings: float64,
    then float32, which in rare halfway cases is one ulp off a real FMA).
    So is a square (hypot's ``1 + (y / x)^2``: seed 127's elementwise
    program 5), and a division by a broadcast value (by the reciprocal):
    ``x / -3 + y`` is 6e-8 where NumPy gives 0 (seed 88's edges program 7).
    A division by a broadcast value (or by a scalar XLA knows: a literal,
    a constant passed into a call) whose numerator is a converted bool is
    a select of the reciprocal, also through a while loop that runs once,
    which XLA unrolls (seed 85's control program 12: ``0.0 / -0.0`` is 0),
    or through a select on a known predicate (jnp.floor_divide by -0.0,
    seed 86's edges program 15: ``0 // -0.0`` is -1).  LLVM fuses only a
    product read once in its fusion: floor_divide's quotient by a broadcast,
    also selected, keeps its - 1 apart (seed 145's control program 19); a
    product with several readers may be fused or not, as XLA splits the
    fusions, and both are accepted (``fuzz_deviations_products``).  So
    is exp's last product, by 2**128 where XLA clamps its input at 88.8:
    ``exp(x) - x`` of 3.4e38 is 2.76e37 (seed 160's big program 5).
(m) An XLA bug: a dynamic_update_slice whose update is made of its
    operand's elements (``jnp.resize(x, (3,))``, after a gather) may be done
    in place, reading the update from the buffer being written, so later
    elements get already overwritten values (seed 72's index program 19,
    ``--seed 72 --x64 --oracle jax --programs 600 --per-batch 20``; seed
    73's index programs; seed 75's big program 6, on booleans).  Emulated
    as that sequential copy.  An update computed from the operand (a
    product with its elements) is computed element by element from the
    buffer being written (seed 93's index program 14, with x64;
    ``fuzz_deviations_in_place``).
(f) Other algebraic simplifications XLA makes that change IEEE results:
    ``log(rsqrt(x))`` is ``-0.5 * log(x)`` (inf, not NaN, at x = -0.0),
    ``log(exp(x))`` is ``x`` (no overflow), ``log(pow(a, b))`` is
    ``b * log(|a|)`` (a number for a negative ``a``), also inside
    ``acosh(pow(a, b))``, which XLA takes as ``log(2) + log(y)`` for a
    huge ``y`` (finite where pow overflows), and so ``asinh`` (seed 93's
    elementwise program 9, ``asinh(exp2(282.2))`` is 196.3, with
    ``log(exp2(x))`` as ``x * log(2)``), ``pow(exp(a), b)`` is
    ``exp(a * b)`` (finite where exp overflows, NaN for ``pow(nan, 0)``;
    ``exp2(x)`` is ``exp(x * log(2))``: seed 162's big program 8),
    ``0 / convert(x)`` of an integer ``x`` is 0, also at ``x = 0``, where
    something reads it (``log2(0 / x)`` is -inf: seed 176's big program 13,
    with x64; a quotient that is itself the output stays NaN),
    ``exp(a) / exp(b)`` is ``exp(a - b)`` (1, not NaN, for ``exp2(x) /
    exp2(x)`` where exp2 overflows: seed 175's edges program 14),
    ``convert(bool) * x`` is a select (0, not NaN, for False * inf).
(g) With x64, uint64 indices of 2**63 and more clamp to 0 in jnp.take's
    clip mode where XLA folds the gather, its operand and indices known at
    compile time (JAX reads them as negative); with a traced operand or
    indices they clamp to the end, as in purejax (seed 95's edges program
    17).
(j) XLA folds the ``clz`` of a negative 8/16/32-bit constant in 64 bits,
    minus the bits it added: -56 for an int8, -32 for an int32, where 0 is
    right (as on a traced value).  Seen on a ``pad`` that cuts its operand
    away entirely, leaving the padding value (seed 16's shape program 2,
    ``--seed 16 --x64 --oracle jax --programs 400 --per-batch 20``; seed
    149's integer program 5 computes on the padding value first), and
    on values made from an integer ``x - x`` (which XLA simplifies to 0),
    through conds whose index is then known (seed 83's control program 8
    and convert program 8, ``--seed 83 --oracle jax --programs 800
    --per-batch 20``).
(k) XLA simplifies ``sqrt(x * x)`` (and ``sqrt(abs(x * x))``) to ``abs(x)``,
    without the overflow: |x| where purejax gives inf.
(l) XLA folds ``x * x >= 0`` to True and ``x * x < 0`` to False (also a dot
    product of one term, which it makes a product): wrong where a signed
    int's square wraps to a negative number (``0 <= jnp.inner(x, x)`` of
    int8 ``[12]`` is True in JAX, False in NumPy and purejax) and for a NaN.
    So ``abs(x) < 0``: False in JAX for the most negative int, whose abs
    wraps (``1 % jnp.abs(x)``, whose sign fix reads it: seed 81's big
    program 13).  And a gather in fill mode does not check that a square's
    index is >= 0: ``jnp.take(x, x * x)`` clamps a wrapped negative index
    to 0 (seed 163's index program 6).  (b), (k), (l):
    ``fuzz_deviations_squares``.
(b)-(m) are emulated by ``emulate_jax``, a NumPy-backend evaluation of the
jaxpr with those rewrites, also in the bodies of loops and conds (run here
step by step); an element is accepted where JAX gives the emulated value
and purejax the plain one.
Elements that flushing subnormals alone changes are accepted wherever
purejax gives the plain value: what XLA's fused code makes of a flushed
value varies (``floor_divide(v, v)`` of a flushed ``v`` is -1 there, NaN
when ``v`` is an input).
(i) XLA divides by a broadcast value by multiplying with its reciprocal,
    computed once and flushed when subnormal: ``x / broadcast(1.13e38)`` is
    0 in JAX, not ``x / 1.13e38``.
(h) XLA merges a dynamic_slice of a dynamic_slice into one: the inner start
    clamped to [0, n - outer size] (n: the inner operand's dimension, not
    to the room the inner window leaves), plus the outer start unclamped,
    the sum clamped once against the operand (a start into a dimension of
    length 1 taken as 0); eager JAX and purejax clamp each slice.  Checked
    against JAX over starts of both signs (seeds 73 and 75's index
    programs).  A gather of one window (``x[jnp.array([i])]``) is such an
    outer dynamic_slice: XLA makes it one first (seed 87's index program
    9, with x64).  The inner start is clamped in its own integer type, then
    converted to the outer start's and added there, both wrapping: uint8
    starts 11 and 251 make 6 (seed 92's index program 17).  Where the outer
    slice is as wide as the inner window, its start is dropped (seed 96's
    index program 10).  So is the row a scatter of one row reads from a
    dynamic_slice (``fuzz_deviations_slices``; seed 154's index program 18).
(o) XLA:CPU's float32 cbrt of a nonzero subnormal is -5.5951735e-16 (any
    sign; float64 flushes it to zero): ``jnp.cbrt(np.float32(1e-45))``.
    Seen through a pow of it, NaN where purejax gives 1 (seed 92's convert
    program 15).  Emulated from the operand before flushing
    (``fuzz_deviations_values``).
(p) XLA:CPU's max or min reduction of a uint8 negation of 4096 elements or
    more is 0 (``fuzz_deviations_values``; seed 96's big program 18).
(q) XLA squares a one-element product by a constant as (a * a) * (c * c), also
    in asinh: inf or NaN where a * a overflows (``fuzz_deviations_values``).
(r) XLA regroups divisions of quotients: (a / b) / c is a / (b * c),
    a / (b / c) is (a * c) / b, (a / b) / (c / d) is (a * d) / (b * c),
    where the products may overflow or flush: ``(x / x) / (x / x)`` is NaN
    for x = 3.4e38 (seed 113's big program 13, x64).  Divisions by a
    broadcast or a constant are products by the reciprocal (i) instead.
(s) XLA's max and min give a NaN second operand the sign bit of both
    operands' OR (min) or AND (max), a sign IEEE leaves open; cummin and
    cummax fold in that order (``fuzz_deviations_nan_sign``; seed 124's
    big program 7: ``jnp.signbit`` of a cummin after a NaN).
(t) XLA:CPU's YNNPACK reductions of 4096 elements or more skip a float ->
    int8/uint8 conversion inside them (``fuzz_deviations_values``; seed
    132's big program 9).
JAX itself dies of SIGFPE on ``lax.div(x - x, x - x)`` (XLA folds an
integer 0 / 0): fuzz_oracle runs JAX in a process of its own and counts
the programs JAX died on, apart from purejax's failures.
"""
import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.jaxpr import Literal, sub_jaxprs

import fuzz_deviations_in_place
import fuzz_deviations_nan_sign
import fuzz_deviations_slices
import fuzz_deviations_squares
import fuzz_deviations_values
from fuzz_bounds import _dist, bounded_eval
from fuzz_deviations_products import (bool_source, broadcast_divisor, broadcast_like,
                                      clamped_exp_sum, fusable, fused_multiply_add,
                                      fused_reads, product)
from purejax._src.lax.structural import pad_p as _PAD
from purejax._src.lax.slicing import _clamped_starts

# Float sums and products: JAX's order may differ, bounded by fuzz_bounds.
REASSOCIATED = frozenset({"cumsum", "cumprod", "cumlogsumexp", "reduce_sum", "reduce_prod",
                          "dot_general", "scatter-add", "scatter-mul"})


# -- (a) float rounding ---------------------------------------------------------------------------

def _sums_floats(eqn):
  return eqn.primitive.name in REASSOCIATED and eqn.outvars[0].aval.dtype.kind in "fc"


def _has_float_sum(jaxpr):
  return any(_sums_floats(e) or any(_has_float_sum(j) for j in sub_jaxprs(e.params))
             for e in jaxpr.eqns)


def after_float_sum(jaxpr):
  """For each output of ``jaxpr``, whether a float sum or product feeds it."""
  tainted = set()
  for eqn in jaxpr.eqns:
    hit = _sums_floats(eqn) or any(_has_float_sum(j) for j in sub_jaxprs(eqn.params)) or \
        any(type(v) is not Literal and v in tainted for v in eqn.invars)
    if hit:
      tainted.update(eqn.outvars)
  return [type(v) is not Literal and v in tainted for v in jaxpr.outvars]


def within_bound(value, bound, expected, got, after_sum):
  """Elementwise: JAX's and purejax's outputs both within ``bound`` of the
  NumPy reference ``value`` (unbounded elements pass only ``after_sum``)."""
  if bound is None or np.asarray(value).dtype.kind != "f":
    return np.zeros(np.shape(value), bool)
  bound = np.asarray(bound)
  # Unbounded elements (a sum that one order may overflow, and what follows
  # from it) are not comparable, as in the C-against-NumPy fuzz.
  unbounded = ~np.isfinite(bound) if after_sum else np.zeros(bound.shape, bool)
  return unbounded | ((_dist(expected, value) <= bound) & (_dist(got, value) <= bound))


def references(jaxpr, args):
  """(value, bound) per output: the NumPy reference and its error bound."""
  return bounded_eval(jaxpr, args)


# -- (b), (c): JAX's answers, emulated -------------------------------------------------------------

def _flushed(x, fired):
  """``x`` with float32/float64 subnormals made signed zeros (d)."""
  x = np.asarray(x)
  if x.dtype.kind == "c":
    return _flushed(x.real, fired) + 1j * _flushed(x.imag, fired)
  if x.dtype.kind != "f" or x.dtype == np.float16:
    return x
  sub = (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)
  if not sub.any():
    return x
  fired.add("subnormals flushed")
  return np.where(sub, np.copysign(np.zeros((), x.dtype), x), x).astype(x.dtype)


def _signed_int(aval):
  return np.dtype(aval.dtype).kind == "i"


def _log_source(prod, dtype):
  """(the log of |y| as XLA simplifies it, spread) when ``prod`` made y =
  pow(a, b) (b * log|a|), exp2(x) (x * log 2) or exp(x) (x), spread the
  identity, or a broadcast of one (spread: that broadcast); else None."""
  spread = lambda x: x   # noqa: E731
  if prod[0] == "broadcast_in_dim" and prod[3][0]:
    outer, prod = prod, prod[3][0]
    spread = lambda x: broadcast_like(x, outer)   # noqa: E731
  if prod[0] == "pow":
    a, b = (np.asarray(v) for v in prod[2][:2])
    return (b * np.log(np.abs(a).astype(dtype))).astype(dtype), spread
  if prod[0] == "exp2":
    return (np.asarray(prod[2][0]) * np.log(np.asarray(2, dtype))).astype(dtype), spread
  if prod[0] == "exp":
    return np.asarray(prod[2][0]).astype(dtype), spread
  return None


def _rewritten(eqn, vals, producers, fired, constant=(), uses=None):
  """The result XLA's rewrites (b), (f), (h), (i) give for ``eqn``, or None
  (``constant``: which operands XLA knows at compile time; ``uses``: how
  often fused code reads each variable of the jaxpr)."""
  if not eqn.outvars:
    return None
  name, out = eqn.primitive.name, eqn.outvars[0].aval
  prods = [producers.get(v) if type(v) is not Literal else None for v in eqn.invars]
  kind = np.dtype(out.dtype).kind
  with np.errstate(all="ignore"):
    if name == "abs" and _signed_int(out) and prods[0]:
      return fuzz_deviations_squares.abs_of_square(vals[0], prods[0], fired)
    if name in ("ge", "le", "lt", "gt") and (
        _signed_int(eqn.invars[0].aval) or np.dtype(eqn.invars[0].aval.dtype).kind == "f"):
      folded = fuzz_deviations_squares.square_compared_with_zero(eqn, vals, prods, fired)
      if folded is not None:
        return folded
    if name == "log" and kind == "f" and prods[0] and prods[0][0] in ("rsqrt", "exp", "exp2"):
      fired.add("log(rsqrt(x)) or log(exp(x)) simplified")   # exp2: x log 2 (seed 150)
      return (-0.5 * np.log(np.asarray(prods[0][2][0]))).astype(out.dtype) \
          if prods[0][0] == "rsqrt" else _log_source(prods[0], out.dtype)[0]
    if name in ("acosh", "asinh") and kind == "f" and prods[0]:
      source = _log_source(prods[0], out.dtype)
      if source is not None:
        log_y, spread = source
        y = np.asarray(vals[0])
        huge = np.abs(y) >= np.sqrt(np.finfo(out.dtype).max)
        if huge.any():
          fired.add(f"{name}(pow(a, b)) is log(2) + b * log(|a|) for a huge pow")
          big = np.log(np.asarray(2, out.dtype)) + spread(log_y)
          plain = np.arccosh(y) if name == "acosh" else np.arcsinh(y)
          return np.where(huge, np.sign(y) * big if name == "asinh" else big,
                          plain).astype(out.dtype)
    if name == "pow" and kind == "f" and prods[0] and prods[0][0] in ("exp", "exp2"):
      fired.add("pow(exp(a), b) is exp(a * b)")
      a = _log_source(prods[0], out.dtype)[0]
      return np.exp((a * np.asarray(vals[1])).astype(out.dtype)).astype(out.dtype)
    if (name == "div" and kind == "f" and constant[0] and not np.asarray(vals[0]).any()
        and prods[1] and prods[1][0] == "convert_element_type"
        and np.asarray(prods[1][2][0]).dtype.kind in "biu"):
      # 0 / convert(integer) is 0 to XLA, also where the integer is 0, when
      # something reads it (log2(0 / x) is -inf: seed 176's big program 13)
      fired.add("0 / convert(integer) is 0")
      d = np.asarray(vals[1])
      return np.where(d == 0, 0, np.asarray(vals[0]) / d).astype(out.dtype)
    if (name == "div" and kind == "f" and all(p and p[0] in ("exp", "exp2") for p in prods)
        and all(np.shape(v) == tuple(out.shape) for v in vals)):
      # exp(a) / exp(b) is exp(a - b): 1, not NaN, for exp2(x) / exp2(x)
      # where exp2 overflows (seed 175's edges program 14)
      fired.add("exp(a) / exp(b) is exp(a - b)")
      a, b = (_log_source(p, out.dtype)[0] for p in prods)
      return np.exp((a - b).astype(out.dtype)).astype(out.dtype)
    if name == "log" and kind == "f" and prods[0] and prods[0][0] == "pow":
      a, b = (np.asarray(v) for v in prods[0][2][:2])
      fired.add("log(pow(a, b)) is b * log(|a|)")
      return (b * np.log(np.abs(a).astype(out.dtype))).astype(out.dtype)
    if name == "mul" and kind in "fc":
      for i, p in enumerate(prods):
        if p and p[0] == "convert_element_type" and np.asarray(p[2][0]).dtype == np.bool_:
          fired.add("convert(bool) * x simplified")
          res = np.where(np.asarray(p[2][0]), np.asarray(vals[1 - i]), 0)
          return np.broadcast_to(res, out.shape).astype(out.dtype)
    # (A scalar dividing an array is a broadcast in HLO, and so is a divisor
    # with size-1 axes that the div stretches: seed 95's shape program 19.)
    scalar = name == "div" and out.shape != () and (
        np.ndim(vals[1]) == 0 or np.shape(vals[1]) != tuple(out.shape))
    spread = broadcast_divisor(prods[1]) if name == "div" else None
    if name == "div" and kind == "f" and (scalar or spread):
      one = np.ones((), out.dtype)
      divisor = vals[1] if scalar else np.asarray(spread[2][0]).astype(out.dtype)
      reciprocal = _flushed((one / np.asarray(divisor)).astype(out.dtype), fired)
      fired.add("division by a broadcast is a product by its reciprocal")
      factor = (np.broadcast_to(reciprocal, out.shape) if scalar
                else broadcast_like(reciprocal, spread))
      pred = bool_source(prods[0])
      if pred is not None:   # and that product with a converted bool a select
        fired.add("convert(bool) * x simplified")
        return np.where(pred, factor, 0).astype(out.dtype)
      return (np.asarray(vals[0]) * factor).astype(out.dtype)
    if name == "div" and kind == "f":
      regrouped = fuzz_deviations_values.quotients_regrouped(eqn, vals, prods, fired,
                                                             _flushed)
      if regrouped is not None:
        return regrouped
    if name in ("add", "sub") and out.dtype == np.float32:
      top = clamped_exp_sum(name, vals, prods, eqn.invars, uses, fired)
      if top is not None:
        return top
      # LLVM fuses only a product read once in fused code (fused_reads);
      # of two, the first operand's.
      products = [p for p, v in zip(prods, eqn.invars)
                  if product(p) is not None and fusable(uses, v)]
      if products:
        return fused_multiply_add(name, vals, prods, products[0], fired)
    if name == "sqrt" and kind == "f" and prods[0]:
      hit = fuzz_deviations_squares.sqrt_of_square(prods[0], out.shape)
      if hit is not None:
        a, same = hit
        fired.add("sqrt(x*x) simplified")
        return np.where(same, np.abs(a), np.sqrt(np.asarray(vals[0]))).astype(out.dtype)
    for wrong in (fuzz_deviations_values.extremum_of_negated_uint8(name, vals, prods, out, fired),
                  fuzz_deviations_values.square_of_scaled_scalar(eqn, vals, prods, fired),
                  fuzz_deviations_nan_sign.nan_signed(eqn, vals, fired),
                  fuzz_deviations_values.reduction_through_8bit_conversion(
                      eqn, vals, prods, fired)):
      if wrong is not None:
        return wrong
    dropped = _nan_dropping(eqn, vals, fired)
    if dropped is not None:
      return dropped
    if name == "dynamic_update_slice":
      seq = _in_place_update(vals, prods[1])
      if seq is None:
        seq = fuzz_deviations_in_place.recomputed_update(vals, prods[1])
      if seq is not None:
        fired.add("dynamic_update_slice read its own operand while writing it")
        return seq
    if name == "clz" and _signed_int(out) and (
        (prods[0] and _all_padding(prods[0])) or any(constant[:1])):
      x = np.asarray(vals[0])
      bits = 8 * x.dtype.itemsize
      if bits < 64 and (x < 0).any():
        fired.add("clz of a constant folded in 64 bits")
        plain = numpy_backend.jit_impl(eqn.primitive)(x, **eqn.params)
        return np.where(x < 0, bits - 64, plain).astype(out.dtype)
    gathered = fuzz_deviations_squares.fill_gather_of_square(eqn, vals, prods, fired)
    if gathered is not None:
      return gathered
    merged = fuzz_deviations_slices.merged(eqn, vals, prods, out, constant)
    if merged is not None:
      fired.add("nested dynamic_slice merged")
      return merged
  return None


def _nan_dropping(eqn, vals, fired, fill=None):
  """(e) A float max/min reduction holding a NaN, as NaN-dropping (or with
  its NaNs taken as ``fill``); else None."""
  name = eqn.primitive.name
  if name not in ("reduce_max", "reduce_min") or np.asarray(vals[0]).dtype.kind != "f" \
      or not np.isnan(vals[0]).any():
    return None
  fired.add("NaN dropped by a max/min reduction")
  x = np.asarray(vals[0])
  fold = np.fmax if name == "reduce_max" else np.fmin
  axes = tuple(eqn.params["axes"])
  if fill in ("after", "before"):
    # "after": each slice's elements before its last NaN forgotten too (as
    # when one accumulator lane meets the NaN and restarts from later
    # elements); "before": its elements from its first NaN on forgotten, the
    # result the reduction's start (+-inf) when the NaN comes first (seed
    # 170's big program 16: a min over an axis of 2, [nan, 5] is inf and
    # [5, nan] is 5; probed for max too, arrays of 10^5 elements).
    rest = [d for d in range(x.ndim) if d not in axes]
    flat = np.transpose(x, rest + list(axes)).reshape(
        tuple(x.shape[d] for d in rest) + (-1,))
    nan = np.isnan(flat)
    at = np.arange(flat.shape[-1])
    if fill == "after":
      last = flat.shape[-1] - 1 - np.argmax(nan[..., ::-1], axis=-1)
      forgotten = at <= np.where(nan.any(-1), last, -1)[..., None]
    else:
      first = np.argmax(nan, axis=-1)
      forgotten = at >= np.where(nan.any(-1), first, flat.shape[-1])[..., None]
    start = -np.inf if name == "reduce_max" else np.inf
    flat = np.where(forgotten, flat.dtype.type(start), flat)
    return fold.reduce(flat, axis=-1).astype(eqn.outvars[0].aval.dtype)
  if fill is not None:
    x = np.where(np.isnan(x), x.dtype.type(fill), x)
  return fold.reduce(x, axis=axes).astype(eqn.outvars[0].aval.dtype)


# emulate_jax's ``only`` modes for (e): NaNs in max/min reductions dropped,
# taken as +inf or -inf, dropped with every element before the last one, or
# with every element from the first one on (XLA:CPU's vectorized max keeps
# or drops each NaN by its place: an output
# depending on one is not predictable; seed 82's big program 3 compares
# the max with its operand, which XLA found equal to a finite element where
# an inf came before the NaN).
NAN_MODES = {"nan": None, "nan:+inf": np.inf, "nan:-inf": -np.inf, "nan:after": "after",
             "nan:before": "before"}


def _in_place_update(vals, update_producer=None):
  """(m) XLA's in-place dynamic_update_slice whose update is made of the
  operand's own elements: written element by element in row-major order,
  each read from wherever it came from in the operand, by then perhaps
  overwritten.  The sources are found by replaying the layout steps that
  made the update on the operand's flat indices (any dtype), else, for
  floats, by value (each taken as the first element of its value).  None
  where they are unknown."""
  x, update = np.asarray(vals[0]), np.asarray(vals[1])
  if update.size == 0:
    return None
  sources = None
  if update_producer is not None:
    found = _sources(update_producer, vals[0])
    sources = None if found is None else np.asarray(found).reshape(-1).tolist()
  if sources is None:
    if x.dtype.kind != "f":   # few distinct values: sources unknown by value
      return None
    first = {}
    for i, v in enumerate(x.reshape(-1).tolist()):
      first.setdefault(v, i)
    sources = [first.get(v) for v in update.reshape(-1).tolist()]
    if any(i is None for i in sources):
      return None
  starts = _clamped_starts(vals[2:], update.shape, x.shape)
  out = x.copy().reshape(-1)
  for k, src in zip(np.ndindex(update.shape), sources):
    out[np.ravel_multi_index(tuple(s + i for s, i in zip(starts, k)), x.shape)] = out[src]
  return out.reshape(x.shape)


def _layout_primitives():
  from purejax._src.lax import slicing, split_tile, structural
  prims = [structural.broadcast_in_dim_p, structural.reshape_p, structural.transpose_p,
           structural.squeeze_p, structural.rev_p, structural.concatenate_p,
           structural.copy_p, slicing.slice_p, slicing.dynamic_slice_p, split_tile.tile_p]
  return {p.name: p for p in prims}


_LAYOUT_STEPS = _layout_primitives()


def _sources(producer, operand):
  """The flat index into ``operand`` of each element of the value that
  ``producer`` (name, params, operands, their producers) made by layout
  steps from ``operand`` alone; None if it was made otherwise."""
  name, params, vals, prods = producer[:4]
  prim = _LAYOUT_STEPS.get(name)
  if prim is None:
    return None
  args = []
  for i, (v, p) in enumerate(zip(vals, prods)):
    if name == "dynamic_slice" and i > 0:
      args.append(v)   # a start index
    elif v is operand:
      args.append(np.arange(np.size(operand)).reshape(np.shape(operand)))
    elif p is not None:
      inner = _sources(p, operand)
      if inner is None:
        return None
      args.append(inner)
    else:
      return None
  return numpy_backend.jit_impl(prim)(*args, **params)


def _all_padding(producer):
  """Whether ``producer`` is a pad whose result holds none of its operand."""
  if producer[0] != "pad":
    return False
  operand = np.ones(np.shape(producer[2][0]), bool)
  kept = numpy_backend.jit_impl(_PAD)(operand, np.False_, **producer[1])
  return not np.asarray(kept).any()


def nan_dropping_reduction(producer, expected):
  """(e) Elementwise, for an output made by a float max/min reduction: where
  the reduced slice holds a NaN and JAX gives NaN, one of its elements or
  the init value (XLA:CPU's vectorized max keeps whichever operand its
  instruction order picks: [nan, 0.01, nan] gives -inf)."""
  if producer is not None and producer[0] in ("reshape", "broadcast_in_dim") and \
      len(producer) > 3 and producer[3][0] is not None and \
      np.size(producer[2][0]) == expected.size:   # keepdims: the reduction reshaped
    inner = nan_dropping_reduction(producer[3][0],
                                   expected.reshape(np.shape(producer[2][0])))
    return None if inner is None else inner.reshape(expected.shape)
  if producer is None or producer[0] not in ("reduce_max", "reduce_min"):
    return None
  x = np.asarray(producer[2][0])
  if x.dtype.kind != "f":
    return None
  axes = tuple(producer[1]["axes"])
  rest = [d for d in range(x.ndim) if d not in axes]
  slices = np.transpose(x, rest + list(axes)).reshape(expected.shape + (-1,))
  has_nan = np.isnan(slices).any(-1)
  start = -np.inf if producer[0] == "reduce_max" else np.inf   # the reduction's init value
  member = (slices == expected[..., None]).any(-1) | np.isnan(expected) | (expected == start)
  return has_nan & member


def _gather_indices(eqn, vals, fired, constant=()):
  """Gather's 64-bit indices as XLA:CPU uses them: (c) truncated to 32 bits
  outside clip mode, (g) unsigned read as signed in clip mode where XLA
  folds the gather (operand and indices known at compile time: with a
  traced operand it clamps right, seed 95's edges program 17)."""
  if eqn.primitive.name != "gather":
    return vals
  idx = np.asarray(vals[1])
  if idx.dtype.kind not in "iu" or idx.dtype.itemsize != 8:
    return vals
  if "CLIP" in str(eqn.params.get("mode")):
    if not all(constant[:2]):
      return vals
    short = idx.astype(np.int64)
    rule = "uint64 clip index read as signed"
  else:
    short = idx.astype(np.int32)
    rule = "64-bit gather index truncated"
  if (short != idx).any():
    fired.add(rule)
  return [vals[0], short] + list(vals[2:])


def _folded(eqn, constant, vals):
  """Whether XLA knows ``eqn``'s results at compile time: made from
  constants only, or what its simplifier makes a constant: an integer
  ``x - x`` (0), ``and`` with a known zero (False), a select between two
  known equal cases (seed 124's mixed program 1: ``1 ** x`` by square and
  multiply is 1)."""
  name = eqn.primitive.name
  if name == "sub" and eqn.invars[0] is eqn.invars[1] \
      and type(eqn.invars[0]) is not Literal \
      and np.dtype(eqn.invars[0].aval.dtype).kind in "iu":
    return True
  if name == "and" and any(c and not np.asarray(v).any() for c, v in zip(constant, vals)):
    return True
  if name == "integer_pow" and eqn.params["y"] == 0:   # x ** 0 is 1 (seed 143)
    return True
  if name == "pad" and constant[1] and _all_padding((name, eqn.params, vals)):
    return True   # only its padding value left (seed 149's integer program 5)
  if name == "select_n" and all(constant[1:]) and all(
      np.array_equal(vals[1], v) for v in vals[2:]):
    return True
  return all(constant)


def emulate_jax(jaxpr, args, consts=(), fired=None, arg_producers=None, only=None,
                arg_constant=None, with_constant=False, raw_args=None):
  """``jaxpr``'s outputs by the NumPy backend with deviations (b)-(o) (only
  (d) with ``only="flush"``, only (e)'s NaN-dropping max/min with
  ``only="nan"``, or with their NaNs as +inf or -inf with ``"nan:+inf"``,
  ``"nan:-inf"``, only (o), without flushing, with ``only="values"``: XLA
  does not flush every subnormal operand), and what produced each (name, params, operands, their
  producers); the names of the rules that changed something are added to
  ``fired``.  ``arg_constant``: which arguments XLA knows at compile time;
  ``with_constant``: also return which outputs it does; ``raw_args``: the
  arguments before flushing subnormals (default ``args``)."""
  fired = set() if fired is None else fired
  flush = (lambda x, _: np.asarray(x)) if only in NAN_MODES or only == "values" else _flushed
  env = dict(zip(jaxpr.constvars, (np.asarray(c) for c in consts)))
  env.update(zip(jaxpr.invars, (flush(a, fired) for a in args)))
  raw = dict(zip(jaxpr.invars, (np.asarray(a) for a in (raw_args or args))))   # unflushed
  producers = {v: p for v, p in zip(jaxpr.invars, arg_producers or []) if p}
  # Values XLA knows at compile time (for (j)): literals, constants, and
  # what _folded makes from them.
  known = set(jaxpr.constvars) | {v for v, c in zip(jaxpr.invars, arg_constant or []) if c}
  uses = fused_reads(jaxpr)

  def read(v):
    return flush(v.val, fired) if type(v) is Literal else env[v]

  for eqn in jaxpr.eqns:
    vals = [read(v) for v in eqn.invars]
    param = getattr(eqn.primitive, "call_jaxpr_param", None)
    constant = [type(v) is Literal or v in known for v in eqn.invars]
    raw_vals = [raw.get(v, vals[i]) if type(v) is not Literal else np.asarray(v.val)
                for i, v in enumerate(eqn.invars)]
    special = (fuzz_deviations_values.function_value(eqn, vals, raw_vals, fired)
               if fuzz_deviations_values.applies(eqn) and only in (None, "values") else
               None if only in ("flush", "values") else
               _nan_dropping(eqn, vals, fired, NAN_MODES[only]) if only in NAN_MODES
               else _rewritten(eqn, vals, producers, fired, constant, uses))
    made = [None] * len(eqn.outvars)
    folded = [False] * len(eqn.outvars)
    if special is not None:
      outs = [special]
      folded = [_folded(eqn, constant, vals)]
    elif eqn.primitive.name in _CONTROL_FLOW:
      prods = [producers.get(v) if type(v) is not Literal else None for v in eqn.invars]
      outs, folded, made = _CONTROL_FLOW[eqn.primitive.name](eqn.params, vals, prods, fired,
                                                             only, constant)
    elif param and eqn.params.get(param) is not None:
      closed = eqn.params[param]
      inner = [producers.get(v) if type(v) is not Literal else None for v in eqn.invars]
      outs, made, folded = emulate_jax(closed.jaxpr, vals, closed.consts, fired, inner, only,
                                       constant, with_constant=True, raw_args=raw_vals)
    else:
      vals = vals if only else _gather_indices(eqn, vals, fired, constant)
      with np.errstate(all="ignore"):
        out = numpy_backend.jit_impl(eqn.primitive)(*vals, **eqn.params)
      outs = list(out) if eqn.primitive.multiple_results else [out]
      folded = [_folded(eqn, constant, vals)] * len(eqn.outvars)
    known.update(v for v, f in zip(eqn.outvars, folded) if f)
    for v, o, m in zip(eqn.outvars, outs, made):
      raw[v] = np.asarray(o, v.aval.dtype)
      env[v] = flush(raw[v], fired)
      producers[v] = m or (eqn.primitive.name, eqn.params, vals,
                           [producers.get(u) if type(u) is not Literal else None
                            for u in eqn.invars], eqn.primitive, constant)
  result = ([read(v) for v in jaxpr.outvars],
            [producers.get(v) if type(v) is not Literal else None for v in jaxpr.outvars])
  if with_constant:
    result += ([type(v) is Literal or v in known for v in jaxpr.outvars],)
  return result


# -- control flow, step by step, with the rewrites inside its bodies ------------------------------
# A body's operands keep their producers where they are the same value on
# every step (constants, a cond's operands): a rewrite may look through them.

def _body(closed, vals, prods, fired, only, constant=()):
  """A body's outputs, which of them XLA knows at compile time, and what
  produced them."""
  jaxpr, consts = (closed.jaxpr, closed.consts) if hasattr(closed, "consts") else (closed, ())
  prods = list(prods) + [None] * (len(vals) - len(prods))
  outs, made, folded = emulate_jax(jaxpr, list(vals), consts, fired, prods, only,
                                   list(constant), with_constant=True)
  return outs, folded, made


def _cond(params, vals, prods, fired, only, constant):
  branches = params["branches"]
  index = int(np.clip(np.asarray(vals[0]), 0, len(branches) - 1))
  # A known index: XLA inlines the branch, which sees the known operands.
  known = constant[1:] if constant[0] else ()
  outs, folded, made = _body(branches[index], vals[1:], prods[1:], fired, only, known)
  # (inlined, its results' producers are seen by what follows: seed 144)
  return outs, [f and constant[0] for f in folded], made if constant[0] else [None] * len(outs)


def _while(params, vals, prods, fired, only, constant):
  nc, nb = params["cond_nconsts"], params["body_nconsts"]
  cond_consts, body_consts, carry = vals[:nc], vals[nc:nc + nb], list(vals[nc + nb:])
  init, steps = carry, 0
  while bool(np.asarray(_body(params["cond_jaxpr"], cond_consts + carry, prods[:nc], fired,
                              only)[0][0])):
    carry = _body(params["body_jaxpr"], body_consts + carry, prods[nc:nc + nb], fired,
                  only)[0]
    steps += 1
  made = [None] * len(carry)
  if steps == 1:
    # A loop that runs once XLA unrolls (its trip count known): the step
    # again with the initial values' producers, so that later rewrites see
    # through it (seed 85's control program 12).
    carry, _, made = _body(params["body_jaxpr"], body_consts + init,
                           prods[nc:nc + nb] + list(prods[nc + nb:]), fired, only)
  return carry, [False] * len(carry), made


def _scan(params, vals, prods, fired, only, constant):
  nc, ncarry, length = params["num_consts"], params["num_carry"], params["length"]
  consts, carry, xs = vals[:nc], list(vals[nc:nc + ncarry]), vals[nc + ncarry:]
  body = params["jaxpr"]
  ys = [None] * length
  for i in (reversed(range(length)) if params["reverse"] else range(length)):
    out = _body(body, consts + carry + [np.asarray(x)[i] for x in xs], prods[:nc], fired,
                only)[0]
    carry, ys[i] = out[:ncarry], out[ncarry:]
  stacked = [np.stack([y[k] for y in ys]) if length else np.zeros((0,) + a.shape, a.dtype)
             for k, a in enumerate(body.out_avals[ncarry:])]
  return carry + stacked, [False] * (len(carry) + len(stacked)), [None] * (len(carry)
                                                                          + len(stacked))


_CONTROL_FLOW = {"cond": _cond, "while": _while, "scan": _scan}
