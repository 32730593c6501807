"""The C backend's native steps: dot_general through BLAS, and scan, while
and cond compiled as C loops and branches (cpu/native.py, cpu/program.py).

Each case runs jitted on the C backend (compiled synchronously) and on the
NumPy backend, and checks that the compiled plan really has the native step
(so a silent fallback to NumPy fails the test).
"""
import os

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.backends.cpu import blas, fusion, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")
RNG = np.random.default_rng(0)


def _native_names(plan):
  names = []
  for step in plan.steps:
    if type(step).__name__ == "NativeStep":
      names.append(step.eqn.primitive.name)
      for inner in step.plans.values():
        names += _native_names(inner)
  return names


def _run_both(f, *args, rtol=2e-6, atol=1e-6):
  with config.override("purejax_backend", "numpy"):
    want = jax.jit(f)(*args)
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    got = jax.jit(f)(*args)
  plan = fusion.plan_jaxpr(jax.make_jaxpr(f)(*args).jaxpr)
  for w, g in zip(jax.tree_util.tree_leaves(want), jax.tree_util.tree_leaves(got)):
    w, g = np.asarray(w), np.asarray(g)
    assert w.dtype == g.dtype and w.shape == g.shape
    if w.dtype.kind == "f":
      np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    else:
      np.testing.assert_array_equal(g, w)
  return plan


def _f32(*shape):
  return jnp.asarray(RNG.normal(size=shape).astype(np.float32))


needs_blas = pytest.mark.skipif(not blas.available(), reason="SciPy's BLAS not available")


@needs_blas
@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", [
    ((5, 7), (7, 3), (([1], [0]), ([], []))),
    ((7, 5), (7, 3), (([0], [0]), ([], []))),
    ((5, 7), (3, 7), (([1], [1]), ([], []))),
    ((7, 5), (3, 7), (([0], [1]), ([], []))),
    ((7,), (7, 3), (([0], [0]), ([], []))),
    ((5, 7), (7,), (([1], [0]), ([], []))),
    ((7,), (7,), (([0], [0]), ([], []))),
    ((2, 5, 7), (2, 7, 3), (([2], [1]), ([0], [0]))),
    ((2, 7, 5), (2, 3, 7), (([1], [2]), ([0], [0]))),
    ((2, 3, 4, 6), (2, 4, 6, 5), (([2, 3], [1, 2]), ([0], [0]))),
])
def test_dot_general_runs_through_blas(lhs_shape, rhs_shape, dims):
  x, y = _f32(*lhs_shape), _f32(*rhs_shape)
  plan = _run_both(lambda a, b: jnp.tanh(lax.dot_general(a, b, dims)) + 1.0, x, y)
  assert "dot_general" in _native_names(plan)


@needs_blas
def test_dot_general_float64_and_other_layouts():
  with config.override("jax_enable_x64", True):
    x = jnp.asarray(RNG.normal(size=(4, 6)))
    y = jnp.asarray(RNG.normal(size=(6, 3)))
    plan = _run_both(lambda a, b: a @ b * 2.0, x, y)
    assert "dot_general" in _native_names(plan)
  # Batch dims not leading: the operands are transposed for BLAS first.
  x, y = _f32(5, 2, 7), _f32(2, 7, 3)
  plan = _run_both(lambda a, b: lax.dot_general(a, b, (([2], [1]), ([1], [0]))), x, y)
  assert "dot_general" in _native_names(plan)
  # Integer products stay on NumPy too.
  i = jnp.arange(12, dtype=jnp.int32).reshape(3, 4)
  _run_both(lambda a: a @ a.T, i)


def test_outer_product_is_fused_elementwise():
  x, y = _f32(6), _f32(5)
  plan = _run_both(lambda a, b: jnp.outer(a, b).T + 1.0, x, y)
  assert not plan.steps or all(type(s).__name__ == "Group" for s in plan.steps)


