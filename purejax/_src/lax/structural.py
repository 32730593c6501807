"""Shape-changing primitives: broadcast_in_dim, reshape, transpose, squeeze,
rev, concatenate, pad, copy; and the lax functions built on them.

Each primitive is defined once: its shape rule (with JAX's error messages),
its NumPy implementation, and which params a printed jaxpr shows.  The
public functions skip the primitive where JAX does (an identity reshape or
transpose of an array stages nothing), so jaxprs print as JAX's do.
"""
import numpy as np

from purejax._src import array_namespace, core
from purejax._src.interpreters import ad
from purejax._src.interpreters import batching
from purejax._src.interpreters.batching import not_mapped
from purejax._src.lax import utils
from purejax._src.lax.families import check_same_dtypes, standard_primitive
from purejax._src.lax.reductions import reduce_sum_p


def _inverse_permutation(perm):
  return tuple(int(i) for i in np.argsort(perm))


def _sum(x, axes):
  return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None) if axes else x


def _reshape(x, new_sizes):
  if core.get_aval(x).shape == tuple(new_sizes):
    return x
  return reshape_p.bind(x, new_sizes=tuple(new_sizes), dimensions=None, sharding=None)


def _transpose(x, perm):
  if tuple(perm) == tuple(range(len(perm))):
    return x
  return transpose_p.bind(x, permutation=tuple(perm))


def _is_array(x):
  """Arrays and tracers may be returned unchanged by an identity op."""
  return isinstance(x, core.ArrayBase)


# -- broadcast_in_dim ---------------------------------------------------------

def _broadcast_in_dim_abstract_eval(operand, *, shape, broadcast_dimensions, sharding):
  name = "broadcast_in_dim"
  utils.check_shape_elements(name, shape)
  dims = broadcast_dimensions
  if any(d < 0 for d in dims):
    raise TypeError(f"{name} broadcast_dimensions must have every element be "
                    f"nonnegative, got {dims}.")
  if len(dims) != operand.ndim:
    raise TypeError(f"{name} broadcast_dimensions must have length equal to operand "
                    f"ndim; got broadcast_dimensions {dims} for operand ndim {operand.ndim}.")
  if len(shape) < operand.ndim:
    raise TypeError(f"{name} target broadcast shape must have equal or higher rank to "
                    f"the operand shape; got operand ndim {operand.ndim} and target "
                    f"broadcast ndim {len(shape)}.")
  if any(d >= len(shape) for d in dims):
    raise TypeError(f"{name} broadcast_dimensions must be a subset of output "
                    f"dimensions, got {dims} for operand ndim {operand.ndim} and "
                    f"shape {shape}.")
  if any(size != 1 and size != shape[d] for size, d in zip(operand.shape, dims)):
    raise TypeError(f"{name} operand dimension sizes must either be 1, or be equal to "
                    "their corresponding dimensions in the target broadcast shape; got "
                    f"operand of shape {operand.shape}, target broadcast shape {shape}, "
                    f"broadcast_dimensions {dims} ")
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} broadcast_dimensions must not contain duplicates, got "
                    f"broadcast_dimensions {dims}")
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding):
  dims = broadcast_dimensions
  expanded = [1] * len(shape)
  for size, d in zip(x.shape, dims):
    expanded[d] = size
  # Put the operand's axes in the order of their output positions (dims may
  # be unsorted), give the other output axes size 1, and let NumPy broadcast.
  order = sorted(range(len(dims)), key=dims.__getitem__)
  return np.broadcast_to(np.transpose(x, order).reshape(expanded), shape)


def _broadcast_in_dim_pp(params):
  dims = params["broadcast_dimensions"]
  return [("broadcast_dimensions", dims)] if dims else []


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_abstract_eval, _broadcast_in_dim_impl,
    pp_params=_broadcast_in_dim_pp, impl_on_gpu_arrays=True)


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions, sharding):
  # Sum over the new axes and the stretched size-1 axes, then put the kept
  # axes back in the operand's order (broadcast_dimensions may be unsorted).
  in_shape, dims = operand.aval.shape, broadcast_dimensions
  stretched = [d for size, d in zip(in_shape, dims) if size == 1 and shape[d] != 1]
  axes = sorted(set(range(len(shape))) - set(dims) | set(stretched))
  order = sorted(range(len(dims)), key=dims.__getitem__)
  summed = _reshape(_sum(ct, axes), [in_shape[i] for i in order])
  return [_transpose(summed, _inverse_permutation(order))]


ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _unbatched_axis(axis, bdim):
  """Where per-example axis ``axis`` sits in a value batched at ``bdim``."""
  return axis + (axis >= bdim)


