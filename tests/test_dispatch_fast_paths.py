"""The fast paths of eager dispatch and of jit calls agree with the general
paths they short-cut: same values, dtypes, weak types, errors, retracing."""
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src import pjit
from purejax._src import backends
from purejax._src.backends import numpy_backend
from purejax._src.config import config
from purejax._src.interpreters import dispatch


@pytest.fixture
def general_path(monkeypatch):
  """Runs a thunk with the eager fast paths switched off."""
  def run(thunk):
    with monkeypatch.context() as m:
      m.setattr(dispatch, "_eval_trace", object())   # never the current trace
      return thunk()
  return run


def _weak(value, dtype):
  return lax.convert_element_type(value, np.dtype(dtype), True)


def _operands():
  return {
      "f32": jnp.asarray(np.array([1.5, -2.0, 0.0], np.float32)),
      "f32s": jnp.asarray(np.float32(0.75)),
      "f16": jnp.asarray(np.array([1.5, 2.0, 3.0], np.float16)),
      "i32": jnp.asarray(np.array([3, -4, 5], np.int32)),
      "i8": jnp.asarray(np.array([3, -4, 120], np.int8)),
      "u8": jnp.asarray(np.array([3, 4, 250], np.uint8)),
      "b": jnp.asarray(np.array([True, False, True])),
      "wf": _weak(2.5, np.float32),
      "wi": _weak(3, np.int32),
      "f32x2": jnp.asarray(np.ones((2, 3), np.float32)),
      "int": 3, "float": 0.5, "zero": 0.0, "negzero": -0.0, "nan": float("nan"),
  }


_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: a / b, "<": lambda a, b: a < b, "==": lambda a, b: a == b,
    "&": lambda a, b: a & b, "max": jnp.maximum, "atan2": jnp.arctan2,
    "<<": jnp.left_shift,
}


def _outcome(thunk):
  try:
    out = thunk()
  except Exception as e:   # noqa: BLE001  (the error class is part of the outcome)
    return type(e)
  return np.asarray(out), out.dtype, out.weak_type, out.shape


def _same(got, want):
  if isinstance(want, type):
    return got is want
  if isinstance(got, type):
    return False
  return (got[1:] == want[1:] and np.array_equal(got[0], want[0], equal_nan=True)
          and np.array_equal(np.signbit(got[0]), np.signbit(want[0])))


@pytest.mark.parametrize("op", list(_OPS))
def test_eager_binary_fast_path_matches_the_general_path(op, general_path):
  fn, ops = _OPS[op], _operands()
  for a_name, a in ops.items():
    for b_name, b in ops.items():
      if not isinstance(a, purejax.Array) and not isinstance(b, purejax.Array):
        continue
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = general_path(lambda: _outcome(lambda: fn(a, b)))
        for _ in range(2):   # planning, then the cached plan
          got = _outcome(lambda: fn(a, b))
          assert _same(got, want), (a_name, op, b_name, got, want)


@pytest.mark.parametrize("name", ["sin", "tanh", "exp", "sqrt", "negative", "fabs"])
def test_eager_unary_fast_path_matches_the_general_path(name, general_path):
  fn = getattr(jnp, name)
  for x in _operands().values():
    if not isinstance(x, purejax.Array):
      continue
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      want = general_path(lambda: _outcome(lambda: fn(x)))
      for _ in range(2):
        assert _same(_outcome(lambda: fn(x)), want)


def test_scalar_constants_keep_their_sign_and_range_checks():
  x = jnp.asarray(np.float32(2.0))
  for _ in range(2):
    assert not np.signbit(np.asarray(x * 0.0)) and np.signbit(np.asarray(x * -0.0))
    assert np.signbit(np.asarray(x * -0.0)) and not np.signbit(np.asarray(x * 0.0))
  i = jnp.asarray(np.int32(1))
  assert int(i + 5) == 6
  with pytest.raises(OverflowError):
    i + 2 ** 40
  assert int(jnp.asarray(np.int8(3)) + 300) == 47   # wraps, as in JAX


def test_eager_results_are_read_only():
  out = jnp.asarray(np.float32(1)) + jnp.asarray(np.float32(2))
  assert not np.asarray(out).flags.writeable


def test_flag_changes_reach_the_eager_fast_path():
  x = jnp.asarray(np.array([0.0, 1.0], np.float32))
  x / x   # plans the call
  with config.override("jax_debug_nans", True):
    with pytest.raises(FloatingPointError):
      x / x
  a, b = jnp.ones(3), jnp.ones((2, 3))
  a + b
  with config.override("jax_numpy_rank_promotion", "raise"):
    with pytest.raises(ValueError):
      a + b
  w = _weak(2.5, np.float32)
  assert (w + w).dtype == np.float32
  with config.override("jax_enable_x64", True):
    assert (w + w).dtype == np.float64 and (w + w).weak_type


