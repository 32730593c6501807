"""Matrix products that write their result in the layout it is read in.

The backward pass of ``x @ w`` computes the weight gradient as
``transpose(dot_general(g, x))``: a product whose only reader transposes it.
Read through the transpose, every load of a fused kernel using it strides
across rows (a 512x512 Adam update over such a gradient ran 4x slower than
over a contiguous one).  Swapping the product's operands gives the
transposed result directly (``(A B)^T = B^T A^T``, the same dot products),
so ``transpose(dot_general(a, b))`` becomes ``dot_general(b, a)`` whenever
the transpose only exchanges the two operands' free dimensions.
"""
from purejax._src.jaxpr import Jaxpr, Var


def fold_transposes(jaxpr):
  """``jaxpr`` with each product read only by such a transpose computed in
  the transposed layout, by one ``dot_general`` with swapped operands."""
  readers = {}
  for e in jaxpr.eqns:
    for v in e.invars:
      if type(v) is Var:
        readers[v] = readers.get(v, 0) + 1
  for v in jaxpr.outvars:
    if type(v) is Var:
      readers[v] = readers.get(v, 0) + 2   # never folded
  producers = {e.outvars[0]: e for e in jaxpr.eqns if e.primitive.name == "dot_general"}
  folded = {}   # the transpose equation -> the swapped product replacing it
  for e in jaxpr.eqns:
    if e.primitive.name != "transpose":
      continue
    src = e.invars[0]
    dot = producers.get(src) if type(src) is Var else None
    if dot is None or readers.get(src) != 1:
      continue
    swapped = _swapped(dot, tuple(e.params["permutation"]))
    if swapped is not None:
      folded[e] = swapped.replace(outvars=e.outvars)
      folded[dot] = None
  if not folded:
    return jaxpr
  eqns = []
  for e in jaxpr.eqns:
    if e in folded:
      if folded[e] is not None:
        eqns.append(folded[e])
    else:
      eqns.append(e)
  return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns)


def _swapped(dot, perm):
  """``dot`` with its operands swapped, if its result transposed by
  ``perm`` is exactly what the swapped product gives; else None."""
  (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
  lhs, rhs = (v.aval for v in dot.invars)
  nb = len(lb)
  nl, nr = lhs.ndim - nb - len(lc), rhs.ndim - nb - len(rc)
  if not nl or not nr:
    return None
  want = tuple(range(nb)) + tuple(range(nb + nl, nb + nl + nr)) + tuple(range(nb, nb + nl))
  if perm != want:
    return None
  params = dict(dot.params, dimension_numbers=((tuple(rc), tuple(lc)), (tuple(rb), tuple(lb))))
  precision = params.get("precision")
  if type(precision) is tuple and len(precision) == 2:   # (lhs's, rhs's)
    params["precision"] = precision[::-1]
  return dot.replace(invars=[dot.invars[1], dot.invars[0]], params=params)
