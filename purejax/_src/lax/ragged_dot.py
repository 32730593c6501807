"""ragged_dot / ragged_dot_general: products over groups of consecutive rows,
and the dot-product option types JAX exposes next to them (DotAlgorithm,
DotAlgorithmPreset, AccuracyMode, Tolerance: accepted, and ignored by
purejax, which always computes at full precision).

The ``ragged_dot_general`` primitive has JAX's three modes, named by where
the lhs ragged axis sits: a non-contracting axis (each row block meets its
own rhs group), a contracting axis (each block contributes to its own output
group, a new leading axis) or a batch axis.  The implementation masks each
group out of a dense copy per group, then runs one dense contraction.
"""
import dataclasses
import enum
from typing import NamedTuple, Sequence, Union

import numpy as np

from purejax._src import array_namespace, core
from purejax._src import dtypes
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.lax import utils
from purejax._src.lax.dot import (
    Precision, _dot_general_impl, _dot_general_shape, _result_dtype, canonicalize_precision)
from purejax._src.lax.families import standard_primitive


# -- option types -----------------------------------------------------------------

class DotAlgorithm(NamedTuple):
  """A dot-product algorithm: storage and accumulation types (ignored by
  purejax, which computes exactly in the result type)."""
  lhs_precision_type: object
  rhs_precision_type: object
  accumulation_type: object
  lhs_component_count: int = 1
  rhs_component_count: int = 1
  num_primitive_operations: int = 1
  allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
  """Named dot-product algorithms (accepted as ``precision``; ignored)."""
  DEFAULT = 1
  ANY_F8_ANY_F8_F32 = 2
  ANY_F8_ANY_F8_F32_FAST_ACCUM = 3
  ANY_F8_ANY_F8_ANY = 4
  ANY_F8_ANY_F8_ANY_FAST_ACCUM = 5
  F16_F16_F16 = 6
  F16_F16_F32 = 7
  BF16_BF16_BF16 = 8
  BF16_BF16_F32 = 9
  BF16_BF16_F32_X3 = 10
  BF16_BF16_F32_X6 = 11
  BF16_BF16_F32_X9 = 12
  TF32_TF32_F32 = 13
  TF32_TF32_F32_X3 = 14
  F32_F32_F32 = 15
  F64_F64_F64 = 16

  def __repr__(self):
    return f"{type(self).__name__}.{self.name}"

  def __str__(self):
    return self.name


class AccuracyMode(enum.Enum):
  """Requested accuracy of transcendental functions (ignored)."""
  HIGHEST = 1
  DEFAULT = 2


class Tolerance:
  """Requested error bounds of transcendental functions (ignored)."""

  def __init__(self, atol=0.0, rtol=0.0, ulps=0):
    self.atol, self.rtol, self.ulps = atol, rtol, ulps


DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, tuple[str, str],
                      tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
  """The dot dimension numbers of a ragged dot, with its one lhs ragged axis
  and the rhs group axis (non-contracting mode only)."""
  dot_dimension_numbers: DotDimensionNumbers
  lhs_ragged_dimensions: Sequence[int]
  rhs_group_dimensions: Sequence[int]

  def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
    dims = tuple(tuple(tuple(int(d) for d in side) for side in pair)
                 for pair in dot_dimension_numbers)
    object.__setattr__(self, "dot_dimension_numbers", dims)
    object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
    object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_BASIC_DIMS = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def _precision(precision):
  """``canonicalize_precision``, also accepting algorithms and preset names."""
  if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
    return precision
  if isinstance(precision, str) and precision.upper() in DotAlgorithmPreset.__members__:
    return DotAlgorithmPreset[precision.upper()]
  return canonicalize_precision(precision)


# -- modes ------------------------------------------------------------------------

NONCONTRACTING, CONTRACTING, BATCH = "noncontracting", "contracting", "batch"


def _remaining(n, *excluded):
  out = set().union(*map(set, excluded))
  return [d for d in range(n) if d not in out]


