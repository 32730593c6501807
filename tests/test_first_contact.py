"""What a JAX user or library meets first: ``isinstance(x, jax.Array)`` in
traced code, array construction from buffers and large Python ints, the
error classes of misused transformations, and the weak types of gradients.

Each check states the expected value here and, when JAX is installed, also
compares with it (``oracle()`` skips that half cleanly otherwise)."""
import array as pyarray

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
import purejax.typing
from purejax import lax

from tests.conftest import oracle


# ---------------------------------------------------------------------------
# isinstance(x, jax.Array)

def _array_checks(jax, jnp):
  """(concrete, jit, grad, vmap, key, NumPy, scalar) answers to
  ``isinstance(x, jax.Array)``."""
  seen = {}

  def record(name):
    def f(x):
      seen[name] = isinstance(x, jax.Array)
      return x
    return f

  seen["concrete"] = isinstance(jnp.ones(3), jax.Array)
  jax.jit(record("jit"))(jnp.ones(3))
  jax.grad(record("grad"))(1.0)
  jax.vmap(record("vmap"))(jnp.ones(3))
  seen["key"] = isinstance(jax.random.key(0), jax.Array)
  jax.jit(record("jit_key"))(jax.random.key(0))
  seen["numpy"] = isinstance(np.ones(3), jax.Array)
  seen["scalar"] = isinstance(3.0, jax.Array)
  seen["np_scalar"] = isinstance(np.float32(3.0), jax.Array)
  return seen


_EXPECTED_CHECKS = {"concrete": True, "jit": True, "grad": True, "vmap": True, "key": True,
                    "jit_key": True, "numpy": False, "scalar": False, "np_scalar": False}


def test_tracers_and_keys_are_jax_arrays():
  assert _array_checks(purejax, jnp) == _EXPECTED_CHECKS


def test_tracers_and_keys_are_jax_arrays_like_oracle():
  jax = oracle()
  assert _array_checks(jax, jax.numpy) == _EXPECTED_CHECKS


def test_array_class_relations():
  x = jnp.ones(3)
  assert type(x) is not purejax.Array           # the public class is abstract
  assert type(x).__name__ == "ArrayImpl"        # as JAX's concrete class
  assert issubclass(type(x), purejax.Array)
  assert not issubclass(purejax.core.Tracer, purejax.Array)   # instances only
  assert not issubclass(np.ndarray, purejax.Array)
  assert jnp.ndarray is purejax.Array
  assert purejax.typing.ArrayLike.__args__[0] is purejax.Array
  assert repr(purejax.Array) == "<class 'purejax.Array'>"


def test_array_class_relations_like_oracle():
  jax = oracle()
  x = jax.numpy.ones(3)
  assert type(x) is not jax.Array and type(x).__name__ == "ArrayImpl"
  assert issubclass(type(x), jax.Array) and not issubclass(jax.core.Tracer, jax.Array)
  assert jax.numpy.ndarray is jax.Array
  assert jax.typing.ArrayLike.__args__[0] is jax.Array


def test_annotated_array_checks_in_jitted_code():
  """What chex/optax-style code does: check the type inside a jitted function."""

  def checked(x: purejax.Array) -> purejax.Array:
    if not isinstance(x, purejax.Array):
      raise AssertionError(f"not an Array: {type(x)}")
    return x * 2

  assert purejax.jit(checked)(jnp.ones(2)).tolist() == [2.0, 2.0]
  assert float(purejax.grad(checked)(1.0)) == 2.0
  assert purejax.vmap(checked)(jnp.ones(2)).tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------
# jnp.array / jnp.asarray: large Python ints, buffer-protocol objects

def _construct(jnp, make, x64=False):
  try:
    out = make(jnp)
  except Exception as e:  # noqa: BLE001 -- the class and text are compared
    return type(e).__name__, str(e)
  return repr(out), out.weak_type


