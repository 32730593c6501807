"""Asynchronous dispatch on a GPU: a jitted computation that waits for the
host (a callback, a while loop's or a cond's predicate) runs on the
dispatch worker, so the call returns at once with Arrays on the GPU whose
values are pending, as JAX's calls return before their callbacks run.
Computations without such waits need no worker: their kernel launches
return at once."""
import threading

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.async_dispatch import Pending
from purejax._src.backends.cuda import gpu_runtime
from purejax._src.config import config
from tests.fake_cupy import FakeCupy
from tests.test_async_dispatch import _gated
from tests.test_gpu_devices import fake, gpu, needs_cc  # noqa: F401,F811  (fixtures)

pytestmark = needs_cc


def test_a_call_with_a_callback_returns_before_it_runs(gpu):
  event = threading.Event()
  x = jax.device_put(np.ones((2, 3), np.float32), jax.devices()[1])
  out = _gated(event)(x)
  assert not out.is_ready()
  assert out.shape == (2, 3) and out.dtype == jnp.float32   # known without waiting
  assert out.device == jax.devices()[1] and out.committed
  event.set()
  assert out.block_until_ready() is out and out.is_ready()
  assert gpu_runtime.is_buffer(out._v)   # still on the GPU
  np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 8.0, np.float32))


def test_pending_inputs_chain_in_program_order(gpu):
  event = threading.Event()
  f = _gated(event)
  a = f(jax.device_put(np.ones(4, np.float32), jax.devices()[0]))
  b = f(a)                 # dispatched with a pending input, without waiting
  assert not a.is_ready() and not b.is_ready()
  assert b.device == jax.devices()[0]
  event.set()
  c = a + 1.0              # an eager operation waits for a
  assert c.device == jax.devices()[0]
  np.testing.assert_array_equal(np.asarray(c), np.full(4, 9.0, np.float32))
  np.testing.assert_array_equal(np.asarray(b), np.full(4, 64.0, np.float32))


def test_uncommitted_pending_results_are_on_the_default_gpu(fake):
  event = threading.Event()
  with config.override("jax_platforms", "cuda,cpu"):
    out = _gated(event)(np.ones(3, np.float32))
    assert not out.is_ready() and out.device == jax.devices()[0] and not out.committed
    event.set()
    on_cpu = jax.device_put(out, jax.devices("cpu")[0])   # waits, then moves
  np.testing.assert_array_equal(np.asarray(on_cpu), np.full(3, 8.0, np.float32))
  assert on_cpu.device == jax.devices("cpu")[0]


def test_errors_surface_at_the_first_wait(gpu):
  def boom(v):
    raise ValueError("from the callback")

  f = jax.jit(lambda x: jax.pure_callback(boom, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1)
  out = f(jax.device_put(np.ones(3, np.float32), jax.devices()[0]))
  with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: from the callback"):
    out.block_until_ready()
  with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: from the callback"):
    np.asarray(out)


def test_loops_and_conds_run_on_the_worker_and_give_the_cpus_values(gpu):
  def f(x):
    w = lax.while_loop(lambda v: v[0] < 5, lambda v: (v[0] + 1, v[1] * 1.5 + 1), (0, x))
    return lax.cond(w[1].sum() > 0, lambda v: v * 2, lambda v: v - 1, w[1])

  a = np.linspace(-1, 1, 7, dtype=np.float32)
  with config.override("jax_platforms", "cpu"):
    want = jax.jit(f)(a)
  got = jax.jit(f)(jax.device_put(a, jax.devices()[0]))
  assert type(got._v) is Pending   # dispatched to the worker
  jax.effects_barrier()   # the worker has finished ...
  if isinstance(gpu, FakeCupy):   # ... and waited for its stream
    assert gpu.stream_waits == 1
  assert got.is_ready() and gpu_runtime.is_buffer(got._value)
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_donated_arrays_of_a_deferred_call(gpu):
  event = threading.Event()
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  f = jax.jit(lambda x: lax.fori_loop(0, 1, lambda i, a: jax.pure_callback(
      lambda v: (event.wait(10), v)[1], jax.ShapeDtypeStruct(a.shape, a.dtype), a) + 1, x),
      donate_argnums=0)
  out = f(x)
  assert x.is_deleted() and not out.is_ready()
  event.set()
  np.testing.assert_array_equal(np.asarray(out), np.full(3, 2.0, np.float32))


def test_under_debug_nans_calls_are_synchronous(fake):
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  f = jax.jit(lambda x: lax.while_loop(lambda v: v.sum() < 10, lambda v: v * 2, x))
  with config.override("jax_debug_nans", True):
    out = f(x)
    assert out.is_ready() and gpu_runtime.is_buffer(out._v)
  np.testing.assert_array_equal(np.asarray(out), np.full(3, 4.0, np.float32))


def test_calls_without_host_waits_and_eager_callbacks_are_not_deferred(fake):
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  out = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x))(x)   # a scan
  assert gpu_runtime.is_buffer(out._v)
  calls = []
  jax.pure_callback(lambda v: calls.append(1) or v, jax.ShapeDtypeStruct((3,), jnp.float32), x)
  assert calls == [1]


def test_debug_prints_stay_in_step_with_the_caller(fake, capsys):
  x = jax.device_put(np.ones(2, np.float32), jax.devices()[0])
  f = jax.jit(lambda x: lax.while_loop(
      lambda v: v.sum() < 5, lambda v: (jax.debug.print("v={}", v), v * 2)[1], x))
  out = f(x)
  print("after")
  assert capsys.readouterr().out == "v=[1. 1.]\nv=[2. 2.]\nafter\n"
  np.testing.assert_array_equal(np.asarray(out), [4.0, 4.0])


def test_a_callback_may_call_deferred_jitted_functions(gpu):
  inner = jax.jit(lambda x: lax.while_loop(lambda v: v.sum() < 20, lambda v: v * 2.0, x))
  f = jax.jit(lambda x: lax.cond(x.sum() > 0, lambda v: jax.pure_callback(
      lambda a: np.asarray(inner(a)), jax.ShapeDtypeStruct(v.shape, v.dtype), v),
      lambda v: v, x))
  done = []
  x = jax.device_put(np.ones(3, np.float32), jax.devices()[0])
  thread = threading.Thread(target=lambda: done.append(np.asarray(f(x))), daemon=True)
  thread.start()
  thread.join(60)
  assert done, "the call did not finish"
  np.testing.assert_array_equal(done[0], np.full(3, 8.0, np.float32))


def test_a_function_also_called_on_the_cpu_takes_a_pending_gpu_value_without_waiting(gpu):
  event = threading.Event()

  def wait(v):
    assert event.wait(10)
    return v

  f = jax.jit(lambda x: jax.pure_callback(wait, jax.ShapeDtypeStruct(x.shape, x.dtype), x) * 2)
  with config.override("jax_platforms", "cpu,cuda"):   # the CPU first, a GPU present
    event.set()
    for _ in range(2):   # (the second call makes the CPU's fast-path entry)
      np.testing.assert_array_equal(np.asarray(f(jnp.ones(2, np.float32))), [2.0, 2.0])
    event.clear()
    a = f(jax.device_put(np.ones(2, np.float32), jax.devices("cuda")[0]))
    b = f(a)   # the fast path meets a pending GPU value: dispatched, not waited for
    assert not b.is_ready() and b.device == jax.devices("cuda")[0]
    event.set()
    np.testing.assert_array_equal(np.asarray(b), [4.0, 4.0])