@broadcast_in_dim_p.def_batch
def _broadcast_in_dim_batch(axis_size, vals, dims, *, shape, broadcast_dimensions,
                            sharding):
  # The batch axis becomes output axis 0; the others shift by one.  No need to
  # move it first: broadcast_dimensions may be unsorted.
  (x,), (d,) = vals, dims
  out_dims = [0 if i == d else 1 + broadcast_dimensions[i - (i > d)]
              for i in range(core.get_aval(x).ndim)]
  return broadcast_in_dim_p.bind(x, shape=(axis_size,) + tuple(shape),
                                 broadcast_dimensions=tuple(out_dims),
                                 sharding=sharding), 0


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
  """Broadcasts ``operand`` to ``shape``; operand axis i becomes output axis
  ``broadcast_dimensions[i]``."""
  shape = tuple(shape.tolist()) if isinstance(shape, np.ndarray) else tuple(shape)
  shape = tuple(int(d) if isinstance(d, np.integer) else d for d in shape)
  dims = tuple(int(d) for d in broadcast_dimensions)
  if (_is_array(operand) and len(shape) == operand.ndim and tuple(operand.shape) == shape
      and dims == tuple(range(len(shape))) and out_sharding is None):
    return operand
  return utils.bind(broadcast_in_dim_p, operand, shape=shape,
                    broadcast_dimensions=dims, sharding=out_sharding)


def broadcast(operand, sizes, *, out_sharding=None):
  """Adds leading axes of the given ``sizes``."""
  sizes = tuple(sizes)
  if not sizes and out_sharding is None and _is_array(operand):
    return operand
  ndim = np.ndim(operand)
  dims = tuple(range(len(sizes), len(sizes) + ndim))
  return broadcast_in_dim(operand, sizes + tuple(np.shape(operand)), dims,
                          out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
  """Adds leading size-1 axes until ``x`` has rank ``rank``."""
  ndim = np.ndim(x)
  if ndim == rank:
    return x if _is_array(x) else _as_array(x)
  return broadcast(x, (1,) * (rank - ndim))


def _as_array(x):
  from purejax._src.lax.convert import convert_element_type
  a = utils.aval(x)
  return convert_element_type(x, a.dtype, a.weak_type)


# -- reshape ------------------------------------------------------------------

def _reshape_abstract_eval(operand, *, new_sizes, dimensions, sharding):
  if any(d < 0 for d in new_sizes):
    raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
  if dimensions is not None and sorted(dimensions) != list(range(operand.ndim)):
    raise TypeError("reshape dimensions must be a permutation of operand dimensions, "
                    f"got dimensions {dimensions} for shape {operand.shape}.")
  if utils.prod(new_sizes) != operand.size:
    raise ValueError(f"cannot reshape array of shape {operand.shape} (size "
                     f"{operand.size}) into shape {new_sizes} (size {utils.prod(new_sizes)})")
  return core.ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def _reshape_impl(x, *, new_sizes, dimensions, sharding):
  if dimensions is not None:
    x = np.transpose(x, dimensions)
  return np.reshape(x, new_sizes)


# (impl_on_gpu_arrays: see dot_general_p)
reshape_p = standard_primitive("reshape", _reshape_abstract_eval, _reshape_impl,
                               impl_on_gpu_arrays=True)


def _reshape_transpose(ct, operand, *, new_sizes, dimensions, sharding):
  in_shape = operand.aval.shape
  if dimensions is None:
    return [_reshape(ct, in_shape)]
  # reshape(transpose(x, dimensions)): undo the reshape, then the transpose.
  unshaped = _reshape(ct, [in_shape[d] for d in dimensions])
  return [_transpose(unshaped, _inverse_permutation(dimensions))]


ad.deflinear(reshape_p, _reshape_transpose)


@reshape_p.def_batch
def _reshape_batch(axis_size, vals, dims, *, new_sizes, dimensions, sharding):
  # Examples are contiguous blocks only with the batch axis first.
  (x,), (d,) = vals, dims
  x = batching.moveaxis(x, d, 0)
  if dimensions is not None:
    dimensions = (0,) + tuple(i + 1 for i in dimensions)
  return reshape_p.bind(x, new_sizes=(axis_size,) + tuple(new_sizes),
                        dimensions=dimensions, sharding=sharding), 0


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
  """Reshapes ``operand`` (after transposing it by ``dimensions``, if given)."""
  new_sizes = utils.canonicalize_shape(new_sizes)
  shape = np.shape(operand)
  dims = None
  if dimensions is not None:
    dims = utils.int_tuple(dimensions)
    if dims == tuple(range(len(shape))):
      dims = None
  if (shape and dims is None and new_sizes == tuple(shape) and out_sharding is None
      and _is_array(operand)):
    return operand
  if out_sharding is not None:
    from purejax._src.out_sharding import canonical
    out_sharding = canonical(out_sharding, new_sizes)
  return utils.bind(reshape_p, operand, new_sizes=new_sizes, dimensions=dims,
                    sharding=out_sharding)


def collapse(operand, start_dimension, stop_dimension=None):
  """Merges axes ``start_dimension:stop_dimension`` into one."""
  shape = np.shape(operand)
  lo = utils.canonicalize_axis(start_dimension, len(shape) + 1) if start_dimension < 0 \
      else start_dimension
  hi = len(shape) if stop_dimension is None else stop_dimension
  if hi < 0:
    hi += len(shape)
  size = utils.prod(shape[lo:hi])
  return reshape(operand, shape[:lo] + (size,) + shape[hi:])


# -- transpose ----------------------------------------------------------------

def _transpose_abstract_eval(operand, *, permutation):
  if sorted(permutation) != list(range(operand.ndim)):
    raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                    f"got permutation {permutation} for operand shape {operand.shape}.")
  shape = tuple(operand.shape[p] for p in permutation)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


