"""Tests for purejax._src.dtypes, purejax.dtypes and the jnp scalar types.

Tests marked ``oracle`` compare against the installed JAX and skip without it.
"""
import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

from purejax._src import dtypes
from purejax._src.config import config
from purejax._src.numpy import scalar_types
import purejax.dtypes as public_dtypes

ALL_NAMES = list(scalar_types.scalar_types)  # bool, int8, ..., float8_e5m2, ...
ALL_DTYPES = [np.dtype(scalar_types.scalar_types[n]) for n in ALL_NAMES]
STANDARD_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
                  "complex128"]

X64_WARNING = ("Explicitly requested dtype {req}{where} is not available, and will be "
               "truncated to dtype {got}. To enable more dtypes, set the jax_enable_x64 "
               "configuration option or the JAX_ENABLE_X64 shell environment variable. "
               "See https://github.com/jax-ml/jax#current-gotchas for more.")


# ---------------------------------------------------------------------------
# fixtures and helpers

def _jax():
  return pytest.importorskip("jax")


@pytest.fixture
def restore_config():
  old = (config.jax_enable_x64, config.jax_numpy_dtype_promotion)
  yield
  config.update("jax_enable_x64", old[0])
  config.update("jax_numpy_dtype_promotion", old[1])


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request, restore_config):
  config.update("jax_enable_x64", request.param)
  return request.param


@pytest.fixture
def oracle(restore_config):
  """Real JAX, whose flags follow ours for the length of the test."""
  jax = _jax()
  old = (jax.config.jax_enable_x64, jax.config.jax_numpy_dtype_promotion)

  def sync():
    jax.config.update("jax_enable_x64", config.jax_enable_x64)
    jax.config.update("jax_numpy_dtype_promotion", config.jax_numpy_dtype_promotion)

  jax.purejax_sync = sync
  sync()
  yield jax
  jax.config.update("jax_enable_x64", old[0])
  jax.config.update("jax_numpy_dtype_promotion", old[1])


def _set_mode(oracle, mode):
  config.update("jax_numpy_dtype_promotion", mode)
  oracle.purejax_sync()


def _outcome(fn, *args, **kwargs):
  """A comparable summary: the result, or the kind of error raised."""
  try:
    return fn(*args, **kwargs)
  except Exception as e:  # noqa: BLE001 - we record the exception's kind
    if type(e).__name__ == "TypePromotionError":
      return "TypePromotionError"
    return f"error:{type(e).__name__}"


class WeakValue:
  """Stands in for a weakly typed purejax Array."""

  def __init__(self, dtype, weak_type=True):
    self.dtype = np.dtype(dtype)
    self.weak_type = weak_type
    self.shape = ()


def _jax_weak(oracle, dtype):
  try:
    from jax._src.lax import lax as lax_internal
    return lax_internal._convert_element_type(np.zeros((), dtype), np.dtype(dtype),
                                              weak_type=True)
  except (ImportError, AttributeError, TypeError):
    pytest.skip("this JAX cannot build weakly typed arrays of arbitrary dtype")


# ---------------------------------------------------------------------------
# dtype objects and canonicalization

def test_dtype_objects_are_numpy_dtypes():
  assert dtypes.bfloat16 == np.dtype(ml_dtypes.bfloat16)
  assert dtypes.float32 is np.dtype("float32") or dtypes.float32 == np.dtype("float32")
  for name in ["bool_", "int8", "uint64", "float16", "complex128", "int4", "uint4",
               "float8_e4m3fn", "float8_e5m2"]:
    assert isinstance(getattr(dtypes, name), np.dtype), name
  assert dtypes.float0.itemsize == 0 and dtypes.float0.names == ("float0",)
  assert public_dtypes.float0 == dtypes.float0


def test_public_bfloat16_is_the_scalar_type():
  """``jax.dtypes.bfloat16`` is ml_dtypes' scalar type, as in JAX: callable,
  and usable with isinstance (equinox's serialisation does both)."""
  assert public_dtypes.bfloat16 is ml_dtypes.bfloat16
  x = public_dtypes.bfloat16(1.5)
  assert isinstance(x, public_dtypes.bfloat16) and float(x) == 1.5
  assert np.dtype(public_dtypes.bfloat16) == dtypes.bfloat16
  jax = pytest.importorskip("jax")
  assert jax.dtypes.bfloat16 is public_dtypes.bfloat16


