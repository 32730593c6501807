"""Runs the psums of a program that are independent of each other as one
exchange between the devices of an SPMD run.

``pmean`` of a pytree (the gradients of a data-parallel step) binds one
``psum`` per leaf, as in JAX, and the jaxpr keeps them; each psum would be
its own meeting of the devices (a barrier pair).  Both backends reorder
their steps at compile time: a psum waits, with the other psums over the
same axes, until a step needs one of their results (or until a step that
might communicate itself), and the steps that need none of them run
first.  The waiting psums then run as one ``FusedPsums`` step, which calls
``Communicator.all_sum_many`` once: every sum is computed exactly as on its
own, so the results are the same.  Outside an SPMD run it falls back to
the psums' own impls (which raise the unbound-axis NameError).
"""
from purejax._src import spmd
from purejax._src.jaxpr import Literal


class FusedPsums:
  """A primitive-like step: the psums ``eqns`` (all over the same named
  axes, without ``axis_index_groups``) as one exchange."""

  multiple_results = True
  name = "psum (fused)"

  def __init__(self, eqns):
    self.eqns = eqns

  def impl(self, *values, axes):
    ctx = spmd.bound(axes)
    if ctx is None:
      return [e.primitive.impl(x, **e.params) for e, x in zip(self.eqns, values)]
    comm, pos = ctx
    return comm.all_sum_many(pos, values, axes)


class FusedEqn:
  """The equation of a ``FusedPsums`` step (the fields the runners read)."""

  def __init__(self, eqns):
    self.primitive = FusedPsums(eqns)
    self.params = {"axes": eqns[0].params["axes"]}
    self.invars = [e.invars[0] for e in eqns]
    self.outvars = [e.outvars[0] for e in eqns]


def _fusible(eqn):
  """The psum's axes, when it can join a fused exchange, else None."""
  if eqn is None or eqn.primitive.name != "psum" or len(eqn.invars) != 1:
    return None
  axes = eqn.params.get("axes")
  if eqn.params.get("axis_index_groups") is not None or not axes:
    return None
  if any(isinstance(a, int) for a in axes):   # positional axes: a reduction too
    return None
  return tuple(axes)


def _may_communicate(eqn):
  """Whether a host step may run a collective itself (a collective, or a
  primitive with a program inside): waiting psums must not pass it."""
  if getattr(eqn.primitive, "axis_names", None) is not None:
    return True
  return any(hasattr(p, "eqns") or hasattr(p, "jaxpr") or isinstance(p, (tuple, list))
             and any(hasattr(q, "eqns") or hasattr(q, "jaxpr") for q in p)
             for p in eqn.params.values())


def schedule(items, eqn_of, reads_of, writes_of, make_item):
  """``items`` (the steps of a program, in order) with independent psums
  fused: ``eqn_of(item)`` is a host step's equation (None for compiled
  code, which never communicates), ``reads_of(item)`` and
  ``writes_of(item)`` the variables it reads and writes, ``make_item(eqn)``
  the step running a ``FusedEqn``.

  Waiting psums collect psums over the same axes; a step that reads one of
  their results (or, in turn, what such a step wrote) waits after them, and
  any other step runs before them.  A step that may communicate, or a psum
  that cannot join, runs them (and the steps waiting for them) first."""
  out, psums, waiting, produced, key = [], [], [], set(), None

  def flush():
    nonlocal psums, waiting, produced, key
    if len(psums) == 1:
      out.append(psums[0][0])
    elif psums:
      out.append(make_item(FusedEqn([e for _, e in psums])))
    out.extend(waiting)
    psums, waiting, produced, key = [], [], set(), None

  for item in items:
    eqn = eqn_of(item)
    axes = _fusible(eqn)
    depends = any(type(v) is not Literal and v in produced for v in reads_of(item))
    if axes is not None and not depends and key in (None, axes):
      psums.append((item, eqn))
      produced.add(eqn.outvars[0])
      key = axes
    elif axes is not None or (eqn is not None and psums and _may_communicate(eqn)):
      flush()
      if axes is not None:
        psums.append((item, eqn))
        produced.add(eqn.outvars[0])
        key = axes
      else:
        out.append(item)
    elif depends:
      waiting.append(item)
      produced.update(writes_of(item))
    else:
      out.append(item)
  flush()
  return out