transpose_p = standard_primitive(
    "transpose", _transpose_abstract_eval,
    lambda x, *, permutation: np.transpose(x, permutation), impl_on_gpu_arrays=True)
ad.deflinear(transpose_p, lambda ct, x, *, permutation: [
    _transpose(ct, _inverse_permutation(permutation))])


@transpose_p.def_batch
def _transpose_batch(axis_size, vals, dims, *, permutation):
  # One permutation puts the batch axis first and permutes the rest.
  (x,), (d,) = vals, dims
  perm = (d,) + tuple(_unbatched_axis(p, d) for p in permutation)
  return _transpose(x, perm), 0


def transpose(operand, permutation):
  """Permutes the axes of ``operand``."""
  permutation = utils.int_tuple(permutation)
  if permutation == tuple(range(np.ndim(operand))) and _is_array(operand):
    return operand
  return utils.bind(transpose_p, operand, permutation=permutation)


# -- squeeze and expand_dims ----------------------------------------------------

def _squeeze_abstract_eval(operand, *, dimensions):
  if any(not 0 <= d < operand.ndim for d in dimensions):
    raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"dimensions are not unique: {dimensions}")
  if any(operand.shape[d] != 1 for d in dimensions):
    raise ValueError("cannot select an axis to squeeze out which has size not equal "
                     f"to one, got shape={operand.shape} and dimensions={dimensions}")
  shape = tuple(s for i, s in enumerate(operand.shape) if i not in dimensions)
  return core.ShapedArray(shape, operand.dtype, operand.weak_type)


squeeze_p = standard_primitive(
    "squeeze", _squeeze_abstract_eval,
    lambda x, *, dimensions: np.squeeze(x, dimensions) if dimensions else x,
    impl_on_gpu_arrays=True)
ad.deflinear(squeeze_p, lambda ct, x, *, dimensions: [_reshape(ct, x.aval.shape)])


@squeeze_p.def_batch
def _squeeze_batch(axis_size, vals, dims, *, dimensions):
  (x,), (d,) = vals, dims
  dimensions = tuple(_unbatched_axis(i, d) for i in dimensions)
  out_dim = d - sum(i < d for i in dimensions)
  return squeeze_p.bind(x, dimensions=dimensions), out_dim


