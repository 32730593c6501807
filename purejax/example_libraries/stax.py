"""stax (as ``jax.example_libraries.stax``): neural networks as pairs of
functions.

A layer is ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` the
outputs (``rng=`` reaches layers that need randomness, like ``Dropout``).
Combinators (``serial``, ``parallel``, ``FanOut``...) build layers from
layers.  Keys are split in JAX's order, so a network initialised from the
same key has JAX's parameters.
"""
import functools
import math

import purejax.numpy as jnp
from purejax import lax, random
from purejax.nn import (
    elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax, softplus,
    standardize)
from purejax.nn.initializers import glorot_normal, normal, ones, zeros

logsoftmax = log_softmax
glorot = glorot_normal
randn = normal


def _params_free(shape_fun, apply):
  """A layer without parameters: ``shape_fun`` maps the input shape."""
  return (lambda rng, input_shape: (shape_fun(input_shape), ()),
          lambda params, inputs, **kwargs: apply(inputs))


# -- layers with parameters -----------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
  """A fully connected layer: ``inputs @ W + b``."""
  def init_fun(rng, input_shape):
    w_key, b_key = random.split(rng)
    params = (W_init(w_key, (input_shape[-1], out_dim)), b_init(b_key, (out_dim,)))
    return input_shape[:-1] + (out_dim,), params

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return jnp.dot(inputs, W) + b
  return init_fun, apply_fun


