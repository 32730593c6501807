"""Issue 20, points 7, 8 and 10: an array too large to allocate raises JAX's
RESOURCE_EXHAUSTED error at once; the caller's NumPy arrays stay writeable
and never alias an Array; callback errors, non-numeric and float128 inputs
raise JAX's exception classes.  Compared with real JAX where installed."""
import time

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax import lax
from purejax._src.config import config
from purejax.errors import JaxRuntimeError
from purejax.experimental import io_callback

from conftest import oracle

S = purejax.ShapeDtypeStruct
HUGE = (2 ** 40,)   # 4 TiB of float32: more than any test machine holds


@pytest.fixture(params=["numpy", "cpu"])
def backend(request):
  with config.override("purejax_backend", request.param), \
       config.override("purejax_compile_sync", True):
    yield request.param


# -- 7: arrays that cannot be allocated ------------------------------------------------

_TOO_LARGE = {
    "zeros": lambda: jnp.zeros(HUGE),
    "ones_sum": lambda: jnp.ones(HUGE).sum(),
    "full": lambda: jnp.full(HUGE, 3.0),
    "broadcast_to": lambda: jnp.broadcast_to(jnp.float32(1), HUGE),
    "zeros_int8_2d": lambda: jnp.zeros((2 ** 20, 2 ** 20), jnp.int8),
    "outer_add": lambda: jnp.ones((2 ** 20, 1)) + jnp.ones((1, 2 ** 20)),
}


@pytest.mark.parametrize("name", sorted(_TOO_LARGE))
def test_unallocatable_array_raises_at_once(name):
  start = time.perf_counter()
  with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED: Out of memory allocating"):
    _TOO_LARGE[name]()
  assert time.perf_counter() - start < 10


def test_unallocatable_jit_output_raises(backend):
  with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
    purejax.jit(lambda: jnp.ones(HUGE))()


def test_unallocatable_error_class_and_message_match_jax():
  jax = oracle()
  import jax.numpy as jjnp
  with pytest.raises(Exception) as theirs:
    jjnp.zeros(HUGE)
  with pytest.raises(Exception) as ours:
    jnp.zeros(HUGE)
  assert type(theirs.value).__name__ == type(ours.value).__name__ == "JaxRuntimeError"
  assert isinstance(ours.value, RuntimeError)
  assert str(ours.value) == str(theirs.value)
  del jax


def test_huge_shapes_still_trace():
  # Abstract evaluation allocates nothing: JAX traces these too.
  out = purejax.eval_shape(lambda: jnp.ones(HUGE))
  assert out.shape == HUGE
  assert "broadcast_in_dim" in str(purejax.make_jaxpr(lambda: jnp.ones(HUGE))())


def test_normal_sizes_and_cheap_broadcasts_still_work():
  x = jnp.ones((1000, 1000))
  assert float(x.sum()) == 1e6
  np.testing.assert_array_equal(jnp.broadcast_to(jnp.arange(3.0), (4, 3)),
                                np.broadcast_to(np.arange(3.0), (4, 3)))


# -- 8: the caller's NumPy arrays -------------------------------------------------------

_USES = {
    "sum": jnp.sum,
    "add": lambda a: jnp.add(a, a),
    "add_scalar": lambda a: jnp.add(a, 1.0),
    "sin": jnp.sin,
    "reshape": lambda a: jnp.reshape(a, (3, 1)),
    "ravel": jnp.ravel,
    "transpose": jnp.transpose,
    "radd_array": lambda a: a + jnp.float32(1),
    "asarray": jnp.asarray,
    "array": jnp.array,
    "device_put": purejax.device_put,
    "lax.reshape": lambda a: lax.reshape(a, (1, 3)),
    "lax.convert": lambda a: lax.convert_element_type(a, np.float32),
    "lax.neg": lax.neg,
    "jit_identity": purejax.jit(lambda x: x),
    "jit_double": purejax.jit(lambda x: x * 2),
    "jit_reshape": purejax.jit(lambda x: x.reshape(3, 1)),
    "vmap_identity": purejax.vmap(lambda x: x),
    "grad": purejax.grad(lambda x: (x * x).sum()),
}