def _mode(lhs_ndim, dims):
  ragged = dims.lhs_ragged_dimensions[0]
  (lc, _), (lb, _) = dims.dot_dimension_numbers
  if ragged in lc:
    return CONTRACTING, ragged
  if ragged in lb:
    return BATCH, ragged
  if ragged in _remaining(lhs_ndim, lc, lb):
    return NONCONTRACTING, ragged
  raise TypeError(f"lhs_ragged_dim {ragged} not found in lhs_noncontracting "
                  f"{_remaining(lhs_ndim, lc, lb)}, lhs_contracting {list(lc)}, or "
                  f"lhs_batch {list(lb)}.")


def _prefix_dims(mode, ndim, ragged, batch, contract):
  """The axes ``group_sizes`` carries before its group axis."""
  batch, contract = list(batch), list(contract)
  if mode == NONCONTRACTING:
    free = _remaining(ndim, contract, batch)
    return batch + free[:free.index(ragged)]
  if mode == CONTRACTING:
    return batch + contract[:contract.index(ragged)]
  return batch[:batch.index(ragged)]


def _check_range(d, ndim, what, arg):
  if not 0 <= d < ndim:
    raise TypeError(f"ragged_dot_general requires {what} numbers to be nonnegative and "
                    f"less than the number of axes of the {arg} value, got {d} for {arg} "
                    f"of rank {ndim}.")


def _abstract_eval(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
                   preferred_element_type, group_offset, out_sharding):
  dims = ragged_dot_dimension_numbers
  if len(dims.lhs_ragged_dimensions) != 1:
    raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
  _check_range(dims.lhs_ragged_dimensions[0], lhs.ndim, "lhs ragged dimension", "lhs")
  mode, ragged = _mode(lhs.ndim, dims)
  (lc, rc), (lb, rb) = dims.dot_dimension_numbers
  if group_sizes.ndim == 0:
    raise TypeError("expected rank of group_sizes to be >=1.")
  if group_sizes.ndim != 1:
    want = tuple(lhs.shape[i] for i in _prefix_dims(mode, lhs.ndim, ragged, lb, lc))
    want += (group_sizes.shape[-1],)
    if group_sizes.shape != want:
      raise TypeError(f"expected group_sizes to have shape {want}, got {group_sizes.shape}.")
  groups = group_sizes.shape[-1]
  rg = dims.rhs_group_dimensions
  if mode == NONCONTRACTING:
    if len(rg) != 1:
      raise TypeError("ragged_dot_general requires exactly one rhs group dimension when "
                      "lhs ragged dimension is noncontracting.")
    _check_range(rg[0], rhs.ndim, "rhs group dimension", "rhs")
    if rg[0] in rb or rg[0] in rc:
      raise TypeError("ragged_dot_general requires rhs group dimension numbers to be "
                      "distinct from contracting and batch dimensions.")
    if rhs.shape[rg[0]] != groups:
      raise TypeError(f"expected rhs group dimension size to be {groups}, got "
                      f"{rhs.shape[rg[0]]}.")
  elif rg:
    raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when "
                    "lhs ragged dimension is contracting or batch.")
  if not dtypes.issubdtype(group_sizes.dtype, np.integer):
    raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                    "np.integer.")
  # The dense product's shape, with the rhs group axis taken out.
  drop = lambda ds: tuple(d - (1 if rg and d > rg[0] else 0) for d in ds)
  rhs_dense = core.ShapedArray(tuple(s for i, s in enumerate(rhs.shape) if i not in rg),
                               rhs.dtype)
  shape = _dot_general_shape(lhs, rhs_dense, ((lc, drop(rc)), (lb, drop(rb))))
  if mode == CONTRACTING:
    shape = (groups,) + shape
  dtype = _result_dtype(lhs, rhs, preferred_element_type)
  return core.ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# -- implementation -------------------------------------------------------------------

def _expand(x, dim, group_sizes, prefix):
  """x with a leading group axis: copy g keeps, along ``dim``, only the
  positions of group g (group_sizes is indexed by x's ``prefix`` axes)."""
  ends = np.cumsum(group_sizes, axis=-1)
  starts = ends - group_sizes
  g = group_sizes.shape[-1]
  # Bring the group axis first, then the prefix axes into x's axis order.
  order = np.argsort(prefix)
  bounds_shape = (g,) + tuple(x.shape[a] if a in prefix else 1 for a in range(x.ndim))
  place = lambda b: np.transpose(np.moveaxis(b, -1, 0), [0] + [1 + o for o in order]) \
      .reshape(bounds_shape)
  xp = array_namespace.of(x)
  pos = xp.arange(x.shape[dim]).reshape([1] * (1 + dim) + [-1] + [1] * (x.ndim - dim - 1))
  mask = (place(starts) <= pos) & (pos < place(ends))
  return np.where(mask, x[None], x.dtype.type(0))


