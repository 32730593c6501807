"""The smaller top-level names: config states, clear_caches, typeof, float0,
custom_gradient, closure_convert, runtime queries, typing/stages/dlpack/
profiler/version modules."""
import importlib
import importlib.util
import logging

import numpy as np
import pytest

import purejax as jax
import purejax.numpy as jnp
from purejax._src import devices
from purejax._src.config import config


# -- config states ------------------------------------------------------------

def test_state_value_and_context_manager():
  assert jax.log_compiles.value is False
  with jax.log_compiles():   # a boolean flag defaults to True
    assert config.jax_log_compiles and jax.log_compiles.value
  assert not config.jax_log_compiles
  with jax.enable_x64(True):
    assert jax.enable_x64.value


def test_state_decorator():
  @jax.explain_cache_misses(True)
  def f():
    return config.jax_explain_cache_misses
  assert f() is True and config.jax_explain_cache_misses is False


def test_non_bool_state_needs_a_value():
  with pytest.raises(TypeError, match="requires an argument"):
    jax.default_device()
  with jax.default_device(jax.devices()[0]):
    assert jax.default_device.value is jax.devices()[0]
  with jax.default_device("cpu"):
    assert config.jax_default_device == "cpu"
  with pytest.raises(ValueError, match="Device object"):
    config.update("jax_default_device", "cuda")
  with jax.default_device("tpu"):   # accepted, as in JAX; refused where used
    with pytest.raises(RuntimeError, match="tpu"):
      jnp.ones(3)
  if not devices.gpu_list():
    with jax.default_device("gpu"):   # JAX's message where there is no GPU
      with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested, but no "
                         "platforms that are instances of gpu are present"):
        jnp.ones(3)
  with jax.default_prng_impl("threefry2x32"):
    assert jax.default_prng_impl.value == "threefry2x32"


def test_transfer_guard_sets_all_directions():
  with jax.transfer_guard("disallow"):
    for s in (jax.transfer_guard_host_to_device, jax.transfer_guard_device_to_host,
              jax.transfer_guard_device_to_device):
      assert s.value == "disallow"
    assert float(jnp.ones(2).sum()) == 2.0   # recorded only
  assert jax.transfer_guard_host_to_device.value is None
  with pytest.raises(ValueError, match="new enum value"):
    with jax.transfer_guard_host_to_device("bogus"):
      pass


@pytest.mark.parametrize("state,value", [
    ("debug_key_reuse", True), ("enable_custom_prng", True),
    ("allow_f16_reductions", False), ("array_garbage_collection_guard", "fatal")])
def test_unsupported_checks_refuse(state, value):
  name = "jax_" + state
  before = config.read(name)
  with pytest.raises(NotImplementedError, match=name):
    with getattr(jax, state)(value):
      pass
  assert config.read(name) == before


def test_states_match_jax_names():
  jax_oracle = pytest.importorskip("jax")
  for name in ["check_tracer_leaks", "log_compiles", "explain_cache_misses",
               "default_prng_impl", "enable_custom_prng", "threefry_partitionable",
               "debug_key_reuse", "default_device", "thread_guard", "allow_f16_reductions",
               "transfer_guard_host_to_device", "array_garbage_collection_guard"]:
    assert getattr(jax, name).name == getattr(jax_oracle, name).name
    assert getattr(jax, name).value == getattr(jax_oracle, name).value


