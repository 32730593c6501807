"""``jax_debug_nans`` / ``jax_debug_infs``: find the primitive that made a NaN.

Eager mode checks every primitive's floating-point outputs (dispatch calls
``check_eager``).  ``jit`` checks its outputs only (``check_jit``); when one
holds a NaN (or Inf) the jaxpr is run again de-optimized, primitive by
primitive with NumPy, descending into nested ``jit``, ``cond``,
``while_loop`` and ``scan`` bodies, so that the error names the primitive
that produced it.

Beyond JAX, the ``FloatingPointError`` message goes on after JAX's first
line (``invalid value (nan) encountered in div``) with the primitive's
operand types, the user's ``file:line`` that traced it (or, eagerly, that
called it) and, in the backward pass of ``grad``, the primitive whose
transpose produced it.

When both flags are off nothing here runs: callers test ``enabled`` (a
module global kept up to date by a config watcher), never the flags.
"""
import sys

import numpy as np

from purejax._src import dtypes, fp_errors, source_info
from purejax._src.config import config
from purejax._src.jaxpr import DropVar, Literal

enabled = False
_nans = _infs = False


def _on_config_change():
  global enabled, _nans, _infs
  _nans, _infs = bool(config.jax_debug_nans), bool(config.jax_debug_infs)
  enabled = _nans or _infs


_on_config_change()
config.add_watcher(_on_config_change)

_inexact = {}   # dtype -> bool (bfloat16 and friends are not np.inexact)


def _is_inexact(dtype):
  hit = _inexact.get(dtype)
  if hit is None:
    hit = _inexact[dtype] = dtypes.is_inexact(dtype)
  return hit


def invalid_kind(values):
  """"nan" or "inf" when one of the NumPy ``values`` holds one that a set
  flag asks about, else None."""
  for v in values:
    if not isinstance(v, np.ndarray) and not isinstance(v, np.generic):
      continue
    if not _is_inexact(v.dtype):
      continue
    if _nans and np.isnan(v).any():
      return "nan"
    if _infs and np.isinf(v).any():
      return "inf"
  return None


# ---------------------------------------------------------------------------
# Messages

def _type_of(x):
  x = np.asarray(x)
  return f"{dtypes.short_dtype_name(x.dtype)}[{','.join(map(str, x.shape))}]"


def _message(kind, name, operands, where, transposing=None):
  lines = [f"invalid value ({kind}) encountered in {name}",
           f"  operation: {name}({', '.join(_type_of(x) for x in operands)})"]
  if invalid_kind(operands) is not None:
    lines.append(f"  (an operand already held a {kind}: {name} passed it on)")
  if transposing is not None:
    where_t = transposing.source_info
    lines.append(f"  in the backward pass: the transpose of {transposing.primitive.name}"
                 + (f", traced at {where_t}" if where_t is not None else ""))
  if where is not None:
    lines.append(f"  from line {where}")
  return "\n".join(lines)


def _transposing():
  """The equation that ``ad.backward_pass`` is transposing when a check
  fails inside it, or None.  Looked up on the stack, only on the error path,
  so the backward pass pays nothing for it."""
  from purejax._src.interpreters import ad
  code = ad.backward_pass.__code__
  frame = sys._getframe(2)
  while frame is not None:
    if frame.f_code is code:
      local = frame.f_locals
      # ``rule`` is bound once the transposition loop has started.
      return local.get("eqn") if "rule" in local else None
    frame = frame.f_back
  return None


# ---------------------------------------------------------------------------
# Eager checks

def check_eager(name, operands, outputs, primitive=None, params=None):
  """Raises FloatingPointError if one of the NumPy ``outputs`` of primitive
  ``name`` applied to ``operands`` holds a NaN/Inf that a flag asks about.
  A call primitive (a ``jit`` run eagerly, e.g. under ``vmap``) is run again
  de-optimized to blame the primitive inside it."""
  kind = invalid_kind(outputs)
  if kind is None:
    return
  # JAX runs an eager operation (not control flow) as a jit of it, which
  # announces its re-run.
  if primitive is None or primitive.name not in _DESCEND:
    print(_DEOPT_NOTICE)
  if primitive is not None and _descends(primitive):
    _run_primitive(primitive, params, list(operands))   # raises if reproduced
  where = source_info.current_source_info()
  raise FloatingPointError(_message(kind, name, operands, where, _transposing()))


# ---------------------------------------------------------------------------
# jit: the de-optimized re-run

_DEOPT_NOTICE = ("Invalid nan value encountered in the output of a jax.jit function. "
                 "Calling the de-optimized version.")


def check_jit(closed_jaxpr, inputs, outputs, rerun=None):
  """After a jitted call on NumPy ``inputs``: if an output holds a NaN/Inf a
  flag asks about, calls ``rerun`` (the user's function with jit disabled,
  as JAX does, so that the error's traceback goes through it), else or if
  that finds nothing runs ``closed_jaxpr`` again primitive by primitive, and
  raises FloatingPointError naming the primitive that produced it."""
  kind = invalid_kind(outputs)
  if kind is None:
    return
  global rerunning
  print(_DEOPT_NOTICE)
  if rerun is not None:
    from purejax._src.api import disable_jit
    outer, rerunning = rerunning, True
    try:
      with disable_jit():
        rerun()
    finally:
      rerunning = outer
  run_deoptimized(closed_jaxpr, inputs)
  raise FloatingPointError(
      f"invalid value ({kind}) encountered in the output of a jit function. Because "
      "jax_debug_nans and/or jax_debug_infs is set, the de-optimized function (its jaxpr "
      "run primitive by primitive) was run to find the primitive that produced it, but no "
      f"primitive produced a {kind} during that run. This can come from a {kind} literal "
      f"or a {kind} passed straight through to the output (e.g. "
      "`jax.jit(lambda x: jax.numpy.nan)(x)`), or from a difference between the compiled "
      "and the de-optimized computation.")


