"""Which results the C and NumPy backends must agree on bit for bit, and how
far apart they may be elsewhere (for benchmarks/fuzz.py).

Exactly rounded primitives (arithmetic, sqrt, comparisons, conversions,
layout, max/min reductions...) must match bit for bit.  Transcendental
functions may differ by a few ulp, float sums and dot products by their
reassociation error; ``bounded_eval`` runs a jaxpr with the NumPy
implementations and carries an elementwise bound on those differences
through every later primitive.  ``taint_flow`` checks that no value with a
bound reaches a discontinuity (a comparison, a float-to-int conversion...),
where an ulp could change the result completely: the generator only makes
programs that pass it.
"""
import itertools
import math

import numpy as np

from purejax._src.jaxpr import Literal
from purejax._src.backends import numpy_backend


def _kind(dtype):
  dtype = np.dtype(dtype)
  return "b" if dtype == np.bool_ else dtype.kind


def _size(shape):
  return math.prod(shape)


# -- which primitives both backends must compute bit for bit --------------------------------

# Exactly rounded (or exact) on floats: the C code must match NumPy bit for bit.
EXACT_PRIMS = frozenset("""
  neg sign floor ceil round sqrt rsqrt abs square integer_pow add sub mul div rem max min
  nextafter select_n clamp convert_element_type bitcast_convert_type broadcast_in_dim reshape
  squeeze expand_dims transpose slice rev concatenate pad gather dynamic_slice
  dynamic_update_slice scatter scatter-max scatter-min iota copy stop_gradient reduce_max
  reduce_min cummax cummin argmax argmin sort is_finite eq ne lt le gt ge and or xor not
  shift_left shift_right_arithmetic shift_right_logical population_count clz reduce_and
  reduce_or reduce_xor tile split optimization_barrier reduce_precision
""".split())
# Exact on integers; on floats, summed or multiplied in another order.
REASSOCIATED = frozenset("reduce_sum reduce_prod cumsum cumprod dot_general scatter-add "
                         "scatter-mul".split())
# Float results that may jump when an input moves by an ulp: a value with an
# error bound must not reach them (nor any integer or boolean result).
DISCONTINUOUS = frozenset("rem atan2 bitcast_convert_type sort reduce_precision".split())
TRANSCENDENTAL_ULPS = 4   # each transcendental function's allowed error
# Exactly rounded in both purejax backends but not in XLA:CPU, whose rsqrt
# is 1/sqrt(x) (two roundings): inexact when JAX is the reference.
JAX_INEXACT_PRIMS = frozenset({"rsqrt"})
_extra_inexact = frozenset()
# XLA:CPU's float sums are not pairwise: against JAX a sum's bound is that
# of any order (n eps), not pairwise summation's (seed 77's reduce program
# 14: the var of 157976 small integers, 220 eps off in JAX).
_any_order_sums = False


def against_jax(enabled=True):
  """Makes ``inexact`` (and so the generator's taint and the bounds) treat
  ``JAX_INEXACT_PRIMS`` as inexact, and sums as summed in any order: for
  the JAX oracle's batches."""
  global _extra_inexact, _any_order_sums
  _extra_inexact = JAX_INEXACT_PRIMS if enabled else frozenset()
  _any_order_sums = bool(enabled)


def _is_float(v):
  return _kind(v.aval.dtype) in "fc"


def _sub_jaxprs(eqn):
  p = eqn.params
  name = eqn.primitive.name
  if name == "cond":
    return list(p["branches"])
  if name == "while":
    return [p["cond_jaxpr"], p["body_jaxpr"]]
  if name == "scan":
    return [p["jaxpr"]]
  param = getattr(eqn.primitive, "call_jaxpr_param", None)
  return [p[param]] if param and p.get(param) is not None else []


def inexact(eqn):
  """Whether ``eqn`` may round its float results differently on the two
  backends (a transcendental function, a sum...)."""
  name = eqn.primitive.name
  if not any(_is_float(v) for v in eqn.outvars):
    return False
  return name not in EXACT_PRIMS or name in _extra_inexact