def squeeze(array, dimensions):
  """Removes the given size-1 axes."""
  ndim = np.ndim(array)
  dims = tuple(utils.canonicalize_axis(d, ndim) for d in dimensions)
  if not dims and _is_array(array):
    return array
  return utils.bind(squeeze_p, array, dimensions=dims)


def expand_dims(array, dimensions):
  """Inserts size-1 axes at ``dimensions`` (of the result)."""
  dimensions = tuple(dimensions)
  if not dimensions and _is_array(array):
    return array
  shape = tuple(np.shape(array))
  ndim_out = len(shape) + len(dimensions)
  dims = [utils.canonicalize_axis(d, ndim_out) for d in dimensions]
  if len(set(dims)) != len(dims):
    raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
  new_shape = list(shape)
  for d in sorted(dims):
    new_shape.insert(d, 1)
  kept = tuple(i for i in range(ndim_out) if i not in dims)
  return broadcast_in_dim(array, tuple(new_shape), kept)


# -- rev ----------------------------------------------------------------------

def _rev_abstract_eval(operand, *, dimensions):
  if any(d < 0 for d in dimensions):
    raise TypeError(f"rev dimensions must have every element be nonnegative, got "
                    f"{dimensions}.")
  if len(set(dimensions)) != len(dimensions):
    raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
  if any(d >= operand.ndim for d in dimensions):
    raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                    f"{dimensions} for operand ndim {operand.ndim}.")
  return operand


rev_p = standard_primitive(
    "rev", _rev_abstract_eval,
    lambda x, *, dimensions: np.flip(x, dimensions) if dimensions else x,
    impl_on_gpu_arrays=True)
ad.deflinear(rev_p, lambda ct, x, *, dimensions: [rev_p.bind(ct, dimensions=dimensions)])


@rev_p.def_batch
def _rev_batch(axis_size, vals, dims, *, dimensions):
  (x,), (d,) = vals, dims
  return rev_p.bind(x, dimensions=tuple(_unbatched_axis(i, d) for i in dimensions)), d


def rev(operand, dimensions):
  """Reverses ``operand`` along the given axes."""
  return utils.bind(rev_p, operand, dimensions=utils.int_tuple(dimensions))


# -- concatenate ----------------------------------------------------------------

def _concatenate_abstract_eval(*operands, dimension):
  shapes = ", ".join(str(o.shape) for o in operands)
  if len({o.ndim for o in operands}) != 1:
    raise TypeError("Cannot concatenate arrays with different numbers of dimensions: "
                    f"got {shapes}.")
  first = operands[0]
  if not 0 <= dimension < first.ndim:
    raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                    f"shapes {shapes}.")
  others = [o.shape[:dimension] + o.shape[dimension + 1:] for o in operands]
  if any(s != others[0] for s in others[1:]):
    raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                    "other than the one being concatenated: concatenating along "
                    f"dimension {dimension} for shapes {shapes}.")
  check_same_dtypes("concatenate", operands, "concatenate")
  size = sum(o.shape[dimension] for o in operands)
  shape = first.shape[:dimension] + (size,) + first.shape[dimension + 1:]
  return core.ShapedArray(shape, first.dtype, all(o.weak_type for o in operands))


concatenate_p = standard_primitive(
    "concatenate", _concatenate_abstract_eval,
    lambda *xs, dimension: np.concatenate(xs, axis=dimension), impl_on_gpu_arrays=True)


def _concatenate_transpose(ct, *operands, dimension):
  # The cotangent is split back into the operands' blocks (one split, as JAX).
  from purejax._src.lax.split_tile import split_p
  sizes = tuple(core.get_aval(x).shape[dimension] for x in operands)
  if type(ct) is ad.Zero:
    return [ad.Zero(x.aval) if ad.is_undefined_primal(x) else None for x in operands]
  pieces = split_p.bind(ct, sizes=sizes, axis=dimension)
  return [p if ad.is_undefined_primal(x) else None for p, x in zip(pieces, operands)]


ad.deflinear(concatenate_p, _concatenate_transpose)


@concatenate_p.def_batch
def _concatenate_batch(axis_size, vals, dims, *, dimension):
  # Every operand needs the batch axis (unbatched ones are broadcast).
  operands = [batching.bdim_at_front(x, d, axis_size) for x, d in zip(vals, dims)]
  return concatenate_p.bind(*operands, dimension=dimension + 1), 0


