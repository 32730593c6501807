"""The jaxpr IR: variables, literals, equations, jaxprs, and their evaluation.

A jaxpr is a typed, first-order program in A-normal form.  Printing lives in
``jaxpr_printer``; type checking in ``jaxpr_check``.
"""
import numpy as np

from purejax._src import core


class Var:
  """A variable; names are given only when a jaxpr is printed.  ``vma``: in a
  shard_map body traced with check_vma, the manual mesh axes its value
  varies over (in mesh order; printed as ``{V:i}``), else None."""
  __slots__ = ("aval", "vma")

  def __init__(self, aval):
    self.aval = aval
    self.vma = None

  def __repr__(self):   # as JAX: identity, then the long-form type
    return f"Var(id={id(self)}):{self.aval.str_short()}"


class DropVar(Var):
  """An output nobody reads (printed as ``_``)."""
  __slots__ = ()

  def __repr__(self):
    return "_"


class Literal:
  """A scalar constant inlined into an equation (printed ``1.0:f32[]``)."""
  __slots__ = ("val", "aval", "python_value")

  def __init__(self, val, aval, python_value=None):
    self.val = val
    self.aval = aval
    # A weak literal written as a Python scalar prints that scalar (JAX
    # shows 0.1, not the float32 value 0.10000000149011612).
    self.python_value = python_value

  def __repr__(self):   # as JAX: the value as a Python scalar, no type
    return f"Literal({_python_scalar(self.val)})"


def _python_scalar(val):
  arr = np.asarray(val)
  if arr.shape != () or arr.dtype == object:
    return val
  if arr.dtype.kind in "biufc":
    return arr.item()
  try:   # bfloat16, float8 and the like: NumPy's .item() keeps their type
    return float(arr)
  except (TypeError, ValueError):
    return val


class SourceInfo:
  """Where in the user's code an equation was traced."""
  __slots__ = ("filename", "lineno", "col", "function")

  def __init__(self, filename, lineno, col, function):
    self.filename, self.lineno, self.col, self.function = filename, lineno, col, function

  def __str__(self):
    col = f":{self.col}" if self.col is not None else ""
    return f"{self.filename}:{self.lineno}{col} ({self.function})"


class JaxprEqn:
  __slots__ = ("invars", "outvars", "primitive", "params", "source_info")

  def __init__(self, invars, outvars, primitive, params, source_info=None):
    self.invars = invars
    self.outvars = outvars
    self.primitive = primitive
    self.params = params
    self.source_info = source_info

  @property
  def effects(self):
    # purejax records no effects on equations (see jax.extend.core).
    return frozenset()

  def replace(self, **kwargs):
    fields = {name: getattr(self, name) for name in self.__slots__}
    fields.update(kwargs)
    return JaxprEqn(**fields)

  def __repr__(self):
    from purejax._src import jaxpr_printer
    return jaxpr_printer.eqn_to_string(self)


class Jaxpr:
  __slots__ = ("constvars", "invars", "outvars", "eqns")

  def __init__(self, constvars, invars, outvars, eqns):
    self.constvars = list(constvars)
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.eqns = list(eqns)

  @property
  def in_avals(self):
    return [v.aval for v in self.invars]

  @property
  def out_avals(self):
    return [v.aval for v in self.outvars]

  @property
  def effects(self):
    return frozenset()

  def __str__(self):
    from purejax._src import jaxpr_printer
    return jaxpr_printer.jaxpr_to_string(self)

  __repr__ = __str__

  def pretty_print(self, **kwargs):
    return str(self)


class ClosedJaxpr:
  """A jaxpr together with the values of its constvars."""
  __slots__ = ("jaxpr", "consts", "__weakref__")

  def __init__(self, jaxpr, consts):
    assert len(jaxpr.constvars) == len(consts)
    self.jaxpr = jaxpr
    self.consts = list(consts)

  in_avals = property(lambda self: self.jaxpr.in_avals)
  out_avals = property(lambda self: self.jaxpr.out_avals)
  eqns = property(lambda self: self.jaxpr.eqns)
  effects = property(lambda self: self.jaxpr.effects)
  literals = property(lambda self: self.consts)   # JAX's newer name for the consts

  def __str__(self):
    return str(self.jaxpr)

  __repr__ = __str__

  def pretty_print(self, **kwargs):
    return str(self.jaxpr)


