"""A map over the rows a reduction just reduced, in the same pass.

``softmax(x, -1)`` reduces each row of ``x`` (its max, then the sum of
``exp(x - max)``), then divides ``exp(x - max)`` by that sum at every
element.  Planned as a reduction kernel and a map kernel, the reduction
stores ``exp(x - max)`` for the map (a second array written and read back
from memory); XLA reads ``x`` once more instead, from cache.  Here a map
group ``M`` of the same space as a row-reduction group ``B``, reading
``B``'s results at the row being reduced, becomes ``B``'s *epilogue*: at
each point of ``B``'s loops over the kept axes, after ``B``'s reductions,
a loop over the row computes ``M``'s values, recomputing those of ``B``
it reads (``codegen`` checks each read is of the current row:
``NotRowLocal`` otherwise).  ``B`` then stores only the values something
else reads.  No reduction changes, so neither do any bits.

Only when the steps between ``B`` and ``M`` are small elementwise groups
over the kept axes or fewer (``epilogue_maps``: log_softmax's log of the
sum, layer norm's scale),
whose values ``M`` then recomputes, so that ``M`` can move up to ``B``.
"""
import math

from purejax._src.backends.cpu import codegen_ops, codegen_reductions
from purejax._src.backends.cpu.fusion import Group
from purejax._src.backends.cpu.indexing import Ix, flatten
from purejax._src.backends.cpu.row_prologue import is_row_reduction

_MAX_BETWEEN = 6   # small map groups between the reduction and the map
ROW_BUFFER_BYTES = 64 << 10   # a row's values kept for the epilogue (on the stack)


def fuse(plan):
  """Gives row-reduction groups of ``plan`` the map group after them that
  reads their rows as their epilogue; returns ``plan``."""
  from purejax._src.backends.cpu import codegen
  reads = {}

  def inputs(step):
    """The values ``step`` reads (a kernel's loads, a host step's operands)."""
    if step not in reads:
      if type(step) is Group:
        reads[step] = set(codegen.build_kernel(plan, step, "probe").inputs)
      else:
        reads[step] = set(getattr(step, "inputs", ())) | set(step.eqn.invars)
    return reads[step]

  steps = plan.steps
  i = 0
  while i < len(steps):
    b = steps[i]
    found = _candidate(steps, i) if is_row_reduction(b, with_prologue=True) else None
    if found is None:
      i += 1
      continue
    m, between = found
    made_between = {v for s in between for v in s.outputs}
    if not (inputs(m) & (set(b.outputs) | made_between)):
      i += 1
      continue
    # b's values only m reads need no longer be stored (only later steps
    # can read them: probed only where there are such values).
    reduced = {e.outvars[0] for e in b.reductions}
    maybe_unread = [v for v in b.outputs
                    if v in b.producer and v not in reduced and v in inputs(m)]
    others = set(plan.jaxpr.outvars)
    if maybe_unread:
      for s in steps[i + 1:]:
        if s is not m:
          others |= inputs(s)
    saved = list(steps), list(b.outputs)
    steps.remove(m)
    b.outputs[:] = [v for v in b.outputs if v not in maybe_unread or v in others]
    b.outputs += list(m.outputs)
    b.epilogue, b.epilogue_maps = m, between
    plan._order = None
    moved = plan.move_stored(m, b)   # later steps read m's views from b now
    try:
      codegen.build_kernel(plan, b, "probe")
    except codegen.NotRowLocal:
      steps[:] = saved[0]
      b.outputs[:] = saved[1]
      b.epilogue, b.epilogue_maps = None, []
      plan._order = None
      plan.move_stored(b, m, moved)
    reads.pop(b, None)
    i += 1
  return plan


def _candidate(steps, i):
  """(m, the small map groups between step ``i`` and m) where map group m
  may become step ``i``'s epilogue, or None."""
  b, between = steps[i], []
  kept = math.prod(n for d, n in enumerate(b.shape) if d not in b.axes)
  for j in range(i + 1, min(len(steps), i + 2 + _MAX_BETWEEN)):
    m = steps[j]
    if type(m) is not Group:
      return None
    if m.axes is None and m.shape == b.shape and m.prologue is None:
      return m, between
    if not (m.axes is None and math.prod(m.shape) <= kept):
      return None
    between.append(m)
  return None


class Epilogue:
  """An epilogue's C statements: ``decls`` (the row buffers, at each point
  of the kept loops), ``head`` (before the row's loop, after the
  reductions) and the loop's ``body``."""

  def __init__(self, decls, head, body):
    self.decls, self.head, self.body = decls, head, body


def build(kernel, ident, kept, reductions):
  """The Epilogue of ``kernel``'s group (a ``codegen`` builder whose own
  loop body, ``reductions`` and stores are built)."""
  group, shape = kernel.group, kernel.group.shape
  head = []
  for n, (e, out, where, _) in enumerate(reductions):
    # Into constants: a load from the output in the loop kept gcc from
    # vectorizing it.
    v = e.outvars[0]
    head.append(f"const {codegen_ops.storage_ctype(v.aval.dtype)} ea{n} = {out}[{where}];")
    kernel.row_values[v] = (f"ea{n}", kept)
  kernel.row_producers.update(group.producer)
  for m in group.epilogue_maps:
    kernel.row_producers.update(m.producer)
  axes = sorted(group.axes)
  row = kernel.ix(flatten(tuple(Ix.dim(d) for d in axes), tuple(shape[d] for d in axes)))
  length = math.prod(shape[d] for d in axes)
  body, cache = kernel.body, kernel.cache
  decls, room = [], [ROW_BUFFER_BYTES]

  def buffered(v, idx):
    """Where the epilogue reads ``v`` at ``idx`` from a row buffer, which
    the reductions' pass fills: for a value of that pass, at its element."""
    name = cache.get((v, ident))
    if idx != ident or name is None or v not in group.producer:
      return None
    ctype = codegen_ops.ctype(v.aval.dtype)
    size = length * codegen_reductions.CTYPE_SIZES[ctype]
    if size > room[0]:
      return None
    room[0] -= size
    element = f"rw{len(decls)}[{row}]"
    decls.append(f"{ctype} rw{len(decls)}[{length}];")
    body.append(f"{element} = {name};")
    return element

  kernel.body, kernel.cache, kernel.group = [], {}, group.epilogue
  kernel.row_buffer = buffered
  stores = []
  for v in group.epilogue.outputs:
    val = kernel.value(v, ident)
    stores.append(f"{kernel._out(v)}[{kernel.ix(flatten(ident, shape))}] = "
                  f"{codegen_ops.store(val, v.aval.dtype)};")
  lines = kernel.body + stores
  kernel.body, kernel.cache, kernel.group = body, cache, group
  kernel.row_buffer = None
  return Epilogue(decls, head, lines)