@pytest.mark.parametrize("name", ["int64", "uint64", "float64", "complex128"])
def test_canonicalize_64bit(name, x64):
  narrow = {"int64": "int32", "uint64": "uint32", "float64": "float32",
            "complex128": "complex64"}
  expected = name if x64 else narrow[name]
  for spec in (name, np.dtype(name), getattr(np, name), scalar_types.scalar_types[name]):
    assert dtypes.canonicalize_dtype(spec) == np.dtype(expected)
    assert isinstance(dtypes.canonicalize_dtype(spec), np.dtype)


def test_canonicalize_follows_runtime_flag(restore_config):
  config.update("jax_enable_x64", False)
  assert dtypes.canonicalize_dtype(np.float64) == np.float32
  config.update("jax_enable_x64", True)
  assert dtypes.canonicalize_dtype(np.float64) == np.float64
  config.update("jax_enable_x64", False)
  assert dtypes.canonicalize_dtype(np.float64) == np.float32


def test_canonicalize_python_types_and_passthrough(x64):
  assert dtypes.canonicalize_dtype(int) == (np.int64 if x64 else np.int32)
  assert dtypes.canonicalize_dtype(float) == (np.float64 if x64 else np.float32)
  assert dtypes.canonicalize_dtype(complex) == (np.complex128 if x64 else np.complex64)
  assert dtypes.canonicalize_dtype(bool) == np.bool_
  assert dtypes.canonicalize_dtype(None) == (np.float64 if x64 else np.float32)
  for keep in ["int8", "uint32", "float16", "bfloat16", "int4", "float8_e4m3fn"]:
    assert dtypes.canonicalize_dtype(keep) == getattr(dtypes, keep)
  assert dtypes.canonicalize_dtype(object) == np.dtype(object)
  assert dtypes.canonicalize_dtype(dtypes.float0) == dtypes.float0


def test_default_dtypes(x64):
  bits = 64 if x64 else 32
  assert dtypes.default_int_dtype() == np.dtype(f"int{bits}")
  assert dtypes.default_uint_dtype() == np.dtype(f"uint{bits}")
  assert dtypes.default_float_dtype() == np.dtype(f"float{bits}")
  assert dtypes.default_complex_dtype() == np.dtype(f"complex{2 * bits}")


@pytest.mark.oracle
@pytest.mark.parametrize("spec", [int, float, complex, bool, "int", "float", "double", "d", "i8",
                                  "uint", "int64", "uint64", "complex128", np.float64,
                                  np.longlong, np.intc, None, "bfloat16", "int4", object, "U3"])
def test_canonicalize_matches_oracle(spec, x64, oracle):
  assert _outcome(dtypes.canonicalize_dtype, spec) == _outcome(
      oracle.dtypes.canonicalize_dtype, spec)


# ---------------------------------------------------------------------------
# dtype() and weak types

def test_dtype_of_values(x64):
  cases = [(1, np.int64), (1.0, np.float64), (1j, np.complex128), (True, np.bool_),
           (2 ** 70, np.int64), (np.float32(1), np.float32), (np.int8(1), np.int8),
           (np.zeros(2, np.uint64), np.uint64), (np.array(1.0), np.float64),
           ("float64", np.float64), (np.float64, np.float64), (float, np.float64),
           (int, np.int64), ("bfloat16", dtypes.bfloat16),
           (scalar_types.scalar_types["float64"], np.float64),
           (WeakValue("bfloat16"), dtypes.bfloat16), (dtypes.float0, dtypes.float0)]
  for value, expected in cases:
    assert dtypes.dtype(value) == np.dtype(expected), value
    canonical = dtypes.canonicalize_dtype(expected)
    assert dtypes.dtype(value, canonicalize=True) == canonical, value


def test_dtype_errors():
  with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
    dtypes.dtype(None)
  with pytest.raises(TypeError, match=r"Cannot determine dtype of \[1\]"):
    dtypes.dtype([1])
  with pytest.raises(TypeError, match="Cannot determine dtype of"):
    dtypes.dtype(object())
  with pytest.raises(TypeError, match="not a valid JAX array type"):
    dtypes.dtype(np.zeros(2, object))
  with pytest.raises(TypeError, match="Value '<U3' with dtype <U3 is not a valid JAX array"):
    dtypes.dtype(np.dtype("U3"))
  with pytest.raises(TypeError, match="not understood"):
    dtypes.dtype("foo")