@pytest.mark.parametrize("name", sorted(_USES))
def test_caller_array_stays_writeable_and_unaliased(name):
  a = np.zeros(3, np.float32)
  out = _USES[name](a)
  assert a.flags.writeable
  before = np.array(out)
  a[0] = 1   # raised "assignment destination is read-only"
  a[:] = 7
  np.testing.assert_array_equal(np.asarray(out), before)


@pytest.mark.parametrize("name", ["jit_identity", "jit_reshape", "lax.reshape", "asarray"])
def test_caller_array_with_other_uses_is_not_aliased(name):
  # A slice of a buffer (a view): writing the buffer must not change the Array.
  buf = np.arange(6, dtype=np.float32)
  out = _USES[name](buf[:3])
  buf[:] = -1
  np.testing.assert_array_equal(np.asarray(out).ravel(), [0.0, 1.0, 2.0])


def test_jit_identity_on_view_does_not_change_later(backend):
  buf = np.zeros(4, np.float32)
  out = purejax.jit(lambda x: x)(buf[:])
  buf[0] = 5
  np.testing.assert_array_equal(out, [0.0, 0.0, 0.0, 0.0])
  assert not np.shares_memory(np.asarray(out), buf)


def test_jit_large_numpy_input_written_after_call(backend):
  # Large calls run asynchronously: the value must be taken at call time.
  buf = np.ones(1 << 20, np.float32)
  out = purejax.jit(lambda x: x * 2 + 1)(buf)
  buf[:] = 100
  np.testing.assert_array_equal(np.asarray(out)[:3], [3.0, 3.0, 3.0])
  assert float(np.asarray(out).max()) == 3.0


def test_caller_read_only_array_is_accepted():
  a = np.arange(3, dtype=np.float32)
  a.setflags(write=False)
  np.testing.assert_array_equal(jnp.sin(a), np.sin(a))
  assert not a.flags.writeable


def test_purejax_arrays_are_not_copied_by_jit():
  # purejax's own Arrays pass through without copies (an identity returns
  # a value equal to the input; it stays immutable).
  x = jnp.arange(4.0)
  y = purejax.jit(lambda v: v)(x)
  np.testing.assert_array_equal(y, x)
  with pytest.raises(ValueError):
    np.asarray(y)[0] = 1


# -- 10: exception classes -------------------------------------------------------------

def _boom(*args):
  raise ValueError("boom")


_F32 = S((), np.float32)
_CALLBACKS = {
    "pure_eager": lambda: purejax.pure_callback(_boom, _F32, 1.0),
    "pure_jit": lambda: purejax.jit(lambda x: purejax.pure_callback(_boom, _F32, x))(1.0),
    "io_eager": lambda: io_callback(_boom, _F32, 1.0),
    "io_jit": lambda: purejax.jit(lambda x: io_callback(_boom, _F32, x))(1.0),
    "debug_jit": lambda: purejax.block_until_ready(
        purejax.jit(lambda x: (purejax.debug.callback(_boom, x), x)[1])(1.0)),
    "pure_vmap": lambda: purejax.vmap(
        lambda x: purejax.pure_callback(_boom, _F32, x, vmap_method="sequential"))(
            jnp.ones(2)),
}


@pytest.mark.parametrize("name", sorted(_CALLBACKS))
def test_callback_error_is_jax_runtime_error(name, backend):
  with pytest.raises(JaxRuntimeError,
                     match="INTERNAL: CpuCallback error calling callback") as info:
    _CALLBACKS[name]()
  assert "ValueError: boom" in str(info.value)
  cause = info.value.__cause__
  assert type(cause) is ValueError and str(cause) == "boom"