_CONSTRUCTIONS = [
    (lambda jnp: jnp.array([4294967295, 2147483648], dtype=jnp.uint32),
     ("Array([4294967295, 2147483648], dtype=uint32)", False)),
    (lambda jnp: jnp.asarray([4294967295, 2147483648], dtype=jnp.uint32),
     ("Array([4294967295, 2147483648], dtype=uint32)", False)),
    (lambda jnp: jnp.array(4294967295, dtype=jnp.uint32),
     ("Array(4294967295, dtype=uint32)", False)),
    (lambda jnp: jnp.array([jnp.uint32(1), 4294967295]),
     ("Array([         1, 4294967295], dtype=uint32)", False)),
    (lambda jnp: jnp.array([2**40, 1.5]),
     ("Array([1.0995116e+12, 1.5000000e+00], dtype=float32)", False)),
    (lambda jnp: jnp.array(2**40, dtype=jnp.float32),
     ("Array(1.0995116e+12, dtype=float32)", False)),
    (lambda jnp: jnp.array([4294967296], dtype=jnp.uint32),
     ("OverflowError", "Python integer 4294967296 out of bounds for uint32")),
    (lambda jnp: jnp.array([-1], dtype=jnp.uint32),
     ("OverflowError", "Python integer -1 out of bounds for uint32")),
    (lambda jnp: jnp.array([2**31]),
     ("OverflowError", "Python integer 2147483648 out of bounds for int32")),
    (lambda jnp: jnp.array(2**31),
     ("OverflowError", "Python int 2147483648 too large to convert to int32")),
    (lambda jnp: jnp.array([jnp.int8(1), 200]),
     ("OverflowError", "Python integer 200 out of bounds for int8")),
    (lambda jnp: jnp.asarray(memoryview(b"abc")), ("Array([97, 98, 99], dtype=uint8)", False)),
    (lambda jnp: jnp.array(bytearray(b"abc")), ("Array([97, 98, 99], dtype=uint8)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("f", [1, 2])), ("Array([1., 2.], dtype=float32)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("d", [1, 2])), ("Array([1., 2.], dtype=float32)", False)),
    (lambda jnp: jnp.asarray(memoryview(np.arange(4, dtype=np.int16))),
     ("Array([0, 1, 2, 3], dtype=int16)", False)),
    (lambda jnp: jnp.asarray(memoryview(b"abc"), dtype=jnp.float32),
     ("Array([97., 98., 99.], dtype=float32)", False)),
    (lambda jnp: jnp.array(b"abc"),
     ("TypeError", "Value 'b'abc'' with dtype |S3 is not a valid JAX array type. "
                   "Only arrays of numeric types are supported by JAX.")),
]

_CONSTRUCTIONS_X64 = [
    (lambda jnp: jnp.array([2**64 - 1, 2**63], dtype=jnp.uint64),
     ("Array([18446744073709551615,  9223372036854775808], dtype=uint64)", False)),
    (lambda jnp: jnp.array([2**63], dtype=jnp.int64),
     ("OverflowError", "Python int too large to convert to C long")),
    (lambda jnp: jnp.array([2**64], dtype=jnp.uint64),
     ("OverflowError", "Python int too large to convert to C long")),
    (lambda jnp: jnp.array([-1], dtype=jnp.uint64),
     ("OverflowError", "Python integer -1 out of bounds for uint64")),
    (lambda jnp: jnp.array([2**31]), ("Array([2147483648], dtype=int64)", False)),
    (lambda jnp: jnp.asarray(pyarray.array("d", [1, 2])), ("Array([1., 2.], dtype=float64)", False)),
]


@pytest.mark.parametrize("i", range(len(_CONSTRUCTIONS)))
def test_array_from_large_ints_and_buffers(i):
  make, expected = _CONSTRUCTIONS[i]
  assert _construct(jnp, make) == expected