@pytest.mark.oracle
def test_dtype_matches_oracle(x64, oracle):
  from jax._src import dtypes as jax_dtypes
  values = [1, 1.0, 1j, True, np.float64(1), np.int64(3), np.zeros(1, np.uint64), int,
            float, "bfloat16", [1], object(), np.zeros(2, object), np.dtype("U3"), "foo",
            np.bool_(True), np.longdouble(1)]
  for value in values:
    ours = _outcome(dtypes.dtype, value, canonicalize=True)
    theirs = _outcome(jax_dtypes.dtype, value)
    assert ours == theirs, value


def test_weak_typing():
  assert dtypes.is_weakly_typed(1) and dtypes.is_weakly_typed(1.5) and dtypes.is_weakly_typed(1j)
  assert not dtypes.is_weakly_typed(True)
  assert not dtypes.is_weakly_typed(np.float64(1.0))  # a float subclass, but strong
  assert not dtypes.is_weakly_typed(np.zeros(3))
  assert dtypes.is_weakly_typed(WeakValue("float32"))
  assert not dtypes.is_weakly_typed(WeakValue("float32", weak_type=False))
  assert dtypes.is_python_scalar(True) and dtypes.is_python_scalar(3)
  assert not dtypes.is_python_scalar(np.int32(3)) and not dtypes.is_python_scalar("3")


# ---------------------------------------------------------------------------
# promote_types

def test_promote_types_known_facts(x64):
  pt = dtypes.promote_types
  assert pt(np.int8, np.uint8) == np.int16
  assert pt(np.uint64, np.int64) == np.float64
  assert pt(dtypes.bfloat16, np.float16) == np.float32
  assert pt(np.int32, np.float16) == np.float16
  assert pt(np.bool_, np.int8) == np.int8
  assert pt(np.float32, np.complex64) == np.complex64
  assert pt(np.float64, np.complex64) == np.complex128
  assert pt(np.int64, np.int8) == np.int64  # promote_types does not canonicalize
  assert pt(np.int8, np.uint32) == (np.int64 if x64 else np.int32)
  assert pt(int, np.int8) == np.int8  # Python types are weak
  assert pt(float, np.int8) == np.float64
  assert pt("float32", "int8") == np.float32
  with pytest.raises(dtypes.TypePromotionError, match="4-bit integers"):
    pt(dtypes.int4, np.int8)
  with pytest.raises(dtypes.TypePromotionError, match="8-bit floats"):
    pt(dtypes.float8_e4m3fn, np.float32)
  with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
    pt(dtypes.float0, np.int8)


def test_promote_types_is_symmetric_and_idempotent(x64):
  for a, b in itertools.product(ALL_DTYPES, repeat=2):
    ab, ba = _outcome(dtypes.promote_types, a, b), _outcome(dtypes.promote_types, b, a)
    assert ab == ba, (a, b)
  for a in ALL_DTYPES:
    assert dtypes.promote_types(a, a) == a


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_promote_types_lattice_matches_oracle(mode, x64, oracle):
  _set_mode(oracle, mode)
  specs = ALL_DTYPES + [int, float, complex, bool]
  mismatches = []
  for a, b in itertools.product(specs, repeat=2):
    ours = _outcome(dtypes.promote_types, a, b)
    theirs = _outcome(oracle.numpy.promote_types, a, b)
    if ours != theirs:
      mismatches.append((a, b, ours, theirs))
  assert not mismatches


# ---------------------------------------------------------------------------
# result_type

