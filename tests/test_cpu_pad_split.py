"""``pad`` and ``split`` compile (their C expansions into concatenations,
slices and broadcasts), with the NumPy impl's values, on every padding."""
import itertools

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import stages
from purejax._src.config import config

RNG = np.random.default_rng(5)

CONFIGS = [((1, 2, 0), (0, 0, 0)), ((-1, 2, 1), (0, 0, 2)), ((-3, -2, 1), (2, -3, 0)),
           ((0, 0, 0), (-1, -1, 1)), ((2, -4, 3), (1, 1, 1)), ((-3, 0, 0), (0, -3, 0))]


def _reference(x, value, config):
  """pad as its definition: x's elements at lo + i * (interior + 1) of a
  buffer of fills, edges cut where negative."""
  out_shape = [lo + hi + n + max(n - 1, 0) * interior for n, (lo, hi, interior)
               in zip(x.shape, config)]
  out = np.full(out_shape, value, x.dtype)
  for idx in itertools.product(*map(range, x.shape)):
    pos = [lo + i * (interior + 1) for i, (lo, _, interior) in zip(idx, config)]
    if all(0 <= p < n for p, n in zip(pos, out_shape)):
      out[tuple(pos)] = x[idx]
  return out


@pytest.mark.parametrize("config_", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_compiles_with_the_definitions_values(config_, dtype):
  x = (RNG.standard_normal((4, 5)) * 10).astype(dtype)
  f = lambda x: lax.pad(x * 2, dtype(-7), config_) + 1
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(x).compile()
    got = np.asarray(compiled(x))
  assert stages.host_steps(compiled) == []
  np.testing.assert_array_equal(got, _reference(x * 2, dtype(-7), config_) + 1)


def test_gradient_of_slices_in_a_scan_compiles():
  # The backward pass of slicing is pad: inside a scan body it must compile,
  # or the whole scan loops in Python.
  def loss(w, xs):
    def cell(h, x):
      z = jnp.tanh(h @ w + x)
      return z[:4] * z[4:], None
    h, _ = lax.scan(cell, jnp.ones(4, jnp.float32), xs)
    return h.sum()
  w = RNG.standard_normal((4, 8)).astype(np.float32) * 0.3
  xs = RNG.standard_normal((6, 8)).astype(np.float32)
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(jax.grad(loss)).lower(w, xs).compile()
    got = np.asarray(compiled(w, xs))
  assert stages.host_steps(compiled) == []
  eps, want = 1e-3, np.zeros_like(w, np.float64)
  for i, j in itertools.product(range(4), range(8)):
    d = np.zeros_like(w)
    d[i, j] = eps
    want[i, j] = (float(loss(w + d, xs)) - float(loss(w - d, xs))) / (2 * eps)
  np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-3)


def test_split_compiles():
  x = RNG.standard_normal((3, 7, 2)).astype(np.float32)
  f = lambda x: [p * 2 for p in jnp.split(x, [1, 3, 4], axis=1)]
  with config.override("purejax_compile_sync", True):
    compiled = jax.jit(f).lower(x).compile()
    got = compiled(x)
  assert stages.host_steps(compiled) == []
  for g, w in zip(got, np.split(x * 2, [1, 3, 4], axis=1)):
    np.testing.assert_array_equal(np.asarray(g), w)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, jnp.bfloat16])
def test_stack_unstack_and_tile_compile(dtype):
  x = (RNG.standard_normal((3, 4)) * 5).astype(np.float32).astype(dtype)
  fs = {"stack0": lambda x: jnp.stack([x, x * 2, x + 1]),
        "stack2": lambda x: jnp.stack([x, x * 2], axis=2),
        "unstack": lambda x: [p * 2 for p in jnp.unstack(x, axis=1)],
        "tile": lambda x: jnp.tile(x * 2, (2, 3)),
        "tile3": lambda x: jnp.tile(x, (2, 1, 2))}
  for name, f in fs.items():
    with config.override("purejax_compile_sync", True):
      compiled = jax.jit(f).lower(x).compile()
      got = compiled(x)
    assert stages.host_steps(compiled) == [], name
    with config.override("purejax_backend", "numpy"):
      want = jax.jit(f)(x)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
      assert np.asarray(g).dtype == np.asarray(w).dtype
      np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=name)
