"""No copies at a shard_map's edges (purejax/_src/shard_map.py runs it).

- ``without_edge_axes``: a pmap's body squeezes its inputs' mapped axis and
  expands its outputs'; compiled code would copy there, NumPy reshapes
  the blocks for free instead.
- ``as_view``: an output whose blocks already lie in one buffer at the
  right places (a psum's result, shared by the devices; an input passed
  through) is a read-only view of that buffer instead of a copy.
"""
import math
import weakref

import numpy as np

from purejax._src.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var

_edges = weakref.WeakKeyDictionary()   # body -> (without_edge_axes's answer)


def without_edge_axes(closed):
  """(body', in_shapes, out_shapes): the body without the squeezes of its
  inputs and the expand_dims of its outputs that a pmap adds (size-1 axes
  only); the run does them on the blocks with NumPy, where they are free
  views, instead of copies in compiled code.  A shape is None where
  nothing was taken out."""
  found = _edges.get(closed)
  if found is None:
    found = _edges[closed] = _strip_edges(closed.jaxpr)
  return found


def _strip_edges(jaxpr):
  uses = {}
  for eqn in jaxpr.eqns:
    for v in eqn.invars:
      if type(v) is not Literal:
        uses.setdefault(v, []).append(eqn)
  outvars = set(v for v in jaxpr.outvars if type(v) is not Literal)
  rename, dropped, invars, in_shapes = {}, set(), [], []
  for v in jaxpr.invars:
    eqns = uses.get(v, [])
    if (eqns and v not in outvars and all(e.primitive.name == "squeeze" for e in eqns)
        and len({e.params["dimensions"] for e in eqns}) == 1):
      new = Var(eqns[0].outvars[0].aval)
      for e in eqns:
        rename[e.outvars[0]] = new
        dropped.add(id(e))
      invars.append(new)
      in_shapes.append(new.aval.shape)
    else:
      invars.append(v)
      in_shapes.append(None)
  producer = {o: e for e in jaxpr.eqns for o in e.outvars}
  outs, out_shapes = [], []
  for v in jaxpr.outvars:
    e = producer.get(v) if type(v) is not Literal else None
    if e is not None and _is_expand_dims(e):
      outs.append(e.invars[0])
      out_shapes.append(v.aval.shape)
    else:
      outs.append(v)
      out_shapes.append(None)
  if not dropped and not any(out_shapes):
    return ClosedJaxpr(jaxpr, []), in_shapes, out_shapes
  sub = lambda v: rename.get(v, v) if type(v) is not Literal else v
  eqns = [e.replace(invars=[sub(v) for v in e.invars]) for e in jaxpr.eqns
          if id(e) not in dropped]
  outs = [sub(v) for v in outs]
  # The expand_dims whose results no one reads now go too.
  read = set(v for v in outs if type(v) is not Literal)
  read.update(v for e in eqns for v in e.invars if type(v) is not Literal)
  eqns = [e for e in eqns if not (_is_expand_dims(e) and e.outvars[0] not in read)]
  return ClosedJaxpr(Jaxpr([], invars, outs, eqns), []), in_shapes, out_shapes


def _is_expand_dims(eqn):
  """Whether ``eqn`` only inserts size-1 axes (a broadcast_in_dim that a
  NumPy reshape of its operand does)."""
  if eqn.primitive.name != "broadcast_in_dim" or type(eqn.invars[0]) is Literal:
    return False
  dims, shape = eqn.params["broadcast_dimensions"], eqn.params["shape"]
  operand = eqn.invars[0].aval.shape
  return (list(dims) == sorted(set(dims))
          and all(shape[d] == n for d, n in zip(dims, operand))
          and all(shape[d] == 1 for d in range(len(shape)) if d not in dims))


def _owner(a):
  """The object owning ``a``'s memory (NumPy points a view's base at it)."""
  while isinstance(a, np.ndarray) and a.base is not None:
    a = a.base
  return a


def as_view(placed, shape, dtype):
  """A read-only array of ``shape`` whose part at each index of ``placed``
  ([(index, block)], tiling it) is that block's memory, or None when the
  blocks do not lie so in one buffer.  Exact: every element of the view is
  an element of a block, in the memory they share."""
  blocks = [b for _, b in placed]
  first = blocks[0]
  if (math.prod(shape) == 0 or not all(type(b) is np.ndarray and b.dtype == dtype
                                       for b in blocks)):
    return None
  if len(placed) == 1:
    if first.shape != shape:
      return None
    first = first.view()
    first.flags.writeable = False
    return first
  owner = _owner(first)
  if any(_owner(b) is not owner for b in blocks[1:]):
    return None
  address = lambda b: b.__array_interface__["data"][0]
  origin = next(b for index, b in placed if all(s.start == 0 for s in index))
  base = address(origin)
  # Per dimension, the step in bytes between consecutive elements of the
  # whole: the blocks' own stride, or (blocks one element thick, as a
  # pmap's stacked outputs are) the distance between neighbouring blocks.
  strides = list(origin.strides)
  for d, n in enumerate(origin.shape):
    if n == 1 and shape[d] > 1:
      nxt = next((b for index, b in placed if index[d].start == 1
                  and all(s.start == 0 for k, s in enumerate(index) if k != d)), None)
      if nxt is None:
        return None
      strides[d] = address(nxt) - base
  for index, b in placed:
    if address(b) != base + sum(s.start * st for s, st in zip(index, strides)):
      return None
    if any(n > 1 and st != bst for n, st, bst in zip(b.shape, strides, b.strides)):
      return None
  return np.lib.stride_tricks.as_strided(origin, shape, strides, writeable=False)