def taint_flow(jaxpr, in_taint):
  """Follows values with error bounds (tainted) through ``jaxpr``: returns
  (ok, out_taint); ok is False where a tainted value reaches an integer or
  boolean result or a discontinuous primitive, which the generator avoids."""
  taint = dict(zip(jaxpr.invars, in_taint))
  for eqn in jaxpr.eqns:
    tin = [type(v) is not Literal and taint.get(v, False) for v in eqn.invars]
    if _sub_jaxprs(eqn):
      outs = _control_taint(eqn, tin)
      if outs is None:
        return False, None
    else:
      if any(tin) and (eqn.primitive.name in DISCONTINUOUS or
                       not all(_is_float(v) for v in eqn.outvars)):
        return False, None
      t = any(tin) or inexact(eqn)
      outs = [t and _is_float(v) for v in eqn.outvars]
    taint.update(zip(eqn.outvars, outs))
  return True, [type(v) is not Literal and taint.get(v, False) for v in jaxpr.outvars]


def _control_taint(eqn, tin):
  """The output taints of a primitive with sub-jaxprs (None: not ok); loop
  carries are followed to a fixed point."""
  p, name = eqn.params, eqn.primitive.name

  def flow(closed, taints):
    ok, out = taint_flow(closed.jaxpr, taints)
    if not ok:
      raise _Discontinuous
    return out

  try:
    if name == "cond":
      outs = [False] * len(eqn.outvars)
      for branch in p["branches"]:
        outs = [a or b for a, b in zip(outs, flow(branch, tin[1:]))]
      return outs
    if name in ("scan", "while"):
      if name == "scan":
        nc, ncarry = p["num_consts"], p["num_carry"]
        consts, carry, xs = tin[:nc], tin[nc:nc + ncarry], tin[nc + ncarry:]
      else:
        nc = p["cond_nconsts"] + p["body_nconsts"]
        consts, carry, xs = tin[p["cond_nconsts"]:nc], tin[nc:], []
      while True:
        body = p["jaxpr"] if name == "scan" else p["body_jaxpr"]
        out = flow(body, consts + carry + xs)
        new = [a or b for a, b in zip(carry, out[:len(carry)])]
        if new == carry:
          break
        carry = new
      if name == "while":
        flow(p["cond_jaxpr"], tin[:p["cond_nconsts"]] + carry)
        return carry
      return carry + out[len(carry):]
    return flow(_sub_jaxprs(eqn)[0], tin)
  except _Discontinuous:
    return None


class _Discontinuous(Exception):
  pass


# -- error bounds: how far a correct C backend may be from the NumPy backend ----------------
# Each value carries an elementwise bound (None: the backends must agree bit
# for bit).  Transcendental functions add TRANSCENDENTAL_ULPS ulp; sums and
# dot products the reassociation error n * eps * sum(|terms|); every other
# primitive passes its inputs' bounds on: layout primitives move them with
# the values, elementwise ones through the extremes of f over the input
# intervals (their ends, and 0 when inside: every primitive generated is
# monotone on each side of 0, or 1-Lipschitz), reductions by their rule.
# An inf bound means "anything goes"; an integer or boolean result with a
# bound means a discontinuity reached it, which the generator must avoid.

_LAYOUT = frozenset("broadcast_in_dim reshape squeeze expand_dims transpose slice rev concatenate "
                    "pad gather dynamic_slice dynamic_update_slice scatter scatter-max copy "
                    "stop_gradient reduce_max cummax tile optimization_barrier".split())
_LAYOUT_MIN = frozenset("reduce_min cummin scatter-min".split())   # max of bounds via -min(-b)
_INDEX_OPERANDS = {"gather": (1,), "dynamic_slice": "rest1", "dynamic_update_slice": "rest2",
                   "scatter": (1,), "scatter-max": (1,), "scatter-min": (1,),
                   "scatter-add": (1,)}
