"""Differentiation rules of the lax primitives.

One table of op records drives ``check_grads`` (orders 1 and 2, forward and
reverse mode, float64) for every differentiable primitive; the
non-differentiable ones must give zero tangents (float0 for integer and
boolean outputs); and an oracle section compares gradients with real JAX.
"""
import functools

import numpy as np
import pytest

from purejax import lax
from purejax._src import core
from purejax._src import dtypes
from purejax._src.ad_api import grad, jvp, linearize, vjp
from purejax._src.config import config
from purejax.test_util import check_grads, check_jvp, check_vjp

F64, C128 = np.float64, np.complex128


@pytest.fixture
def x64():
  with config.override("jax_enable_x64", True):
    yield


# -- inputs -------------------------------------------------------------------

def _sample(rng, shape, dtype, domain):
  """Random values away from the points where the op is not smooth."""
  n = int(np.prod(shape))
  if domain == "any":
    x = rng.randn(n)
  elif domain == "pos":
    x = rng.uniform(0.5, 2.0, n)
  elif domain == "unit":
    x = rng.uniform(-0.8, 0.8, n)
  elif domain == "gt1":
    x = rng.uniform(1.3, 3.0, n)
  elif domain == "nonzero":
    x = rng.uniform(0.5, 2.0, n) * rng.choice([-1, 1], n)
  elif domain == "fraction":   # x / 2 stays away from integers (for rem)
    x = rng.uniform(0.3, 1.7, n) + 2 * rng.randint(-2, 3, n)
  elif domain == "near2":      # +-2, give or take: x / y keeps x / 2's fraction
    x = rng.uniform(1.97, 2.03, n) * rng.choice([-1, 1], n)
  elif domain in ("low", "high"):   # clamp bounds, lo < hi
    x = rng.uniform(-1.0, -0.2, n) if domain == "low" else rng.uniform(0.2, 1.0, n)
  elif domain == "distinct":   # well-separated values: no ties for max/min
    x = rng.permutation(n) * 0.5 + rng.uniform(-0.1, 0.1, n)
  else:
    raise ValueError(domain)
  x = x.reshape(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * _sample(rng, shape, F64, "any" if domain == "any" else "pos")
  return x.astype(dtype)


class Op:
  """A function of array arguments: shapes, dtype and domain of each."""

  def __init__(self, name, fun, shapes, dtype=F64, domain="any", tol=None):
    self.name, self.fun, self.shapes, self.dtype = name, fun, shapes, dtype
    self.domains = domain if isinstance(domain, tuple) else (domain,) * len(shapes)
    self.tol = tol

  def args(self):
    rng = np.random.RandomState(sum(map(ord, self.name)))
    return tuple(_sample(rng, s, self.dtype, d) for s, d in zip(self.shapes, self.domains))

  def __repr__(self):
    return self.name


def _unary(name, domain="any", dtype=F64, shape=(3, 4)):
  return Op(name, getattr(lax, name), [shape], dtype, domain)


def _binary(name, shapes=((3, 4), (3, 4)), domain="any", dtype=F64, tag=""):
  return Op(f"{name}{tag}", getattr(lax, name), list(shapes), dtype, domain)


UNARY = [
    _unary("neg"), _unary("exp"), _unary("exp2"), _unary("log", "pos"),
    _unary("log1p", "pos"), _unary("expm1"), _unary("tanh"), _unary("logistic"),
    _unary("sin"), _unary("cos"), _unary("tan", "unit"), _unary("asin", "unit"),
    _unary("acos", "unit"), _unary("atan"), _unary("sinh"), _unary("cosh"),
    _unary("asinh"), _unary("acosh", "gt1"), _unary("atanh", "unit"), _unary("sqrt", "pos"),
    _unary("rsqrt", "pos"), _unary("cbrt", "nonzero"), _unary("abs", "nonzero"),
    _unary("square"), _unary("abs", "any", shape=()),
]
COMPLEX = [
    _unary("exp", dtype=C128), _unary("log", "pos", dtype=C128), _unary("sin", dtype=C128),
    _unary("tanh", dtype=C128), _unary("sqrt", "pos", dtype=C128),
    _unary("abs", "nonzero", dtype=C128), _unary("square", dtype=C128),
    _unary("real", dtype=C128), _unary("imag", dtype=C128), _unary("conj", dtype=C128),
    _unary("neg", dtype=C128), _binary("mul", dtype=C128), _binary("div", domain="pos", dtype=C128),
    _binary("add", ((3, 1), ()), dtype=C128, tag="_bcast"),
    Op("conj_of_real", lax.conj, [(4,)]),
    Op("complex", lax.complex, [(3, 4), (3, 4)]),
    Op("complex_bcast", lax.complex, [(), (3,)]),
    Op("pow_complex", lax.pow, [(3,), (3,)], C128, ("pos", "any")),
]
INTEGER_POW = [Op(f"integer_pow_{y}", functools.partial(lax.integer_pow, y=y), [(5,)],
                  domain="nonzero") for y in (0, 1, 2, 3, -1, -3)]
BINARY = [
    _binary("add"), _binary("sub"), _binary("mul"), _binary("div", domain=("any", "nonzero")),
    _binary("rem", domain=("fraction", "near2")),
    Op("rem_by_2", lambda x: lax.rem(x, lax.full_like(x, 2.0)), [(3, 4)], domain="fraction"),
    _binary("max", domain="distinct"), _binary("min", domain="distinct"),
    _binary("atan2", domain=("any", "nonzero")), _binary("pow", domain=("pos", "any")),
    Op("pow_int_exponent", lambda x: lax.pow(x, np.array([0, 1, 2, 3, -2], np.int32)),
       [(5,)], domain="nonzero"),
    # (JAX's clamp rule gives the bounds no derivative where lo > hi.)
    Op("clamp", lax.clamp, [(8,), (8,), (8,)], domain=("low", "any", "high")),
    Op("clamp_scalar_bounds", lambda x: lax.clamp(-0.75, x, 0.75), [(6,)]),
    Op("select_n_bool", lambda x, y: lax.select_n(np.array([True, False, True]), x, y),
       [(3,), (3,)]),
    Op("select_n_int", lambda x, y, z: lax.select_n(np.array([[0, 1], [2, 1]], np.int32),
                                                    x, y, z), [(2, 2)] * 3),
    Op("select_n_scalar_which", lambda x, y: lax.select_n(np.array(True), x, y), [(3,), (3,)]),
]
# Rank-0 and size-1 operands broadcast inside lax binary ops.
BROADCAST = [
    _binary("add", ((3, 4), ()), tag="_scalar_rhs"), _binary("add", ((), (3, 4)), tag="_scalar_lhs"),
    _binary("sub", ((), (3,)), tag="_scalar"), _binary("sub", ((3, 1), (1, 4)), tag="_size1"),
    _binary("mul", ((3, 1), (1, 4)), tag="_size1"), _binary("mul", ((), (3, 4)), tag="_scalar"),
    _binary("div", ((3, 4), ()), domain=("any", "nonzero"), tag="_scalar_rhs"),
    _binary("div", ((), (1, 4)), domain=("any", "nonzero"), tag="_scalar_lhs"),
    _binary("max", ((1, 4), (3, 4)), domain="distinct", tag="_size1"),
    _binary("min", ((), (5,)), domain="distinct", tag="_scalar"),
    _binary("pow", ((3, 4), ()), domain=("pos", "any"), tag="_scalar"),
    _binary("pow", ((), (3, 1)), domain=("pos", "any"), tag="_scalar_base"),
    _binary("atan2", ((3, 1), (3, 4)), domain=("any", "nonzero"), tag="_size1"),
    _binary("rem", ((3, 4), ()), domain=("fraction", "near2"), tag="_scalar"),
    Op("clamp_scalar_bound_active", lambda lo, hi: lax.clamp(lo, np.float64(2.0), hi),
       [(), ()], domain=("low", "high")),
]


def _reduce_mul(x):
  return lax.reduce(x, np.float64(1), lambda a, b: a * b, (1,))


def _reduce_max_with_index(x):
  # An argmax-style reduction: an integer operand rides along without a tangent.
  def pick(a, b):
    take_a = lax.ge(a[0], b[0])
    return lax.select_n(take_a, b[0], a[0]), lax.select_n(take_a, b[1], a[1])
  index = lax.broadcasted_iota(np.int32, np.shape(x), 1)
  value, _ = lax.reduce((x, index), (np.float64(-np.inf), np.int32(0)), pick, (1,))
  return value


def _reduce_pair(x, y):
  # A variadic reduction: the (max of x, sum of y) pair.
  return lax.reduce((x, y), (np.float64(-np.inf), np.float64(0)),
                    lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]), (0,))