def sub_jaxprs(params):
  """The jaxprs an equation's ``params`` hold (``cond`` branches, a loop's
  body, a call's jaxpr), open, in parameter order."""
  for value in params.values():
    for v in value if isinstance(value, (tuple, list)) else (value,):
      if isinstance(v, ClosedJaxpr):
        yield v.jaxpr
      elif isinstance(v, Jaxpr):
        yield v


def without_compiled_away(jaxpr):
  """``jaxpr`` without, at any depth, the equations of primitives marked
  ``compiled_away``: those that mean something only to a transformation
  (checkify's ``debug_check``) and do nothing when run.  ``jaxpr`` itself
  when it has none."""
  eqns, changed = [], False
  for eqn in jaxpr.eqns:
    if getattr(eqn.primitive, "compiled_away", False):
      changed = True
      continue
    params = _params_without_compiled_away(eqn.params)
    if params is not eqn.params:
      changed, eqn = True, eqn.replace(params=params)
    eqns.append(eqn)
  return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns) if changed else jaxpr


def _params_without_compiled_away(params):
  new, changed = {}, False
  for name, value in params.items():
    many = isinstance(value, (tuple, list))
    items = []
    for v in value if many else (value,):
      inner = getattr(v, "jaxpr", v) if isinstance(v, (ClosedJaxpr, Jaxpr)) else None
      if inner is not None:
        stripped = without_compiled_away(inner)
        if stripped is not inner:
          changed = True
          v = ClosedJaxpr(stripped, v.consts) if isinstance(v, ClosedJaxpr) else stripped
      items.append(v)
    if not many:
      new[name] = items[0]
    elif hasattr(value, "_fields"):   # a named tuple of jaxprs
      new[name] = type(value)(*items)
    else:
      new[name] = type(value)(items)
  return new if changed else params


def literal_array(lit):
  """A literal's value as an Array, keeping its weak type."""
  from purejax._src.array import wrap_numpy
  out = wrap_numpy(np.asarray(lit.val), lit.aval)
  # Still a literal when staged again (see literal_value).
  out._python_scalar = np.asarray(lit.val).item() if lit.python_value is None else lit.python_value
  return out


def eval_jaxpr(jaxpr, consts, *args):
  """Runs ``jaxpr`` by binding each equation's primitive in the current trace.

  Under no transformation this is eager evaluation; under a transformation
  it re-traces the jaxpr into that transformation.
  """
  env = {}

  def read(v):
    return literal_array(v) if type(v) is Literal else env[v]

  for v, x in zip(jaxpr.constvars, consts):
    env[v] = x
  if len(args) != len(jaxpr.invars):
    raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  global replayed_source_info
  outer = replayed_source_info
  try:
    for eqn in jaxpr.eqns:
      # Equations traced from this one keep the user's line it came from.
      replayed_source_info = eqn.source_info or outer
      outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
      if not eqn.primitive.multiple_results:
        outs = (outs,)
      for v, x in zip(eqn.outvars, outs):
        env[v] = x
  finally:
    replayed_source_info = outer
  return [read(v) for v in jaxpr.outvars]


# The source of the equation ``eval_jaxpr`` is binding (None outside it): a
# jaxpr re-traced into a transformation keeps its equations' user lines.
replayed_source_info = None


def jaxpr_as_fun(closed_jaxpr):
  def fun(*args):
    return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)
  return fun


def literal_value(x):
  """The Literal for a concrete scalar ``x``, or None if x isn't one."""
  if isinstance(x, core.Tracer):
    return None
  if type(x) in (int, float, complex, bool):
    aval = core.python_scalar_aval(x)
    return Literal(np.asarray(x, aval.dtype)[()], aval, python_value=x)
  if isinstance(x, (np.ndarray, np.generic)) and np.shape(x) == ():
    aval = core.get_aval(x)
    return Literal(np.asarray(core.concrete_numpy_value(x))[()], aval)
  python_value = getattr(x, "_python_scalar", None)
  if isinstance(x, core.ArrayBase) and python_value is not None and x.aval.shape == ():
    # A scalar made in the trace from a Python or NumPy number; other
    # Arrays (made outside it) are constvars, as in JAX.
    return Literal(np.asarray(core.concrete_numpy_value(x))[()], x.aval,
                   python_value=python_value)
  return None
