"""Prints jaxprs in JAX's text format::

    { lambda ; a:f32[3,4] b:f32[4]. let
        c:f32[3,4] = add a 1.0:f32[]
        ...
      in (e,) }

Variables are named a, b, ..., z, ba, bb, ... in order of appearance.  A
primitive may choose which params are shown (``prim.pp_params``) and, when it
calls a jaxpr (``prim.call_jaxpr_param``), the callee's variables take the
names of the caller's arguments and results, as JAX prints them (unless
``prim.call_shares_names`` is False: custom_jvp_call's callee has fresh names).
"""
import collections

import re

import numpy as np

from purejax._src import pretty_printer as pp
from purejax._src.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, sub_jaxprs


def _alphabetic(n):
  s = ""
  while not s or n:
    n, i = divmod(n, 26)
    s = chr(ord("a") + i) + s
  return s


class _Names:
  def __init__(self):
    self.names = {}
    self.count = 0
    self.hoisted = {}   # id(called jaxpr) -> the name it is printed under
    self.unused = set()  # equation outputs nothing reads: printed as ``_``

  def __call__(self, var):
    if isinstance(var, DropVar) or var in self.unused:
      return "_"
    name = self.names.get(var)
    if name is None:
      name = self.names[var] = _alphabetic(self.count)
      self.count += 1
    return name


def _literal_text(lit):
  val = lit.val if lit.python_value is None else lit.python_value
  if isinstance(val, np.ndarray):
    val = val[()]
  return f"{val}:{lit.aval.str_short(short_dtypes=True)}"


def _atom(v, names):
  return _literal_text(v) if type(v) is Literal else names(v)


def _typed(v, names):
  vma = v.vma
  mark = "" if not vma else "{V:" + (vma[0] if len(vma) == 1 else f"({','.join(vma)})") + "}"
  return f"{names(v)}:{v.aval.str_short(short_dtypes=True)}{mark}"


def _vars_doc(items, separator=""):
  return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()),
                                     [pp.text(t) for t in items])))


