"""purejax.lax against the installed JAX (each test skips without it): error
messages, values, dtypes and weak types, and the text of traced jaxprs."""
import functools
import warnings

import numpy as np
import pytest

from purejax import lax
from purejax._src.api import make_jaxpr
from test_lax import ERRORS, X, _error_id, bf16

@pytest.fixture(scope="module")
def jax():
  return pytest.importorskip("jax")


@pytest.mark.oracle
@pytest.mark.parametrize("fn,error,message", ERRORS, ids=[_error_id(c) for c in ERRORS])
def test_error_messages_are_jaxs(jax, fn, error, message):
  with pytest.raises(error) as info:
    fn(jax.lax)
  assert str(info.value) == message


def _run(fn, module):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
      return fn(module)
    except Exception as err:  # compared below, class and message
      return err


def _leaves(x):
  return [l for item in x for l in _leaves(item)] if isinstance(x, (tuple, list)) else [x]


def _assert_same(ours, theirs, tol):
  if isinstance(theirs, Exception):
    assert isinstance(ours, Exception), f"JAX raised {theirs!r}, purejax gave {ours!r}"
    assert (type(ours).__name__, str(ours)) == (type(theirs).__name__, str(theirs))
    return
  assert not isinstance(ours, Exception), f"purejax raised {ours!r}"
  ours, theirs = _leaves(ours), _leaves(theirs)
  assert len(ours) == len(theirs)
  for a, b in zip(ours, theirs):
    assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type)
    a, b = np.asarray(a), np.asarray(b)
    if tol and np.issubdtype(a.dtype, np.inexact):
      np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    else:
      np.testing.assert_array_equal(a, b)


SPECIAL = np.array([0.0, -0.0, 1.5, -2.5, np.inf, -np.inf, np.nan, 1e-30, 3e38], np.float32)
POS = np.array([0.25, 1.0, 2.5, 100.0], np.float32)
INTS = np.array([-7, -1, 0, 1, 7, 2**31 - 1], np.int32)
UNARY_F = ["neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log",
           "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan", "atan", "sinh", "cosh",
           "asinh", "sqrt", "rsqrt", "cbrt", "abs", "square"]
BINARY_F = ["add", "sub", "mul", "div", "rem", "max", "min", "atan2", "nextafter", "pow",
            "eq", "ne", "lt", "le", "gt", "ge", "complex"]
BINARY_I = ["add", "sub", "mul", "div", "rem", "max", "min", "bitwise_and", "bitwise_or",
            "bitwise_xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
            "eq", "lt"]

