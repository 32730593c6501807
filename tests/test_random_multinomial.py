"""purejax.random.multinomial: JAX's signature and bits, and its statistics."""
import numpy as np
import pytest

import purejax
from purejax import random
from purejax._src.config import config
from tests.conftest import oracle

CASES = [
    # (n, p, shape)
    (10, [0.2, 0.3, 0.5], None),
    (10, [0.2, 0.3, 0.5], (4, 3)),
    (1000, [0.1, 0.0, 0.6, 0.3], (2, 4)),          # large counts: BTRS path; a zero p
    ([5, 100], [[0.1, 0.9], [0.5, 0.5]], None),      # per-row n
    (7.0, [1.0, 3.0], (3, 2)),                       # unnormalized p
    (0, [0.5, 0.5], None),
]


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_bits_match_jax(case, partitionable):
  jax = oracle()
  n, p, shape = CASES[case]
  n, p = np.asarray(n), np.asarray(p, np.float32)
  with config.override("jax_threefry_partitionable", partitionable):
    ours = random.multinomial(random.key(42), n, p, shape=shape)
  with jax.threefry_partitionable(partitionable):
    theirs = jax.random.multinomial(jax.random.key(42), n, p, shape=shape)
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
  np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_raw_key_dtype_and_errors_as_jax():
  jax = oracle()
  p = np.array([0.2, 0.8], np.float32)
  ours = random.multinomial(random.PRNGKey(7), 9, p, dtype=np.int32)
  theirs = jax.random.multinomial(jax.random.PRNGKey(7), 9, p, dtype=np.int32)
  assert ours.dtype == theirs.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
  with pytest.raises(TypeError, match="multinomial requires ndarray or scalar arguments"):
    random.multinomial(random.key(0), 10, [0.2, 0.8])
  with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
    random.multinomial(random.key(0), 10, p, shape=(4,))


def test_counts_sum_to_n_and_mean_matches_numpy():
  p = np.array([0.1, 0.2, 0.3, 0.4])
  counts = np.asarray(random.multinomial(random.key(1), 50, p, shape=(4000, 4)))
  np.testing.assert_array_equal(counts.sum(-1), np.full(4000, 50.0))
  ref = np.random.default_rng(0).multinomial(50, p, size=4000)
  # means agree with numpy's sampler within a few standard errors
  se = np.sqrt(50 * p * (1 - p) / 4000)
  np.testing.assert_array_less(np.abs(counts.mean(0) - 50 * p), 5 * se)
  np.testing.assert_array_less(np.abs(ref.mean(0) - 50 * p), 5 * se)


def test_jit_and_vmap():
  p = np.array([0.25, 0.25, 0.5], np.float32)
  keys = random.split(random.key(3), 4)
  eager = np.stack([np.asarray(random.multinomial(k, 20, p)) for k in keys])
  jitted = purejax.jit(lambda k: random.multinomial(k, 20, p))
  np.testing.assert_array_equal(np.asarray(jitted(keys[2])), eager[2])
  batched = purejax.vmap(lambda k: random.multinomial(k, 20, p))(keys)
  np.testing.assert_array_equal(np.asarray(batched), eager)