def test_result_type_known_facts(x64):
  rt = dtypes.result_type
  default_float = np.float64 if x64 else np.float32
  default_int = np.int64 if x64 else np.int32
  assert rt(np.zeros(2, np.int8), 1) == np.int8
  assert rt(np.zeros(2, np.uint8), 1) == np.uint8
  assert rt(np.zeros(2, np.int32), 5.0, return_weak_type_flag=True) == (default_float, True)
  assert rt(np.zeros(2, np.float16), 5.0, return_weak_type_flag=True) == (np.float16, False)
  assert rt(1, 1.0, return_weak_type_flag=True) == (default_float, True)  # jnp.add(1, 1.0)
  assert rt(1, return_weak_type_flag=True) == (default_int, True)
  assert rt(True, return_weak_type_flag=True) == (np.bool_, False)
  assert rt(True, 1, return_weak_type_flag=True) == (default_int, True)
  assert rt(np.float32, 1j, return_weak_type_flag=True) == (np.complex64, False)
  assert rt(np.float64) == default_float  # canonicalized
  assert rt(np.zeros(2, dtypes.bfloat16), 2.0) == dtypes.bfloat16
  assert rt(WeakValue(np.int8), np.zeros(2, np.uint8)) == np.uint8
  assert rt(WeakValue(np.uint8), return_weak_type_flag=True) == (
      np.uint64 if x64 else np.uint32, True)


def test_result_type_errors():
  with pytest.raises(ValueError, match="at least one array or dtype is required"):
    dtypes.result_type()
  with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
    dtypes.result_type(dtypes.float0, np.float32)
  assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0
  with pytest.raises(dtypes.TypePromotionError) as info:
    dtypes.result_type(np.zeros(1, dtypes.int4), 1.0)
  assert "<class 'float'>" in str(info.value) and "'int4'" in str(info.value)
  assert isinstance(info.value, ValueError)


def test_strict_mode(restore_config):
  config.update("jax_numpy_dtype_promotion", "strict")
  rt = dtypes.result_type
  assert rt(np.float32, np.float32) == np.float32
  assert rt(np.zeros(1, np.float32), 1) == np.float32  # weak int joins a float
  assert rt(np.zeros(1, np.complex64), 1.0) == np.complex64
  assert rt(np.zeros(1, np.int8), 1) == np.int8
  with pytest.raises(dtypes.TypePromotionError, match="jax_numpy_dtype_promotion=strict"):
    rt(np.zeros(1, np.int32), 1.0)
  with pytest.raises(dtypes.TypePromotionError, match="jax_numpy_dtype_promotion=strict"):
    rt(np.float32, np.int32)
  with pytest.raises(dtypes.TypePromotionError):
    rt(True, 1)
  with pytest.raises(dtypes.TypePromotionError):
    dtypes.promote_types(np.int8, np.int16)


def _weak_scalars():
  return [True, 1, 1.0, 1j]


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_result_type_with_python_scalars_matches_oracle(mode, x64, oracle):
  _set_mode(oracle, mode)
  mismatches = []
  operands = [np.zeros(1, dt) for dt in ALL_DTYPES] + _weak_scalars()
  for a, b in itertools.product(operands, repeat=2):
    ours = _outcome(dtypes.result_type, a, b, return_weak_type_flag=True)
    theirs = _outcome(oracle.dtypes.result_type, a, b, return_weak_type_flag=True)
    if ours != theirs:
      mismatches.append((a, b, ours, theirs))
  assert not mismatches


@pytest.mark.oracle
def test_result_type_many_operands_matches_oracle(x64, oracle):
  rng = np.random.default_rng(0)
  pool = [np.zeros(1, np.dtype(n)) for n in STANDARD_NAMES] + _weak_scalars()
  pool += [np.zeros(1, dtypes.int4), np.zeros(1, dtypes.float8_e4m3fn)]
  for _ in range(400):
    args = [pool[i] for i in rng.integers(0, len(pool), size=rng.integers(1, 5))]
    ours = _outcome(dtypes.result_type, *args, return_weak_type_flag=True)
    theirs = _outcome(oracle.dtypes.result_type, *args, return_weak_type_flag=True)
    assert ours == theirs, args


@pytest.mark.oracle
def test_result_type_weak_arrays_matches_oracle(x64, oracle):
  names = STANDARD_NAMES + ["float8_e4m3fn"]
  weak_names = ["bool", "int8", "uint8", "uint16", "int32", "bfloat16", "float16", "float32",
                "complex64", "float8_e4m3fn"]
  mismatches = []
  for w in weak_names:
    ours_weak = WeakValue(np.dtype(scalar_types.scalar_types[w]))
    theirs_weak = _jax_weak(oracle, np.dtype(scalar_types.scalar_types[w]))
    others = [(np.zeros(1, np.dtype(scalar_types.scalar_types[n])),) * 2 for n in names]
    others += [(s, s) for s in _weak_scalars()]
    others += [(WeakValue(np.dtype(scalar_types.scalar_types[n])),
                _jax_weak(oracle, np.dtype(scalar_types.scalar_types[n]))) for n in weak_names]
    cases = [((ours_weak,), (theirs_weak,))]
    cases += [((ours_weak, o), (theirs_weak, t)) for o, t in others]
    for ours_args, theirs_args in cases:
      ours = _outcome(dtypes.result_type, *ours_args, return_weak_type_flag=True)
      theirs = _outcome(oracle.dtypes.result_type, *theirs_args, return_weak_type_flag=True)
      if ours != theirs:
        mismatches.append((w, theirs_args[1:], ours, theirs))
  assert not mismatches


