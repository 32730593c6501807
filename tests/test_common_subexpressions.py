"""Repeated equations are computed once (backends/cpu/common_subexpressions.py)."""
import numpy as np

import purejax as jax
import purejax.numpy as jnp
from purejax._src.backends.cpu import common_subexpressions
from purejax._src.config import config

X = np.random.default_rng(2).standard_normal((37, 53)).astype(np.float32)


def _prims(jaxpr):
  return [e.primitive.name for e in jaxpr.eqns]


def test_sum_mean_max_logsumexp_read_the_input_once_per_axis():
  f = lambda x: (x.sum(0), x.mean(0), x.max(0), jax.nn.logsumexp(x, 0))
  jaxpr = jax.make_jaxpr(f)(X).jaxpr
  from purejax._src.backends.cpu import fusion
  merged = common_subexpressions.eliminate(fusion.inline_calls(jaxpr))
  inlined = fusion.inline_calls(jaxpr)
  assert _prims(merged).count("reduce_sum") < _prims(inlined).count("reduce_sum")
  assert _prims(merged).count("reduce_max") == 1
  with config.override("purejax_compile_sync", True):
    got = jax.jit(f)(X)
  x = X.astype(np.float64)
  m = x.max(0)
  want = (x.sum(0), x.mean(0), m, m + np.log(np.exp(x - m).sum(0)))
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def test_different_parameters_or_operands_are_kept():
  f = lambda x: (x.sum(0), x.sum(1), (x + 1).sum(0), (x + 2).sum(0))
  jaxpr = jax.make_jaxpr(f)(X).jaxpr
  merged = common_subexpressions.eliminate(jaxpr)
  assert _prims(merged) == _prims(jaxpr)


def test_literals_compare_by_value_and_dtype():
  f = lambda x: (x * 2.0, x * 2.0, x * 3.0)
  jaxpr = jax.make_jaxpr(f)(X).jaxpr
  merged = common_subexpressions.eliminate(jaxpr)
  assert _prims(merged).count("mul") == 2
  assert merged.outvars[0] is merged.outvars[1]


def test_effects_are_not_merged():
  def f(x):
    jax.debug.print("{}", x[0, 0])
    jax.debug.print("{}", x[0, 0])
    return x
  jaxpr = jax.make_jaxpr(f)(X).jaxpr
  merged = common_subexpressions.eliminate(jaxpr)
  assert _prims(merged).count("debug_print") == 2
