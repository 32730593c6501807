"""The fixed order in which float cumulative sums, products and
log-sum-exps combine their elements, shared by the NumPy implementation and
the C code (backends/cpu/sort_scan.py), which give the same bits.

A sequential scan in the operand's dtype loses accuracy linearly in the
length (float32 ones stop counting at 2**24); JAX's tree-ordered scan does
not.  Here every scan accumulates in double (complex128 for complex), and in
blocks of ``SCAN_BLOCK`` elements along the axis: each block is scanned
sequentially from its first element, and its offset (the combined totals of
the blocks before it) is the exclusive scan of the block totals, computed
the same way, recursively.  The error grows with the block size and the
number of levels, not with the length; the order depends only on the shape,
never on the thread count.
"""
import numpy as np

SCAN_BLOCK = 256
LOGE2 = 0.693147180559945309417232121458176568

ORDERED = ("cumsum", "cumprod", "cumlogsumexp")


def accumulator_dtype(dtype):
  """Double for real floats, complex128 for complex ones."""
  dtype = np.dtype(dtype)
  if np.issubdtype(dtype, np.complexfloating):
    return np.dtype(np.complex128)
  return np.dtype(np.float64)


def logaddexp(a, b):
  """log(exp(a) + exp(b)) as the C helper pj_logaddexp computes it."""
  with np.errstate(all="ignore"):
    d = a - b
    out = np.where(d > 0, a + np.log1p(np.exp(-d)), b + np.log1p(np.exp(d)))
    out = np.where(np.isnan(d), d, out)
    return np.where(a == b, a + LOGE2, out)


def _fold_accumulate(combine, x, axis):
  """The running ``combine`` along ``axis``, one element after another."""
  x = np.moveaxis(x, axis, 0)
  out = np.empty_like(x)
  run = out[0] = x[0]
  for i in range(1, x.shape[0]):
    run = out[i] = combine(run, x[i])
  return np.moveaxis(out, 0, axis)


def _logaddexp_accumulate(x, axis):
  return _fold_accumulate(logaddexp, x, axis)


def _multiply(a, b):
  """a * b; complex by the plain formula with separate roundings (the C
  code's pj_cmul: NumPy's vector loops may fuse them)."""
  if not np.iscomplexobj(a) and not np.iscomplexobj(b):
    return np.multiply(a, b)
  a, b = np.asarray(a), np.asarray(b)
  ar, ai, br, bi = a.real, a.imag, b.real, b.imag
  out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))
  out.real = ar * br - ai * bi
  out.imag = ar * bi + ai * br
  return out


def _multiply_accumulate(x, axis):
  if not np.iscomplexobj(x):
    return np.multiply.accumulate(x, axis=axis)
  return _fold_accumulate(_multiply, x, axis)


_COMBINE = {"cumsum": (np.add, lambda x, axis: np.add.accumulate(x, axis=axis), -0.0),
            "cumprod": (_multiply, _multiply_accumulate, 1.0),
            "cumlogsumexp": (logaddexp, _logaddexp_accumulate, -np.inf)}


def exclusive_scan_sizes(m):
  """The scratch elements the recursive exclusive scan of ``m`` totals uses."""
  total = 0
  while m > SCAN_BLOCK:
    m = -(-m // SCAN_BLOCK)
    total += m
  return total


def _blocks(x, identity):
  """``x`` (axis 0 first) padded with ``identity`` to whole blocks, as
  (blocks, SCAN_BLOCK, ...)."""
  m = x.shape[0]
  g = -(-m // SCAN_BLOCK)
  pad = np.full((g * SCAN_BLOCK - m,) + x.shape[1:], identity, x.dtype)
  return np.concatenate([x, pad]).reshape((g, SCAN_BLOCK) + x.shape[1:])


def _exclusive(t, name):
  """The exclusive scan of ``t`` along axis 0 (the first value the identity)."""
  combine, accumulate, identity = _COMBINE[name]
  m = t.shape[0]
  if m <= SCAN_BLOCK:
    out = np.empty_like(t)
    out[0] = identity
    if m > 1:
      out[1:] = accumulate(t[:-1], 0)
    return out
  r = _blocks(t, identity)
  inclusive = accumulate(r, 1)
  local = np.concatenate([np.full_like(inclusive[:, :1], identity), inclusive[:, :-1]], 1)
  offsets = _exclusive(inclusive[:, -1], name)
  out = combine(offsets[:, None], local)
  out[0] = local[0]
  return out.reshape((-1,) + t.shape[1:])[:m]


def ordered_scan(name, x, axis):
  """The inclusive scan ``name`` of ``x`` along ``axis``, forward, in the
  fixed block order, rounded once to ``x``'s dtype (half floats through
  float32)."""
  combine, accumulate, identity = _COMBINE[name]
  with np.errstate(all="ignore"):
    a = np.moveaxis(np.asarray(x), axis, 0).astype(accumulator_dtype(x.dtype))
    n = a.shape[0]
    if n <= SCAN_BLOCK:
      out = accumulate(a, 0)
    else:
      inclusive = accumulate(_blocks(a, identity), 1)
      offsets = _exclusive(inclusive[:, -1], name)
      out = combine(offsets[:, None], inclusive)
      out[0] = inclusive[0]
      out = out.reshape((-1,) + a.shape[1:])[:n]
    out = np.moveaxis(out, 0, axis)
    if x.dtype.itemsize < 4:   # half floats: through float32, as XLA converts
      out = out.astype(np.float32)
    return out.astype(x.dtype)