def _normalized_message(fn, *args):
  """The error message, with the (unordered) input-dtype tuple sorted."""
  import ast
  import re
  try:
    fn(*args)
  except Exception as e:  # noqa: BLE001
    match = re.match(r"Input dtypes (\(.*?\)) have", str(e))
    assert match, str(e)
    names = tuple(sorted(ast.literal_eval(match.group(1))))
    return str(e).replace(match.group(1), repr(names), 1)
  raise AssertionError(f"no error for {args}")


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_promotion_error_messages_match_oracle(mode, restore_config, oracle):
  _set_mode(oracle, mode)
  cases = [("int4", "int8"), ("float8_e4m3fn", "float32"), ("int2", "float4_e2m1fn"),
           ("float6_e2m3fn", "float4_e2m1fn"), ("float8_e5m2", "int4"), ("uint1", "uint4")]
  if mode == "strict":
    cases += [("float32", "int32"), ("bool", "int8")]
  for a, b in cases:
    args = [np.zeros(1, np.dtype(scalar_types.scalar_types[n])) for n in (a, b)]
    ours = _normalized_message(dtypes.result_type, *args)
    assert ours == _normalized_message(oracle.dtypes.result_type, *args)
  for args in [(np.zeros(1, dtypes.int4), 1.0), (np.zeros(1, dtypes.float8_e4m3fn), 1j)]:
    assert _normalized_message(dtypes.result_type, *args) == _normalized_message(
        oracle.dtypes.result_type, *args)


def test_safe_to_cast():
  assert dtypes.safe_to_cast(np.int8, np.int16)
  assert not dtypes.safe_to_cast(np.int16, np.int8)
  assert dtypes.safe_to_cast(1, np.int8)
  assert not dtypes.safe_to_cast(np.uint8, np.int8)


# ---------------------------------------------------------------------------
# user-requested dtypes and the x64 warning

@pytest.mark.parametrize("spec", ["float64", np.float64, np.dtype("float64"), "double",
                                  "scalar_type"])
def test_x64_warning_text(spec, restore_config):
  config.update("jax_enable_x64", False)
  if spec == "scalar_type":
    spec = scalar_types.scalar_types["float64"]
  expected = X64_WARNING.format(req="float64", where=" requested in zeros", got="float32")
  with pytest.warns(UserWarning) as record:
    out = dtypes.canonicalize_user_dtype(spec, "zeros")
  assert out == np.float32
  assert [str(w.message) for w in record] == [expected]


def test_x64_warning_without_function_name(restore_config):
  config.update("jax_enable_x64", False)
  expected = X64_WARNING.format(req="int64", where="", got="int32")
  with pytest.warns(UserWarning) as record:
    dtypes.check_user_dtype_supported(scalar_types.int_)
  assert str(record[0].message) == expected
  with pytest.warns(UserWarning, match="dtype uint64 requested in f is not available"):
    dtypes.check_user_dtype_supported("uint", "f")
  with pytest.warns(UserWarning, match="truncated to dtype complex64"):
    dtypes.check_user_dtype_supported(np.complex128)


def test_x64_warning_points_at_caller(restore_config):
  config.update("jax_enable_x64", False)
  with pytest.warns(UserWarning) as record:
    dtypes.canonicalize_user_dtype("float64")
  assert record[0].filename == __file__


def test_no_warning_when_not_needed(restore_config):
  config.update("jax_enable_x64", False)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert dtypes.canonicalize_user_dtype(float) == np.float32
    assert dtypes.canonicalize_user_dtype(int) == np.int32
    assert dtypes.canonicalize_user_dtype("float32") == np.float32
    assert dtypes.canonicalize_user_dtype(dtypes.bfloat16) == dtypes.bfloat16
    assert dtypes.canonicalize_user_dtype(None) is None
    assert dtypes.to_numpy_dtype("int8") == np.int8
    config.update("jax_enable_x64", True)
    assert dtypes.canonicalize_user_dtype("float64") == np.float64