@needs_blas
def test_rnn_scan_and_its_gradient_compile_completely():
  w, u, b, xs = _f32(8, 8) / 3, _f32(8, 8) / 3, _f32(8), _f32(11, 8)

  def loss(w, u, b, xs):
    def cell(h, x):
      h = jnp.tanh(h @ w + x @ u + b)
      return h, h
    _, hs = lax.scan(cell, jnp.zeros(8), xs)
    return jnp.mean(hs * hs)

  plan = _run_both(jax.value_and_grad(loss, argnums=(0, 1, 2)), w, u, b, xs)
  assert _native_names(plan).count("scan") == 2
  assert plan.complete


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_carries_passthrough_literals_and_ints(reverse):
  xs, ks = _f32(9, 3, 2), jnp.arange(9, dtype=jnp.int32)

  def f(xs, ks):
    def body(carry, inp):
      total, count, const = carry
      x, k = inp
      return (total + x.sum(0), count + k, const), (x * 2.0, k * k, 1.5, const)
    return lax.scan(body, (jnp.zeros(2), jnp.int32(0), jnp.ones(4)), (xs, ks),
                    reverse=reverse)

  plan = _run_both(f, xs, ks)
  assert _native_names(plan) == ["scan"]


def test_while_and_fori_loop():
  def f(x):
    def cond(c):
      i, v = c
      return (i < 20) & (v.sum() < 1e4)

    def body(c):
      i, v = c
      return i + 1, v * 1.5 + 0.25
    i, v = lax.while_loop(cond, body, (jnp.int32(0), x))
    return i, v, lax.fori_loop(0, 7, lambda k, a: a + k * a.mean(), x)

  plan = _run_both(f, _f32(4, 3))
  assert "while" in _native_names(plan)


def test_while_that_never_runs_returns_its_init():
  plan = _run_both(lambda x: lax.while_loop(lambda v: v[0] > 1e9, lambda v: v * 2.0, x),
                   _f32(5))
  assert "while" in _native_names(plan)


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_its_index(index):
  branches = [lambda x: x + 1.0, lambda x: jnp.sin(x), lambda x: x * x]
  plan = _run_both(lambda i, x: lax.switch(i, branches, x), jnp.int32(index), _f32(3, 4))
  assert "cond" in _native_names(plan)


def test_cond_with_scan_inside_while_nested():
  def f(x, flag):
    def inner(v):
      return lax.scan(lambda c, y: (c + y, c * y), jnp.zeros(3), v)[0]

    def body(c):
      i, acc = c
      acc = lax.cond(flag, lambda a: a + inner(x), lambda a: a - 1.0, acc)
      return i + 1, acc
    return lax.while_loop(lambda c: c[0] < 4, body, (jnp.int32(0), jnp.zeros(3)))

  plan = _run_both(f, _f32(6, 3), jnp.bool_(True))
  assert {"while", "cond", "scan"} <= set(_native_names(plan))


def test_body_with_a_host_step_stays_on_numpy():
  # a callback has no C code: the scan runs through its NumPy impl, correctly.
  def f(xs):
    def body(c, x):
      d = jax.pure_callback(lambda v: np.log1p(np.abs(v)), jax.ShapeDtypeStruct(x.shape, x.dtype),
                            x)
      return c + d[0], d[:2]
    return lax.scan(body, 0.0, xs)

  plan = _run_both(f, _f32(5, 4))
  assert "scan" not in _native_names(plan)


@needs_blas
@pytest.mark.parametrize("f,shapes", [
    (lambda a, b: a @ b.T, [(5, 7), (3, 7)]),
    (lambda a, b: a.T @ b, [(7, 5), (7, 3)]),
    (lambda a, b: a.T @ b.T, [(7, 5), (3, 7)]),
    (lambda a, b: a @ jnp.swapaxes(b, 1, 2), [(2, 5, 7), (2, 3, 7)]),
    (lambda a, b: jnp.einsum("ij,kj->ik", a, b), [(4, 6), (5, 6)]),
])
def test_transposed_operands_are_read_in_place_by_blas(f, shapes):
  plan = _run_both(f, *[_f32(*s) for s in shapes])
  assert [type(s).__name__ for s in plan.steps] == ["NativeStep"]