def test_arrays_combined_under_a_trace_are_staged():
  a, b = jnp.ones(3), jnp.ones(3)
  a + b
  text = str(purejax.make_jaxpr(lambda: a + b)())
  assert "add" in text


def test_eager_binary_agrees_with_jax():
  jax = pytest.importorskip("jax")
  cases = [(np.float32(1.5), 2), (np.int8(3), 300), (np.uint8(3), 1.5), (np.float16(1), 1e10)]
  for value, scalar in cases:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      want = jax.numpy.asarray(value) + scalar
      for _ in range(2):
        got = jnp.asarray(value) + scalar
        assert got.dtype == want.dtype and got.weak_type == want.weak_type
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# -- jit calls ------------------------------------------------------------------

def test_jit_fast_path_traces_once_per_signature():
  traces = []

  def f(x, y):
    traces.append(1)
    return {"sum": x + y, "pair": (x * 2.0, y)}

  g = purejax.jit(f)
  x, y = jnp.ones(3), jnp.arange(3.0)
  first = g(x, y)
  for _ in range(3):
    out = g(x, y)
    assert purejax.tree_util.tree_structure(out) == purejax.tree_util.tree_structure(first)
    np.testing.assert_array_equal(out["sum"], first["sum"])
    assert out["pair"][1].dtype == y.dtype
  assert len(traces) == 1
  g(x.astype(np.int32), y)                  # a new dtype traces again
  g(_weak(1.0, np.float32), y)              # so does a new weak type
  g(jnp.ones(4), jnp.ones(4))               # and a new shape
  assert len(traces) == 4
  g.clear_cache()
  g(x, y)
  assert len(traces) == 5


def test_jit_fast_path_with_constants_and_other_arguments():
  c = jnp.arange(3.0)
  g = purejax.jit(lambda x, s: x * c + s)
  x = jnp.ones(3)
  for s in (1.0, jnp.asarray(np.float32(1.0)), np.float32(1.0), 1, True):
    for _ in range(3):
      out = g(x, s)
      assert out.dtype == np.float32 and not out.weak_type
      np.testing.assert_array_equal(out, np.arange(3.0) + 1)


def test_jit_fast_path_with_python_scalars():
  traces = []

  def f(i, s):
    traces.append(1)
    return i * 2, s

  g = purejax.jit(f)
  for k in range(4):
    i, s = g(k, 0.5 * k)
    assert int(i) == 2 * k and float(s) == 0.5 * k
    assert i.dtype == np.int32 and i.weak_type and s.weak_type
  assert len(traces) == 1
  g(True, 1.0)   # a bool is not an int here
  assert len(traces) == 2
  with pytest.raises(OverflowError, match="parsing an argument to a jitted computation, whose "
                                         "argument path is i"):   # JAX's text
    g(2 ** 40, 1.0)
  with config.override("jax_enable_x64", True):
    i, s = g(2 ** 40, 1.0)
    assert int(i) == 2 ** 41 and i.dtype == np.int64 and s.dtype == np.float64


def test_flag_changes_reach_the_jit_fast_path():
  calls = []

  def f(x):
    calls.append(1)
    return x / x

  g = purejax.jit(f)
  x = jnp.asarray(np.array([0.0, 1.0], np.float32))
  g(x), g(x)
  with purejax.disable_jit():
    g(x)
  assert len(calls) == 2   # the second one ran eagerly
  with config.override("jax_debug_nans", True):
    with pytest.raises(FloatingPointError):
      g(x)
  key = (x.aval,)
  with config.override("purejax_compile_sync", True):
    g(x)
    # The jaxpr the call runs (Traced.jaxpr is JAX's form, with constvars).
    assert g._fast[key][1] is pjit.executable_for(g.trace(x)._traced.jaxpr)


def test_jit_fast_path_is_not_used_under_a_trace():
  g = purejax.jit(lambda x: jnp.sin(x) * 2.0)
  x = jnp.ones(3)
  g(x), g(x)
  assert "jit" in str(purejax.make_jaxpr(g)(x))
  np.testing.assert_allclose(purejax.grad(lambda x: g(x).sum())(x), 2 * np.cos(1.0) * np.ones(3),
                             rtol=1e-6)


# -- the NumPy backend --------------------------------------------------------------

def _program(x, y):
  s = jnp.sort(x)
  return s, x, 2.0, jnp.sin(x) * y + 1.0, (x > 0).sum()


