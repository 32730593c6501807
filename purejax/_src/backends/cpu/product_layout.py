"""Matrix products that write their result in the layout it is read in.

The backward pass of ``x @ w`` computes the weight gradient as
``transpose(dot_general(g, x))``: a product whose only reader transposes it.
Read through the transpose, every load of a fused kernel using it strides
across rows (a 512x512 Adam update over such a gradient ran 4x slower than
over a contiguous one).  Swapping the product's operands gives the
transposed result directly (``(A B)^T = B^T A^T``, the same dot products),
so ``transpose(dot_general(a, b))`` becomes ``dot_general(b, a)`` whenever
the transpose only exchanges the two operands' free dimensions.

A product whose operands BLAS cannot take as they are (a contracted axis in
the middle, as some ``einsum``s give) gets its operands transposed first
(``gemm_operands``): lhs to (batch, free, contracted), rhs to (batch,
contracted, free), which gives the same result dimensions in the same
order.
"""
import numpy as np

from purejax._src.backends.cpu import expansion
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


def gemm_operands(jaxpr):
  """``jaxpr`` with each product of BLAS's dtypes that BLAS cannot take as
  it is computed on transposed operands BLAS can take."""
  from purejax._src.backends.cpu import native
  return expansion.rewrite(jaxpr, lambda e: expansion.template(e, _transposed_operands)
                           if e.primitive.name == "dot_general" and _needs_transpose(e, native)
                           else None)


def _needs_transpose(eqn, native):
  dtypes = {np.dtype(v.aval.dtype) for v in list(eqn.invars) + list(eqn.outvars)}
  if len(dtypes) != 1 or dtypes.pop() not in native.BLAS_DTYPES:
    return False
  if any(0 in v.aval.shape for v in eqn.invars):
    return False
  (lc, _), _ = eqn.params["dimension_numbers"]
  return bool(lc) and native.gemm_layout(eqn) is None


def _transposed_operands(lhs, rhs, *, dimension_numbers, **params):
  from purejax._src.lax.dot import dot_general_p
  from purejax._src.lax.structural import transpose_p
  (lc, rc), (lb, rb) = dimension_numbers
  nb, nc = len(lb), len(lc)
  lfree = [d for d in range(lhs.aval.ndim) if d not in lc and d not in lb]
  rfree = [d for d in range(rhs.aval.ndim) if d not in rc and d not in rb]
  lhs = transpose_p.bind(lhs, permutation=tuple(lb) + tuple(lfree) + tuple(lc))
  rhs = transpose_p.bind(rhs, permutation=tuple(rb) + tuple(rc) + tuple(rfree))
  batch = tuple(range(nb))
  numbers = ((tuple(range(nb + len(lfree), nb + len(lfree) + nc)), tuple(range(nb, nb + nc))),
             (batch, batch))
  return dot_general_p.bind(lhs, rhs, dimension_numbers=numbers, **params)
