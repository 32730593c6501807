"""conv_general_dilated_p's transpose and batching rules (attached to the
primitive in convolution.py).

Ignoring spatial axes, a convolution contracts like a matrix product,
[batch, in] x [in, out] -> [batch, out], so its transposes are again
convolutions with roles swapped:

- w.r.t. lhs: [batch, out] x [out, in] -> [batch, in]: the cotangent
  convolved with the spatially reversed kernel, the forward strides becoming
  lhs dilation.  Feature groups move from the kernel's output features to
  its input features; batch groups become feature groups.
- w.r.t. rhs: [in, batch] x [batch, out] -> [in, out]: lhs convolved with
  the cotangent, the forward strides becoming rhs dilation.  Feature groups
  become batch groups and the other way around.

vmap folds the mapped axis into a batch or feature axis and uses the group
counts so that examples never mix.
"""
from purejax._src import core
from purejax._src.interpreters import ad
from purejax._src.lax.convolution import (
    ConvDimensionNumbers, _conv_shape, _dilate_dim, conv_general_dilated_p)


def _swap(spec):
  """Exchanges the roles of the first two axes of a spec (batch <-> feature)."""
  return (spec[1], spec[0]) + tuple(spec[2:])


def _reshape_axis_into(src, dst, x):
  """Merges axis ``src`` of ``x`` into axis ``dst`` (numbered after ``src``
  is removed), ``src`` becoming the major part."""
  from purejax._src.lax.structural import reshape
  shape = core.get_aval(x).shape
  perm = [i for i in range(len(shape)) if i != src]
  perm.insert(dst, src)
  new_shape = [d for i, d in enumerate(shape) if i != src]
  new_shape[dst] *= shape[src]
  return reshape(x, tuple(new_shape), tuple(perm))


def _reshape_axis_out_of(src, major, x):
  """Splits axis ``src`` of ``x`` into (major, rest)."""
  from purejax._src.lax.structural import reshape
  shape = list(core.get_aval(x).shape)
  shape[src:src + 1] = [major, shape[src] // major]
  return reshape(x, tuple(shape))


def _convert(x, dtype):
  from purejax._src.lax.convert import convert_element_type_p
  if core.get_aval(x).dtype == dtype:
    return x
  return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)


def _bind(lhs, rhs, **params):
  return conv_general_dilated_p.bind(lhs, rhs, **params)


# -- transposes -----------------------------------------------------------------------

def _lhs_transpose_padding(in_space, window, strides, out_space, padding, lhs_dilation,
                           rhs_dilation):
  pads = []
  for n, k, s, m, (lo, _), ld, rd in zip(in_space, window, strides, out_space, padding,
                                         lhs_dilation, rhs_dilation):
    span = _dilate_dim(k, rd)
    before = span - lo - 1
    after = _dilate_dim(n, ld) + span - 1 - _dilate_dim(m, s) - before
    pads.append((before, after))
  return tuple(pads)


def _rhs_transpose_padding(in_space, window, strides, out_space, padding, lhs_dilation,
                           rhs_dilation):
  pads = []
  for n, k, s, m, (lo, _), ld, rd in zip(in_space, window, strides, out_space, padding,
                                         lhs_dilation, rhs_dilation):
    hi = _dilate_dim(m, s) - _dilate_dim(n, ld) + _dilate_dim(k, rd) - lo - 1
    pads.append((lo, hi))
  return tuple(pads)


def _transpose_lhs(ct, lhs_aval, rhs, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   precision, preferred_element_type, out_sharding):
  from purejax._src.lax.structural import rev
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  rhs_shape = core.get_aval(rhs).shape
  groups = feature_group_count
  if feature_group_count > 1 or batch_group_count > 1:
    groups = max(feature_group_count, batch_group_count)
    # The kernel's output features are (group, out); move the group into
    # its input features, which are the transposed convolution's outputs.
    rhs = _reshape_axis_out_of(rhs_spec[0], groups, rhs)
    rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
  ct_shape = core.get_aval(ct).shape
  pads = _lhs_transpose_padding(
      [lhs_aval.shape[d] for d in lhs_spec[2:]], [rhs_shape[d] for d in rhs_spec[2:]],
      window_strides, [ct_shape[d] for d in out_spec[2:]], padding, lhs_dilation,
      rhs_dilation)
  kernel = _convert(rev(rhs, rhs_spec[2:]), core.get_aval(ct).dtype)
  dnums = ConvDimensionNumbers(out_spec, _swap(rhs_spec), lhs_spec)
  out = _bind(ct, kernel, window_strides=lhs_dilation, padding=pads,
              lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
              dimension_numbers=dnums, feature_group_count=groups, batch_group_count=1,
              precision=precision, preferred_element_type=preferred_element_type,
              out_sharding=None)
  out = _convert(out, lhs_aval.dtype)
  if batch_group_count > 1:
    # The batch groups came out as feature groups: put them back in the batch.
    out = _reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
    out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
  return out


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation,
                   rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                   precision, preferred_element_type, out_sharding):
  if core.get_aval(ct).size == 0:
    return ad.Zero(ad.tangent_aval(rhs_aval))   # no degenerate zero-size windows
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  lhs_shape, ct_shape = core.get_aval(lhs).shape, core.get_aval(ct).shape
  pads = _rhs_transpose_padding(
      [lhs_shape[d] for d in lhs_spec[2:]], [rhs_aval.shape[d] for d in rhs_spec[2:]],
      window_strides, [ct_shape[d] for d in out_spec[2:]], padding, lhs_dilation,
      rhs_dilation)
  dnums = ConvDimensionNumbers(_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec))
  out = _bind(_convert(lhs, core.get_aval(ct).dtype), ct, window_strides=rhs_dilation,
              padding=pads, lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
              dimension_numbers=dnums, feature_group_count=batch_group_count,
              batch_group_count=feature_group_count, precision=precision,
              preferred_element_type=preferred_element_type, out_sharding=None)
  return _convert(out, rhs_aval.dtype)