DNUMS = {
    "matmul": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "matvec": ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    "vecvec": ((4,), (4,), (((0,), (0,)), ((), ()))),
    "outer": ((3,), (2,), (((), ()), ((), ()))),
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    "batch_not_leading": ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    "two_contractions_swapped": ((2, 3, 4), (4, 5, 3), (((1, 2), (2, 0)), ((), ()))),
    "batch_and_contract_mixed": ((4, 2, 3, 5), (3, 6, 2, 4), (((0, 2), (3, 0)), ((1,), (2,)))),
}
DOT = [Op(f"dot_general_{k}", functools.partial(lax.dot_general, dimension_numbers=dn),
          [ls, rs]) for k, (ls, rs, dn) in DNUMS.items()]
DOT += [
    # Mixed operand dtypes: the float32 operand's cotangent comes back as float32.
    Op("dot_general_mixed_dtypes", lambda x, y: lax.dot_general(
        x, lax.convert_element_type(y, np.float32), (((1,), (0,)), ((), ()))),
       [(3, 4), (4, 2)], tol=5e-3),
    Op("dot_general_preferred", lambda x, y: lax.dot_general(
        lax.convert_element_type(x, np.float32), lax.convert_element_type(y, np.float32),
        (((0,), (1,)), ((), ())), preferred_element_type=F64), [(4, 3), (2, 4)], tol=5e-3),
]

