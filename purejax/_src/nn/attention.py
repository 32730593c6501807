"""Attention and scaled matrix products of ``purejax.nn``.

``dot_product_attention`` is JAX's ``implementation='xla'`` path: einsums
for the logits and the weighted values, masks applied as a large negative
number, softmax in float32.  Grouped-query attention (fewer key/value heads
than query heads) is a vmap over the group axis.
"""
import dataclasses
import functools
import warnings

import numpy as np

from purejax import lax
from purejax import numpy as jnp
from purejax._src import dtypes
from purejax._src.vmap import vmap
from purejax._src.nn.functions import logsumexp, softmax

__all__ = ["BlockScaleConfig", "dot_product_attention", "get_scaled_dot_general_config",
           "scaled_dot_general", "scaled_matmul"]


def _large_negative(dtype):
  # 0.7 of the largest finite value: masked logits stay finite after a bias.
  big = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
  return jnp.asarray(-0.7 * big, dtype=dtype)


def _causal_mask(t, s):
  return jnp.tril(jnp.ones((t, s), dtype=bool))[None, None, :, :]


def _window_mask(t, s, local_window_size):
  query_pos = jnp.arange(t)
  key_pos = jnp.arange(s)
  left, right = local_window_size
  left_mask = query_pos[..., None] <= key_pos[..., None, :] + left
  right_mask = query_pos[..., None] >= key_pos[..., None, :] - right
  return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _padding_mask_logits(t, s, q_seqlen, kv_seqlen):
  q_mask = kv_mask = True
  if q_seqlen is not None:
    q_mask = jnp.arange(0, t)[None, :, None] < q_seqlen[:, None, None]
  if kv_seqlen is not None:
    kv_mask = jnp.arange(0, s)[None, None, :] < kv_seqlen[:, None, None]
  return jnp.logical_and(q_mask, kv_mask)[:, None, :, :]


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
  if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
      and local_window_size is None):
    return logits
  combined = jnp.ones_like(logits, dtype=bool)
  if mask is not None:
    combined = jnp.logical_and(combined, mask)
  t, s = logits.shape[2], logits.shape[3]
  if is_causal:
    combined = jnp.logical_and(combined, _causal_mask(t, s))
  if local_window_size is not None:
    combined = jnp.logical_and(combined, _window_mask(t, s, local_window_size))
  if q_seqlen is not None or kv_seqlen is not None:
    combined = jnp.logical_and(combined, _padding_mask_logits(t, s, q_seqlen, kv_seqlen))
  return jnp.where(combined, logits, _large_negative(logits.dtype))


def _attention_core(query, key, value, bias, mask, q_seqlen, kv_seqlen, *, is_causal,
                    scale, local_window_size, return_residual):
  logits_dtype = jnp.promote_types(query.dtype, np.float32)
  logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
  logits *= jnp.array(scale, dtype=logits.dtype)
  if bias is not None:
    logits = (logits + bias).astype(logits.dtype)
  padded = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size)
  padded = padded.astype(np.float32)
  probs = softmax(padded, axis=-1).astype(key.dtype)
  encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
  if q_seqlen is not None:
    # Padded query rows give zeros, not an average of the values.
    q_mask = jnp.arange(0, encoded.shape[1])[None, :] < q_seqlen[:, None]
    encoded *= q_mask[:, :, None, None].astype(encoded.dtype)
  if return_residual:
    lse = logsumexp(padded, axis=-1).astype(key.dtype)
    return encoded, lax.stop_gradient(jnp.transpose(lse, (0, 2, 1)))
  return encoded


def _attention_xla(query, key, value, bias, mask, q_seqlen, kv_seqlen, **static):
  b, t, n, h = query.shape
  _, s, k, _ = key.shape
  g = n // k
  query = jnp.reshape(query, (b, t, k, g, h))

  def grouped(x):
    if x is None:
      return None
    xb, xn, xt, xs = x.shape
    if xn == 1:
      return jnp.broadcast_to(x[:, :, None, :, :], (xb, xn, g, xt, xs))
    return jnp.reshape(x, (xb, k, g, xt, xs))

  core = functools.partial(_attention_core, **static)
  out = vmap(core, in_axes=(3, None, None, 2, 2, None, None), out_axes=3)(
      query, key, value, grouped(bias), grouped(mask), q_seqlen, kv_seqlen)
  if static["return_residual"]:
    encoded, lse = out
    return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(lse, (b, t, n))
  return jnp.reshape(out, (b, t, n, h))


def _check(x, shape, dtype, name):
  if x is None:
    return
  if x.ndim != len(shape):
    raise ValueError(f"{name} ndim should be {len(shape)}, but got {x.ndim}")
  if dtype is not None and x.dtype != dtype:
    raise ValueError(f"{name} dtype should be {dtype}, but got {x.dtype}")
  if any(want != -1 and got != want for got, want in zip(x.shape, shape)):
    raise ValueError(f"{name} shape should be {list(shape)}: but got {x.shape}")


