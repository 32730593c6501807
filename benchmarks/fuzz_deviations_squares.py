"""Deviations (b), (k) and (l) of benchmarks/fuzz_deviations.py: XLA's
algebra takes a square (``x * x``, ``abs(x)``) for non-negative, although a
signed integer's square may wrap to a negative number.

(b) ``abs(x * x)`` is ``x * x``.
(k) ``sqrt(x * x)`` is ``abs(x)``, without the overflow.
(l) ``x * x >= 0`` is True and ``x * x < 0`` False.  So a select on such a
    comparison is its chosen case (jnp's normalization of negative
    indices, ``where(i < 0, i + n, i)``, is dropped for a square ``i``), and
    a gather in fill mode (``jnp.take``'s default) does not check that a
    square's index is >= 0: a wrapped negative index is clamped to 0 as in
    clip mode, not filled (seed 163's index program 6, ``jnp.take(x, x * x,
    axis=1)`` of int32 ``x``).
"""
import numpy as np

from purejax._src.backends import numpy_backend

from fuzz_deviations_products import broadcast_like


def abs_of_square(x, prod, fired):
  """(b) JAX's abs(x * x) on a signed int: the product itself where XLA sees
  one operand twice (equal values here)."""
  same = _square_of(prod, x.shape)
  if same is None:
    return None
  if (same & (x < 0)).any():
    fired.add("abs(x*x) simplified")
  return np.where(same, x, np.abs(x)).astype(x.dtype)


def _through_layout(prod):
  """(the producer under broadcasts and reshapes of ``prod``'s value, a
  function spreading a value of its shape as they do): XLA moves abs,
  sqrt and comparisons past them (seed 168's integer program 5,
  ``abs(expand_dims(x * x, 0))``; also probed for sqrt and ``>= 0``)."""
  name, params, pvals, inner = prod[:4]
  if name in ("broadcast_in_dim", "reshape") and inner[0] is not None and (
      name != "reshape" or params.get("dimensions") is None):
    core, spread = _through_layout(inner[0])
    if name == "broadcast_in_dim":
      return core, lambda x: broadcast_like(spread(x), prod)
    out_shape = tuple(params["new_sizes"])
    return core, lambda x: np.reshape(spread(x), out_shape)
  return prod, lambda x: x


def _square_of(prod, shape):
  """Where the value ``prod`` produced is ``a * a`` (None: nowhere), also
  through broadcasts and reshapes."""
  core, spread = _through_layout(prod)
  if core is not prod:
    same = _square_of(core, np.shape(_value_of(core)))
    return None if same is None else np.broadcast_to(spread(same), shape)
  name, params, pvals = prod[:3]
  if name == "square" or (name == "integer_pow" and params.get("y") == 2):
    return np.ones(shape, bool)
  if name == "mul":
    return np.broadcast_to(np.asarray(pvals[0]) == np.asarray(pvals[1]), shape)
  if name == "dot_general":   # one term: XLA makes it a product
    (lc, _), _ = params["dimension_numbers"]
    a, b = np.asarray(pvals[0]), np.asarray(pvals[1])
    if np.prod([a.shape[d] for d in lc], dtype=np.int64) == 1 and a.shape == b.shape \
        and np.array_equal(a, b):
      return np.ones(shape, bool)
  return None


_SQUARE_VS_ZERO = {("ge", 0): True, ("le", 1): True, ("lt", 0): False, ("gt", 1): False}


def square_compared_with_zero(eqn, vals, prods, fired):
  """(l) ``x * x >= 0`` and ``abs(x) >= 0`` (and their mirror images)
  folded to True."""
  for i, p in enumerate(prods):
    folded = _SQUARE_VS_ZERO.get((eqn.primitive.name, i))
    if folded is None or p is None or np.any(np.asarray(vals[1 - i]) != 0):
      continue
    same = _xla_nonnegative(p, np.shape(vals[i]))
    if same is None:
      continue
    plain = numpy_backend.jit_impl(eqn.primitive)(*vals, **eqn.params)
    same = np.broadcast_to(same, np.shape(plain))
    if (same & (plain != folded)).any():
      fired.add("comparison of a square with 0 folded")
    return np.where(same, folded, plain)
  return None


def _xla_nonnegative(prod, shape):
  """Where XLA takes the value ``prod`` made for >= 0 by its algebra: a
  square, an abs, a select among such values and non-negative constants
  (None: nowhere)."""
  if prod is None:
    return None
  if prod[0] == "abs":
    return np.ones(shape, bool)
  if prod[0] == "broadcast_in_dim" and prod[3][0] is not None:
    mask = _xla_nonnegative(prod[3][0], np.shape(prod[2][0]))
    return None if mask is None else broadcast_like(mask, prod)
  choice = _folded_choice(prod)
  if choice is not None:   # XLA keeps only the case chosen
    case = prod[3][1 + choice]
    return None if case is None else _xla_nonnegative(case, shape)
  if prod[0] == "select_n":
    masks = []
    for v, p in zip(prod[2][1:], prod[3][1:]):
      mask = _xla_nonnegative(p, shape)
      if mask is None:   # a constant (perhaps broadcast) that is >= 0
        if (p is not None and p[0] != "broadcast_in_dim") or np.any(np.asarray(v) < 0):
          return None
        mask = np.ones(shape, bool)
      masks.append(np.broadcast_to(mask, shape))
    return np.logical_and.reduce(masks)
  return _square_of(prod, shape)


def sqrt_of_square(prod, shape):
  """(k) sqrt(a * a) (or of its abs) is |a| to XLA: ``a`` and where it applies."""
  core, spread = _through_layout(prod)
  if core[0] == "abs" and core[3][0]:
    core = core[3][0]
  same = _square_of(core, np.shape(_value_of(core)))
  if same is None or not same.any():
    return None
  return (np.broadcast_to(spread(np.asarray(core[2][0])), shape),
          np.broadcast_to(spread(same), shape))


def _value_of(prod):
  """The value ``prod`` made (its operands' shape for these elementwise and
  product producers: recomputed from them)."""
  return numpy_backend.jit_impl(prod[4])(*prod[2], **prod[1])


def _folded_choice(prod):
  """The case a select_n takes everywhere where XLA folds its predicate (a
  square compared with 0, (l)); else None."""
  if prod[0] != "select_n" or len(prod[2]) != 3 or prod[3][0] is None:
    return None
  pred = prod[3][0]
  for i, p in enumerate(pred[3][:2]):
    folded = _SQUARE_VS_ZERO.get((pred[0], i))
    if folded is None or p is None or np.any(np.asarray(pred[2][1 - i]) != 0):
      continue
    same = _xla_nonnegative(p, np.shape(pred[2][i]))
    if same is not None and np.all(same):
      return int(folded)
  return None


def fill_gather_of_square(eqn, vals, prods, fired):
  """(l) A gather in fill mode whose indices XLA takes for >= 0: negative
  ones are clamped to 0, not filled; else None."""
  if eqn.primitive.name != "gather" or "FILL" not in str(eqn.params.get("mode")):
    return None
  idx = np.asarray(vals[1])
  if idx.dtype.kind != "i" or prods[1] is None:
    return None
  same = _xla_nonnegative(prods[1], idx.shape)
  if same is None:
    return None
  wrapped = same & (idx < 0)
  if not wrapped.any():
    return None
  fired.add("gather of a square's index: no check for >= 0")
  return numpy_backend.jit_impl(eqn.primitive)(vals[0], np.where(wrapped, 0, idx).astype(idx.dtype),
                                               **eqn.params)