@pytest.mark.parametrize("i", range(len(_CONSTRUCTIONS_X64)))
def test_array_from_large_ints_x64(i, x64):
  make, expected = _CONSTRUCTIONS_X64[i]
  assert _construct(jnp, make) == expected


def test_array_from_large_ints_and_buffers_like_oracle():
  jax = oracle()
  for make, expected in _CONSTRUCTIONS:
    assert _construct(jax.numpy, make) == expected
  jax.config.update("jax_enable_x64", True)
  try:
    for make, expected in _CONSTRUCTIONS_X64:
      assert _construct(jax.numpy, make) == expected
  finally:
    jax.config.update("jax_enable_x64", False)


def test_large_uint32_list_under_jit():
  f = purejax.jit(lambda x: jnp.array([x, 4294967295], dtype=jnp.uint32))
  assert f(jnp.uint32(1)).tolist() == [1, 4294967295]


# ---------------------------------------------------------------------------
# Error classes and texts of misused transformations and operations

_POSITIONAL = ("Positional argument indices, e.g. for `static_argnums`, must have value "
               "greater than or equal to -len(args) and less than len(args), but got value "
               "{} for len(args) == 1.")
_COMPLEX_ARANGE = ("Passing complex start/stop/step to jnp.arange is no longer supported "
                   "starting in JAX v0.10.0.")


class _NoNone:
  """A pytree node whose unflatten refuses None children."""

  def __init__(self, a):
    if a is None:
      raise ValueError("no None here")
    self.a = a


def _errors(jax, jnp, lax):
  x = jnp.ones(3)
  key = jax.random.PRNGKey(0)
  cases = {
      "grad(3)": lambda: jax.grad(3),
      "value_and_grad(3)": lambda: jax.value_and_grad(3),
      "jacfwd(3)": lambda: jax.jacfwd(3),
      "jacrev(3)": lambda: jax.jacrev(3),
      "hessian(3)": lambda: jax.hessian(3),
      "vjp(3)": lambda: jax.vjp(3, 1.0),
      "jvp(3)": lambda: jax.jvp(3, (1.0,), (1.0,)),
      "linearize(3)": lambda: jax.linearize(3, 1.0),
      "vmap(3)": lambda: jax.vmap(3),
      "jit(3)": lambda: jax.jit(3),
      "static_argnums=5": lambda: jax.jit(lambda x: x, static_argnums=5)(x),
      "static_argnums=(0, 5)": lambda: jax.jit(lambda x: x, static_argnums=(0, 5)),
      "donate_argnums=5": lambda: jax.jit(lambda x: x, donate_argnums=5),
      "static_argnames=y": lambda: jax.jit(lambda x: x, static_argnames="y"),
      "asarray under grad": lambda: jax.grad(lambda v: np.asarray(v).sum() * v)(1.0),
      "asarray under jvp": lambda: jax.jvp(lambda v: np.asarray(v) * v, (1.0,), (1.0,)),
      "top_k 2.0": lambda: lax.top_k(x, 2.0),
      "arange(1+2j)": lambda: jnp.arange(1 + 2j),
      "arange(0, 1+2j)": lambda: jnp.arange(0, 1 + 2j),
      "randint None": lambda: jax.random.randint(key, (2,), 0, None),
      "grad argnums=-3": lambda: jax.grad(lambda v: v, argnums=-3)(1.0),
      "value_and_grad argnums=-3": lambda: jax.value_and_grad(lambda v: v, argnums=-3)(1.0),
      "jacfwd argnums=3": lambda: jax.jacfwd(lambda v: v, argnums=3)(1.0),
      "jacrev argnums=-3": lambda: jax.jacrev(lambda v: v, argnums=-3)(1.0),
      "jacfwd complex": lambda: jax.jacfwd(lambda v: v * 1.0)(1.0 + 1j),
      "jacrev complex out": lambda: jax.jacrev(lambda v: v * 1j)(1.0),
      "jacobian NoNone": lambda: jax.jacobian(lambda p: p.a * 2.0)(_NoNone(1.0)),
      "jacfwd NoNone": lambda: jax.jacfwd(lambda p: p.a * 2.0)(_NoNone(1.0)),
      "jit returns str": lambda: jax.jit(lambda v: "abc")(1.0),
      "jit returns (x, str)": lambda: jax.jit(lambda v: (v, "abc"))(1.0),
      "arange(3) + 2**40": lambda: jnp.arange(3) + 2**40,
      "2**40 + arange(3)": lambda: 2**40 + jnp.arange(3),
      "where(.., 2**40)": lambda: jnp.where(True, jnp.arange(3), 2**40),
      "clip(.., 2**40)": lambda: jnp.clip(jnp.arange(3), 0, 2**40),
      "jit b=2**40": lambda: jax.jit(_two_args)(1, b=2**40),
      "jit b['k'][1]": lambda: jax.jit(_two_args)(1, {"k": [0, 2**40]}),
      "jit *xs": lambda: jax.jit(lambda *xs: xs[0])(1, 2**40),
  }
  out = {}
  for name, f in cases.items():
    try:
      f()
      out[name] = None
    except Exception as e:  # noqa: BLE001 -- the class and text are compared
      text = str(e).split("\n")[0]
      text = text.replace(__file__, "FILE").replace(__file__.rstrip("c"), "FILE")
      out[name] = (type(e).__name__, text)
  return out


