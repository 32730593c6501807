"""Two reductions over the same rows in one pass (backends/cpu/row_prologue):
a row-reduction kernel computes an earlier reduction's results row by row
(``var``'s mean, softmax's max), with the same bits as the kernels apart
(and as the NumPy backend, which follows the same reduction order)."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.backends.cpu import fusion
from purejax._src.config import config


def _plan(f, x):
  jaxpr = fusion.inline_calls(jax.make_jaxpr(f)(x).jaxpr)
  return fusion.plan_jaxpr(jaxpr, row_prologues=True), fusion.plan_jaxpr(jaxpr)


def _fused(plan):
  return [g for g in plan.groups if g.prologue is not None]


def _bits(f, x, backend):
  with config.override("purejax_backend", backend), config.override("purejax_compile_sync", True):
    return [np.asarray(r).tobytes() for r in jax.tree_util.tree_leaves(jax.jit(f)(x))]


def _layer_norm(x):
  return (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5)


ROW_PAIRS = {
    "var": lambda x: x.var(-1),
    "std_mean": lambda x: (x.std(-1), x.mean(-1)),
    "softmax": lambda x: jax.nn.softmax(x, axis=-1),
    "logsumexp": lambda x: jax.nn.logsumexp(x, axis=-1),
    "layer_norm": _layer_norm,
    "centred_max": lambda x: (x - x.max(-1, keepdims=True)).sum(-1),
}


@pytest.mark.parametrize("name", list(ROW_PAIRS))
@pytest.mark.parametrize("shape", [(300, 500), (7, 33, 4100)])
def test_row_pairs_share_a_pass_with_the_same_bits(name, shape):
  f = ROW_PAIRS[name]
  x = (np.random.default_rng(len(shape)).standard_normal(shape) * 3 + 1).astype(np.float32)
  fused, apart = _plan(f, x)
  assert _fused(fused) and len(fused.groups) < len(apart.groups)
  assert _bits(f, x, "cpu") == _bits(f, x, "numpy")
  for threads in (1, 3):
    with config.override("purejax_num_threads", threads):
      assert _bits(f, x, "cpu") == _bits(f, x, "numpy")


def test_a_result_read_at_another_row_is_not_fused():
  f = lambda x: (x - x.sum(1)[::-1, None]).sum(1)   # noqa: E731
  x = np.random.default_rng(0).standard_normal((50, 70)).astype(np.float32)
  fused, _ = _plan(f, x)
  assert not _fused(fused)
  np.testing.assert_allclose(jax.jit(f)(x), (x - x.sum(1)[::-1, None]).sum(1), rtol=1e-5,
                             atol=1e-4)


def test_columns_are_not_rows():
  x = np.random.default_rng(1).standard_normal((300, 500)).astype(np.float32)
  fused, _ = _plan(lambda x: x.var(0), x)
  assert not _fused(fused)


def test_inside_a_loop_body():
  def f(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: jax.nn.softmax(c * 1.5, axis=-1), x)
  x = np.random.default_rng(2).standard_normal((64, 300)).astype(np.float32)
  assert _bits(f, x, "cpu") == _bits(f, x, "numpy")