_PERIODIC = frozenset({"sin", "cos"})
_MAX_CORNER_INPUTS = 3


def _f64(x):
  return np.asarray(x, np.float64)


def _dist(a, b):
  """Elementwise |a - b| where NaN is NaN's equal and any other NaN is inf."""
  a, b = _f64(a), _f64(b)
  with np.errstate(all="ignore"):
    d = np.abs(a - b)
  d = np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, d)
  return np.where(np.isnan(d), np.inf, d)


def _ulp_bound(out, ulps):
  """``ulps`` units in the last place of ``out`` (0 where it is inf or NaN)."""
  out = np.asarray(out)
  info = np.finfo(out.dtype if out.dtype.kind == "f" else np.float32)
  with np.errstate(all="ignore"):
    b = ulps * np.maximum(info.eps * np.abs(_f64(out)), float(info.smallest_subnormal))
  return np.where(np.isfinite(b), b, 0.0)


def _own_bound(eqn, vals, out):
  """The rounding difference ``eqn`` itself may add to a float result."""
  info = np.finfo(eqn.outvars[0].aval.dtype)
  o = _f64(out)
  with np.errstate(all="ignore"):
    if eqn.primitive.name in REASSOCIATED:
      b = _reassociation_bound(eqn, vals, o, info)
    else:
      b = np.where(np.isfinite(o), _ulp_bound(out, TRANSCENDENTAL_ULPS), 0.0)
    # A finite result this close to overflow may be inf on the other backend.
    return np.where(np.isfinite(o) & (np.abs(o) + b > info.max), np.inf, b)


def _finite_abs(x):
  a = np.abs(_f64(x))
  return np.where(np.isfinite(a), a, 0.0)


def _reassociation_bound(eqn, vals, o, info):
  """How far a sum or product computed in another order may be from the
  NumPy backend's: NumPy's own error (against the sum in float64) plus what
  the other order may add: log2(n) + 4 eps of the terms' magnitudes for a
  sum (pairwise summation's accuracy; the C code sums float32 in double),
  n eps for a dot product or running sum; anything where a partial result
  may overflow (or a product underflow) in some order."""
  name, p = eqn.primitive.name, eqn.params
  if name in ("reduce_prod", "cumprod", "scatter-mul"):
    n = max(_size(np.shape(vals[0])), 1)
    bound = n * info.eps * np.abs(o)
    if name == "scatter-mul":
      return bound
    axes = tuple(p["axes"]) if "axes" in p else (p["axis"],)
    a = np.abs(_f64(vals[0]))
    logs = np.log(np.where(np.isfinite(a) & (a > 0), a, 1.0))
    keep = name == "cumprod"
    big = np.sum(np.maximum(logs, 0), axis=axes, keepdims=keep)
    small = np.sum(np.minimum(logs, 0), axis=axes, keepdims=keep)
    risky = (big > np.log(info.max)) | (small < np.log(info.tiny))
    return np.where(np.broadcast_to(risky, o.shape), np.inf, bound)
  if name == "dot_general":
    (lc, _), _ = p["dimension_numbers"]
    n = allowed = math.prod(vals[0].shape[d] for d in lc)
    exact = _impl(eqn, [_f64(vals[0]), _f64(vals[1])])
    mag = _impl(eqn, [_finite_abs(vals[0]), _finite_abs(vals[1])])
  elif name == "scatter-add":
    n = allowed = _size(np.shape(vals[2])) + 1
    exact = _impl(eqn, [_f64(vals[0]), vals[1], _f64(vals[2])])
    mag = _impl(eqn, [_finite_abs(vals[0]), vals[1], _finite_abs(vals[2])])
  else:
    axes = p["axes"] if "axes" in p else (p["axis"],)
    n = math.prod(np.shape(vals[0])[a] for a in axes)
    pairwise = name == "reduce_sum" and not _any_order_sums
    allowed = math.log2(max(n, 1)) + 4 if pairwise else n
    exact = _impl(eqn, [_f64(vals[0])])
    mag = _impl(eqn, [_finite_abs(vals[0])])
  exact, mag = _f64(exact), _f64(mag)
  bound = _dist(o, exact) + allowed * info.eps * mag + _ulp_bound(exact.astype(info.dtype), 1)
  return np.where(mag > info.max, np.inf, bound)