# True while ``check_jit`` re-runs the user's function with jit disabled.
rerunning = False


def call_nested_jit(fun, args, kwargs):
  """A jitted function called in that re-run: JAX would run it as a jit of
  its own and announce its de-optimized re-run too."""
  try:
    return fun(*args, **kwargs)
  except FloatingPointError:
    if not _quiet:
      print(_DEOPT_NOTICE)
    raise


# Inside control flow bodies and the jaxpr's own de-optimized run, nothing is
# announced (JAX names the control-flow primitive there, without a notice).
_quiet = 0


def _quietly(fun, *args):
  global _quiet
  _quiet += 1
  try:
    return fun(*args)
  finally:
    _quiet -= 1


def run_deoptimized(closed_jaxpr, inputs):
  """Runs ``closed_jaxpr`` on NumPy ``inputs`` one primitive at a time,
  checking each one's outputs; returns the outputs."""
  return _quietly(_run_jaxpr, closed_jaxpr.jaxpr, closed_jaxpr.consts, list(inputs))


def _literal(lit):
  return np.asarray(lit.val, lit.aval.dtype)


def _run_jaxpr(jaxpr, consts, args):
  env = dict(zip(jaxpr.constvars, [np.asarray(getattr(c, "_value", c)) for c in consts]))
  env.update(zip(jaxpr.invars, args))

  def read(v):
    return _literal(v) if type(v) is Literal else env[v]

  for eqn in jaxpr.eqns:
    invals = [read(v) for v in eqn.invars]
    outs = _run_eqn(eqn, invals)
    for v, out in zip(eqn.outvars, outs):
      if type(v) is not DropVar:
        env[v] = out
  return [read(v) for v in jaxpr.outvars]


def _run_eqn(eqn, invals):
  prim = eqn.primitive
  if prim.name == "jit":   # JAX runs a nested jit as one and announces its re-run
    return call_nested_jit(_run_primitive, (prim, eqn.params, invals), {})
  if _descends(prim):
    return _run_primitive(prim, eqn.params, invals)
  token = fp_errors.ignore()
  try:
    out = prim.impl(*invals, **eqn.params)
  finally:
    fp_errors.restore(token)
  outs = list(out) if prim.multiple_results else [out]
  outs = [np.asarray(o, getattr(v.aval, "dtype", None)) for o, v in zip(outs, eqn.outvars)]
  kind = invalid_kind(outs)
  if kind is not None:
    if not _quiet:
      print(_DEOPT_NOTICE)
    raise FloatingPointError(_message(kind, prim.name, invals, eqn.source_info))
  return outs


def _descends(prim):
  return prim.name in _DESCEND or getattr(prim, "call_jaxpr_param", None) is not None


def _run_primitive(prim, params, invals):
  """A primitive with a body, run by running its body de-optimized."""
  run = _DESCEND.get(prim.name)
  if run is not None:
    return _quietly(run, params, invals)
  return _run_closed(params[prim.call_jaxpr_param], invals)   # jit, remat, custom_jvp...


def _run_closed(closed, args):
  return _run_jaxpr(closed.jaxpr, closed.consts, list(args))


def _run_cond(params, invals):
  branches = params["branches"]
  index = int(np.clip(invals[0], 0, len(branches) - 1))
  return _run_closed(branches[index], invals[1:])


def _run_while(params, invals):
  nc, nb = params["cond_nconsts"], params["body_nconsts"]
  cond_consts, body_consts, carry = invals[:nc], invals[nc:nc + nb], invals[nc + nb:]
  while bool(_run_closed(params["cond_jaxpr"], cond_consts + carry)[0]):
    carry = _run_closed(params["body_jaxpr"], body_consts + carry)
  return carry


def _run_scan(params, invals):
  body, length = params["jaxpr"], params["length"]
  nc, nk = params["num_consts"], params["num_carry"]
  consts, carry, xs = invals[:nc], invals[nc:nc + nk], invals[nc + nk:]
  y_avals = body.out_avals[nk:]
  ys = [[] for _ in y_avals]
  steps = range(length)
  for i in (reversed(steps) if params["reverse"] else steps):
    outs = _run_closed(body, consts + carry + [x[i] for x in xs])
    carry = outs[:nk]
    for acc, y in zip(ys, outs[nk:]):
      acc.append(y)
  if params["reverse"]:
    ys = [acc[::-1] for acc in ys]
  stacked = [np.stack(acc).astype(a.dtype) if acc else np.zeros((0,) + a.shape, a.dtype)
             for acc, a in zip(ys, y_avals)]
  return carry + stacked


# Control flow that the de-optimized run goes into (by name: the control-flow
# modules import this module's users, not the other way round).  Call
# primitives (``call_jaxpr_param``) are gone into too.
_DESCEND = {"cond": _run_cond, "while": _run_while, "scan": _run_scan}
