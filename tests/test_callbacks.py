"""purejax.pure_callback and purejax.experimental.io_callback: eagerly, under
jit (both backends; host steps of the C backend), vmap (each vmap_method)
and autodiff (refused, as in JAX; custom_jvp works)."""
import re

import numpy as np
import pytest

import purejax
from purejax._src.array import ArrayImpl
import purejax.numpy as jnp
from purejax import lax
from purejax._src import pjit
from purejax._src.backends.cpu import toolchain
from purejax._src.config import config
from purejax.experimental import io_callback

S = purejax.ShapeDtypeStruct
BACKENDS = ["numpy", "cpu"]


@pytest.fixture(params=BACKENDS)
def backend(request):
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


def _double_and_sum(x, scale=1.0):
  assert type(x) is ArrayImpl   # callbacks get Arrays, as JAX's get jax.Arrays
  x = np.asarray(x)
  return {"d": x * 2 * np.asarray(scale), "s": np.sum(x, dtype=np.int32)}


def _pc(x, scale=1.0):
  out_type = {"d": S(x.shape, x.dtype), "s": S((), np.int32)}
  return purejax.pure_callback(_double_and_sum, out_type, x, scale=scale)


# -- pure_callback ---------------------------------------------------------------------

def test_pure_callback_eager_pytrees_kwargs():
  out = _pc(jnp.arange(3.0), scale=2.0)
  np.testing.assert_array_equal(out["d"], [0.0, 4.0, 8.0])
  assert out["d"].dtype == np.float32 and out["s"].dtype == np.int32 and int(out["s"]) == 3


def test_pure_callback_jit(backend):
  calls = []

  def cb(x):
    calls.append(1)
    return np.sin(np.asarray(x))

  f = purejax.jit(lambda x: jnp.cos(purejax.pure_callback(cb, S(x.shape, x.dtype), x * 2)) + 1)
  for i in range(3):
    x = jnp.arange(4.0) + i
    np.testing.assert_allclose(f(x), np.cos(np.sin(np.asarray(x) * 2)) + 1, rtol=1e-6)
  assert len(calls) == 3


@pytest.mark.skipif(not toolchain.compiler_available(), reason="no C compiler")
def test_callbacks_are_host_steps_of_the_c_backend():
  def f(x):
    y = purejax.pure_callback(lambda v: np.asarray(v) + 1, S(x.shape, x.dtype), jnp.exp(x))
    purejax.debug.print("{}", y)
    return io_callback(lambda v: v, S(x.shape, x.dtype), y * 2) - 1
  x = jnp.arange(3.0)
  with config.override("purejax_backend", "cpu"), config.override("purejax_compile_sync", True):
    out = purejax.jit(f)(x)
    exe = pjit.executable_for(purejax.jit(f).trace(x).jaxpr)
  np.testing.assert_allclose(out, (np.exp(np.arange(3.0)) + 1) * 2 - 1, rtol=1e-6)
  assert hasattr(exe, "source")
  hosts = {s.eqn.primitive.name for s in exe.plan.steps if type(s).__name__ == "HostStep"}
  assert {"pure_callback", "debug_print", "io_callback"} <= hosts


@pytest.mark.parametrize("result, match", [
    (np.zeros(4, np.float32), "shape"),
    (np.zeros(3, np.int32), "dtype"),
    ((np.zeros(3, np.float32),) * 2, "returned 2 arrays"),
])
def test_pure_callback_bad_results(result, match):
  with pytest.raises(RuntimeError, match=match):
    purejax.pure_callback(lambda x: result, S((3,), np.float32), jnp.ones(3))


def test_pure_callback_result_canonicalized_and_x64_refused():
  out = purejax.pure_callback(lambda x: np.zeros(3, np.float64), S((3,), np.float32), 1.0)
  assert out.dtype == np.float32
  with pytest.raises(ValueError, match="64-bit"):
    purejax.pure_callback(lambda x: x, S((3,), np.float64), jnp.ones(3))
  with pytest.raises(ValueError, match="vmap_method must be"):
    purejax.pure_callback(lambda x: x, S((), np.float32), 1.0, vmap_method="foo")


def _vmapped(method, seen):
  def cb(x, y):
    seen.append((np.shape(x), np.shape(y)))
    return np.asarray(x) + np.asarray(y)

  def fun(x, y):
    return purejax.pure_callback(cb, S((), np.float32), x, y, vmap_method=method)
  return purejax.vmap(fun, in_axes=(0, None))


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [((), ())] * 3),
    ("sequential_unrolled", [((), ())] * 3),
    ("expand_dims", [((3,), (1,))]),
    ("broadcast_all", [((3,), (3,))]),
    ("legacy_vectorized", [((3,), ())]),
])
def test_vmap_methods(method, shapes):
  seen = []
  out = _vmapped(method, seen)(jnp.arange(3.0), 1.0)
  np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])
  assert out.shape == (3,) and out.dtype == np.float32 and seen == shapes
  seen.clear()
  np.testing.assert_array_equal(purejax.jit(_vmapped(method, seen))(jnp.arange(3.0), 1.0),
                                [1.0, 2.0, 3.0])
  assert seen == shapes


