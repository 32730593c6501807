"""Deviations (o), (p), (q), (r) and (t) of benchmarks/fuzz_deviations.py:
values XLA:CPU computes wrongly, or otherwise than the program says.

(o) float32 cbrt of a subnormal, emulated from the operand before
    subnormals are flushed (which is how XLA gets it wrong).
(p) A max or min reduction of a uint8 negation (``jnp.max(-x)``) over an
    operand of 4096 elements or more is 0 everywhere: XLA:CPU's vectorized
    loop takes ``0 - x`` as a saturating subtraction.  Below 4096 elements,
    for int8, uint16 and uint32, and without the negation, it is right
    (probed over shapes (n,), (k, n) and (n, k) along either axis; seed 96's
    big program 18).
(q) XLA's algebraic simplifier squares a one-element product by a constant,
    ``y = a * c`` (or ``a / d``, which it makes ``a * (1 / d)``), as
    ``(a * a) * (c * c)``: ``jnp.square(jnp.sum(x) / 65)`` is inf where
    ``a * a`` overflows, and so is the square inside XLA's asinh, whose
    ``log1p(|y| + y^2 / (sqrt(y^2 + 1) + 1))`` is then inf / inf, NaN, for
    ``|y|`` below sqrt(max) (from there it is ``log(2 |y|)``).  Arrays of
    two elements or more are squared as they are (seed 98's reduce program
    3: ``jnp.arcsinh(jnp.var(x))`` of int32 ``x`` spanning its range).
    Emulated only where the overflow (or an underflow to zero) changes the
    value; a select on a predicate known at compile time is looked
    through, as XLA folds it.
(r) XLA regroups divisions of quotients (its rewrite in fuzz_deviations'
    docstring), ``reciprocal(b)`` being ``1 / b``; a product with a
    divisor converted from bools is a select there too, as (f) has it.
(t) XLA:CPU's YNNPACK fusion of a float32/float64 reduction over 4096
    elements or more (along an axis longer than 1) takes a conversion from
    that float type to int8 or uint8 inside it as the identity: the values
    stay floats, not truncated, saturated or NaN made 0, and the integer
    arithmetic after it (add, sub, mul, max, min, neg) is done on them in
    float: ``jnp.sum(x.astype(jnp.int8).astype(jnp.float32))`` of 4096
    times 2.7 is 4096 * 2.7 (seed 132's big program 9, a mean of
    ``lax.min(a, b.astype(jnp.int8))`` with NaNs in ``b``: NaN).  int16,
    int32, float16 and a float32 -> int8 -> float64 chain are right.
"""
import numpy as np

from purejax._src.backends import numpy_backend

from fuzz_deviations_products import bool_source

# XLA:CPU's float32 cbrt of any nonzero subnormal (either sign).
CBRT_OF_SUBNORMAL = np.float32(-5.5951735e-16)


def applies(eqn):
  return eqn.primitive.name == "cbrt" and np.dtype(eqn.outvars[0].aval.dtype) == np.float32


def function_value(eqn, vals, raw_vals, fired):
  """XLA's result of ``eqn`` (one ``applies`` takes), or None."""
  raw = np.asarray(raw_vals[0])
  sub = (raw != 0) & (np.abs(raw) < np.finfo(np.float32).tiny)
  if not sub.any():
    return None
  fired.add("cbrt of a subnormal")
  plain = numpy_backend.jit_impl(eqn.primitive)(np.asarray(vals[0]), **eqn.params)
  return np.where(sub, CBRT_OF_SUBNORMAL, plain).astype(np.float32)


NEGATED_UINT8_SIZE = 4096   # (p): the operand size from which XLA gets it wrong


def extremum_of_negated_uint8(name, vals, prods, out, fired):
  """(p) XLA's result of a max/min reduction ``name`` of a uint8 negation
  of at least NEGATED_UINT8_SIZE elements (zeros), or None."""
  if (name in ("reduce_max", "reduce_min") and np.dtype(out.dtype) == np.uint8
          and prods[0] and prods[0][0] == "neg"
          and np.size(vals[0]) >= NEGATED_UINT8_SIZE):
    fired.add("max or min of a uint8 negation")
    return np.zeros(out.shape, np.uint8)
  return None


# (q): from this |y| on, XLA's float32 asinh is log(|y|) + log(2).
ASINH_LOG_FROM = np.float32(1.8446743e19)


def _known_select_folded(prod):
  """``prod`` (a producer: name, params, operands, their producers,
  primitive, which operands are known at compile time) past selects whose
  predicate is known, as XLA folds them."""
  while prod and prod[0] == "select_n" and len(prod) > 5 and prod[5][0] \
      and np.size(prod[2][0]) == 1:
    prod = prod[3][1 + int(np.asarray(prod[2][0]).reshape(-1)[0])]
  return prod


def _scaled_scalar(prod):
  """(a, c) where ``prod`` made a one-element ``y = a * c`` (or ``a / d``,
  c = 1 / d) with c known at compile time and a not, else None."""
  prod = _known_select_folded(prod)
  if not prod or prod[0] not in ("mul", "div") or len(prod) < 6:
    return None
  (a, b), known = (np.asarray(v) for v in prod[2][:2]), prod[5]
  if a.dtype.kind != "f" or a.size != 1 or b.size != 1:
    return None
  if known[1] and not known[0]:
    return a, (np.ones((), b.dtype) / b if prod[0] == "div" else b)
  if prod[0] == "mul" and known[0] and not known[1]:
    return b, a
  return None