def test_transpose_reordering_free_dims_is_copied_first():
  # The result's dims would come out in another order: not folded, still right.
  a, b = _f32(2, 3, 4), _f32(4, 5)
  _run_both(lambda a, b: lax.dot_general(jnp.transpose(a, (1, 0, 2)), b, (([2], [0]), ([], []))),
            a, b)


@pytest.mark.parametrize("starts,dtype", [
    ((0, 0, 0), jnp.int32), ((1, 2, 3), jnp.int32), ((-4, 9, 1), jnp.int32),
    ((100, -100, 2), jnp.int32), ((1, 7, 4000000000), jnp.uint32), ((3, 1, 0), jnp.int8)])
def test_dynamic_slice_and_update_clamp_their_starts(starts, dtype):
  x, upd = _f32(4, 6, 5), _f32(2, 3, 4)

  def f(x, upd, i, j, k):
    s = lax.dynamic_slice(x, (i, j, k), (2, 3, 4))
    return s * 2.0, lax.dynamic_update_slice(x, upd + 1.0, (i, j, k))

  idx = [jnp.asarray(np.array(i).astype(dtype)) for i in starts]
  plan = _run_both(f, x, upd, *idx)
  assert {"dynamic_slice", "dynamic_update_slice"} <= set(_native_names(plan))


def test_fori_loop_indexing_and_updating_compiles_completely():
  def f(xs):
    def body(i, acc):
      row = xs[i]
      return lax.dynamic_update_slice_in_dim(acc, (row * row + acc[i - 1])[None], i, 0)
    return lax.fori_loop(0, xs.shape[0], body, jnp.zeros_like(xs))

  plan = _run_both(f, _f32(7, 5))
  assert plan.complete and {"dynamic_slice", "dynamic_update_slice"} & set(_native_names(plan))


def test_indexing_gathers_and_at_updates_compile():
  x = _f32(6, 5)
  idx = jnp.asarray(np.array([4, 0, -1, 9, 2], np.int32))

  def f(x, idx):
    return (x[idx] * 2.0, x[:, idx[:3]], x[idx, 1:3], jnp.take(x, idx, axis=0, mode="fill"),
            x.at[idx].set(1.0), x.at[idx].add(x[0]), x.at[idx, 2].mul(3.0),
            x.at[idx].min(0.0), x.at[idx].max(0.5), x.at[idx].add(1.0, mode="clip"),
            x.at[2].set(-1.0))

  plan = _run_both(f, x, idx)
  assert {"gather", "scatter", "scatter-add", "scatter-mul", "scatter-min",
          "scatter-max"} <= set(_native_names(plan))


def test_scatter_integer_wraps_and_repeated_positions_accumulate_in_order():
  x = jnp.asarray(np.array([2**31 - 1, 5, -7, 0], np.int32))
  idx = jnp.asarray(np.array([[0], [0], [3], [3], [7]], np.int32))
  upd = jnp.asarray(np.array([1, 2, 3, 4, 5], np.int32))
  f = lambda x, i, u: (x.at[i[:, 0]].add(u), x.at[i[:, 0]].set(u), x.at[i[:, 0]].mul(u))
  plan = _run_both(f, x, idx, upd)
  assert "scatter-add" in _native_names(plan)
  xf = jnp.asarray(np.array([0.0, -0.0, np.nan, 1.0], np.float32))
  uf = jnp.asarray(np.array([-0.0, 0.0, 1.0, np.nan, 2.0], np.float32))
  _run_both(lambda x, i, u: (x.at[i[:, 0]].min(u), x.at[i[:, 0]].max(u)), xf, idx, uf)


def test_batched_gather_from_vmap_and_the_gradient_of_indexing():
  xs, idx = _f32(3, 6, 4), jnp.asarray(np.array([[1, 5], [0, 0], [3, 2]], np.int32))
  f = jax.vmap(lambda x, i: x[i].sum(0))
  plan = _run_both(f, xs, idx)
  assert "gather" in _native_names(plan)
  g = jax.grad(lambda xs: (f(xs, idx) ** 2).sum())
  plan = _run_both(g, xs)
  assert "scatter-add" in _native_names(plan)