def test_invalid_user_dtypes():
  with pytest.raises(TypeError, match="JAX only supports number, bool, and string dtypes, "
                                      "got dtype U3 in zeros"):
    dtypes.check_user_dtype_supported("U3", "zeros")
  with pytest.raises(TypeError, match="got dtype <class 'object'>$"):
    dtypes.check_user_dtype_supported(object)
  with pytest.raises(TypeError, match="not understood"):
    dtypes.check_user_dtype_supported("foo")
  with pytest.raises(TypeError, match="Cannot interpret '3' as a data type"):
    dtypes.check_user_dtype_supported(3)
  with pytest.raises(ValueError, match="Passing an array as a dtype argument"):
    dtypes.check_user_dtype_supported(np.zeros(3))
  dtypes.check_user_dtype_supported(dtypes.float0)  # tangent dtype is allowed


@pytest.mark.oracle
@pytest.mark.parametrize("spec", ["float64", np.float64, np.dtype("float64"), "int", "uint",
                                  "complex128", "d"])
def test_x64_warning_matches_oracle(spec, restore_config, oracle):
  config.update("jax_enable_x64", False)
  oracle.purejax_sync()
  with warnings.catch_warnings(record=True) as theirs:
    warnings.simplefilter("always")
    oracle.numpy.zeros(1, dtype=spec)
  with warnings.catch_warnings(record=True) as ours:
    warnings.simplefilter("always")
    dtypes.canonicalize_user_dtype(spec, "zeros")
  assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
  assert [w.category for w in ours] == [w.category for w in theirs]


# ---------------------------------------------------------------------------
# issubdtype, isdtype, kinds

def test_issubdtype_extended_types():
  assert dtypes.issubdtype(dtypes.bfloat16, np.floating)
  assert dtypes.issubdtype(dtypes.bfloat16, np.inexact)
  assert not dtypes.issubdtype(dtypes.bfloat16, np.float32)
  assert dtypes.issubdtype(dtypes.int4, np.signedinteger)
  assert dtypes.issubdtype(dtypes.uint4, np.unsignedinteger)
  assert dtypes.issubdtype(dtypes.float8_e4m3fn, np.number)
  assert not dtypes.issubdtype(dtypes.int4, np.floating)
  assert dtypes.issubdtype(dtypes.float0, dtypes.float0)
  assert dtypes.issubdtype(dtypes.float0, np.generic)
  assert not dtypes.issubdtype(dtypes.float0, np.number)
  assert not dtypes.issubdtype(np.float32, dtypes.float0)
  assert dtypes.issubdtype(scalar_types.float32, scalar_types.floating)
  assert dtypes.issubdtype(np.float32, scalar_types.float32)
  assert not dtypes.issubdtype(np.float32, dtypes.extended)
  assert public_dtypes.issubdtype(public_dtypes.prng_key, public_dtypes.extended)


@pytest.mark.oracle
def test_issubdtype_matches_oracle(oracle):
  jnp = oracle.numpy

  def specs(mod):
    return ([mod.float32, mod.bfloat16, mod.int4, mod.uint4, mod.float8_e4m3fn, mod.bool_,
             mod.complex64, mod.int64, "bfloat16", "float32", np.float32, np.dtype("float32"),
             int, float, bool, complex, None]
            + [np.floating, np.integer, np.signedinteger, np.unsignedinteger, np.inexact,
               np.number, np.generic, np.complexfloating, np.bool_, np.float64])

  ours_specs = specs(scalar_types) + [dtypes.float0, public_dtypes.extended]
  theirs_specs = specs(jnp) + [oracle.dtypes.float0, oracle.dtypes.extended]
  mismatches = []
  for (oa, ta), (ob, tb) in itertools.product(zip(ours_specs, theirs_specs), repeat=2):
    ours, theirs = _outcome(dtypes.issubdtype, oa, ob), _outcome(oracle.dtypes.issubdtype, ta, tb)
    if ours != theirs:
      mismatches.append((ta, tb, ours, theirs))
  assert not mismatches


