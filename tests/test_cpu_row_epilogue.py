"""A map over the rows a reduction just reduced, in the same pass
(backends/cpu/row_epilogue): softmax's division, layer norm's scaling run
in the reduction kernel's loop over the rows, reading the row's values
from a row buffer (or recomputing them), with the same bits as the kernels
apart and as the NumPy backend."""
import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src.backends.cpu import codegen, fusion, prelude, row_epilogue
from purejax._src.config import config


def _plan(f, *args):
  jaxpr = fusion.inline_calls(jax.make_jaxpr(f)(*args).jaxpr)
  return fusion.plan_jaxpr(jaxpr, row_prologues=True)


def _with_epilogue(plan):
  return [g for g in plan.groups if g.epilogue is not None]


def _bits(f, args, backend):
  with config.override("purejax_backend", backend), config.override("purejax_compile_sync", True):
    return [np.asarray(r).tobytes() for r in jax.tree_util.tree_leaves(jax.jit(f)(*args))]


def _bits_apart(f, args, monkeypatch):
  """The C backend's bits with the map as a kernel of its own."""
  with monkeypatch.context() as m:
    m.setattr(row_epilogue, "fuse", lambda plan: plan)
    jax.clear_caches()
    bits = _bits(f, args, "cpu")
  jax.clear_caches()
  return bits


def _layer_norm(x, g):
  return (x - x.mean(-1, keepdims=True)) / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5) * g


CASES = {
    "softmax": lambda x, g: jax.nn.softmax(x, axis=-1),
    "log_softmax": lambda x, g: jax.nn.log_softmax(x, axis=-1),
    "layer_norm": _layer_norm,
    "normalize": lambda x, g: x / x.sum(-1, keepdims=True) * g,
    # The row's values read at another element of the row: recomputed.
    "reversed": lambda x, g: (lambda e: e / e.sum(-1, keepdims=True) + e[..., ::-1])(jnp.exp(x)),
    # The exponentials are an output too: still stored.
    "both": lambda x, g: (lambda e: (e, e / e.sum(-1, keepdims=True)))(jnp.exp(x - 2)),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("shape", [(300, 500), (7, 33, 260), (3, 20000)])
def test_maps_over_reduced_rows_join_their_pass_with_the_same_bits(name, shape):
  f = CASES[name]
  rng = np.random.default_rng(len(shape))
  x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
  g = rng.standard_normal(shape[-1]).astype(np.float32)
  assert _with_epilogue(_plan(f, x, g))
  want = _bits(f, (x, g), "numpy")
  for threads in (1, 3):
    with config.override("purejax_num_threads", threads):
      assert _bits(f, (x, g), "cpu") == want


def _kernels(f, x):
  source = jax.jit(f).lower(x).compile().as_text()
  return source.replace(prelude.PRELUDE, "")   # the helpers' definitions


def test_the_row_values_come_from_a_row_buffer_up_to_its_size():
  # The reductions' pass computes exp in its vector loop and in its tail.
  softmax = lambda x: jax.nn.softmax(x, axis=-1)   # noqa: E731
  source = _kernels(softmax, np.zeros((8, 1000), np.float32))
  assert "rw0[1000]" in source and source.count("pj_expf(") == 2
  long_rows = np.zeros((2, row_epilogue.ROW_BUFFER_BYTES // 4 + 1), np.float32)
  source = _kernels(softmax, long_rows)
  assert "rw0" not in source and source.count("pj_expf(") == 3   # recomputed


def test_the_exponentials_are_not_stored_for_the_division():
  x = np.zeros((64, 300), np.float32)
  plan = _plan(lambda x: jax.nn.softmax(x, axis=-1), x)
  (b,) = _with_epilogue(plan)
  kernel = codegen.build_kernel(plan, b, "k")
  assert all(tuple(v.aval.shape) != x.shape for v in kernel.outputs[:-1])
  assert tuple(kernel.outputs[-1].aval.shape) == x.shape


@pytest.mark.parametrize("dtype", [jnp.bfloat16, np.float16, np.float64])
def test_other_float_types(dtype, monkeypatch):
  x = (np.random.default_rng(3).standard_normal((40, 130)) * 2).astype(dtype)
  with config.override("jax_enable_x64", dtype == np.float64):
    f = lambda x: jax.nn.softmax(x, axis=-1)   # noqa: E731
    assert _with_epilogue(_plan(f, x))
    got = _bits(f, (x,), "cpu")
    assert got == _bits_apart(f, (x,), monkeypatch)
  z = x.astype(np.float64)
  want = np.exp(z - z.max(1, keepdims=True))
  want /= want.sum(1, keepdims=True)
  tol = 1e-12 if dtype == np.float64 else 1e-2
  np.testing.assert_allclose(np.frombuffer(got[0], dtype).astype(np.float64).reshape(x.shape),
                             want, rtol=tol, atol=tol)


def test_a_result_read_at_another_row_stays_apart():
  f = lambda x: x / x.sum(1)[::-1, None]   # noqa: E731
  x = np.random.default_rng(0).standard_normal((50, 70)).astype(np.float32)
  assert not _with_epilogue(_plan(f, x))
  np.testing.assert_allclose(jax.jit(f)(x), x / x.sum(1)[::-1, None], rtol=1e-5)


def test_columns_are_not_rows():
  x = np.random.default_rng(1).standard_normal((300, 500)).astype(np.float32)
  assert not _with_epilogue(_plan(lambda x: x / x.sum(0), x))


def test_inside_a_loop_body(monkeypatch):
  def f(x):
    return jax.lax.fori_loop(0, 3, lambda i, c: jax.nn.softmax(c * 1.5, axis=-1), x)
  x = np.random.default_rng(2).standard_normal((64, 300)).astype(np.float32)
  assert _bits(f, (x,), "cpu") == _bits_apart(f, (x,), monkeypatch) == _bits(f, (x,), "numpy")


def test_views_the_epilogue_now_stores_are_read_from_there(x64):
  """A view stored for a larger kernel (``x + 1 / x``, read broadcast by a
  kernel 11 times its size) whose map group becomes an epilogue is read
  from where the epilogue stores it, not recomputed from a value the
  reduction no longer stores (seed 108's big program 4: a KeyError)."""
  x = np.random.default_rng(4).standard_normal((11, 1, 41, 1)).astype(np.float32)

  def f(x):
    r = jnp.reciprocal(x)
    mean = jnp.mean(x, axis=-2)
    t = jnp.arctanh(x)
    c = jnp.cos(t)
    inverse = jnp.reciprocal(mean)
    h = x + r
    return [mean, c, inverse, t * 0.5 + 1, jnp.nextafter(h, jax.lax.rsqrt(inverse))]

  assert _with_epilogue(_plan(f, x))
  with config.override("purejax_compile_sync", True):
    got = jax.jit(f)(x)
    with config.override("purejax_backend", "numpy"):
      want = jax.jit(f)(x)
  for g, w in zip(got, want):   # (the C library's atanh and cos: within an ulp)
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)
