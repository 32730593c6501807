"""Choosing the backend of jit, and tiered compilation (NumPy first, the C
backend's kernels once compiled in the background)."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src import backends
from purejax._src.backends import numpy_backend
from purejax._src.config import config

toolchain = pytest.importorskip("purejax._src.backends.cpu.toolchain")
needs_compiler = pytest.mark.skipif(not toolchain.compiler_available(),
                                    reason="no C compiler")

X = np.linspace(-3, 3, 4096, dtype=np.float32)


def _selu_jaxpr(exp=jnp.exp):
  f = lambda x: 1.05 * jnp.where(x > 0, x, 1.67 * exp(x) - 1.67)
  closed = purejax.make_jaxpr(f)(X)
  assert not closed.jaxpr.constvars
  return closed.jaxpr


def _exact_jaxpr():
  """A jaxpr both tiers compute bit for bit (so it is tiered)."""
  f = lambda x: (1.05 * jnp.where(x > 0, x, x * x - 1.67), jnp.sum(x * 3))
  return purejax.make_jaxpr(f)(X).jaxpr


def test_numpy_backend_is_plain():
  run = backends.compile_jaxpr(_selu_jaxpr(), "numpy")
  assert not isinstance(run, backends._Tiered)
  want = 1.05 * np.where(X > 0, X, 1.67 * np.exp(X) - 1.67)
  np.testing.assert_allclose(run(X)[0], want, rtol=1e-6, atol=1e-6)


@needs_compiler
def test_tiered_compilation_starts_on_numpy_and_switches():
  jaxpr = _exact_jaxpr()
  want = numpy_backend.compile_jaxpr(jaxpr)(X)[0]
  with config.override("purejax_compile_sync", False):
    run = backends.compile_jaxpr(jaxpr, "cpu")
  assert isinstance(run, backends._Tiered)
  np.testing.assert_allclose(run(X)[0], want, rtol=1e-6, atol=1e-6)   # whichever tier ran
  run.wait()
  assert run._compiled is not run._numpy and hasattr(run._compiled, "source")
  np.testing.assert_allclose(run(X)[0], want, rtol=1e-6, atol=1e-6)


@needs_compiler
def test_a_jaxpr_whose_tiers_would_differ_compiles_before_its_first_call():
  with config.override("purejax_compile_sync", False):
    run = backends.compile_jaxpr(_selu_jaxpr(jnp.expm1), "cpu")   # not exact in NumPy
  assert not isinstance(run, backends._Tiered) and hasattr(run, "source")


@needs_compiler
def test_synchronous_compilation_returns_the_kernel():
  with config.override("purejax_compile_sync", True):
    run = backends.compile_jaxpr(_selu_jaxpr(), "cpu")
  assert hasattr(run, "source") and "exp" in run.source


def test_a_failing_background_compile_falls_back_to_numpy(monkeypatch):
  from purejax._src.backends.cpu import executable
  def broken(jaxpr, num_threads=None):
    raise RuntimeError("simulated compiler crash")
  monkeypatch.setattr(executable, "compile_jaxpr", broken)
  monkeypatch.setattr(backends, "_warned", set())
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with config.override("purejax_compile_sync", False):
      run = backends.compile_jaxpr(_exact_jaxpr(), "cpu")
    run.wait()
  assert run._compiled is run._numpy
  assert any("simulated compiler crash" in str(w.message) for w in caught)
  np.testing.assert_allclose(run(X)[0], numpy_backend.compile_jaxpr(_exact_jaxpr())(X)[0])


@needs_compiler
def test_jit_results_agree_across_backends():
  f = lambda x: jnp.tanh(x).sum() + jnp.max(x * 2)
  out = {}
  for backend in ("numpy", "cpu"):
    with config.override("purejax_backend", backend), \
         config.override("purejax_compile_sync", True):
      out[backend] = float(purejax.jit(f)(X))
  assert out["cpu"] == pytest.approx(out["numpy"], rel=1e-5)


@needs_compiler
def test_a_large_jaxpr_compiles_before_its_first_call():
  """Its NumPy tier would take longer than the compiler: no tiering."""
  big = np.zeros(backends._MAX_TIER_ELEMENTS + 1, np.float32)
  with config.override("purejax_compile_sync", False):
    small_run = backends.compile_jaxpr(purejax.make_jaxpr(lambda x: x * 2 + 1)(X).jaxpr, "cpu")
    big_run = backends.compile_jaxpr(purejax.make_jaxpr(lambda x: x * 2 + 1)(big).jaxpr, "cpu")
  assert isinstance(small_run, backends._Tiered)
  assert not isinstance(big_run, backends._Tiered) and hasattr(big_run, "source")