def _impl(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
          preferred_element_type, group_offset, out_sharding):
  if group_offset is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  dims = ragged_dot_dimension_numbers
  mode, ragged = _mode(lhs.ndim, dims)
  (lc, rc), (lb, rb) = dims.dot_dimension_numbers
  prefix = _prefix_dims(mode, lhs.ndim, ragged, lb, lc)
  gs = group_sizes if array_namespace.of(group_sizes) is not np else np.asarray(group_sizes)
  if gs.ndim == 1:
    gs = np.broadcast_to(gs, tuple(lhs.shape[i] for i in prefix) + gs.shape)
  up = lambda ds: tuple(d + 1 for d in ds)
  dot = lambda a, b, dn: _dot_general_impl(a, b, dimension_numbers=dn, precision=None,
                                           preferred_element_type=preferred_element_type,
                                           out_sharding=None)
  if mode == NONCONTRACTING:
    group = dims.rhs_group_dimensions[0]
    return dot(_expand(lhs, ragged, gs, prefix), rhs,
               ((up(lc) + (0,), tuple(rc) + (group,)), (up(lb), tuple(rb))))
  if mode == CONTRACTING:
    r_ragged = rc[list(lc).index(ragged)]
    r_prefix = _prefix_dims(mode, rhs.ndim, r_ragged, rb, rc)
    return dot(_expand(lhs, ragged, gs, prefix), _expand(rhs, r_ragged, gs, r_prefix),
               ((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb))))
  return dot(lhs, rhs, dims.dot_dimension_numbers)


# impl_on_gpu_arrays: masks and a matrix product (cuBLAS) on a GPU's arrays
ragged_dot_general_p = standard_primitive("ragged_dot_general", _abstract_eval, _impl,
                                          impl_on_gpu_arrays=True)
ragged_dot_general_p.c_code = None


# -- differentiation ------------------------------------------------------------------

@ragged_dot_general_p.def_jvp
def _jvp(primals, tangents, **params):
  if params["group_offset"] is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  x, y, gs = primals
  dx, dy, _ = tangents
  out = ragged_dot_general_p.bind(x, y, gs, **params)
  t = ad.Zero.from_primal_value(out)
  if type(dx) is not ad.Zero:
    t = ad.add_tangents(t, ragged_dot_general_p.bind(dx, y, gs, **params))
  if type(dy) is not ad.Zero:
    t = ad.add_tangents(t, ragged_dot_general_p.bind(x, dy, gs, **params))
  return out, t


@ragged_dot_general_p.def_transpose
def _transpose(ct, x, y, group_sizes, *, ragged_dot_dimension_numbers, precision,
               preferred_element_type, group_offset, out_sharding):
  from purejax._src.lax.convert import convert_element_type
  from purejax._src.lax.structural import transpose
  if group_offset is not None:
    raise NotImplementedError("Unimplemented group_offset support.")
  dims = ragged_dot_dimension_numbers
  (xc, yc), (xb, yb) = dims.dot_dimension_numbers
  x_ndim, y_ndim = core.get_aval(x).ndim, core.get_aval(y).ndim
  mode, ragged = _mode(x_ndim, dims)
  if mode != NONCONTRACTING:
    which = "grad_x_dims" if ad.is_undefined_primal(x) else "grad_y_dims"
    raise NotImplementedError(f"Unimplemented {which} for ragged dot general in mode "
                              f"RAGGED_{mode.upper()}.")
  yg = list(dims.rhs_group_dimensions)
  x_kept = _remaining(x_ndim, xc, xb)
  y_kept = _remaining(y_ndim, yc, yb, yg)
  nb, nx = len(xb), len(x_kept)
  ans_b, ans_x = list(range(nb)), list(range(nb, nb + nx))
  ans_y = list(range(nb + nx, nb + nx + len(y_kept)))

  def grad(lhs, rhs, new_dims, unsorted, aval):
    out = ragged_dot_general(lhs, rhs, group_sizes, new_dims, precision=precision,
                             preferred_element_type=preferred_element_type)
    out = transpose(out, tuple(int(i) for i in np.argsort(unsorted)))
    if core.get_aval(out).dtype != aval.dtype:
      out = convert_element_type(out, aval.dtype, aval.weak_type)
    return out

  if ad.is_undefined_primal(x):
    new = RaggedDotDimensionNumbers(((ans_y, y_kept), (ans_b, yb)),
                                    [nb + x_kept.index(ragged)], yg)
    unsorted = list(xb) + x_kept + [xc[i] for i in np.argsort(yc)]
    return [grad(ct, y, new, unsorted, x.aval), None, None]
  new = RaggedDotDimensionNumbers(((x_kept, ans_x), (xb, ans_b)), [ragged], [])
  unsorted = yg + list(yb) + [yc[i] for i in np.argsort(xc)] + y_kept
  return [None, grad(x, ct, new, unsorted, y.aval), None]


