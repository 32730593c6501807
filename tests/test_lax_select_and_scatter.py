"""lax.select_and_scatter_p (the general SelectAndScatter) against
select_and_scatter_add_p and against JAX's primitive (other select and
scatter computations, padding, overlapping windows)."""
import numpy as np
import pytest

import purejax
from purejax import lax

from conftest import oracle

RNG = np.random.RandomState(0)
CASES = [((2, 2), (2, 2), ((0, 0), (0, 0))), ((3, 2), (1, 1), ((1, 1), (0, 1))),
         ((2, 3), (1, 2), ((0, 0), (1, 0)))]


def _bind(operand, select, window_dimensions, window_strides, padding, source, init, scatter):
  scalar = operand.reshape(-1)[0]
  select_jaxpr = purejax.make_jaxpr(select)(scalar, scalar)
  scatter_jaxpr = purejax.make_jaxpr(scatter)(source.reshape(-1)[0], source.reshape(-1)[0])
  return lax.select_and_scatter_p.bind(
      operand, source, np.asarray(init, source.dtype), select_jaxpr=select_jaxpr.jaxpr,
      select_consts=tuple(select_jaxpr.consts), scatter_jaxpr=scatter_jaxpr.jaxpr,
      scatter_consts=tuple(scatter_jaxpr.consts), window_dimensions=window_dimensions,
      window_strides=window_strides, padding=padding)


def _source_shape(x, wd, ws, pad):
  return lax.reduce_window_shape_tuple(x.shape, wd, ws, pad, (1, 1), (1, 1))


@pytest.mark.parametrize("wd,ws,pad", CASES)
def test_matches_select_and_scatter_add(wd, ws, pad, x64):
  x = RNG.randn(5, 6)
  src = RNG.randn(*_source_shape(x, wd, ws, pad))
  want = lax.select_and_scatter_add_p.bind(src, x, select_prim=lax.ge_p,
                                           window_dimensions=wd, window_strides=ws,
                                           padding=pad)
  np.testing.assert_allclose(_bind(x, lax.ge, wd, ws, pad, src, 0.0, lax.add), want,
                             rtol=1e-14)


@pytest.mark.parametrize("wd,ws,pad", CASES)
def test_against_jax(wd, ws, pad):
  jax = oracle()
  from jax._src.lax import windowed_reductions as jwr
  x = RNG.randn(5, 6).astype(np.float32)
  src = RNG.randn(*_source_shape(x, wd, ws, pad)).astype(np.float32)
  for select, jselect in ((lax.ge, jax.lax.ge), (lax.lt, jax.lax.lt)):
    for scatter, jscatter, init in ((lax.add, jax.lax.add, 0.0), (lax.mul, jax.lax.mul, 1.0),
                                    (lax.max, jax.lax.max, -5.0)):
      theirs = jwr._select_and_scatter(jax.numpy.asarray(x), jselect, wd, ws, pad,
                                       jax.numpy.asarray(src), np.float32(init), jscatter)
      np.testing.assert_allclose(_bind(x, select, wd, ws, pad, src, init, scatter), theirs,
                                 rtol=1e-6, atol=1e-6)


def test_shape_error():
  x = np.ones((4, 4), np.float32)
  with pytest.raises(TypeError, match="source shape"):
    _bind(x, lax.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), np.ones((3, 3), np.float32), 0.0,
          lax.add)
