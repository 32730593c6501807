"""The reference backend: runs a jaxpr equation by equation with NumPy.

Each primitive's ``impl`` is its NumPy implementation; compiling a jaxpr
here means making a Python function that runs those impls in order.  The
first calls interpret the equation list; a jaxpr that is run again gets a
straight-line Python function generated for it (one statement per
equation, no environment to look values up in), which halves the overhead
per equation.  Generating costs about 20 us per equation, so it is done
only for small jaxprs, and only once they have proven to be called again.
"""
import functools

import numpy as np

from purejax._src import fp_errors
from purejax._src.backends import psum_fusion
from purejax._src.jaxpr import DropVar, Literal

_HOT_CALLS = 2            # the call that generates the straight-line version
_MAX_GENERATED_EQNS = 200


def jit_impl(prim, used=None):
  """What ``prim`` computes in a jitted function: its ``jit_impl`` where its
  eager ``impl`` has other numerics (reductions in the fixed order that the
  compiled code uses), else its ``impl``.  ``used`` (a bool per output):
  where some output is never read and the primitive has an
  ``impl_for_used_outputs(used, *args, **params)``, that, which may skip the
  unread outputs' work and gives None for them."""
  if used is not None and not all(used):
    pruned = getattr(prim, "impl_for_used_outputs", None)
    if pruned is not None:
      return functools.partial(pruned, tuple(used))
  return getattr(prim, "jit_impl", None) or prim.impl


def read_vars(jaxpr):
  """Every variable some equation of ``jaxpr`` or its outputs read."""
  read = {v for e in jaxpr.eqns for v in e.invars if type(v) is not Literal}
  read.update(v for v in jaxpr.outvars if type(v) is not Literal)
  return read


def used_outputs(eqn, read):
  """A bool per output of ``eqn``: is it in ``read``."""
  return tuple(type(v) is not DropVar and v in read for v in eqn.outvars)


def compile_jaxpr(jaxpr):
  """A callable ``(*numpy_arrays) -> list of numpy arrays`` running ``jaxpr``."""
  if jaxpr.constvars:
    raise ValueError("compile_jaxpr takes a jaxpr whose constants are inputs")
  interpreted = _quiet(_interpreter(jaxpr))
  if len(jaxpr.eqns) > _MAX_GENERATED_EQNS:
    return interpreted
  calls = 0

  def first_calls(*args):
    nonlocal current, calls
    calls += 1
    if calls >= _HOT_CALLS:
      try:
        current = _straight_line(jaxpr)
      except Exception:   # noqa: BLE001  (only an optimization: keep interpreting)
        current = interpreted
    return interpreted(*args)

  current = first_calls

  def run(*args):
    return current(*args)
  return run


def _quiet(run):
  """``run(args)`` as ``f(*args)``, with NumPy's floating-point errors
  ignored (they are not JAX's: XLA is silent)."""
  def quiet_run(*args):
    token = fp_errors.ignore()
    try:
      return run(args)
    finally:
      fp_errors.restore(token)
  return quiet_run


def _literal_value(lit):
  # NumPy scalars become read-only 0-d arrays, which ufuncs take faster (and
  # which is what eager mode passes to the same impls).
  val = lit.val
  if isinstance(val, np.generic):
    val = np.asarray(val)
    val.setflags(write=False)
  return val


def _interpreter(jaxpr):
  """``run(args) -> outputs`` with the environment as a list: every variable
  and literal gets a slot, filled in order (no dict of variables per call)."""
  slots = {}
  template = []

  def slot(v):
    if type(v) is Literal:
      template.append(_literal_value(v))
      return len(template) - 1
    index = slots.get(v)
    if index is None:
      index = slots[v] = len(template)
      template.append(None)
    return index

  num_in = len(jaxpr.invars)
  in_slots = [slot(v) for v in jaxpr.invars]
  # Distinct inputs (always, in a well-formed jaxpr) fill the first slots.
  distinct = in_slots == list(range(num_in))
  steps = []
  read = read_vars(jaxpr)
  for e in _schedule(jaxpr.eqns):
    ins = [slot(v) for v in e.invars]
    outs = []
    for v in e.outvars:   # outputs always get fresh slots
      slots[v] = len(template)
      outs.append((len(template), v.aval.dtype))
      template.append(None)
    steps.append((jit_impl(e.primitive, used_outputs(e, read)), e.params, ins,
                  e.primitive.multiple_results, outs))
  results = [slot(v) for v in jaxpr.outvars]

  def run(args):
    env = template.copy()
    if distinct:
      env[:num_in] = args
    else:
      for i, x in zip(in_slots, args):
        env[i] = x
    for impl, params, ins, multiple, outs in steps:
      out = impl(*[env[i] for i in ins], **params)
      if multiple:
        for (i, dtype), val in zip(outs, out):
          env[i] = val if val is None else _as_dtype(val, dtype)   # None: never read
      else:
        i, dtype = outs[0]
        env[i] = _as_dtype(out, dtype)
    return [env[i] for i in results]

  return run


def _straight_line(jaxpr):
  """The jaxpr as the source of one Python function, compiled."""
  ns = {"_nd": np.ndarray, "_asarray": np.asarray}
  names = {}

  def const(value):
    name = f"_c{len(ns)}"
    ns[name] = value
    return name

  def use(v):
    return const(_literal_value(v)) if type(v) is Literal else names[v]

  params = []
  for i, v in enumerate(jaxpr.invars):
    params.append(f"a{i}")
    names[v] = f"a{i}"   # a variable listed twice: the last position wins
  body = []
  read = read_vars(jaxpr)
  for k, e in enumerate(_schedule(jaxpr.eqns)):
    used = used_outputs(e, read)
    call = f"{const(jit_impl(e.primitive, used))}({', '.join(use(v) for v in e.invars)}"
    call += f", **{const(e.params)})" if e.params else ")"
    outs = []
    for j, v in enumerate(e.outvars):
      name = names[v] = f"v{k}_{j}" if used[j] else "_"
      outs.append((name, v.aval.dtype))
    if e.primitive.multiple_results:
      body.append(f"_o = list({call})")
      values = [f"_o[{j}]" for j in range(len(outs))]
    else:
      values = [call]
    for (name, dtype), value in zip(outs, values):
      if name == "_":
        body.append(value)
        continue
      dt = const(dtype)
      body.append(f"{name} = {value}")
      body.append(f"if type({name}) is not _nd or {name}.dtype != {dt}: "
                  f"{name} = _asarray({name}, {dt})")
  body.append(f"return [{', '.join(use(v) for v in jaxpr.outvars)}]")
  ns.update(_ignore=fp_errors.ignore, _restore=fp_errors.restore)
  lines = ["  _token = _ignore()", "  try:"] + [f"    {s}" for s in body]
  lines += ["  finally:", "    _restore(_token)"]
  source = f"def run({', '.join(params)}):\n" + "\n".join(lines) + "\n"
  exec(compile(source, "<purejax numpy backend>", "exec"), ns)
  run = ns["run"]
  run.source = source
  return run


def _schedule(eqns):
  """The equations in running order: independent psums fused into one
  exchange (psum_fusion.py)."""
  return psum_fusion.schedule(eqns, eqn_of=lambda e: e, reads_of=lambda e: e.invars,
                              writes_of=lambda e: e.outvars, make_item=lambda e: e)


def _as_dtype(value, dtype):
  if type(value) is not np.ndarray or value.dtype != dtype:
    return np.asarray(value, dtype=dtype)
  return value