def transpose_rule(ct, lhs, rhs, **params):
  if ad.is_undefined_primal(lhs) and ad.is_undefined_primal(rhs):
    raise ValueError("conv_general_dilated is linear in one operand at a time")
  if ad.is_undefined_primal(lhs):
    return [_transpose_lhs(ct, lhs.aval, rhs, **params), None]
  return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


# -- batching -------------------------------------------------------------------------

def _empty_batch(vals, dims, params):
  """A zero-size mapped axis: nothing to fold, the result is just zeros."""
  from purejax._src.lax.creation import full
  unbatched = []
  for x, d in zip(vals, dims):
    aval = core.get_aval(x)
    shape = aval.shape if d is None else aval.shape[:d] + aval.shape[d + 1:]
    unbatched.append(core.ShapedArray(shape, aval.dtype))
  p = {k: v for k, v in params.items() if k not in ("precision", "out_sharding")}
  dtype = p.pop("preferred_element_type") or unbatched[0].dtype
  shape = _conv_shape(*unbatched, **p)
  return full((0,) + shape, 0, dtype), 0


def batch_rule(axis_size, vals, dims, **params):
  (lhs, rhs), (ld, rd) = vals, dims
  lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
  fgc, bgc = params["feature_group_count"], params["batch_group_count"]
  if axis_size == 0:
    return _empty_batch(vals, dims, params)
  if ld is not None and rd is not None:
    # One group per example: the mapped axis joins the (grouped) features or
    # batch of lhs and the output features of rhs.
    if bgc > 1:
      lhs = _reshape_axis_into(ld, lhs_spec[0], lhs)
      params = dict(params, batch_group_count=bgc * axis_size)
    else:
      lhs = _reshape_axis_into(ld, lhs_spec[1], lhs)
      params = dict(params, feature_group_count=fgc * axis_size)
    rhs = _reshape_axis_into(rd, rhs_spec[0], rhs)
    out = _bind(lhs, rhs, **params)
    return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
  if ld is not None:
    if bgc == 1:
      lhs = _reshape_axis_into(ld, lhs_spec[0], lhs)
    else:
      # The batch is (group, rest): put the mapped axis inside each group.
      lhs = _reshape_axis_out_of(lhs_spec[0] + (ld <= lhs_spec[0]), bgc, lhs)
      lhs = _reshape_axis_into(ld + (lhs_spec[0] < ld), lhs_spec[0] + 1, lhs)
      lhs = _reshape_axis_into(lhs_spec[0], lhs_spec[0], lhs)
    out = _bind(lhs, rhs, **params)
    return _reshape_axis_out_of(out_spec[0], axis_size, out), out_spec[0]
  if fgc == 1 and bgc == 1:
    rhs = _reshape_axis_into(rd, rhs_spec[0], rhs)
    out = _bind(lhs, rhs, **params)
    return _reshape_axis_out_of(out_spec[1], axis_size, out), out_spec[1]
  # Output features are (group, rest): put the mapped axis inside each group,
  # then take it back out of the result's features.
  groups = max(fgc, bgc)
  rhs = _reshape_axis_out_of(rhs_spec[0] + (rd <= rhs_spec[0]), groups, rhs)
  rhs = _reshape_axis_into(rd + (rhs_spec[0] < rd), rhs_spec[0] + 1, rhs)
  rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[0], rhs)
  out = _bind(lhs, rhs, **params)
  out = _reshape_axis_out_of(out_spec[1], groups, out)
  out = _reshape_axis_out_of(out_spec[1] + 1, axis_size, out)
  out = _reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
  return out, out_spec[1]

