"""Partitions a jaxpr into fused loop kernels ("groups") and host steps.

A group is one loop nest over an iteration space (a shape).  Every value it
computes has that shape and is computed at the loop's current point; a
group may end in reductions over some axes of the space (the reduced loops
run innermost), and it stores only the values something outside it reads.
Index-only primitives (broadcasts, reshapes, transposes, slices, iota), and
short chains of cheap elementwise operations (arithmetic, comparisons,
select, conversions) on values not being computed in an open group, are
"views": each consumer recomputes them from their sources at the index it
needs, so they are never stored (a broadcast costs no memory traffic, and
``x - mean`` need not be written out to be reduced and then divided).

The plan is built in one pass over the equations.  A group stays *open*
while nothing outside it has read one of its values; an open group can be
moved to the end of the plan, which lets an equation join the group of its
operands even when unrelated steps came in between.  An equation that C
cannot compute (its primitive or a dtype is not supported) becomes a host
step running its NumPy ``impl``, unless it is a native step (``native``:
matrix products through BLAS, control flow whose bodies compile completely).
With ``native_only`` (the bodies of control flow) no view is made by NumPy,
and the plan is ``complete`` when it has no host step.
"""
import numpy as np

from purejax._src.backends.cpu import (codegen_ops, codegen_reductions, common_subexpressions,
                                      expansion, native, product_layout, scan_products)
from purejax._src.jaxpr import DropVar, Jaxpr, Literal, Var
from purejax._src.lax import complex_extremum

INDEX_PRIMS = frozenset({"broadcast_in_dim", "reshape", "squeeze", "transpose", "slice",
                         "rev", "iota"})
# Elementwise primitives cheap enough to recompute in each consumer rather
# than store, when their operands are not computed in an open group.
CHEAP_PRIMS = frozenset({"convert_element_type", "copy", "name", "stop_gradient", "add", "add_any",
                         "sub", "mul", "neg", "max", "min", "select_n", "clamp", "eq", "ne",
                         "lt", "le", "gt", "ge", "and", "or", "xor", "not", "abs", "square",
                         "sign", "floor", "ceil"})