def square_of_scaled_scalar(eqn, vals, prods, fired):
  """(q) XLA's result of a square, or an asinh, of a one-element product by
  a constant, where squaring it as ``(a * a) * (c * c)`` changes it; None
  elsewhere."""
  name = eqn.primitive.name
  square = name == "square" or (name == "integer_pow" and eqn.params["y"] == 2) or (
      name == "mul" and eqn.invars[0] is eqn.invars[1])
  if not (square or name == "asinh") or not prods[0]:
    return None
  hit = _scaled_scalar(prods[0])
  if hit is None:
    return None
  a, c = hit
  y = np.asarray(vals[0])
  with np.errstate(all="ignore"):
    y2 = (a * a) * (c * c)
    plain = y * y
    changed = (np.isinf(y2) & np.isfinite(plain)) | ((y2 == 0) & (plain != 0))
    if square and changed.any():
      fired.add("square of a scalar product by a constant reassociated")
      return np.where(changed, y2, plain).astype(y.dtype).reshape(eqn.outvars[0].aval.shape)
    if name == "asinh" and (changed & (np.abs(y) < ASINH_LOG_FROM)).any():
      fired.add("square of a scalar product by a constant reassociated")
      nan = np.isinf(y2) & (np.abs(y) < ASINH_LOG_FROM)
      return np.where(nan, np.nan, np.arcsinh(y)).astype(y.dtype)
  return None


def _plain_quotient(prod, shape):
  """(a, b) where ``prod`` made ``a / b`` elementwise (same shapes, b not
  broadcast nor known at compile time: XLA keeps it a division; also
  ``integer_pow(b, -1)``, which XLA makes ``1 / b``), else None."""
  if prod and prod[0] == "integer_pow" and prod[1].get("y") == -1 and len(prod) >= 6 \
      and not prod[5][0]:
    b = np.asarray(prod[2][0])
    return (np.ones(shape, b.dtype), b) if b.shape == tuple(shape) else None
  if not prod or prod[0] != "div" or len(prod) < 6 or prod[5][1]:
    return None
  a, b = (np.asarray(v) for v in prod[2][:2])
  if a.shape != tuple(shape) or b.shape != tuple(shape) or (
      prod[3][1] and prod[3][1][0] == "broadcast_in_dim"):
    return None
  return a, b


def quotients_regrouped(eqn, vals, prods, fired, flushed):
  """(r) XLA's division of quotients: (a / b) / c is a / (b * c), a / (b /
  c) is (a * c) / b, (a / b) / (c / d) is (a * d) / (b * c), the products
  flushed by ``flushed(x, fired)``; None for other divisions."""
  shape = eqn.outvars[0].aval.shape
  if np.shape(vals[0]) != tuple(shape) or np.shape(vals[1]) != tuple(shape) or (
      prods[1] and prods[1][0] == "broadcast_in_dim"):
    return None
  top, bottom = _plain_quotient(prods[0], shape), _plain_quotient(prods[1], shape)
  if top is None and bottom is None:
    return None
  a, b = top if top is not None else (np.asarray(vals[0]), None)
  c, d = bottom if bottom is not None else (np.asarray(vals[1]), None)
  # A divisor converted from bools makes b * c a select, as (f) has it: +0,
  # not -0, for False (seed 171's shape program 13: (1 / x) / float(False)
  # is +inf for a negative x).
  pred = bool_source(prods[1]) if bottom is None else None
  with np.errstate(all="ignore"):
    numerator = a if d is None else flushed(a * d, fired)
    if b is not None and pred is not None:
      product = np.where(pred, b * c, np.zeros((), c.dtype)).astype(c.dtype)
    else:
      product = None if b is None else b * c
    denominator = c if b is None else flushed(product, fired)
    fired.add("a division of quotients regrouped")
    return flushed((numerator / denominator).astype(a.dtype), fired)


YNN_SIZE = 4096   # (t): the reduction operand size from which XLA uses YNNPACK
_YNN_ARITHMETIC = frozenset(("add", "sub", "mul", "max", "min", "neg"))


def _ynn_floats(value, producer, dtype):
  """(t) The 8-bit integer ``value`` (made by ``producer``) as YNNPACK
  computes it, in float ``dtype``, and whether that differs from plain
  conversion (a conversion from ``dtype`` is somewhere in its making)."""
  if producer and producer[0] == "convert_element_type" and \
      np.asarray(producer[2][0]).dtype == dtype:
    return np.asarray(producer[2][0]), True
  if producer and producer[0] in _YNN_ARITHMETIC:
    parts = [_ynn_floats(v, p, dtype) for v, p in zip(producer[2], producer[3])]
    if any(changed for _, changed in parts):
      args = [np.asarray(v).astype(dtype) for v, _ in parts]
      with np.errstate(all="ignore"):
        return numpy_backend.jit_impl(producer[4])(*args, **producer[1]), True
  return np.asarray(value).astype(dtype), False


def reduction_through_8bit_conversion(eqn, vals, prods, fired):
  """(t) XLA's result of a float sum, max or min reduction of 8-bit
  integers converted to float that were converted from that float type;
  None elsewhere."""
  if eqn.primitive.name not in ("reduce_sum", "reduce_max", "reduce_min"):
    return None
  out, x = np.dtype(eqn.outvars[0].aval.dtype), np.asarray(vals[0])
  if out not in (np.float32, np.float64) or x.size < YNN_SIZE or \
      all(x.shape[a] == 1 for a in eqn.params["axes"]):
    return None
  convert = prods[0]
  if not convert or convert[0] != "convert_element_type" or \
      np.asarray(convert[2][0]).dtype not in (np.int8, np.uint8):
    return None
  floats, changed = _ynn_floats(convert[2][0], convert[3][0], out)
  if not changed:
    return None
  fired.add("YNNPACK reduction through an 8-bit conversion")
  with np.errstate(all="ignore"):
    return numpy_backend.jit_impl(eqn.primitive)(floats.astype(out), **eqn.params)