def test_generated_numpy_runner_matches_the_interpreter():
  x, y = jnp.asarray(np.array([3.0, -1.0, 2.0], np.float32)), jnp.ones(3)
  jaxpr = purejax.make_jaxpr(_program)(x, y).jaxpr
  run = numpy_backend.compile_jaxpr(jaxpr)
  first = run(x._value, y._value)
  for _ in range(numpy_backend._HOT_CALLS + 1):
    again = run(x._value, y._value)
    assert len(again) == len(first)
    for a, b in zip(again, first):
      assert np.asarray(a).dtype == np.asarray(b).dtype
      np.testing.assert_array_equal(a, b)
  assert "def run(a0, a1)" in numpy_backend._straight_line(jaxpr).source


def test_numpy_backend_is_quiet_about_floating_point_errors():
  g = purejax.jit(lambda x: x / 0.0)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    with config.override("purejax_backend", "numpy"):
      for _ in range(numpy_backend._HOT_CALLS + 1):
        assert np.isinf(np.asarray(g(jnp.ones(2)))).all()


def test_tiered_build_starts_after_a_second_call(monkeypatch):
  built = []

  def fake_compile(jaxpr, num_threads=None):
    built.append(jaxpr)
    return lambda *args: ["compiled"]

  monkeypatch.setattr(backends, "_compile_cpu", fake_compile)
  jaxpr = purejax.make_jaxpr(lambda x: x + 1.0)(jnp.ones(2)).jaxpr
  run = backends._Tiered(jaxpr)
  ones = np.ones(2, np.float32)
  np.testing.assert_array_equal(run(ones)[0], 2 * ones)
  assert run._thread is None and not built        # no build yet
  run(ones)
  run.wait()
  assert len(built) == 1 and run(ones) == ["compiled"]
  early = backends._Tiered(jaxpr)
  early.wait()                                     # wait() starts it
  assert len(built) == 2 and early(ones) == ["compiled"]


def test_floating_point_errors_do_not_warn_but_numpy_still_does():
  x = jnp.array([np.inf, 1.0, 0.0])
  y = jnp.array([0.0, 0.0, 0.0])
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    out = [x * y, jnp.multiply(x, y), x / y, jnp.log(y), lax.mul(x, y),
           purejax.jit(lambda a, b: a * b / b)(x, y), purejax.grad(lambda a: jnp.sum(a * 0.0))(x)]
  assert np.isnan(np.asarray(out[0])[0]) and np.isinf(np.asarray(out[2])[1])
  with pytest.warns(RuntimeWarning):   # the user's own NumPy state is untouched
    np.array([1.0]) / np.array([0.0])


# -- jit calls on a GPU (the stand-in) ----------------------------------------------

@pytest.fixture
def one_fake_gpu():
  from purejax._src.backends.cuda import gpu_runtime
  from tests.fake_cupy import FakeCupy
  gpu_runtime.use(FakeCupy(1))
  try:
    with config.override("jax_platforms", "cpu,cuda"):
      yield purejax.devices("cuda")[0]
  finally:
    gpu_runtime.use("detect")


def test_gpu_calls_seen_before_skip_the_trace_cache(one_fake_gpu, monkeypatch):
  gpu = one_fake_gpu
  f = purejax.jit(lambda a, b: (a * 2 + b, a.sum()))
  a = purejax.device_put(np.arange(4, dtype=np.float32), gpu)
  b = purejax.device_put(np.ones(4, np.float32), gpu)
  first = f(a, b)   # the general path, which records the entry
  traced_calls = []
  real = purejax._src.api.PjitFunction._get_traced
  monkeypatch.setattr(purejax._src.api.PjitFunction, "_get_traced",
                      lambda self, *a, **k: traced_calls.append(1) or real(self, *a, **k))
  second = f(a, b)
  assert traced_calls == []
  for x, y in zip(first, second):
    assert x.device == y.device == gpu
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  # The same avals on the host (the CPU is the default here) run on the CPU.
  on_cpu = f(jnp.arange(4, dtype=np.float32), jnp.ones(4, np.float32))
  assert on_cpu[0].device == purejax.devices("cpu")[0] and traced_calls == [1]
  np.testing.assert_array_equal(np.asarray(on_cpu[0]), np.asarray(first[0]))
  # Its CPU entry meeting GPU Arrays hands them to the GPU entry.
  again = f(a, b)
  assert traced_calls == [1] and again[0].device == gpu
  # ... and under jax_debug_nans every call takes the general path, checked.
  with config.override("jax_debug_nans", True):
    f(a, b)
  assert len(traced_calls) == 2