_CALLABLE = ("TypeError", "Expected a callable value, got 3")


def _overflow(path):
  return ("OverflowError", "An overflow was encountered while parsing an argument to a jitted "
          f"computation, whose argument path is {path}. Got <class 'int'> with value "
          "1099511627776")


def _two_args(a, b):
  return b
_EXPECTED_ERRORS = {
    "grad(3)": _CALLABLE, "value_and_grad(3)": _CALLABLE, "jacfwd(3)": _CALLABLE,
    "jacrev(3)": _CALLABLE, "hessian(3)": _CALLABLE, "vjp(3)": _CALLABLE, "jvp(3)": _CALLABLE,
    "linearize(3)": _CALLABLE, "vmap(3)": _CALLABLE, "jit(3)": _CALLABLE,
    "static_argnums=5": ("ValueError", "Jitted function has static_argnums=(5,), but only "
                         "accepts 1 positional arguments."),
    "static_argnums=(0, 5)": ("ValueError", "Jitted function has static_argnums=(0, 5), but "
                              "only accepts 1 positional arguments."),
    "donate_argnums=5": ("ValueError", "Jitted function has donate_argnums=(5,), but only "
                         "accepts 1 positional arguments."),
    "static_argnames=y": ("ValueError", "Jitted function has invalid argnames {'y'} in "
                          "static_argnames. Function does not take these args."),
    "asarray under grad": ("TracerArrayConversionError", "The numpy.ndarray conversion method "
                           "__array__() was called on traced array with shape float32[]"),
    "asarray under jvp": ("TracerArrayConversionError", "The numpy.ndarray conversion method "
                          "__array__() was called on traced array with shape float32[]"),
    "top_k 2.0": ("TypeError", "Shapes must be 1D sequences of concrete values of integer "
                  "type, got [2.0]."),
    "arange(1+2j)": ("ValueError", _COMPLEX_ARANGE),
    "arange(0, 1+2j)": ("ValueError", _COMPLEX_ARANGE),
    "randint None": ("TypeError", "randint requires ndarray or scalar arguments, got "
                     "<class 'NoneType'> at position 1."),
    "grad argnums=-3": ("ValueError", _POSITIONAL.format(-3)),
    "value_and_grad argnums=-3": ("ValueError", _POSITIONAL.format(-3)),
    "jacfwd argnums=3": ("ValueError", _POSITIONAL.format(3)),
    "jacrev argnums=-3": ("ValueError", _POSITIONAL.format(-3)),
    "jacfwd complex": ("TypeError", "jacfwd requires real-valued inputs (input dtype that is "
                       "a sub-dtype of np.floating), but got complex64. For holomorphic "
                       "differentiation, pass holomorphic=True. For differentiation of "
                       "non-holomorphic functions involving complex inputs or integer "
                       "inputs, use jax.jvp directly."),
    "jacrev complex out": ("TypeError", "jacrev requires real-valued outputs (output dtype "
                           "that is a sub-dtype of np.floating), but got complex64. For "
                           "holomorphic differentiation, pass holomorphic=True. For "
                           "differentiation of non-holomorphic functions involving complex "
                           "outputs, use jax.vjp directly."),
    "jacobian NoNone": ("ValueError", "no None here"),
    "jacfwd NoNone": ("ValueError", "no None here"),
    "arange(3) + 2**40": ("OverflowError", "An overflow was encountered while parsing an "
                          "argument to a jitted computation, whose argument path is y. Got "
                          "<class 'int'> with value 1099511627776"),
    "2**40 + arange(3)": ("OverflowError", "An overflow was encountered while parsing an "
                          "argument to a jitted computation, whose argument path is x. Got "
                          "<class 'int'> with value 1099511627776"),
    "where(.., 2**40)": _overflow("y"),
    "clip(.., 2**40)": _overflow("max"),
    "jit b=2**40": _overflow("b"),
    "jit b['k'][1]": _overflow("b['k'][1]"),
    "jit *xs": _overflow("xs[1]"),
}