def _impl(eqn, vals, **changes):
  params = dict(eqn.params, **changes)
  if eqn.primitive.name == "dot_general":
    params["preferred_element_type"] = np.dtype(np.float64)
  with np.errstate(all="ignore"):
    return eqn.primitive.impl(*vals, **params)


def _unbounded(eqn):
  return [np.full(v.aval.shape, np.inf) for v in eqn.outvars]


def _propagate(eqn, vals, errs, out):
  """The bound of ``eqn``'s (single) result from its inputs' bounds."""
  name, p = eqn.primitive.name, eqn.params
  if not _is_float(eqn.outvars[0]):
    return np.full(np.shape(out), np.inf)
  zero = [np.zeros(np.shape(v)) if e is None else e for v, e in zip(vals, errs)]
  index = _INDEX_OPERANDS.get(name, ())
  if index in ("rest1", "rest2"):
    index = tuple(range(int(index[-1]), len(vals)))
  if any(errs[i] is not None for i in index):
    return np.full(np.shape(out), np.inf)
  if name == "select_n":
    if errs[0] is not None:
      return np.full(np.shape(out), np.inf)
    return _impl(eqn, [vals[0]] + zero[1:])
  if name in _LAYOUT or name in _LAYOUT_MIN:
    sign = -1.0 if name in _LAYOUT_MIN else 1.0
    args = [vals[i] if i in index else sign * zero[i] for i in range(len(vals))]
    changes = {"fill_value": 0} if "fill_value" in p else {}
    return sign * _f64(_impl(eqn, args, **changes))
  if name == "convert_element_type":
    if not _is_float(eqn.invars[0]):
      return np.full(np.shape(out), np.inf)
    return errs[0] + _ulp_bound(out, 1)
  if name in ("reduce_sum", "cumsum", "scatter-add"):
    return _f64(_impl(eqn, [zero[0]] + ([vals[1], zero[2]] if name == "scatter-add" else [])))
  if name in ("reduce_prod", "cumprod"):
    a = np.abs(_f64(vals[0]))
    with np.errstate(all="ignore"):
      return _dist(_impl(eqn, [a + zero[0]]), _impl(eqn, [a]))
  if name == "dot_general":
    a, b = np.abs(_f64(vals[0])), np.abs(_f64(vals[1]))
    ea, eb = zero
    return _f64(_impl(eqn, [a, eb])) + _f64(_impl(eqn, [ea, b])) + _f64(_impl(eqn, [ea, eb]))
  # Elementwise (size-1 axes broadcast, as in JAX's jaxprs).
  shape = np.shape(out)
  elementwise = all(len(np.shape(v)) in (0, len(shape)) and
                    all(d in (1, o) for d, o in zip(np.shape(v), shape)) for v in vals)
  if elementwise and name not in DISCONTINUOUS and not name.startswith("scatter"):
    return _corners(eqn, vals, errs, out)
  return np.full(np.shape(out), np.inf)


