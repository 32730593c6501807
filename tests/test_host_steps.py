"""Host steps (equations the C backend leaves to NumPy between its compiled
kernels) are named by ``stages.host_steps``, by the first line of
``jit(f).lower(x).compile().as_text()`` and by PUREJAX_DEBUG=2; no benchmark
workload should have one.  One call into an optimized library (LAPACK) is
not a host step: it is listed apart, as a library call."""
import os
import sys

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src import api, stages
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = "/* purejax host steps (NumPy between compiled kernels): "


@pytest.fixture(autouse=True)
def cpu():
  if not toolchain.compiler_available():
    pytest.skip("no C compiler")
  with config.override("purejax_backend", "cpu"), \
       config.override("purejax_compile_sync", True):
    yield


def _x(n=64):
  return jnp.asarray(np.linspace(-2.0, 2.0, n, dtype=np.float32))


def _host_sort(x):
  # A callback always runs in Python: a host step however much C grows.
  out = jax.ShapeDtypeStruct(x.shape, x.dtype)
  return jax.pure_callback(lambda v: np.sort(v), out, x)


def test_a_callback_between_kernels_is_named():
  f = lambda x: _host_sort(jnp.sin(x) * 3.0) + 1.0
  compiled = jax.jit(f).lower(_x()).compile()
  assert stages.host_steps(compiled) == ["pure_callback"]
  first, rest = compiled.as_text().split("\n", 1)
  assert first == HEADER + "pure_callback */"
  assert "sinf(" in rest
  np.testing.assert_allclose(compiled(_x()), np.sort(np.sin(_x()) * 3.0) + 1.0, rtol=1e-6)


def test_elementwise_function_has_none():
  compiled = jax.jit(lambda x: jnp.tanh(x) * 2.0 + jnp.exp(-x)).lower(_x()).compile()
  assert stages.host_steps(compiled) == []
  assert compiled.as_text().startswith(HEADER + "none */\n")


def test_steps_in_the_body_of_host_control_flow_are_named():
  # The callback keeps the scan's body from compiling completely, so the scan
  # runs in Python and compiles its body on its own.
  def f(xs):
    def body(c, x):
      return c + _host_sort(x * 2.0).sum(), jnp.cos(x)
    return jax.lax.scan(body, 0.0, xs)

  xs = _x().reshape(8, 8)
  names = stages.host_steps(jax.jit(f).lower(xs).compile())
  assert names == ["scan", "scan body: pure_callback"]
  # lax.cond's branches are (false, true).
  g = lambda x: jax.lax.cond(x[0] > 0, lambda v: v + 1.0, lambda v: _host_sort(v) * 2.0, x)
  assert stages.host_steps(jax.jit(g).lower(_x()).compile()) == [
      "cond", "cond branch0: pure_callback"]
  h = lambda x: jax.lax.while_loop(lambda v: v[0] < 10.0, lambda v: _host_sort(v) + 1.0, x)
  assert stages.host_steps(jax.jit(h).lower(_x()).compile()) == [
      "while", "while body: pure_callback"]


def test_numpy_views_of_outputs_are_not_host_steps():
  # The transposed output is a view NumPy makes after the kernel: the plan
  # has a host step for it, which computes nothing.
  f = lambda x: (jnp.sin(x.reshape(8, 8)) * 2.0).T
  compiled = jax.jit(f).lower(_x()).compile()
  plan = stages.finished_executable(compiled._traced.executable()).plan
  assert "host: transpose" in plan.describe()
  assert stages.host_steps(compiled) == []
  np.testing.assert_allclose(compiled(_x()), (np.sin(_x().reshape(8, 8)) * 2).T, rtol=1e-6)


def test_compiled_loops_have_none():
  def f(xs):
    return jax.lax.scan(lambda c, x: (jnp.tanh(c + x), c * x), jnp.zeros(8), xs)

  xs = _x().reshape(8, 8)
  assert stages.host_steps(jax.jit(f).lower(xs).compile()) == []


def test_repeats_are_counted_in_the_comment():
  f = lambda x: _host_sort(_host_sort(x) * 2.0) - 1.0
  first = jax.jit(f).lower(_x()).compile().as_text().split("\n", 1)[0]
  assert first == HEADER + "pure_callback (x2) */"


def test_debug_2_prints_the_same_line(capsys):
  f = lambda x: _host_sort(jnp.cos(x) * 17.0) + 2.0
  with config.override("purejax_debug", 2):
    jax.jit(f)(_x())
  err = capsys.readouterr().err
  compiled = jax.jit(f).lower(_x()).compile()
  line = compiled.as_text().split("\n", 1)[0]
  assert line == HEADER + "pure_callback */" and line in err.splitlines()


# -- every benchmark workload --------------------------------------------------------------

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import workloads  # noqa: E402

# Workloads with a host step today, and the primitive it is: each test turns
# into an unexpected pass (a failure) once that primitive compiles.  None left.
HOST_STEPS_TODAY = {}


def _workload_params():
  params = []
  for w in workloads.WORKLOADS:
    reason = HOST_STEPS_TODAY.get(w.name)
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError,
                               reason=f"host step: {reason}")] if reason else []
    params.append(pytest.param(w, id=w.name, marks=marks))
  return params


@pytest.mark.parametrize("workload", _workload_params())
def test_workload_has_no_host_step(workload, monkeypatch):
  traced = []
  real = api._Traced.executable

  def recording(self):
    if all(t is not self for t in traced):
      traced.append(self)
    return real(self)

  monkeypatch.setattr(api._Traced, "executable", recording)
  workload.make(jax, jnp, workload.data(True))()
  if not traced:
    pytest.skip("jits nothing (eager dispatch)")
  found = [stages.host_steps(stages.Compiled(t)) for t in traced]
  assert not any(found), found


@pytest.mark.parametrize("f, want", [
    (lambda a, b: jnp.linalg.solve(a, b), ["lu (LAPACK getrf)", "triangular_solve (BLAS trsm)"]),
    (lambda a, b: jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)) @ b, ["cholesky (LAPACK potrf)"]),
    (lambda a, b: jnp.linalg.eigh(a + a.T)[0], ["eigh (LAPACK syevd)"]),
])
def test_library_calls_are_listed_apart(f, want):
  a = jnp.asarray(np.eye(4, dtype=np.float32) * 3 + 0.1)
  b = jnp.ones((4, 2), jnp.float32)
  compiled = jax.jit(f).lower(a, b).compile()
  assert stages.host_steps(compiled) == []
  calls = stages.host_steps(compiled, library_calls=True)
  assert all(w in calls for w in want), calls
  first = compiled.as_text().splitlines()[0]
  assert first.startswith(HEADER + "none; library calls: ") and want[0] in first, first