_VIEW_COST_LIMIT = 6   # cheap operations a view may recompute
# A computed view at most this many times smaller than a kernel reading it
# (broadcast) is stored once before that kernel rather than recomputed.
_HOIST_RATIO = 8
REDUCTIONS = frozenset({"reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                        "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin"})
# Views a host step needs are made by NumPy (these are free there); the
# others by a small copy kernel.
_HOST_VIEW_PRIMS = frozenset({"broadcast_in_dim", "reshape", "squeeze", "transpose", "slice",
                              "rev", "stop_gradient"})
_SIBLING_WINDOW = 8   # how many recent groups a new computation may join
_OUTPUT = "output"    # the reader of the jaxpr's outputs
_NATIVE = "native"    # the reader of a native step's operands


class Group:
  """A fused loop nest: ``shape`` is its iteration space, ``axes`` the
  reduced axes (None: no reduction yet), ``producer`` maps each value it
  computes to its equation, ``outputs`` lists the values it stores."""

  def __init__(self, shape, axes=None):
    self.shape, self.axes = tuple(shape), axes
    self.producer = {}
    self.reductions = []
    self.outputs = []
    self.open = True
    # A Group of the same space and axes whose reductions run first, row by
    # row, inside this group's loops over the kept axes (``row_prologue``).
    self.prologue = None
    self.prologue_maps = []   # small groups between, whose values it recomputes
    # A map Group of the same space run row by row after this group's
    # reductions, in the same loops (``row_epilogue``).
    self.epilogue = None
    self.epilogue_maps = []   # small groups between, whose values it recomputes

  def absorb(self, other):
    self.producer.update(other.producer)
    self.reductions += other.reductions
    self.outputs += [v for v in other.outputs if v not in self.outputs]
    if other.axes is not None:
      self.axes = other.axes

  def describe(self):
    names = [e.primitive.name for e in self.producer.values()] + [
        e.primitive.name for e in self.reductions]
    if self.epilogue is not None:
      names += ["then per row:"] + [e.primitive.name for e in self.epilogue.producer.values()]
    space = f"{list(self.shape)}" + (f" reducing axes {list(self.axes)}"
                                     if self.axes is not None else "")
    return f"kernel over {space}: {', '.join(names) or 'copy'} -> {len(self.outputs)} stored"


def numpy_view(eqn):
  """Whether ``eqn`` is a view a host step (or the jaxpr's outputs) gets from
  NumPy: an index-only operation, which NumPy makes without computing."""
  return eqn.primitive.name in _HOST_VIEW_PRIMS


class HostStep:
  """An equation run by its NumPy ``impl``."""

  def __init__(self, eqn):
    self.eqn = eqn

  def describe(self):
    return f"host: {self.eqn.primitive.name}"


class Plan:
  """The steps in execution order, and the view equations they inline."""

  def __init__(self, jaxpr, steps, views, materialized=None):
    self.jaxpr, self.steps, self.views = jaxpr, steps, views
    self.materialized = materialized or {}
    self._order = None

  def stored_before(self, v, step):
    """Whether view ``v`` is in memory, stored by a step before ``step``
    (then reading it beats recomputing it)."""
    source = self.materialized.get(v)
    if source is None or source is step:
      return False
    if self._order is None:
      self._order = {s: i for i, s in enumerate(self.steps)}
    return self._order.get(source, len(self.steps)) < self._order.get(step, -1)

  def move_stored(self, source, target, views=None):
    """Views stored by step ``source`` (or ``views``, of those) now stored
    by ``target``, which takes over its outputs; returns those views (to
    move them back, when the change is undone)."""
    moved = [v for v, s in self.materialized.items()
             if s is source and (views is None or v in views)]
    for v in moved:
      self.materialized[v] = target
    return moved

  @property
  def groups(self):
    return [s for s in self.steps if type(s) is Group]

  @property
  def compiled_steps(self):
    return [s for s in self.steps if type(s) is not HostStep]

  @property
  def complete(self):
    return all(type(s) is not HostStep for s in self.steps)

  def describe(self):
    return "\n".join(f"  step {i}: {s.describe()}" for i, s in enumerate(self.steps))


def plan_jaxpr(jaxpr, native_only=False, row_prologues=False):
  """Partitions ``jaxpr`` (without constvars) into a Plan; nested calls
  (``jit``, ``checkpoint``, ``custom_jvp_call``...) are inlined first,
  products moved out of scan loops (``scan_products``), and primitives with a ``c_expansion`` expanded (``expansion``), products on
  operands BLAS cannot take transposed first (``product_layout``), repeated
  equations merged (``common_subexpressions``), and products read only
  through a transpose computed transposed (``product_layout``).  With
  ``row_prologues`` (the C backend), two reductions over the same rows
  share one pass (``row_prologue``), and so does a map over the rows
  reduced (``row_epilogue``)."""
  jaxpr = scan_products.rewrite(inline_calls(jaxpr))
  jaxpr = product_layout.gemm_operands(expansion.expand(jaxpr))
  jaxpr = product_layout.fold_transposes(common_subexpressions.eliminate(jaxpr))
  planner = _Planner(native_only)
  for eqn in jaxpr.eqns:
    planner.add(eqn)
  for v in jaxpr.outvars:
    planner.touch(v, _OUTPUT)
  steps = [s for s in planner.steps if type(s) is not Group or s.outputs]
  plan = Plan(jaxpr, steps, planner.views, planner.materialized)
  if row_prologues:
    from purejax._src.backends.cpu import row_epilogue, row_prologue
    row_epilogue.fuse(row_prologue.fuse(plan))
  return plan


def inline_calls(jaxpr):
  """``jaxpr`` with the equations of call primitives whose implementation
  just runs their jaxpr replaced by that jaxpr's equations (renamed)."""
  if not any(_inlinable(e) for e in jaxpr.eqns):
    return jaxpr
  eqns = []
  env = {}
  _inline_into(jaxpr.eqns, env, eqns, rename=False)
  outvars = [_read(env, v) for v in jaxpr.outvars]
  return Jaxpr([], jaxpr.invars, outvars, eqns)


def _inlinable(eqn):
  param = getattr(eqn.primitive, "call_jaxpr_param", None)
  if param is None:
    return False
  closed = eqn.params.get(param)
  return closed is not None and not closed.consts and not closed.jaxpr.constvars


def _read(env, v):
  return v if type(v) is Literal else env.get(v, v)


def _inline_into(eqns, env, out, rename):
  for e in eqns:
    invars = [_read(env, v) for v in e.invars]
    if _inlinable(e):
      inner = e.params[e.primitive.call_jaxpr_param].jaxpr
      sub = dict(zip(inner.invars, invars))
      _inline_into(inner.eqns, sub, out, rename=True)
      for outer, result in zip(e.outvars, inner.outvars):
        env[outer] = _read(sub, result)
      continue
    outvars = e.outvars
    if rename:   # an inlined jaxpr may be inlined again elsewhere
      outvars = [(DropVar if type(v) is DropVar else Var)(v.aval) for v in e.outvars]
      env.update(zip(e.outvars, outvars))
    out.append(e.replace(invars=invars, outvars=outvars))


# -- what C supports --------------------------------------------------------------

def _size(aval):
  n = 1
  for d in aval.shape:
    n *= d
  return n


def fusible(eqn):
  """Whether the C code generator computes ``eqn``."""
  prim = eqn.primitive
  name = prim.name
  if prim.multiple_results or len(eqn.outvars) != 1:
    return False
  if name == "dot_general":
    return outer_product(eqn)
  if name not in codegen_ops.OPS and name not in INDEX_PRIMS and name not in REDUCTIONS:
    return False
  for v in list(eqn.invars) + list(eqn.outvars):
    if not codegen_ops.dtype_supported(v.aval.dtype) or _size(v.aval) == 0:
      return False
    if type(v) is Literal and np.shape(v.val) != ():
      return False
  in_dtypes = [v.aval.dtype for v in eqn.invars]
  out_dtype = eqn.outvars[0].aval.dtype
  if name in codegen_ops.OPS:
    return codegen_ops.supported(name, in_dtypes, out_dtype, eqn.params)
  if name in ("argmax", "argmin"):
    return np.dtype(in_dtypes[0]).kind != "c"
  if name in REDUCTIONS:
    if name in ("reduce_max", "reduce_min") and np.dtype(in_dtypes[0]).kind == "c":
      # C folds in loop order: only a reduction XLA folds as one block.
      shape = eqn.invars[0].aval.shape
      return len(complex_extremum.blocks([shape[a] for a in eqn.params["axes"]])) == 1
    return codegen_reductions.reducer(name, in_dtypes[0]) is not None
  return True


def outer_product(eqn):
  """Whether ``eqn`` is a dot_general without contraction, in one dtype:
  an elementwise product of its operands, computed in a kernel."""
  (lc, _), _ = eqn.params["dimension_numbers"]
  dtypes = {np.dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)}
  pref = eqn.params.get("preferred_element_type")
  dtype = np.dtype(eqn.outvars[0].aval.dtype)
  return (not lc and len(dtypes) == 1 and dtype != np.bool_
          and codegen_ops.dtype_supported(dtype) and (pref is None or np.dtype(pref) == dtype)
          and all(_size(v.aval) > 0 for v in list(eqn.invars) + list(eqn.outvars)))


def reduced_axes(eqn):
  return tuple(sorted(eqn.params["axes"]))


# -- the planner ------------------------------------------------------------------

class _Planner:

  def __init__(self, native_only):
    self.native_only = native_only
    self.steps = []
    self.owner = {}        # var -> Group computing it
    self.reduced = set()   # vars that are reduction results
    self.views = {}        # var -> view equation
    self.view_cost = {}    # view var -> cheap operations it recomputes
    self.materialized = {}   # view var -> the step storing it (Group or HostStep)

  def add(self, eqn):
    if not fusible(eqn):
      if eqn.primitive.name == "dot_general":
        eqn = self._fold_transposes(eqn)
      step = native.analyze(eqn, self.views)
      reader = _NATIVE if step is not None else None
      for v in (step.inputs if step is not None else eqn.invars):
        self.touch(v, reader)
      self.steps.append(step or HostStep(eqn))
      return
    name = eqn.primitive.name
    cost = sum(self.view_cost.get(v, 0) for v in eqn.invars if type(v) is not Literal)
    cheap = (name in CHEAP_PRIMS or (name == "div" and eqn.outvars[0].aval.dtype.kind == "f"))
    # An outer product (one multiply) never joins its operands' groups (they
    # have other shapes), so it is a view even when they are being computed.
    outer = name == "dot_general" and cost < _VIEW_COST_LIMIT
    if name in INDEX_PRIMS or outer or (cheap and cost < _VIEW_COST_LIMIT and not any(
        self._in_open_group(v) for v in eqn.invars if type(v) is not Literal)):
      self.views[eqn.outvars[0]] = eqn
      self.view_cost[eqn.outvars[0]] = cost + (name not in INDEX_PRIMS)
    elif name in REDUCTIONS:
      self._reduction(eqn)
    else:
      self._compute(eqn)

  def _fold_transposes(self, eqn):
    """``eqn`` (a dot_general) reading, instead of an operand that is a
    transpose view, that transpose's operand, when BLAS can take it as it is
    (saving the transposed copy) and the result's dims stay in order."""
    for i, v in enumerate(eqn.invars):
      view = self.views.get(v)
      if view is None or view.primitive.name != "transpose":
        continue
      perm = view.params["permutation"]
      dims = eqn.params["dimension_numbers"]
      (lc, rc), (lb, rb) = dims
      contract, batch = (lc, rc)[i], (lb, rb)[i]
      free = [d for d in range(len(perm)) if d not in contract and d not in batch]
      if [perm[d] for d in free] != sorted(perm[d] for d in free):
        continue
      moved = (tuple(perm[d] for d in contract), tuple(perm[d] for d in batch))
      new_dims = ((moved[0], rc) if i == 0 else (lc, moved[0]),
                  (moved[1], rb) if i == 0 else (lb, moved[1]))
      invars = list(eqn.invars)
      invars[i] = view.invars[0]
      folded = eqn.replace(invars=invars,
                           params=dict(eqn.params, dimension_numbers=new_dims))
      if native.gemm_layout(folded) is not None:
        eqn = folded
    return eqn

  def _in_open_group(self, v):
    g = self.owner.get(v)
    return g is not None and g.open and v not in self.reduced

  def view_sources(self, v):
    """The non-view values a view is computed from."""
    out, stack = [], [v]
    while stack:
      u = stack.pop()
      if type(u) is Literal:
        continue
      if u in self.views:
        stack.extend(self.views[u].invars)
      elif u not in out:
        out.append(u)
    return out

  def touch(self, v, reader):
    """Records that step ``reader`` (a Group, None for a host step, or
    _OUTPUT for the jaxpr's outputs) reads ``v``: its group must store it and
    is closed."""
    if type(v) is Literal:
      return
    if v in self.views:
      if reader is None or reader is _OUTPUT or reader is _NATIVE:
        by_numpy = not self.native_only and reader is not _NATIVE
        self._materialize_view(v, close=reader is not _OUTPUT, by_numpy=by_numpy)
      elif (self.view_cost.get(v, 0) and
            _size(v.aval) * _HOIST_RATIO <= int(np.prod(reader.shape, dtype=np.int64))):
        self._materialize_before(v, reader)
      else:   # inlined: its operands are read (views among them may be hoisted)
        for u in self.views[v].invars:
          self.touch(u, reader)
      return
    g = self.owner.get(v)
    if g is not None and g is not reader:
      if v not in g.outputs:
        g.outputs.append(v)
      if reader is not _OUTPUT:   # outputs are read after every step
        g.open = False

  def _materialize_before(self, v, reader):
    """Stores view ``v``, much smaller than group ``reader`` that reads it
    broadcast, in a kernel run just before ``reader``: computing it once
    beats recomputing it at every point of ``reader``'s loops."""
    done = self.materialized.get(v)
    if done is not None:
      if type(done) is Group:
        done.open = False
      return
    g = self.materialized[v] = Group(tuple(v.aval.shape))
    self.steps.insert(self.steps.index(reader), g)
    g.outputs.append(v)
    for s in self.view_sources(v):
      self.touch(s, g)
    g.open = False

  def _materialize_view(self, v, close, by_numpy):
    """Stores view ``v`` (for a host or native step, which closes its group,
    or as an output of the jaxpr): ``by_numpy``, NumPy makes index-only
    views; a kernel the others."""
    if v in self.materialized:
      g = self.materialized[v]
      if close and type(g) is Group:   # stored earlier by a group still open
        g.open = False
      return
    self.materialized[v] = None
    eqn = self.views[v]
    if by_numpy and eqn.primitive.name in _HOST_VIEW_PRIMS:
      for u in eqn.invars:
        self.touch(u, None)
      step = self.materialized[v] = HostStep(eqn)
      self.steps.append(step)
      return
    shape = tuple(v.aval.shape)
    sources = self.view_sources(v)
    forbidden = {self.owner[s] for s in sources if s in self.owner}
    g = self.materialized[v] = self._sibling(shape, None, forbidden) or Group(shape)
    self._place_last(g)
    g.outputs.append(v)
    for s in sources:
      self.touch(s, g)
    if close:
      g.open = False

  def _forbidden(self, invars):
    """Groups an equation reading ``invars`` cannot join: those whose values
    it reads at other indices (through views) or whose reductions it reads."""
    out = set()
    for v in invars:
      if type(v) is Literal:
        continue
      sources = self.view_sources(v) if v in self.views else [v]
      for s in sources:
        g = self.owner.get(s)
        if g is not None and (s in self.reduced or s is not v):
          out.add(g)
    return out

  def _merge(self, candidates, axes):
    """Merges open groups of one space into one (those of compatible axes)."""
    chosen = []
    for g in candidates:
      if g.axes is not None:
        if axes is None:
          axes = g.axes
        elif g.axes != axes:
          continue
      chosen.append(g)
    if not chosen:
      return None
    target = chosen[0]
    for g in chosen[1:]:
      target.absorb(g)
      self.steps.remove(g)
      for v in list(g.producer) + [e.outvars[0] for e in g.reductions]:
        self.owner[v] = target
    if axes is not None:
      target.axes = axes
    return target

  def _sibling(self, shape, axes, forbidden):
    seen = 0
    for step in reversed(self.steps):
      if type(step) is not Group:
        continue
      seen += 1
      if seen > _SIBLING_WINDOW:
        break
      if (step.open and step.shape == shape and step not in forbidden
          and (step.axes is None or axes is None or step.axes == axes)):
        return step
    return None

  def _place_last(self, group):
    if group in self.steps:
      self.steps.remove(group)
    self.steps.append(group)

  def _compute(self, eqn):
    out = eqn.outvars[0]
    shape = tuple(out.aval.shape)
    forbidden = self._forbidden(eqn.invars)
    candidates = []
    for v in eqn.invars:
      if type(v) is Literal or v in self.views or v in self.reduced:
        continue
      g = self.owner.get(v)
      if (g is not None and g.open and g.shape == shape and tuple(v.aval.shape) == shape
          and g not in forbidden and g not in candidates):
        candidates.append(g)
    target = (self._merge(candidates, None) or self._sibling(shape, None, forbidden)
              or Group(shape))
    self._place_last(target)
    target.producer[out] = eqn
    self.owner[out] = target
    for v in eqn.invars:
      self.touch(v, target)

  def _reduction(self, eqn):
    x, out = eqn.invars[0], eqn.outvars[0]
    shape, axes = tuple(x.aval.shape), reduced_axes(eqn)
    forbidden = self._forbidden([x])
    target = None
    if type(x) is not Literal and self._in_open_group(x):
      g = self.owner[x]
      if g.shape == shape and g not in forbidden:
        target = self._merge([g], axes)
    if target is None:
      target = self._sibling(shape, axes, forbidden) or Group(shape)
    target.axes = axes
    self._place_last(target)
    target.reductions.append(eqn)
    self.owner[out] = target
    self.reduced.add(out)
    self.touch(x, target)
