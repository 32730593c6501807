"""NumPy implementations behind the windowed primitives (windowed.py).

They follow XLA's CPU loops: every output starts from the init value and
folds in its window's elements one at a time in row-major window order,
``acc = computation(acc, x)``, leaving out padding and the holes of base
dilation.  The loop runs over the window offsets (a handful), each step on
a strided view of the whole operand, so sums round as XLA's do,
non-associative computations agree and ties in max pooling's gradient go to
the element XLA picks.  (With padding XLA sometimes walks the window in
another order; only non-associative computations, and ties under
forward-mode max pooling, can tell.)  Max/min pooling and its two
derivatives take faster whole-array paths when no NaN or signed-zero tie
can tell the difference.  They also run on a GPU's (CuPy's) arrays.
"""
import itertools

import numpy as np

from purejax._src import array_namespace, dtypes
from purejax._src.lax.convolution import _dilate_shape
from purejax._src.lax.elementwise import ge_p
from purejax._src.lax.reductions import _highest, _lowest
from purejax._src.lax.structural import _pad_impl


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
  """The output shape of a windowed reduction."""
  if base_dilation is not None:
    operand_shape = _dilate_shape(operand_shape, base_dilation)
  if window_dilation is not None:
    window_dimensions = _dilate_shape(window_dimensions, window_dilation)
  padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
  return tuple(max((p - w) // s + 1, 0)
               for p, w, s in zip(padded, window_dimensions, window_strides))


def _base(x, fill, padding, base_dilation):
  """``x`` as the windows see it: base-dilated and padded with ``fill``
  (negative padding crops)."""
  config = tuple((lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation))
  if all(c == (0, 0, 0) for c in config):
    return x
  return _pad_impl(x, x.dtype.type(fill), padding_config=config)


def _offset_slices(out_shape, window_dimensions, window_strides, window_dilation):
  """For each window element, in row-major window order, the strided slice of
  the base that holds that element of every window (one per output)."""
  for k in itertools.product(*map(range, window_dimensions)):
    yield tuple(slice(i * wd, i * wd + (n - 1) * s + 1, s)
                for i, wd, s, n in zip(k, window_dilation, window_strides, out_shape))


def _max(a, b):
  out = np.maximum(a, b)
  if dtypes.issubdtype(out.dtype, np.floating):   # XLA: -0.0 < +0.0
    out = np.where((a == 0) & (b == 0), np.where(np.signbit(a), b, a), out)
  return out


def _min(a, b):
  out = np.minimum(a, b)
  if dtypes.issubdtype(out.dtype, np.floating):
    out = np.where((a == 0) & (b == 0), np.where(np.signbit(a), a, b), out)
  return out


def _bits(dtype):
  """The unsigned type to and/or ``dtype``'s bits with, if any: zero bits are
  the zero of every dtype."""
  size = np.dtype(dtype).itemsize
  return np.dtype(f"u{size}") if size in (1, 2, 4, 8) else None


def _where_zero(mask, values):
  """``np.where(mask, values, 0)`` by masking bits: np.where branches per
  element, which is slow for the random masks of pooling."""
  u = _bits(values.dtype)
  if u is None:
    return np.where(mask, values, values.dtype.type(0))
  return (values.view(u) & np.negative(mask.view(np.uint8), dtype=u)).view(values.dtype)


def _fold(xs, inits, step, window_dimensions, window_strides, padding, base_dilation,
          window_dilation, skip_padding=False):
  """Folds every window of the arrays ``xs`` with ``step(accs, elems) -> accs``
  starting from ``inits``.  With ``skip_padding`` the padding and dilation
  holes are left out of the fold, as XLA does (for a monoid's identity it
  makes no difference)."""
  out_shape = reduce_window_shape_tuple(xs[0].shape, window_dimensions, window_strides,
                                        padding, base_dilation, window_dilation)
  xp = array_namespace.of(*xs)
  accs = [xp.full(out_shape, init, x.dtype) for x, init in zip(xs, inits)]
  if not all(out_shape):
    return accs
  bases = [_base(x, init, padding, base_dilation) for x, init in zip(xs, inits)]
  real = None
  if skip_padding and bases[0] is not xs[0]:
    real = _base(xp.ones(xs[0].shape, bool), False, padding, base_dilation)
  with np.errstate(all="ignore"):
    for sl in _offset_slices(out_shape, window_dimensions, window_strides, window_dilation):
      new = step(accs, [b[sl] for b in bases])
      accs = new if real is None else [np.where(real[sl], n, a) for n, a in zip(new, accs)]
  return accs


# -- fast paths for max/min pooling ----------------------------------------------------

def _fast_extremum(x, np_op, *, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
  """max/min pooling folded with NumPy's maximum/minimum, which may return
  either zero of a (-0.0, +0.0) tie; None (use the exact fold) when the
  result holds a zero that a signed-zero tie may have got wrong, and on a
  GPU's arrays (whose values that test would read back to the host)."""
  out_shape = reduce_window_shape_tuple(x.shape, window_dimensions, window_strides, padding,
                                        base_dilation, window_dilation)
  if not all(out_shape) or array_namespace.of(x) is not np:
    return None
  identity = _lowest(x.dtype) if np_op is np.maximum else _highest(x.dtype)
  base = _base(x, identity, padding, base_dilation)
  slices = _offset_slices(out_shape, window_dimensions, window_strides, window_dilation)
  out = base[next(slices)].copy()
  for sl in slices:
    np_op(out, base[sl], out=out)
  if dtypes.issubdtype(x.dtype, np.floating):
    # The wrong zero can only come out where the right one was in a window.
    wrong = np.signbit(out) if np_op is np.maximum else ~np.signbit(out)
    if np.any((out == 0) & wrong):
      return None
  return out


def _selected(base, slices, select_prim, never=None):
  """For each window offset (in row-major window order), where the window's
  pick sits there: the first element that select(picked, x) never rejects.

  Without NaNs that is the first element equal to the window's max (min),
  found with whole-array NumPy ops; with NaNs XLA's sequential fold is
  followed literally (None for the caller's own).  Windows whose extremum
  equals ``never`` pick nothing.  On a GPU's arrays, whose NaNs would be
  looked for on the host, the sequential fold always (the same picks
  without NaNs: the first of equal values stays), or None with ``never``."""
  xp = array_namespace.of(base)
  inexact = dtypes.issubdtype(base.dtype, np.inexact)
  if xp is not np and inexact and never is not None:
    return None
  sequential = inexact and xp is not np
  if not sequential:
    extremum = np.maximum if select_prim is ge_p else np.minimum
    best = base[slices[0]].copy()
    for sl in slices[1:]:
      extremum(best, base[sl], out=best)
    sequential = inexact and np.isnan(best).any()   # halves too
  if sequential:
    if never is not None:
      return None
    best = base[slices[0]]
    pick = xp.zeros(best.shape, np.int32)
    with np.errstate(invalid="ignore"):
      for j, sl in enumerate(slices[1:], start=1):
        keep = select_prim.impl(best, base[sl])
        best = np.where(keep, best, base[sl])
        pick = np.where(keep, pick, j)
    return [pick == j for j in range(len(slices))]
  taken = xp.zeros(best.shape, bool) if never is None else best == never
  masks = []
  for sl in slices:
    mask = base[sl] == best
    mask &= ~taken
    taken |= mask
    masks.append(mask)
  return masks


def _fast_gather(tangents, operand, select_prim, fill, *, window_dimensions, window_strides,
                 padding, base_dilation, window_dilation):
  """select_and_gather_add without NaNs: the tangent at each window's first
  extremum, or 0 where the window holds only the losing key (padding and
  holes hold it, so they are never picked).  None when it does not apply."""
  out_shape = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                        padding, base_dilation, window_dilation)
  u = _bits(tangents.dtype)
  if not all(out_shape) or u is None:
    return None
  base = _base(operand, fill, padding, base_dilation)
  tbase = _base(tangents, 0, padding, base_dilation)
  slices = list(_offset_slices(out_shape, window_dimensions, window_strides,
                               window_dilation))
  masks = _selected(base, slices, select_prim, never=fill)
  if masks is None:
    return None
  out = array_namespace.of(tbase).zeros(out_shape, u)
  for mask, sl in zip(masks, slices):   # disjoint masks: or-ing keeps the bits
    out |= _where_zero(mask, tbase[sl]).view(u)
  return out.view(tangents.dtype)