def _expected_errors(lines):
  out = dict(_EXPECTED_ERRORS)
  out["jit returns str"] = (
      "TypeError", f"function <lambda> at FILE:{lines[0]} traced for jit returned a value of "
      "type <class 'str'>, which is not a valid JAX type")
  out["jit returns (x, str)"] = (
      "TypeError", f"function <lambda> at FILE:{lines[1]} traced for jit returned a value of "
      "type <class 'str'> at output component [1], which is not a valid JAX type")
  return out


def _str_lines():
  import inspect
  source, start = inspect.getsourcelines(_errors)
  return [start + i for i, line in enumerate(source) if '"jit returns' in line]


def _register_no_none(tree_util):
  try:
    tree_util.register_pytree_node(_NoNone, lambda p: ((p.a,), None),
                                   lambda aux, ch: _NoNone(*ch))
  except ValueError:
    pass   # registered already


def test_error_classes_and_texts():
  _register_no_none(purejax.tree_util)
  assert _errors(purejax, jnp, lax) == _expected_errors(_str_lines())


def test_error_classes_and_texts_like_oracle():
  jax = oracle()
  _register_no_none(jax.tree_util)
  assert _errors(jax, jax.numpy, jax.lax) == _expected_errors(_str_lines())


# ---------------------------------------------------------------------------
# Weak types of gradients and of gcd/lcm

