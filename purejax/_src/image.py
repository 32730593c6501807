"""Image resampling (``jax.image``), written with ``purejax.numpy``.

Separable resampling: along each resized axis, output pixel ``j`` samples
the input at ``(j + 0.5) / scale - translation / scale - 0.5``; a kernel
evaluated at the distance to every input pixel gives a (in, out) weight
matrix, normalized per output pixel, and the image is contracted with it.
When downsampling with ``antialias`` the kernel is widened by ``1/scale``
(a low-pass filter).  The arithmetic follows JAX's order of operations so
that results agree to float32 rounding.
"""
import enum
import functools

import numpy as np

from purejax._src.api import jit
from purejax._src.lax.dot import Precision


class ResizeMethod(enum.Enum):
  """Resampling kernels: NEAREST, LINEAR (triangle), LANCZOS3, LANCZOS5,
  CUBIC (Keys, a=-0.5), CUBIC_PYTORCH (a=-0.75 with edge replication when
  not antialiased, as PyTorch/OpenCV) and AREA (pixel-overlap weights; a box
  filter when upsampling)."""
  NEAREST = 0
  LINEAR = 1
  LANCZOS3 = 2
  LANCZOS5 = 3
  CUBIC = 4
  CUBIC_PYTORCH = 5
  AREA = 6

  @staticmethod
  def from_string(s):
    method = _NAMES.get(s)
    if method is None:
      raise ValueError(f'Unknown resize method "{s}"')
    return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# ---------------------------------------------------------------------------
# Kernels of the distance |x| >= 0 (in input pixels)

def _triangle(x):
  from purejax import numpy as jnp
  return jnp.maximum(0, 1 - jnp.abs(x))


def _cubic(a):
  def kernel(x):
    from purejax import numpy as jnp
    if a == -0.5:   # Keys' kernel, written as JAX's (same rounding)
      near = ((1.5 * x - 2.5) * x) * x + 1.
      far = ((-0.5 * x + 2.5) * x - 4.) * x + 2.
    else:
      near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
      far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2., 0., jnp.where(x >= 1., far, near))
  return kernel


def _lanczos(radius):
  def kernel(x):
    from purejax import numpy as jnp
    num = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    safe = jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)
    value = jnp.where(x > 1e-3, jnp.divide(num, safe), 1)   # sinc(0) = 1
    return jnp.where(x > radius, 0., value)
  return kernel