def test_fori_loop_with_at_set_compiles_completely():
  def f(xs):
    def body(i, acc):
      return acc.at[i].set(xs[i] * xs[i] + acc[i - 1])
    return lax.fori_loop(0, xs.shape[0], body, jnp.zeros_like(xs))

  plan = _run_both(f, _f32(7, 5))
  assert plan.complete and "scatter" in _native_names(plan)


def test_concatenate_and_stack_compile():
  a, b, c = _f32(2, 3, 4), _f32(2, 1, 4), _f32(2, 5, 4)
  f = lambda a, b, c: (jnp.concatenate([a, b, c], axis=1) * 2.0,
                       jnp.concatenate([a, a], axis=0), jnp.stack([a[:, 0], c[:, 1]], -1))
  plan = _run_both(f, a, b, c)
  assert "concatenate" in _native_names(plan)


def test_strided_arrays_are_made_dense_once_for_compiled_calls():
  x = jnp.zeros((64, 32))   # an eager broadcast: a strided view
  y = jnp.ones((32, 64)).T
  f = jax.jit(lambda a, b: a + b * 2.0)
  with config.override("purejax_compile_sync", True):
    out = f(x, y)
    out = f(x, y)
  np.testing.assert_array_equal(np.asarray(out), np.full((64, 32), 2.0, np.float32))
  assert x._value.flags.c_contiguous and y._value.flags.c_contiguous
  np.testing.assert_array_equal(np.asarray(y), np.ones((64, 32), np.float32))


@needs_blas
@pytest.mark.parametrize("lhs_shape,rhs_shape,dims,kw", [
    ((2, 9, 9, 3), (3, 3, 3, 4), ("NHWC", "HWIO", "NHWC"), dict(padding="SAME")),
    ((2, 3, 9, 9), (4, 3, 3, 3), ("NCHW", "OIHW", "NCHW"), dict(padding="VALID")),
    ((2, 3, 10, 8), (4, 3, 3, 2), ("NCHW", "OIHW", "NHWC"),
     dict(padding=((2, 1), (0, -1)), window_strides=(2, 1), rhs_dilation=(2, 3))),
    ((3, 11, 5), (3, 5, 6), ("NWC", "WIO", "NCW"), dict(padding=((1, 3),), window_strides=(3,))),
    ((1, 4, 4, 4, 2), (2, 2, 2, 2, 3), ("NDHWC", "DHWIO", "NDHWC"), dict(padding="SAME")),
])
def test_convolutions_run_natively(lhs_shape, rhs_shape, dims, kw):
  x, w = _f32(*lhs_shape), _f32(*rhs_shape)
  strides = kw.pop("window_strides", (1,) * (len(lhs_shape) - 2))
  f = lambda x, w: lax.conv_general_dilated(x, w, strides, dimension_numbers=dims, **kw)
  # Sums of products in another order: rounding-level differences.
  plan = _run_both(lambda x, w: f(x, w) * 2.0, x, w, rtol=1e-5, atol=1e-5)
  assert "conv_general_dilated" in _native_names(plan)
  # Its gradients are convolutions with permuted dimension numbers.
  plan = _run_both(jax.grad(lambda x, w: (f(x, w) ** 2).sum(), argnums=(0, 1)), x, w,
                   rtol=1e-5, atol=1e-4)
  assert "conv_general_dilated" in _native_names(plan)


def test_grouped_and_input_dilated_convolutions_compile():
  x, w = _f32(2, 4, 7, 7), _f32(6, 2, 3, 3)
  plan = _run_both(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                         feature_group_count=2), x, w)
  assert "conv_general_dilated" in _native_names(plan)
  plan = _run_both(lambda x, w: lax.conv_general_dilated(
      x, jnp.concatenate([w[:, :2], w[:, :2]], 1), (1, 1), ((1, 1), (1, 1)),
      lhs_dilation=(2, 2)), x, w)
  assert "conv_general_dilated" in _native_names(plan)


