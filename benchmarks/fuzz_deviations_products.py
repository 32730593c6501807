"""Deviations (i) and (n) of benchmarks/fuzz_deviations.py, as
``emulate_jax`` sees them: what XLA makes a product (a division by a
broadcast value is a product by its reciprocal; a converted bool times x is
a select), and the float32 sums LLVM fuses with a product (FMA)."""
import collections

import numpy as np

from purejax._src.backends import numpy_backend
from purejax._src.jaxpr import Literal
from purejax._src.lax.structural import broadcast_in_dim_p as _BROADCAST


# Readers that XLA gives a fusion of their own, copying into it a product
# they read: the product's other readers may still fuse with it.
_OWN_FUSION = frozenset({
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
    "reduce_xor", "argmax", "argmin", "dot_general", "cumsum", "cumprod", "cummax", "cummin",
    "cumlogsumexp", "sort", "conv_general_dilated", "reduce_window", "reduce_window_sum",
    "reduce_window_max", "reduce_window_min"})


# A product with several fused readers is fused with a sum or not as XLA
# splits the fusions (seed 145's mixed program 11: x * x fused into
# ``x * x - mean(x * x)``, although ``x * x <= x`` reads it too, apparently
# in a fusion of its own): the oracle emulates both (``fusing_every_product``).
_every_product = [False]


class fusing_every_product:
  """Within it, emulate_jax fuses every product read by a sum."""

  def __enter__(self):
    _every_product[0] = True

  def __exit__(self, *exc):
    _every_product[0] = False


def fusable(reads, v):
  """Whether LLVM may fuse the product ``v`` (a jaxpr variable or a
  Literal) into the sum reading it, by ``fused_reads``'s count ``reads``."""
  return reads is None or _every_product[0] or type(v) is not Literal and reads[v] == 1


def fused_reads(jaxpr):
  """How often each variable of ``jaxpr`` is read in the fused elementwise
  code around it (an output is such a read; a reduction, a product or a
  scatter reading it is not): LLVM fuses a product read once into a sum
  (seed 145's control program 19: floor_divide's quotient, also selected,
  is not fused; its mixed program 11: x * x, also summed, is)."""
  reads = collections.Counter(
      v for e in jaxpr.eqns if e.primitive.name not in _OWN_FUSION
      and not e.primitive.name.startswith("scatter") for v in e.invars if type(v) is not Literal)
  reads.update(v for v in jaxpr.outvars if type(v) is not Literal)
  return reads


def bool_source(producer):
  """The booleans a float value was converted from (also broadcast, or
  chosen by a select on one predicate, which XLA folds when it is known:
  jnp.floor_divide's by a zero constant, seed 86), or None."""
  if producer and producer[0] == "select_n" and np.ndim(producer[2][0]) == 0:
    chosen = producer[3][1 + int(np.asarray(producer[2][0]))]
    return bool_source(chosen)
  if producer and producer[0] == "broadcast_in_dim" and producer[3][0]:
    inner = bool_source(producer[3][0])
    return None if inner is None else broadcast_like(inner, producer)
  if producer and producer[0] == "convert_element_type" and \
      np.asarray(producer[2][0]).dtype == np.bool_:
    return np.asarray(producer[2][0])
  return None


def product(producer):
  """The float32 factors of a product (also of a square or integer_pow 2, and of a division
  by a broadcast value, which XLA makes a product by its reciprocal), or
  None."""
  square = producer and (producer[0] == "square" or (
      producer[0] == "integer_pow" and producer[1].get("y") == 2))
  if not producer or (producer[0] not in ("mul", "div") and not square) or \
      np.asarray(producer[2][0]).dtype != np.float32:
    return None
  if square:   # XLA's x * x (integer_pow 2 too: seed 170's big program 10)
    return producer[2][0], producer[2][0]
  if any(bool_source(p) is not None for p in producer[3][:1 + (producer[0] == "mul")]):
    return None   # a converted bool times x is a select, not a product
  if producer[0] == "mul":
    return producer[2][0], producer[2][1]
  divisor = producer[2][1] if len(producer[2]) > 1 else None
  if producer[0] == "div" and np.shape(producer[2][0]) != () and (
      np.ndim(divisor) == 0 or broadcast_divisor(producer[3][1])):
    with np.errstate(all="ignore"):
      return producer[2][0], (np.float32(1) / np.asarray(divisor)).astype(np.float32)
  return None


def fused_multiply_add(name, vals, prods, fused, fired):
  """(n) A float32 sum or difference with one product (``fused``, one of
  ``prods``), fused: the product exact (in float64, where a float32 product
  always is), one rounding."""
  a, b = (np.asarray(v, np.float64) for v in product(fused))
  exact = a * b
  first, second = [exact if p is fused else np.asarray(v, np.float64)
                   for v, p in zip(vals, prods)]
  with np.errstate(all="ignore"):
    out = (first + second if name == "add" else first - second).astype(np.float32)
  fired.add("a product and a sum fused (FMA)")
  return out


def broadcast_divisor(producer):
  """The broadcast_in_dim that made a divisor, directly or through a
  conversion (which XLA moves before the broadcast: seed 115's control
  program 13 divides by a broadcast uint8 array made float), or None."""
  if producer and producer[0] == "convert_element_type" and producer[3][0]:
    producer = producer[3][0]
  return producer if producer and producer[0] == "broadcast_in_dim" else None


def broadcast_like(x, producer):
  """``x`` broadcast as ``producer`` (a broadcast_in_dim) broadcast its operand."""
  return numpy_backend.jit_impl(_BROADCAST)(x, *producer[2][1:], **producer[1])


# XLA's float32 exp clamps its input at 88.8, where its last step, a
# product by 2**128, is (in float64, exactly) this:
_EXP_CLAMP = np.float32(88.8)
_EXP_TOP = float(np.float32(1.0802183151245117)) * 2.0 ** 128


def clamped_exp_sum(name, vals, prods, invars, reads, fired):
  """(n) A float32 sum or difference with an exp whose input XLA clamped:
  the exp's last product fused with it, one rounding, so finite where the
  other operand brings it back into range (seed 160's big program 5:
  ``exp(x) - x`` of 3.4e38 is 2.76e37, with x64 or not); None elsewhere."""
  for i, (prod, v) in enumerate(zip(prods, invars)):
    if not prod or prod[0] != "exp" or np.asarray(prod[2][0]).dtype != np.float32 \
        or not fusable(reads, v):
      continue
    clamped = np.asarray(prod[2][0]) >= _EXP_CLAMP
    if not clamped.any():
      continue
    top = np.where(clamped, _EXP_TOP, np.asarray(vals[i], np.float64))
    other = np.asarray(vals[1 - i], np.float64)
    first, second = (top, other) if i == 0 else (other, top)
    with np.errstate(all="ignore"):
      out = (first + second if name == "add" else first - second).astype(np.float32)
    fired.add("exp's last product fused with a sum (FMA)")
    return out
  return None