def test_debug_callback_eager_error_is_raw():
  # As in JAX: an eager debug.callback calls the function directly.
  with pytest.raises(ValueError, match="boom"):
    purejax.debug.callback(_boom, 1.0)


def test_callback_error_classes_match_jax():
  jax = oracle()
  from jax.experimental import io_callback as jax_io_callback
  sd = jax.ShapeDtypeStruct((), np.float32)
  with pytest.raises(Exception) as theirs:
    jax.jit(lambda x: jax_io_callback(_boom, sd, x))(1.0)
  with pytest.raises(Exception) as ours:
    _CALLBACKS["io_jit"]()
  assert type(theirs.value).__name__ == type(ours.value).__name__
  assert str(ours.value).split("Traceback")[0] == str(theirs.value).split("Traceback")[0]


_BAD_INPUTS = {
    "object": np.array([1, 2], dtype=object),
    "object_0d": np.array(1, dtype=object),
    "float128": np.array([1.0, 2.0], np.longdouble),
    "float128_scalar": np.longdouble(1.5),
    "complex256": np.array([1j], np.clongdouble),
    "str": np.array(["a"]),
    "bytes": np.array([b"a"]),
    "datetime": np.array(["2020-01-01"], "datetime64[D]"),
}

_ENTRY_POINTS = {
    "asarray": lambda m, x: m.numpy.asarray(x),
    "array": lambda m, x: m.numpy.array(x),
    "jit": lambda m, x: m.jit(lambda v: v)(x),
    "jit_add": lambda m, x: m.jit(lambda v: v + 1)(x),
    "device_put": lambda m, x: m.device_put(x),
    "lax.add": lambda m, x: m.lax.add(x, x),
    "lax.neg": lambda m, x: m.lax.neg(x),
    "jnp.sin": lambda m, x: m.numpy.sin(x),
    "jnp.sum": lambda m, x: m.numpy.sum(x),
    "jnp.zeros_like": lambda m, x: m.numpy.zeros_like(x),
    "vmap": lambda m, x: m.vmap(lambda v: v)(x),
    "grad": lambda m, x: m.grad(lambda v: v.sum())(x),
}


@pytest.mark.parametrize("entry", sorted(_ENTRY_POINTS))
@pytest.mark.parametrize("value", sorted(_BAD_INPUTS))
def test_non_jax_dtypes_raise_type_error(value, entry):
  with pytest.raises(TypeError):
    _ENTRY_POINTS[entry](purejax, _BAD_INPUTS[value])


@pytest.mark.parametrize("entry", sorted(_ENTRY_POINTS))
@pytest.mark.parametrize("value", ["object", "float128", "str"])
def test_non_jax_dtype_errors_match_jax(value, entry):
  jax = oracle()
  with pytest.raises(Exception) as theirs:
    _ENTRY_POINTS[entry](jax, _BAD_INPUTS[value])
  with pytest.raises(Exception) as ours:
    _ENTRY_POINTS[entry](purejax, _BAD_INPUTS[value])
  assert type(ours.value) is type(theirs.value) is TypeError


def test_jit_string_array_message():
  with pytest.raises(TypeError, match="Error interpreting argument to .* as an abstract "
                     "array. The problematic value is of type <class 'numpy.ndarray'>"):
    purejax.jit(lambda x: x)(np.array(["a"]))


@pytest.mark.parametrize("entry", ["device_put", "vmap"])
def test_device_put_and_vmap_message(entry):
  with pytest.raises(TypeError, match="Dtype float128 is not a valid JAX array type. Only "
                     "arrays of numeric types are supported by JAX."):
    _ENTRY_POINTS[entry](purejax, _BAD_INPUTS["float128"])


def test_lax_message():
  with pytest.raises(TypeError, match="Error interpreting argument to neg as a JAX value. "
                     "The problematic value is of type <class 'numpy.ndarray'> and was "
                     "passed to neg at position 0."):
    lax.neg(_BAD_INPUTS["float128"])
