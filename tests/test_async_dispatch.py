"""Asynchronous dispatch: large jitted computations run on a worker thread
and return Arrays whose values are pending until read."""
import os
import threading

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax import lax


def _gated(event):
  """A jitted loop whose first iteration waits for ``event`` (a loop makes
  it large enough to be dispatched asynchronously)."""
  def wait(v):
    assert event.wait(30)
    return v

  def body(i, a):
    return jax.pure_callback(wait, jax.ShapeDtypeStruct(a.shape, a.dtype), a) * 2.0
  return jax.jit(lambda x: lax.fori_loop(0, 3, body, x))


def test_a_large_call_returns_before_its_value_is_computed():
  event = threading.Event()
  f = _gated(event)
  out = f(jnp.ones((2, 3)))
  assert not out.is_ready()
  assert out.shape == (2, 3) and out.dtype == jnp.float32   # known without waiting
  event.set()
  assert out.block_until_ready() is out and out.is_ready()
  np.testing.assert_array_equal(np.asarray(out), np.full((2, 3), 8.0, np.float32))


def test_reading_a_pending_value_waits_and_chains_keep_program_order():
  event = threading.Event()
  f = _gated(event)
  a = f(jnp.ones(4))
  b = f(a)                 # dispatched with a pending input
  assert not a.is_ready() and not b.is_ready()
  event.set()
  c = a + 1.0              # an eager op waits for a
  np.testing.assert_array_equal(np.asarray(c), np.full(4, 9.0, np.float32))
  np.testing.assert_array_equal(np.asarray(jax.block_until_ready(b)), np.full(4, 64.0))
  assert float(b[0]) == 64.0 and str(a) == "[8. 8. 8. 8.]"


def test_errors_surface_at_the_first_wait():
  def boom(v):
    raise ValueError("from the callback")

  f = jax.jit(lambda x: lax.fori_loop(
      0, 2, lambda i, a: jax.pure_callback(boom, jax.ShapeDtypeStruct(a.shape, a.dtype), a), x))
  out = f(jnp.ones(3))
  # As in JAX, a callback's error arrives as a JaxRuntimeError naming it.
  with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: from the callback"):
    out.block_until_ready()
  with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: from the callback"):
    np.asarray(out)


def test_a_call_that_prints_runs_in_step_with_the_caller(capfd):
  """A loop would be dispatched asynchronously, but one holding debug.print
  runs before its call returns: the caller's prints follow its prints."""
  def body(i, a):
    jax.debug.print("step {}", i)
    return a * 2.0
  f = jax.jit(lambda x: lax.fori_loop(0, 3, body, x))
  out = f(jnp.ones(4))
  print("after")
  assert out.is_ready()
  assert capfd.readouterr().out.split() == ["step", "0", "step", "1", "step", "2", "after"]


def test_small_calls_run_synchronously():
  out = jax.jit(lambda x: x * 2.0 + 1.0)(jnp.ones(8))
  assert out.is_ready()
  assert type(out._v) is np.ndarray


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_worker():
  import os
  f = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, a: a * 2.0, x))
  f(jnp.ones(2)).block_until_ready()   # the parent's worker exists
  pid = os.fork()
  if pid == 0:   # the child: a dispatch must complete, not hang
    ok = float(f(jnp.ones(2))[0]) == 8.0
    os._exit(0 if ok else 1)
  _, status = os.waitpid(pid, 0)
  assert os.WEXITSTATUS(status) == 0


def test_the_block_until_ready_function_waits_for_a_lone_array_and_trees():
  event = threading.Event()
  f = _gated(event)
  out, tree = f(jnp.ones(2)), {"a": [f(jnp.ones(3))]}
  threading.Timer(0.2, event.set).start()
  assert jax.block_until_ready(out) is out and out.is_ready()
  assert jax.block_until_ready(tree) is tree and tree["a"][0].is_ready()


def test_large_results_on_the_dispatch_thread_reuse_memory():
  """Jitted calls run on the dispatch thread; with malloc tuning (the
  default) their large buffers come from reused memory, not fresh pages
  (a thread's own glibc arena would mmap anything over 64 MB every call)."""
  from purejax._src.backends import malloc_tuning
  if not malloc_tuning.is_glibc():
    pytest.skip("malloc tuning is for glibc")
  import subprocess
  import sys
  import textwrap
  code = textwrap.dedent("""
      import resource
      import numpy as np
      import purejax as jax, purejax.numpy as jnp
      f = jax.jit(lambda x: jax.nn.softmax(x, 0))   # a 96 MB result, a 96 MB temporary
      x = jnp.ones((6144, 4096), jnp.float32)
      for _ in range(3):
        jax.block_until_ready(f(x))
      before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
      for _ in range(4):
        jax.block_until_ready(f(x))
      print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) // 4)
  """)
  env = dict(os.environ, PUREJAX_MALLOC_TUNING="1")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=600, cwd=os.path.dirname(os.path.dirname(__file__)))
  assert out.returncode == 0, out.stderr
  faults_per_call = int(out.stdout.split()[-1])
  assert faults_per_call < 96 * 256 // 4, faults_per_call   # 96 MB is 24576 pages


def test_a_callback_may_call_large_jitted_functions_and_wait():
  """A callback runs on the worker: a computation it dispatches runs at
  once (queued behind the running one, it would wait for it forever)."""
  inner = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, a: a * 2.0, x))

  def callback(v):
    jax.effects_barrier()
    return np.asarray(inner(v))

  f = jax.jit(lambda x: lax.fori_loop(0, 2, lambda i, a: jax.pure_callback(
      callback, jax.ShapeDtypeStruct(a.shape, a.dtype), a), x))
  done = []
  thread = threading.Thread(target=lambda: done.append(np.asarray(f(jnp.ones(3)))), daemon=True)
  thread.start()
  thread.join(60)
  assert done, "the call did not finish"
  np.testing.assert_array_equal(done[0], np.full(3, 64.0, np.float32))