def test_kept_scratch_memory_is_released_with_the_executable(monkeypatch):
  import gc
  import weakref
  from purejax._src.backends.cpu import executable
  made, finalize = [], weakref.finalize

  def recording_finalize(obj, fn, *args):   # (the weakref module is shared: libraries too)
    handle = finalize(obj, fn, *args)
    if fn is executable._drop:
      made.append(handle)
    return handle
  monkeypatch.setattr(executable.weakref, "finalize", recording_finalize)
  closed = jax.make_jaxpr(lambda a, b: jnp.tanh(a @ b) @ b)(_f32(64, 64), _f32(64, 64))
  run = executable.compile_jaxpr(closed.jaxpr)
  assert "pj_release" in run.source and "_arena" in run.source
  x = np.ones((64, 64), np.float32)
  np.testing.assert_allclose(run(x, x)[0], run(x, x)[0])
  assert len(made) == 1 and made[0].alive
  kept = run.kept_blocks
  assert kept() == 1
  del run
  gc.collect()
  assert not made[0].alive and kept() == 0


def test_scratch_memory_of_a_shared_library_outlives_one_executable():
  """Executables of the same source share one library: one collected must
  not free the scratch blocks another is using (or will use)."""
  import gc
  from purejax._src.backends.cpu import executable
  closed = jax.make_jaxpr(lambda a, b: jnp.tanh(a @ b) @ b)(_f32(64, 64), _f32(64, 64))
  first, second = (executable.compile_jaxpr(closed.jaxpr) for _ in range(2))
  x = np.ones((64, 64), np.float32)
  want = np.array(first(x, x)[0])
  second(x, x)
  kept = second.kept_blocks
  assert kept() == 1
  del first
  gc.collect()
  assert kept() == 1
  np.testing.assert_array_equal(second(x, x)[0], want)
  del second
  gc.collect()
  assert kept() == 0


def test_release_keeps_the_block_of_a_running_call():
  """Releasing the kept blocks (the executable's finalizer) while another
  thread's call uses one must not free it under the running code."""
  import threading
  import time
  from purejax._src.backends.cpu import executable
  closed = jax.make_jaxpr(lambda x: jax.lax.fori_loop(
      0, 400, lambda i, v: jnp.sin(v) * 1.0001 + jnp.tanh(v), x).sum())(_f32(1 << 16))
  run = executable.compile_jaxpr(closed.jaxpr)
  x = np.linspace(-1, 1, 1 << 16, dtype=np.float32)
  want = np.asarray(run(x)[0])
  assert run.kept_blocks() >= 1
  run.release_kept()
  assert run.kept_blocks() == 0
  results = []
  worker = threading.Thread(target=lambda: results.append(np.asarray(run(x)[0])))
  worker.start()
  time.sleep(0.005)
  while worker.is_alive() and run.kept_blocks() == 0:   # the call has taken its block
    time.sleep(0.001)
  running = worker.is_alive()
  run.release_kept()
  worker.join()
  np.testing.assert_array_equal(results[0], want)
  if running:   # (a fast machine may finish first; then there is nothing to check)
    assert run.kept_blocks() >= 1


def test_executables_are_not_released_at_interpreter_exit():
  """A daemon thread (async dispatch) may still run compiled code while the
  interpreter exits: the executable's finalizer must not free its memory."""
  import subprocess
  import sys
  import textwrap
  code = textwrap.dedent("""
      import weakref
      import numpy as np
      import purejax as jax, purejax.numpy as jnp
      from purejax._src.backends.cpu import executable
      closed = jax.make_jaxpr(lambda x: jnp.tanh(x).sum())(np.ones(4, np.float32))
      run = executable.compile_jaxpr(closed.jaxpr)
      print(sorted({info.atexit for f, info in weakref.finalize._registry.items()
                    if info.func is executable._drop}))
  """)
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300, cwd=os.path.dirname(os.path.dirname(__file__)))
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "[False]"
