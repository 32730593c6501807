"""Counting the work of a jaxpr the way XLA's cost analysis does.

``jit(f).lower(x).cost_analysis()`` in JAX reports XLA's estimate for the
unoptimized program: ``flops`` (one per element of an elementwise operation,
``2*M*N*K`` for a matrix product, ``n - 1`` per reduced row),
``transcendentals`` (one per element of exp, log, sin, sqrt, pow, ...), and
``bytes accessed`` (each operation's operands plus its results), with the
bytes split per operand position as ``bytes accessed{i}{}`` and
``bytes accessedout{}``.  Keys whose count is zero are left out, as XLA does.

We count the same from the jaxpr, equation by equation, mirroring the few
operations XLA's lowering adds (a scalar operand of an elementwise operation
is broadcast first; a reduction reads its initial value).  ``fused_bytes``
estimates the traffic of the C backend's fused kernels instead, as XLA's
estimate for the compiled (fused) program does.
"""
import math

import numpy as np

from purejax._src.jaxpr import ClosedJaxpr, Literal, sub_jaxprs

FLOPS = "flops"
TRANSCENDENTALS = "transcendentals"
BYTES = "bytes accessed"
OUT_BYTES = "bytes accessedout{}"


def operand_key(i):
  return f"bytes accessed{i}{{}}"


# Per element of the result: (flops, transcendentals).  A few are several
# operations in XLA's lowering (exp2 is exp(x * ln 2), logistic 1/(1+exp(-x))).
_ELEMENTWISE = {}
for _name in ("add", "add_any", "sub", "mul", "div", "rem", "max", "min", "neg", "abs",
              "sign", "floor", "ceil", "round", "convert_element_type", "eq", "ne", "lt",
              "le", "gt", "ge", "and", "or", "xor", "not", "select_n", "clamp",
              "nextafter", "shift_left", "shift_right_arithmetic", "shift_right_logical",
              "population_count", "clz", "is_finite", "real", "imag", "conj", "complex",
              "reduce_precision", "mulhi", "square"):
  _ELEMENTWISE[_name] = (1, 0)
for _name in ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
              "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2", "sqrt", "rsqrt",
              "cbrt", "pow", "erf", "erfc", "erf_inv", "lgamma", "digamma", "igamma",
              "igammac", "igamma_grad_a", "random_gamma_grad", "polygamma", "zeta",
              "bessel_i0e", "bessel_i1e", "regularized_incomplete_beta"):
  _ELEMENTWISE[_name] = (0, 1)
_ELEMENTWISE["exp2"] = (1, 1)
_ELEMENTWISE["logistic"] = (3, 1)
# Operations that move data without arithmetic.
_FREE = frozenset({"copy", "broadcast_in_dim", "reshape", "squeeze", "transpose",
                   "rev", "concatenate", "pad", "iota", "bitcast_convert_type"})
_REDUCTIONS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                         "reduce_and", "reduce_or", "reduce_xor"})
_CUMULATIVE = frozenset({"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"})


class Cost(dict):
  """Counts by key; ``+=`` adds, ``maximum`` takes the larger count per key."""

  def add(self, key, value):
    if value:
      self[key] = self.get(key, 0.0) + float(value)

  def __iadd__(self, other):
    for k, v in other.items():
      self.add(k, v)
    return self

  def maximum(self, other):
    for k, v in other.items():
      self[k] = max(self.get(k, 0.0), v)
    return self

  def read(self, i, nbytes):
    """Counts ``nbytes`` read through operand ``i``."""
    self.add(BYTES, nbytes)
    self.add(operand_key(i), nbytes)

  def write(self, nbytes):
    self.add(BYTES, nbytes)
    self.add(OUT_BYTES, nbytes)

  def result(self):
    """A plain dict of the nonzero counts, as floats, in XLA's key order."""
    def order(key):
      main = (FLOPS, TRANSCENDENTALS, BYTES)
      if key in main:
        return (main.index(key), 0)
      digits = key[len(BYTES):-2]
      return (3, int(digits)) if digits.isdigit() else (4, 0)
    return {k: float(self[k]) for k in sorted(self, key=order) if self[k]}


def _size(aval):
  shape = getattr(aval, "shape", None)
  return 0 if shape is None else math.prod(shape)


def _itemsize(aval):
  dtype = getattr(aval, "dtype", None)
  if dtype is None:
    return 0
  try:
    return np.dtype(dtype).itemsize
  except TypeError:   # an extended dtype (PRNG keys)
    return getattr(dtype, "itemsize", 0) or 0


def nbytes(aval):
  return _size(aval) * _itemsize(aval)


