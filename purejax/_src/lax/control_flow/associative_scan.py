"""``associative_scan``: an inclusive prefix scan with an associative ``fn``,
as a parallel-prefix tree of slices, pads and concatenations (log depth, no
loop primitive)."""
from purejax._src import core
from purejax._src import tree_util


def _slice(x, start, stop, stride, axis):
  from purejax import lax
  return lax.slice_in_dim(x, start, stop, stride, axis)


def _interleave(a, b, axis):
  """a[0], b[0], a[1], b[1], ... along ``axis`` (len(a) is len(b) or one more)."""
  from purejax import lax
  na, nb = a.shape[axis], b.shape[axis]
  extra = 1 if na == nb else 0
  zero = lax.convert_element_type(0, a.dtype)
  cfg_a = [(0, 0, 0)] * a.ndim
  cfg_b = [(0, 0, 0)] * b.ndim
  cfg_a[axis] = (0, extra, 1)
  cfg_b[axis] = (1, 1 - extra, 1)
  pa, pb = lax.pad(a, zero, cfg_a), lax.pad(b, zero, cfg_b)
  return lax.bitwise_or(pa, pb) if a.dtype == bool else lax.add(pa, pb)


def associative_scan(fn, elems, reverse=False, axis=0):
  """Cumulative ``fn``-reduction of ``elems`` along ``axis``: element i of the
  result combines elements 0..i (i..n-1 when ``reverse``)."""
  from purejax import lax
  if not callable(fn):
    raise TypeError("lax.associative_scan: fn argument should be callable.")
  leaves, tree = tree_util.tree_flatten(elems)
  leaves = [x if isinstance(x, core.ArrayBase) else lax.convert_element_type(
      x, core.get_aval(x).dtype, core.get_aval(x).weak_type) for x in leaves]
  if not leaves:
    return elems
  ndim = leaves[0].ndim
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  axis = axis % ndim
  if reverse:
    leaves = [lax.rev(x, (axis,)) for x in leaves]
  sizes = [x.shape[axis] for x in leaves]
  if len(set(sizes)) > 1:
    raise ValueError("Array inputs to associative_scan must have the same first "
                     f"dimension. (saw: {[x.shape for x in leaves]})")

  def combine(a, b):
    out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
      raise ValueError("fn must return a pytree with the same structure as elems, "
                       f"got {out_tree} and {tree}")
    return out_leaves

  def prefix(xs):
    n = xs[0].shape[axis]
    if n < 2:
      return xs
    pairs = combine([_slice(x, 0, n - 1, 2, axis) for x in xs],
                    [_slice(x, 1, n, 2, axis) for x in xs])
    odd = prefix(pairs)
    rest = [_slice(x, 2, n, 2, axis) for x in xs]
    if n % 2 == 0:
      even = combine([_slice(o, 0, o.shape[axis] - 1, 1, axis) for o in odd], rest)
    else:
      even = combine(odd, rest)
    even = [lax.concatenate([_slice(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]

  out = prefix(leaves)
  if reverse:
    out = [lax.rev(x, (axis,)) for x in out]
  return tree_util.tree_unflatten(tree, out)