@pytest.mark.oracle
def test_isdtype_matches_oracle(oracle):
  kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
           "complex floating", "numeric", ("bool", "integral"), np.float32, "float32", float,
           None, "foo", np.floating]
  for name, kind in itertools.product(ALL_NAMES, kinds):
    ours = _outcome(dtypes.isdtype, scalar_types.scalar_types[name], kind)
    theirs = _outcome(oracle.numpy.isdtype, getattr(oracle.numpy, name), kind)
    assert ours == theirs, (name, kind)


def test_kind_helpers():
  assert dtypes.kind_of(dtypes.bfloat16) == "f"
  assert dtypes.kind_of(dtypes.int4) == "i"
  assert dtypes.kind_of(dtypes.uint4) == "u"
  assert dtypes.kind_of(np.complex64) == "c"
  assert dtypes.kind_of(np.bool_) == "b"
  assert dtypes.is_float(dtypes.float8_e5m2) and not dtypes.is_float(np.int8)
  assert dtypes.is_int(dtypes.uint4) and dtypes.is_signed_int(np.int8)
  assert dtypes.is_unsigned_int(np.uint8) and not dtypes.is_unsigned_int(np.int8)
  assert dtypes.is_complex(np.complex128) and dtypes.is_inexact(np.complex128)
  assert dtypes.is_numeric(np.int8) and not dtypes.is_numeric(np.bool_)
  assert dtypes.is_bool(scalar_types.bool_)


@pytest.mark.oracle
def test_inexact_helpers_match_oracle(oracle):
  from jax._src import dtypes as jax_dtypes
  # Deliberate differences: JAX leaves int1/int2/uint1/uint2 integral in
  # to_inexact_dtype (unlike int4), and claims float4/float6/float8_e8m0fnu
  # support inf, which those formats cannot represent.
  skip = {("to_inexact_dtype", n) for n in ("int1", "int2", "uint1", "uint2")}
  skip |= {("to_floating_dtype", n) for n in ("int1", "int2", "uint1", "uint2")}
  skip |= {("supports_inf", n) for n in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn",
                                         "float8_e8m0fnu")}
  checked = 0
  for dt in ALL_DTYPES:
    for name in ["to_inexact_dtype", "to_complex_dtype", "to_floating_dtype",
                 "to_numeric_dtype", "supports_inf", "short_dtype_name"]:
      if (name, dt.name) in skip:
        continue
      assert getattr(dtypes, name)(dt) == getattr(jax_dtypes, name)(dt), (name, dt)
      checked += 1
  assert checked > 100
  assert not dtypes.supports_inf(dtypes.float8_e4m3fn) and dtypes.supports_inf(np.float16)
  assert dtypes.to_inexact_dtype(dtypes.int2) == np.float32


# ---------------------------------------------------------------------------
# finfo / iinfo / itemsize_bits / scalar_type_of

def test_finfo_iinfo():
  assert dtypes.finfo(dtypes.bfloat16).eps == ml_dtypes.finfo(ml_dtypes.bfloat16).eps
  assert float(dtypes.finfo(dtypes.bfloat16).eps) == 2.0 ** -7
  assert float(dtypes.finfo(np.float16).max) == 65504.0
  assert dtypes.finfo(scalar_types.float32).eps == np.finfo(np.float32).eps
  assert dtypes.finfo("float64").bits == 64
  assert float(dtypes.finfo(dtypes.float8_e4m3fn).max) == 448.0
  assert dtypes.iinfo(dtypes.int4).min == -8 and dtypes.iinfo(dtypes.int4).max == 7
  assert dtypes.iinfo(scalar_types.uint8).max == 255
  assert dtypes.iinfo(np.int32).max == np.iinfo(np.int32).max
  assert public_dtypes.finfo is dtypes.finfo and public_dtypes.iinfo is dtypes.iinfo


def test_itemsize_bits():
  assert dtypes.itemsize_bits(dtypes.int4) == 4
  assert dtypes.itemsize_bits("uint2") == 2
  assert dtypes.itemsize_bits(dtypes.float4_e2m1fn) == 4
  assert dtypes.itemsize_bits(np.bool_) == 8
  assert dtypes.itemsize_bits(scalar_types.bfloat16) == 16
  assert dtypes.itemsize_bits(float) == 64
  with pytest.raises(ValueError, match="unexpected input"):
    dtypes.itemsize_bits(dtypes.float0)


