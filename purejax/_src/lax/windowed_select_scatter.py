"""select_and_scatter: XLA's general SelectAndScatter, with its select and
scatter computations given as jaxprs (select_and_scatter_add is the case
select = ge/le, scatter = add, init = 0).

In each window of the padded operand the pick starts at the first element
inside the operand and moves to a later one x whenever select(pick, x) is
false; each source value is then combined into its window's pick, windows
in row-major order, starting from init_value.  No derivative rules, as in JAX.
"""
import numpy as np

from purejax._src import core
from purejax._src.jaxpr import eval_jaxpr
from purejax._src.lax.families import standard_primitive
from purejax._src.lax.windowed_numpy import _base, _offset_slices, reduce_window_shape_tuple


def _run(jaxpr, consts, *args):
  with core.eval_context():
    out = eval_jaxpr(jaxpr, consts, *args)
  return np.asarray(out[0] if isinstance(out, (list, tuple)) else out)


def _abstract_eval(operand, source, init_value, *, select_jaxpr, select_consts,
                   scatter_jaxpr, scatter_consts, window_dimensions, window_strides, padding):
  if len(window_dimensions) != operand.ndim or len(window_strides) != operand.ndim:
    raise TypeError("select_and_scatter: window_dimensions and window_strides must have "
                    f"one entry per operand dimension, got {window_dimensions} and "
                    f"{window_strides} for shape {operand.shape}")
  ones = (1,) * operand.ndim
  expected = reduce_window_shape_tuple(operand.shape, window_dimensions, window_strides,
                                       padding, ones, ones)
  if source.shape != tuple(expected):
    raise TypeError(f"select_and_scatter source shape {source.shape} does not match the "
                    f"window output shape {tuple(expected)}.")
  if init_value.shape != () or init_value.dtype != source.dtype:
    raise TypeError("select_and_scatter: init_value must be a scalar of the source's dtype")
  return core.ShapedArray(operand.shape, source.dtype)


def _impl(operand, source, init_value, *, select_jaxpr, select_consts, scatter_jaxpr,
          scatter_consts, window_dimensions, window_strides, padding):
  operand, source = np.asarray(operand), np.asarray(source)
  ones = (1,) * operand.ndim
  base = _base(operand, operand.flat[0] if operand.size else 0, padding, ones)
  inside = _base(np.ones(operand.shape, bool), False, padding, ones)
  slices = list(_offset_slices(source.shape, window_dimensions, window_strides, ones))
  out = np.full(base.shape, init_value, source.dtype)
  if source.size:
    best = np.array(base[slices[0]])
    found = np.array(inside[slices[0]])
    pick = np.zeros(source.shape, np.int32)
    for j, sl in enumerate(slices[1:], start=1):
      x, valid = base[sl], inside[sl]
      keep = _run(select_jaxpr, select_consts, best, x).astype(bool)
      switch = valid & (~found | ~keep)
      best = np.where(switch, x, best)
      pick = np.where(switch, j, pick)
      found |= valid
    for j in reversed(range(len(slices))):   # row-major window order per element
      sl = slices[j]
      mask = (pick == j) & found
      if mask.any():
        combined = _run(scatter_jaxpr, scatter_consts, out[sl], source).astype(source.dtype)
        out[sl] = np.where(mask, combined, out[sl])
  crop = tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, operand.shape))
  return out[crop]


select_and_scatter_p = standard_primitive("select_and_scatter", _abstract_eval, _impl)
select_and_scatter_p.c_code = None