def _conv_layer(shape_rule, apply_rule, dimension_numbers, out_chan, filter_shape,
                strides, padding, W_init, b_init):
  """A (transposed) convolution with a bias per output channel; the kernel
  layout comes from ``dimension_numbers`` (e.g. ``('NHWC', 'HWIO', 'NHWC')``)."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  strides = strides or (1,) * len(filter_shape)
  W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

  def init_fun(rng, input_shape):
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    kernel_shape = [out_chan if c == "O" else in_chan if c == "I" else next(spatial)
                    for c in rhs_spec]
    out_shape = shape_rule(input_shape, kernel_shape, strides, padding,
                           dimension_numbers)
    bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
    w_key, b_key = random.split(rng)
    return out_shape, (W_init(w_key, kernel_shape), b_init(b_key, bias_shape))

  def apply_fun(params, inputs, **kwargs):
    W, b = params
    return apply_rule(inputs, W, strides, padding, dimension_numbers) + b
  return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None,
                padding="VALID", W_init=None, b_init=normal(1e-6)):
  """A convolution layer with the given dimension numbers."""
  ones_ = (1,) * len(filter_shape)
  return _conv_layer(
      lax.conv_general_shape_tuple,
      lambda x, W, s, p, dn: lax.conv_general_dilated(x, W, s, p, ones_, ones_,
                                                      dimension_numbers=dn),
      dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
  """A transposed-convolution layer with the given dimension numbers."""
  return _conv_layer(
      lax.conv_transpose_shape_tuple,
      lambda x, W, s, p, dn: lax.conv_transpose(x, W, s, p, dimension_numbers=dn),
      dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,
              beta_init=zeros, gamma_init=ones):
  """Normalises over ``axis`` (batch statistics), then scales by gamma and
  shifts by beta (each optional; a disabled one is ``()``)."""
  axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

  def init_fun(rng, input_shape):
    kept = tuple(d for i, d in enumerate(input_shape) if i not in axis)
    beta_key, gamma_key = random.split(rng)
    beta = beta_init(beta_key, kept) if center else ()
    gamma = gamma_init(gamma_key, kept) if scale else ()
    return input_shape, (beta, gamma)

  def apply_fun(params, x, **kwargs):
    beta, gamma = params
    # broadcast the per-feature parameters back over the normalised axes
    expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
    z = standardize(x, axis, epsilon=epsilon)
    if scale:
      z = gamma[expand] * z
    if center:
      z = z + beta[expand]
    return z
  return init_fun, apply_fun


# -- elementwise and shape-only layers -------------------------------------------

def elementwise(fun, **fun_kwargs):
  """A layer applying ``fun(inputs, **fun_kwargs)``."""
  return _params_free(lambda s: s, lambda x: fun(x, **fun_kwargs))


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)

Flatten = _params_free(lambda s: (s[0], math.prod(s[1:])),
                       lambda x: jnp.reshape(x, (x.shape[0], -1)))
Identity = _params_free(lambda s: s, lambda x: x)
FanInSum = _params_free(lambda shapes: shapes[0], sum)


def FanOut(num):
  """One input copied to ``num`` outputs."""
  return _params_free(lambda s: [s] * num, lambda x: [x] * num)


def FanInConcat(axis=-1):
  """Several inputs concatenated along ``axis``."""
  def out_shape(shapes):
    ax = axis % len(shapes[0])
    return shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:]
  return _params_free(out_shape, lambda xs: jnp.concatenate(xs, axis))


def Dropout(rate, mode="train"):
  """Keeps each input with probability ``rate`` (scaled by 1/rate) in
  ``'train'`` mode; the identity otherwise. Needs ``rng=`` when applied."""
  def apply_fun(params, inputs, **kwargs):
    rng = kwargs.get("rng", None)
    if rng is None:
      raise ValueError(
          "Dropout layer requires apply_fun to be called with a PRNG key "
          "argument. That is, instead of `apply_fun(params, inputs)`, call "
          "it like `apply_fun(params, inputs, rng)` where `rng` is a "
          "PRNG key (e.g. from `jax.random.key`).")
    if mode != "train":
      return inputs
    keep = random.bernoulli(rng, rate, inputs.shape)
    return jnp.where(keep, inputs / rate, 0)
  return (lambda rng, input_shape: (input_shape, ())), apply_fun


# -- pooling -----------------------------------------------------------------------

def _window_with_batch_and_channels(window_shape, strides, spec):
  """Window and strides over all axes: 1 on the batch and channel axes."""
  strides = strides or (1,) * len(window_shape)
  skip = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
  window, steps = tuple(window_shape), tuple(strides)
  for i in sorted(skip):
    window, steps = window[:i] + (1,) + window[i:], steps[:i] + (1,) + steps[i:]
  return window, steps


def _pooling(reducer, init_val, average=False):
  def layer(window_shape, strides=None, padding="VALID", spec=None):
    spatial_window, spatial_strides = tuple(window_shape), strides or (1,) * len(window_shape)
    window, steps = _window_with_batch_and_channels(window_shape, strides, spec)

    def init_fun(rng, input_shape):
      pads = lax.padtype_to_pads(input_shape, window, steps, padding)
      unit = (1,) * len(window)
      return lax.reduce_window_shape_tuple(input_shape, window, steps, pads,
                                           unit, unit), ()

    def apply_fun(params, inputs, **kwargs):
      out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
      if not average:
        return out
      # divide by the number of real (unpadded) elements in each window
      skip = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
      spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in skip)
      counts = lax.reduce_window(jnp.ones(spatial, inputs.dtype), 0., lax.add,
                                 spatial_window, spatial_strides, padding)
      for i in sorted(skip):
        counts = jnp.expand_dims(counts, i)
      return out / counts
    return init_fun, apply_fun
  return layer


MaxPool = _pooling(lax.max, -jnp.inf)
SumPool = _pooling(lax.add, 0.)
AvgPool = _pooling(lax.add, 0., average=True)


# -- combinators ---------------------------------------------------------------------

def serial(*layers):
  """Layers applied one after the other."""
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    params = []
    for init in init_funs:
      rng, layer_rng = random.split(rng)
      input_shape, p = init(layer_rng, input_shape)
      params.append(p)
    return input_shape, params

  def apply_fun(params, inputs, **kwargs):
    rngs = _layer_rngs(kwargs, len(layers))
    for fun, p, rng in zip(apply_funs, params, rngs):
      inputs = fun(p, inputs, rng=rng, **kwargs)
    return inputs
  return init_fun, apply_fun


def parallel(*layers):
  """Layers applied side by side, the i-th to the i-th of a sequence of inputs."""
  init_funs, apply_funs = zip(*layers)

  def init_fun(rng, input_shape):
    rngs = random.split(rng, len(layers))
    return zip(*[init(r, s) for init, r, s in zip(init_funs, rngs, input_shape)])

  def apply_fun(params, inputs, **kwargs):
    rngs = _layer_rngs(kwargs, len(layers))
    return [f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
  return init_fun, apply_fun


def _layer_rngs(kwargs, count):
  rng = kwargs.pop("rng", None)
  return random.split(rng, count) if rng is not None else (None,) * count


def shape_dependent(make_layer):
  """A layer built by ``make_layer(input_shape)`` when its shape is known."""
  def init_fun(rng, input_shape):
    return make_layer(input_shape)[0](rng, input_shape)

  def apply_fun(params, inputs, **kwargs):
    return make_layer(inputs.shape)[1](params, inputs, **kwargs)
  return init_fun, apply_fun
