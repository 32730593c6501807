"""The C runner of one-kernel executables (backends/cpu/fast_runner.py)
agrees with the Python runner it stands in for: same values and dtypes,
read-only outputs, arguments passed through as given, and the Python
runner's path for inputs the kernel cannot take as they are."""
import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.backends.cpu import executable, fast_runner, toolchain
from purejax._src.config import config

pytestmark = pytest.mark.skipif(not toolchain.compiler_available(),
                                reason="no C compiler")


def _compiled(f, *args):
  jaxpr = purejax.make_jaxpr(f)(*args).jaxpr
  return executable.compile_jaxpr(jaxpr)


def _python_runner(monkeypatch, f, *args):
  with monkeypatch.context() as m:
    m.setattr(fast_runner, "_module", lambda: None)
    return _compiled(f, *args)


def _f(x, y):
  return jnp.tanh(x) * y + 1.0, x, y.sum()


def test_c_runner_matches_python_runner(monkeypatch):
  if fast_runner._module() is None:
    pytest.skip("the extension does not build here")
  x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
  y = np.arange(12, dtype=np.float32).reshape(3, 4)
  fast, slow = _compiled(_f, x, y), _python_runner(monkeypatch, _f, x, y)
  assert type(fast) is not type(slow)
  want = [np.tanh(x.astype(np.float64)) * y + 1.0, x, y.astype(np.float64).sum()]
  for got in (fast(x, y), slow(x, y)):
    assert [np.asarray(v).dtype for v in got] == [np.float32] * 3
    np.testing.assert_allclose(got[0], want[0], rtol=2e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=2e-6)
    assert got[1] is x   # an argument is returned as given
  a, b = fast(x, y), slow(x, y)
  for u, v in zip(a, b):
    assert np.asarray(u).tobytes() == np.asarray(v).tobytes()
  assert not a[0].flags.writeable and not a[2].flags.writeable
  assert x.flags.writeable   # the argument itself is left alone


@pytest.mark.parametrize("kind", ["strided", "float64", "list", "fortran"])
def test_unusual_inputs_take_the_python_path(kind):
  x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
  y = np.arange(12, dtype=np.float32).reshape(3, 4)
  run = _compiled(_f, x, y)
  want = run(x, y)
  arg = {"strided": np.repeat(y, 2, axis=1)[:, ::2], "float64": y.astype(np.float64),
         "list": y.tolist(), "fortran": np.asfortranarray(y)}[kind]
  got = run(x, arg)
  assert got[0].tobytes() == want[0].tobytes() and got[2].tobytes() == want[2].tobytes()
  assert not got[0].flags.writeable


def test_wrong_arity_raises():
  x = np.ones(3, np.float32)
  run = _compiled(lambda a, b: a + b, x, x)
  with pytest.raises(TypeError):
    run(x)


def test_jitted_results_are_read_only_and_exact():
  with config.override("purejax_compile_sync", True):
    f = purejax.jit(lambda x: x * 3.0 + 1.0)
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    for _ in range(3):   # the first call fills the fast path, later ones use it
      out = f(x)
      np.testing.assert_array_equal(np.asarray(out), np.arange(5) * 3.0 + 1.0)
      assert out.dtype == np.float32
      with pytest.raises(ValueError):
        np.asarray(out)[0] = 7.0
      with pytest.raises(TypeError):
        out[0] = 7.0
    # A Python scalar argument, converted on the way in.
    g = purejax.jit(lambda x, s: x * s)
    for _ in range(3):
      out = g(x, 2)
      np.testing.assert_array_equal(np.asarray(out), np.arange(5) * 2.0)
      assert not np.asarray(out).flags.writeable