def _corners(eqn, vals, errs, out):
  """max |f(corner) - f(x)| over the ends of the input intervals (and 0
  where an interval holds it), plus an ulp for the rounding."""
  name = eqn.primitive.name
  moving = [i for i, e in enumerate(errs) if e is not None]
  if len(moving) > _MAX_CORNER_INPUTS or name in DISCONTINUOUS:
    return np.full(np.shape(out), np.inf)
  points = []
  for i in moving:
    x, e = _f64(vals[i]), errs[i]
    dtype = np.asarray(vals[i]).dtype
    with np.errstate(all="ignore"):
      lo, hi = (x - e).astype(dtype), (x + e).astype(dtype)
    points.append([lo, hi, np.clip(np.zeros_like(lo), lo, hi)])
  dev = np.zeros(np.shape(out))
  for combo in itertools.product(*points):
    args = list(vals)
    for i, c in zip(moving, combo):
      args[i] = c
    dev = np.maximum(dev, _dist(_impl(eqn, args), out))
  for i in moving:   # an input that may be anything (even NaN) makes anything
    dev = np.where(np.isfinite(errs[i]), dev, np.inf)
  if name in _PERIODIC:   # 1-Lipschitz, and the ends miss the extrema
    dev = np.maximum(dev, np.minimum(errs[0], 2.0))
  if name == "tan":   # a pole inside the interval
    x, e = _f64(vals[0]), errs[0]
    with np.errstate(all="ignore"):
      pole = np.floor((x - e) / np.pi + 0.5) != np.floor((x + e) / np.pi + 0.5)
    dev = np.where(pole, np.inf, dev)
  if name == "pow" and errs[1] is not None:
    # A negative base's power is a number at integer exponents only (NaN
    # between them): where the base may be negative and the exponent moves,
    # the ends of the intervals tell nothing (seed 75's mixed program 16).
    with np.errstate(invalid="ignore"):
      x = _f64(vals[0]) - (0 if errs[0] is None else errs[0])
    dev = np.where((x < 0) & (errs[1] > 0), np.inf, dev)
  return dev + _ulp_bound(out, 1)


def bounded_eval(jaxpr, args, errs=None, consts=()):
  """Runs ``jaxpr`` with the primitives' NumPy implementations; returns its
  outputs as (value, bound) pairs."""
  env = {}
  for v, c in zip(jaxpr.constvars, consts):
    env[v] = (np.asarray(c), None)
  for v, a, e in zip(jaxpr.invars, args, errs or [None] * len(args)):
    env[v] = (np.asarray(a), e)

  def read(v):
    return (v.val, None) if type(v) is Literal else env[v]

  for eqn in jaxpr.eqns:
    vals, ins = zip(*[read(v) for v in eqn.invars]) if eqn.invars else ((), ())
    outs, oerrs = _eval_eqn(eqn, list(vals), list(ins))
    for v, o, e in zip(eqn.outvars, outs, oerrs):
      o = np.asarray(o, v.aval.dtype)
      env[v] = (o, None if e is None else np.broadcast_to(_f64(e), o.shape))
  return [read(v) for v in jaxpr.outvars]


def _closed(closed, args, errs):
  outs = bounded_eval(closed.jaxpr, args, errs, closed.consts)
  return [o for o, _ in outs], [e for _, e in outs]


def _stack(items, errs, aval):
  vals = np.stack(items) if items else np.zeros((0,) + aval.shape, aval.dtype)
  if all(e is None for e in errs):
    return vals, None
  return vals, np.stack([np.zeros(aval.shape) if e is None else e for e in errs])