def test_log_compiles_logs_each_new_signature(caplog):
  f = jax.jit(lambda x: x * 2)
  with caplog.at_level(logging.WARNING, logger="purejax._src.dispatch"):
    with jax.log_compiles():
      f(jnp.ones(3))
      f(jnp.ones(3))
      f(jnp.ones(4))
  compiles = [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
  assert len(compiles) == 2
  assert "Compiling jit(<lambda>) with global shapes and types (ShapedArray(float32[3]),)" \
      in compiles[0]


def test_explain_cache_misses(caplog):
  def f(x):
    return x + 1
  g = jax.jit(f)
  with caplog.at_level(logging.WARNING, logger="purejax._src.dispatch"):
    with jax.explain_cache_misses():
      g(jnp.ones(3))
      g(jnp.ones(5, jnp.int32))
  text = "\n".join(r.getMessage() for r in caplog.records)
  assert "TRACING CACHE MISS" in text and "never seen function" in text
  assert "* at x, now i32[5] and before f32[3]" in text


def test_checking_leaks():
  leaked = []

  def f(x):
    leaked.append(x * 2)
    return x

  with jax.checking_leaks():
    with pytest.raises(Exception, match="Leaked trace"):
      jax.jit(f)(1.)
    assert jax.jit(lambda x: x + 1)(1.) == 2.   # no leak, no error
  leaked.clear()
  jax.jit(f)(2.)   # not checked when off


# -- clear_caches, typeof ----------------------------------------------------------

def test_clear_caches_retraces():
  traces = []

  @jax.jit
  def f(x):
    traces.append(1)
    return x * 3
  f(jnp.ones(2))
  f(jnp.ones(2))
  assert len(traces) == 1
  jax.clear_caches()
  assert f._cache_size() == 0
  assert float(f(jnp.ones(2))[0]) == 3.0
  assert len(traces) == 2


def test_typeof():
  assert repr(jax.typeof(jnp.ones(3))) == "ShapedArray(float32[3])"
  assert str(jax.typeof(jnp.ones(3))) == "float32[3]"
  assert repr(jax.typeof(1.)) == "ShapedArray(float32[], weak_type=True)"
  assert str(jax.typeof(1.)) == "~float32[]"
  assert repr(jax.typeof(np.ones((2, 3), np.int32))) == "ShapedArray(int32[2,3])"
  assert str(jax.typeof(jax.random.key(0))) == "key<fry>[]"
  seen = []
  jax.jit(lambda x: seen.append(str(jax.typeof(x))))(jnp.ones(2))
  assert seen == ["float32[2]"]
  with pytest.raises(TypeError, match="is not a valid JAX type"):
    jax.typeof("a")


def test_typeof_matches_jax():
  jax_oracle = pytest.importorskip("jax")
  for x in [np.ones(3, np.float32), 1., 3, True, np.ones((2, 2), np.int8)]:
    assert repr(jax.typeof(x)) == repr(jax_oracle.typeof(x))
    assert str(jax.typeof(x)) == str(jax_oracle.typeof(x))


# -- float0 -------------------------------------------------------------------------

def test_float0_gradient_of_integer_input():
  g = jax.grad(lambda x: x * 2., allow_int=True)(3)
  assert isinstance(g, np.ndarray) and g.dtype == jax.float0 and g.shape == ()
  gx, gy = jax.grad(lambda x, y: (x * y).sum(), argnums=(0, 1), allow_int=True)(
      jnp.arange(3), 2.)
  assert gx.dtype == jax.dtypes.float0 and gx.shape == (3,)
  assert float(gy) == 3.0
  _, vjp = jax.vjp(lambda x, y: x * y, 3, 2.)
  ct_x, ct_y = vjp(1.)
  assert ct_x.dtype == jax.float0 and float(ct_y) == 3.0
  _, t = jax.jvp(lambda x: x * 2, (3,), (np.zeros((), jax.float0),))
  assert t.dtype == jax.float0


def test_float0_matches_jax():
  jax_oracle = pytest.importorskip("jax")
  assert jax.float0 == jax_oracle.float0
  ours = jax.grad(lambda x: (x * 2.).sum(), allow_int=True)(np.arange(2))
  theirs = jax_oracle.grad(lambda x: (x * 2.).sum(), allow_int=True)(np.arange(2))
  assert ours.dtype == theirs.dtype and ours.shape == theirs.shape


# -- custom_gradient, closure_convert ---------------------------------------------

def test_custom_gradient():
  @jax.custom_gradient
  def f(x):
    return x ** 2, lambda g: (g * x,)
  assert float(f(3.)) == 9.0
  assert float(jax.grad(f)(3.)) == 3.0   # the rule's, not the true 6.0
  assert float(jax.jit(jax.grad(f))(3.)) == 3.0

  @jax.custom_gradient
  def h(x, y):
    return x * y, lambda g: (g * y, g * x)
  gx, gy = jax.grad(h, argnums=(0, 1))(3., 4.)
  assert (float(gx), float(gy)) == (4.0, 3.0)
  np.testing.assert_allclose(jax.vmap(jax.grad(f))(jnp.arange(3.)), [0., 1., 2.])


def test_closure_convert():
  def outer(a):
    g = lambda x: jnp.sin(x) * a
    conv, consts = jax.closure_convert(g, 1.)
    return conv(2., *consts), len(consts)

  value, n = outer(3.)
  assert n == 0   # nothing to hoist from a concrete closure
  np.testing.assert_allclose(value, np.sin(2.) * 3., rtol=1e-6)
  grad = jax.grad(lambda a: outer(a)[0])(3.)
  np.testing.assert_allclose(grad, np.sin(2.), rtol=1e-6)

  def traced(a):
    conv, consts = jax.closure_convert(lambda x: x * a, 1.)
    assert len(consts) == 1   # a is a tracer: hoisted
    return conv(2., *consts)
  assert float(jax.grad(traced)(5.)) == 2.0
  conv, _ = jax.closure_convert(lambda x: x, 1.)
  with pytest.raises(TypeError, match="same Pytree structure"):
    conv((1., 2.))


# -- runtime queries ---------------------------------------------------------------

def test_runtime_helpers(capsys):
  x = jnp.arange(3.)
  assert jax.copy_to_host_async(x) is x
  jax.effects_barrier()
  assert any(a is x for a in jax.live_arrays())
  assert jax.process_indices() == [0]
  with pytest.warns(UserWarning, match="renamed"):
    assert jax.host_count() == 1
  with pytest.warns(UserWarning):
    assert jax.host_id() == 0 and jax.host_ids() == [0]
  text = jax.print_environment_info(return_string=True)
  assert "purejax:" in text and "numpy:" in text and "process_count: 1" in text
  assert jax.print_environment_info() is None
  assert "python:" in capsys.readouterr().out


def test_effects_barrier_waits_for_async_work():
  f = jax.jit(lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c + 1., x))   # a loop: async
  out = f(jnp.ones(4))
  jax.effects_barrier()
  np.testing.assert_allclose(out, 4.0)