VALUE_CASES = (
    [(f"{n}-special", functools.partial(lambda n, L: getattr(L, n)(SPECIAL), n))
     for n in UNARY_F]
    + [(f"{n}-pos", functools.partial(lambda n, L: getattr(L, n)(POS), n))
       for n in ["log", "acosh", "sqrt", "rsqrt"]]
    + [(f"{n}-f32", functools.partial(lambda n, L: getattr(L, n)(SPECIAL, SPECIAL[::-1]), n))
       for n in BINARY_F]
    + [(f"{n}-i32", functools.partial(
        lambda n, L: getattr(L, n)(INTS, np.int32([2, -3, 0, 33, -1, 1])), n))
       for n in BINARY_I]
    + [(f"{n}-weak", functools.partial(lambda n, L: getattr(L, n)(2.0, 0.5), n))
       for n in ["add", "mul", "pow", "max", "atan2"]]
    + [
        ("integer_pow", lambda L: L.integer_pow(SPECIAL, 3)),
        ("integer_pow-neg", lambda L: L.integer_pow(POS, -2)),
        ("not-bool", lambda L: L.bitwise_not(np.array([True, False]))),
        ("clz-i32", lambda L: L.clz(INTS)),
        ("clz-u8", lambda L: L.clz(np.uint8([0, 1, 128, 255, 17]))),
        ("clz-i16", lambda L: L.clz(np.int16([0, -1, 3, 2**14]))),
        ("population_count-i32", lambda L: L.population_count(INTS)),
        ("population_count-u16", lambda L: L.population_count(np.uint16([0, 65535, 1024]))),
        ("abs-complex", lambda L: L.abs(np.complex64([3 + 4j, -1j]))),
        ("conj-real", lambda L: L.conj(np.float32(2))),
        ("clamp", lambda L: L.clamp(np.float32(0), SPECIAL, np.float32(2))),
        ("select_n", lambda L: L.select_n(np.int32([0, 1, 2, 5]), POS, POS * 2, POS * 3)),
        ("convert-u8", lambda L: L.convert_element_type(SPECIAL, np.uint8)),
        ("convert-i32", lambda L: L.convert_element_type(SPECIAL, np.int32)),
        ("convert-bool", lambda L: L.convert_element_type(SPECIAL, np.bool_)),
        ("convert-f16", lambda L: L.convert_element_type(SPECIAL, np.float16)),
        ("reduce_sum-i8", lambda L: L.reduce_sum(np.int8([100, 100, 100]), (0,))),
        ("reduce_max-nan", lambda L: L.reduce_max(SPECIAL, (0,))),
        ("reduce_min-zero", lambda L: L.reduce_min(np.float32([0.0, -0.0]), (0,))),
        ("reduce_max-empty", lambda L: L.reduce_max(np.zeros((0, 2), np.int8), (0,))),
        ("reduce_prod", lambda L: L.reduce_prod(POS, (0,))),
        ("reduce_and-int", lambda L: L.reduce_and(np.int32([7, 5, 13]), (0,))),
        ("argmax-nan", lambda L: L.argmax(SPECIAL, 0, np.int32)),
        ("argmin-nan", lambda L: L.argmin(SPECIAL, 0, np.uint8)),
        ("reduce-general", lambda L: L.reduce(X, np.float32(2), L.mul, (1,))),
        ("full-weak", lambda L: L.full((2,), 3)),
        ("full-dtype", lambda L: L.full((2,), -1.7, np.int32)),
        ("full_like-weak", lambda L: L.full_like(2.0, 3)),
        ("full_like-shape", lambda L: L.full_like(X, 1, np.int8, (2,))),
        ("iota-complex", lambda L: L.iota(np.complex64, 3)),
        ("broadcast-weak", lambda L: L.broadcast(1.0, (2, 2))),
        ("pad-weak", lambda L: L.pad(L.full((2,), 1.0), 0.0, ((1, 1, 1),))),
        ("pad-neg", lambda L: L.pad(X, np.float32(9), ((0, -1, 0), (-2, 1, 2), (1, 0, 1)))),
        ("slice-clamped", lambda L: L.slice(X, (-1, 0, 3), (1, 2, 4))),
        ("dynamic_slice", lambda L: L.dynamic_slice(X, (np.int8(-1), np.int8(5), np.int8(1)),
                                                    (1, 2, 2))),
        ("dynamic_update_slice", lambda L: L.dynamic_update_slice(
            X, np.zeros((2, 2, 2), np.float32), (-1, -1, -1))),
        ("dynamic_index_in_dim", lambda L: L.dynamic_index_in_dim(X, -1, 1, False)),
        ("dynamic_update_index_in_dim", lambda L: L.dynamic_update_index_in_dim(
            X, np.zeros((2, 3), np.float32), 9, 2)),
        ("concatenate-weak", lambda L: L.concatenate([L.full((1,), 1.0), L.full((2,), 2.0)],
                                                     0)),
        ("dot-i8", lambda L: L.dot(np.int8([[100, 100]]), np.int8([[2], [3]]))),
        ("dot-mixed", lambda L: L.dot_general(X.astype(np.int16), X.astype(np.uint16),
                                              (([2], [2]), ([0], [0])))),
        ("dot-pref", lambda L: L.dot_general(X, X, (([2], [2]), ([0], [0])),
                                             preferred_element_type=np.float16)),
        ("dot-bf16", lambda L: L.dot_general(X.astype(bf16), X.astype(np.float16),
                                             (([1, 2], [1, 2]), ([], [])))),
        ("dot-weak", lambda L: L.dot(L.full((2, 2), 1.0), L.full((2,), 2.0))),
    ])