def concatenate(operands, dimension):
  """Joins ``operands`` along ``dimension``."""
  if isinstance(operands, (np.ndarray, core.ArrayBase)):
    operands = list(operands)
  operands = list(operands)
  if not operands:
    raise ValueError("concatenate requires a non-empty sequences of arrays")
  if len(operands) == 1 and _is_array(operands[0]):
    return operands[0]
  return utils.bind(concatenate_p, *operands, dimension=int(dimension))


# -- pad ----------------------------------------------------------------------

def _padded_size(size, lo, hi, interior):
  return lo + hi + size + max(size - 1, 0) * interior


def _pad_abstract_eval(operand, padding_value, *, padding_config):
  if operand.dtype != padding_value.dtype:
    raise TypeError("pad operand and padding_value must be same dtype: got "
                    f"{core.dtype_name(operand.dtype)} and "
                    f"{core.dtype_name(padding_value.dtype)}.")
  if padding_value.ndim:
    raise ValueError("padding_value must be a scalar; got "
                     f"np.shape(padding_value)={padding_value.shape}")
  if len(padding_config) != operand.ndim:
    raise ValueError("length of padding_config must equal the number of axes of "
                     f"operand, got padding_config {padding_config} for operand shape "
                     f"{operand.shape}")
  if any(interior < 0 for _, _, interior in padding_config):
    raise ValueError("interior padding in padding_config must be nonnegative, got "
                     f"padding_config {padding_config}")
  shape = tuple(_padded_size(d, *cfg) for d, cfg in zip(operand.shape, padding_config))
  if any(d < 0 for d in shape):
    raise ValueError(f"Dimension size after padding is not at least 0, got result "
                     f"shape {shape}, for padding_config {padding_config} and operand "
                     f"shape {operand.shape}")
  weak = operand.weak_type and padding_value.weak_type
  return core.ShapedArray(shape, operand.dtype, weak)


def _pad_impl(x, padding_value, *, padding_config):
  # Place x (with its interior gaps) in a buffer that has only the positive
  # edge padding, then cut away the negative edges.
  lo_pos = [max(lo, 0) for lo, _, _ in padding_config]
  hi_pos = [max(hi, 0) for _, hi, _ in padding_config]
  spread = [_padded_size(d, 0, 0, i) for d, (_, _, i) in zip(x.shape, padding_config)]
  buf = array_namespace.of(x).full([l + s + h for l, s, h in zip(lo_pos, spread, hi_pos)],
                                   padding_value, dtype=x.dtype)
  buf[tuple(slice(l, l + s, i + 1) for l, s, (_, _, i)
            in zip(lo_pos, spread, padding_config))] = x
  cut = tuple(slice(-min(lo, 0), n - (-min(hi, 0)))
              for n, (lo, hi, _) in zip(buf.shape, padding_config))
  return buf[cut]


pad_p = standard_primitive("pad", _pad_abstract_eval, _pad_impl)


def _pad_c_expansion(x, padding_value, *, padding_config):
  """``pad`` from operations the C backend fuses or copies: per axis, the
  interior gaps (each element followed by ``interior`` fills, the trailing
  ones cut), then the positive edges (concatenated fills), then the
  negative edges (a slice, which may also cut into the new fills)."""
  from purejax._src.lax.slicing import slice_p

  def fill(shape):
    return broadcast_in_dim_p.bind(padding_value, shape=tuple(shape), broadcast_dimensions=(),
                                   sharding=None)

  def crop(x, axis, start, stop):
    shape = x.aval.shape
    return slice_p.bind(x, start_indices=tuple(start if a == axis else 0 for a in range(len(shape))),
                        limit_indices=tuple(stop if a == axis else d for a, d in enumerate(shape)),
                        strides=None)

  for axis, (lo, hi, interior) in enumerate(padding_config):
    shape = list(x.aval.shape)
    n = shape[axis]
    if interior and n > 1:
      # x as [..., n, 1, ...] next to [..., n, interior, ...] fills, merged.
      split = shape[:axis] + [n, 1] + shape[axis + 1:]
      x = reshape_p.bind(x, new_sizes=tuple(split), dimensions=None, sharding=None)
      x = concatenate_p.bind(x, fill(split[:axis + 1] + [interior] + split[axis + 2:]),
                             dimension=axis + 1)
      merged = shape[:axis] + [n * (interior + 1)] + shape[axis + 1:]
      x = reshape_p.bind(x, new_sizes=tuple(merged), dimensions=None, sharding=None)
      x = crop(x, axis, 0, n + (n - 1) * interior)
    shape = list(x.aval.shape)
    parts = []
    for edge in (lo, None, hi):
      if edge is None:
        parts.append(x)
      elif edge > 0:
        parts.append(fill(shape[:axis] + [edge] + shape[axis + 1:]))
    if len(parts) > 1:
      x = concatenate_p.bind(*parts, dimension=axis)
    if lo < 0 or hi < 0:
      size = x.aval.shape[axis]
      x = crop(x, axis, max(-lo, 0), size - max(-hi, 0))
  return x