STRUCTURAL = [
    Op("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), [(3, 1)]),
    Op("broadcast_in_dim_unsorted", lambda x: lax.broadcast_in_dim(x, (3, 4, 2), (2, 0)),
       [(2, 3)]),
    Op("broadcast_in_dim_unsorted_3d", lambda x: lax.broadcast_in_dim(
        x, (4, 5, 2, 3), (2, 3, 0)), [(2, 3, 1)]),
    Op("broadcast_scalar", lambda x: lax.broadcast(x, (2, 3)), [()]),
    Op("reshape", lambda x: lax.reshape(x, (2, 6)), [(3, 4)]),
    Op("reshape_dimensions", lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), [(2, 3, 4)]),
    Op("transpose", lambda x: lax.transpose(x, (2, 0, 1)), [(2, 3, 4)]),
    Op("squeeze", lambda x: lax.squeeze(x, (0, 2)), [(1, 3, 1, 2)]),
    Op("expand_dims", lambda x: lax.expand_dims(x, (0, 2)), [(3, 2)]),
    Op("rev", lambda x: lax.rev(x, (0, 2)), [(2, 3, 4)]),
    Op("slice", lambda x: lax.slice(x, (1, 0), (3, 4)), [(4, 5)]),
    Op("slice_strided", lambda x: lax.slice(x, (1, 0), (6, 5), (2, 3)), [(7, 5)]),
    Op("slice_empty", lambda x: lax.slice(x, (1, 0), (1, 3)), [(3, 4)]),
    Op("pad", lambda x, v: lax.pad(x, v, ((1, 2, 1), (0, 1, 0))), [(3, 2), ()]),
    Op("pad_negative", lambda x, v: lax.pad(x, v, ((-1, 2, 2), (1, -2, 0))), [(4, 5), ()]),
    Op("pad_operand_only", lambda x: lax.pad(x, np.float64(0.5), ((2, -1, 1),)), [(4,)]),
    Op("concatenate", lambda x, y, z: lax.concatenate([x, y, z], 1),
       [(2, 1), (2, 3), (2, 2)]),
    Op("concatenate_with_const", lambda x: lax.concatenate([x, np.ones((1, 3))], 0),
       [(2, 3)]),
    Op("dynamic_slice", lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), [(4, 5)]),
    Op("dynamic_slice_clamped", lambda x: lax.dynamic_slice(x, (3, -9), (2, 3)), [(4, 5)]),
    Op("dynamic_update_slice", lambda x, u: lax.dynamic_update_slice(x, u, (1, 2)),
       [(4, 5), (2, 2)]),
    Op("dynamic_update_slice_clamped", lambda x, u: lax.dynamic_update_slice(x, u, (3, 4)),
       [(4, 5), (2, 3)]),
    Op("copy", lambda x: lax.copy_p.bind(x), [(3,)]),
    Op("convert_to_f32", lambda x: lax.convert_element_type(x, np.float32), [(3,)], tol=1e-3),
    Op("convert_to_c128", lambda x: lax.convert_element_type(x, C128), [(3,)]),
    Op("convert_c128_to_f64", lambda x: lax.convert_element_type(x, F64), [(3,)], C128),
    Op("convert_weak", lambda x: lax.convert_element_type(x, F64, weak_type=True), [(3,)]),
]