@pytest.mark.oracle
def test_itemsize_bits_and_scalar_type_of_match_oracle(oracle):
  for dt in ALL_DTYPES:
    assert dtypes.itemsize_bits(dt) == oracle.dtypes.itemsize_bits(dt), dt
    value = np.zeros((), dt)
    assert dtypes.scalar_type_of(value) == oracle.dtypes.scalar_type_of(value), dt
  for value in [1, 1.0, True, 1j, np.float32(1), np.uint8(1), np.bool_(True)]:
    assert dtypes.scalar_type_of(value) == oracle.dtypes.scalar_type_of(value)


# ---------------------------------------------------------------------------
# scalar types

def test_scalar_type_repr_and_dtype():
  f32 = scalar_types.float32
  assert repr(f32) == "<class 'purejax.numpy.float32'>"
  assert repr(scalar_types.bool_) == "<class 'purejax.numpy.bool'>"
  assert repr(scalar_types.bfloat16) == "<class 'purejax.numpy.bfloat16'>"
  assert f32.dtype == np.dtype("float32") and isinstance(f32.dtype, np.dtype)
  assert np.dtype(f32) == np.float32
  assert np.dtype(scalar_types.bfloat16) == dtypes.bfloat16
  assert np.zeros(2, scalar_types.int4).dtype == dtypes.int4
  for name in ALL_NAMES:
    cls = scalar_types.scalar_types[name]
    assert cls.__name__ == name and cls.__module__ == "purejax.numpy"
    assert getattr(scalar_types, name) is cls


def test_scalar_type_aliases_and_abstract_types():
  assert scalar_types.bool_ is scalar_types.scalar_types["bool"]
  assert scalar_types.int_ is scalar_types.int64
  assert scalar_types.uint is scalar_types.uint64
  assert scalar_types.float_ is scalar_types.float64
  assert scalar_types.complex_ is scalar_types.complex128
  assert scalar_types.double is scalar_types.float64
  assert scalar_types.csingle is scalar_types.complex64
  assert scalar_types.floating is np.floating and scalar_types.generic is np.generic


def test_scalar_type_comparisons():
  f32 = scalar_types.float32
  assert f32 == np.float32 and np.float32 == f32
  assert np.dtype("float32") == f32
  assert f32 != np.float64 and f32 != "float32"
  assert hash(f32) == hash(np.float32)
  assert isinstance(np.float32(1), f32)
  assert not isinstance(1.0, f32) and not isinstance(np.float64(1), f32)
  assert dtypes.issubdtype(f32, np.floating) and not dtypes.issubdtype(f32, np.integer)
  assert np.issubdtype(f32, np.floating)
  assert dtypes.issubdtype(scalar_types.bfloat16, scalar_types.inexact)


@pytest.mark.oracle
def test_scalar_type_names_match_oracle(oracle):
  jnp = oracle.numpy
  for name in ALL_NAMES:
    assert hasattr(jnp, name), name
    assert np.dtype(getattr(jnp, name)) == np.dtype(getattr(scalar_types, name)), name
  for alias in scalar_types._ALIASES:
    assert np.dtype(getattr(jnp, alias)) == np.dtype(getattr(scalar_types, alias)), alias
    assert repr(getattr(jnp, alias)).replace("jax.", "purejax.") == repr(
        getattr(scalar_types, alias))
  for name in scalar_types._ABSTRACT:
    assert getattr(jnp, name) is getattr(scalar_types, name)


@pytest.mark.oracle
def test_public_module_names_match_oracle(oracle):
  theirs = {n for n in dir(oracle.dtypes) if not n.startswith("_")}
  ours = {n for n in dir(public_dtypes) if not n.startswith("_")}
  assert theirs <= ours


def test_python_ints_must_fit_the_default_int_type():
  import purejax.numpy as jnp
  with pytest.raises(OverflowError, match="An overflow was encountered while parsing an "
                     "argument to a jitted computation, whose argument path is y"):
    jnp.int32(1) + 2 ** 40
  with pytest.raises(OverflowError):
    jnp.float32(1) * 2 ** 31
  assert int(jnp.int32(1) + (-2 ** 31)) == -2 ** 31 + 1
  assert int(jnp.int8(1) + 300) == 45   # fits int32, then wraps to int8 as JAX
