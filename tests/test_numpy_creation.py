"""Tests for jnp array creation: copy, logspace/geomspace, meshgrid,
tri/tril/triu, diag/diagflat/diagonal, vander, fromfunction, array_equiv,
the buffer/string/DLPack constructors, save/load, print options and the
window functions.  Values, dtypes, weak types and errors are compared with
NumPy (float64) and with the installed JAX (the oracle, skipped if absent).
"""
import io
import warnings

import numpy as np
import pytest

import purejax
import purejax.numpy as jnp
from purejax._src.array import Array
from purejax._src import errors
from tests import jnp_oracle
from tests.jnp_oracle import oracle_results as _oracle_results, same as _same, to as _to


def _oracle():
  return jnp_oracle.oracle()[1]


A34 = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
A234 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
V5 = np.array([0.5, -1.5, 2.0, 3.0, -0.25], np.float32)

ORACLE_CASES = {
    "copy": (lambda m, x: m.copy(x), A34),
    "copy_scalar": (lambda m: m.copy(2.0),),
    "logspace": (lambda m: m.logspace(0, 3, 4),),
    "logspace_int": (lambda m: m.logspace(0, 3, 4, dtype=int),),
    "logspace_base_axis": (lambda m, x: m.logspace(x[:2], 3, 3, base=2, axis=1), V5),
    "logspace_noend": (lambda m: m.logspace(1, 2, 5, endpoint=False),),
    "geomspace": (lambda m: m.geomspace(1, 1000, 4), ),
    "geomspace_neg_axis": (lambda m: m.geomspace(m.array([1., -1.]), m.array([100., -100.]), 3,
                                                  axis=-1),),
    "geomspace_int": (lambda m: m.geomspace(1, 16, 4, endpoint=False, dtype=m.int32),),
    "meshgrid_xy": (lambda m, x: m.meshgrid(x, x[:3]), V5),
    "meshgrid_ij": (lambda m, x: m.meshgrid(x, x[:3], x[:2], indexing="ij"), V5),
    "meshgrid_sparse": (lambda m, x: m.meshgrid(x, x[:3], x[:2], sparse=True), V5),
    "meshgrid_one": (lambda m, x: m.meshgrid(x), V5),
    "meshgrid_none": (lambda m: m.meshgrid(),),
    "tri": (lambda m: m.tri(3, 4, 1),),
    "tri_int": (lambda m: m.tri(3, dtype=int),),
    "tri_bool_neg": (lambda m: m.tri(3, 2, -1, dtype=bool),),
    "tril": (lambda m, x: m.tril(x, 1), A34),
    "triu_batched": (lambda m, x: m.triu(x, -1), A234),
    "tril_far": (lambda m, x: m.tril(x, -5), A34),
    "diagonal": (lambda m, x: m.diagonal(x), A34),
    "diagonal_offset": (lambda m, x: m.diagonal(x, 2), A34),
    "diagonal_neg": (lambda m, x: m.diagonal(x, -1), A34),
    "diagonal_axes": (lambda m, x: m.diagonal(x, 1, 2, 0), A234),
    "diagonal_axes_neg": (lambda m, x: m.diagonal(x, -2, -1, 1), A234),
    "diagonal_empty": (lambda m, x: m.diagonal(x, 5), A234),
    "diag_vec": (lambda m, x: m.diag(x, 2), V5),
    "diag_vec_neg": (lambda m, x: m.diag(x, -1), V5),
    "diag_mat": (lambda m, x: m.diag(x, 1), A34),
    "diagflat": (lambda m, x: m.diagflat(x, -1), A34[:2, :2]),
    "diagflat_scalar": (lambda m: m.diagflat(3),),
    "vander": (lambda m, x: m.vander(x), V5),
    "vander_inc": (lambda m: m.vander(m.arange(3), 4, increasing=True),),
    "vander_zero": (lambda m, x: m.vander(x, 0), V5),
    "fromfunction": (lambda m: m.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=int),),
    "fromfunction_float": (lambda m: m.fromfunction(lambda i: i / 2, 3),),
    "array_equiv_bcast": (lambda m, x: m.array_equiv(x, m.stack([x, x])), V5),
    "array_equiv_lists": (lambda m: m.array_equiv([1, 2], [1, 2]),),
    "array_equiv_ranks": (lambda m, x: m.array_equiv(x, m.ones((2, 4))), V5),
    "array_equiv_differ": (lambda m, x: m.array_equiv(x, x + 1), V5),
    "frombuffer": (lambda m: m.frombuffer(b"\x01\x02\x03\x04", dtype=m.uint8),),
    "frombuffer_offset": (lambda m: m.frombuffer(np.arange(4, dtype=np.int16).tobytes(),
                                                 dtype=m.int16, count=2, offset=2),),
    "fromstring": (lambda m: m.fromstring("1 2 3", dtype=int, sep=" "),),
    "from_dlpack": (lambda m: m.from_dlpack(np.arange(3.0)),),
    "bartlett": (lambda m: m.bartlett(5),),
    "blackman": (lambda m: m.blackman(6),),
    "hamming": (lambda m: m.hamming(7),),
    "hanning": (lambda m: m.hanning(6),),
    "hanning_one": (lambda m: m.hanning(1),),
    "hamming_zero": (lambda m: m.hamming(0),),
    "kaiser": (lambda m: m.kaiser(6, 3.0),),
    "kaiser_array_beta": (lambda m: m.kaiser(5, m.array(0.5)),),
    # lists of 16-bit and 4-bit Arrays (NumPy cannot cast those element by element)
    "array_of_bfloat16_arrays": (lambda m: m.array(
        [m.array(256., m.bfloat16), m.array(257., m.bfloat16)], dtype=m.bfloat16),),
    "array_of_bfloat16_and_int": (lambda m: m.array(
        [m.array(256., m.bfloat16), 3], dtype=m.float8_e4m3fn),),
    "array_of_nested_bfloat16": (lambda m: m.array(
        [[m.array(1.5, m.bfloat16)], (m.array(2., m.bfloat16),)]),),
    "array_of_int4_arrays": (lambda m: m.array([m.array(3, m.int4), 2]),),
}