_AREA = "area"
_KERNELS = {   # method -> (radius, kernel)
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


def _weights(in_size, out_size, scale, translation, kernel, antialias, pad):
  """The (in_size, out_size) resampling matrix of one axis.  ``pad`` > 0
  evaluates the kernel ``pad`` pixels beyond each edge and folds that mass
  onto the edge pixels (edge replication)."""
  from purejax import numpy as jnp
  from purejax._src import dtypes
  dtype = dtypes.result_type(scale, translation)
  inv_scale = 1. / scale
  out_pos = jnp.arange(out_size, dtype=dtype)
  centers = (out_pos + 0.5) * inv_scale - translation * inv_scale - 0.5
  if kernel is _AREA:
    # The overlap of output pixel j's footprint [lo_j, lo_j + 1/scale] with
    # input pixel i's [i, i + 1].
    lo = out_pos * inv_scale - translation * inv_scale
    hi = lo + inv_scale
    pix = jnp.arange(in_size, dtype=dtype)
    w = jnp.maximum(0.0, jnp.minimum(hi[None, :], (pix + 1.0)[:, None])
                    - jnp.maximum(lo[None, :], pix[:, None]))
  else:
    width = jnp.maximum(inv_scale, 1.) if antialias else 1.
    pix = jnp.arange(-pad, in_size + pad, dtype=dtype)
    w = kernel(jnp.abs(centers[None, :] - pix[:, None]) / width)
  if pad:
    src = np.clip(np.arange(-pad, in_size + pad), 0, in_size - 1)
    fold = (np.arange(in_size)[:, None] == src[None, :]).astype(np.float32)
    w = jnp.matmul(jnp.asarray(fold, w.dtype), w, precision=Precision.HIGHEST)
  total = jnp.sum(w, axis=0, keepdims=True)
  tiny = 1000. * float(np.finfo(np.float32).eps)
  w = jnp.where(jnp.abs(total) > tiny, jnp.divide(w, jnp.where(total != 0, total, 1)), 0)
  if pad:
    return w
  # Output pixels whose sample point lies outside the image get nothing.
  inside = jnp.logical_and(centers >= -0.5, centers <= in_size - 0.5)
  return jnp.where(inside[None, :], w, 0)


def _apply(x, shape, spatial_dims, scales, translations, method, antialias, precision):
  from purejax import numpy as jnp
  if method == ResizeMethod.CUBIC_PYTORCH and antialias:
    method = ResizeMethod.CUBIC   # PyTorch's antialiased cubic is Keys'
  radius, kernel = _KERNELS[method]
  pad = radius if method == ResizeMethod.CUBIC_PYTORCH else 0
  for i, d in enumerate(spatial_dims):
    d = d % x.ndim
    w = _weights(x.shape[d], shape[d], scales[i], translations[i], kernel, antialias,
                 pad).astype(x.dtype)
    y = jnp.tensordot(x, w, axes=([d], [0]), precision=precision)
    x = jnp.moveaxis(y, -1, d)
  return x


def _as_inexact(x):
  from purejax import numpy as jnp
  from purejax._src import dtypes
  x = jnp.asarray(x)
  if not dtypes.issubdtype(x.dtype, np.inexact):
    x = x.astype(dtypes.result_type(x.dtype, np.float32))
  return x


def _method(method):
  return ResizeMethod.from_string(method) if isinstance(method, str) else method


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=Precision.HIGHEST):
  """Resamples ``image`` to ``shape``: along ``spatial_dims[i]`` an input
  location ``p`` maps to ``p * scale[i] + translation[i]`` (pixel centers
  at half-integers).  ``scale`` and ``translation`` may be traced."""
  from purejax import numpy as jnp
  method = _method(method)
  if method == ResizeMethod.NEAREST:
    raise ValueError("Nearest neighbor resampling is not currently supported for "
                     "scale_and_translate.")
  image = _as_inexact(image)
  shape = tuple(shape)
  if len(shape) != image.ndim:
    raise ValueError("shape must have length equal to the number of dimensions of x; "
                     f" {shape} vs {image.shape}")
  spatial_dims = tuple(spatial_dims)
  if not spatial_dims:
    return image
  scale, translation = jnp.asarray(scale), jnp.asarray(translation)
  common = jnp.result_type(scale, translation)
  if not jnp.issubdtype(common, np.inexact):
    common = jnp.result_type(common, np.float32)
  scale, translation = scale.astype(common), translation.astype(common)
  return _apply(image, shape, spatial_dims, [scale[i] for i in range(len(spatial_dims))],
                [translation[i] for i in range(len(spatial_dims))], method, antialias,
                precision)


def _resize_nearest(x, shape):
  from purejax import numpy as jnp
  for d, (m, n) in enumerate(zip(x.shape, shape)):
    if m == n:
      continue
    # In float32 as JAX computes it (float64 here would round differently).
    pos = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
    index = np.floor(pos.astype(np.float32)).astype(np.int32)
    x = jnp.take(x, jnp.asarray(index), axis=d)
  return x


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
  if len(shape) != image.ndim:
    raise ValueError("shape must have length equal to the number of dimensions of x; "
                     f" {shape} vs {image.shape}")
  method = _method(method)
  if method == ResizeMethod.NEAREST:
    return _resize_nearest(image, shape)
  image = _as_inexact(image)
  dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
  scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
  return _apply(image, shape, dims, scales, [0.] * len(dims), method, antialias, precision)


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
  """``image`` resampled to ``shape`` with ``method`` (a ``ResizeMethod`` or
  its name: nearest, linear/bilinear/trilinear, cubic/bicubic/tricubic,
  lanczos3, lanczos5, cubic-pytorch, area).  Every axis whose size changes
  is resized; with ``antialias`` downsampling low-pass filters first."""
  return _resize(image, tuple(shape), method, antialias, precision)