# -- batching ---------------------------------------------------------------------------

@ragged_dot_general_p.def_batch
def _batch(axis_size, vals, dims_in, *, ragged_dot_dimension_numbers, **params):
  # Every operand gets the batch axis first (broadcast if unbatched); it
  # becomes a leading dot batch axis, and group_sizes gets its full shape.
  lhs, rhs, gs = vals
  ld, rd, gd = dims_in
  dims = ragged_dot_dimension_numbers
  lhs_ndim = core.get_aval(lhs).ndim - (ld is not None)
  mode, ragged = _mode(lhs_ndim, dims)
  (lc, rc), (lb, rb) = dims.dot_dimension_numbers
  lhs = batching.bdim_at_front(lhs, ld, axis_size)
  rhs = batching.bdim_at_front(rhs, rd, axis_size)
  prefix = _prefix_dims(mode, lhs_ndim, ragged, lb, lc)
  lhs_shape = core.get_aval(lhs).shape[1:]
  gs_aval = core.get_aval(gs)
  groups = gs_aval.shape[-1]
  full = (axis_size,) + tuple(lhs_shape[i] for i in prefix) + (groups,)
  from purejax._src.lax.structural import broadcast_in_dim
  if gd is None:
    gs = broadcast_in_dim(gs, full, tuple(range(len(full) - gs_aval.ndim, len(full))))
  else:
    gs = batching.moveaxis(gs, gd, 0)
    if gs_aval.ndim == 2:   # a [g] per example: broadcast along the prefix axes
      gs = broadcast_in_dim(gs, full, (0, len(full) - 1))
  up = lambda ds: tuple(d + 1 for d in ds)
  new = RaggedDotDimensionNumbers(((up(lc), up(rc)), ((0,) + up(lb), (0,) + up(rb))),
                                  up(dims.lhs_ragged_dimensions),
                                  up(dims.rhs_group_dimensions))
  out = ragged_dot_general_p.bind(lhs, rhs, gs, ragged_dot_dimension_numbers=new, **params)
  return out, 1 if mode == CONTRACTING else 0


# -- the API --------------------------------------------------------------------------

def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers,
                       precision=None, preferred_element_type=None, group_offset=None,
                       out_sharding=None):
  """A ``dot_general`` whose lhs ragged axis is cut into consecutive groups of
  ``group_sizes`` (see the module docstring for the three modes); positions
  past the last group contribute nothing.  ``group_offset`` is not supported
  (as in JAX)."""
  preferred = dtypes.canonicalize_user_dtype(preferred_element_type, "ragged_dot_general")
  return utils.bind(ragged_dot_general_p, lhs, rhs, group_sizes,
                    ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
                    precision=_precision(precision), preferred_element_type=preferred,
                    group_offset=group_offset, out_sharding=out_sharding)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
  """``lhs`` (m, k) times ``rhs`` (g, k, n): rows of group i (consecutive,
  ``group_sizes[i]`` of them) use ``rhs[i]``; rows past all groups give zeros."""
  return ragged_dot_general(lhs, rhs, group_sizes, _BASIC_DIMS, precision=precision,
                            preferred_element_type=preferred_element_type,
                            group_offset=group_offset, out_sharding=out_sharding)
