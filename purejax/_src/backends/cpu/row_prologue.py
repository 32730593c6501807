"""Two reductions over the same rows in one pass over memory.

``x.var(1)`` reduces each row of ``x`` twice: its sum, then the squares of
its distances from the mean, which needs that sum.  Planned as two kernels,
``x`` is read from memory twice; XLA reads each row once, the second pass
finding it in cache.  Here a row-reduction group ``B`` whose loop body reads
the results of an earlier group ``A`` of the same space and axes (directly
or through views, such as ``sum / n`` broadcast along the row) takes ``A``
as its *prologue*: at each point of its loops over the kept axes, ``A``'s
reductions run over the row first, their results kept in scalars that
``B``'s body reads.  The order of each reduction is unchanged, so are the
bits.

Only when ``B`` reads ``A``'s results at the row being reduced (checked by
building ``B``'s kernel: ``codegen.NotRowLocal`` otherwise), and when the
steps between them are small elementwise groups over the kept axes (the
``max`` made finite in logsumexp, the mean stored for broadcast): ``B``
recomputes their values per row, and they move after ``B``, for whatever
else reads them.
"""
import math

from purejax._src.backends.cpu import row_tiles
from purejax._src.backends.cpu.fusion import Group

_MAX_BETWEEN = 3   # small map groups between the two reductions


def fuse(plan):
  """Gives row-reduction groups of ``plan`` the preceding group they read
  as their prologue, where that saves a pass; returns ``plan``."""
  from purejax._src.backends.cpu import codegen
  steps = plan.steps
  i = 0
  while i < len(steps):
    found = _candidate(steps, i)
    if found is None:
      i += 1
      continue
    a, between = found
    b = steps[i]
    saved = list(steps), list(b.outputs)
    steps.remove(a)
    for m in reversed(between):   # after b, which now computes what they read
      steps.remove(m)
      steps.insert(steps.index(b) + 1, m)
    b.prologue, b.prologue_maps = a, between
    b.outputs += [v for v in a.outputs if v not in b.outputs]
    plan._order = None
    moved = plan.move_stored(a, b)   # later steps read a's views from b now
    try:
      shared = (set(codegen.build_kernel(plan, b, "probe").inputs)
                & set(codegen.build_kernel(plan, a, "probe").inputs))
    except codegen.NotRowLocal:
      shared = None
    if not shared:   # not row by row, or no input read by both: as planned
      steps[:] = saved[0]
      b.outputs[:] = saved[1]
      b.prologue, b.prologue_maps = None, []
      plan._order = None
      plan.move_stored(b, a, moved)
    i = steps.index(b) + 1
  return plan


def is_row_reduction(step, with_prologue=False):
  """Whether ``step`` is a group reducing rows: kept axes, none after the
  reduced ones (and no prologue yet, unless ``with_prologue``)."""
  if type(step) is not Group or step.axes is None:
    return False
  if step.prologue is not None and not with_prologue:
    return False
  long_axes = [d for d, n in enumerate(step.shape) if n > 1]
  return any(d not in step.axes for d in long_axes) and long_axes[-1] in step.axes


def _around_kept(step):
  """Whether ``step`` reduces an axis outside a kept one (logsumexp over
  axes (0, 2)).  Its rows are then short pieces far apart; unless its body
  is cheap, two passes (the first read in row tiles) take less time than
  one that reads each row twice, output by output."""
  long_axes = [d for d, n in enumerate(step.shape) if n > 1]
  kept = [d for d in long_axes if d not in step.axes]
  return any(d < kept[-1] for d in long_axes if d in step.axes)


def _candidate(steps, i):
  """(a, the small map groups between a and step ``i``) where step ``i`` may
  take ``a`` as its prologue, or None."""
  b, between = steps[i], []
  if not is_row_reduction(b) or (_around_kept(b) and not row_tiles.memory_bound(b)):
    return None
  kept = math.prod(n for d, n in enumerate(b.shape) if d not in b.axes)
  for j in range(i - 1, max(-1, i - 2 - _MAX_BETWEEN), -1):
    a = steps[j]
    if is_row_reduction(a) and a.shape == b.shape and a.axes == b.axes:
      results = {e.outvars[0] for e in a.reductions}
      return (a, list(reversed(between))) if set(a.outputs) <= results else None
    if not (type(a) is Group and a.axes is None and math.prod(a.shape) == kept):
      return None
    between.append(a)
  return None