def _as_4d(x):
  x = jnp.asarray(x)
  missing = 4 - x.ndim
  return jnp.expand_dims(x, tuple(range(missing))) if missing > 0 else x


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
  """Scaled dot-product attention, ``softmax(Q K^T * scale + bias) V`` per head.

  Shapes: query ``(B, T, N, H)``, key and value ``(B, S, K, H)`` (or
  without the batch axis), with N a multiple of K.  Only the ``'xla'``
  implementation exists here; ``'cudnn'`` raises a ValueError.
  """
  output_shape = jnp.asarray(query).shape
  residual_shape = output_shape[:-1]
  query, key, value = _as_4d(query), _as_4d(key), _as_4d(value)
  bias = None if bias is None else _as_4d(bias)
  mask = None if mask is None else _as_4d(mask)
  if query_seq_lengths is not None:
    query_seq_lengths = jnp.asarray(query_seq_lengths)
  if key_value_seq_lengths is not None:
    key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
  if isinstance(local_window_size, int):
    local_window_size = (local_window_size, local_window_size)

  b, s, k, h = key.shape
  _check(value, [b, s, k, h], key.dtype, "value")
  _check(query, [b, -1, -1, h], key.dtype, "query")
  _check(mask, [-1] * 4, np.dtype(bool), "mask")
  _check(bias, [-1] * 4, None, "bias")
  _check(query_seq_lengths, [b], np.dtype("int32"), "query_seq_lengths")
  _check(key_value_seq_lengths, [b], np.dtype("int32"), "key_value_seq_lengths")
  if query.shape[-2] % k != 0:
    raise ValueError("The number of query heads must be a multiple of key/value heads, "
                     f"but got {query.shape[-2]} vs {k}")
  scale = (1.0 / np.sqrt(h)) if scale is None else scale
  if implementation == "cudnn":
    raise ValueError("dot_product_attention: implementation='cudnn' needs a cuDNN GPU; "
                     "purejax has only implementation='xla' (or None).")
  if implementation not in (None, "xla"):
    raise ValueError(f"Unsupported implementation option: {implementation}")
  out = _attention_xla(query, key, value, bias, mask, query_seq_lengths,
                       key_value_seq_lengths, is_causal=is_causal, scale=scale,
                       local_window_size=local_window_size,
                       return_residual=return_residual)
  if return_residual:
    out, residual = out
    return jnp.reshape(out, output_shape), jnp.reshape(residual, residual_shape)
  return jnp.reshape(out, output_shape)


# ---------------------------------------------------------------------------
# Block-scaled matrix products

def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
  """Block-scaled batched matmul: ``(B, M, K) x (B, N, K) -> (B, M, N)``.

  Each operand is multiplied by its scales repeated over blocks of K.
  Differs from JAX: JAX runs this only through cuDNN on GPUs; here it is
  the reference formula (repeat the scales, multiply, einsum), on any device.
  """
  a, b, a_scales, b_scales = (jnp.asarray(v) for v in (lhs, rhs, lhs_scales, rhs_scales))
  if not all(v.ndim == 3 for v in (a, b, a_scales, b_scales)):
    raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
  (batch_a, m, k_a), (batch_b, n, k_b) = a.shape, b.shape
  if k_a != k_b or batch_a != batch_b:
    raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                     f"and contract (K) dimensions, but got shapes {a.shape} and {b.shape}")
  (sb_a, sm, sk_a), (sb_b, sn, sk_b) = a_scales.shape, b_scales.shape
  if sk_a != sk_b or sb_a != sb_b:
    raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                     f"contract (K) dimensions, but got shapes {a_scales.shape} and "
                     f"{b_scales.shape}")
  if sm != m or sn != n:
    raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                     f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                     f"{a_scales.shape}, b_scales: {b_scales.shape}")
  out_dtype = dtypes.canonicalize_dtype(preferred_element_type)
  a_full = a.astype(np.float32) * jnp.repeat(a_scales.astype(np.float32), k_a // sk_a, axis=-1)
  b_full = b.astype(np.float32) * jnp.repeat(b_scales.astype(np.float32), k_b // sk_b, axis=-1)
  return jnp.einsum("BMK,BNK->BMN", a_full, b_full,
                    preferred_element_type=np.float32).astype(out_dtype)


@dataclasses.dataclass
class BlockScaleConfig:
  """How ``scaled_dot_general`` would quantize an operand (JAX's fields)."""
  mode: str
  block_size: int
  data_type: object
  scale_type: object
  global_scale: object
  infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None):
  """The BlockScaleConfig JAX uses for ``'nvfp4'`` or ``'mxfp8'``."""
  if mode == "nvfp4":
    one = jnp.ones((1,), dtype=np.float32)
    return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=dtypes.float4_e2m1fn,
                            scale_type=dtypes.float8_e4m3fn,
                            global_scale=one if global_scale is None else global_scale,
                            infer_only=False)
  if mode == "mxfp8":
    return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=dtypes.float8_e4m3fn,
                            scale_type=dtypes.float8_e8m0fnu, global_scale=None,
                            infer_only=False)
  raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
  """``lax.dot_general`` when ``configs`` is None (as in JAX).

  Differs from JAX: quantizing ``configs`` (JAX's cuDNN path) raise a
  ValueError.
  """
  if implementation is not None:
    warnings.warn("Backend selector, now ignored. The system chooses the backend "
                  "automatically.", DeprecationWarning, stacklevel=2)
  if configs is not None:
    raise ValueError("scaled_dot_general with quantization configs needs cuDNN block "
                     "scaling, which purejax does not have; pass configs=None.")
  return lax.dot_general(lhs, rhs, dimension_numbers,
                         preferred_element_type=preferred_element_type)