@pytest.mark.oracle
@pytest.mark.parametrize("name,fn", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_dtypes_and_weak_types_match_jax(jax, name, fn):
  tol = 2e-6 if name.split("-")[0] in {
      "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos", "tan",
      "atan", "sinh", "cosh", "asinh", "acosh", "sqrt", "rsqrt", "cbrt", "atan2", "pow",
      "dot", "reduce_prod"} else 0
  _assert_same(_run(fn, lax), _run(fn, jax.lax), tol)


JAXPR_CASES = [
    ("broadcast_in_dim", lambda L: lambda x: L.broadcast_in_dim(x, (4, 2, 3), (1, 2))),
    ("broadcast_scalar", lambda L: lambda x: L.broadcast_in_dim(
        L.squeeze(L.slice(x, (0, 0), (1, 1)), (0, 1)), (4, 2), ())),
    ("broadcast_identity", lambda L: lambda x: L.broadcast(x, ())),
    ("broadcast_to_rank", lambda L: lambda x: L.broadcast_to_rank(x, 4)),
    ("reshape", lambda L: lambda x: L.reshape(x, (3, 2))),
    ("reshape_dims", lambda L: lambda x: L.reshape(x, (3, 2), (1, 0))),
    ("reshape_identity", lambda L: lambda x: L.reshape(x, (2, 3))),
    ("collapse", lambda L: lambda x: L.collapse(x, 0, 2)),
    ("transpose", lambda L: lambda x: L.transpose(x, (1, 0))),
    ("transpose_identity", lambda L: lambda x: L.transpose(x, (0, 1))),
    ("squeeze_expand", lambda L: lambda x: L.squeeze(L.expand_dims(x, (0, 2)), (0,))),
    ("rev", lambda L: lambda x: L.rev(x, (0,))),
    ("slice", lambda L: lambda x: L.slice(x, (0, 1), (2, 3))),
    ("slice_strided", lambda L: lambda x: L.slice(x, (0, 1), (2, 3), (1, 2))),
    ("slice_in_dim", lambda L: lambda x: L.slice_in_dim(x, -2, None, axis=1)),
    ("index_in_dim", lambda L: lambda x: L.index_in_dim(x, 1, 1, False)),
    ("dynamic_slice_const", lambda L: lambda x: L.dynamic_slice(x, (1, -1), (1, 2))),
    ("dynamic_slice_in_dim", lambda L: lambda x: L.dynamic_slice_in_dim(x, 1, 2, axis=1)),
    ("dynamic_index_in_dim", lambda L: lambda x: L.dynamic_index_in_dim(x, -1, 1, False)),
    ("concatenate", lambda L: lambda x: L.concatenate([x, x], 1)),
    ("concatenate_one", lambda L: lambda x: L.concatenate([x], 1)),
    ("pad", lambda L: lambda x: L.pad(x, 0.0, ((1, -1, 1), (0, 0, 0)))),
    ("iota", lambda L: lambda x: L.iota(np.int32, 3)),
    ("broadcasted_iota", lambda L: lambda x: L.broadcasted_iota(np.float32, (2, 3), 1)),
    ("full", lambda L: lambda x: L.full((2, 3), 1.0)),
    ("full_int", lambda L: lambda x: L.full((2, 3), 1.0, np.int32)),
    ("full_like", lambda L: lambda x: L.full_like(x, 2)),
    ("reductions", lambda L: lambda x: (L.reduce_sum(x, (0,)), L.reduce_max(x, (1,)),
                                        L.reduce_min(x, ()), L.reduce_prod(x, (0, 1)))),
    ("logical_reductions", lambda L: lambda x: (L.reduce_and(L.gt(x, 1.0), (0,)),
                                                L.reduce_or(L.gt(x, 1.0), (1,)))),
    ("argmax", lambda L: lambda x: (L.argmax(x, 0, np.int32), L.argmin(x, 1, np.uint8))),
    ("reduce_monoid", lambda L: lambda x: L.reduce(x, -np.inf, L.max, (0,))),
    ("reduce_general", lambda L: lambda x: L.reduce(x, 1.0, L.add, (0,))),
    ("reduce_pytree", lambda L: lambda x: L.reduce(
        (x, x), (0.0, 0.0), lambda a, b: (L.add(a[0], b[0]), L.mul(a[1], b[1])), (0,))),
    ("dot", lambda L: lambda x: L.dot(x, L.transpose(x, (1, 0)))),
    ("dot_general_prec", lambda L: lambda x: L.dot_general(
        x, x, (([1], [1]), ([], [])), precision="highest", preferred_element_type=np.float32)),
    ("dot_general_tuple_prec", lambda L: lambda x: L.dot_general(
        x, x, ((1, 1), ((), ())), precision=(L.Precision.HIGH, L.Precision.DEFAULT))),
    ("dot_general_mixed", lambda L: lambda x: L.dot_general(
        L.convert_element_type(x, np.int8), L.convert_element_type(x, np.int32),
        (([1], [1]), ([], [])))),
    ("elementwise", lambda L: lambda x: L.select_n(
        L.lt(x, 1.0), L.mul(L.sin(x), 2.0), L.integer_pow(L.round(x), 3))),
    ("clamp_convert", lambda L: lambda x: L.convert_element_type(
        L.clamp(0.0, x, 1.0), np.int32)),
]

DYNAMIC_JAXPR_CASES = [
    ("dynamic_slice", lambda L: lambda x, i: L.dynamic_slice(x, (i, 1), (1, 2))),
    ("dynamic_slice_array_index", lambda L: lambda x, i: L.dynamic_slice(
        x, L.broadcast(i, (2,)), (1, 2))),
    ("dynamic_update_slice", lambda L: lambda x, i: L.dynamic_update_slice(
        x, L.slice(x, (0, 0), (1, 2)), (i, -1))),
    ("dynamic_update_slice_in_dim", lambda L: lambda x, i: L.dynamic_update_slice_in_dim(
        x, L.slice(x, (0, 0), (2, 1)), i, axis=1)),
    ("dynamic_index_in_dim", lambda L: lambda x, i: L.dynamic_index_in_dim(x, i, axis=1)),
    ("dynamic_update_index_in_dim", lambda L: lambda x, i: L.dynamic_update_index_in_dim(
        x, L.index_in_dim(x, 0, 0, False), i, 0)),
    ("no_negative_indices", lambda L: lambda x, i: L.dynamic_slice(
        x, (i, i), (1, 1), allow_negative_indices=(False, True))),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,make", JAXPR_CASES, ids=[c[0] for c in JAXPR_CASES])
def test_jaxprs_print_like_jax(jax, name, make):
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  expected = str(jax.make_jaxpr(make(jax.lax))(x))
  assert str(make_jaxpr(make(lax))(x)) == expected


@pytest.mark.oracle
@pytest.mark.parametrize("index", [np.int32(1), 1, np.int8(1)], ids=["i32", "weak", "i8"])
@pytest.mark.parametrize("name,make", DYNAMIC_JAXPR_CASES,
                         ids=[c[0] for c in DYNAMIC_JAXPR_CASES])
def test_dynamic_index_jaxprs_print_like_jax(jax, name, make, index):
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  expected = _run(lambda L: str(L.make_jaxpr(make(L.lax))(x, index)), jax)
  ours = _run(lambda L: str(make_jaxpr(make(L))(x, index)), lax)
  if isinstance(expected, Exception):
    assert isinstance(ours, Exception) and str(ours) == str(expected)
  else:
    assert ours == expected


def test_max_min_order_negative_zero_below_positive_zero():
  jax = pytest.importorskip("jax")
  a = np.float32([0., -0., np.nan, 1., -0., 2., -3.])
  b = np.float32([-0., 0., 1., np.nan, -0., 2., 5.])
  for name in ("max", "min"):
    ours = np.asarray(getattr(lax, name)(a, b))
    theirs = np.asarray(getattr(jax.lax, name)(a, b))
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


@pytest.mark.parametrize("dtype", ["int64", "uint64", "int32", "uint8"])
def test_float_to_int_conversion_saturates_like_jax(x64, dtype):
  jax = pytest.importorskip("jax")
  x = np.array([1e19, np.inf, -np.inf, np.nan, 2e19, -1e19, 3.5, -2.0 ** 63], np.float64)
  with jax.enable_x64(True):
    want = np.asarray(jax.lax.convert_element_type(x, dtype))
  got = np.asarray(lax.convert_element_type(x, dtype))
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(got, want)


def test_transcendental_functions_take_accuracy_like_jax():
  import inspect
  jax = pytest.importorskip("jax")
  for name in ["cbrt", "cos", "exp", "exp2", "expm1", "log", "log1p", "logistic", "rsqrt",
               "sin", "sqrt", "tan", "tanh"]:
    ours, theirs = getattr(lax, name), getattr(jax.lax, name)
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters)
    np.testing.assert_allclose(ours(POS, accuracy=lax.Tolerance(atol=1e-3)), ours(POS))