def _weak_types(jax, jnp):
  re_im = lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2
  cases = {
      "grad re/im": lambda: jax.grad(re_im)(3.0 + 4j),
      "grad x*x": lambda: jax.grad(lambda x: x * x)(3.0),
      "grad x*x f32": lambda: jax.grad(lambda x: x * x)(jnp.float32(3.0)),
      "grad holomorphic": lambda: jax.grad(lambda z: z * z, holomorphic=True)(3.0 + 4j),
      "grad abs complex": lambda: jax.grad(jnp.abs)(3.0 + 4j),
      "grad const complex": lambda: jax.grad(lambda z: jnp.real(z) * 0)(3.0 + 1j),
      "vjp real": lambda: jax.vjp(lambda z: jnp.real(z) ** 2, 3.0 + 4j)[1](1.0)[0],
      "vjp z*z": lambda: jax.vjp(lambda z: z * z, 3.0 + 4j)[1](1.0 + 0j)[0],
      "jacrev real": lambda: jax.jacrev(lambda z: jnp.real(z) ** 2)(3.0 + 4j),
      "transpose weak": lambda: jax.linear_transpose(lambda x: 2 * x, 1.0)(1.0),
      "transpose f32": lambda: jax.linear_transpose(lambda x: 2 * x, jnp.float32(1.0))(1.0),
      "transpose f32 ct": lambda: jax.linear_transpose(lambda x: 2 * x, 1.0)(jnp.float32(1.0)),
      "transpose add": lambda: jax.linear_transpose(lambda x, y: x + y, 1.0, 2.0)(3.0),
      "transpose pair": lambda: jax.linear_transpose(lambda x: (x, 2 * x), 1.0)((1.0, 2.0)),
      "gcd ints": lambda: jnp.gcd(12, 18),
      "lcm ints": lambda: jnp.lcm(-12, 18),
      "gcd int8": lambda: jnp.gcd(jnp.int8(12), 18),
      "lcm int32": lambda: jnp.lcm(12, jnp.int32(18)),
  }
  return {name: repr(f()) for name, f in cases.items()}


_EXPECTED_WEAK = {
    "grad re/im": "Array(6.-8.j, dtype=complex64)",
    "grad x*x": "Array(6., dtype=float32, weak_type=True)",
    "grad x*x f32": "Array(6., dtype=float32)",
    "grad holomorphic": "Array(6.+8.j, dtype=complex64, weak_type=True)",
    "grad abs complex": "Array(0.6-0.8j, dtype=complex64)",
    "grad const complex": "Array(0.+0.j, dtype=complex64)",
    "vjp real": "Array(6.+0.j, dtype=complex64)",
    "vjp z*z": "Array(6.+8.j, dtype=complex64, weak_type=True)",
    "jacrev real": "Array(6.+0.j, dtype=complex64, weak_type=True)",
    "transpose weak": "(Array(2., dtype=float32, weak_type=True),)",
    "transpose f32": "(Array(2., dtype=float32),)",
    "transpose f32 ct": "(Array(2., dtype=float32),)",
    "transpose add": ("(Array(3., dtype=float32, weak_type=True), "
                      "Array(3., dtype=float32, weak_type=True))"),
    "transpose pair": "(Array(5., dtype=float32, weak_type=True),)",
    "gcd ints": "Array(6, dtype=int32, weak_type=True)",
    "lcm ints": "Array(36, dtype=int32, weak_type=True)",
    "gcd int8": "Array(6, dtype=int8)",
    "lcm int32": "Array(36, dtype=int32)",
}


def test_weak_types_of_gradients_and_gcd():
  assert _weak_types(purejax, jnp) == _EXPECTED_WEAK


def test_weak_types_of_gradients_and_gcd_like_oracle():
  jax = oracle()
  assert _weak_types(jax, jax.numpy) == _EXPECTED_WEAK


def _transpose_mismatch_errors(jax, jnp):
  transpose = jax.linear_transpose(lambda x: 2 * x, 1.0)
  out = []
  for ct in (jnp.ones(2), jnp.int32(1), (1.0, 2.0)):
    with pytest.raises(TypeError) as e:
      transpose(ct)
    out.append(str(e.value))
  return out


_EXPECTED_TRANSPOSE_ERRORS = [
    "cotangent type does not match function output, expected "
    "(ShapedArray(float32[], weak_type=True),) but got [Array([1., 1.], dtype=float32)]",
    "cotangent type does not match function output, expected "
    "(ShapedArray(float32[], weak_type=True),) but got [Array(1, dtype=int32)]",
    "cotangent tree does not match function output, expected PyTreeDef(*) but got "
    "PyTreeDef((*, *))",
]


def test_linear_transpose_cotangent_errors():
  assert _transpose_mismatch_errors(purejax, jnp) == _EXPECTED_TRANSPOSE_ERRORS