def test_modules():
  assert jax.version.__version__ == jax.__version__ and jax.version._version
  assert isinstance(jnp.ones(2), jax.typing.ArrayLike.__args__)
  assert isinstance(jax.jit(lambda x: x), jax.stages.Wrapped)
  traced = jax.jit(lambda x: x + 1).trace(1.)
  assert isinstance(traced, jax.stages.Traced)
  assert isinstance(traced.lower(), jax.stages.Lowered)
  assert isinstance(traced.lower().compile(), jax.stages.Compiled)


def test_compile_refuses_what_is_no_xla_option():
  """``Lowered.compile(compiler_options=...)``: XLA's options are accepted
  (and mean nothing to purejax's compilers); another name raises XLA's
  error, as in JAX."""
  lowered = jax.jit(lambda x: 2 * x).lower(3.0)
  assert float(lowered.compile(compiler_options={"xla_gpu_autotune_level": "0"})(3.0)) == 6.0
  assert float(lowered.compile(compiler_options={"optimization_level": 1})(2.0)) == 4.0
  with pytest.raises(jax.errors.JaxRuntimeError,
                     match="INVALID_ARGUMENT: No such compile option: 'not an option'"):
    lowered.compile(compiler_options={"not an option": "x"})
  real = pytest.importorskip("jax")
  with pytest.raises(real.errors.JaxRuntimeError,
                     match="INVALID_ARGUMENT: No such compile option: 'not an option'"):
    real.jit(lambda x: 2 * x).lower(3.0).compile(compiler_options={"not an option": "x"})


def test_dlpack():
  x = jax.dlpack.from_dlpack(np.arange(3.))
  assert isinstance(x, jax.Array) and x.dtype == jnp.float32
  np.testing.assert_array_equal(x, [0., 1., 2.])
  assert jax.dlpack.is_supported_dtype(np.float32)
  assert not jax.dlpack.is_supported_dtype(np.dtype("U3"))
  with pytest.raises(TypeError, match="__dlpack__"):
    jax.dlpack.from_dlpack([1, 2])


def test_profiler():
  with jax.profiler.TraceAnnotation("outer", k=1):
    with jax.profiler.StepTraceAnnotation("train", step_num=3):
      assert jax.profiler.TraceAnnotation.current() == ["outer", "train"]
  assert jax.profiler.TraceAnnotation.current() == []
  f = jax.profiler.annotate_function(lambda: jax.profiler.TraceAnnotation.current(),
                                     name="fn")
  assert f() == ["fn"]
  with pytest.raises(NotImplementedError, match="profiler traces"):
    jax.profiler.start_trace("/tmp/x")
  with pytest.raises(NotImplementedError):
    with jax.profiler.trace("/tmp/x"):
      pass


def test_signatures_match_jax():
  jax_oracle = pytest.importorskip("jax")
  import inspect
  for name in ["closure_convert", "copy_to_host_async", "custom_gradient",
               "print_environment_info", "host_count", "process_indices", "live_arrays"]:
    ours = list(inspect.signature(getattr(jax, name)).parameters)
    theirs = list(inspect.signature(getattr(jax_oracle, name)).parameters)
    assert ours == theirs, name


def test_jitted_function_type_and_signature_as_jax():
  """A jitted function's type is named as JAX's (chex's ``is_traceable``
  looks for the name) and has the function's signature, also without
  following ``__wrapped__`` (chex's fake pmap asks so)."""
  import inspect

  def foo(x, y=2, *, z=3):
    return x
  for module in [jax] + ([] if importlib.util.find_spec("jax") is None else
                         [importlib.import_module("jax")]):
    f = module.jit(foo)
    assert type(f).__name__ == "PjitFunction"
    assert inspect.signature(f, follow_wrapped=False) == inspect.signature(foo)
    assert f.__signature__ == inspect.signature(foo)


def test_hijax_names_load_and_refuse_use():
  """jax.experimental.hijax is not implemented: its classes can be defined
  and subclassed when a library loads (flax.nnx), binding one raises."""
  from purejax.experimental import hijax
  from purejax.extend.core import Effect

  class Prim(hijax.HiPrimitive):
    pass

  class MyEffect(Effect):
    pass
  hijax.control_flow_allowed_effects.add_type(MyEffect)
  assert hijax.control_flow_allowed_effects.contains(MyEffect())
  p = Prim("mine")
  with pytest.raises(NotImplementedError, match="jax.experimental.hijax.*binding mine"):
    p.bind(jnp.ones(2))
  with pytest.raises(NotImplementedError, match="jax.experimental.hijax"):
    hijax.AvalQDD(None, None)
  assert hijax.aval_method(len).fun is len and hijax.aval_property(len).fget is len
  assert hijax.Zero is jax._src.interpreters.ad.Zero
  assert hijax.AbstractRef is type(jax.typeof(jax.new_ref(jnp.ones(2))))