def _eval_eqn(eqn, vals, errs):
  name, p = eqn.primitive.name, eqn.params
  if name == "cond":
    i = int(np.clip(vals[0], 0, len(p["branches"]) - 1))
    outs, oerrs = _closed(p["branches"][i], vals[1:], errs[1:])
    return outs, (oerrs if errs[0] is None else _unbounded(eqn))
  if name == "while":
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cc, ce = vals[:nc], errs[:nc]
    bc, be = vals[nc:nc + nb], errs[nc:nc + nb]
    carry, cerr = vals[nc + nb:], errs[nc + nb:]
    tainted = False
    for _ in range(10_000):
      (pred,), (perr,) = _closed(p["cond_jaxpr"], cc + carry, ce + cerr)
      tainted |= perr is not None
      if not pred:
        return carry, (_unbounded(eqn) if tainted else cerr)
      carry, cerr = _closed(p["body_jaxpr"], bc + carry, be + cerr)
    raise RuntimeError("while loop did not end")
  if name == "scan":
    nc, ncarry, body = p["num_consts"], p["num_carry"], p["jaxpr"]
    consts, carry, xs = vals[:nc], vals[nc:nc + ncarry], vals[nc + ncarry:]
    ce, cerr, xe = errs[:nc], errs[nc:nc + ncarry], errs[nc + ncarry:]
    y_avals = body.out_avals[ncarry:]
    ys, yerrs = [[] for _ in y_avals], [[] for _ in y_avals]
    steps = range(p["length"])
    for i in (reversed(steps) if p["reverse"] else steps):
      outs, oerrs = _closed(body, consts + carry + [x[i] for x in xs],
                            ce + cerr + [None if e is None else e[i] for e in xe])
      carry, cerr = outs[:ncarry], oerrs[:ncarry]
      for acc, eacc, y, e in zip(ys, yerrs, outs[ncarry:], oerrs[ncarry:]):
        acc.append(y)
        eacc.append(e)
    if p["reverse"]:
      ys, yerrs = [a[::-1] for a in ys], [a[::-1] for a in yerrs]
    stacked = [_stack(a, e, av) for a, e, av in zip(ys, yerrs, y_avals)]
    return carry + [s for s, _ in stacked], cerr + [e for _, e in stacked]
  param = getattr(eqn.primitive, "call_jaxpr_param", None)
  if param and p.get(param) is not None:
    return _closed(p[param], vals, errs)
  with np.errstate(all="ignore"):
    out = numpy_backend.jit_impl(eqn.primitive)(*vals, **p)   # what jitted code computes
  outs = list(out) if eqn.primitive.multiple_results else [out]
  if all(e is None for e in errs):
    if inexact(eqn) and len(outs) == 1:
      return outs, [_own_bound(eqn, vals, outs[0])]
    return outs, [None] * len(outs)
  if len(outs) != 1:
    return outs, _unbounded(eqn)
  bound = _propagate(eqn, vals, errs, outs[0])
  if inexact(eqn):
    bound = bound + _own_bound(eqn, vals, outs[0])
  return outs, [bound]


# -- comparing -------------------------------------------------------------------------------

def _bits_equal(a, b):
  """Elementwise bit equality, any NaN equal to any NaN."""
  if a.dtype.kind != "f":
    return a == b
  both_nan = np.isnan(a) & np.isnan(b)
  return both_nan | (a.view(f"u{a.dtype.itemsize}") == b.view(f"u{a.dtype.itemsize}"))


def compare(expected, got, bound):
  """Problems of ``got`` against ``expected`` within ``bound``: a message
  and the flat indices of the bad elements (None: it agrees)."""
  expected, got = np.asarray(expected), np.asarray(got)
  if got.dtype != expected.dtype or got.shape != expected.shape:
    return (f"expected {expected.dtype}{list(expected.shape)}, got "
            f"{got.dtype}{list(got.shape)}", np.zeros(0, int))
  if bound is None:
    bad = ~_bits_equal(expected, got)
  elif expected.dtype.kind != "f":
    return "generator: an integer result depends on an inexact float", None
  else:
    checked = np.isfinite(bound)
    bad = checked & ~(_dist(got, expected) <= bound)
  idx = np.flatnonzero(bad)
  return (None, None) if idx.size == 0 else ("values differ", idx)


def describe_mismatch(expected, got, bound, idx, limit=4):
  """The first few differing elements, with exact values."""
  expected, got = np.asarray(expected), np.asarray(got)
  lines = []
  for i in idx[:limit]:
    pos = np.unravel_index(i, expected.shape) if expected.ndim else ()
    e, g = expected.reshape(-1)[i], got.reshape(-1)[i]
    b = "exact" if bound is None else f"bound {np.asarray(bound).reshape(-1)[i]:.3g}"
    extra = ""
    if expected.dtype.kind == "f":
      extra = f" (bits {e.view(f'u{e.itemsize}'):#x} vs {g.view(f'u{g.itemsize}'):#x})"
    lines.append(f"at {tuple(int(k) for k in pos)}: expected {e!r}, got {g!r}{extra}, {b}")
  if len(idx) > limit:
    lines.append(f"... {len(idx)} of {expected.size} elements differ")
  return lines