def _param_value_doc(value, names):
  if isinstance(value, (Jaxpr, ClosedJaxpr)) and id(_inner(value)) in names.hoisted:
    return pp.text(names.hoisted[id(_inner(value))])
  if isinstance(value, (Jaxpr, ClosedJaxpr)):
    return _jaxpr_doc(value, names)
  if isinstance(value, tuple) and value and all(
      isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
    inner = pp.join(pp.brk(), [_jaxpr_doc(v, names) for v in value])
    return pp.group(pp.nest(2, pp.text("(") + pp.brk("") + inner) + pp.brk("") + pp.text(")"))
  if isinstance(value, np.dtype):
    return pp.text(value.name)
  # Object addresses masked, as JAX prints them (the same text on every run).
  return pp.text(_ADDRESS.sub(" at 0xXXXXXXXXXXXX", str(value)))


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _params_doc(pairs, names):
  if not pairs:
    return pp.nil()
  items = [pp.text(f"{k}=") + _param_value_doc(v, names) for k, v in pairs]
  return pp.group(pp.nest(2, pp.concat([pp.text("["), pp.brk(""), pp.join(pp.brk(), items)]))
                  + pp.brk("") + pp.text("]"))


def _share_call_names(eqn, names):
  """Name a called jaxpr's variables after the caller's operands/results."""
  callee = eqn.params[eqn.primitive.call_jaxpr_param]
  callee = callee.jaxpr if isinstance(callee, ClosedJaxpr) else callee
  shared = set()   # an operand passed twice names only the first binder
  for inner, outer in zip(callee.invars, eqn.invars):
    if type(outer) is not Literal and inner not in names.names and outer not in shared:
      shared.add(outer)
      names.names[inner] = names(outer)
  for inner, outer in zip(callee.outvars, eqn.outvars):
    if (type(inner) is not Literal and inner not in names.names
        and inner not in callee.invars and not isinstance(outer, DropVar)):
      names.names[inner] = names(outer)


def _eqn_doc(eqn, names, unused=frozenset()):
  prim = eqn.primitive
  pp_eqn = getattr(prim, "pp_eqn", None)
  if pp_eqn is not None:   # its own notation (refs: ``a[...] <- b``)
    return pp.text(pp_eqn(eqn, lambda v: _atom(v, names), lambda v: _typed(v, names),
                          unused))
  lhs = _vars_doc([_typed(v, names) for v in eqn.outvars])
  call_param = getattr(prim, "call_jaxpr_param", None)
  if (call_param and getattr(prim, "call_shares_names", True)
      and id(_inner(eqn.params[call_param])) not in names.hoisted):
    _share_call_names(eqn, names)
  pp_params = getattr(prim, "pp_params", None)
  pairs = pp_params(eqn.params) if pp_params else sorted(eqn.params.items())
  rhs = [pp.text(prim.name), _params_doc(pairs, names),
         pp.text(" ") + _vars_doc([_atom(v, names) for v in eqn.invars])]
  if not eqn.outvars:
    return pp.concat(rhs)
  return pp.concat([lhs, pp.text(" = "), *rhs])


def _unused_outputs(jaxpr):
  used = {v for e in jaxpr.eqns for v in e.invars if type(v) is not Literal}
  used.update(v for v in jaxpr.outvars if type(v) is not Literal)
  return {v for e in jaxpr.eqns for v in e.outvars if v not in used}


def _jaxpr_doc(jaxpr, names):
  if isinstance(jaxpr, ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  constvars = _vars_doc([_typed(v, names) for v in jaxpr.constvars])
  invars = _vars_doc([_typed(v, names) for v in jaxpr.invars])
  # Only the top level's unused outputs are dropped (``a[...] <- b``), as JAX.
  eqns = pp.join(pp.brk("; "), [_eqn_doc(e, names, names.unused) for e in jaxpr.eqns])
  outs = _vars_doc([_atom(v, names) for v in jaxpr.outvars], separator=",")
  close = ",)" if len(jaxpr.outvars) == 1 else ")"
  body = pp.concat([
      pp.text("{ lambda "), constvars, pp.text("; "), invars,
      pp.text(". let"), pp.nest(2, pp.brk() + eqns), pp.brk(),
      pp.text("in "), pp.text("(") + outs + pp.text(close)])
  return pp.group(pp.nest(2, body) + pp.text(" }"))


_MAX_INLINE_EQNS = 10


def _inner(jaxpr):
  return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _shared_jaxprs(top):
  """The called jaxprs printed once up front, in JAX's order: a breadth-first
  walk that visits a callee once per call of each visit of its caller; one
  visited twice or more, or long (over ten equations), is shared.  Each is
  named after the first named call (``jit[name=f]``) that reaches it."""
  counts, names = {}, {}
  queue = collections.deque([top])
  while queue:
    jaxpr = queue.popleft()
    key = id(jaxpr)
    entry = counts.setdefault(key, [jaxpr, 0])
    entry[1] += 1 if jaxpr is top or len(jaxpr.eqns) <= _MAX_INLINE_EQNS else 2
    for eqn in jaxpr.eqns:
      name = eqn.params.get("name")
      for sub in sub_jaxprs(eqn.params):
        queue.append(sub)
        if name is not None:
          names.setdefault(id(sub), str(name).strip("<>"))
  taken, shared = {}, []
  for key, (jaxpr, count) in counts.items():
    if count < 2:
      continue
    name = names.get(key, "jaxpr")
    seen = taken.get(name, 0)
    taken[name] = seen + 1
    if seen:
      name += str(seen)
      taken[name] = taken.get(name, 0) + 1
    shared.append((key, name, jaxpr))
  return shared


def jaxpr_to_string(jaxpr, width=80):
  """A called jaxpr that is used more than once, or is long, is printed once
  up front as ``let NAME = {...} in`` and referred to by name."""
  names, docs = _Names(), []
  names.unused.update(_unused_outputs(_inner(jaxpr)))   # the top level's only, as JAX
  shared = _shared_jaxprs(_inner(jaxpr))
  names.hoisted.update((key, name) for key, name, _ in shared)
  for key, name, callee in shared:
    docs += [pp.text(f"let {name} = "), _jaxpr_doc(callee, names), pp.text(" in"), pp.brk()]
  docs.append(_jaxpr_doc(jaxpr, names))
  return pp.concat(docs).format(width)


def eqn_to_string(eqn, width=80):
  return _eqn_doc(eqn, _Names()).format(width)