@pytest.mark.parametrize("name", sorted(ORACLE_CASES))
def test_like_oracle(name):
  theirs = _oracle_results(ORACLE_CASES)[name]
  fun, *args = ORACLE_CASES[name]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    ours = fun(jnp, *[_to(jnp, a) for a in args])
  _same(ours, theirs)


NUMPY_CASES = {
    "logspace": (lambda m: m.logspace(-1, 2, 7, base=3.0), 1e-6),
    "geomspace": (lambda m: m.geomspace(2, 250, 9), 1e-5),
    "tril": (lambda m: m.tril(m.asarray(A234), -1), 0),
    "triu": (lambda m: m.triu(m.asarray(A234), 2), 0),
    "diagonal": (lambda m: m.diagonal(m.asarray(A234), 1, 0, 2), 0),
    "diag": (lambda m: m.diag(m.asarray(V5), -2), 0),
    "vander": (lambda m: m.vander(m.asarray(V5), 4), 1e-6),
    "hanning": (lambda m: m.hanning(9), 1e-6),
    "blackman": (lambda m: m.blackman(9), 1e-6),
    "bartlett": (lambda m: m.bartlett(8), 1e-6),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_values_like_numpy(name):
  fun, tol = NUMPY_CASES[name]
  expected = fun(np)
  ours = fun(jnp)
  assert ours.shape == expected.shape
  np.testing.assert_allclose(np.asarray(ours, np.float64), expected, rtol=tol, atol=tol)


ERROR_CASES = {
    "diagonal_1d": lambda m: m.diagonal(m.ones(3)),
    "tril_1d": lambda m: m.tril(m.ones(3)),
    "triu_1d": lambda m: m.triu(m.ones(3)),
    "diag_3d": lambda m: m.diag(m.ones((2, 2, 2))),
    "vander_2d": lambda m: m.vander(m.ones((2, 2))),
    "vander_negative": lambda m: m.vander(m.arange(3), -1),
    "meshgrid_list": lambda m: m.meshgrid([1, 2], [3]),
    "meshgrid_2d": lambda m: m.meshgrid(m.ones((2, 2))),
    "meshgrid_nocopy": lambda m: m.meshgrid(m.ones(2), copy=False),
    "meshgrid_indexing": lambda m: m.meshgrid(m.ones(2), indexing="foo"),
    "copy_list": lambda m: m.copy([1, 2]),
    "triu_list": lambda m: m.triu([[1, 2], [3, 4]]),
    "fromiter": lambda m: m.fromiter(iter([1, 2]), dtype=float),
    "frombuffer_size": lambda m: m.frombuffer(b"\x01\x02\x03"),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_oracle(name):
  jjnp = _oracle()
  fun = ERROR_CASES[name]
  with pytest.raises(Exception) as theirs:
    fun(jjnp)
  with pytest.raises(type(theirs.value)) as ours:
    fun(jnp)
  assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_diagonal_same_axes_is_an_error():
  with pytest.raises(TypeError):   # JAX: TypeError from its transpose
    jnp.diagonal(jnp.ones((3, 3)), 0, 1, 1)


def test_array_equiv_incompatible_same_rank_is_false():
  # NumPy's answer; JAX raises TypeError here.
  assert not bool(jnp.array_equiv(jnp.ones(3), jnp.ones(4)))


def test_iterable():
  assert jnp.iterable([1]) and not jnp.iterable(3) and jnp.iterable(jnp.ones(2))


# ---------------------------------------------------------------------------
# Transformations

RNG = np.random.RandomState(0)
X = RNG.randn(3, 4).astype(np.float32)
V = RNG.randn(5).astype(np.float32)

TRANSFORM_CASES = {
    "tril": (lambda x: jnp.tril(x, 1), X),
    "triu": (lambda x: jnp.triu(x, -1), X),
    "diagonal": (lambda x: jnp.diagonal(x, 1), X),
    "diag": (lambda v: jnp.diag(v, -1), V),
    "diagflat": (lambda x: jnp.diagflat(x[:2]), X),
    "vander": (lambda v: jnp.vander(v, 3), V),
    "logspace": (lambda v: jnp.logspace(v, 1.0, 4), V),
    "geomspace": (lambda v: jnp.geomspace(v ** 2 + 1, 10.0, 4), V),
    "meshgrid": (lambda v: jnp.meshgrid(v, v[:3])[0] * jnp.meshgrid(v, v[:3])[1], V),
    "copy": (lambda x: jnp.copy(x) * 2, X),
    "hanning": (lambda v: jnp.hanning(5) * v, V),
}


@pytest.mark.parametrize("name", sorted(TRANSFORM_CASES))
def test_jit_vmap_grad(name):
  f, x = TRANSFORM_CASES[name]
  y = f(x)
  np.testing.assert_allclose(np.asarray(purejax.jit(f)(x)), np.asarray(y), rtol=1e-6)
  xs = np.stack([x, 2 * x + 1])
  np.testing.assert_allclose(np.asarray(purejax.vmap(f)(xs)),
                             np.stack([np.asarray(f(xx)) for xx in xs]), rtol=1e-5, atol=1e-6)
  purejax.test_util.check_grads(f, (x,), order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)


def test_diagonal_prints_as_strided_slice():
  text = str(purejax.make_jaxpr(lambda x: jnp.diagonal(x, 1))(X))
  assert "slice" in text and "gather" not in text


def test_concrete_arguments_required_under_jit():
  with pytest.raises(errors.ConcretizationTypeError):
    purejax.jit(lambda n: jnp.hanning(n))(3)
  with pytest.raises(errors.ConcretizationTypeError):
    purejax.jit(lambda k: jnp.diagonal(X, k))(1)


# ---------------------------------------------------------------------------
# Saving, loading and printing

def test_save_load_roundtrip():
  f = io.BytesIO()
  jnp.save(f, jnp.arange(3, dtype=jnp.bfloat16))
  f.seek(0)
  out = jnp.load(f)
  assert isinstance(out, Array) and out.dtype == jnp.bfloat16
  np.testing.assert_array_equal(np.asarray(out, np.float32), [0, 1, 2])


def test_savez_load_stays_numpy():
  f = io.BytesIO()
  jnp.savez(f, a=jnp.arange(3))
  f.seek(0)
  archive = jnp.load(f)
  np.testing.assert_array_equal(archive["a"], [0, 1, 2])
  assert not isinstance(archive["a"], Array)


def test_printoptions_govern_repr():
  x = jnp.array([1 / 3, 2 / 3])
  with jnp.printoptions(precision=2):
    assert repr(x) == "Array([0.33, 0.67], dtype=float32)"
    assert jnp.get_printoptions()["precision"] == 2
  assert "0.33333334" in repr(x)
  old = jnp.get_printoptions()
  try:
    jnp.set_printoptions(precision=1)
    assert jnp.array_str(x) == "[0.3 0.7]"
  finally:
    jnp.set_printoptions(**old)
  assert jnp.array_repr(jnp.arange(2)) == "ArrayImpl([0, 1], dtype=int32)"   # as JAX (NumPy names the class)


def test_kaiser_like_numpy():
  np.testing.assert_allclose(np.asarray(jnp.kaiser(6, 3.0)), np.kaiser(6, 3.0), rtol=1e-5)
  purejax.test_util.check_grads(lambda b: jnp.kaiser(5, b), (2.0,), order=1, atol=5e-2,
                                rtol=5e-2)


def test_array_accepts_range():
  jjnp = _oracle()
  for r in (range(3), range(2, 9, 3), range(0)):
    _same(jnp.array(r), jjnp.array(r))
    _same(jnp.asarray(r), jjnp.asarray(r))