def test_vmap_method_none_refused_and_nested():
  with pytest.raises(NotImplementedError, match="vmap_method"):
    purejax.vmap(lambda a: purejax.pure_callback(lambda b: b, S((), np.float32), a))(
        jnp.arange(3.0))
  f = lambda a: purejax.pure_callback(lambda b: np.asarray(b) * 2, S((), np.int32), a,
                                      vmap_method="expand_dims")
  out = purejax.vmap(purejax.vmap(f))(jnp.arange(4).reshape(2, 2))
  np.testing.assert_array_equal(out, [[0, 2], [4, 6]])


@pytest.mark.parametrize("method", ["sequential", "expand_dims"])
def test_vmap_jaxpr_matches_jax(method):
  jax = pytest.importorskip("jax")

  def cb(x, y):
    return x + y

  def make(mod):
    def fun(x, y):
      return mod.pure_callback(cb, mod.ShapeDtypeStruct((), np.float32), x, y,
                               vmap_method=method)
    return mod.vmap(fun, in_axes=(0, None))

  norm = lambda s: re.sub(r" at 0x[0-9a-fA-FX]+", "", s)
  ours = norm(str(purejax.make_jaxpr(make(purejax))(jnp.arange(3.0), 1.0)))
  theirs = norm(str(jax.make_jaxpr(make(jax))(jax.numpy.arange(3.0), 1.0)))
  assert ours == theirs


def test_pure_callback_not_differentiable():
  f = lambda x: purejax.pure_callback(lambda v: v, S((), np.float32), x)
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
    purejax.grad(f)(1.0)
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
    purejax.jvp(f, (1.0,), (1.0,))


def test_pure_callback_with_custom_jvp():
  @purejax.custom_jvp
  def sin(x):
    x = jnp.asarray(x)
    return purejax.pure_callback(lambda v: np.sin(np.asarray(v)), S(x.shape, x.dtype), x,
                                 vmap_method="expand_dims")

  sin.defjvp(lambda p, t: (sin(p[0]), jnp.cos(p[0]) * t[0]))
  np.testing.assert_allclose(purejax.grad(sin)(0.5), np.cos(0.5), rtol=1e-6)
  np.testing.assert_allclose(purejax.jit(purejax.vmap(purejax.grad(sin)))(jnp.arange(3.0)),
                             np.cos(np.arange(3.0)), rtol=1e-6)


# -- io_callback ----------------------------------------------------------------------

def test_io_callback_every_call_even_unused(backend):
  log = []

  def record(x):
    log.append(float(x))
    return np.asarray(x) * 3

  @purejax.jit
  def f(x):
    io_callback(record, S((), np.float32), x, ordered=True)   # result unused
    y = io_callback(record, S((), np.float32), x + 1)
    return y * 2

  for i in range(3):
    assert float(f(jnp.float32(i))) == (i + 1) * 6
  assert log == [0.0, 1.0, 1.0, 2.0, 2.0, 3.0]


def test_io_callback_in_loop_and_vmap():
  log = []

  def record(x):
    log.append(int(x))
    return x

  n = lax.fori_loop(0, 3, lambda i, c: c + io_callback(record, S((), np.int32), i), 0)
  assert int(n) == 3 and log == [0, 1, 2]
  log.clear()
  out = purejax.vmap(lambda a: io_callback(record, S((), np.int32), a))(jnp.arange(3))
  np.testing.assert_array_equal(out, [0, 1, 2])
  assert log == [0, 1, 2]
  with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
    purejax.vmap(lambda a: io_callback(record, S((), np.int32), a, ordered=True))(
        jnp.arange(3))


def test_io_callback_not_differentiable():
  f = lambda x: io_callback(lambda v: v, S((), np.float32), x)
  with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
    purejax.grad(f)(1.0)


def test_jaxpr_params_match_jax():
  jax = pytest.importorskip("jax")
  import jax.experimental  # noqa: F401

  def cb(x):
    return x

  def make(mod, io):
    def f(x):
      return (mod.pure_callback(cb, mod.ShapeDtypeStruct((3,), np.float32), x),
              io(cb, mod.ShapeDtypeStruct((3,), np.float32), x, ordered=True))
    return f

  norm = lambda s: re.sub(r" at 0x[0-9a-fA-FX]+", "", s)
  ours = norm(str(purejax.make_jaxpr(make(purejax, io_callback))(jnp.ones(3))))
  theirs = norm(str(jax.make_jaxpr(make(jax, jax.experimental.io_callback))(
      jax.numpy.ones(3))))
  assert ours == theirs


def test_unused_pure_callback_is_not_called_under_jit(backend):
  # JAX drops effect-free equations whose results nothing uses before
  # running a jit; make_jaxpr still shows them.
  calls = []

  def cb(x):
    calls.append(1)
    return np.asarray(x) * 2

  def f(x):
    purejax.pure_callback(cb, S((), jnp.float32), x)
    io_callback(lambda x: calls.append("io") or np.float32(0), S((), jnp.float32), x)
    purejax.debug.callback(lambda x: calls.append("debug"), x)
    y = purejax.jit(lambda x: purejax.pure_callback(cb, S((), jnp.float32), x))(x)
    del y
    return x + 1

  assert float(purejax.jit(f)(1.0)) == 2.0
  assert calls == ["io", "debug"]
  text = str(purejax.make_jaxpr(f)(1.0))
  assert text.count("pure_callback[") == 2 and "_:f32[] = pure_callback[" in text
  calls.clear()
  assert float(f(1.0)) == 2.0   # eagerly every call runs
  purejax.effects_barrier()   # (on a GPU the inner jitted call's callback runs asynchronously)
  assert calls == [1, "io", "debug", 1]