pad_p.c_expansion = _pad_c_expansion


def _pad_transpose(ct, operand, padding_value, *, padding_config):
  from purejax._src.lax.elementwise import sub_p
  from purejax._src.lax.slicing import slice_p
  ct_aval = core.get_aval(ct)
  # Undo the edge padding (a negative edge, which cropped, now adds zeros),
  # then take every (interior + 1)-th element.
  unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
  unpadded = pad_p.bind(ct, np.zeros((), ct_aval.dtype), padding_config=unpad)
  spread = core.get_aval(unpadded).shape
  ct_operand = slice_p.bind(unpadded, start_indices=(0,) * len(spread),
                            limit_indices=tuple(spread),
                            strides=tuple(i + 1 for _, _, i in padding_config))
  ct_padding = None
  if ad.is_undefined_primal(padding_value):
    # Every output element not taken from the operand is a padding value.
    everything = tuple(range(len(ct_aval.shape)))
    ct_padding = sub_p.bind(_sum(ct, everything), _sum(ct_operand, everything))
  return [ct_operand if ad.is_undefined_primal(operand) else None, ct_padding]


ad.deflinear(pad_p, _pad_transpose)


@pad_p.def_batch
def _pad_batch(axis_size, vals, dims, *, padding_config):
  (x, padding_value), (xd, vd) = vals, dims
  if vd is not_mapped:
    config = list(padding_config)
    config.insert(xd, (0, 0, 0))
    return pad_p.bind(x, padding_value, padding_config=tuple(config)), xd
  # A padding value per example can't be a pad param: pad with zeros, then
  # select each example's value wherever a mask padded the same way is False.
  from purejax._src.lax.elementwise import select_n_p
  x = batching.bdim_at_front(x, xd, axis_size)
  x_aval = core.get_aval(x)
  config = ((0, 0, 0),) + tuple(padding_config)
  padded = pad_p.bind(x, np.zeros((), x_aval.dtype), padding_config=config)
  ones = broadcast_in_dim_p.bind(np.array(True), shape=x_aval.shape,
                                 broadcast_dimensions=(), sharding=None)
  mask = pad_p.bind(ones, np.array(False), padding_config=config)
  out_shape = core.get_aval(padded).shape
  fill = broadcast_in_dim_p.bind(batching.moveaxis(padding_value, vd, 0), shape=out_shape,
                                 broadcast_dimensions=(0,), sharding=None)
  weak = x_aval.weak_type and core.get_aval(padding_value).weak_type
  return utils.with_weak_type(select_n_p.bind(mask, fill, padded), weak), 0


def _padding_config(config):
  if isinstance(config, np.ndarray):
    config = config.tolist()
  out = []
  for entry in config:
    lo, hi, interior = entry   # JAX's ValueError when an entry is not a triple
    out.append(utils.canonicalize_shape((lo, hi, interior)))
  return tuple(out)


def pad(operand, padding_value, padding_config):
  """Pads each axis with (low, high, interior) copies of ``padding_value``;
  negative low/high padding removes elements."""
  return utils.bind(pad_p, operand, padding_value,
                    padding_config=_padding_config(padding_config))


# -- copy -----------------------------------------------------------------------

copy_p = standard_primitive("copy", lambda x: x, np.copy)
ad.deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
copy_p.batch = lambda axis_size, vals, dims: (copy_p.bind(*vals), dims[0])