def jaxpr_cost(jaxpr):
  """The unfused Cost of a Jaxpr or ClosedJaxpr."""
  if isinstance(jaxpr, ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  total = Cost()
  for eqn in jaxpr.eqns:
    total += eqn_cost(eqn)
  return total


def eqn_cost(eqn):
  """The Cost of one equation (of the jaxprs it calls, for control flow)."""
  name = eqn.primitive.name
  rule = _RULES.get(name)
  if rule is not None:
    return rule(eqn)
  if name in _ELEMENTWISE:
    return _elementwise(eqn, *_ELEMENTWISE[name])
  subs = list(sub_jaxprs(eqn.params))
  if subs:   # a call: what it calls, once
    total = Cost()
    for sub in subs:
      total += jaxpr_cost(sub)
    return total
  return _movement(eqn)


def _movement(eqn):
  """No arithmetic; every operand and result goes through memory."""
  cost = Cost()
  for i, v in enumerate(eqn.invars):
    cost.read(i, nbytes(v.aval))
  for v in eqn.outvars:
    cost.write(nbytes(v.aval))
  return cost


def _elementwise(eqn, flops, transcendentals, reads=None):
  out = eqn.outvars[0].aval
  n = _size(out)
  cost = Cost()
  cost.add(FLOPS, flops * n)
  cost.add(TRANSCENDENTALS, transcendentals * n)
  for i, v in enumerate(reads or eqn.invars):
    size = nbytes(v.aval)
    if tuple(v.aval.shape) != tuple(out.shape):
      # XLA broadcasts the operand to the result's shape first.
      full = n * _itemsize(v.aval)
      cost.read(0, size)
      cost.write(full)
      size = full
    cost.read(i, size)
  cost.write(nbytes(out))
  return cost


def _square(eqn):
  # Lowered as x * x.
  return _elementwise(eqn, 1, 0, reads=[eqn.invars[0]] * 2)


def _integer_pow(eqn):
  """Square-and-multiply, then one division for a negative power."""
  y = eqn.params["y"]
  aval = eqn.outvars[0].aval
  size = nbytes(aval)
  cost = Cost()
  if y == 0 or y == 1:
    if y == 0:   # a broadcast constant one
      cost.read(0, _itemsize(aval))
      cost.write(size)
    return cost
  e = abs(y)
  muls = e.bit_length() - 1 + bin(e).count("1") - 1
  cost.add(FLOPS, muls * _size(aval))
  for _ in range(muls):
    cost.read(0, size)
    cost.read(1, size)
    cost.write(size)
  if y < 0:
    cost.read(0, _itemsize(aval))   # broadcast the one
    cost.write(size)
    cost.add(FLOPS, _size(aval))
    cost.read(0, size)
    cost.read(1, size)
    cost.write(size)
  return cost


def _dot_general(eqn):
  (lhs_contract, _), _ = eqn.params["dimension_numbers"]
  lhs = eqn.invars[0].aval
  contract = math.prod(lhs.shape[d] for d in lhs_contract)
  cost = _movement(eqn)
  cost.add(FLOPS, 2 * _size(eqn.outvars[0].aval) * contract)
  return cost


def _reduction(eqn):
  """``n - 1`` operations per reduced row; XLA's reduce also reads its
  initial value."""
  x, out = eqn.invars[0].aval, eqn.outvars[0].aval
  cost = Cost()
  cost.add(FLOPS, max(0, _size(x) - _size(out)))
  cost.read(0, nbytes(x))
  cost.read(1, _itemsize(x))
  cost.write(nbytes(out))
  return cost


def _argminmax(eqn):
  """XLA reduces (value, index) pairs: an iota of indices is built, and
  each step compares values (and NaNs, for floats) and indices."""
  x, out = eqn.invars[0].aval, eqn.outvars[0].aval
  (axis,) = eqn.params["axes"]
  index = _itemsize(out)
  per_step = 9 if np.issubdtype(np.dtype(x.dtype), np.inexact) else 7
  cost = Cost()
  cost.add(FLOPS, per_step * max(0, _size(x) - _size(out)))
  iota = _size(x) * index
  if len(x.shape) > 1:   # a 1-d iota, broadcast
    line = x.shape[axis] * index
    cost.write(line)
    cost.read(0, line)
  cost.write(iota)
  cost.read(0, nbytes(x))
  cost.read(1, iota)
  cost.read(2, _itemsize(x))
  cost.read(3, index)
  cost.write(nbytes(out) + _size(out) * _itemsize(x))
  return cost


def _cumulative(eqn):
  """XLA's CPU lowering is a reduce_window over each prefix: ``n - 1``
  operations per element, reading the initial value once."""
  x = eqn.invars[0].aval
  n = x.shape[eqn.params["axis"]] if x.shape else 1
  cost = Cost()
  cost.add(FLOPS, _size(x) * max(0, n - 1))
  if eqn.primitive.name == "cumlogsumexp":
    cost.add(TRANSCENDENTALS, 2 * _size(x) * max(0, n - 1))
  cost.read(0, nbytes(x))
  cost.read(1, _itemsize(x))
  cost.write(nbytes(eqn.outvars[0].aval))
  return cost


def _sort(eqn):
  cost = _movement(eqn)
  n = _size(eqn.invars[0].aval)
  cost.add(FLOPS, n * math.ceil(math.log2(n)) if n > 1 else 0)
  return cost


def _window_read(window, indices):
  """An operation reading only a window of ``operand`` (slices, gathers,
  updates): the window's bytes are what it touches."""
  cost = Cost()
  cost.read(0, window)
  for i, v in enumerate(indices, start=1):
    cost.read(i, nbytes(v.aval))
  return cost


def _slice(eqn):
  out = nbytes(eqn.outvars[0].aval)
  cost = _window_read(out, eqn.invars[1:])
  cost.write(out)
  return cost


def _dynamic_update_slice(eqn):
  update = nbytes(eqn.invars[1].aval)
  cost = _window_read(update, eqn.invars[1:])
  cost.write(update)
  return cost


def _scatter(eqn):
  _, indices, updates = eqn.invars[:3]
  size = nbytes(updates.aval)
  cost = _window_read(size, [indices, updates])
  cost.write(size)
  if eqn.primitive.name != "scatter":
    cost.add(FLOPS, _size(updates.aval))
  return cost


def _conv(eqn):
  """Two flops per multiply-add of a full window (XLA leaves out the taps
  that fall into padding, so it reports less for padded convolutions)."""
  cost = _movement(eqn)
  rhs = eqn.invars[1].aval
  dnums = eqn.params.get("dimension_numbers")
  out_feature_dim = getattr(dnums, "rhs_spec", (0,))[0] if dnums is not None else 0
  per_output = _size(rhs) // max(1, rhs.shape[out_feature_dim])
  cost.add(FLOPS, 2 * _size(eqn.outvars[0].aval) * per_output)
  return cost


def _scan(eqn):
  """The body, once: XLA runs a scan as a while loop and counts a loop's
  body once, whatever its trip count."""
  return jaxpr_cost(eqn.params["jaxpr"])


def _while(eqn):
  """The condition and the body once, as XLA does (the trip count is not
  known before running)."""
  cost = jaxpr_cost(eqn.params["cond_jaxpr"])
  cost += jaxpr_cost(eqn.params["body_jaxpr"])
  return cost


def _cond(eqn):
  """The most expensive branch, key by key."""
  cost = Cost()
  for branch in eqn.params["branches"]:
    cost.maximum(jaxpr_cost(branch))
  return cost


def _linear_solve(eqn):
  solve = eqn.params["jaxprs"].solve
  return jaxpr_cost(solve) if solve is not None else Cost()


_RULES = {
    "square": _square, "integer_pow": _integer_pow, "dot_general": _dot_general,
    "argmax": _argminmax, "argmin": _argminmax, "sort": _sort, "slice": _slice,
    "dynamic_slice": _slice, "gather": _slice,
    "dynamic_update_slice": _dynamic_update_slice, "conv_general_dilated": _conv,
    "scan": _scan, "while": _while, "cond": _cond, "custom_linear_solve": _linear_solve,
    **{name: _reduction for name in _REDUCTIONS},
    **{name: _cumulative for name in _CUMULATIVE},
    **{name: _scatter for name in ("scatter", "scatter-add", "scatter-sub", "scatter-mul",
                                   "scatter-min", "scatter-max")},
    **{name: _movement for name in _FREE},
}


def fused_bytes(plan):
  """The bytes the C backend's plan moves: each fused kernel reads its
  inputs once and writes what it stores; host steps count as unfused."""
  cost = Cost()
  views = plan.views
  for step in plan.steps:
    if hasattr(step, "producer"):
      eqns = list(step.producer.values()) + list(step.reductions)
      inside = set(step.producer) | {e.outvars[0] for e in step.reductions}
      inputs = []
      for e in eqns:
        _kernel_inputs(e.invars, inside, views, inputs)
      _kernel_inputs(step.outputs, inside, views, inputs)   # stored views
      for i, v in enumerate(inputs):
        cost.read(i, nbytes(v.aval))
      for v in step.outputs:
        cost.write(nbytes(v.aval))
    elif hasattr(step, "eqn"):
      step_cost = eqn_cost(step.eqn)
      for k in list(step_cost):
        if k not in (FLOPS, TRANSCENDENTALS):
          cost.add(k, step_cost[k])
    else:
      raise TypeError(f"unknown plan step {type(step).__name__}")
  return cost


def _kernel_inputs(invars, inside, views, inputs):
  """Appends the values a kernel loads for ``invars``: a view is recomputed
  from its sources, so those are loaded instead."""
  for v in invars:
    if type(v) is Literal or v in inside or any(v is u for u in inputs):
      continue
    view = views.get(v)
    if view is not None:
      _kernel_inputs(view.invars, inside, views, inputs)
    else:
      inputs.append(v)