def test_linear_transpose_cotangent_errors_like_oracle():
  jax = oracle()
  assert _transpose_mismatch_errors(jax, jax.numpy) == _EXPECTED_TRANSPOSE_ERRORS


def _jacobian_weak_types(jax, jnp):
  f = lambda x, y: x * y
  s = jnp.float32
  out = []
  for a, b in [(1., 2.), (s(1.), 2.), (1., s(2.)), (s(1.), s(2.))]:
    for argnums in (0, 1, -1):
      out.append((jax.jacfwd(f, argnums=argnums)(a, b).weak_type,
                  jax.jacrev(f, argnums=argnums)(a, b).weak_type))
  out.append(jax.jacfwd(lambda x: x * 3.0)(1.).weak_type)
  out.append(jax.jacfwd(lambda x: jnp.ones(2) * x)(1.).weak_type)
  return out


_EXPECTED_JACOBIAN_WEAK = [(True, True)] * 3 + [(False, False), (False, True), (False, True),
                                                (False, True), (False, False), (False, False)] \
    + [(False, False)] * 3 + [True, False]


def test_jacobian_weak_types():
  assert _jacobian_weak_types(purejax, jnp) == _EXPECTED_JACOBIAN_WEAK


def test_jacobian_weak_types_like_oracle():
  jax = oracle()
  assert _jacobian_weak_types(jax, jax.numpy) == _EXPECTED_JACOBIAN_WEAK


def _empty_argnums_errors(jax):
  f = lambda x, y: x * y
  out = []
  for transform in (jax.grad, jax.value_and_grad, jax.jacfwd, jax.jacrev, jax.hessian):
    with pytest.raises(Exception) as e:
      transform(f, argnums=())(1., 2.)
    out.append(type(e.value).__name__)
  return out


def test_empty_argnums_raise_value_error():
  assert _empty_argnums_errors(purejax) == ["ValueError"] * 5


def test_empty_argnums_raise_value_error_like_oracle():
  assert _empty_argnums_errors(oracle()) == ["ValueError"] * 5


def _complex_cotangent_weak_types(jax, jnp):
  """Weak types of complex cotangents: holomorphic grads and vjps with weak
  or strong inputs and cotangents, and real functions of complex inputs."""
  c64 = jnp.complex64
  holomorphic = [lambda z: z * z, jnp.exp, lambda z: z * 3.0, lambda z: jnp.where(True, z, 0j),
                 lambda z: jnp.sum(jnp.stack([z, z])), lambda z: (1 + 1j) * z]
  real = [lambda z: jnp.abs(z) ** 2, lambda z: jnp.real(jnp.where(True, z, 0j)),
          lambda z: jnp.maximum(jnp.real(z), 1.0), lambda z: jnp.real(z * jnp.conj(z))]
  out = []
  for z in (3. + 4j, c64(3 + 4j)):
    for f in holomorphic:
      out.append(jax.grad(f, holomorphic=True)(z).weak_type)
      _, f_vjp = jax.vjp(f, z)
      out += [f_vjp(ct)[0].weak_type for ct in (1. + 0j, c64(1))]
    out += [jax.grad(f)(z).weak_type for f in real]
  return out


def test_complex_cotangent_weak_types():
  # JAX 0.10.2's answers, in _complex_cotangent_weak_types's order.
  t, f = True, False
  weak_input = [t, t, f, t, t, f, t, t, f, t, t, f, t, t, t, t, t, f, f, f, f, f]
  strong_input = [f, f, f, f, f, f, f, f, f, f, t, f, f, t, f, f, f, f, f, f, f, f]
  assert _complex_cotangent_weak_types(purejax, jnp) == weak_input + strong_input


def test_complex_cotangent_weak_types_like_oracle():
  jax = oracle()
  assert (_complex_cotangent_weak_types(purejax, jnp)
          == _complex_cotangent_weak_types(jax, jax.numpy))