REDUCTIONS = [
    Op("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), [(2, 3, 4)]),
    Op("reduce_sum_all", lambda x: lax.reduce_sum(x, (0, 1)), [(3, 4)]),
    Op("reduce_prod", lambda x: lax.reduce_prod(x, (1,)), [(3, 5)]),
    Op("reduce_prod_with_zeros", lambda x: lax.reduce_prod(x * np.array([1., 0., 1., 1.]), (0,)),
       [(4,)]),
    Op("reduce_prod_two_zeros", lambda x: lax.reduce_prod(x * np.array([0., 1., 0.]), (0,)),
       [(3,)]),
    Op("reduce_prod_axes_0_2", lambda x: lax.reduce_prod(x, (0, 2)), [(2, 3, 3)]),
    Op("reduce_max", lambda x: lax.reduce_max(x, (1,)), [(3, 4)], domain="distinct"),
    Op("reduce_min", lambda x: lax.reduce_min(x, (0, 1)), [(3, 4)], domain="distinct"),
    Op("reduce_general", _reduce_mul, [(2, 5)]),
    Op("reduce_variadic", _reduce_pair, [(4, 2), (4, 2)], domain="distinct"),
    Op("reduce_with_int_operand", _reduce_max_with_index, [(3, 5)], domain="distinct"),
]

# Compositions: rules feeding into one another, and the inputs a jnp user makes.
COMPOSED = [
    Op("tanh_of_dot", lambda w, x: lax.tanh(lax.dot(x, w)), [(4, 2), (3, 4)]),
    Op("softmax_like", lambda x: lax.exp(x) / lax.reduce_sum(lax.exp(x), (0,)), [(5,)]),
    Op("logsumexp_like",
       lambda x: lax.log(lax.reduce_sum(lax.exp(x - lax.reduce_max(x, (0,))), (0,))),
       [(5,)], domain="distinct"),
]

DIFFERENTIABLE = (UNARY + COMPLEX + INTEGER_POW + BINARY + BROADCAST + DOT + STRUCTURAL
                  + REDUCTIONS + COMPOSED)


@pytest.mark.parametrize("op", DIFFERENTIABLE, ids=repr)
def test_check_grads(x64, op):
  check_grads(op.fun, op.args(), order=2, modes=("fwd", "rev"), atol=op.tol, rtol=op.tol)


def test_every_primitive_has_its_rules():
  prims = {p for p in vars(lax).values() if isinstance(p, core.Primitive)}
  missing_jvp = sorted(p.name for p in prims if p.jvp is None)
  # As in JAX: these have no derivative rule.
  assert missing_jvp == ["after_all", "axis_index", "create_token", "igamma_grad_a",
                         "nextafter", "pmax", "pmin", "rng_uniform", "select_and_scatter",
                         "zeta"]
  assert all(p.transpose is not None for p in prims if p.is_linear)
  for p in (lax.mul_p, lax.div_p, lax.dot_general_p, lax.select_n_p):
    assert p.transpose is not None   # linear in some operands


# -- the checker itself can fail ---------------------------------------------------

def _wrong_sin_jvp(primals, tangents):
  x, = primals
  g, = tangents
  return lax.sin_p.bind(x), lax.mul(g, lax.sin(x))   # should be cos


def test_check_grads_catches_a_wrong_rule(x64, monkeypatch):
  monkeypatch.setattr(lax.sin_p, "jvp", _wrong_sin_jvp)
  x = np.linspace(0.1, 1.0, 4)
  for modes in [("fwd",), ("rev",)]:
    with pytest.raises(AssertionError):
      check_grads(lax.sin, (x,), order=1, modes=modes)


def test_check_grads_catches_a_wrong_transpose(x64, monkeypatch):
  monkeypatch.setattr(lax.neg_p, "transpose", lambda ct, x: [ct])
  check_grads(lax.neg, (np.ones(3),), order=1, modes=("fwd",))
  with pytest.raises(AssertionError, match="cotangent projection"):
    check_grads(lax.neg, (np.ones(3),), order=1, modes=("rev",))


def test_check_jvp_and_check_vjp_signatures(x64):
  x = (np.linspace(0.1, 1.0, 4),)
  check_jvp(lax.sin, functools.partial(jvp, lax.sin), x)
  check_vjp(lax.sin, functools.partial(vjp, lax.sin), x)
  check_grads(lax.sin, x, order=2, modes=("lin",))
  with pytest.raises(AssertionError):
    check_jvp(lax.sin, functools.partial(jvp, lax.cos), x)


def test_check_grads_on_pytrees_in_float32():
  # float32 tolerances; dict arguments and tuple outputs; complex inputs.
  f = lambda d: (lax.sin(d["a"]) * d["b"], lax.cos(d["b"]))
  check_grads(f, ({"a": np.ones(3, np.float32), "b": np.float32(2.0)},), order=2)
  check_grads(lax.sin, (0.5,), order=2)
  check_grads(lambda z: lax.exp(z) * z, (np.array([0.1 + 0.2j, 1 - 1j], np.complex64),), 2)
  with pytest.raises(AssertionError, match="JVP tangent"):
    kink = lambda x: lax.select_n(lax.gt(x, 0.0), x * 2, x)
    check_grads(kink, (np.array([1e-5, 1.0], np.float32),), order=1, eps=1e-3)


# -- primitives that are not differentiable -----------------------------------------

FLOATS = np.array([-1.5, -0.3, 0.0, 0.7, 2.5])
INTS = np.array([-7, -1, 0, 3, 12], np.int32)
NON_DIFFERENTIABLE = [
    ("sign", lax.sign, (FLOATS,)), ("floor", lax.floor, (FLOATS,)),
    ("ceil", lax.ceil, (FLOATS,)), ("round", lax.round, (FLOATS,)),
    ("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), (FLOATS,)),
    ("is_finite", lax.is_finite, (FLOATS,)),
    ("eq", lax.eq, (FLOATS, FLOATS[::-1])), ("ne", lax.ne, (FLOATS, FLOATS[::-1])),
    ("lt", lax.lt, (FLOATS, FLOATS[::-1])), ("le", lax.le, (FLOATS, FLOATS[::-1])),
    ("gt", lax.gt, (FLOATS, FLOATS[::-1])), ("ge", lax.ge, (FLOATS, FLOATS[::-1])),
    ("argmax", lambda x: lax.argmax(x, 0, np.int32), (FLOATS,)),
    ("argmin", lambda x: lax.argmin(x, 0, np.int32), (FLOATS,)),
    ("convert_to_int", lambda x: lax.convert_element_type(x, np.int32), (FLOATS,)),
    ("convert_to_bool", lambda x: lax.convert_element_type(x, np.bool_), (FLOATS,)),
    ("sign_of_scalar", lax.sign, (np.float64(-2.0),)),
]
INTEGER_OPS = [
    ("and", lax.bitwise_and, (INTS, INTS[::-1])), ("or", lax.bitwise_or, (INTS, INTS[::-1])),
    ("xor", lax.bitwise_xor, (INTS, INTS[::-1])), ("not", lax.bitwise_not, (INTS,)),
    ("shift_left", lax.shift_left, (INTS, np.abs(INTS) % 5)),
    ("shift_right_arithmetic", lax.shift_right_arithmetic, (INTS, np.abs(INTS) % 5)),
    ("shift_right_logical", lax.shift_right_logical, (INTS, np.abs(INTS) % 5)),
    ("reduce_and", lambda x: lax.reduce_and(x > 0, (0,)), (INTS,)),
    ("reduce_or", lambda x: lax.reduce_or(x, (0,)), (INTS,)),
    ("reduce_xor", lambda x: lax.reduce_xor(x, (0,)), (INTS,)),
    ("int_argmax", lambda x: lax.argmax(x, 0, np.int32), (INTS,)),
    ("int_convert", lambda x: lax.convert_element_type(x, np.float32), (INTS,)),
]


def _expected_tangent_dtype(out):
  dtype = np.asarray(out).dtype
  return dtype if np.issubdtype(dtype, np.inexact) else dtypes.float0


def _float0_like(x):
  return np.zeros(np.shape(x), dtypes.float0)


@pytest.mark.parametrize("name,fun,args", NON_DIFFERENTIABLE, ids=lambda v: v if isinstance(
    v, str) else "")
def test_zero_derivative(x64, name, fun, args):
  tangents = tuple(np.ones_like(a) for a in args)
  out, t_out = jvp(fun, args, tangents)
  assert np.asarray(t_out).dtype == _expected_tangent_dtype(out)
  assert np.shape(t_out) == np.shape(out)
  if np.asarray(t_out).dtype != dtypes.float0:
    np.testing.assert_array_equal(np.asarray(t_out), 0)
  # Reverse mode: the inputs' cotangents are zeros of their own type.
  out, f_vjp = vjp(fun, *args)
  ct = np.ones(np.shape(out), np.asarray(out).dtype) \
      if _expected_tangent_dtype(out) != dtypes.float0 else _float0_like(out)
  cts = f_vjp(ct)
  for a, c in zip(args, cts):
    assert (np.shape(c), np.asarray(c).dtype) == (np.shape(a), np.asarray(a).dtype)
    np.testing.assert_array_equal(np.asarray(c), 0)


@pytest.mark.parametrize("name,fun,args", INTEGER_OPS, ids=lambda v: v if isinstance(
    v, str) else "")
def test_integer_ops_have_float0_tangents(name, fun, args):
  tangents = tuple(_float0_like(a) for a in args)
  out, t_out = jvp(fun, args, tangents)
  assert np.asarray(t_out).dtype == _expected_tangent_dtype(out)
  assert np.shape(t_out) == np.shape(out)
  if np.asarray(t_out).dtype != dtypes.float0:
    np.testing.assert_array_equal(np.asarray(t_out), 0)   # int -> float: zeros
  out, f_vjp = vjp(fun, *args)
  ct = np.ones(np.shape(out), np.asarray(out).dtype) \
      if _expected_tangent_dtype(out) != dtypes.float0 else _float0_like(out)
  for a, c in zip(args, f_vjp(ct)):
    assert (np.asarray(c).dtype, np.shape(c)) == (dtypes.float0, np.shape(a))


@pytest.mark.parametrize("fun", [lax.max, lax.mul, lambda x, y: x * 2 + y])
def test_differentiable_ops_on_integers_have_float0_tangents(fun):
  out, t_out = jvp(fun, (INTS, INTS), (_float0_like(INTS), _float0_like(INTS)))
  assert np.asarray(t_out).dtype == dtypes.float0
  cts = vjp(fun, INTS, INTS)[1](_float0_like(out))
  assert [np.asarray(c).dtype for c in cts] == [dtypes.float0] * 2


def test_grad_through_a_comparison_is_zero(x64):
  # The predicate's derivative is zero; the selected branch's is not.
  f = lambda x: lax.select_n(lax.gt(x, 0.0), -x, x * x)
  assert grad(f)(3.0) == 6.0
  assert grad(f)(-3.0) == -1.0


def test_nextafter_is_not_differentiable():
  with pytest.raises(NotImplementedError, match="nextafter"):
    jvp(lax.nextafter, (np.float32(1), np.float32(2)), (np.float32(1), np.float32(1)))


def test_iota_has_a_zero_rule():
  out, t = lax.iota_p.jvp((), (), dtype=np.dtype(np.float32), shape=(3,), dimension=0,
                          sharding=None)
  assert np.asarray(out).tolist() == [0, 1, 2] and t.aval.shape == (3,)


# -- rules written to JAX's conventions --------------------------------------------

def test_max_min_split_the_derivative_at_ties():
  assert grad(lambda x: lax.max(x, 1.0))(1.0) == 0.5
  assert grad(lambda x: lax.min(x, x))(2.0) == 1.0
  x = np.array([1.0, 3.0, 3.0], np.float32)
  np.testing.assert_array_equal(grad(lambda x: lax.reduce_max(x, (0,)))(x), [0, 0.5, 0.5])


def test_linearize_uses_the_rules(x64):
  y, f_lin = linearize(lambda x: lax.reduce_prod(lax.sin(x), (0,)), np.array([0.5, 1.0]))
  expected = np.cos(0.5) * np.sin(1.0) * 2 + np.sin(0.5) * np.cos(1.0) * 3
  np.testing.assert_allclose(f_lin(np.array([2.0, 3.0])), expected)


# -- against JAX ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax():
  return pytest.importorskip("jax")


X = np.array([0.3, -1.2, 0.0, 2.0], np.float32)
P = np.array([0.3, 1.2, 0.5, 2.0], np.float32)
U = np.array([0.3, -0.6, 0.0, 0.9], np.float32)
M = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5
EDGES = np.array([0.0, 1.0, -1.0, 0.5, 2.0], np.float32)

# name, f(lax, *args) -> scalar, args; the gradient w.r.t. every arg is compared.
ORACLE = [
    ("sin", lambda l, x: l.reduce_sum(l.sin(x), (0,)), (X,)),
    ("tan", lambda l, x: l.reduce_sum(l.tan(x), (0,)), (U,)),
    ("exp2", lambda l, x: l.reduce_sum(l.exp2(x), (0,)), (X,)),
    ("logistic", lambda l, x: l.reduce_sum(l.logistic(x), (0,)), (X,)),
    ("tanh", lambda l, x: l.reduce_sum(l.tanh(x), (0,)), (X,)),
    ("log1p", lambda l, x: l.reduce_sum(l.log1p(x), (0,)), (P,)),
    ("sqrt", lambda l, x: l.reduce_sum(l.sqrt(x), (0,)), (P,)),
    ("rsqrt", lambda l, x: l.reduce_sum(l.rsqrt(x), (0,)), (P,)),
    ("cbrt", lambda l, x: l.reduce_sum(l.cbrt(x), (0,)), (P,)),
    ("asin", lambda l, x: l.reduce_sum(l.asin(x), (0,)), (U,)),
    ("acosh", lambda l, x: l.reduce_sum(l.acosh(x), (0,)), (P + 1,)),
    ("atanh", lambda l, x: l.reduce_sum(l.atanh(x), (0,)), (U,)),
    ("abs_at_zero", lambda l, x: l.reduce_sum(l.abs(x), (0,)), (EDGES - 0.5 * EDGES,)),
    ("sign", lambda l, x: l.reduce_sum(l.sign(x) * x, (0,)), (X,)),
    ("max_ties", lambda l, x, y: l.reduce_sum(l.max(x, y), (0,)), (EDGES, EDGES[::-1])),
    ("min_ties", lambda l, x, y: l.reduce_sum(l.min(x, y), (0,)), (EDGES, np.ones(5, np.float32))),
    ("clamp_edges", lambda l, lo, x, hi: l.reduce_sum(l.clamp(lo, x, hi), (0,)),
     (np.zeros(5, np.float32), EDGES, np.ones(5, np.float32))),
    ("clamp_crossed_bounds", lambda l, lo, x, hi: l.reduce_sum(l.clamp(lo, x, hi), (0,)),
     (np.ones(5, np.float32), EDGES, np.zeros(5, np.float32))),
    ("pow_at_zero", lambda l, x, y: l.reduce_sum(l.pow(x, y), (0,)),
     (np.array([0, 0, 0, 2, -2], np.float32), np.array([0, 1, 2, 0.5, 2], np.float32))),
    ("pow_int_exponent_at_zero",
     lambda l, x: l.reduce_sum(l.pow(x, np.array([0, 1, 2, 0, 3], np.int32)), (0,)),
     (np.array([0, 0, 0, 2, -2], np.float32),)),
    ("integer_pow", lambda l, x: l.reduce_sum(l.integer_pow(x, 3), (0,)), (X,)),
    ("rem", lambda l, x, y: l.reduce_sum(l.rem(x, y), (0,)),
     (np.array([7.5, -7.5, 1.0, 5.0], np.float32), np.array([2.0, 2.0, -3.0, 1.5], np.float32))),
    ("atan2", lambda l, x, y: l.reduce_sum(l.atan2(x, y), (0,)), (X, P)),
    ("reduce_max_ties", lambda l, x: l.reduce_max(x, (0,)),
     (np.array([1.0, 3.0, 3.0, 2.0], np.float32),)),
    ("reduce_min_ties", lambda l, x: l.reduce_sum(l.reduce_min(x, (1,)), (0,)),
     (np.array([[1.0, 1.0], [0.0, 2.0]], np.float32),)),
    ("reduce_prod_zeros", lambda l, x: l.reduce_prod(x, (0,)),
     (np.array([2.0, 0.0, 3.0, 0.5], np.float32),)),
    ("reduce_prod_two_zeros", lambda l, x: l.reduce_prod(x, (0,)),
     (np.array([0.0, 0.0, 3.0, 0.5], np.float32),)),
    ("dot_general_batched", lambda l, a, b: l.reduce_sum(l.sin(l.dot_general(
        a, b, (((1,), (0,)), ((0,), (1,))))), (0, 1, 2)),
     (M.reshape(3, 2, 2), np.linspace(-1, 1, 30, dtype=np.float32).reshape(2, 3, 5))),
    ("pad_negative", lambda l, x, v: l.reduce_sum(l.sin(l.pad(x, v, ((-1, 2, 1), (1, -1, 0)))),
                                                  (0, 1)), (M, np.float32(0.25))),
    ("slice_strided", lambda l, x: l.reduce_sum(l.exp(l.slice(x, (0, 1), (3, 4), (2, 2))),
                                                (0, 1)), (M,)),
    ("dynamic_slice_clamped", lambda l, x: l.reduce_sum(l.exp(l.dynamic_slice(
        x, (2, -7), (2, 2))), (0, 1)), (M,)),
    ("dynamic_update_slice", lambda l, x, u: l.reduce_sum(l.exp(l.dynamic_update_slice(
        x, u, (1, 3))), (0, 1)), (M, np.full((2, 2), 0.5, np.float32))),
    ("concatenate", lambda l, x, y: l.reduce_sum(l.sin(l.concatenate([x, y], 0)), (0, 1)),
     (M, M[:1] * 2)),
    ("select_n", lambda l, x, y: l.reduce_sum(l.select_n(x > 0, x * y, l.sin(y)), (0,)), (X, P)),
    ("broadcast_in_dim", lambda l, x: l.reduce_sum(l.sin(l.broadcast_in_dim(
        x, (2, 3, 4), (1, 2))), (0, 1, 2)), (M[:, :1],)),
]


def _to_jax_args(args):
  return tuple(np.asarray(a) for a in args)


@pytest.mark.oracle
# (mul's NumPy implementation warns about the 0 * inf that pow's rule makes at 0.)
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("name,fun,args", ORACLE, ids=[o[0] for o in ORACLE])
def test_gradients_match_jax(jax, name, fun, args):
  argnums = tuple(range(len(args)))
  ours = grad(functools.partial(fun, lax), argnums=argnums)(*args)
  theirs = jax.grad(functools.partial(fun, jax.lax), argnums=argnums)(*_to_jax_args(args))
  assert len(ours) == len(theirs)
  for a, b in zip(ours, theirs):
    assert np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)


ORACLE_JVP = [
    ("abs_complex", lambda l, z: l.abs(z), (np.array([1 + 2j, 0j, -3j], np.complex64),)),
    ("conj_of_real", lambda l, x: l.conj(x), (X,)),
    ("complex", lambda l, x, y: l.complex(x, y), (X, P)),
    ("convert_to_int", lambda l, x: l.convert_element_type(x, np.int32), (X,)),
    ("argmax", lambda l, x: l.argmax(x, 0, np.int32), (X,)),
    ("expm1", lambda l, x: l.expm1(x), (X,)),
    ("round", lambda l, x: l.round(x), (X,)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,fun,args", ORACLE_JVP, ids=[o[0] for o in ORACLE_JVP])
def test_jvps_and_vjps_match_jax(jax, name, fun, args):
  tangents = tuple(np.linspace(0.5, 1.5, a.size).astype(a.dtype).reshape(a.shape) for a in args)
  ours = jvp(functools.partial(fun, lax), args, tangents)
  theirs = jax.jvp(functools.partial(fun, jax.lax), _to_jax_args(args), tangents)
  for a, b in zip(ours, theirs):
    a, b = np.asarray(a), np.asarray(b)
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    if a.dtype != dtypes.float0:
      np.testing.assert_allclose(a, b, rtol=2e-6)
  out = np.asarray(theirs[0])
  if np.issubdtype(out.dtype, np.inexact):
    ct = np.linspace(1.0, 2.0, out.size).astype(out.dtype).reshape(out.shape)
    ours = vjp(functools.partial(fun, lax), *args)[1](ct)
    theirs = jax.vjp(functools.partial(fun, jax.lax), *_to_jax_args(args))[1](ct)
    for a, b in zip(ours, theirs):
      a, b = np.asarray(a), np.asarray(b)
      assert a.dtype == b.dtype
      np.testing.assert_allclose(a, b, rtol=2e-6)
